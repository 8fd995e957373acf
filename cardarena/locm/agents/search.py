"""The search agent: plans a whole turn within the official time limit.

Two stages, both on clones of the engine (the forward model):

1. **Turn planning.** A beam search over the current turn's action sequences
   (summons, items, attacks), scored by :func:`.evaluation.evaluate`, collects the
   distinct positions the turn can end in. A player's own turn is deterministic
   and needs nothing hidden: cards are drawn only at the start of a turn.
2. **Opponent replies.** The best few end-of-turn positions are compared by
   flat Monte Carlo: for each *determinisation* — the opponent's hand and deck
   and our own deck order resampled from the cards we cannot see — the
   opponent plays its next turn greedily and the position after it is evaluated.
   Candidates share determinisations (common random numbers) so that their
   averages differ by the candidates, not by luck.

Fairness: the hidden parts of every simulated state are overwritten from
:meth:`State.view` and public information only (the 1.5 card pool, the 1.0/1.2
draft triples), never read. The time budget is a fraction of the official
limit of the turn (scaled by ``time_scale``); the plan is computed at the first
``act`` of a turn and then played out action by action.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..engine.cards import Card
from ..engine.state import PASS, Action, ActionType, CardInstance, Phase, State
from .cardscore import AGGRO_DECK, DeckPolicy, deck_building_action
from .evaluation import TUNED, WIN_SCORE, Weights, evaluate
from .greedy import best_greedy_action, lethal_attack

BUDGET_FRACTION = 0.6
"""Share of the official turn limit the search may use (the rest: I/O, parsing, slack)."""
BEAM_WIDTH = 6
MAX_TURN_DEPTH = 14
CANDIDATES = 6
PLANNING_SHARE = 0.35
"""Share of the budget for stage 1; stage 2 gets the rest."""
OPPONENT_MAX_ACTIONS = 12
HIDDEN_ID_BASE = 100_000
UNPLAYABLE = Card(-1, 0, 99, 0, 1)
"""A stand-in for a hidden card when nothing public says what it could be."""
"""Instance ids of resampled hidden cards: far from any real id."""

Signature = tuple[object, ...]


@dataclass
class _Candidate:
    actions: list[Action]
    state: State
    static: float
    total: float = 0.0


def _signature(state: State) -> Signature:
    """Positions reached by different orders of the same actions compare equal."""
    me, opp = state.players[state.active], state.players[1 - state.active]
    return (
        me.health,
        opp.health,
        me.mana,
        me.next_turn_draw,
        tuple(inst.id for inst in me.hand),
        tuple((c.id, c.attack, c.defense, c.keywords, c.can_attack, c.lane) for c in me.board),
        tuple((c.id, c.attack, c.defense, c.keywords) for c in opp.board),
    )


class Determiniser:
    """Resamples what ``player`` cannot see, from its view and public information.

    The public cards are the 1.5 pool or the 1.0/1.2 draft triples: the state's
    own, or (for a state rebuilt from protocol text, which has neither) the ones
    the caller saw during deck building.
    """

    def __init__(
        self,
        state: State,
        player: int,
        pool: Sequence[Card] = (),
        draft: Sequence[Sequence[Card]] = (),
    ) -> None:
        view = state.view(player)
        self.player = player
        self.opponent_hand_size = view.opponent.hand_size
        self.opponent_deck_size = view.opponent.deck_size
        self.my_deck: tuple[Card, ...] = view.my_deck
        self._candidates: Sequence[Card] = ()
        self._draft: tuple[tuple[Card, ...], ...] = ()
        if state.rules.draft:
            # The opponent took one card of each public draft triple.
            self._draft = tuple(tuple(triple) for triple in (state.draft or draft))
        else:
            # The opponent chose from the public pool, at most two copies of each card.
            self._candidates = [card for card in (state.pool or pool) for _copy in range(2)]

    def _opponent_cards(self, rng: random.Random, count: int) -> list[Card]:
        if self._draft:
            cards = [rng.choice(triple) for triple in self._draft]
        else:
            cards = list(self._candidates)
        picked = rng.sample(cards, min(count, len(cards)))
        # Nothing public to guess from (or too few cards): unplayable placeholders.
        return picked + [UNPLAYABLE] * (count - len(picked))

    def sample(self, state: State, rng: random.Random) -> State:
        """A clone of ``state`` whose hidden cards are replaced by a consistent guess."""
        world = state.clone()
        me, opp = world.players[self.player], world.players[1 - self.player]
        hand_size, deck_size = self.opponent_hand_size, self.opponent_deck_size
        cards = self._opponent_cards(rng, hand_size + deck_size)
        # Even ids, two apart: a 1.5 area clone takes the id after its original's.
        hidden = [CardInstance(HIDDEN_ID_BASE + 2 * i, card) for i, card in enumerate(cards)]
        opp.hand = hidden[:hand_size]
        opp.deck = hidden[hand_size:]
        mine = list(self.my_deck)
        rng.shuffle(mine)
        start = HIDDEN_ID_BASE + 2 * len(hidden)
        me.deck = [CardInstance(start + 2 * i, card) for i, card in enumerate(mine)]
        return world


class SearchAgent:
    """Beam search over its own turn, flat Monte Carlo over the opponent's reply."""

    name = "search"

    def __init__(
        self,
        seed: int | None = None,
        time_scale: float = 1.0,
        budget_fraction: float = BUDGET_FRACTION,
        max_rounds: int | None = None,
        weights: Weights = TUNED,
        reply_weights: Weights = TUNED,
        deck_policy: DeckPolicy = AGGRO_DECK,
    ) -> None:
        """``max_rounds`` caps the Monte Carlo rounds: with a generous time budget the
        agent then plays the same moves on any machine (reproducible experiments)."""
        self.seed = seed
        self._random = random.Random(seed)
        self.time_scale = time_scale
        self.budget_fraction = budget_fraction
        self.max_rounds = max_rounds
        self.weights = weights
        self.reply_weights = reply_weights
        self.deck_policy = deck_policy
        self._plan: list[Action] = []
        self._plan_key: tuple[int, int] | None = None
        self.public_pool: tuple[Card, ...] = ()
        self.public_draft: tuple[tuple[Card, ...], ...] = ()
        """Deck-building cards seen by a bot process (in-process, the state has them)."""
        self.last_search: dict[str, float] = {}
        """Statistics of the last planned turn (for benchmarks and curiosity)."""

    def act(self, state: State) -> Action:
        if state.phase == Phase.DECK_BUILDING:
            return deck_building_action(state, self.deck_policy)
        if state.is_terminal:
            raise ValueError("the game has ended: there is no legal action")
        key = (state.turn, state.active)
        if key == self._plan_key and self._plan:
            action = self._plan.pop(0)
            if action.type == ActionType.PASS or state.is_legal(action):
                return action
        # A new turn, or the position left the plan: plan (again).
        self._plan = self.plan_turn(state)
        self._plan_key = key
        return self._plan.pop(0)

    def budget_s(self, state: State) -> float:
        """The time this turn's planning may take."""
        rules = state.rules
        first = state.turn < 2
        limit_ms = rules.battle_first_turn_ms if first else rules.battle_turn_ms
        return limit_ms * self.budget_fraction * self.time_scale / 1000

    def plan_turn(self, state: State) -> list[Action]:
        """The whole turn to play from ``state``, ending with PASS."""
        started = time.perf_counter()
        deadline = started + self.budget_s(state)
        player = state.active
        actions = state.legal_actions()
        if len(actions) == 1:
            return [PASS]
        lethal = lethal_attack(state, actions)
        if lethal is not None:
            return [lethal, PASS]
        planning_deadline = started + (deadline - started) * PLANNING_SHARE
        candidates, winning = self._plan_candidates(state, player, planning_deadline)
        if winning is not None:
            return [*winning, PASS]
        candidates.sort(key=lambda c: c.static, reverse=True)
        shortlist = candidates[:CANDIDATES]
        rounds = self._compare_replies(state, player, shortlist, deadline)
        if rounds:
            best = max(shortlist, key=lambda c: (c.total / rounds, c.static))
        else:
            best = shortlist[0]
        self.last_search = {
            "candidates": float(len(candidates)),
            "rounds": float(rounds),
            "seconds": time.perf_counter() - started,
        }
        return [*best.actions, PASS]

    def _plan_candidates(
        self, root: State, player: int, deadline: float
    ) -> tuple[list[_Candidate], list[Action] | None]:
        """Stage 1: distinct end-of-turn positions (or a winning sequence)."""
        weights = self.weights
        start = _Candidate([], root, evaluate(root, player, weights))
        seen = {_signature(root)}
        found = [start]
        beam = [start]
        clock = time.perf_counter
        for _depth in range(MAX_TURN_DEPTH):
            children: list[_Candidate] = []
            for parent in beam:
                for action in parent.state.legal_actions():
                    if action.type == ActionType.PASS:
                        continue
                    child = parent.state.clone()
                    child.execute(action)
                    score = evaluate(child, player, weights)
                    if score >= WIN_SCORE / 2:
                        return found, [*parent.actions, action]
                    if child.is_terminal:
                        # We died by our own card (1.2 #25/#45 cost health): never a plan,
                        # and stage 2 cannot play a reply in a finished game.
                        continue
                    signature = _signature(child)
                    if signature in seen:
                        continue
                    seen.add(signature)
                    children.append(_Candidate([*parent.actions, action], child, score))
                if clock() > deadline:
                    break
            if not children:
                break
            children.sort(key=lambda c: c.static, reverse=True)
            beam = children[:BEAM_WIDTH]
            found.extend(beam)
            if clock() > deadline:
                break
        return found, None

    def _compare_replies(
        self, root: State, player: int, shortlist: list[_Candidate], deadline: float
    ) -> int:
        """Stage 2: add each candidate's score after a greedy reply; return full rounds."""
        if len(shortlist) < 2:
            return 0
        determiniser = Determiniser(root, player, self.public_pool, self.public_draft)
        rounds = 0
        clock = time.perf_counter
        while self.max_rounds is None or rounds < self.max_rounds:
            world_seed = self._random.getrandbits(64)
            scores = []
            for candidate in shortlist:
                world = determiniser.sample(candidate.state, random.Random(world_seed))
                scores.append(_after_greedy_reply(world, player, self.weights, self.reply_weights))
                if clock() > deadline:
                    return rounds
            for candidate, score in zip(shortlist, scores, strict=True):
                candidate.total += score
            rounds += 1
            if clock() > deadline:
                break
        return rounds


def _after_greedy_reply(
    world: State, player: int, weights: Weights, reply_weights: Weights
) -> float:
    """End our turn, let the opponent play its turn greedily, evaluate for ``player``."""
    if world.is_terminal:  # nothing left to reply to
        return evaluate(world, player, reply_weights)
    world.apply(PASS)
    for _ in range(OPPONENT_MAX_ACTIONS):
        if world.is_terminal:
            break
        action = best_greedy_action(world, weights=weights)
        if action.type == ActionType.PASS:
            break
        world.execute(action)
    return evaluate(world, player, reply_weights)
