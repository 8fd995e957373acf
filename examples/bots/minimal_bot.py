#!/usr/bin/env python3
"""A minimal Legends of Code and Magic bot for versions 1.0, 1.2 and 1.5.

It reads every input block completely (docs/protocol.md explains each line),
recognises the version and the phase from the input itself, and answers with
legal actions only:

* draft (1.0, 1.2): PICK the cheapest creature of the three (PICK 0 if none);
* constructed (1.5): CHOOSE two copies of the 15 cheapest creatures;
* battle: attack with every creature that was on the board when the turn
  began (first through the Guards, then at the opponent), then summon the
  cheapest creatures that fit in mana and on the board.

Run it:  locm play -p1 'python3 examples/bots/minimal_bot.py' -p2 builtin:random --version 1.2
Set MINIMAL_BOT_LOG=FILE (and pass it: --bot-env MINIMAL_BOT_LOG) to append every input
block it receives to FILE.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

CREATURE = 0
GUARD, LETHAL, WARD = "G", "L", "W"
LANE1_AREA, LANE2_AREA = 1, 2


@dataclass
class Card:
    """One card line. ``area`` is 0 before 1.5 and ``lane`` is 0 in 1.0 (one board)."""

    base_id: int
    instance_id: int
    location: int  # 0 my hand, 1 my board, -1 opponent's board
    card_type: int  # 0 creature, 1 green, 2 red, 3 blue item
    cost: int
    attack: int
    defense: int
    abilities: str  # six characters "BCDGLW", '-' where absent
    my_health_change: int
    opponent_health_change: int
    card_draw: int
    area: int
    lane: int


@dataclass
class Turn:
    """One input block: both player lines, the opponent's last actions and the cards."""

    version: str
    me: list[int]  # health, mana, deck size, [next rune,] draw
    opponent: list[int]
    opponent_hand: int
    opponent_actions: list[str]
    cards: list[Card]


def read_turn(read_line) -> Turn | None:
    """Read one whole input block; None when the referee closed the input."""
    first = read_line()
    if not first:
        return None
    lines = [first]
    me = [int(x) for x in first.split()]
    lines.append(read_line())
    opponent = [int(x) for x in lines[-1].split()]
    lines.append(read_line())
    opponent_hand, action_count = (int(x) for x in lines[-1].split())
    opponent_actions = []
    for _ in range(action_count):
        lines.append(read_line())
        opponent_actions.append(lines[-1].strip())
    lines.append(read_line())
    cards: list[Card] = []
    fields = 0
    for _ in range(int(lines[-1])):
        lines.append(read_line())
        words = lines[-1].split()
        fields = len(words)
        numbers = [int(w) for i, w in enumerate(words) if i != 7]
        area = numbers[10] if fields == 13 else 0  # 1.5: ... cardDraw area lane
        lane = numbers[-1] if fields >= 12 else 0  # 1.0 has no lane field
        cards.append(Card(*numbers[:7], words[7], *numbers[7:10], area, lane))
    # 1.0 card lines have 11 fields, 1.2 12 and 1.5 13; a 1.5 player line has no rune.
    version = "1.5" if len(me) == 4 else "1.2" if fields == 12 else "1.0"
    log = os.environ.get("MINIMAL_BOT_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as out:
            out.write("\n".join(line.rstrip("\r\n") for line in lines) + "\n\n")
    return Turn(version, me, opponent, opponent_hand, opponent_actions, cards)


def draft(turn: Turn) -> str:
    """1.0/1.2 draft: three cards are offered, PICK 0, 1 or 2."""
    creatures = [i for i, c in enumerate(turn.cards) if c.card_type == CREATURE]
    if not creatures:
        return "PICK 0"
    best = min(creatures, key=lambda i: turn.cards[i].cost)
    return f"PICK {best} cheapest creature"


def construct(turn: Turn) -> str:
    """1.5 constructed: 120 cards are offered, choose 30 (at most 2 copies of each)."""
    creatures = sorted((c for c in turn.cards if c.card_type == CREATURE), key=lambda c: c.cost)
    chosen = [f"CHOOSE {c.base_id}" for c in creatures[:15] for _ in range(2)]
    if len(chosen) < 30:
        chosen.append("PASS")  # a lone PASS fills the deck up to 30 cards
    return ";".join(chosen)


def battle(turn: Turn) -> str:
    """Attack with every ready creature, then summon what fits; PASS if nothing to do."""
    lanes = 1 if turn.version == "1.0" else 2
    per_lane = 6 if lanes == 1 else 3
    mine = [c for c in turn.cards if c.location == 1]
    theirs = [c for c in turn.cards if c.location == -1]
    actions: list[str] = []

    # Every creature on my board at the start of my turn may attack once. A Guard
    # in the attacker's lane (1.0: anywhere) must be attacked before anything else,
    # so keep track of the Guards' defense and Ward to know when one is gone.
    guards = [c for c in theirs if GUARD in c.abilities]
    for attacker in mine:
        lane_guards = [g for g in guards if g.lane == attacker.lane]
        if not lane_guards:
            actions.append(f"ATTACK {attacker.instance_id} -1")
            continue
        guard = lane_guards[0]
        actions.append(f"ATTACK {attacker.instance_id} {guard.instance_id}")
        if attacker.attack == 0:
            continue
        if WARD in guard.abilities:
            guard.abilities = guard.abilities.replace(WARD, "-")
        elif attacker.attack >= guard.defense or LETHAL in attacker.abilities:
            guards.remove(guard)
        else:
            guard.defense -= attacker.attack

    # Summon the cheapest creatures while mana and room last. In 1.5 a Lane1 card
    # also puts a copy in the same lane and a Lane2 card one in the other lane,
    # when there is room: count those too, or a later summon would be illegal.
    mana = turn.me[1]
    count = [sum(1 for c in mine if c.lane == lane) for lane in range(lanes)]
    hand = sorted(
        (c for c in turn.cards if c.location == 0 and c.card_type == CREATURE), key=lambda c: c.cost
    )
    for card in hand:
        free = [lane for lane in range(lanes) if count[lane] < per_lane]
        if card.cost > mana or not free:
            continue
        lane = free[0]
        mana -= card.cost
        count[lane] += 1
        if card.area == LANE1_AREA and count[lane] < per_lane:
            count[lane] += 1
        elif card.area == LANE2_AREA and lanes == 2 and count[1 - lane] < per_lane:
            count[1 - lane] += 1
        summon = f"SUMMON {card.instance_id}"
        actions.append(summon if turn.version == "1.0" else f"{summon} {lane}")
    return ";".join(actions) or "PASS"


def main() -> None:
    """Answer one line per input block until the referee closes stdin."""
    while (turn := read_turn(sys.stdin.readline)) is not None:
        building = all(c.instance_id == -1 for c in turn.cards) and turn.cards
        if building and turn.version == "1.5":
            answer = construct(turn)
        elif building:
            answer = draft(turn)
        else:
            answer = battle(turn)
        print(answer, flush=True)


if __name__ == "__main__":
    main()
