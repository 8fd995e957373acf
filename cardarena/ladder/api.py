"""The ladder's store seen as its JSON API: the dictionaries that ``/api/...`` answers and that
the pages are drawn from (docs/ladder.md lists every field).

The store (:mod:`.store`) keeps rows; this module shapes them for people and programs: times
as ISO 8601 UTC, a game's seats as bots with their owners (the server hides a seat's stderr
from everyone but its owner), the board with the Bradley–Terry fit over all rated games
(:func:`.ratings.board_fit_counts`, recomputed only when a game was added; in the server at most
every few seconds, in the background).
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from .ratings import FitRow, board_fit_counts
from .store import BoardRow, GameRow, LadderError, LadderStore, User, VersionRow

LABEL = re.compile(r"(?P<bot>.+)\.v(?P<version>[0-9]+)")
"""How the store names a seat: ``bot.vN``; anything else is a built-in opponent."""


def iso_time(seconds: float | None) -> str | None:
    """Unix seconds as ``2026-11-29T05:10:00Z`` (None stays None)."""
    if seconds is None:
        return None
    return datetime.fromtimestamp(float(seconds), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def seat(label: str, owners: Mapping[str, str]) -> dict[str, Any]:
    """A seat of a game, from the store's label: the bot, its version number and owner (a
    built-in opponent has neither version nor owner)."""
    found = LABEL.fullmatch(label)
    if found is None or found["bot"] not in owners:
        return {"bot": label, "version": None, "owner": None, "builtin": True}
    bot = found["bot"]
    return {"bot": bot, "version": int(found["version"]), "owner": owners[bot], "builtin": False}


def game_json(row: GameRow, owners: Mapping[str, str]) -> dict[str, Any]:
    """One game as the API shows it."""
    return {
        "id": row.id,
        "kind": row.kind,
        "state": row.state,
        "pair": row.pair,
        "seed": row.seed,
        "seats": [seat(row.first, owners), seat(row.second, owners)],
        "winner": row.winner,
        "result": row.result,
        "end_reason": row.end_reason,
        "error_seat": row.error_seat,
        "error_kind": row.error_kind,
        "detail": row.detail,
        "turns": row.turns,
        "duration_s": row.duration_s,
        "rated": row.rated,
        "replay": row.replay,
        "queued": iso_time(row.queued_at),
        "finished": iso_time(row.finished_at),
        "viewer": f"/games/{row.id}" if row.state == "done" else None,
    }


def rating_json(mu: float, sigma: float, conservative: float) -> dict[str, float]:
    return {"mu": round(mu, 3), "sigma": round(sigma, 3), "conservative": round(conservative, 3)}


def board_json(row: BoardRow, fit: Mapping[str, FitRow], rank: int | None) -> dict[str, Any]:
    """One row of the leaderboard: the store's row, the fitted rating and its interval."""
    fitted = fit.get(row.name)
    return {
        "rank": rank,
        "name": row.name,
        "owner": row.owner,
        "status": row.status,
        "reason": row.reason,
        "version": row.version,
        "language": row.language,
        "games": row.games,
        "wins": row.wins,
        "draws": row.draws,
        "losses": row.losses,
        "win_rate": row.win_rate,
        "rating": rating_json(row.mu, row.sigma, row.rating),
        "elo": None if fitted is None or not fitted.games else {
            "value": round(fitted.elo, 1), "low": round(fitted.low, 1),
            "high": round(fitted.high, 1),
        },
        "tied_with": [] if fitted is None else list(fitted.tied_with),
    }  # fmt: skip


def version_json(row: VersionRow) -> dict[str, Any]:
    """One version of a bot; ``build_log`` is for its owner only (the server removes it)."""
    return {
        "id": row.id,
        "version": row.number,
        "language": row.language,
        "filename": row.filename,
        "status": row.status,
        "reason": row.reason,
        "submitted": iso_time(row.created),
        "games": row.rated_games,
        "rating": rating_json(row.mu, row.sigma, row.rating),
        "build_log": row.build_log,
    }


