"""``locm ladder export``: a LOCM ladder's final standings (or its board) as files.

``standings.csv`` and ``standings.json`` (:mod:`cardarena.ladder.export`), and the
tournament report's page (:func:`cardarena.tournaments.report.html.report_page`: ratings,
win matrix, every game with why it ended) as ``index.html``, each game linked to its replay
viewer page ``games/N.html`` (N: the game's id on the ladder). The database is opened
read-only: an export is safe while the server runs.

What a bot printed on stderr is its owner's to read on the ladder: the exported viewer pages
leave it out unless asked (``--with-stderr``, for the organisers' own copy).
"""

from __future__ import annotations

import os
import tempfile

from ...ladder.export import DEFAULT_MAX_GAMES, collect, records, write_standings
from ...ladder.store import reading
from ...pages import write_page
from ...tournaments.report.html import Snapshot, report_page
from ...tournaments.report.model import build_report, with_causes
from ...tournaments.store import StoreError
from ..referee.causes import stored_cause
from ..viewer.frames import build_frames
from ..viewer.page import render_viewer
from .web import redact_stderr

GAME = "LOCM"
BACKLINK = ("../index.html", "← standings")


def export(
    db: str,
    directory: str,
    *,
    board: bool = False,
    max_games: int = DEFAULT_MAX_GAMES,
    with_stderr: bool = False,
) -> list[str]:
    """Write the export of the ladder ``db`` into ``directory``; the files written.
    StoreError (one line) for a database that is not a ladder or a folder that cannot be
    written; a game whose log does not replay is listed without a page and named at the end."""
    games_dir = os.path.join(directory, "games")
    if os.path.islink(directory) or os.path.islink(games_dir):
        raise StoreError(f"{directory}: a symbolic link; the export is written only into a "
                         "folder of its own")  # fmt: skip
    with reading(db) as store:
        data = collect(store, board=board, max_games=max_games)
        try:
            os.makedirs(games_dir, exist_ok=True)
            written = write_standings(data, directory)
            refused: dict[int, str] = {}
            for game in data.games:
                found = store.game(game.id)
                log = None if found is None else found[1]
                if log is None:
                    continue
                try:
                    shown = log if with_stderr else redact_stderr(log, frozenset((0, 1)))
                    page = render_viewer(build_frames(shown), backlink=BACKLINK)
                except ValueError as error:  # a log that does not replay: one line
                    refused[game.id] = str(error)
                    continue
                path = os.path.join(games_dir, f"{game.id}.html")
                write_page(path, page)
                written.append(path)
            names, played, numbers = records(data)
            played = with_causes(played, stored_cause)
            settings = {**data.meta, "standings": data.source}
            if data.final is not None:
                settings["final"] = str(data.final["id"])
            report = build_report(names, played, settings, numbers)
            snapshot = Snapshot(report, played, numbers, settings)
            pictures = _pictures(snapshot, directory)
            index = os.path.join(directory, "index.html")
            write_page(index, report_page(snapshot, game=GAME, pictures=pictures,
                                          unlinked=refused))  # fmt: skip
            written.insert(2, index)
        except OSError as error:
            raise StoreError(f"cannot write the export in {directory}: "
                             f"{error.strerror or error}") from None  # fmt: skip
    if refused:
        numbers_text = ", ".join(map(str, sorted(refused)))
        raise StoreError(f"no viewer page for games {numbers_text} (listed in index.html "
                         f"without a link): {next(iter(refused.values()))}")  # fmt: skip
    return written


def _pictures(snapshot: Snapshot, directory: str) -> bool:
    """The report's PNG pictures (matrix, ratings), where matplotlib is installed."""
    if not snapshot.report.games:
        return False
    try:
        from ...tournaments.report.png import write_pictures

        with tempfile.TemporaryDirectory(prefix=".pictures-", dir=directory) as scratch:
            for path in write_pictures(snapshot.report, scratch):
                os.replace(path, os.path.join(directory, os.path.basename(path)))
    except ImportError:
        return False
    return True
