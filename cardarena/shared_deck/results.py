"""The results tables of stored tournaments: the leaderboard, one tournament, one match.

The same rows for every form: ``shared-deck results`` prints them as text, CSV or JSON, and the
web dashboard shows the per-player table of a tournament from :func:`player_rows`. Everything
here reads a :class:`~.store.Store` (or what it returned) and nothing else.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json

from .errors import ErrorCode, GameError
from .match import ACTIONS
from .rules import MatchState
from .store import Store, StoredMatch, StoredTournament


def json_text(value: object, indent: int = 1) -> str:
    """JSON laid out like ``json.dumps(value, indent=1)``, except that a list holding no list
    or object is written on one line (``"tournaments": [1, 2, 3]``, not one number a line)."""

    def write(item: object, depth: int) -> str:
        inner = " " * (indent * (depth + 1))
        outer = " " * (indent * depth)
        if isinstance(item, dict) and item:
            fields = [f"{inner}{json.dumps(str(k))}: {write(v, depth + 1)}"
                      for k, v in item.items()]
            return "{\n" + ",\n".join(fields) + "\n" + outer + "}"
        if isinstance(item, list | tuple) and any(isinstance(x, dict | list | tuple) for x in item):
            rows = [inner + write(x, depth + 1) for x in item]
            return "[\n" + ",\n".join(rows) + "\n" + outer + "]"
        return json.dumps(item)  # a scalar, an empty container, or a list of scalars

    return write(value, 0)


def csv_text(rows: list[list[object]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def leaderboard_rows(store: Store) -> list[list[object]]:
    rows: list[list[object]] = [["rank", "player", "points", "tournaments", "removed"]]
    for rank, row in enumerate(store.leaderboard(), start=1):
        rows.append([rank, row.player, row.points, row.tournaments, int(row.removed)])
    return rows


def leaderboard_json(store: Store) -> dict[str, object]:
    header, *rows = leaderboard_rows(store)
    return {
        "tournaments": store.finished_tournaments(),
        "leaderboard": [
            {**dict(zip(header, row, strict=True)), "removed": bool(row[4])} for row in rows
        ],
    }


def player_rows(tournament: StoredTournament) -> list[list[object]]:
    """Per player of one tournament: points, matches, wins, losses, sum of match scores."""
    table: dict[str, list[int]] = {name: [0, 0, 0, 0] for name in tournament.points}
    for match in tournament.matches:
        for me, my_hp, my_score, their_hp in (
            (match.first, match.first_hp, match.first_score, match.second_hp),
            (match.second, match.second_hp, match.second_score, match.first_hp),
        ):
            row = table[me]
            row[0] += 1
            row[1] += their_hp == 0
            row[2] += my_hp == 0
            row[3] += my_score
    rows: list[list[object]] = [["player", "points", "matches", "won", "lost", "total_score"]]
    for name, points in sorted(tournament.points.items(), key=lambda item: (-item[1], item[0])):
        rows.append([name, points, *table[name]])
    return rows


_MATCH_FIELDS = (
    "id", "first", "second", "first_hp", "second_hp", "first_score", "second_score",
    "turns_played",
)  # fmt: skip


def tournament_json(tournament: StoredTournament) -> dict[str, object]:
    header, *rows = player_rows(tournament)
    return {
        "number": tournament.number,
        "deck_seed": tournament.seed,
        "rules": dataclasses.asdict(tournament.rules),
        "players": [dict(zip(header, row, strict=True)) for row in rows],
        "matches": [
            dict(zip(_MATCH_FIELDS, dataclasses.astuple(match)[:8], strict=True))
            for match in tournament.matches
        ],
    }


def format_tournament(tournament: StoredTournament, with_matches: bool = False) -> str:
    """One tournament's table per player and, if asked, one line per match."""
    lines = [
        f"Tournament {tournament.number}: deck seed {tournament.seed}, "
        f"{len(tournament.matches)} matches of {tournament.rules.turns_per_match} turns",
        f"{'player':<32} {'points':>12} {'matches':>7} {'won':>4} {'lost':>4} {'total score':>11}",
    ]
    for name, points, played, won, lost, total in player_rows(tournament)[1:]:
        lines.append(f"{name:<32} {points:>12.2f} {played:>7} {won:>4} {lost:>4} {total:>11}")
    if with_matches:
        lines.append("")
        lines.append(f"{'match':>7}  {'first':<20} {'second':<20} {'HP':>7} {'score':>9} turns")
        for m in tournament.matches:
            hp, score = f"{m.first_hp}-{m.second_hp}", f"{m.first_score} {m.second_score}"
            lines.append(
                f"{m.match_id:>7}  {m.first:<20} {m.second:<20} {hp:>7} {score:>9}"
                f" {m.turns_played:>5}"
            )
    return "\n".join(lines)


