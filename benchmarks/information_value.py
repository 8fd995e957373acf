"""What hidden cards and a second turn of lookahead are worth to search-v3 in LOCM 1.5.

    python benchmarks/information_value.py --variant peek-two-turn --games 200
    python benchmarks/information_value.py --games 400 --json          # every variant

Why: builtin:search (search-v3) wins about 60% against search-v1 in 1.5 with the same
deck, and better evaluators alone did not move it (docs/agents.md). This benchmark plays
variants of search-v3 against search-v1, some of them *peeking* at cards a player
cannot see, to find where the missing strength is. A peeking variant is a diagnostic,
never an agent to play with: it reads the opponent's hand or its own deck order.

The variants (:data:`VARIANTS`) differ in these ways:

* ``peek``: the hidden cards the search keeps as they truly are: "opponent" (its hand
  and deck) or "opponent-hand" (its hand alone; its deck is the guessed cards less
  those), and/or "own" (our deck's order); the rest is guessed.
* ``two_turn``: how stage 3 scores a finalist. "off": as search-v3 (the position after
  the opponent's greedy reply, by learned-v2's network). "policy": after the reply our
  next turn is played too, one action at a time by the network (learned-v2's policy),
  and the position after that turn is scored. "max": our next turn is the best of all
  its distinct ends (search-v2's enumeration), which is slow.
* ``opponent``: what the opponent's hidden cards are drawn from. "public": every card of
  the 1.5 pool, two copies each (search-v3). "believed": the deck our own deck policy
  builds from the pool, less the cards the opponent has been seen to play (its last
  actions, turn by turn). "inferred": the same, the hand drawn with a quarter of the
  weight on cards the opponent could have paid for with the mana it left unspent.
* ``reply_beam``: how the opponent replies in stage 3. 0: as greedy does, one action at
  a time (search-v3). Above 0: its best turn by a beam search of that width, scored by
  the static evaluation from its side (:func:`beam_turn`), as search-v1 plans a turn.
* ``blend`` and ``rounds_ahead`` (two turns only): a sampled world scores the mean of
  the one-turn and two-turn scores (``blend``); or the look goes ``rounds_ahead`` of our
  turns further, the opponent replying greedily between them (2: our turn, its reply,
  our next turn, its next reply, our turn after that).

Each variant plays ``--games`` games against search-v1, both building the fitted deck,
one worker, the official limits (variants with ``budget_s`` or ``budget_scale`` think
longer and go over them: their clocks are reported, not enforced), as
``benchmarks/agents.py --pair python:information_value:<factory>,search-v1 --deck
fitted --version 1.5`` (the factory: the variant's name, dashes as underscores).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cardarena.locm.agents.evaluation import WIN_SCORE, Weights, evaluate
from cardarena.locm.agents.greedy import lethal_attack
from cardarena.locm.agents.search import Determiniser
from cardarena.locm.agents.search_rollouts import mirror_deck
from cardarena.locm.agents.search_v2 import _Position, position_key
from cardarena.locm.agents.search_v3 import SearchAgentV3, play_learned_reply, world_value
from cardarena.locm.engine.cards import Card
from cardarena.locm.engine.state import PASS, Action, ActionType, State
from cardarena.machine import run_script

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the workers import this module by name (appended: it
    sys.path.append(str(HERE))  # holds agents.py, engine.py..., which must shadow nothing)

PEEKS = ("opponent", "opponent-hand", "own")
EVERYTHING = frozenset({"opponent", "own"})
"""Peeking at these, a sampled world is the true one."""
TWO_TURN = ("off", "policy", "max")
OPPONENT_MODELS = ("public", "believed", "inferred")
UNPLAYED_WEIGHT = 0.25
"""``opponent="inferred"``: the weight of a card the opponent could have paid for."""
TWO_TURN_REPLY_SHARE = 0.4
"""With two turns scored by sampling, stage 2 ends at this share of the budget."""
NEXT_TURN_SECONDS = 0.1
"""``two_turn="max"``: the time to enumerate our next turn, per finalist."""
REPLY_BEAM_DEPTH = 12
"""``reply_beam``: actions of the opponent's turn, at most."""


