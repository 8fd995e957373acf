"""The official protocol game: what each bot is asked, and how what it writes is parsed.

The input text itself is written by :mod:`cardarena.locm.engine.text`.

:class:`ProtocolGame` drives a whole game through that protocol without any I/O:
it says which player must answer which input text within which time limit
(:meth:`ProtocolGame.requests`), and takes the answer lines
(:meth:`ProtocolGame.answer`) with the official soft errors, hard errors, SDK
quirks (empty lines, the 30 s total-time quota, the frame limit) and scores.
The referee feeds it real processes; the conformance tests feed it recordings.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..engine.cards import Card
from ..engine.javarandom import parse_java_int
from ..engine.rules import (
    DECK_SIZE,
    FRAME_LIMIT,
    MAX_ANSWER_BYTES,
    TOTAL_TIME_QUOTA_MS,
    RuleSet,
)
from ..engine.state import Action, ActionType, EndReason, Phase, State
from ..engine.text import JAVA_WHITESPACE, battle_input, deck_building_input

ILLEGAL_ACTION_SUMMARY_LIMIT = 3
CONSTRUCTED_VISUAL_FRAMES = 4
"""1.5: two more construction frames and one clean-up frame after the constructed turn."""


class ProtocolError(ValueError):
    """A hard error: the bot's line breaks the grammar, and the bot loses."""


ParsedAction = tuple[Action, str]
"""An action and the free text the bot wrote after it (display only)."""


# --- output parsing --------------------------------------------------------------


def parse_battle_output(line: str, rules: RuleSet) -> list[ParsedAction]:
    """Parse a battle line into actions; ProtocolError (a hard error) if malformed."""
    actions: list[ParsedAction] = []
    for raw in line.split(";"):
        piece = raw.strip(JAVA_WHITESPACE)
        if not piece:
            continue
        command, _, rest = piece.partition(" ")
        command = command.strip(JAVA_WHITESPACE)
        if command == "PASS":
            actions.append((Action(ActionType.PASS), ""))
            continue
        if command == "SUMMON" and not rules.has_lanes:
            parts = rest.split(" ", 1)
            try:
                card_id = parse_java_int(parts[0])
            except ValueError:
                raise ProtocolError(
                    "Invalid SUMMON argument. Expected integer (card id)."
                ) from None
            text = parts[1].strip(JAVA_WHITESPACE) if len(parts) > 1 else ""
            actions.append((Action(ActionType.SUMMON, card_id, -1), text))
            continue
        if command not in ("SUMMON", "ATTACK", "USE"):
            raise ProtocolError(rules.invalid_action_name_message)
        parts = rest.split(" ", 2)
        try:
            first = parse_java_int(parts[0])
            second = parse_java_int(parts[1]) if len(parts) > 1 else parse_java_int("")
        except ValueError:
            if command == "SUMMON":
                message = "Invalid SUMMON arguments. Expected two integers (card id and lane)."
            else:
                message = (
                    f"Invalid {command} arguments. Expected two integers (card id and target id)."
                )
            raise ProtocolError(message) from None
        text = parts[2].strip(JAVA_WHITESPACE) if len(parts) > 2 else ""
        actions.append((Action(ActionType[command], first, second), text))
    return actions


def _java_hashset_order(values: Sequence[int]) -> list[int]:
    """Iteration order of a small Java ``HashSet<Integer>``: by bucket (value & 15)."""
    distinct = list(dict.fromkeys(values))
    return sorted(distinct, key=lambda value: (value ^ (value >> 16)) & 15)


