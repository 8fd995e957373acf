"""Driving the reference engine and the fast engine side by side (shared by the tests).

Both engines get the same actions; after every action the fast game, converted back to
a reference State, must equal the reference state field by field (compare_states), and
the legal-action masks must be the same sets.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from cardarena.locm import ProtocolGame, State
from cardarena.locm.encoding.encoder import Encoder
from cardarena.locm.engine.state import Action, ActionType
from cardarena.locm.fast.batch import Batch
from cardarena.locm.fast.convert import compare_states

Op = tuple[Any, ...]
"""("choice", player, card), ("execute", action) or ("pass",)."""


@contextmanager
def _recording(ops: list[Op]) -> Iterator[None]:
    """Record what the protocol does to its State: deck choices, actions, turn ends."""
    add_choice, execute, end_turn = State.add_choice, State.execute, State.end_turn

    def recorded_choice(self: State, player: int, card: Any) -> None:
        ops.append(("choice", player, card))
        add_choice(self, player, card)

    def recorded_execute(self: State, action: Action) -> None:
        ops.append(("execute", action))
        execute(self, action)

    def recorded_end_turn(self: State) -> None:
        ops.append(("pass",))
        end_turn(self)

    State.add_choice = recorded_choice  # type: ignore[method-assign]
    State.execute = recorded_execute  # type: ignore[method-assign]
    State.end_turn = recorded_end_turn  # type: ignore[method-assign]
    try:
        yield
    finally:
        State.add_choice = add_choice  # type: ignore[method-assign]
        State.execute = execute  # type: ignore[method-assign]
        State.end_turn = end_turn  # type: ignore[method-assign]


def official_actions(game: dict[str, Any]) -> list[Op]:
    """The engine actions of a recorded official game, in the order a State takes them
    (the protocol gives 1.5 decks player by player; the State alternates the players)."""
    ops: list[Op] = []
    protocol = ProtocolGame(game["version"], game["params"], game.get("league", 4))
    turns = iter(game["turns"])
    with _recording(ops):
        while requests := protocol.requests():
            protocol.answer([next(turns)["output"] for _ in requests])
    choices: list[list[Op]] = [[], []]
    rest: list[Op] = []
    for op in ops:
        if op[0] == "choice":
            choices[op[1]].append(op)
        else:
            rest.append(op)
    interleaved = []
    for k in range(max(len(choices[0]), len(choices[1]))):
        interleaved += [side[k] for side in choices if k < len(side)]
    return interleaved + rest


def replay_official(game: dict[str, Any]) -> str | None:
    """Replay a recorded game through both engines; the first difference, or None."""
    version = game["version"]
    league = game.get("league", 4)
    encoder = Encoder(version)
    reference = State.new(version, game["params"], league)
    batch = Batch.new(version, params=[game["params"]], league=league)
    name = game["game"]
    difference = _difference(reference, batch, encoder, f"{name} at the start")
    if difference:
        return difference
    for number, op in enumerate(official_actions(game)):
        if op[0] == "choice":
            player, card = op[1], op[2]
            if reference.current_player != player:
                return f"{name} action {number}: the choice of player {player} out of turn"
            if reference.rules.draft:
                offered = reference.draft[len(reference.players[player].chosen)]
                action = Action(ActionType.PICK, offered.index(card))
            else:
                action = Action(ActionType.CHOOSE, card.base_id)
        elif op[0] == "execute":
            action = op[1]
        else:
            action = Action(ActionType.PASS)
        index = encoder.encode_action(reference, action)
        reference.apply(action)
        batch.step(np.array([index]))
        difference = _difference(reference, batch, encoder, f"{name} after {action}")
        if difference:
            return difference
    if reference.is_terminal and reference.winner != game["winner"]:
        return f"{name}: reference winner {reference.winner}, recorded {game['winner']}"
    return None


def _difference(reference: State, batch: Batch, encoder: Encoder, where: str,
                game: int = 0) -> str | None:  # fmt: skip
    differences = compare_states(reference, batch.to_state(game))
    if differences:
        return f"{where}: " + "; ".join(differences[:5])
    expected = set(np.flatnonzero(encoder.mask(reference)).tolist())
    fast = set(np.flatnonzero(batch.masks()[game]).tolist())
    if expected != fast:
        return (
            f"{where}: masks differ, only reference {sorted(expected - fast)}, "
            f"only fast {sorted(fast - expected)}"
        )
    return None


def random_differential(version: str, seeds: list[int], rng_seed: int = 0) -> list[str]:
    """Random legal actions through both engines for the games of ``seeds`` (one Batch);
    compare after every action. Returns the failures (one line each, first per game)."""
    encoder = Encoder(version)
    batch = Batch.new(version, seeds=seeds)
    references = [State.new(version, {"seed": seed}) for seed in seeds]
    rng = np.random.default_rng(rng_seed)
    failures: dict[int, str] = {}
    steps = 0
    while True:
        masks = batch.masks()
        actions = np.zeros(len(seeds), np.int64)
        running = False
        for g, reference in enumerate(references):
            if g in failures or reference.is_terminal:
                continue
            legal: dict[int, Action] = {}
            encoder.mask(reference, legal=legal)
            fast = np.flatnonzero(masks[g]).tolist()
            if fast != sorted(legal):
                failures[g] = f"game seed {seeds[g]} step {steps}: masks differ"
                continue
            actions[g] = fast[int(rng.integers(len(fast)))]
            reference.apply(legal[int(actions[g])])
            running = True
        if not running:
            break
        for g in failures:  # a failed game goes on with any legal action, unchecked
            actions[g] = np.flatnonzero(masks[g])[0] if masks[g].any() else 0
        batch.step(actions)
        steps += 1
        for g, reference in enumerate(references):
            if g in failures:
                continue
            differences = compare_states(reference, batch.to_state(g))
            if differences:
                failures[g] = f"game seed {seeds[g]} step {steps}: " + "; ".join(differences[:5])
    return [failures[g] for g in sorted(failures)]
