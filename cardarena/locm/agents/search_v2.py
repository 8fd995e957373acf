"""The search agent, second version: every distinct way to play the turn, each judged
by the opponent's best answer with the board it can see.

Three stages, all on clones of the engine (the forward model), within a share of the
official limit of a turn (the clock is read after every simulated action or reply):

1. **Turn enumeration.** Beam passes of growing width (:data:`LAYER_WIDTHS`) over the
   current turn's action sequences with a transposition key: positions reached by
   different orders of the same actions are one node (the key ignores board and hand
   order). A pass that never drops a position has enumerated every distinct end of the
   turn; the first, narrow pass reaches whole turns quickly, so a short budget still
   gives complete plans. A turn is deterministic: cards are drawn only at the start of
   a turn.
2. **The opponent's reply.** The best end-of-turn positions (by static evaluation) are
   played on: the opponent's turn starts and its ready creatures attack, one attack at
   a time, each the best for the opponent (lethal first). Its hand and deck are hidden,
   so they are stand-ins that cannot be played: the reply uses only what we see.
   The position after the reply is scored for us.
3. **Sampled hands.** With time left, the best few positions are compared again as
   search-v1 does: the opponent's hand resampled from public cards, its greedy reply
   including summons and items (common random numbers across candidates).

The score of a position is the mean of stages 2 and 3 (stage 2 alone when stage 3
had no time), so lethal threats seen on the board always count. The evaluation's
weights depend on the version (:data:`VERSION_WEIGHTS`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..engine.cards import Card
from ..engine.state import PASS, Action, ActionType, CardInstance, Phase, State
from .cardscore import FITTED_DECK, DeckPolicy, deck_building_action
from .evaluation import BOARD_CONTROL, TUNED, WIN_SCORE, Weights, evaluate
from .greedy import best_greedy_action, lethal_attack
from .search import UNPLAYABLE, Determiniser

BUDGET_FRACTION = 0.45
"""Share of the official turn limit the search may use: the machine may be shared, and
a turn over the limit loses the game, so more than half of the limit stays unused."""
SAFE_SHARE = 0.7
"""A turn's budget plus the recent lateness of turns stays below this share of the limit."""
MIN_SHARE = 0.1
"""However late turns have been, the search gets this share of the limit."""
LATENESS_DECAY = 0.95
"""Per turn, the remembered lateness shrinks by this factor (unless a new one is worse)."""
ENUMERATION_SHARE = 0.4
"""Share of the budget for stage 1 (it stops early when the turn is exhausted)."""
REPLY_SHARE = 0.75
"""Stage 2 runs until this share of the budget; stage 3 gets the rest."""
LAYER_WIDTHS = (6, 24, 96, 400, 2000)
"""Beam widths of the successive passes of stage 1 (a pass that drops nothing ends it)."""
MAX_TURN_DEPTH = 20
"""Actions in one turn, at most (a hand of 8 and a board of 6 or 12 need fewer)."""
REPLY_CANDIDATES = 40
"""At most this many positions (best static first) get a board reply in stage 2."""
SAMPLED_CANDIDATES = 4
"""Positions compared by sampled hands in stage 3."""
OPPONENT_MAX_ACTIONS = 12
"""Actions of a simulated greedy turn, at most."""
HIDDEN_ID_BASE = 200_000
"""Instance ids of the opponent's stand-in cards (ours: from half of it), far from real ids."""

VERSION_WEIGHTS: dict[str, Weights] = {"1.0": BOARD_CONTROL, "1.2": BOARD_CONTROL, "1.5": TUNED}
"""The evaluation per version, chosen by matches against search-v1 (docs/agents.md)."""

Key = tuple[object, ...]


@dataclass
class _Position:
    actions: list[Action]
    state: State
    static: float
    board_reply: float | None = None
    sampled_total: float = 0.0


def position_key(state: State) -> Key:
    """Equal for positions that differ only in the order of boards and hands."""
    me, opp = state.players[state.active], state.players[1 - state.active]
    return (
        me.health,
        opp.health,
        me.mana,
        me.next_turn_draw,
        opp.next_turn_draw,
        tuple(sorted(inst.id for inst in me.hand)),
        tuple(
            sorted((c.id, c.attack, c.defense, c.keywords, c.can_attack, c.lane) for c in me.board)
        ),
        tuple(sorted((c.id, c.attack, c.defense, c.keywords) for c in opp.board)),
    )


