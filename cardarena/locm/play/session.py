"""One game with a person in it: the referee's game loop, a human seat, and what a page shows.

The human seat is a :class:`~cardarena.locm.referee.players.Player` like the bots: the
referee sends it its request and waits for its one answer line, so the game, its time
quota, its errors and its GameResult log are exactly those of ``locm play``. The person
builds that line move by move on a clone of the referee's state: every move offered is one
of the engine's ``legal_actions`` of that clone, and once the turn is ended (``PASS``), the
draft card picked or the 30th card chosen, the moves go to the referee as one line.

Everything runs on one asyncio event loop (the referee's and the web server's): the page's
requests reach :meth:`GameSession.move`, which checks the move against the decision the page
was shown (its ``id``), so a double click or a second tab changes nothing. A page only ever
gets :meth:`GameSession.view`: the public board, the hand of the seat it plays (none for a
spectator), never the bot's hand or deck.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..agents import make_agent
from ..engine.cards import Card
from ..engine.params import GameParameters
from ..engine.rules import DECK_SIZE
from ..engine.state import Action, ActionType, Phase, State
from ..referee.cgroups import DEFAULT_MEMORY_MB
from ..referee.game_loop import GameOutcome, TimeControl, agent_seed, make_player, run_game
from ..referee.gameresult import end_cause
from ..referee.players import InProcessPlayer, Player
from ..referee.protocol_game import ProtocolGame
from ..referee.replay import readable_tokens
from ..viewer.frames import battle_frame, card_row
from . import HUMAN

AUTO_DECK_AGENT = "greedy"
"""The built-in agent that builds a deck when the person asks for one."""
VIEW_FORMAT = "cardarena.locm.play/1"
_DECK_LINE = re.compile(r"Player \$[01] chose card")


class MoveRefused(Exception):
    """A move that is not legal, not the player's, or made on an old view: nothing changed."""


@dataclass
class Decision:
    """What one human seat is asked now, and the moves made so far on its clone."""

    seat: int
    kind: str
    """``draft`` (1.0/1.2 pick), ``construct`` (1.5 deck) or ``battle`` (a turn)."""
    base: State
    work: State
    answer: asyncio.Future[str | None]
    deadline: float | None
    moves: list[str] = field(default_factory=list)
    id: int = 0


def _construct_state(base: State, seat: int, moves: Sequence[str]) -> State:
    """1.5 deck building on a clone: the seat's choices so far; the other seat's turns are
    filled with placeholder choices (its real choices are never shown)."""
    work = base.clone()
    for text in moves:
        _fill_other(work, seat)
        work.apply(Action(ActionType.CHOOSE, int(text.split()[1])))
    _fill_other(work, seat)
    return work


def _fill_other(work: State, seat: int) -> None:
    while work.phase == Phase.DECK_BUILDING and work.current_player != seat:
        work.apply(work.legal_actions()[0])


class HumanSeat:
    """A person's seat, behind the referee's player interface."""

    def __init__(self, session: GameSession, seat: int, name: str = HUMAN) -> None:
        self.session = session
        self.seat = seat
        self.name = name

    async def start(self) -> None:
        return None

    async def send(self, text: str, state: State, player: int) -> None:
        await self.session.open_decision(self.seat, state)

    async def receive(self, timeout_s: float | None) -> str | None:
        # The official limit (timeout_s) is a bot's: a person has --human-time, or none.
        return await self.session.await_answer(self.seat)

    def take_stderr(self) -> str | None:
        return None

    async def close(self) -> None:
        self.session.close_seat(self.seat)