def beam_turn(world: State, weights: Weights, width: int) -> list[Action]:
    """The active player's best end of its turn (without the PASS) by a beam search of
    ``width``, positions merged by :func:`position_key` and scored by the static
    evaluation ``weights`` for that player; a lethal attack or a won game at once."""
    player = world.active
    lethal = lethal_attack(world, world.legal_actions())
    if lethal is not None:
        return [lethal]
    best: list[Action] = []
    best_score = evaluate(world, player, weights)
    layer: list[tuple[list[Action], State]] = [([], world)]
    seen = {position_key(world)}
    for _depth in range(REPLY_BEAM_DEPTH):
        children: list[tuple[float, list[Action], State]] = []
        for actions, state in layer:
            for action in state.legal_actions():
                if action.type == ActionType.PASS:
                    continue
                child = state.clone()
                child.execute(action)
                if child.is_terminal:
                    if child.winner == player:
                        return [*actions, action]
                    continue
                key = position_key(child)
                if key not in seen:
                    seen.add(key)
                    children.append((evaluate(child, player, weights), [*actions, action], child))
        if not children:
            break
        children.sort(key=lambda child: child[0], reverse=True)
        if children[0][0] > best_score:
            best_score, best = children[0][0], children[0][1]
        layer = [(actions, state) for _score, actions, state in children[:width]]
    return best


def _after_pass(agent: SearchAgentV3, world: State, player: int) -> float:
    """``player``'s score once it ends the turn it is playing in ``world``: the position
    learned-v2 rates when it weighs PASS (the opponent's turn has started)."""
    child = world.clone()
    child.apply(PASS)
    return world_value(child, player, agent.network)


class _Believed(Determiniser):
    """The opponent's hidden cards drawn from the cards it is believed to hold still (the
    rest, if the belief runs short, from every public card); with ``leftover``, its hand
    drawn with less weight on cards it could have paid for (it would have played them)."""

    def __init__(self, root: State, player: int, pool: Sequence[Card],
                 believed: list[Card], leftover: int | None) -> None:  # fmt: skip
        super().__init__(root, player, pool)
        self.believed = believed
        self.leftover = leftover

    def _opponent_cards(self, rng: random.Random, count: int) -> list[Card]:
        picked = rng.sample(self.believed, min(count, len(self.believed)))
        if len(picked) < count:
            picked += super()._opponent_cards(rng, count - len(picked))
        return picked

    def sample(self, state: State, rng: random.Random) -> State:
        world = super().sample(state, rng)
        if self.leftover is None:
            return world
        opp = world.players[1 - self.player]
        cards, hand_size = opp.hand + opp.deck, len(opp.hand)
        if not hand_size:
            return world
        # Weighted sampling without replacement: key u^(1/w), the largest keys drawn.
        keys = [rng.random() ** (1.0 / (UNPLAYED_WEIGHT if inst.card.cost <= self.leftover
                                         else 1.0)) for inst in cards]  # fmt: skip
        order = sorted(range(len(cards)), key=lambda i: -keys[i])
        in_hand = set(order[:hand_size])
        opp.hand = [cards[i] for i in order[:hand_size]]
        rest = [cards[i] for i in range(len(cards)) if i not in in_hand]
        rng.shuffle(rest)
        opp.deck = rest
        return world


class _Peeking(Determiniser):
    """A determiniser that keeps some hidden cards as they are (diagnostics only): it
    samples with ``guess``, then puts the peeked cards back."""

    def __init__(self, guess: Determiniser, player: int, peek: frozenset[str]) -> None:
        # No Determiniser.__init__: every guess comes from ``guess``.
        self.guess, self.player, self.peek = guess, player, peek

    def sample(self, state: State, rng: random.Random) -> State:
        world = self.guess.sample(state, rng)
        true = state.clone()
        me, opp = self.player, 1 - self.player
        if "opponent" in self.peek:
            world.players[opp].hand = true.players[opp].hand
            world.players[opp].deck = true.players[opp].deck
        elif "opponent-hand" in self.peek:
            # Its true hand; its deck the guessed cards less those, in a guessed order.
            guessed = world.players[opp].hand + world.players[opp].deck
            hand = true.players[opp].hand
            missing = Counter(inst.card for inst in hand)
            deck = []
            for inst in guessed:
                if missing[inst.card] > 0:
                    missing[inst.card] -= 1
                else:
                    deck.append(inst)
            world.players[opp].hand = hand
            world.players[opp].deck = deck[: len(true.players[opp].deck)]
        if "own" in self.peek:
            world.players[me].deck = true.players[me].deck
        return world