def format_results(store: Store) -> str:
    """The leaderboard, then the last finished tournament's table."""
    finished = store.finished_tournaments()
    lines = [f"Leaderboard after {len(finished)} tournament(s)"]
    lines.append(f"{'rank':>4}  {'player':<32} {'points':>12} {'tournaments':>11}")
    for rank, row in enumerate(store.leaderboard(), start=1):
        name = f"{row.player} (removed)" if row.removed else row.player
        lines.append(f"{rank:>4}  {name:<32} {row.points:>12.2f} {row.tournaments:>11}")
    if not finished:
        return "\n".join(lines)
    lines.append("")
    lines.append(format_tournament(store.tournament(finished[-1])))
    return "\n".join(lines)


def _replayed(stored: StoredMatch) -> list[tuple[int, str, str, str, str]]:
    """Each action with its answer as the player saw it, and the health at the turn's start:
    (turn, player, command line, answer, HP). Played again through the rules engine, which
    gives back the drawn cards that the log does not store."""
    result = stored.result
    names = (result.first, result.second)
    state = MatchState(stored.deck, stored.rules)
    rows = []
    for action in result.actions():
        state.advance_to(action.turn)
        hp = f"{state.hp[0]}-{state.hp[1]}"
        try:
            drawn = ACTIONS[action.command](state, action.args)
            answer = "OK" if drawn is None else f"OK {drawn.line}"
        except GameError as error:
            answer = f"ERR {error.code.value} {error.code.name}"
        if action.code != 0:  # what was stored is what the player was told
            answer = f"ERR {action.code} {ErrorCode(action.code).name}"
        line = " ".join(map(str, (action.command, *action.args)))
        rows.append((action.turn, names[action.side], line, answer, hp))
    return rows


def match_rows(stored: StoredMatch) -> list[list[object]]:
    rows: list[list[object]] = [["turn", "player", "command", "answer", "hp_at_turn_start"]]
    rows.extend(list(row) for row in _replayed(stored))
    return rows


def match_json(stored: StoredMatch) -> dict[str, object]:
    result = stored.result
    header, *rows = match_rows(stored)
    return {
        **dict(zip(_MATCH_FIELDS, dataclasses.astuple(result)[:8], strict=True)),
        "tournament": stored.tournament,
        "deck_seed": stored.seed,
        "actions": [dict(zip(header, row, strict=True)) for row in rows],
    }


def format_match(stored: StoredMatch) -> str:
    """A match turn by turn: the turns with actions, each headed by who moved and the health
    of (first, second) at its start, then every command and its answer."""
    r = stored.result
    lines = [
        f"Match {r.match_id}, tournament {stored.tournament} (deck seed {stored.seed}): "
        f"{r.first} (first) against {r.second}, {stored.rules.turns_per_match} turns;"
        f" HP is {r.first}-{r.second} at the start of each turn"
    ]
    turn = -1
    for action_turn, player, line, answer, hp in _replayed(stored):
        if action_turn != turn:
            turn = action_turn
            lines.append(f"turn {turn:>3}  {player}  HP {hp}")
        lines.append(f"    {line:<24} {answer}")
    lines.append(
        f"end after {r.turns_played} turns: {r.first} HP {r.first_hp} score {r.first_score}, "
        f"{r.second} HP {r.second_hp} score {r.second_score}"
    )
    return "\n".join(lines)