def parse_draft_output(line: str, offered: Sequence[Card]) -> tuple[int, str]:
    """Parse a draft answer into (index of the chosen card, text); ProtocolError if bad."""
    words = line.split(" ", 2)
    text = words[2].strip(JAVA_WHITESPACE) if len(words) > 2 else ""
    expected = 'Invalid action. Expected  "PICK [0,1,2]" or "PASS".'
    command = words[0]
    if command == "PASS":
        return 0, text
    if command not in ("PICK", "CHOOSE") or len(words) < 2:
        raise ProtocolError(expected)
    try:
        value = parse_java_int(words[1])
    except ValueError:
        raise ProtocolError(expected) from None
    if command == "PICK":
        if not 0 <= value <= 2:
            raise ProtocolError('Invalid action format. "PICK" argument should be 0, 1 or 2.')
        return value, text
    base_ids = [card.base_id for card in offered]
    if value not in base_ids:
        shown = ", ".join(map(str, _java_hashset_order(base_ids)))
        raise ProtocolError(
            f'Invalid action format. "CHOOSE" argument should be valid card\'s base id [{shown}].'
        )
    return base_ids.index(value), text


def parse_constructed_output(line: str, pool: Sequence[Card]) -> tuple[list[Card], str]:
    """Parse a 1.5 constructed answer into the chosen cards, in order; ProtocolError if bad.

    The count is not checked here (the caller reports a wrong count separately, as the
    official referee does).
    """
    chosen: list[Card] = []
    counts: dict[int, int] = {}
    texts: list[str] = []
    by_id = {card.base_id: card for card in pool}

    def first_available() -> Card:
        for card in pool:
            if counts.get(card.base_id, 0) < 2:
                return card
        raise ProtocolError("Something went horrible wrong. No card available to choose.")

    def take(card: Card) -> None:
        chosen.append(card)
        counts[card.base_id] = counts.get(card.base_id, 0) + 1

    for raw in line.split(";"):
        piece = raw.strip(JAVA_WHITESPACE)
        if not piece:
            continue
        if piece == "PASS":
            while len(chosen) < DECK_SIZE:
                take(first_available())
            continue
        words = piece.split(" ", 2)
        if len(words) > 2 and words[2].strip(JAVA_WHITESPACE):
            texts.append(words[2].strip(JAVA_WHITESPACE))
        if words[0] == "PASS":
            take(first_available())
        elif words[0] == "CHOOSE":
            try:
                base_id = parse_java_int(words[1]) if len(words) > 1 else parse_java_int("")
            except ValueError:
                raise ProtocolError(
                    'Invalid "CHOOSE" argument. Expected integer (card base id).'
                ) from None
            card = by_id.get(base_id)
            if card is None:
                raise ProtocolError(
                    'Invalid action format. "CHOOSE" argument should be valid card\'s base id.'
                )
            if counts.get(base_id, 0) >= 2:
                raise ProtocolError("Invalid action argument. Card can be chosen at most 2 times.")
            take(card)
        else:
            raise ProtocolError('Invalid action. Expected  "CHOOSE id" or "PASS".')
    return chosen, " ".join(texts)


# --- a whole game through the protocol -------------------------------------------


@dataclass(frozen=True)
class Request:
    """One 'execute with one expected output line' of the official runner."""

    player: int
    input: str
    timeout_ms: int


