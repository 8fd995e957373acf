"""Game parameters: validation, sub-seed derivation, and the values a game really used.

The official referees take ``key=value`` properties (``seed``, ``draftChoicesSeed``,
``cardGenSeed``, ...). Every sub-seed is derived from ``seed`` with successive
``nextLong()`` calls and then overridden by an explicit parameter of the same
name. A key the version does not read is kept and printed back unchanged, as the
official referee does (contest scripts pass one key list to every version).
Unlike the official SDK, which silently replaces a malformed seed by a random one,
we refuse a malformed value of a key the version reads with a clear
:class:`ParameterError`: a typo must never turn into a different game.
"""

from __future__ import annotations

import difflib
import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from .errors import InvalidStateError
from .javarandom import JAVA_LONG_MAX, JAVA_LONG_MIN, JavaRandom, parse_java_long
from .rules import DECK_SIZE, DEFAULT_VERSION, RULESETS, RuleSet, ruleset


class ParameterError(InvalidStateError):
    """A game parameter is unknown for the version, or its value is malformed."""


SEED_NAMES: dict[bool, tuple[str, ...]] = {
    # draft (1.0/1.2) and constructed (1.5) sub-seeds, in derivation order
    True: ("draftChoicesSeed", "shufflePlayer0Seed", "shufflePlayer1Seed"),
    False: ("cardGenSeed", "constructedChoicesSeed", "shufflePlayer0Seed", "shufflePlayer1Seed"),
}
PREDEFINED_CARD_LIST_FILES = ("cardlist.txt",)
"""The 1.5 referee's only bundled card list (the 160 cards, all with area Target)."""


CONSTRUCTED_POOL_SIZE = 120
"""The 1.5 constructed turn offers this many cards (``predefinedConstructedIds`` lists them)."""


def parameter_names(version: str | RuleSet) -> tuple[str, ...]:
    """Every parameter the version reads (any other key is kept and printed back)."""
    rules = ruleset(version)
    if rules.draft:
        extra: tuple[str, ...] = ("predefinedDraftIds",)
    else:
        extra = ("predefinedCardListFile", "predefinedConstructedIds")
    return ("seed", *SEED_NAMES[rules.draft], *extra)


@dataclass(frozen=True)
class GameParameters:
    """The resolved parameters of one game: everything needed to replay it."""

    version: str
    seed: int
    seeds: dict[str, int]
    """Every sub-seed by its official name (derived or given)."""
    predefined_draft_ids: tuple[tuple[int, int, int], ...] | None = None
    predefined_card_list_file: str | None = None
    predefined_constructed_ids: tuple[int, ...] | None = None
    """1.5: the base ids of the 120 cards offered, in the order offered."""
    given: dict[str, str] = field(default_factory=dict)
    """Every parameter as given (known or not), in the order given."""

    def as_dict(self) -> dict[str, str]:
        """The parameters as the official referee holds them at the end.

        Given keys keep their given text (the referee never rewrites them), except
        ``seed`` and the sub-seeds, which are the decimal values used.
        """
        out = dict(self.given)
        out["seed"] = str(self.seed)
        out.update((name, str(value)) for name, value in self.seeds.items())
        return out


def _parse_long(name: str, value: object) -> int:
    if isinstance(value, bool):
        raise ParameterError(f"parameter {name} must be an integer, got {value!r}")
    if isinstance(value, int):
        if not JAVA_LONG_MIN <= value <= JAVA_LONG_MAX:
            raise ParameterError(f"parameter {name}={value} is outside the Java long range")
        return value
    try:
        return parse_java_long(str(value))
    except ValueError:
        raise ParameterError(
            f"parameter {name} must be a decimal 64-bit integer, got {value!r}"
        ) from None


def _parse_constructed_ids(value: object, card_list_file: str | None) -> tuple[int, ...]:
    """The 1.5 pool by base id. (The official referee parses only 30 ids here and then
    crashes reading the 120th pick; we do what the parameter was written for.)"""
    from .cards import CARD_LIST

    known = {card.base_id for card in CARD_LIST} if card_list_file else None
    ids: list[int] = []
    for number, word in enumerate(str(value).split(","), start=1):
        try:
            card_id = int(word.strip())
        except ValueError:
            raise ParameterError(
                f"predefinedConstructedIds: entry {number} ({word.strip()!r}) is not a card id"
            ) from None
        if known is not None and card_id not in known:
            raise ParameterError(
                f"predefinedConstructedIds: unknown card id {card_id} in {card_list_file}"
            )
        if known is None and not 0 <= card_id < CONSTRUCTED_POOL_SIZE:
            raise ParameterError(
                f"predefinedConstructedIds: unknown card id {card_id} "
                f"(generated cards are 0-{CONSTRUCTED_POOL_SIZE - 1})"
            )
        ids.append(card_id)
    if len(ids) < CONSTRUCTED_POOL_SIZE:
        raise ParameterError(
            f"predefinedConstructedIds needs {CONSTRUCTED_POOL_SIZE} comma-separated card ids, "
            f"got {len(ids)}"
        )
    ids = ids[:CONSTRUCTED_POOL_SIZE]
    repeated = sorted({card_id for card_id in ids if ids.count(card_id) > 1})
    if repeated:
        raise ParameterError(f"predefinedConstructedIds: card id {repeated[0]} offered twice")
    return tuple(ids)


