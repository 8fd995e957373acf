"""The speed-ups give the same numbers as the plain code they replace.

The 1.5 card generator's random streams (numpy jump-ahead vs the pure LCG), the
bisection over exact stop bounds vs the official subtraction loop, and the envs'
cached observation rows and masks vs a fresh encoder on an independent copy, and
the random agent's and the envs' unchecked apply vs the checked one.
"""

from __future__ import annotations

import bisect
import math
import random
from typing import Any

import numpy as np
import pytest

from cardarena.locm.encoding import encoder as encoding
from cardarena.locm.encoding.encoder import Encoder
from cardarena.locm.engine.cards import (
    _MANA_TABLE,
    _TYPE_TABLE,
    generate_cards,
    java_double_streams,
)
from cardarena.locm.engine.javarandom import JavaRandom
from cardarena.locm.engine.state import Phase, State
from cardarena.locm.envs import LOCMBattleEnv, LOCMEnv
from cardarena.locm.envs.javastreams import double_streams


def test_numpy_streams_equal_java_random() -> None:
    rng = random.Random(11)
    seeds = [0, -1, 1, 2**31 - 1, -(2**31), 2**63 - 1, -(2**63)]
    seeds += [rng.randrange(-(2**63), 2**63) for _ in range(20)]
    for count in (0, 1, 7, 300, 1100):  # 1100: the jump tables grow
        assert double_streams(seeds, count) == java_double_streams(seeds, count)
    java = JavaRandom(seeds[-1])
    assert double_streams([seeds[-1]], 5)[0] == [java.next_double() for _ in range(5)]


@pytest.mark.parametrize("table", [_TYPE_TABLE, _MANA_TABLE], ids=["type", "mana"])
def test_float_table_bisection_equals_the_official_loop(table: Any) -> None:
    entries, bounds, total = table.entries, table.bounds, table.total
    # x = u * total around every bound (where rounding decides) and at random points.
    xs = [0.0, total, math.nextafter(total, 0.0)]
    for bound in bounds[:-1]:
        x = bound
        for _ in range(3):
            x = math.nextafter(x, -math.inf)
        for _ in range(7):
            xs.append(x)
            x = math.nextafter(x, math.inf)
    rng = random.Random(4)
    xs += [rng.random() * total for _ in range(20_000)]
    for x in xs:
        assert bisect.bisect_left(bounds, x) == table.loop_index(x), x
    for u in [rng.random() for _ in range(20_000)] + [0.0, 1.0 - 2**-53]:
        assert table.pick(u) == entries[table.loop_index(u * total)][0]


@pytest.mark.parametrize("count", [0, 1, 120, 400])
def test_generated_cards_same_with_either_stream(count: int) -> None:
    rng = random.Random(count)
    for _ in range(20):
        seed = rng.randrange(-(2**63), 2**63)
        assert generate_cards(seed, count, double_streams) == generate_cards(seed, count)


@pytest.mark.parametrize("version", ["1.0", "1.2", "1.5"])
def test_cached_observations_and_masks_match_a_fresh_encoder(version: str) -> None:
    """Row caches and the kept deck histogram never go stale along real games."""
    env: LOCMEnv = LOCMBattleEnv(version)
    fresh = Encoder(version)
    rng = np.random.default_rng(3)
    obs, info = env.reset(seed=9)
    for _ in range(600):
        state = env.state
        assert state is not None
        copy = state.clone()
        for cache in (encoding._CARD_BYTES, encoding._CREATURE_BYTES, encoding._CARD_ROWS):
            cache.clear()  # the fresh encoder computes every row anew
        assert np.array_equal(obs, fresh.observe(copy, env.seat))
        assert obs.dtype == np.float32 and obs.flags.writeable
        assert np.array_equal(info["action_mask"], fresh.mask(copy))
        legal = np.flatnonzero(info["action_mask"])
        # The actions step() applies unchecked are exactly the decoded legal indices.
        assert sorted(env._legal) == legal.tolist()
        assert all(env._legal[i] == fresh.decode(copy, int(i)) for i in legal)
        obs, _reward, terminated, _truncated, info = env.step(legal[rng.integers(len(legal))])
        if terminated:
            obs, info = env.reset()


@pytest.mark.parametrize("version", ["1.0", "1.2", "1.5"])
def test_random_action_and_unchecked_apply_equal_the_plain_path(version: str) -> None:
    """random_action draws what legal_actions()[int(u * n)] gives; _apply_legal of a
    legal action leaves the state apply() leaves, through deck building and battles."""
    for game in range(4):
        state = State.new(version, {"seed": 1000 + game})
        draws, plain_draws = random.Random(game).random, random.Random(game).random
        while not state.is_terminal:
            actions = state.legal_actions()
            action = state.random_action(draws)
            assert action == actions[int(plain_draws() * len(actions))]
            checked = state.clone()
            checked.apply(action)
            state._apply_legal(action)
            assert state.to_dict() == checked.to_dict()
            assert state.current_player == checked.current_player
        with pytest.raises(ValueError, match="ended"):
            state.random_action(draws)


def test_inlined_shuffle_equals_next_int_swaps() -> None:
    rng = random.Random(8)
    for _ in range(300):
        seed = rng.randrange(-(2**63), 2**63)
        size = rng.choice([0, 1, 2, 7, 16, 30, 64, 200])
        items = list(range(size))
        JavaRandom(seed).shuffle(items)
        plain = list(range(size))
        next_int = JavaRandom(seed).next_int
        for i in range(size, 1, -1):
            j = next_int(i)
            plain[i - 1], plain[j] = plain[j], plain[i - 1]
        assert items == plain


@pytest.mark.parametrize("version", ["1.0", "1.2", "1.5"])
def test_random_picks_equal_pick_by_pick(version: str) -> None:
    """State._random_picks (the envs' reset) = random_action + apply, pick after pick."""
    for seat in (None, 0, 1):  # None: both random; else that seat is left to decide
        looped, plain = State.new(version, {"seed": 5}), State.new(version, {"seed": 5})
        draws = [random.Random(1).random, random.Random(2).random]
        plain_draws = [random.Random(1).random, random.Random(2).random]
        given = tuple(None if player == seat else draws[player] for player in (0, 1))
        looped._random_picks(given)
        while not plain.is_terminal and plain.current_player != seat:
            if plain.phase is not Phase.DECK_BUILDING:
                break
            plain.apply(plain.random_action(plain_draws[plain.current_player]))
        assert looped.to_dict() == plain.to_dict()
        assert looped.phase is (Phase.BATTLE if seat is None else Phase.DECK_BUILDING)
        if seat is not None:
            assert looped.current_player == seat
