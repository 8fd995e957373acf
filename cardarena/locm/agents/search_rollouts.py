"""search-v3 with rollouts: its turn planning, its finalists judged by whole games
played to the end in compiled code. Tried as the next builtin:search and measured no
stronger than search-v3 (docs/agents.md), so it is no built-in: it stays as the
reference use of :mod:`..fast.rollouts` and as a baseline for rollout-based search
(``--bot python:cardarena.locm.agents.search_rollouts:RolloutSearchAgent``).

search-v3 shortlists the best ends of the turn by the opponent's reply on its visible
board, scored by learned-v2's value network, then compares 8 finalists (1.5) with a
few sampled opponent hands, a Python greedy reply each. Here 24 finalists are compared
by *determinised rollouts* instead: the hidden cards (our deck order, the opponent's
hand and deck) are guessed from public cards, the turn ends, and both sides play
builtin:greedy's compiled policy to the end of the game, as many times as the turn's
budget allows, every finalist on the same guesses. A finalist's score is the mean of
its stage-2 network score and its rollout win rate (both in points of
:data:`.search_v3.VALUE_SCALE`).

Rollouts are on in 1.5 (:data:`VERSION_ROLLOUTS`); in 1.0 and 1.2 the turn is
search-v3's. The compiled engine needs numba (the ``fast`` extra): without it, and
wherever a position cannot be put into a batch row, the turn is search-v3's too.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ..engine.cards import Card
from ..engine.rules import RuleSet
from ..engine.state import Action, CardInstance, Phase, State
from .cardscore import DeckPolicy, constructed_deck, draft_pick
from .evaluation import WIN_SCORE
from .search_v2 import REPLY_SHARE, _Position
from .search_v3 import VALUE_SCALE, SearchAgentV3

ROLLOUT_CHUNK = 8
"""Rollouts per finalist in one compiled call with ``max_rounds`` (reproducible play).
Otherwise the first call rolls out once per finalist and later calls are sized to take
about :data:`CALL_SECONDS`, so that the clock is read often enough."""
CALL_SECONDS = 0.003
HALVING_START = 32
"""With halving: after this many rollouts each, the worse half of the finalists is
dropped, and again each time the count doubles, down to :data:`HALVING_KEEP`."""
HALVING_KEEP = 4
VERSION_ROLLOUTS = {"1.0": False, "1.2": False, "1.5": True}
"""Whether stage 3 rolls out, per version (otherwise the turn is search-v3's). Against
search-v1 with the same deck (200 games each), rollouts of 24 finalists won 65.5% in 1.2
(``--seed 9001``; search-v3: 68.0%) and 72.5% in 1.0 (search-v3: 73.3% over 400), where
6 of its turns went over the 100 ms limit with a test run beside the match: those
versions keep search-v3's turn."""
REPLY_SHARE_ROLLOUTS = 0.6
"""With rollouts, stage 2 runs until this share of the budget; rollouts get the rest."""
SAMPLED_ROLLOUTS = 24
"""Finalists compared by rollouts."""


class _RolloutSetup(NamedTuple):
    """One turn's finalists as batch rows with their hidden ids, and the card lists."""

    rows: np.ndarray
    table: np.ndarray
    my_cards: np.ndarray
    opp_cards: np.ndarray
    triples: bool


def _visible_ids(states: list[State], player: int) -> set[int]:
    """The instance ids ``player`` sees in any of ``states``: its hand, both boards."""
    used: set[int] = set()
    for state in states:
        me, opp = state.players[player], state.players[1 - player]
        used.update(inst.id for inst in me.hand)
        used.update(c.id for c in me.board)
        used.update(c.id for c in opp.board)
    return used


def mirror_deck(
    rules: RuleSet,
    pool: Sequence[Card],
    draft: Sequence[Sequence[Card]],
    policy: DeckPolicy,
) -> list[Card]:
    """The deck ``policy`` builds from the public cards: the 1.5 pool's thirty, or one
    pick per 1.0/1.2 draft triple (the model of an opponent that builds as we do)."""
    if not rules.draft:
        return constructed_deck(pool, rules, policy)
    chosen: list[Card] = []
    for triple in draft:
        chosen.append(triple[draft_pick(triple, chosen, rules, policy)])
    return chosen


def _printed_cards(world: State, known: dict[Card, int], printed: dict[int, Card]) -> None:
    """Give the visible cards of ``world`` (in place) their printed, public card: a
    position rebuilt from protocol text knows a creature's card by its present stats."""
    for side in world.players:
        side.hand = [
            inst if inst.card in known or inst.card.base_id not in printed
            else CardInstance(inst.id, printed[inst.card.base_id])
            for inst in side.hand
        ]  # fmt: skip
        for creature in side.board:
            if creature.card not in known and creature.card.base_id in printed:
                creature.card = printed[creature.card.base_id]


def rollout_setup(
    root: State,
    player: int,
    candidates: list[State],
    public_pool: tuple[Card, ...] = (),
    public_draft: tuple[tuple[Card, ...], ...] = (),
    opponent_deck: Sequence[Card] | None = None,
) -> _RolloutSetup | None:
    """The rows for :func:`..fast.rollouts.rollout_wins`: each candidate with ``player``'s
    deck and the opponent's hand and deck as placeholders under fresh ids (nothing
    hidden is read), or None when a position does not fit a batch row.

    The opponent's hidden cards are drawn from ``opponent_deck`` when given (cards it
    is believed to hold), else from every public card it may have taken."""
    from ..fast.convert import ConversionError, area_safe_ids, row_from_state

    view = root.view(player)
    pool = root.pool or public_pool
    draft = root.draft or public_draft
    if root.rules.draft:
        if not draft:
            return None
        offers = [card for triple in draft for card in triple]
    else:
        if not pool:
            return None
        offers = list(pool)
    first_row: dict[Card, int] = {}
    for index, card in enumerate(offers):
        first_row.setdefault(card, index)
    try:
        my_cards = np.array([first_row[card] for card in view.my_deck], np.int32)
    except KeyError:  # a deck card that was never offered: not a game we can row
        return None
    my_count = len(view.my_deck)
    hand_count, deck_count = view.opponent.hand_size, view.opponent.deck_size
    ids = area_safe_ids(_visible_ids([root, *candidates], player),
                        my_count + hand_count + deck_count)  # fmt: skip
    if ids is None:
        return None
    placeholder = offers[0]
    printed = {card.base_id: card for card in offers}
    mine = [CardInstance(i, placeholder) for i in ids[:my_count]]
    theirs = [CardInstance(i, placeholder) for i in ids[my_count:]]
    rows = []
    table = None
    for candidate in candidates:
        world = candidate.clone()
        world.pool, world.draft = tuple(pool), tuple(draft)
        _printed_cards(world, first_row, printed)
        world.players[player].deck = list(mine)
        world.players[1 - player].hand = theirs[:hand_count]
        world.players[1 - player].deck = theirs[hand_count:]
        try:
            row, table = row_from_state(world)
        except ConversionError:
            return None
        rows.append(row)
    if table is None:
        return None
    if opponent_deck is not None:
        try:
            believed = np.array([first_row[card] for card in opponent_deck], np.int32)
        except KeyError:
            return None
        if len(believed) >= hand_count + deck_count:
            return _RolloutSetup(np.stack(rows), table, my_cards, believed, False)
    if root.rules.draft:
        opp_cards = np.arange(len(offers), dtype=np.int32)
    else:
        opp_cards = np.repeat(np.arange(len(offers), dtype=np.int32), 2)
    return _RolloutSetup(np.stack(rows), table, my_cards, opp_cards, root.rules.draft)


class RolloutSearchAgent(SearchAgentV3):
    """search-v3 whose finalists are compared by compiled determinised rollouts."""

    name = "search-rollouts"
    reads_own_deck = True
    """As a bot process (``locm bot``), it is given the cards of its undrawn deck (it
    built the deck): the rollouts deal them in random orders."""

    def __init__(
        self,
        seed: int | None = None,
        rollouts: bool | None = None,
        blend: str = "mean",
        opponent: str = "public",
        halving: bool = False,
        rollout_weights: Any = None,
        **options: Any,
    ) -> None:
        """``rollouts`` None: the version's (:data:`VERSION_ROLLOUTS`), where numba is
        installed; ``blend``: "mean" (network and rollouts) or "rollouts" alone."""
        super().__init__(seed, **options)
        if blend not in ("mean", "rollouts"):
            raise ValueError(f"blend must be 'mean' or 'rollouts', not {blend!r}")
        self.blend = blend
        if opponent not in ("public", "mirror"):
            raise ValueError(f"opponent must be 'public' or 'mirror', not {opponent!r}")
        self.opponent = opponent
        self.halving = halving
        self.rollout_weights = rollout_weights
        self._mirror: tuple[object, list[Card]] | None = None
        self.fixed_rollouts = rollouts
        self.rollouts_done = 0
        """Rollouts per finalist in the last planned turn (also ``last_search``)."""
        self.fast = importlib.util.find_spec("numba") is not None
        """numba is installed (imported only when a game needs rollouts)."""
        self._weights: np.ndarray | None = None

    def act(self, state: State) -> Action:
        if state.phase == Phase.DECK_BUILDING:
            self.prepare(state.version)
        return super().act(state)

    def prepare(self, version: str) -> None:
        """Warm up (:meth:`warm_up`) if games of ``version`` roll out: called in deck
        building, whose first turn is the longest (4 s in 1.5; battle turns 200 ms);
        ``locm bot`` calls it on its first deck-building input."""
        if self._weights is None and self._rolls_out(version):
            self.warm_up()

    def warm_up(self) -> None:
        """Import numba and load (or, on the first use after an install, compile) the
        rollout code: done on the first deck-building turn of a game that rolls out, not
        at creation, so that a bot process answers its first draft turn in time."""
        try:
            from ..fast import layout as L
            from ..fast.playouts import weights_array
            from ..fast.rollouts import rollout_wins
        except ImportError:  # numba there but unusable: play as search-v3
            self.fast = False
            return
        self._weights = weights_array(self.rollout_weights)
        rows = np.zeros((1, L.STATE_SIZE), np.int32)
        rows[0, L.PHASE] = 2  # an ended game: nothing to play
        table = np.zeros((L.MAX_CARDS, L.CARD_FIELDS), np.int32)
        cards = np.zeros(1, np.int32)
        rollout_wins(rows, table, 0, cards, cards, False, 0, 1, 1, self._weights,
                     np.zeros(1))  # fmt: skip

    def _rolls_out(self, version: str) -> bool:
        wanted = self.fixed_rollouts
        if wanted is None:
            wanted = VERSION_ROLLOUTS[version]
        return bool(wanted) and self.fast

    def plan_turn(self, state: State) -> list[Action]:
        """search-v3's turn; where it rolls out, stage 2 ends earlier to leave them time."""
        self.rollouts_done = 0
        self.reply_share = REPLY_SHARE_ROLLOUTS if self._rolls_out(state.version) else REPLY_SHARE
        plan = super().plan_turn(state)
        self.last_search["rollouts"] = float(self.rollouts_done)
        return plan

    def _finalists(self, version: str) -> int:
        return SAMPLED_ROLLOUTS if self._rolls_out(version) else super()._finalists(version)

    def _opponent_deck(self, root: State) -> list[Card] | None:
        """With ``opponent="mirror"``: the deck our own policy builds from the public cards
        (computed once a game)."""
        if self.opponent != "mirror":
            return None
        pool = root.pool or self.public_pool
        draft = root.draft or self.public_draft
        key = (pool, draft)
        if self._mirror is None or self._mirror[0] != key:
            if not pool and not draft:
                return None
            self._mirror = (key, mirror_deck(root.rules, pool, draft, self.deck_policy))
        return self._mirror[1]

    def _blended(self, candidate: _Position, won: float, done: int) -> float:
        """A finalist's score so far: its stage-2 score and its rollout win rate."""
        rate = VALUE_SCALE * won / max(done, 1)
        if self.blend == "rollouts" or candidate.board_reply is None:
            return rate
        return (candidate.board_reply + rate) / 2

    def _sampled_replies(
        self, root: State, player: int, candidates: list[_Position], deadline: float
    ) -> int:
        """Stage 3: the finalists' rollout win rates (search-v3's sampled replies where
        rollouts are off or impossible). Returns 1 (one "round": each finalist's
        ``sampled_total`` is its win rate in points) and keeps the rollouts per finalist
        in :attr:`rollouts_done`."""
        if len(candidates) < 2 or not self._rolls_out(root.version):
            return super()._sampled_replies(root, player, candidates, deadline)
        setup = rollout_setup(root, player, [c.state for c in candidates],
                              self.public_pool, self.public_draft,
                              self._opponent_deck(root))  # fmt: skip
        if setup is None:
            return super()._sampled_replies(root, player, candidates, deadline)
        if self._weights is None:  # planned without deck building (a test, a puzzle)
            self.warm_up()
            if self._weights is None:
                return super()._sampled_replies(root, player, candidates, deadline)
        from ..fast.rollouts import rollout_wins

        self._score_unreplied(candidates, player)
        count = len(candidates)
        wins = np.zeros(count)
        active = np.arange(count)
        seed = self._random.getrandbits(63)
        done = 0
        clock = self.clock
        limit = None if self.max_rounds is None else self.max_rounds * ROLLOUT_CHUNK
        chunk = ROLLOUT_CHUNK if limit is not None else 1  # then sized by the clock
        next_halving = HALVING_START
        while clock() < deadline and (limit is None or done < limit):
            if self.halving and done >= next_halving and len(active) > HALVING_KEEP:
                keep = max(HALVING_KEEP, len(active) // 2)
                order = sorted(active, key=lambda c: -self._blended(candidates[c], wins[c], done))
                active = np.array(sorted(order[:keep]))
                next_halving *= 2
            step = chunk if limit is None else min(chunk, limit - done)
            gained = np.zeros(len(active))
            started = time.perf_counter()
            rollout_wins(setup.rows[active], setup.table, player, setup.my_cards,
                         setup.opp_cards, setup.triples, done, step, seed, self._weights,
                         gained)  # fmt: skip
            wins[active] += gained
            done += step
            if self.max_rounds is None:  # size the next call to about CALL_SECONDS
                each = (time.perf_counter() - started) / (step * len(active))
                chunk = max(1, min(64, int(CALL_SECONDS / max(each * len(active), 1e-9))))
        if not done:
            return 0
        survivors = set(active.tolist())
        for index, candidate in enumerate(candidates):
            if index in survivors:
                candidate.sampled_total = VALUE_SCALE * float(wins[index]) / done
            else:  # dropped by a halving: below every survivor
                candidate.sampled_total = -WIN_SCORE
                candidate.board_reply = -WIN_SCORE
            reply = candidate.board_reply
            if self.blend == "rollouts" and reply is not None and abs(reply) < VALUE_SCALE:
                candidate.board_reply = None  # a network value, not a won or lost game
        self.rollouts_done = done
        return 1
