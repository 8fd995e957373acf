"""The compiled loops of the vector environment: a whole step of N games in one call.

One call applies the learner's action in every game (or restarts a game that ended,
its draws made from the env's generator in compiled code: :mod:`.pcg64`), plays the
compiled policies' moves (``random``, ``greedy``) until each game waits for the learner,
for a callable policy, or has ended, then writes the masks, the observations, the
rewards and the info columns. The games are independent: the env runs disjoint slices of
the batch on its threads (every loop releases the GIL), and the Python side of a step
stays a handful of calls whatever N is, with no Python per game.

Roles: 0 the learner, 1 the opponent, 2 the learner's deck building by a policy,
3 the learner's battle by a policy. ``roles[g]`` says who must decide next in game g
when that is a callable (0: nobody, the learner decides or the game has ended).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import require_numba

require_numba()

from numba import njit  # noqa: E402 (after the one-line install hint)

from .generators import start_draft_row, start_pool_row  # noqa: E402
from .kernels import (  # noqa: E402
    MAX_LEGAL,
    apply_legal,
    current_player,
    legal_actions,
    pool_choice,
    pool_choice_count,
)
from .layout import (  # noqa: E402
    CREATURE_SIZE,
    K_ATTACK,
    K_DEFENSE,
    P_BOARD,
    P_BOARD_COUNT,
    P_HEALTH,
    PHASE,
    PLAYER_0,
    PLAYER_SIZE,
    STATE_SIZE,
    TURN,
    WINNER,
)
from .observation import observe_game  # noqa: E402
from .pcg64 import below_2_63, coin, full_range_int64  # noqa: E402
from .playouts import GREEDY_WEIGHTS, greedy_action  # noqa: E402
from .playouts import _next_uniform as next_uniform  # noqa: E402

POLICY_RANDOM = 0
POLICY_GREEDY = 1
POLICY_CALLABLE = 2
ROLE_LEARNER = 0
ROLE_OPPONENT = 1
ROLE_DECK = 2
ROLE_BATTLE = 3
SHAPING_HEALTH = 0
SHAPING_BOARD = 1
"""Shaping terms in the order of :data:`..envs.gym_env.SHAPING_TERMS`."""
_DECK_BUILDING = 0
_ENDED = 2
LEGAL_BUFFER = MAX_LEGAL
"""Entries of the scratch array of legal indexes (``legal`` below)."""
INFO_PHASE, INFO_TURN, INFO_WINNER = range(3)
INFO_COLUMNS = 3
"""``info[g]``: the game's phase, turn and winner when its learner was last to decide."""
SEAT_RANDOM = -1
"""``seat_option`` of a restart: the seat is drawn (``integers(2)``)."""


@njit(cache=True, nogil=True, inline="always")
def _potential(game: np.ndarray, seat: int, terms: np.ndarray, weights: np.ndarray) -> float:
    """Σ weight × (mine − opponent's) / 30 over the shaping terms, in the single env's order."""
    me = PLAYER_0 + seat * PLAYER_SIZE
    opp = PLAYER_0 + (1 - seat) * PLAYER_SIZE
    total = 0.0
    for k in range(terms.shape[0]):
        if terms[k] == SHAPING_HEALTH:
            difference = game[me + P_HEALTH] - game[opp + P_HEALTH]
        else:
            difference = 0
            for c in range(game[me + P_BOARD_COUNT]):
                at = me + P_BOARD + c * CREATURE_SIZE
                difference += game[at + K_ATTACK] + game[at + K_DEFENSE]
            for c in range(game[opp + P_BOARD_COUNT]):
                at = opp + P_BOARD + c * CREATURE_SIZE
                difference -= game[at + K_ATTACK] + game[at + K_DEFENSE]
        total += weights[k] * difference / 30.0
    return total


@njit(cache=True, nogil=True, inline="always")
def _finish(
    g: int,
    game: np.ndarray,
    cards: np.ndarray,
    seat: int,
    fresh: bool,
    observations: np.ndarray,
    offers_dirty: np.ndarray,
    terms: np.ndarray,
    weights: np.ndarray,
    potentials: np.ndarray,
    rewards: np.ndarray,
    terminations: np.ndarray,
    info: np.ndarray,
) -> None:
    """The learner's observation, its info columns (phase, turn, winner), and its reward
    and termination unless the game is new."""
    observe_game(game, cards, seat, observations[g], offers_dirty[g])
    info[g, INFO_PHASE] = game[PHASE]
    info[g, INFO_TURN] = game[TURN]
    info[g, INFO_WINNER] = game[WINNER]
    offers_dirty[g] = game[PHASE] == _DECK_BUILDING
    potential = _potential(game, seat, terms, weights) if terms.shape[0] else 0.0
    if fresh:
        potentials[g] = potential
        return
    reward = potential - potentials[g] if terms.shape[0] else 0.0
    potentials[g] = potential
    ended = game[PHASE] == _ENDED
    if ended:
        winner = game[WINNER]
        if winner >= 0:
            reward += 1.0 if winner == seat else -1.0
    rewards[g] = reward
    terminations[g] = ended


