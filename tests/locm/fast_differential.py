"""Driving the reference engine and the fast engine side by side (shared by the tests).

Both engines get the same actions; after every action the fast game, converted back to
a reference State, must equal the reference state field by field (compare_states), and
the legal-action masks must be the same sets.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from cardarena.locm import ProtocolGame, State
from cardarena.locm.encoding.encoder import Encoder
from cardarena.locm.engine.state import Action, ActionType, Phase
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


def _step_randomly(
    batch: Batch,
    references: list[State],
    seeds: list[int],
    encoder: Encoder,
    rng_seed: int,
    failures: dict[int, str],
    check: Callable[[int], None],
) -> None:
    """Both engines take the same random legal action in every running game until all
    have ended; the masks must agree, and ``check(steps)`` compares the states after
    every step (adding to ``failures``, game -> first failure)."""
    rng = np.random.default_rng(rng_seed)
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
            return
        for g in failures:  # a failed game goes on with any legal action, unchecked
            actions[g] = np.flatnonzero(masks[g])[0] if masks[g].any() else 0
        batch.step(actions)
        steps += 1
        check(steps)


def random_differential(
    version: str,
    seeds: list[int],
    rng_seed: int = 0,
    params: list[dict[str, Any]] | None = None,
    league: int = 4,
) -> list[str]:
    """Random legal actions through both engines for the games of ``seeds`` (or of
    ``params``; one Batch); compare after every action. Returns the failures (one line
    each, the first of each game)."""
    encoder = Encoder(version)
    if params is None:
        batch = Batch.new(version, seeds=seeds, league=league)
        references = [State.new(version, {"seed": seed}, league) for seed in seeds]
    else:
        batch = Batch.new(version, params=params, league=league)
        references = [State.new(version, p, league) for p in params]
        seeds = [int(p["seed"]) for p in params]
    failures: dict[int, str] = {}

    def check(steps: int) -> None:
        for g, reference in enumerate(references):
            if g in failures:
                continue
            differences = compare_states(reference, batch.to_state(g))
            if differences:
                failures[g] = f"game seed {seeds[g]} step {steps}: " + "; ".join(differences[:5])

    _step_randomly(batch, references, seeds, encoder, rng_seed, failures, check)
    return [failures[g] for g in sorted(failures)]


# --- the full run: the same comparison through flat signatures ------------------------

SIGNATURE_SIZE = 1024


def signature(state: State) -> list[int]:
    """Every field of a reference state as a flat list of ints (cards by base id: the card
    tables are compared whole at the start and never change)."""
    out = [int(state.phase), state.active, state.turn,
           -1 if state.winner is None else state.winner, int(state.end_reason)]  # fmt: skip
    for player in state.players:
        out += [player.health, player.mana, player.max_mana, player.bonus_mana_turns,
                player.next_turn_draw, player.draw_shown, player.health_lost,
                len(player.runes), len(player.hand)]  # fmt: skip
        for inst in player.hand:
            out += [inst.id, inst.card.base_id]
        out.append(len(player.deck))
        for inst in player.deck:
            out += [inst.id, inst.card.base_id]
        out.append(len(player.board))
        for c in player.board:
            out += [c.id, c.card.base_id, c.lane, c.attack, c.defense, c.keywords,
                    int(c.can_attack), int(c.has_attacked), int(c.shows_effects)]  # fmt: skip
        out.append(len(player.performed))
        for base_id, action in player.performed:
            out += [base_id, action.type, action.id, action.target]
        out.append(len(player.chosen))
        out += [card.base_id for card in player.chosen]
    return out


def fast_signatures(state: np.ndarray, cards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`signature` of every fast game at once: (values [N, SIGNATURE_SIZE], lengths)."""
    out = np.zeros((len(state), SIGNATURE_SIZE), np.int32)
    lengths = np.zeros(len(state), np.int32)
    _fast_signatures(state, cards, out, lengths)
    return out, lengths


