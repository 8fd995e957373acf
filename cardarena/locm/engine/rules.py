"""The three official LOCM rule sets (1.0, 1.2, 1.5) as one frozen record each.

Every difference between versions that the engine, the protocol or the referee
needs is a field here, so the rest of the code branches on a field, never on a
version string.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

VERSIONS: tuple[str, ...] = ("1.0", "1.2", "1.5")
DEFAULT_VERSION = "1.5"

DECK_SIZE = 30
HAND_LIMIT = 8
STARTING_HEALTH = 30
MAX_MANA = 12
RUNES: tuple[int, ...] = (25, 20, 15, 10, 5)
TURN_LIMIT = 50
"""From a player's 51st turn (player-turn index k >= 50) draws hurt."""
DECKOUT_DAMAGE = 10
HEALTH_PER_BONUS_DRAW = 5
FRAME_LIMIT = 1400
TOTAL_TIME_QUOTA_MS = 30_000
MAX_ANSWER_BYTES = 10_000
"""The SDK runner never completes a line of this many bytes: it is a timeout."""
FULL_POOL_LEAGUE = 4
"""The league level whose draft pool holds every card (the only one outside 1.0)."""


@dataclass(frozen=True, slots=True)
class RuleSet:
    """What one official referee does, as data."""

    version: str
    lanes: int
    has_lanes: bool
    lane_capacity: int
    """Own creatures allowed per lane (1.0 has one 'lane' holding the whole board)."""
    draft: bool
    """True: 30 draft turns of 3 cards (1.0/1.2). False: 1.5 constructed turn."""
    runes: bool
    """1.0/1.2 runes and rune-based deck-out; 1.5 has the 5-HP draw bonus instead."""
    area_effects: bool
    creature_effects_reset: bool
    """1.0/1.2 quirk: a creature that survived an attack or item shows ``0 0 0`` effects."""
    ids_after_shuffle: bool
    """1.0/1.2 number deck cards after shuffling (2i+p+1); 1.5 in choice order (even ids)."""
    deck_first_turn_ms: int
    deck_turn_ms: int
    deck_turn_quota_ms: int
    """What the SDK adds to the total-time quota per deck-building request."""
    battle_first_turn_ms: int
    battle_turn_ms: int
    empty_line_aborts: bool
    """SDK 2.5 (1.0/1.2) forwards no line for an empty answer and the referee aborts."""
    invalid_action_name_message: str
    leagues: tuple[int, ...]
    """CodinGame league levels that narrow the draft pool (1.0 only; empty: no leagues)."""

    def draft_league(self, league: int) -> int:
        """The league whose pool a draft of these rules offers (the full pool without
        leagues, whatever was asked)."""
        return league if self.leagues else FULL_POOL_LEAGUE

    def check_league(self, league: int | None) -> int:
        """The league a game of these rules plays (``None``: the full pool); ValueError
        (one line) for a league these rules do not have."""
        if league is None or league == FULL_POOL_LEAGUE:
            return FULL_POOL_LEAGUE
        if not self.leagues:
            raise ValueError(
                f"leagues only apply to LOCM {' and '.join(LEAGUE_VERSIONS)} "
                "(they select the draft pool)"
            )
        if league not in self.leagues:
            raise ValueError(
                f"the {self.version} leagues are {self.leagues[0]}-{self.leagues[-1]} "
                f"({FULL_POOL_LEAGUE}: all cards), got {league}"
            )
        return league


RULESET_1_0 = RuleSet(
    version="1.0",
    lanes=1,
    has_lanes=False,
    lane_capacity=6,
    draft=True,
    runes=True,
    area_effects=False,
    creature_effects_reset=True,
    ids_after_shuffle=True,
    deck_first_turn_ms=1000,
    deck_turn_ms=100,
    deck_turn_quota_ms=100,
    battle_first_turn_ms=1000,
    battle_turn_ms=100,
    empty_line_aborts=True,
    invalid_action_name_message="Invalid action name. Should be SUMMON, ATTACK, or USE.",
    leagues=(1, 2, 3, FULL_POOL_LEAGUE),
)
RULESET_1_2 = replace(
    RULESET_1_0,
    version="1.2",
    lanes=2,
    has_lanes=True,
    lane_capacity=3,
    battle_turn_ms=200,
    leagues=(),
)
"""The same Java classes as 1.0 with two lanes (and 200 ms battle turns)."""
RULESET_1_5 = replace(
    RULESET_1_2,
    version="1.5",
    draft=False,
    runes=False,
    area_effects=True,
    creature_effects_reset=False,
    ids_after_shuffle=False,
    deck_first_turn_ms=4000,
    deck_turn_ms=4000,
    deck_turn_quota_ms=50,
    empty_line_aborts=False,
    invalid_action_name_message="Invalid action name. Should be SUMMON, ATTACK,  USE or PASS.",
)
RULESETS: dict[str, RuleSet] = {
    rules.version: rules for rules in (RULESET_1_0, RULESET_1_2, RULESET_1_5)
}
LEAGUE_VERSIONS: tuple[str, ...] = tuple(v for v, rules in RULESETS.items() if rules.leagues)
ALL_LEAGUES: tuple[int, ...] = tuple(sorted({n for r in RULESETS.values() for n in r.leagues}))
"""Every league level some version has (1-4)."""


def ruleset(version: str | RuleSet) -> RuleSet:
    """The RuleSet of a version string ("1.0", "1.2", "1.5"); clear error otherwise."""
    if isinstance(version, RuleSet):
        return version
    try:
        return RULESETS[str(version)]
    except KeyError:
        raise ValueError(
            f"unknown LOCM version {version!r}; expected one of {', '.join(VERSIONS)}"
        ) from None