@njit(cache=True, nogil=True)
def _scratch_space() -> tuple[np.ndarray, np.ndarray]:
    """A call's scratch arrays, shared by the games it steps (one after the other): the
    legal indexes, and a row greedy tries its actions on. Per game, they would be 4.7 KB
    more of memory for each game's step to pull in from far caches."""
    return np.empty(LEGAL_BUFFER, np.int32), np.empty(STATE_SIZE, np.int32)


START, STEP, RESTART, CONTINUE = range(4)
"""What :func:`play_games` does to each listed game before the policies play: nothing
(new games from a reset), the learner's action or the restart of a game that ended
(an env step), the restart only (a same-step autoreset), a callable's action."""


def play_games_for(pool: bool, greedy: bool) -> Callable[..., None]:
    """The compiled :func:`play_games` of a version with a 120-card pool (1.5) or a draft,
    with or without the compiled greedy policy: each is compiled on first use, and only
    its own code (a draft env never compiles the 1.5 card generator, an env without a
    greedy policy never compiles greedy's search)."""
    key = (bool(pool), bool(greedy))
    compiled = _PLAY_GAMES.get(key)
    if compiled is None:
        compiled = _PLAY_GAMES[key] = _compile_play_games(*key)
    return compiled


_PLAY_GAMES: dict[tuple[bool, bool], Callable[..., None]] = {}


def _compile_play_games(pool: bool, greedy: bool) -> Callable[..., None]:
    """:func:`play_games` for one (pool, greedy): numba prunes the branches on these two
    closure constants before it compiles, and caches each pair's machine code apart."""

    @njit(cache=True, nogil=True)
    def play_games(
        kind: int,
        state: np.ndarray,
        cards: np.ndarray,
        games: np.ndarray,
        actions: np.ndarray,
        restart: np.ndarray,
        template: np.ndarray,
        allowed_rows: np.ndarray,
        seat_option: int,
        generators: np.ndarray,
        game_seeds: np.ndarray,
        fresh: np.ndarray,
        seats: np.ndarray,
        learning: int,
        policies: np.ndarray,
        rng: np.ndarray,
        masks: np.ndarray,
        roles: np.ndarray,
        observations: np.ndarray,
        offers_dirty: np.ndarray,
        terms: np.ndarray,
        weights: np.ndarray,
        potentials: np.ndarray,
        rewards: np.ndarray,
        terminations: np.ndarray,
        info: np.ndarray,
    ) -> None:
        """Games ``games`` (the env runs disjoint lists on its threads; nothing here holds
        the GIL) up to their learner's next decision, after what ``kind`` says
        (:data:`START`, :data:`STEP`, :data:`RESTART`, :data:`CONTINUE`).

        A restarted game (``restart[g]``: it ended last step) starts anew, drawn from env
        g's generator as the single env's reset draws without a seed or options: the game
        seed (a full-range long), the seat if it is random, and each role's policy seed
        (below 2**63; drawn even if unused); in a step with reward 0, in a same-step
        autoreset with the last game's reward left as it is. ``actions[g]`` is game g's
        action in a step, ``actions[k]`` that of ``games[k]`` in a continuation.

        Then the compiled policies play until the learner or a callable decides or the
        game ends; ``masks[g]`` is then the legal actions of the player to decide (all
        False once ended) and ``roles[g]`` the role of a callable that must decide, else
        0. The compiled greedy builds decks by random picks, as in playouts.

        One compiled function for the four kinds, its helpers written in it, with one
        call of each rules kernel (``apply_legal`` is inlined where it is called: three
        calls were three copies of the rules to compile): each compiled entry point
        carries its own machine code of the whole engine, so every separate one, or
        copy, would add to the first use's compile time."""
        legal, scratch = _scratch_space()
        for k in range(games.shape[0]):
            g = games[k]
            game = state[g]
            table = cards[g]
            new_game = kind == START
            pending = False  # an action to apply first (the only apply_legal: see below)
            index = np.int64(0)
            if kind == RESTART or (kind == STEP and restart[g]):
                if kind == RESTART and not restart[g]:
                    continue
                generator = generators[g]
                seed = full_range_int64(generator)
                seats[g] = coin(generator) if seat_option == SEAT_RANDOM else seat_option
                for role in range(1, 4):
                    rng[g, role] = below_2_63(generator)
                game_seeds[g] = seed
                if pool:
                    start_pool_row(game, table, seed, template)
                else:
                    start_draft_row(game, table, seed, template, allowed_rows)
                fresh[g] = True
                new_game = True
                if kind == STEP:
                    rewards[g] = 0.0
                    terminations[g] = False
            elif kind == STEP:
                pending, index = True, actions[g]
            elif kind == CONTINUE:
                pending, index = True, actions[k]
                new_game = fresh[g]
            seat = seats[g]
            mask = masks[g]
            game_rng = rng[g]
            while True:
                if pending:
                    apply_legal(game, table, index)
                    pending = False
                phase = game[PHASE]
                if phase == _ENDED:
                    mask[:] = False
                    role = ROLE_LEARNER
                    break
                player = current_player(game)
                if player != seat:
                    role = ROLE_OPPONENT
                elif learning < 0 or phase == learning:
                    role = ROLE_LEARNER
                elif phase == _DECK_BUILDING:
                    role = ROLE_DECK
                else:
                    role = ROLE_BATTLE
                policy = policies[role]
                compiled = role != ROLE_LEARNER and policy != POLICY_CALLABLE
                if pool and compiled and phase == _DECK_BUILDING:
                    # A random pool choice without listing the 120 cards (the same draw).
                    count = pool_choice_count(game)
                    pending, index = True, pool_choice(game, next_uniform(game_rng, role, count))
                    continue
                count = legal_actions(game, table, legal)
                if not compiled:
                    mask[:] = False
                    for j in range(count):
                        mask[legal[j]] = True
                    break
                if greedy and policy == POLICY_GREEDY and phase != _DECK_BUILDING:
                    index = greedy_action(game, table, legal, count, GREEDY_WEIGHTS, scratch)
                else:
                    index = np.int64(legal[next_uniform(game_rng, role, count)])
                pending = True
            roles[g] = role
            if role == ROLE_LEARNER:
                _finish(g, game, table, seat, new_game, observations, offers_dirty, terms,
                        weights, potentials, rewards, terminations, info)  # fmt: skip

    return play_games