class ProtocolGame:
    """A game driven through the official protocol, with no I/O of its own.

    Loop: ``for requests in iter(game.requests, [])`` → send each input, read one
    line per request (``None`` when no complete line came in time) →
    ``game.answer(lines)``.
    """

    def __init__(
        self, version: str | RuleSet | None = None, params: object = None, league: int = 4
    ) -> None:
        """A game of ``version`` with ``params`` (resolved parameters carry their version;
        see :meth:`State.new`)."""
        self.state = State.new(version, params, league)  # type: ignore[arg-type]
        self.rules = self.state.rules
        self.scores: tuple[int, int] | None = None
        self.summaries: list[str] = []
        """The official game summary lines (``$0``/``$1`` are the players' tokens)."""
        self.error_player: int | None = None
        self.aborted_by: int | None = None
        """1.0/1.2: the player whose empty line aborted the game (the official runner names
        no one and gives no result; a tournament charges it to that player)."""
        self.frames = 0
        self.quota_ms = 0
        self.queue: list[ParsedAction] = []
        self._battle_turns_asked = 0
        self._pending: list[Request] | None = None
        self.on_action: Callable[[int, Action], None] | None = None
        """Called after each executed battle action (the replay viewer draws one frame each)."""
        if self.rules.draft:
            pool = self.state.draft_pool_size()
            row = 5 if pool <= 15 else 10 if pool <= 30 else 12 if pool <= 60 else 15
            self.frames = 1 + math.ceil(max(0, pool - row) / row)

    # -- status --

    @property
    def over(self) -> bool:
        return self.scores is not None

    @property
    def winner(self) -> int | None:
        return self.state.winner if self.over else None

    @property
    def end_reason(self) -> EndReason:
        return self.state.end_reason

    # -- requests and answers --

    def requests(self) -> list[Request]:
        """What the runner must ask now (2 requests in deck building, 1 in battle)."""
        if self.over:
            return []
        if self._pending is None:
            self._pending = self._next_requests()
        return self._pending

    def _next_requests(self) -> list[Request]:
        state, rules = self.state, self.rules
        if state.phase == Phase.DECK_BUILDING:
            first = not state.players[0].chosen
            limit = rules.deck_first_turn_ms if first else rules.deck_turn_ms
            quota = rules.deck_first_turn_ms if first and rules.draft else rules.deck_turn_quota_ms
            if not self._charge(2 * quota):
                return []
            self.frames += 1
            return [Request(p, deck_building_input(state, p), limit) for p in (0, 1)]
        first = self._battle_turns_asked < 2
        limit = rules.battle_first_turn_ms if first else rules.battle_turn_ms
        if not self._charge(limit):
            return []
        self.frames += 1
        self._battle_turns_asked += 1
        return [Request(state.active, battle_input(state, state.active), limit)]

    def _charge(self, quota_ms: int) -> bool:
        """Add to the SDK's total-time quota; past 30 s the game aborts with no result."""
        self.quota_ms += quota_ms
        if self.quota_ms > TOTAL_TIME_QUOTA_MS:
            self.state.abort(EndReason.ABORTED_TIME_QUOTA)
            self.scores = (0, 0)
            return False
        return True

    def answer(self, lines: Sequence[str | None]) -> None:
        """Give the answer line of each current request (``None``: no line in time)."""
        pending = self.requests()
        if len(lines) != len(pending):
            raise ValueError(f"expected {len(pending)} answer line(s), got {len(lines)}")
        self._pending = None
        if self.state.phase == Phase.DECK_BUILDING:
            self._answer_deck_building(lines)
        else:
            self._answer_battle(pending[0].player, lines[0])

    def _unusable(self, player: int, line: str | None) -> bool:
        """Handle a timeout, an over-long line or an aborting empty line; True if so."""
        if line is None or len(line.encode("utf-8", "surrogatepass")) >= MAX_ANSWER_BYTES:
            self._error(player, f"${player} timeout!", EndReason.TIMEOUT)
            return True
        if line == "" and self.rules.empty_line_aborts:
            self.aborted_by = player
            self.state.abort(EndReason.ABORTED_EMPTY_LINE)
            self.scores = (0, 0)
            return True
        return False

    def _error(self, player: int, message: str, reason: EndReason) -> None:
        already_won = self.state.winner == 1 - player
        self.summaries.append(message)
        self.error_player = player
        self.state.forfeit(player, reason)
        scores = [0, 0]
        scores[player] = -1
        scores[1 - player] = 1 if already_won else 0
        self.scores = (scores[0], scores[1])
        if already_won:  # the official referee still declares the draw-step winner after
            self.summaries.append(f"${1 - player} won!")

    def _answer_deck_building(self, lines: Sequence[str | None]) -> None:
        state = self.state
        if self.rules.draft:
            for player, line in enumerate(lines):
                if self._unusable(player, line):
                    return
                assert line is not None
                offered = state.draft[len(state.players[player].chosen)]
                try:
                    index, _text = parse_draft_output(line, offered)
                except ProtocolError as error:
                    self._error(player, f"${player}: {error}", EndReason.INVALID_OUTPUT)
                    return
                self.summaries.append(f"Player ${player} chose card {offered[index].base_id}")
                state.add_choice(player, offered[index])
        else:
            decks: list[list[Card]] = []
            for player, line in enumerate(lines):
                if self._unusable(player, line):
                    return
                assert line is not None
                try:
                    cards, _text = parse_constructed_output(line, state.pool)
                except ProtocolError as error:
                    self._error(player, f"${player}: {error}", EndReason.INVALID_OUTPUT)
                    return
                if len(cards) != DECK_SIZE:
                    self._error(
                        player,
                        f"${player} didn't choose correct number of cards!",
                        EndReason.INVALID_OUTPUT,
                    )
                    return
                self.summaries.append(f"Player ${player} chose cards {_summarize(cards)}.")
                decks.append(cards)
            for player, cards in enumerate(decks):
                for card in cards:
                    state.add_choice(player, card)
            self.frames += CONSTRUCTED_VISUAL_FRAMES - 1
        if state.phase == Phase.BATTLE:
            self.frames += 1  # the battle-init frame that shuffles and deals
        self._after_frame()

    def _answer_battle(self, player: int, line: str | None) -> None:
        if self._unusable(player, line):
            return
        assert line is not None
        try:
            self.queue = parse_battle_output(line, self.rules)
        except ProtocolError as error:
            self._error(player, f"${player}: {error}", EndReason.INVALID_OUTPUT)
            return
        self._roll_out()
        # Action frames: each executes the legal head of the queue, then rolls out again.
        while self.queue and not self.over and not self.state.is_terminal:
            if self.frames >= FRAME_LIMIT:
                break
            self.frames += 1
            action, _text = self.queue.pop(0)
            self.summaries.append(f"Player ${player} performed action: {action}")
            self.state.execute(action)
            if self.on_action is not None:
                self.on_action(player, action)
            self._roll_out()
        self._after_frame()

    def _roll_out(self) -> None:
        """Drop leading PASS and illegal actions (with warnings) until a legal head."""
        state = self.state
        if state.is_terminal:
            return
        player = state.active
        illegal = 0
        queue = self.queue
        while queue:
            action, text = queue[0]
            if action.type == ActionType.PASS:
                queue.pop(0)
                continue
            if state._battle_legal(action):
                break
            queue.pop(0)
            illegal += 1
            if illegal <= ILLEGAL_ACTION_SUMMARY_LIMIT:
                shown = f"{action} {text}" if text else str(action)
                self.summaries.append(f"[Warning] ${player} Action is not legal: {shown}")
        if illegal > ILLEGAL_ACTION_SUMMARY_LIMIT:
            self.summaries.append(
                f"[Warning] ${player} Performed another "
                f"{illegal - ILLEGAL_ACTION_SUMMARY_LIMIT} illegalActions"
            )

    def _after_frame(self) -> None:
        """End the game on a winner or the frame limit; otherwise pass the turn if done."""
        state = self.state
        if self.over:
            return
        if state.winner is not None:
            self.summaries.append(f"${state.winner} won!")
            self.scores = (1, 0) if state.winner == 0 else (0, 1)
            return
        if self.frames >= FRAME_LIMIT:
            state.abort(EndReason.FRAME_LIMIT)
            self.scores = (0, 0)
            return
        if state.phase == Phase.BATTLE and not self.queue and self._battle_turns_asked:
            state.end_turn()
            if state.winner is not None and not self.over:
                return  # died in its draw step: still asked for its turn, then the game ends


def _summarize(cards: Sequence[Card]) -> str:
    counts: dict[int, int] = {}
    for card in cards:
        counts[card.base_id] = counts.get(card.base_id, 0) + 1
    return ", ".join(f"{base_id}x{n}" for base_id, n in sorted(counts.items()))