def _compile_signatures() -> Any:
    from numba import njit

    from cardarena.locm.fast import layout as L

    @njit(cache=True)
    def fill(state: np.ndarray, cards: np.ndarray, out: np.ndarray, lengths: np.ndarray) -> None:
        for g in range(state.shape[0]):
            row = state[g]
            table = cards[g]
            n = 0
            for field in (L.PHASE, L.ACTIVE, L.TURN, L.WINNER, L.END_REASON):
                out[g, n] = row[field]
                n += 1
            for p in range(2):
                base = L.PLAYER_0 + p * L.PLAYER_SIZE
                for field in (L.P_HEALTH, L.P_MANA, L.P_MAX_MANA, L.P_BONUS_MANA_TURNS,
                              L.P_NEXT_TURN_DRAW, L.P_DRAW_SHOWN, L.P_HEALTH_LOST,
                              L.P_RUNES_LEFT, L.P_HAND_COUNT):  # fmt: skip
                    out[g, n] = row[base + field]
                    n += 1
                for k in range(row[base + L.P_HAND_COUNT]):
                    ident = row[base + L.P_HAND + k]
                    out[g, n] = ident
                    out[g, n + 1] = table[row[L.INSTANCE_CARD + ident], L.C_BASE_ID]
                    n += 2
                top = row[base + L.P_DECK_TOP]
                end = row[base + L.P_DECK_END]
                out[g, n] = end - top
                n += 1
                for k in range(top, end):
                    ident = row[base + L.P_DECK + k]
                    out[g, n] = ident
                    out[g, n + 1] = table[row[L.INSTANCE_CARD + ident], L.C_BASE_ID]
                    n += 2
                count = row[base + L.P_BOARD_COUNT]
                out[g, n] = count
                n += 1
                for k in range(count):
                    at = base + L.P_BOARD + k * L.CREATURE_SIZE
                    out[g, n] = row[at + L.K_ID]
                    out[g, n + 1] = table[row[at + L.K_CARD], L.C_BASE_ID]
                    for j, field in enumerate((L.K_LANE, L.K_ATTACK, L.K_DEFENSE, L.K_KEYWORDS,
                                               L.K_CAN_ATTACK, L.K_HAS_ATTACKED,
                                               L.K_SHOWS_EFFECTS)):  # fmt: skip
                        out[g, n + 2 + j] = row[at + field]
                    n += 9
                count = row[base + L.P_PERFORMED_COUNT]
                out[g, n] = count
                n += 1
                for k in range(count * L.PERFORMED_SIZE):
                    out[g, n] = row[base + L.P_PERFORMED + k]
                    n += 1
                count = row[base + L.P_CHOSEN_COUNT]
                out[g, n] = count
                n += 1
                for k in range(count):
                    out[g, n] = table[row[base + L.P_CHOSEN + k], L.C_BASE_ID]
                    n += 1
            lengths[g] = n

    return fill


_fast_signatures = _compile_signatures()


def random_differential_fast(version: str, seeds: list[int], rng_seed: int = 0) -> list[str]:
    """:func:`random_differential` comparing flat signatures after every action (the same
    fields; compare_states names the fields of a difference). For the full run."""
    encoder = Encoder(version)
    batch = Batch.new(version, seeds=seeds)
    references = [State.new(version, {"seed": seed}) for seed in seeds]
    failures: dict[int, str] = {}
    for g, reference in enumerate(references):
        differences = compare_states(reference, batch.to_state(g))
        if differences:
            failures[g] = f"game seed {seeds[g]} at the start: " + "; ".join(differences[:5])

    def check(steps: int) -> None:
        values, lengths = fast_signatures(batch.state, batch.cards)
        for g, reference in enumerate(references):
            if g in failures:
                continue
            if values[g, : lengths[g]].tolist() != signature(reference):
                differences = compare_states(reference, batch.to_state(g)) or ["signature"]
                failures[g] = f"game seed {seeds[g]} step {steps}: " + "; ".join(differences[:5])

    _step_randomly(batch, references, seeds, encoder, rng_seed, failures, check)
    return [failures[g] for g in sorted(failures)]


def battle_positions(version: str, games: int, seed: int) -> list[State]:
    """Battle positions of random games (about one decision in three), for the tests that
    compare a compiled function with its Python twin position by position."""
    rng = random.Random(seed)
    positions = []
    for game in range(games):
        state = State.new(version, {"seed": seed + game})
        while not state.is_terminal:
            if state.phase is Phase.BATTLE and rng.random() < 0.3:
                positions.append(state.clone())
            state.apply(rng.choice(state.legal_actions()))
    return positions