def hide_opponent(state: State, player: int) -> State:
    """A clone where the opponent's hidden hand and deck are unplayable stand-ins of the
    sizes ``player`` sees (so draws and deck-out still count, and nothing leaks)."""
    world = state.clone()
    view = state.view(player)
    opp = world.players[1 - player]
    hand_size, deck_size = view.opponent.hand_size, view.opponent.deck_size
    stand_ins = [
        CardInstance(HIDDEN_ID_BASE + 2 * i, UNPLAYABLE) for i in range(hand_size + deck_size)
    ]
    opp.hand = stand_ins[:hand_size]
    opp.deck = stand_ins[hand_size:]
    return world


def play_next_turn(world: State, choose: Callable[[State], Action]) -> State:
    """End the turn in ``world`` (in place) and play the next player's turn, each action
    ``choose``'s, until it chooses PASS (the turn is left open) or the game ends."""
    if world.is_terminal:
        return world
    world.apply(PASS)
    for _ in range(OPPONENT_MAX_ACTIONS):
        if world.is_terminal:
            break
        action = choose(world)
        if action.type == ActionType.PASS:
            break
        world.execute(action)
    return world


def play_reply(world: State, player: int, reply_weights: Weights) -> State:
    """End ``player``'s turn in ``world`` (in place) and let the opponent play greedily."""
    return play_next_turn(world, lambda w: best_greedy_action(w, weights=reply_weights))


def _score(position: _Position, rounds: int) -> float:
    """The mean of the reply scores a position has (its static score if none)."""
    parts = []
    if position.board_reply is not None:
        parts.append(position.board_reply)
    if rounds:
        parts.append(position.sampled_total / rounds)
    return sum(parts) / len(parts) if parts else position.static


def play_followup(world: State, player: int, weights: Weights) -> State:
    """After the opponent's reply in ``world`` (in place): ``player``'s next turn, greedy,
    with the hand it holds (its draws are unplayable stand-ins: its deck order is hidden)."""
    if world.is_terminal or world.active == player:
        return world
    me = world.players[player]
    start = HIDDEN_ID_BASE // 2
    me.deck = [CardInstance(start + 2 * i, UNPLAYABLE) for i in range(len(me.deck))]
    return play_next_turn(world, lambda w: best_greedy_action(w, weights=weights))