class InformedSearch(SearchAgentV3):
    """search-v3 with a chosen stage 3, opponent model and (diagnostic) peeking."""

    def __init__(
        self,
        seed: int | None = None,
        peek: Sequence[str] = (),
        two_turn: str = "off",
        opponent: str = "public",
        budget_s: float | None = None,
        budget_scale: float = 1.0,
        reply_beam: int = 0,
        blend: bool = False,
        rounds_ahead: int = 1,
        **options: Any,
    ) -> None:
        """``reply_beam`` 0: stage 3's opponent replies as greedy does (search-v3); above
        0: it plays its best turn by a beam of that width (:func:`beam_turn`). ``blend``
        (two turns only): a sampled world scores the mean of the position after the
        opponent's reply and the position after our next turn. ``rounds_ahead`` (two
        turns only): how many of our turns the look plays before it scores."""
        if two_turn != "off":
            options.setdefault("reply_share", TWO_TURN_REPLY_SHARE)
        super().__init__(seed, **options)
        if not set(peek) <= set(PEEKS) or two_turn not in TWO_TURN:
            raise ValueError(f"peek is a subset of {PEEKS}, two_turn one of {TWO_TURN}")
        if opponent not in OPPONENT_MODELS:
            raise ValueError(f"opponent is one of {OPPONENT_MODELS}")
        if reply_beam < 0:
            raise ValueError("reply_beam is 0 (greedy's reply) or a beam width")
        if (blend or rounds_ahead != 1) and two_turn != "policy":
            raise ValueError("blend and rounds_ahead look past one turn: they need "
                             "two_turn='policy'")  # fmt: skip
        if rounds_ahead < 1:
            raise ValueError("rounds_ahead is at least 1 (our next turn)")
        self.reply_beam = reply_beam
        self.blend = blend
        self.rounds_ahead = rounds_ahead
        self._sampling = False
        """Stage 3 is running (``reply_beam`` applies there only)."""
        self.peek = frozenset(peek)
        self.two_turn = two_turn
        self.opponent = opponent
        self.fixed_budget_s = budget_s
        self.budget_scale = budget_scale
        self._mirror_key: object = None
        self._mirror: list[Card] = []
        self._played: dict[int, list[int]] = {}
        """The opponent's turn -> the cards it summoned or used then (base ids)."""

    def budget_s(self, state: State) -> float:
        if self.fixed_budget_s is not None:
            return self.fixed_budget_s
        return self.budget_scale * super().budget_s(state)

    def plan_turn(self, state: State) -> list[Action]:
        if self.opponent != "public" and not state.rules.draft:
            self._remember_plays(state)
        return super().plan_turn(state)

    def _remember_plays(self, state: State) -> None:
        pool = state.pool or self.public_pool
        if pool != self._mirror_key:
            self._mirror_key = pool
            self._mirror = mirror_deck(state.rules, pool, (), self.deck_policy) if pool else []
            self._played = {}
        view = state.view(state.active)
        self._played[state.turn - 1] = [
            base_id
            for base_id, action in view.opponent.last_actions
            if action.type in (ActionType.SUMMON, ActionType.USE)
        ]

    def _believed(self) -> list[Card]:
        """Our policy's deck less every card the opponent has been seen to play."""
        remaining = Counter(card.base_id for card in self._mirror)
        for played in self._played.values():
            for base_id in played:
                if remaining[base_id] > 0:
                    remaining[base_id] -= 1
        by_base = {card.base_id: card for card in self._mirror}
        return [by_base[b] for b, n in remaining.items() for _ in range(n)]

    def _determiniser(self, root: State, player: int) -> Determiniser:
        guess: Determiniser
        if self.opponent == "public" or not self._mirror:
            guess = super()._determiniser(root, player)
        else:
            leftover = None
            if self.opponent == "inferred":
                view = root.view(player)
                costs = {card.base_id: card.cost for card in self._mirror}
                spent = sum(costs.get(b, 0) for b in self._played.get(root.turn - 1, ()))
                leftover = view.opponent.max_mana - spent
            guess = _Believed(root, player, self.public_pool, self._believed(), leftover)
        return _Peeking(guess, player, self.peek) if self.peek else guess

    def _visible_world(self, state: State, player: int) -> State:
        if self.peek == EVERYTHING:  # stage 2 replies with the opponent's true hand
            return state.clone()
        return super()._visible_world(state, player)

    def _reply(self, world: State, player: int) -> State:
        if not (self.reply_beam and self._sampling) or world.is_terminal:
            return super()._reply(world, player)
        world.apply(PASS)
        if not world.is_terminal:
            for action in beam_turn(world, self.reply_weights, self.reply_beam):
                world.execute(action)
                if world.is_terminal:
                    break
        return world

    def _sampled_replies(self, root: State, player: int, candidates: list[_Position],
                         deadline: float) -> int:  # fmt: skip
        self._sampling = True
        try:
            return self._stage_three(root, player, candidates, deadline)
        finally:
            self._sampling = False

    def _stage_three(self, root: State, player: int, candidates: list[_Position],
                     deadline: float) -> int:  # fmt: skip
        if self.peek != EVERYTHING:
            return self._finish(candidates, super()._sampled_replies(root, player, candidates,
                                                                     deadline))  # fmt: skip
        self._score_unreplied(candidates, player)
        if len(candidates) < 2:
            return 0
        for candidate in candidates:  # the true world: one round tells all, however long
            world = candidate.state.clone()
            self._reply(world, player)
            candidate.sampled_total += self._sampled_score(world, player)
        return self._finish(candidates, 1)

    def _finish(self, candidates: list[_Position], rounds: int) -> int:
        """Two-turn scores stand alone: stage 2's (one turn) only shortlisted."""
        if rounds and self.two_turn != "off":
            for candidate in candidates:
                candidate.board_reply = None
        return rounds

    def _sampled_score(self, world: State, player: int) -> float:
        """A finalist's score in one sampled world, after the opponent's reply."""
        if self.two_turn == "off" or world.is_terminal:
            return self._score_world(world, player)
        if self.two_turn == "policy":
            one_turn = self._score_world(world, player) if self.blend else None
            for ahead in range(self.rounds_ahead):
                if ahead:  # the opponent's next reply, then our turn after that
                    self._reply(world, player)
                    if world.is_terminal:
                        break
                play_learned_reply(world, 1 - player, self.network)
                if world.is_terminal or world.active != player:
                    break
            if world.is_terminal or world.active != player:
                two_turn = self._score_world(world, player)
            else:
                two_turn = _after_pass(self, world, player)
            return two_turn if one_turn is None else (one_turn + two_turn) / 2
        world.apply(PASS)
        if world.is_terminal:
            return self._score_world(world, player)
        ends, winning, _ = self._enumerate(world, player, self.clock() + NEXT_TURN_SECONDS)
        if winning is not None:
            return WIN_SCORE
        return max(_after_pass(self, end.state, player) for end in ends)


