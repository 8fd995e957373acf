"""The tournament report: one data model (:mod:`.model`) and its renderers.

:func:`build_report` turns stored game records into a :class:`Report`;
:func:`.text.report_text` draws it as text, :mod:`.files` writes CSV and JSON,
:mod:`.png` draws PNG pictures (matplotlib, imported only there) and :mod:`.html`
an HTML page (each game linked to a page the game provides).
"""

from .model import BotStats, PairStats, Report, build_report, scored_winner, wilson_interval

__all__ = [
    "BotStats",
    "PairStats",
    "Report",
    "build_report",
    "scored_winner",
    "wilson_interval",
]