class GameSession:
    """A game between a person (or two) and a bot (or none), followed by web pages."""

    def __init__(
        self,
        specs: Sequence[str],
        params: GameParameters,
        league: int = 4,
        human_time: float | None = None,
        time_control: TimeControl | None = None,
        sandbox: bool = True,
        bot_env: Sequence[tuple[str, str]] = (),
        memory_mb: int | None = DEFAULT_MEMORY_MB,
        on_interrupted: Callable[[dict[str, Any]], None] | None = None,
        hidden: Sequence[str] = (),
        rivals: Sequence[str] = (),
    ) -> None:
        """``specs``: per seat, ``human`` or a bot spec (as ``locm play`` takes them); bots
        are made as ``locm play`` makes them (``sandbox``, ``bot_env``, ``memory_mb``: see
        make_player, as are ``hidden`` and ``rivals``: files the bot may not open);
        ``on_interrupted`` gets the log of what was played if the game is stopped before its
        end (see run_game)."""
        self.on_interrupted = on_interrupted
        self.specs = tuple(specs)
        self.params = params
        self.league = league
        self.human_time = human_time
        self._page_opened = asyncio.Event()
        """Set when a person's page first asks for the game: a --human-time clock runs only
        from then on (the game starts with the process, the page a moment or minutes later)."""
        self.time_control = time_control = time_control or TimeControl()
        self.humans = tuple(seat for seat, spec in enumerate(self.specs) if spec == HUMAN)
        if not self.humans:
            raise ValueError("a game to play in the browser needs at least one human seat")
        self.players: list[Player] = []
        for seat, spec in enumerate(self.specs):
            if spec == HUMAN:
                name = HUMAN if len(self.humans) == 1 else f"{HUMAN} {seat + 1}"
                self.players.append(HumanSeat(self, seat, name))
            else:
                seed = agent_seed(params, seat)
                bot = make_player(
                    spec, seed, time_control.scale, sandbox, hidden=hidden, bot_env=bot_env,
                    memory_mb=memory_mb, rivals=rivals,
                )  # fmt: skip
                self.players.append(self._watched(bot, seat))
        self.names = [player.name for player in self.players]
        self.seq = 0
        """Grows at every change a page can see; pages wait for it to move."""
        self._changed = asyncio.Event()
        self.decisions: dict[int, Decision] = {}
        self.thinking: set[int] = set()
        self.last_seat = self.humans[0]
        """Hot seat: the seat the page showed last (it keeps showing it between turns)."""
        self.frames: list[dict[str, Any]] = []
        """The battle as the viewer draws it, frame by frame (both hands: filtered per page)."""
        self.game: ProtocolGame | None = None
        self._seen_summaries = 0
        self._hands: list[dict[int, int]] = [{}, {}]
        """Per player: instance id -> base id of the hand as last seen (what a USE used)."""
        self._cards: dict[int, Card] = {}
        self.outcome: GameOutcome | None = None
        self.error: str | None = None
        self.auto_deck: set[int] = set()
        self.closing = False
        """True once the server stops: pages waiting for news are answered at once."""

    # --- the game ---------------------------------------------------------------------

    def _watched(self, player: Player, seat: int) -> Player:
        """Follow a bot's turns (to say it is thinking, and to show its moves with the cards
        they used) without changing it: its send and receive are wrapped on the instance."""
        send, receive = player.send, player.receive

        async def watched_send(text: str, state: State, index: int) -> None:
            self.thinking.add(seat)
            if state.phase == Phase.BATTLE:
                self._turn_frame(state)
            self._bump()
            await send(text, state, index)

        async def watched_receive(timeout_s: float | None) -> str | None:
            try:
                return await receive(timeout_s)
            finally:
                self.thinking.discard(seat)
                self._bump()

        player.send = watched_send  # type: ignore[method-assign]
        player.receive = watched_receive  # type: ignore[method-assign]
        return player

    def _watch(self, game: ProtocolGame) -> None:
        self.game = game
        game.on_action = self._on_action

    async def run(self) -> GameOutcome:
        """Play the game to its end (the players are closed whatever happens)."""
        try:
            self.outcome = await run_game(
                self.players,
                params=self.params,
                league=self.league,
                time_control=self.time_control,
                watch=self._watch,
                on_interrupted=self.on_interrupted,
            )
        except Exception as error:
            self.error = f"the game stopped: {error}"
            self._bump()
            raise
        self._end_frame()
        self._bump()
        return self.outcome

    def _bump(self) -> None:
        self.seq += 1
        self.wake()

    def wake(self) -> None:
        """Answer every page waiting for news."""
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_change(self, after: int, timeout_s: float) -> None:
        """Return once ``seq`` is past ``after``, or after ``timeout_s``."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        while self.seq <= after and not self.closing:
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                return
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                return

    # --- frames (the battle as the viewer draws it) -------------------------------------

    def _remember(self, state: State) -> None:
        for index, player in enumerate(state.players):
            for inst in player.hand:
                self._cards.setdefault(inst.card.base_id, inst.card)
                self._hands[index][inst.id] = inst.card.base_id
            for creature in player.board:
                self._cards.setdefault(creature.card.base_id, creature.card)

    def _frame(self, state: State, kind: str) -> dict[str, Any]:
        self._remember(state)
        frame = battle_frame(state, None)
        frame["kind"] = kind
        frame["hands"] = [battle_frame(state, p)["hand"] for p in (0, 1)]
        frame["events"] = self._events()
        self.frames.append(frame)
        return frame

    def _events(self) -> list[str]:
        if self.game is None:
            return []
        new = self.game.summaries[self._seen_summaries :]
        self._seen_summaries = len(self.game.summaries)
        # "Player $1 chose cards ...": the deck-building summaries would show the bot's deck.
        return [readable_tokens(line) for line in new if not _DECK_LINE.match(line)]

    def _turn_frame(self, state: State) -> None:
        last = self.frames[-1] if self.frames else {}
        if (last.get("kind"), last.get("turn"), last.get("active")) == (
            "turn",
            state.turn + 1,
            state.active,
        ):
            return  # asked again for the same turn: one frame
        self._frame(state, "turn")

    def _on_action(self, player: int, action: Action) -> None:
        before = self.frames[-1] if self.frames else None
        assert self.game is not None
        state = self.game.state
        data: dict[str, Any] = {
            "type": ActionType(action.type).name,
            "player": player,
            "id": action.id,
            "target": action.target,
            "text": str(action),
        }
        if action.type in (ActionType.SUMMON, ActionType.USE):
            base_id = self._hands[player].get(action.id)
            if base_id is not None:
                data["card"] = base_id
        elif before is not None:
            for creature in before["sides"][player]["board"]:
                if creature["id"] == action.id:
                    data["card"] = creature["card"]
        frame = self._frame(state, "action")
        frame["action"] = data
        ids_after = {c["id"] for side in frame["sides"] for c in side["board"]}
        frame["dead"] = [
            dict(creature, side=index)
            for index, side in enumerate(before["sides"] if before else [])
            for creature in side["board"]
            if creature["id"] not in ids_after
        ]

    def _end_frame(self) -> None:
        game, outcome = self.game, self.outcome
        assert game is not None and outcome is not None
        if game.state.turn >= 0:
            frame = self._frame(game.state, "end")
        else:
            frame = {"kind": "end", "turn": 0, "events": self._events()}
            self.frames.append(frame)
        frame["winner"] = outcome.winner
        frame["reason"] = outcome.end_reason.name.lower().replace("_", " ")
        frame["cause"] = self._cause()
        frame["scores"] = list(outcome.scores) if outcome.scores is not None else None

    def _cause(self) -> str:
        """Why the game ended, in words (a crash is said to be one, not a timeout)."""
        outcome = self.outcome
        assert outcome is not None
        return end_cause(outcome.end_reason, outcome.error_player, exited=outcome.exited,
                         out_of_memory=outcome.out_of_memory)  # fmt: skip

    # --- the human seats ------------------------------------------------------------------

    async def open_decision(self, seat: int, state: State) -> None:
        """The referee asks ``seat``: offer its moves (deck building or a battle turn)."""
        loop = asyncio.get_running_loop()
        if state.is_terminal:  # died in its draw step: asked once more, then the game ends
            decision = Decision(seat, "battle", state, state, loop.create_future(), None)
            decision.answer.set_result("PASS")
            self.decisions[seat] = decision
            return
        if state.phase == Phase.BATTLE:
            self._turn_frame(state)
            kind = "battle"
            work = state.clone()
        elif state.rules.draft:
            kind, work = "draft", state.clone()
        else:
            kind, work = "construct", _construct_state(state, seat, ())
        deadline = None
        if self.human_time is not None and self._page_opened.is_set():
            deadline = loop.time() + self.human_time
        decision = Decision(seat, kind, state.clone(), work, loop.create_future(), deadline)
        self.decisions[seat] = decision
        self.last_seat = seat
        if kind == "draft" and seat in self.auto_deck:
            decision.answer.set_result(await self._agent_line(decision))
        self._touch(decision)

    def _touch(self, decision: Decision) -> None:
        self._bump()
        decision.id = self.seq

    def page_opened(self) -> None:
        """A person's page has asked for the game: their clock may start."""
        self._page_opened.set()

    async def await_answer(self, seat: int) -> str | None:
        decision = self.decisions[seat]
        if self.human_time is not None and decision.deadline is None:
            # Asked before any page was open: the clock starts when one is (or never, if the
            # person answers first, e.g. through the JSON API).
            opened = asyncio.ensure_future(self._page_opened.wait())
            try:
                await asyncio.wait((opened, decision.answer), return_when=asyncio.FIRST_COMPLETED)
            finally:
                opened.cancel()
            decision.deadline = asyncio.get_running_loop().time() + self.human_time
            self._bump()  # the page shows the countdown from now
        remaining = None
        if decision.deadline is not None:
            remaining = max(0.0, decision.deadline - asyncio.get_running_loop().time())
        try:
            return await asyncio.wait_for(asyncio.shield(decision.answer), remaining)
        except TimeoutError:
            return None  # the person's clock ran out: a timeout, as for a bot
        finally:
            if self.decisions.get(seat) is decision:
                del self.decisions[seat]
            self._bump()

    def close_seat(self, seat: int) -> None:
        decision = self.decisions.pop(seat, None)
        if decision is not None and not decision.answer.done():
            decision.answer.cancel()

    def offered(self, decision: Decision) -> list[str]:
        """The moves the page offers now: the engine's legal actions, as protocol text."""
        work = decision.work
        if decision.answer.done():
            return []
        if decision.kind == "draft":
            return [str(action) for action in work.legal_actions()]
        if decision.kind == "construct":
            if len(work.players[decision.seat].chosen) >= DECK_SIZE:
                return []
            return [str(action) for action in work.legal_actions()]
        if work.phase != Phase.BATTLE or work.active != decision.seat:
            return []
        return [str(action) for action in work.legal_actions()]

    async def move(self, seat: int | None, decision_id: object, action: object = None,
             remove: object = None, auto: bool = False) -> None:  # fmt: skip
        """Make one move of ``seat`` (None: whichever human seat is asked) on the decision
        the page showed as ``decision_id``; MoveRefused (with why) changes nothing."""
        if self.outcome is not None or self.error is not None:
            raise MoveRefused("the game is over")
        open_ = {s: d for s, d in sorted(self.decisions.items()) if not d.answer.done()}
        decision = open_.get(seat) if seat is not None else next(iter(open_.values()), None)
        if decision is None:
            raise MoveRefused("it is not your move: wait for the opponent")
        if decision_id != decision.id:
            raise MoveRefused(
                "that move was made on an old view of the game (a double click, or another "
                "tab): nothing changed, here is the game as it is"
            )
        if auto:
            if decision.kind == "battle":
                raise MoveRefused("an agent builds decks only")
            line = await self._agent_line(decision)
            if decision.kind == "draft":
                self.auto_deck.add(decision.seat)
            decision.answer.set_result(line)
        elif remove is not None:
            self._remove(decision, remove)
        else:
            self._play(decision, action)
        self._touch(decision)

    def _play(self, decision: Decision, action: object) -> None:
        if not isinstance(action, str) or action not in self.offered(decision):
            shown = repr(action)[:60]
            raise MoveRefused(f"{shown} is not a legal move now; the page offers only legal ones")
        if decision.kind == "draft":
            decision.answer.set_result(action)
            return
        kind, _, rest = action.partition(" ")
        numbers = [int(word) for word in rest.split()]
        parsed = Action(ActionType[kind], *numbers) if numbers else Action(ActionType[kind])
        if decision.kind == "construct":
            decision.moves.append(action)
            decision.work = _construct_state(decision.base, decision.seat, decision.moves)
            if len(decision.moves) == DECK_SIZE:
                decision.answer.set_result(";".join(decision.moves))
            return
        if parsed.type == ActionType.PASS:
            decision.answer.set_result(";".join(decision.moves) or "PASS")
            return
        decision.work.apply(parsed)
        decision.moves.append(action)
        if decision.work.phase != Phase.BATTLE:  # this move won the game: the turn is over
            decision.answer.set_result(";".join(decision.moves))

    def _remove(self, decision: Decision, remove: object) -> None:
        if decision.kind != "construct":
            raise MoveRefused("only a constructed deck has cards to take back")
        wanted = f"CHOOSE {remove}"
        if wanted not in decision.moves:
            raise MoveRefused(f"card {str(remove)[:20]} is not in your deck")
        at = len(decision.moves) - 1 - decision.moves[::-1].index(wanted)
        del decision.moves[at]
        decision.work = _construct_state(decision.base, decision.seat, decision.moves)

    async def _agent_line(self, decision: Decision) -> str:
        """What the deck-building agent answers for the rest of this seat's deck."""
        seed = agent_seed(self.params, decision.seat) ^ len(decision.moves)
        agent = InProcessPlayer(make_agent(AUTO_DECK_AGENT, seed))
        await agent.send("", decision.work, decision.seat)  # it plays on a clone
        line = await agent.receive(None)
        if line is None:
            raise MoveRefused(f"the agent could not build a deck: {agent.take_stderr()}")
        return ";".join([*decision.moves, line]) if decision.moves else line

    # --- what a page sees -------------------------------------------------------------------

    def view(self, seat: int | None, have: int = 0) -> dict[str, Any]:
        """The page's data: ``seat`` is the human seat it plays (None: a spectator), ``have``
        the number of battle frames it has already (only later ones are sent)."""
        if seat is not None and len(self.humans) > 1:
            asked = (s for s, d in sorted(self.decisions.items()) if not d.answer.done())
            seat = next(asked, self.last_seat)  # hot seat: the seat asked now
        decision = self.decisions.get(seat) if seat is not None else None
        if decision is not None and decision.answer.done():
            decision = None  # answered: the referee has it, the page waits for what follows
        frames = [self._frame_for(frame, seat) for frame in self.frames[have:]]
        used: set[int] = set()
        for frame in frames:
            _collect(frame, used)
        data: dict[str, Any] = {
            "format": VIEW_FORMAT,
            "seq": self.seq,
            "version": self.params.version,
            "players": self.names,
            "humans": list(self.humans),
            "seat": seat,
            "rules": _rules(self.params.version),
            "frames": frames,
            "frameCount": len(self.frames),
            "thinking": sorted(self.thinking),
            "decision": None,
            "over": self.outcome is not None,
            "error": self.error,
        }
        if decision is not None:
            data["decision"] = self._decision_view(decision, used)
        if self.outcome is not None:
            scores = self.outcome.scores
            data["end"] = {
                "winner": self.outcome.winner,
                "reason": self.outcome.end_reason.name.lower().replace("_", " "),
                "cause": self._cause(),
                "scores": list(scores) if scores is not None else None,
            }
        data["cards"] = {str(i): card_row(self._card(i)) for i in sorted(used) if self._known(i)}
        return data

    def _card(self, base_id: int) -> Card:
        return self._cards[base_id]

    def _known(self, base_id: int) -> bool:
        return base_id in self._cards

    def _frame_for(self, frame: dict[str, Any], seat: int | None) -> dict[str, Any]:
        shown = {key: value for key, value in frame.items() if key != "hands"}
        if "hands" in frame:
            shown["hand"] = frame["hands"][seat] if seat is not None else []
            shown["handOf"] = seat
        return shown

    def _decision_view(self, decision: Decision, used: set[int]) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        state, seat = decision.work, decision.seat
        view: dict[str, Any] = {
            "id": decision.id,
            "seat": seat,
            "kind": decision.kind,
            "actions": self.offered(decision),
            "moves": list(decision.moves),
            "secondsLeft": None if decision.deadline is None
            else max(0.0, round(decision.deadline - loop.time(), 1)),
        }  # fmt: skip
        chosen = [card.base_id for card in state.players[seat].chosen]
        for card in state.players[seat].chosen:
            self._cards.setdefault(card.base_id, card)
        if decision.kind == "draft":
            offered = state.draft[len(state.players[seat].chosen)]
            for card in offered:
                self._cards.setdefault(card.base_id, card)
            view["offered"] = [card.base_id for card in offered]
            view["round"] = len(chosen)
        elif decision.kind == "construct":
            for card in state.pool:
                self._cards.setdefault(card.base_id, card)
            view["pool"] = [card.base_id for card in state.pool]
        else:
            self._remember(state)
            frame = battle_frame(state, seat)
            frame["kind"] = "turn"
            frame["events"] = []
            view["frame"] = frame
            _collect(frame, used)
        view["deck"] = chosen
        used.update(chosen)
        used.update(view.get("offered", ()))
        used.update(view.get("pool", ()))
        return view


def _collect(frame: dict[str, Any], used: set[int]) -> None:
    for side in frame.get("sides") or []:
        used.update(creature["card"] for creature in side["board"])
    used.update(base_id for _id, base_id in frame.get("hand") or [])
    used.update(creature["card"] for creature in frame.get("dead") or [])
    action = frame.get("action")
    if action and "card" in action:
        used.add(action["card"])


def _rules(version: str) -> dict[str, Any]:
    from ..engine.rules import ruleset

    rules = ruleset(version)
    return {"lanes": rules.lanes, "runes": rules.runes, "area": rules.area_effects,
            "draft": rules.draft, "laneSize": rules.lane_capacity}  # fmt: skip
