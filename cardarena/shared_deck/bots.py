"""Built-in bots: ``random`` (any legal-looking action) and ``greedy`` (block well, build mana,
play the best card it can afford, attack with the rest).

They use only the public client, exactly as an outside bot would, and play every match of
theirs on every turn. A turn may end while a bot is thinking: the server then answers
NotYourTurn, which a bot takes as the end of its turn in that match.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from .client import AsyncClient, Reconnect, Reconnected, ServerError
from .errors import ErrorCode
from .protocol import Board, BoardCreature
from .rules import (
    BUFF,
    CREATURE,
    DAMAGE,
    DEACTIVATE,
    HEAL,
    TAKE,
    TARGET_BOARD,
    TARGET_OPPONENT,
    TARGET_SELF,
    Card,
)

log = logging.getLogger("cardarena.shared_deck.bots")

RANDOM_ACTIONS_PER_TURN = 8
_TURN_OVER = (ErrorCode.NotYourTurn, ErrorCode.GameHasEnded)


@dataclass(frozen=True, slots=True)
class View:
    """What a bot sees of one match on its turn."""

    hand: tuple[Card, ...]
    board: Board
    attackers: list[Card]
    mana: int
    draws_left: int
    burns_left: int
    hand_limit: int
    deck_size: int
    my_hp: int
    opponent_hp: int
    init_hp: int

    @property
    def my_active(self) -> list[Card]:
        return [creature.card for creature in self.board.mine if creature.active]

    @property
    def all_creatures(self) -> list[BoardCreature]:
        return [*self.board.mine, *self.board.opponent]


async def look(client: AsyncClient, match_id: int) -> View:
    """Ask the server for everything a strategy needs."""
    hands = await client.get_hands(match_id)
    board = await client.get_board(match_id)
    attackers = await client.get_attackers(match_id)
    mana = await client.get_current_mana(match_id)
    limits = await client.get_card_limits(match_id)
    hp = await client.get_hp(match_id)
    deck = await client.get_deck(match_id)
    return View(
        hands.mine,
        board,
        attackers,
        mana,
        limits.draws_left,
        limits.burns_left,
        limits.hand_limit,
        len(deck),
        hp.mine,
        hp.opponent,
        hp.initial,
    )


Strategy = Callable[[AsyncClient, int, random.Random], Awaitable[None]]


# ----------------------------------------------------------------------- random
def _spell_targets(card: Card, view: View) -> list[int]:
    creatures = [creature.card.id for creature in view.all_creatures]
    if card.type == CREATURE:
        return [TARGET_BOARD]
    if card.type == TAKE:
        return [TARGET_SELF]
    if card.type in (BUFF, DEACTIVATE):
        return creatures
    return [TARGET_SELF, TARGET_OPPONENT, *creatures]


def random_actions(view: View) -> list[tuple[str, tuple[int, ...]]]:
    """Every action that looks allowed from the view (the server has the last word)."""
    actions: list[tuple[str, tuple[int, ...]]] = []
    active = view.my_active
    for attacker in view.attackers:
        actions.extend(("BLOCK", (attacker.id, blocker.id)) for blocker in active)
    if view.draws_left and view.deck_size and len(view.hand) < view.hand_limit:
        actions.append(("DRAW_CARD", ()))
    if view.burns_left and view.deck_size:
        actions.append(("BURN_CARD", ()))
    for creature in active:
        actions.append(("ADD_MANA", (creature.id,)))
        actions.append(("ATTACK", (creature.id,)))
    for card in view.hand:
        if card.cost <= view.mana:
            targets = _spell_targets(card, view)
            actions.extend(("PLAY_CARD", (card.id, target)) for target in targets)
    if view.hand and not actions:
        actions.append(("DISCARD_CARD", (view.hand[0].id,)))
    return actions


async def play_random(client: AsyncClient, match_id: int, rng: random.Random) -> None:
    """Up to a few random actions; refused ones are simply skipped."""
    for _ in range(RANDOM_ACTIONS_PER_TURN):
        actions = random_actions(await look(client, match_id))
        if not actions:
            return
        command, args = rng.choice(actions)
        try:
            await client.request(command, match_id, *args)
        except ServerError as error:
            if error.code in _TURN_OVER:
                return


# ----------------------------------------------------------------------- greedy
def _value(card: Card, view: View) -> tuple[int, int] | None:
    """How much the greedy bot wants to play ``card`` now, and on which target (None: not)."""
    opponents, mine = view.board.opponent, view.board.mine
    if card.type == CREATURE:
        return card.attack + card.hp + card.mana, TARGET_BOARD
    if card.type == DAMAGE:
        killable = [c.card for c in opponents if c.card.hp <= card.attack]
        if card.attack >= view.opponent_hp or not killable:
            return 2 * card.attack, TARGET_OPPONENT
        best = max(killable, key=lambda c: c.attack + c.hp)
        return best.attack + best.hp + card.attack, best.id
    if card.type == HEAL:
        missing = view.init_hp - view.my_hp
        return (min(missing, card.hp), TARGET_SELF) if missing > 0 else None
    if card.type == BUFF and mine:
        best = max(mine, key=lambda c: c.card.attack + c.card.hp)
        return card.attack + card.hp, best.card.id
    if card.type == DEACTIVATE:
        active = [c.card for c in opponents if c.active]
        if active:
            best = max(active, key=lambda c: c.attack)
            return best.attack, best.id
        return None
    if card.type == TAKE and view.deck_size and len(view.hand) < view.hand_limit:
        return card.attack, TARGET_SELF
    return None


async def _block_well(client: AsyncClient, match_id: int, view: View) -> None:
    """Block each attacker with a creature that survives it, preferring one that kills it."""
    blockers = sorted(view.my_active, key=lambda c: c.attack)
    for attacker in sorted(view.attackers, key=lambda c: -c.attack):
        survivors = [b for b in blockers if b.hp > attacker.attack]
        killers = [b for b in survivors if b.attack >= attacker.hp]
        choice = (killers or survivors or [None])[0]
        if choice is None:
            continue
        blockers.remove(choice)
        await client.block(match_id, attacker.id, choice.id)
    await client.finish_block(match_id)


async def play_greedy(client: AsyncClient, match_id: int, rng: random.Random) -> None:
    """Block, draw, tap the weakest creatures for the best affordable card, attack."""
    try:
        view = await look(client, match_id)
        if view.attackers:
            await _block_well(client, match_id, view)
        for _ in range(view.draws_left):
            if len(view.hand) >= view.hand_limit or not view.deck_size:
                break
            await client.draw_card(match_id)
            view = await look(client, match_id)
        while True:
            view = await look(client, match_id)
            wanted = []
            for card in view.hand:
                choice = _value(card, view)
                if choice is not None:
                    wanted.append((choice[0], card, choice[1]))
            wanted.sort(key=lambda item: (-item[0], item[1].cost))
            affordable = [item for item in wanted if item[1].cost <= view.mana]
            if affordable:
                _, card, target = affordable[0]
                await client.play_card(match_id, card.id, target)
                continue
            tappable = sorted(
                (c for c in view.my_active if c.mana > 0), key=lambda c: (c.attack, -c.mana)
            )
            potential = view.mana + sum(c.mana for c in tappable)
            if not wanted or not tappable or min(c.cost for _, c, _ in wanted) > potential:
                break
            await client.add_mana(match_id, tappable[0].id)
        for creature in view.my_active:
            if creature.attack > 0:
                await client.attack(match_id, creature.id)
    except ServerError as error:
        if error.code not in _TURN_OVER:
            raise


STRATEGIES: dict[str, Strategy] = {"random": play_random, "greedy": play_greedy}


async def run_bot(
    host: str,
    port: int,
    name: str,
    secret: str,
    strategy: str,
    seed: int | None = None,
    turns: int | None = None,
    reconnect: Reconnect | None = None,
) -> None:
    """Log in and play every own match on every turn, for ``turns`` turns or for ever.

    With ``reconnect``, a lost connection is re-established and play goes on; otherwise, or
    when the policy gives up or the login is taken over, the client's exception propagates.
    """
    play = STRATEGIES[strategy]
    rng = random.Random(seed)
    client = await AsyncClient.connect(host, port, name, secret, reconnect)
    log.info("%s: logged in to %s:%d, playing %s", name, host, port, strategy)
    played = 0
    try:
        while turns is None or played < turns:
            try:
                for match_id in await client.get_my_matches():
                    try:  # after a reconnection, a match id may be gone (954): skip it
                        if (await client.get_turn_info(match_id)).my_turn:
                            await play(client, match_id, rng)
                    except ServerError as error:
                        log.info("%s, match %d: %s", name, match_id, error)
                await client.wait()
            except Reconnected as error:
                log.warning("%s: %s", name, error)
                continue  # look at every match again; the turn count goes on from here
            played += 1
    finally:
        await client.close()