@njit(cache=True, nogil=True)
def players_to_act(state: np.ndarray, games: np.ndarray) -> np.ndarray:
    """The player to decide in each listed game."""
    players = np.empty(games.shape[0], np.int32)
    for k in range(games.shape[0]):
        players[k] = current_player(state[games[k]])
    return players


@njit(cache=True, nogil=True)
def observe_games(
    state: np.ndarray, cards: np.ndarray, games: np.ndarray, players: np.ndarray, out: np.ndarray
) -> None:
    """``out[k]``: game ``games[k]`` as ``players[k]`` sees it (the callables' input)."""
    for k in range(games.shape[0]):
        observe_game(state[games[k]], cards[games[k]], players[k], out[k], True)


@njit(cache=True, nogil=True)
def sample_legal(masks: np.ndarray, uniforms: np.ndarray, out: np.ndarray, first: int = 0,
                 stop: int = -1) -> None:  # fmt: skip
    """``out[g]``: the legal index number ``int(uniforms[g] * count)`` of row ``g`` of
    ``masks`` (uniform over the legal actions), 0 for a row without any; rows
    ``first``..``stop - 1`` (-1: to the end), so that threads can share the batch."""
    for g in range(first, masks.shape[0] if stop < 0 else stop):
        count = 0
        for index in range(masks.shape[1]):
            count += masks[g, index]
        k = int(uniforms[g] * count)
        out[g] = 0
        for index in range(masks.shape[1]):
            if masks[g, index]:
                if k == 0:
                    out[g] = index
                    break
                k -= 1


@njit(cache=True, nogil=True)
def count_illegal(masks: np.ndarray, actions: np.ndarray, skip: np.ndarray) -> int:
    """How many games but the ``skip`` ones have an action outside their mask."""
    bad = 0
    for g in range(masks.shape[0]):
        if not skip[g]:
            action = actions[g]
            if action < 0 or action >= masks.shape[1] or not masks[g, action]:
                bad += 1
    return bad
