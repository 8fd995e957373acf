"""``locm bot NAME``: a built-in agent as a standalone bot speaking the official protocol.

It reads the referee's input on stdin and answers one line per turn on stdout,
so it plays in ``locm play``, in the official referee jar and on CodinGame. The agent
is a built-in name or a ``python:MODULE:FACTORY`` reference (:mod:`.reference`).
Deck building uses the agent's ``deck_builder`` (a learned one, :mod:`.learned_v3`) or
its ``deck_policy`` (the card scores of :mod:`.cardscore`; the default one when the
agent has neither) on the cards it is shown; battle
turns rebuild a :class:`~cardarena.locm.engine.state.State` from the input text
(:meth:`State.from_input`, hidden cards as placeholders) and let the agent play
the whole turn on it. The version is recognised from the input (1.5 player
lines have 4 numbers, 1.0/1.2 ones 5; 1.0 card lines 11 fields, 1.2 ones 12).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from typing import TextIO

from ...argtypes import positive_number
from ..agents import make_agent
from ..agents.cardscore import DEFAULT_DECK, DeckPolicy, constructed_deck, draft_pick
from ..engine.cards import Card
from ..engine.rules import VERSIONS, ruleset
from ..engine.state import PASS, ActionType, Phase, State
from ..engine.text import detect_version, parse_card_line


class InputEnded(EOFError):
    """The referee closed our stdin: the game is over."""


class BadInput(ValueError):
    """What came on stdin is not a referee's turn input (one line says what and where)."""


def _read_block(readline: Callable[[], str]) -> list[str]:
    """One turn's input lines (players, opponent actions, cards), as the referee sends them.

    The end of the input before a turn is the end of the game (:class:`InputEnded`); an
    end in the middle of a turn, or lines that are not a turn's, are :class:`BadInput`."""
    lines: list[str] = []

    def line() -> str:
        text = readline()
        if not text:
            if not lines:
                raise InputEnded
            raise BadInput(f"the input ended in the middle of a turn, after {len(lines)} "
                           f"line(s) (the last: {lines[-1]!r})")  # fmt: skip
        lines.append(text.rstrip("\r\n"))
        return lines[-1]

    def number(text: str, field: int, what: str) -> int:
        try:
            return int(text.split()[field])
        except (IndexError, ValueError):
            raise BadInput(f"not a turn's input: line {len(lines)} should give {what}, got "
                           f"{text[:80]!r}") from None  # fmt: skip

    number(line(), 0, "the player's health first")
    line()
    actions = number(line(), 1, "the opponent's hand size and action count")
    for _ in range(actions):
        line()
    count = number(line(), 0, "the number of cards")
    for _ in range(count):
        line()
    return lines


class BotSession:
    """One game seen from one bot process: its deck-building memory and turn counter."""

    def __init__(self, agent_name: str, seed: int | None, version: str | None, scale: float):
        self.agent = make_agent(agent_name.removeprefix("builtin:"), seed)
        if hasattr(self.agent, "time_scale"):
            self.agent.time_scale = scale  # type: ignore[attr-defined]
        self.version = version
        self.policy: DeckPolicy = getattr(self.agent, "deck_policy", DEFAULT_DECK)
        self.builder = getattr(self.agent, "deck_builder", None)
        """A learned deck builder (``pick`` and ``deck``), used instead of the policy."""
        self.chosen: list[Card] = []
        self.draft: list[tuple[Card, ...]] = []
        self.pool: tuple[Card, ...] = ()
        self.player: int | None = None
        self.battle_turns = 0
        self.seen: dict[int, int] = {}
        """Instance id -> base id of every own card seen in hand (drawn from the deck)."""

    def answer(self, lines: list[str]) -> str:
        if self.version is None:
            self.version = detect_version(lines)
        rules = ruleset(self.version)
        cards_from = 4 + int(lines[2].split()[1])
        card_lines = lines[cards_from:]
        my_max_mana = int(lines[0].split()[1])
        if my_max_mana == 0:  # deck building: nobody has mana yet
            prepare = getattr(self.agent, "prepare", None)
            if prepare is not None and not (self.draft or self.pool):
                # The first deck-building turn is the longest (1 s, 4 s in 1.5): an agent
                # loads there what this version needs (the rollout search: numba).
                prepare(self.version)
            offered = [parse_card_line(line, rules)[0].card for line in card_lines]
            if rules.draft:
                if self.builder is not None:
                    index = self.builder.pick(offered, self.chosen, rules)
                else:
                    index = draft_pick(offered, self.chosen, rules, self.policy)
                self.draft.append(tuple(offered))
                self.chosen.append(offered[index])
                return f"PICK {index}"
            self.pool = tuple(offered)
            if self.builder is not None:
                deck = self.builder.deck(self.pool, rules)
            else:
                deck = constructed_deck(self.pool, rules, self.policy)
            self.chosen = list(deck)
            return ";".join(f"CHOOSE {card.base_id}" for card in deck)
        if self.player is None:
            # Player 0 starts its first turn with 1 max mana, player 1 with 2 (its bonus).
            self.player = 0 if my_max_mana == 1 else 1
        text = "\n".join(lines) + "\n"
        state = State.from_input(self.version, text, self.player, self.battle_turns)
        if getattr(self.agent, "reads_own_deck", False):
            state = self._with_own_deck(state, text)
        self.battle_turns += 1
        self._share_public_cards()
        return play_turn(self.agent, state, self.player)

    def _with_own_deck(self, state: State, text: str) -> State:
        """The state with the cards not yet drawn in the deck (in no particular order).

        A bot knows the deck it built; a policy that reads the environment observation
        (its ``my_deck`` counts) needs them. Drawn = every card instance seen in hand.
        """
        assert self.version is not None and self.player is not None
        for inst in state.players[self.player].hand:
            self.seen.setdefault(inst.id, inst.card.base_id)
        remaining = Counter(self.seen.values())
        deck: list[Card] = []
        for card in self.chosen:
            if remaining[card.base_id] > 0:
                remaining[card.base_id] -= 1
            else:
                deck.append(card)
        if len(deck) != len(state.players[self.player].deck):  # a card burnt unseen
            return state
        return State.from_input(self.version, text, self.player, self.battle_turns, deck)

    def _share_public_cards(self) -> None:
        """What the bot saw in deck building is public: the search determinises from it."""
        if hasattr(self.agent, "public_pool"):
            self.agent.public_pool = self.pool  # type: ignore[attr-defined]
            self.agent.public_draft = tuple(self.draft)  # type: ignore[attr-defined]


