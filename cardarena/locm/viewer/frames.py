"""The frames of the replay viewer: a logged game, re-simulated, as JSON-ready data.

:class:`~cardarena.locm.referee.replay.LogReplay` plays the log again with the engine; this
module takes a snapshot of what a spectator should see at each step: one frame per
deck-building round (1.0/1.2 draft pick, 1.5 constructed turn), one at the start of
each battle turn, one after each executed action, and one for the end. The browser
only draws these frames, so what it shows is exactly what the engine computed. Frames
that ask the bots carry the exact input text each bot read (``inputs``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..engine.cards import Card
from ..engine.state import Action, ActionType, Creature, Phase, State
from ..referee.gameresult import end_cause, flags_of
from ..referee.replay import LogReplay, ReplayError, readable_tokens

FRAMES_FORMAT = "cardarena.locm.viewer/1"
MAX_STDERR_CHARS = 4000
"""Per bot and per turn: a bot that floods stderr must not make a page of megabytes."""


def _card_row(card: Card) -> list[int]:
    return [
        card.type, card.cost, card.attack, card.defense, card.keywords,
        card.my_health, card.opp_health, card.draw, card.area,
    ]  # fmt: skip


def _creature(creature: Creature) -> dict[str, Any]:
    return {
        "id": creature.id,
        "card": creature.card.base_id,
        "attack": creature.attack,
        "defense": creature.defense,
        "keywords": creature.keywords,
        "lane": max(creature.lane, 0),
        "canAttack": creature.can_attack,
        "attacked": creature.has_attacked,
    }


def _sides(state: State) -> list[dict[str, Any]]:
    sides = []
    for player in state.players:
        sides.append(
            {
                "health": player.health,
                "mana": player.mana,
                "maxMana": player.max_mana,
                "deck": len(player.deck),
                "handSize": len(player.hand),
                "rune": player.next_rune if state.rules.runes else None,
                "draw": player.next_turn_draw,
                "board": [_creature(c) for c in player.board],
            }
        )
    return sides


def _hand(state: State, player: int) -> list[list[int]]:
    return [[inst.id, inst.card.base_id] for inst in state.players[player].hand]


def stderr_by_answer(log: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """Each player's stderr per answer, aligned with ``answers_from_log``.

    The referee records a bot's stderr with the round of its answer; what came before
    (the bootstrap, rounds in which it was not asked) goes with its next answer, and
    what came after its last answer (a timeout) is one more entry.
    """
    result: list[list[str]] = []
    outputs, errors = log.get("outputs") or {}, log.get("errors") or {}
    for key in ("0", "1"):
        chunks: list[str] = []
        pending = ""
        for index, output in enumerate(outputs.get(key) or []):
            stderr = (errors.get(key) or [])[index : index + 1]
            if stderr and isinstance(stderr[0], str):
                pending += stderr[0]
            if output:
                chunks.append(_clip(pending))
                pending = ""
        chunks.append(_clip(pending))
        result.append(chunks)
    return result[0], result[1]


def _clip(text: str) -> str:
    if len(text) <= MAX_STDERR_CHARS:
        return text
    return text[:MAX_STDERR_CHARS] + f"\n… ({len(text) - MAX_STDERR_CHARS} more characters)"


def _action(state_before: Mapping[str, Any], player: int, action: Action) -> dict[str, Any]:
    """The action with what it acted on, as seen *before* it happened."""
    kind = ActionType(action.type).name
    data: dict[str, Any] = {"type": kind, "player": player, "id": action.id,
                            "target": action.target, "text": str(action)}  # fmt: skip
    if kind in ("SUMMON", "USE"):
        for inst_id, base_id in state_before["hand"]:
            if inst_id == action.id:
                data["card"] = base_id
    elif kind == "ATTACK":
        for creature in state_before["sides"][player]["board"]:
            if creature["id"] == action.id:
                data["card"] = creature["card"]
    return data


class _Builder:
    """Walks a :class:`LogReplay` and collects the frames."""

    def __init__(self, replay: LogReplay) -> None:
        self.replay = replay
        self.game = replay.game
        self.state = replay.game.state
        self.frames: list[dict[str, Any]] = []
        self.cards: dict[int, Card] = {}
        self.seen_summaries = 0
        self.stderr = stderr_by_answer(replay.log)
        self.answer_index = [-1, -1]
        """Per player: the index of its latest answer so far (its stderr)."""
        self.turn_line: str | None = None
        self.game.on_action = self._on_action

    def _events(self) -> list[str]:
        new = self.game.summaries[self.seen_summaries :]
        self.seen_summaries = len(self.game.summaries)
        return [readable_tokens(line) for line in new]

    def _battle_frame(self, kind: str, **extra: Any) -> dict[str, Any]:
        state = self.state
        for inst in (*state.players[0].hand, *state.players[1].hand):
            self.cards.setdefault(inst.card.base_id, inst.card)
        frame: dict[str, Any] = {
            "kind": kind,
            "turn": state.turn + 1,
            "active": state.active,
            "sides": _sides(state),
            "hand": _hand(state, state.active),
            "answers": list(self.answer_index),
            "events": [],
            **extra,
        }
        self.frames.append(frame)
        return frame

    def _on_action(self, player: int, action: Action) -> None:
        before = self.frames[-1]
        after = self._battle_frame("action", action=_action(before, player, action),
                                   line=self.turn_line)  # fmt: skip
        after["events"] = self._events()
        ids_after = {c["id"] for side in after["sides"] for c in side["board"]}
        after["dead"] = [
            dict(creature, side=index)
            for index, side in enumerate(before["sides"])
            for creature in side["board"]
            if creature["id"] not in ids_after
        ]

    def _flush_events(self) -> None:
        """Summary lines that came since the last frame belong to it."""
        events = self._events()
        if self.frames and events:
            self.frames[-1]["events"].extend(events)

    def build(self) -> dict[str, Any]:
        replay, state = self.replay, self.state
        for requests, lines in replay.steps():
            self._flush_events()
            for request in requests:
                self.answer_index[request.player] += 1
            if state.phase == Phase.DECK_BUILDING:
                self._deck_building_frame(lines)
                self.frames[-1]["inputs"] = [request.input for request in requests]
            else:
                self.turn_line = lines[0]
                self._battle_frame("turn", line=lines[0], inputs=[requests[0].input])
        self._end_frame()
        mismatch = replay.mismatch()
        if mismatch is not None:
            raise ReplayError(f"the log does not replay: {mismatch}")
        rules = state.rules
        chosen = [[card.base_id for card in p.chosen] for p in state.players]
        for player in state.players:
            self.cards.update((card.base_id, card) for card in player.chosen)
        for frame in self.frames:  # what each deck-building answer chose, now known
            if frame["kind"] == "draft":
                frame["picks"] = [ids[frame["round"]] if len(ids) > frame["round"] else None
                                  for ids in chosen]  # fmt: skip
        return {
            "format": FRAMES_FORMAT,
            "version": replay.version,
            "league": replay.league,
            "players": replay.names,
            "params": replay.params,
            "rules": {
                "lanes": rules.lanes,
                "runes": rules.runes,
                "area": rules.area_effects,
                "draft": rules.draft,
            },
            "cards": {str(key): _card_row(card) for key, card in sorted(self.cards.items())},
            "pool": [card.base_id for card in state.pool],
            "chosen": chosen,
            "stderr": [list(chunks) for chunks in self.stderr],
            "frames": self.frames,
        }

    def _deck_building_frame(self, lines: Sequence[str | None]) -> None:
        state = self.state
        round_ = len(state.players[0].chosen)
        offered: list[int] = []
        if state.rules.draft:
            cards = state.draft[round_]
            self.cards.update((card.base_id, card) for card in cards)
            offered = [card.base_id for card in cards]
        else:
            self.cards.update((card.base_id, card) for card in state.pool)
        self.frames.append({
            "kind": "draft" if state.rules.draft else "construct",
            "turn": 0,
            "round": round_,
            "offered": offered,
            "lines": list(lines),
            "answers": list(self.answer_index),
            "events": [],
        })  # fmt: skip

    def _end_frame(self) -> None:
        game = self.game
        if self.state.turn >= 0:
            end = self._battle_frame("end")
        else:  # ended in deck building: no battle to show
            end = {"kind": "end", "turn": 0, "answers": list(self.answer_index), "events": []}
            self.frames.append(end)
        end["events"] = self._events()
        end["winner"] = game.winner
        end["reason"] = game.end_reason.name.lower().replace("_", " ")
        ours = self.replay.log.get("cardarena") or {}
        end["cause"] = end_cause(game.end_reason, game.error_player,
                                 exited=flags_of(ours.get("exited")),
                                 out_of_memory=flags_of(ours.get("outOfMemory")))  # fmt: skip
        if self.replay.interrupted and not game.over:  # locm play stopped by Ctrl-C, SIGTERM
            end["reason"] = "interrupted"
            end["cause"] = "the game was interrupted here (Ctrl-C or SIGTERM): the log ends"
        end["scores"] = list(game.scores) if game.scores is not None else None


def build_frames(
    log: Mapping[str, Any], version: str | None = None, league: int | None = None
) -> dict[str, Any]:
    """Re-simulate ``log`` and return the viewer's data; ReplayError if it does not replay."""
    try:
        return _Builder(LogReplay(log, version, league)).build()
    except ReplayError:
        raise
    except RecursionError:
        raise ReplayError("the log does not replay: it is nested too deeply") from None
    except (TypeError, KeyError, IndexError, AttributeError, ValueError, ArithmeticError) as error:
        raise ReplayError(f"the log does not replay: {type(error).__name__}: {error}") from None


def card_row(card: Card) -> list[int]:
    """A card as the viewer's ``cards`` table holds it (the live play page uses it too)."""
    return _card_row(card)


def battle_frame(state: State, hand_of: int | None) -> dict[str, Any]:
    """What a frame shows of a battle state: both sides, and the hand of ``hand_of`` only
    (None: no hand, e.g. for a spectator), for pages that follow a game live."""
    return {
        "turn": state.turn + 1,
        "active": state.active,
        "sides": _sides(state),
        "hand": [] if hand_of is None else _hand(state, hand_of),
        "handOf": hand_of,
    }
