"""The arena: tournaments run back to back on one global turn clock (pairings, scores, results).

Pure game logic: the server drives :meth:`Arena.tick` from its clock and stores what
:meth:`Arena.tick` reports finished; nothing here touches sockets, files or time.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from .deck import generate_deck
from .match import Action, Match
from .rules import Card, RuleSet

DeckFactory = Callable[[int, int], tuple[Card, ...]]
"""Makes a tournament's deck from (seed, deck size); :func:`generate_deck` by default."""


def tournament_seed(base_seed: int, number: int) -> int:
    """The deck seed of tournament ``number``: stable, so a restarted tournament gets its deck."""
    digest = hashlib.sha256(f"shared-deck:{base_seed}:{number}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def pairings(players: Iterable[str]) -> list[tuple[str, str]]:
    """Every pair of players twice, once with each moving first, in a fixed order."""
    ordered = sorted(set(players))
    games = []
    for i, first in enumerate(ordered):
        for second in ordered[i + 1 :]:
            games.append((first, second))
            games.append((second, first))
    return games


def tournament_points(scores: Mapping[str, Sequence[int]]) -> dict[str, float]:
    """``sum(R(S) ** 1.5)`` per player, R(S) = number of pooled scores strictly below S."""
    pool = sorted(score for player_scores in scores.values() for score in player_scores)
    return {
        player: float(sum(bisect_left(pool, score) ** 1.5 for score in player_scores))
        for player, player_scores in scores.items()
    }


@dataclass(frozen=True, slots=True)
class MatchResult:
    """A finished match as it is stored."""

    match_id: int
    first: str
    second: str
    first_hp: int
    second_hp: int
    first_score: int
    second_score: int
    turns_played: int
    log: str
    """The actions, one :meth:`Action.to_line` per line: what :func:`.match.replay` needs."""

    def actions(self) -> tuple[Action, ...]:
        return tuple(Action.from_line(line) for line in self.log.splitlines())


@dataclass(frozen=True, slots=True)
class TournamentResult:
    """A finished tournament: everything the store keeps about it."""

    number: int
    seed: int
    deck: tuple[Card, ...]
    rules: RuleSet
    matches: tuple[MatchResult, ...]
    points: dict[str, float]


class Tournament:
    """The matches of one tournament, all started on the same global turn with the same deck.

    Match objects are made when first used, so that starting a tournament of a hundred
    players (9,900 matches) does not hold up the turn clock.
    """

    def __init__(
        self,
        number: int,
        seed: int,
        deck: tuple[Card, ...],
        rules: RuleSet,
        players: Iterable[str],
        first_match_id: int,
        start_turn: int,
    ) -> None:
        self.number = number
        self.seed = seed
        self.deck = deck
        self.rules = rules
        self.start_turn = start_turn
        self.first_match_id = first_match_id
        self.pairs = pairings(players)
        self.card_ids = frozenset(card.id for card in deck)
        self.matches_of: dict[str, list[int]] = {}
        for match_id, pair in enumerate(self.pairs, start=first_match_id):
            for player in pair:
                self.matches_of.setdefault(player, []).append(match_id)
        self._matches: dict[int, Match] = {}
        self.ended_ids: set[int] = set()
        """Matches seen to have ended; when all have, the tournament ends before the limit."""

    @property
    def next_match_id(self) -> int:
        return self.first_match_id + len(self.pairs)

    def match(self, match_id: int) -> Match | None:
        """The match with this id, if it belongs to this tournament."""
        match = self._matches.get(match_id)
        if match is None:
            index = match_id - self.first_match_id
            if not 0 <= index < len(self.pairs):
                return None
            match = Match(
                match_id, self.pairs[index], self.deck, self.rules, self.start_turn, self.card_ids
            )
            self._matches[match_id] = match
        return match

    def note_if_ended(self, match: Match) -> None:
        """Called whenever a match was looked at or acted on (cheap, so the tick does no
        per-match work: a match that ends unobserved is counted at the turn limit)."""
        if match.state.ended:
            self.ended_ids.add(match.id)

    def tick(self, global_turn: int) -> bool:
        """Advance to ``global_turn``; True once every match has ended."""
        if global_turn - self.start_turn >= self.rules.turns_per_match:
            return True
        return len(self.ended_ids) == len(self.pairs)

    def match_results(self, global_turn: int) -> Iterator[MatchResult]:
        """Finish every match at ``global_turn``, one at a time (the server spreads this
        work over several loop iterations)."""
        for match_id in range(self.first_match_id, self.next_match_id):
            match = self.match(match_id)
            assert match is not None
            state = match.sync(global_turn)
            first_score, second_score = match.final_scores()
            yield MatchResult(
                match.id,
                match.players[0],
                match.players[1],
                state.hp[0],
                state.hp[1],
                first_score,
                second_score,
                state.turn_index,
                "\n".join(action.to_line() for action in match.log),
            )

    def summarize(self, matches: Sequence[MatchResult]) -> TournamentResult:
        """Score the tournament from all its match results."""
        scores: dict[str, list[int]] = {}
        for match in matches:
            scores.setdefault(match.first, []).append(match.first_score)
            scores.setdefault(match.second, []).append(match.second_score)
        return TournamentResult(
            self.number, self.seed, self.deck, self.rules, tuple(matches), tournament_points(scores)
        )

    def result(self, global_turn: int) -> TournamentResult:
        """Finish and score the whole tournament at once."""
        return self.summarize(list(self.match_results(global_turn)))


class Arena:
    """The global turn clock, the running tournament and the one finished just before it.

    Matches of the previous tournament stay reachable so that bots can still ask for their
    final scores while the next tournament already runs.
    """

    def __init__(
        self,
        rules: RuleSet,
        base_seed: int,
        next_tournament: int = 1,
        next_match_id: int = 1,
        deck_factory: DeckFactory = generate_deck,
    ) -> None:
        self.rules = rules
        self.base_seed = base_seed
        self.next_tournament = next_tournament
        self.next_match_id = next_match_id
        self.deck_factory = deck_factory
        self.turn = 0
        self.current: Tournament | None = None
        self.previous: Tournament | None = None

    def start_tournament(self, players: Iterable[str]) -> Tournament | None:
        """Start the next tournament now if at least two players are registered."""
        names = sorted(set(players))
        if len(names) < 2:
            return None
        seed = tournament_seed(self.base_seed, self.next_tournament)
        deck = self.deck_factory(seed, self.rules.deck_size)
        tournament = Tournament(
            self.next_tournament, seed, deck, self.rules, names, self.next_match_id, self.turn
        )
        self.next_tournament += 1
        self.next_match_id = tournament.next_match_id
        self.current = tournament
        return tournament

    def tick(self) -> Tournament | None:
        """One global turn passes; returns the tournament that has just finished, if any.

        Its matches are over but not yet scored: see :meth:`Tournament.match_results`.
        """
        self.turn += 1
        tournament = self.current
        if tournament is None or not tournament.tick(self.turn):
            return None
        self.previous, self.current = tournament, None
        return tournament

    def match(self, match_id: int) -> tuple[Match, Tournament] | None:
        """The match with this id in the running or the previous tournament."""
        for tournament in (self.current, self.previous):
            if tournament is not None:
                match = tournament.match(match_id)
                if match is not None:
                    return match, tournament
        return None