VARIANTS: dict[str, dict[str, Any]] = {
    "search-v3": {},
    "peek-one-turn": {"peek": EVERYTHING, "budget_s": 0.36},
    "peek-two-turn-max": {"peek": EVERYTHING, "two_turn": "max", "budget_s": 0.5},
    "peek-two-turn": {"peek": EVERYTHING, "two_turn": "policy", "budget_s": 0.5},
    "two-turn": {"two_turn": "policy"},
    "two-turn-peek-opponent": {"two_turn": "policy", "peek": ("opponent",)},
    "two-turn-peek-own": {"two_turn": "policy", "peek": ("own",)},
    "two-turn-believed-peek-hand": {
        "two_turn": "policy",
        "opponent": "believed",
        "peek": ("opponent-hand",),
    },
    "two-turn-believed": {"two_turn": "policy", "opponent": "believed"},
    "two-turn-inferred": {"two_turn": "policy", "opponent": "inferred"},
    "two-turn-believed-3x-time": {"two_turn": "policy", "opponent": "believed", "budget_scale": 3},
    "believed": {"opponent": "believed"},
    "believed-beam-reply": {"opponent": "believed", "reply_beam": 3},
    "two-turn-believed-beam-reply": {"two_turn": "policy", "opponent": "believed", "reply_beam": 3},
    "two-turn-believed-blend": {"two_turn": "policy", "opponent": "believed", "blend": True},
    "two-rounds-believed": {"two_turn": "policy", "opponent": "believed", "rounds_ahead": 2},
}
"""Name -> :class:`InformedSearch` options."""


def factory(name: str) -> Callable[..., InformedSearch]:
    """A ``python:information_value:<name>`` agent factory (dashes as underscores)."""
    options = VARIANTS[name]

    def make(seed: int | None = None) -> InformedSearch:
        return InformedSearch(seed, **options)

    return make


for _name in VARIANTS:
    globals()[_name.replace("-", "_")] = factory(_name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", action="append", choices=tuple(VARIANTS),
                        help="a variant to play; repeat for several (default: all)")  # fmt: skip
    parser.add_argument("--games", type=int, default=200, help="games per variant (default 200)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the first game (default 1)")
    parser.add_argument("--workers", type=int, default=1, help="games in parallel (default 1)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    if args.games < 1 or args.workers < 1:
        parser.error("--games and --workers must be at least 1")
    from agents import measure  # benchmarks/agents.py, beside this file

    results = []
    for name in args.variant or list(VARIANTS):
        ref = f"python:information_value:{name.replace('-', '_')}"
        result = measure(ref, "search-v1", "1.5", args.games, args.seed, args.workers, 1.0,
                         "fitted")  # fmt: skip
        result["variant"] = name
        results.append(result)
        if not args.json:
            low, high = result["ci95"]  # type: ignore[misc]
            print(
                f"{name:>24}: {result['wins']}/{args.games} = {result['win_rate']:.1%} "
                f"[{low:.1%}, {high:.1%}] against search-v1; slowest turn "
                f"{result['max_turn_ms'][ref]:.0f} ms, "  # type: ignore[index]
                f"{result['turns_over_limit'][ref]} over the limit; "  # type: ignore[index]
                f"load {result['load_average'][0]:.2f}",
                flush=True,
            )  # type: ignore[index]
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    run_script(main, "benchmarks/information_value.py")