class StoreData:
    """:class:`cardarena.ladder.server.LadderData` over a :class:`LadderStore`.

    ``refresh_s`` 0: the board's fit is computed again, at once, whenever the store changed.
    Above 0 (the server's setting): a changed store's fit is computed again in a background
    thread, at most once per ``refresh_s``, and the board shows the previous fit meanwhile:
    at 100,000 games a fit costs a tenth of a second or more, which would stall every page
    and watcher behind it each time a game ends."""

    def __init__(self, store: LadderStore, refresh_s: float = 0.0) -> None:
        self.store = store
        self.refresh_s = refresh_s
        self._fit: tuple[Any, dict[str, FitRow]] | None = None
        self._fit_lock = threading.Lock()
        self._refreshing = False
        self._refreshed_at = -math.inf

    # ------------------------------------------------------------ reads
    def state(self) -> dict[str, Any]:
        return dict(self.store.settings())

    def owners(self) -> dict[str, str]:
        """Bot name -> its owner's name."""
        return self.store.owners()

    def _fitted(self) -> tuple[Any, dict[str, FitRow]]:
        """The store's change mark and the fit of the games up to it."""
        mark = self.store.change_mark()
        names, counted = self.store.rated_counts()
        rows = board_fit_counts(names, counted) if names else []
        return mark, {row.name: row for row in rows}

    def _refresh(self) -> None:
        try:
            fitted = self._fitted()
            with self._fit_lock:
                self._fit = fitted
        finally:
            with self._fit_lock:
                self._refreshing = False

    def fit(self) -> dict[str, FitRow]:
        """The Bradley–Terry fit of the board, by bot; recomputed only when the store wrote
        something since (a game finished, a status changed)."""
        with self._fit_lock:
            current = self._fit
            if current is not None and current[0] == self.store.change_mark():
                return current[1]
            if current is not None and self.refresh_s > 0:
                now = time.monotonic()
                if not self._refreshing and now - self._refreshed_at >= self.refresh_s:
                    self._refreshing, self._refreshed_at = True, now
                    threading.Thread(target=self._refresh, name="ladder-fit", daemon=True).start()
                return current[1]
            self._fit = self._fitted()
            return self._fit[1]

    def leaderboard(self) -> list[dict[str, Any]]:
        """The board: active bots ranked first (by the conservative rating), then the others
        without a rank."""
        fit = self.fit()
        rows, rank = [], 0
        for row in self.store.leaderboard():
            if row.status == "active":
                rank += 1
            rows.append(board_json(row, fit, rank if row.status == "active" else None))
        return rows

    def bot(self, name: str) -> dict[str, Any] | None:
        page = self.store.bot(name)
        if page is None:
            return None
        board = next((row for row in self.leaderboard() if row["name"] == name), {})
        return {
            **board,
            "name": page.name,
            "owner": page.owner,
            "status": page.status,
            "reason": page.reason,
            "versions": [version_json(row) for row in reversed(page.versions)],
            "head_to_head": [asdict(row) for row in page.head_to_head],
            "ratings": [
                {"version": number, "game": game, "mu": round(mu, 3), "sigma": round(sigma, 3)}
                for number, game, mu, sigma in page.history
            ],
            "errors": dict(page.errors),
        }

    def games(self, bot: str | None, limit: int, offset: int) -> list[dict[str, Any]]:
        owners = self.owners()
        return [game_json(row, owners) for row in self.store.games(bot, limit, offset)]

    def game(self, game_id: int) -> tuple[dict[str, Any], Mapping[str, Any] | None] | None:
        found = self.store.game(game_id)
        if found is None:
            return None
        row, log = found
        return game_json(row, self.owners()), log

    def user_for_token(self, token: str) -> User | None:
        return self.store.user_for_token(token)

    def user(self, name: str) -> dict[str, Any] | None:
        person = next((user for user in self.store.users() if user.name == name), None)
        if person is None:
            return None
        bots = [row for row in self.leaderboard() if row["owner"] == name]
        return {"name": person.name, "organiser": person.organiser, "bots": bots}

    def submissions(self, user: User) -> list[dict[str, Any]]:
        """The user's submissions (every version of their bots), newest first."""
        return [
            {"id": row.id, "bot": row.bot, "version": row.number, "language": row.language,
             "filename": row.filename, "status": row.status, "reason": row.reason,
             "submitted": iso_time(row.created)}
            for row in reversed(self.store.versions()) if row.owner == user.name
        ]  # fmt: skip

    # ------------------------------------------------------------ writes
    def submit(self, user: User, bot: str, language: str, new_bot: bool, filename: str,
               data: bytes) -> dict[str, Any]:  # fmt: skip
        """Record a submission; LadderError (a ValueError: one line) when refused."""
        version = self.store.submit(user, bot, language, filename, data, new_bot=new_bot)
        row = self.store.version(version)
        number = row.number if row is not None else None
        return {"submission": version, "bot": bot, "version": number, "status": "building",
                "page": f"/bots/{bot}"}  # fmt: skip

    def set_paused(self, paused: bool) -> None:
        self.store.set_setting("paused", paused)

    def set_frozen(self, frozen: bool) -> None:
        self.store.set_setting("frozen", frozen)

    def set_bot_status(self, bot: str, status: str, reason: str) -> None:
        """The organiser's (or, to retire, the owner's) change; LadderError when it makes
        no sense (enable a bot that is not disabled, retire a retired one)."""
        current = next((row for row in self.store.leaderboard() if row.name == bot), None)
        if current is None:
            raise LadderError(f"no bot named {bot!r}")
        if status == "active" and current.status != "disabled":
            raise LadderError(f"only a disabled bot can be enabled ({bot!r} is {current.status})")
        if status == current.status:
            raise LadderError(f"{bot!r} is {current.status} already")
        if current.status == "retired":
            raise LadderError(f"{bot!r} is retired: submit a new version to bring it back")
        self.store.set_bot_status(bot, status, reason if status != "active" else None)
