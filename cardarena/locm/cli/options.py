"""Argument types of the ``locm`` commands that know LOCM's rules (the generic ones are
in :mod:`cardarena.argtypes`)."""

from __future__ import annotations

from ...argtypes import one_of
from ..engine.rules import ALL_LEAGUES

league = one_of(ALL_LEAGUES, "the 1.0 leagues are 1-4 (4: all cards)")
"""A league level (1.0 draft pools); which version has leagues is a RuleSet field."""