class SearchAgentV2:
    """Exhaustive-as-time-allows turn enumeration, judged by the opponent's reply."""

    name = "search"

    def __init__(
        self,
        seed: int | None = None,
        time_scale: float = 1.0,
        budget_fraction: float = BUDGET_FRACTION,
        weights: Weights | None = None,
        reply_weights: Weights | None = None,
        deck_policy: DeckPolicy = FITTED_DECK,
        clock: Callable[[], float] = time.perf_counter,
        max_rounds: int | None = None,
        reply_share: float = REPLY_SHARE,
        sampled_candidates: int = SAMPLED_CANDIDATES,
        enumeration_share: float = ENUMERATION_SHARE,
        followup: bool = False,
    ) -> None:
        """``clock`` is injectable so tests can check the budget under a scaled clock;
        ``max_rounds`` caps stage 3 so that a generous budget gives reproducible play."""
        self.seed = seed
        self._random = random.Random(seed)
        self.time_scale = time_scale
        self.budget_fraction = budget_fraction
        self.fixed_weights = weights
        self.fixed_reply_weights = reply_weights
        self.weights: Weights = weights or TUNED
        """The evaluation of the turn being planned: ``weights``, else the version's."""
        self.reply_weights: Weights = reply_weights or self.weights
        self.deck_policy = deck_policy
        self.clock = clock
        self.max_rounds = max_rounds
        self.reply_share = reply_share
        self.sampled_candidates = sampled_candidates
        self.enumeration_share = enumeration_share
        self.followup = followup
        self._plan: list[Action] = []
        self._plan_key: tuple[int, int] | None = None
        self.public_pool: tuple[Card, ...] = ()
        self.public_draft: tuple[tuple[Card, ...], ...] = ()
        """Deck-building cards seen by a bot process (in-process, the state has them)."""
        self.last_search: dict[str, float] = {}
        """Statistics of the last planned turn (for benchmarks and tests)."""
        self.lateness_s = 0.0
        """The recent worst lateness of a turn over its budget (decays turn by turn)."""
        self._turn_started: float | None = None
        self._turn_budget = 0.0

    def act(self, state: State) -> Action:
        if state.phase == Phase.DECK_BUILDING:
            return deck_building_action(state, self.deck_policy)
        if state.is_terminal:
            raise ValueError("the game has ended: there is no legal action")
        key = (state.turn, state.active)
        action = None
        if key == self._plan_key and self._plan:
            action = self._plan.pop(0)
            if action.type != ActionType.PASS and not state.is_legal(action):
                action = None
        if action is None:
            self._plan = self.plan_turn(state)
            self._plan_key = key
            action = self._plan.pop(0)
        if action.type == ActionType.PASS:
            self._record_lateness()
        return action

    def _record_lateness(self) -> None:
        """At the end of a turn: how much longer than its budget the whole turn took (the
        machine's load shows here: our process waits for a core between clock readings)."""
        if self._turn_started is None:
            return
        late = self.clock() - self._turn_started - self._turn_budget
        self.lateness_s = max(self.lateness_s * LATENESS_DECAY, late)
        self._turn_started = None

    def budget_s(self, state: State) -> float:
        """The time this turn's planning may take: a share of the limit of a later turn
        (on the first battle turn too: 1 s is allowed there, but with one or two cards to
        play the search has nothing to spend it on), less the recent lateness of whole
        turns, so that on a loaded machine the turn still ends well within the limit."""
        limit = state.rules.battle_turn_ms * self.time_scale / 1000
        budget = min(self.budget_fraction * limit, SAFE_SHARE * limit - self.lateness_s)
        return max(budget, MIN_SHARE * limit)

    def plan_turn(self, state: State) -> list[Action]:
        """The whole turn to play from ``state``, ending with PASS."""
        return self._plan_turn(state)

    def _plan_turn(self, state: State) -> list[Action]:
        self.weights = self.fixed_weights or VERSION_WEIGHTS[state.version]
        self.reply_weights = self.fixed_reply_weights or self.weights
        clock = self.clock
        started = clock()
        budget = self.budget_s(state)
        deadline = started + budget
        self._turn_started, self._turn_budget = started, budget
        player = state.active
        actions = state.legal_actions()
        self.last_search = {"positions": 1.0, "replies": 0.0, "rounds": 0.0}
        if len(actions) == 1:
            return [PASS]
        lethal = lethal_attack(state, actions)
        if lethal is not None:
            return [lethal, PASS]
        positions, winning, exhausted = self._enumerate(
            state, player, started + budget * self.enumeration_share
        )
        if winning is not None:
            return [*winning, PASS]
        positions.sort(key=lambda p: p.static, reverse=True)
        replied = self._board_replies(state, player, positions, started + budget * self.reply_share)
        replied.sort(key=lambda p: (p.board_reply, p.static), reverse=True)
        shortlist = replied[: self.sampled_candidates]
        for position in positions:  # too little time for replies: the best static ones
            if len(shortlist) >= self.sampled_candidates:
                break
            if position.board_reply is None:
                shortlist.append(position)
        rounds = self._sampled_replies(state, player, shortlist, deadline)
        best = max(shortlist, key=lambda p: (_score(p, rounds), p.static))
        self.last_search = {
            "positions": float(len(positions)),
            "exhausted": float(exhausted),
            "replies": float(len(replied)),
            "rounds": float(rounds),
            "seconds": clock() - started,
        }
        return [*best.actions, PASS]

    def _enumerate(
        self, root: State, player: int, deadline: float
    ) -> tuple[list[_Position], list[Action] | None, bool]:
        """Stage 1: the distinct positions the turn can end in (or a winning sequence),
        and whether the enumeration was exhaustive.

        Beam passes of growing width: the first, narrow one reaches the ends of whole
        turns quickly; each wider pass adds what it finds, until a pass keeps everything
        (exhaustive) or the time is up.
        """
        found: dict[Key, _Position] = {}
        start = _Position([], root, evaluate(root, player, self.weights))
        found[position_key(root)] = start
        for width in LAYER_WIDTHS:
            winning, complete = self._beam_pass(root, player, width, deadline, found)
            if winning is not None:
                return list(found.values()), winning, False
            if complete:
                return list(found.values()), None, True
            if self.clock() > deadline:
                break
        return list(found.values()), None, False

    def _beam_pass(
        self, root: State, player: int, width: int, deadline: float, found: dict[Key, _Position]
    ) -> tuple[list[Action] | None, bool]:
        """One beam pass of ``width``, adding new positions to ``found``; returns a winning
        sequence if one turned up, and whether no position was dropped for lack of width."""
        weights = self.weights
        clock = self.clock
        seen = {position_key(root)}
        layer = [found[position_key(root)]]
        complete = True
        for _depth in range(MAX_TURN_DEPTH):
            children: list[_Position] = []
            for parent in layer:
                for action in parent.state.legal_actions():
                    if action.type == ActionType.PASS:
                        continue
                    child = parent.state.clone()
                    child.execute(action)
                    if child.is_terminal:
                        if child.winner == player:
                            return [*parent.actions, action], False
                        continue  # we would die by our own card: never a plan
                    key = position_key(child)
                    if key in seen:
                        continue
                    seen.add(key)
                    known = found.get(key)
                    if known is None:
                        known = _Position(
                            [*parent.actions, action], child, evaluate(child, player, weights)
                        )
                        found[key] = known
                    children.append(known)
                if clock() > deadline:
                    return None, False
            if not children:
                return None, complete
            if len(children) > width:
                complete = False
                children.sort(key=lambda p: p.static, reverse=True)
                children = children[:width]
            layer = children
        return None, False

    def _reply(self, world: State, player: int) -> State:
        """End ``player``'s turn in ``world`` (in place) and play the opponent's reply."""
        return play_reply(world, player, self.reply_weights)

    def _score_world(self, world: State, player: int) -> float:
        """``player``'s score of a position after the opponent's reply."""
        return evaluate(world, player, self.weights)

    def _visible_world(self, state: State, player: int) -> State:
        """Stage 2's world: a clone with the opponent's hidden cards as stand-ins."""
        return hide_opponent(state, player)

    def _board_replies(
        self, root: State, player: int, positions: list[_Position], deadline: float
    ) -> list[_Position]:
        """Stage 2: the score after the opponent's attacks with its visible board."""
        replied: list[_Position] = []
        clock = self.clock
        for position in positions[:REPLY_CANDIDATES]:
            world = self._reply(self._visible_world(position.state, player), player)
            if self.followup:
                play_followup(world, player, self.weights)
            position.board_reply = self._score_world(world, player)
            replied.append(position)
            if position.board_reply >= WIN_SCORE / 2:
                break  # the opponent cannot stop a win: look no further
            if clock() > deadline:
                break
        return replied

    def _determiniser(self, root: State, player: int) -> Determiniser:
        """Stage 3's guesses of the hidden cards: from public cards only."""
        return Determiniser(root, player, self.public_pool, self.public_draft)

    def _sampled_score(self, world: State, player: int) -> float:
        """Stage 3's score of a sampled world once the opponent has replied."""
        return self._score_world(world, player)

    def _sampled_replies(
        self, root: State, player: int, candidates: list[_Position], deadline: float
    ) -> int:
        """Stage 3: add each candidate's score after a greedy reply with a sampled hand;
        return the number of full rounds."""
        if len(candidates) < 2:
            return 0
        determiniser = self._determiniser(root, player)
        clock = self.clock
        rounds = 0
        while self.max_rounds is None or rounds < self.max_rounds:
            if clock() > deadline:
                break
            world_seed = self._random.getrandbits(64)
            scores = []
            for candidate in candidates:
                world = determiniser.sample(candidate.state, random.Random(world_seed))
                self._reply(world, player)
                scores.append(self._sampled_score(world, player))
                if clock() > deadline:
                    return rounds
            for candidate, score in zip(candidates, scores, strict=True):
                candidate.sampled_total += score
            rounds += 1
        return rounds