def play_turn(agent: object, state: State, player: int) -> str:
    """The agent's whole turn on ``state`` as one ``;``-separated line."""
    out: list[str] = []
    act = agent.act  # type: ignore[attr-defined]
    while state.phase == Phase.BATTLE and state.active == player:
        action = act(state)
        if action.type == ActionType.PASS:
            break
        out.append(str(action))
        state.apply(action)
    return ";".join(out) if out else str(PASS)


def run_bot(
    agent_name: str,
    seed: int | None = None,
    version: str | None = None,
    time_scale: float = 1.0,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
) -> int:
    """Answer the referee until stdin closes; 0 when the game is over."""
    source = stdin or sys.stdin
    sink = stdout or sys.stdout
    session = BotSession(agent_name, seed, version, time_scale)
    while True:
        try:
            lines = _read_block(source.readline)
        except InputEnded:
            return 0
        try:
            answer = session.answer(lines)
        except (ValueError, IndexError, KeyError) as error:
            why = f"{type(error).__name__}: {error}"
            raise BadInput(f"cannot answer this turn's input ({why}); it starts "
                           f"{lines[0][:80]!r}") from None  # fmt: skip
        sink.write(answer + "\n")
        sink.flush()


def _cmd_bot(args: argparse.Namespace) -> int:
    return run_bot(args.name, args.seed, args.version, args.time_scale)


def _cmd_agents(args: argparse.Namespace) -> int:
    from ..agents import AGENT_DESCRIPTIONS, AGENT_VERSIONS

    width = max(map(len, AGENT_DESCRIPTIONS))
    for name, text in AGENT_DESCRIPTIONS.items():
        versions = AGENT_VERSIONS.get(name, VERSIONS)
        print(f"{name:<{width}}  {'/'.join(versions):<11}  {text}")
    return 0


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``agents`` and ``bot`` to the ``locm`` command line."""
    from ..agents import BUILTIN_AGENTS

    agents = commands.add_parser(
        "agents",
        help="list the built-in agents, one line each (builtin:NAME, locm bot NAME)",
        description="The built-in agents: name, the LOCM versions it plays, what it does. "
        "Versioned names (search-v1) keep playing as published; plain names are the strongest.",
    )
    agents.set_defaults(run=_cmd_agents)
    bot = commands.add_parser(
        "bot",
        help="run a built-in agent (or python: reference) as a bot process (stdin/stdout, the "
        "official protocol)",
        description="Plays one game on stdin/stdout like any bot: use it in locm play, in the "
        "official referee or on CodinGame. The LOCM version is recognised from the input.",
    )
    bot.add_argument(
        "name", metavar="AGENT",
        help=f"a built-in agent ({', '.join(sorted(BUILTIN_AGENTS))}) or python:MODULE:FACTORY",
    )  # fmt: skip
    bot.add_argument("--seed", type=int, help="the agent's seed (default: random)")
    bot.add_argument("--version", choices=VERSIONS, help="default: recognised from the input")
    bot.add_argument(
        "--time-scale", type=positive_number, default=1.0, metavar="X",
        help="the referee's time scale: a search agent budgets X times the official limits",
    )  # fmt: skip
    bot.set_defaults(run=_cmd_bot)