def _parse_draft_ids(value: object) -> tuple[tuple[int, int, int], ...]:
    from .cards import CARDS_BY_ID

    # The 1.2 referee accepts '_' for spaces (the -d option splits on spaces); so do we, always.
    text = str(value).replace("_", " ")
    triples = []
    for number, chunk in enumerate(text.split(","), start=1):
        words = chunk.split()
        if len(words) < 3:
            raise ParameterError(
                f"predefinedDraftIds: triple {number} ({chunk.strip()!r}) needs 3 card ids"
            )
        try:
            ids = tuple(int(word) for word in words[:3])
        except ValueError:
            raise ParameterError(
                f"predefinedDraftIds: triple {number} ({chunk.strip()!r}) is not numbers"
            ) from None
        for card_id in ids:
            if card_id not in CARDS_BY_ID:
                raise ParameterError(f"predefinedDraftIds: unknown card id {card_id}")
        triples.append(ids)
    if len(triples) < DECK_SIZE:
        raise ParameterError(
            f"predefinedDraftIds needs {DECK_SIZE} comma-separated triples, got {len(triples)}"
        )
    return tuple(triples[:DECK_SIZE])  # type: ignore[arg-type]


def random_seed() -> int:
    """A fresh random Java long, as the SDK draws when no seed is given."""
    return random.randint(JAVA_LONG_MIN, JAVA_LONG_MAX)


def game_parameters(
    version: str | RuleSet | None, params: Mapping[str, object] | GameParameters | None
) -> GameParameters:
    """The parameters of a game. Resolved parameters carry their version (a different
    ``version`` beside them is an error); anything else is resolved for ``version``
    (default: the latest version)."""
    if isinstance(params, GameParameters):
        if version is not None and ruleset(version) is not ruleset(params.version):
            raise ValueError(f"parameters are for LOCM {params.version}, not {version}")
        return params
    return resolve_parameters(DEFAULT_VERSION if version is None else version, params)


def resolve_parameters(
    version: str | RuleSet, given: Mapping[str, object] | None = None
) -> GameParameters:
    """Validate ``given`` and derive every sub-seed the official way."""
    rules = ruleset(version)
    given = dict(given or {})
    for name in given:
        if not isinstance(name, str) or not name:
            raise ParameterError(f"game parameter names must be non-empty text, got {name!r}")
    seed = _parse_long("seed", given["seed"]) if "seed" in given else random_seed()
    derive = JavaRandom(seed)
    seeds = {name: derive.next_long() for name in SEED_NAMES[rules.draft]}
    for name in seeds:
        if name in given:
            seeds[name] = _parse_long(name, given[name])
    draft_ids = None
    if "predefinedDraftIds" in given and rules.draft:
        draft_ids = _parse_draft_ids(given["predefinedDraftIds"])
    card_list_file = None
    if "predefinedCardListFile" in given and not rules.draft:
        card_list_file = str(given["predefinedCardListFile"])
        if card_list_file not in PREDEFINED_CARD_LIST_FILES:
            raise ParameterError(
                f"predefinedCardListFile: unknown card list {card_list_file!r}; "
                f"known: {', '.join(PREDEFINED_CARD_LIST_FILES)}"
            )
    constructed_ids = None
    if "predefinedConstructedIds" in given and not rules.draft:
        constructed_ids = _parse_constructed_ids(given["predefinedConstructedIds"], card_list_file)
    return GameParameters(
        version=rules.version,
        seed=seed,
        seeds=seeds,
        predefined_draft_ids=draft_ids,
        predefined_card_list_file=card_list_file,
        predefined_constructed_ids=constructed_ids,
        given={name: str(value) for name, value in given.items()},
    )


MISSPELLING_CUTOFF = 0.7
"""How close (difflib's ratio, ignoring case) an unread key may come to a known one before it
is taken for a misspelling of it: ``sead`` (0.75) or ``Seed`` is refused, ``myTag`` is kept."""


def unread_names(given: Mapping[str, object]) -> list[str]:
    """The keys of ``given`` that no LOCM version reads (kept and printed back, as the
    official referee does, so a run can carry a tag). ParameterError for one that looks
    like a misspelt known key (``sead=7``): kept, it would silently play a random game."""
    known = sorted({name for rules in RULESETS.values() for name in parameter_names(rules)})
    lowered = {name.lower(): name for name in known}
    unread: list[str] = []
    for name in map(str, given):
        if name in known:
            continue
        close = difflib.get_close_matches(name.lower(), lowered, n=1, cutoff=MISSPELLING_CUTOFF)
        if close:
            raise ParameterError(
                f"unknown game parameter {name!r}: did you mean {lowered[close[0]]!r}? "
                f"(known: {', '.join(known)})"
            )
        unread.append(name)
    return unread


def parse_parameter_string(text: str) -> dict[str, str]:
    """Parse the official ``-d`` form: space-separated ``key=value`` pairs.

    A key given twice is refused: the official referee silently keeps the last
    value, which turns a copy-paste slip into a different game.
    """
    out: dict[str, str] = {}
    for word in text.split():
        key, sep, value = word.partition("=")
        if not sep or not key:
            raise ParameterError(f"game parameter {word!r} is not of the form key=value")
        if key in out:
            raise ParameterError(
                f"game parameter {key!r} given twice ({key}={out[key]} and {word}); give it once"
            )
        out[key] = value
    return out
