"""Game parameters: validation, sub-seed derivation, and the values a game really used.

The official referees take ``key=value`` properties (``seed``, ``draftChoicesSeed``,
``cardGenSeed``, ...). Every sub-seed is derived from ``seed`` with successive
``nextLong()`` calls and then overridden by an explicit parameter of the same
name. Unlike the official SDK, which silently replaces a malformed seed by a
random one, we refuse bad input with a clear :class:`ParameterError`: a typo
must never turn into a different game.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from .javarandom import JAVA_LONG_MAX, JAVA_LONG_MIN, JavaRandom, parse_java_long
from .rules import DECK_SIZE, RuleSet, ruleset


class ParameterError(ValueError):
    """A game parameter is unknown for the version, or its value is malformed."""


SEED_NAMES: dict[bool, tuple[str, ...]] = {
    # draft (1.0/1.2) and constructed (1.5) sub-seeds, in derivation order
    True: ("draftChoicesSeed", "shufflePlayer0Seed", "shufflePlayer1Seed"),
    False: ("cardGenSeed", "constructedChoicesSeed", "shufflePlayer0Seed", "shufflePlayer1Seed"),
}
PREDEFINED_CARD_LIST_FILES = ("cardlist.txt",)
"""The 1.5 referee's only bundled card list (the 160 cards, all with area Target)."""


def parameter_names(version: str | RuleSet) -> tuple[str, ...]:
    """Every parameter the version accepts."""
    rules = ruleset(version)
    extra = ("predefinedDraftIds",) if rules.draft else ("predefinedCardListFile",)
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
    given: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, str]:
        """The parameters as the official referee prints them at the end: decimal strings."""
        out = {"seed": str(self.seed)}
        out.update((name, str(value)) for name, value in self.seeds.items())
        if self.predefined_draft_ids is not None:
            out["predefinedDraftIds"] = ",".join(
                " ".join(map(str, triple)) for triple in self.predefined_draft_ids
            )
        if self.predefined_card_list_file is not None:
            out["predefinedCardListFile"] = self.predefined_card_list_file
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


def resolve_parameters(
    version: str | RuleSet, given: Mapping[str, object] | None = None
) -> GameParameters:
    """Validate ``given`` and derive every sub-seed the official way."""
    rules = ruleset(version)
    given = dict(given or {})
    allowed = parameter_names(rules)
    for name in given:
        if name not in allowed:
            raise ParameterError(
                f"unknown game parameter {name!r} for LOCM {rules.version}; "
                f"known: {', '.join(allowed)}"
            )
    seed = _parse_long("seed", given["seed"]) if "seed" in given else random_seed()
    derive = JavaRandom(seed)
    seeds = {name: derive.next_long() for name in SEED_NAMES[rules.draft]}
    for name in seeds:
        if name in given:
            seeds[name] = _parse_long(name, given[name])
    draft_ids = None
    if "predefinedDraftIds" in given:
        draft_ids = _parse_draft_ids(given["predefinedDraftIds"])
    card_list_file = None
    if "predefinedCardListFile" in given:
        card_list_file = str(given["predefinedCardListFile"])
        if card_list_file not in PREDEFINED_CARD_LIST_FILES:
            raise ParameterError(
                f"predefinedCardListFile: unknown card list {card_list_file!r}; "
                f"known: {', '.join(PREDEFINED_CARD_LIST_FILES)}"
            )
    return GameParameters(
        version=rules.version,
        seed=seed,
        seeds=seeds,
        predefined_draft_ids=draft_ids,
        predefined_card_list_file=card_list_file,
        given={name: str(value) for name, value in given.items()},
    )


def parse_parameter_string(text: str) -> dict[str, str]:
    """Parse the official ``-d`` form: space-separated ``key=value`` pairs."""
    out: dict[str, str] = {}
    for word in text.split():
        key, sep, value = word.partition("=")
        if not sep or not key:
            raise ParameterError(f"game parameter {word!r} is not of the form key=value")
        out[key] = value
    return out
