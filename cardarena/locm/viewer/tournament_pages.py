"""LOCM's pages of a tournament: each stored game's viewer page, and the report with them.

``locm report --html DIR`` writes the report page (:mod:`cardarena.tournaments.report.html`)
and, for every stored game, its replay viewer page (``games/N.html``), built from the
compressed log stored with the game; ``locm serve`` serves the same pages.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from ...pages import write_page
from ...tournaments.report.html import Snapshot, game_link, read_snapshot, report_page
from ...tournaments.report.png import write_pictures
from ...tournaments.store import StoreError, reading
from ..referee.causes import stored_cause
from .frames import build_frames
from .page import render_viewer

GAME = "LOCM"
"""The report page's title names the game."""


class ViewError(ValueError):
    """Bad input to ``locm view``/``locm serve`` (no such game): one line, exit status 2."""


def stored_log(db: str, number: int) -> tuple[str, dict[str, Any]]:
    """(key, log) of game ``number`` of a tournament database, read-only."""
    with reading(db) as store:
        found = store.log_by_number(number)
        count = store.count()
    if found is None:
        raise ViewError(f"{db} has no game {number} (it holds {count} games; `locm report "
                        f"--html DIR` lists them with their numbers)")  # fmt: skip
    key, log = found
    if log is None:
        raise ViewError(f"game {number} of {db} has no stored log (the referee failed)")
    return key, log


BACKLINK = ("../index.html", "← tournament report")


def game_page(db: str, number: int) -> tuple[str, int]:
    """The viewer page of game ``number``, with a link back to the report, and the number
    of its last frame (the end: where the report's cause links to)."""
    _key, log = stored_log(db, number)
    frames = build_frames(log)
    return render_viewer(frames, backlink=BACKLINK), len(frames["frames"]) - 1


def end_link(number: int, end_frame: int) -> str:
    """The address of game ``number``'s page at its end frame, from the report page."""
    return f"games/{number}.html#frame={end_frame}"


def write_html_report(db: str, directory: str) -> list[str]:
    """Write index.html, the pictures and every game's viewer page under ``directory``;
    return what was written. Games whose log cannot be read or does not replay are listed,
    unlinked pages are not written, and a StoreError names them at the end.

    Every file is written to a new temporary file and renamed into place
    (:func:`cardarena.pages.write_page`): a symbolic link already at ``games/N.html`` is
    replaced, never followed, and a ``games`` folder that is a link is refused."""
    snapshot = read_snapshot(db, stored_cause)
    games_dir = os.path.join(directory, "games")
    if os.path.islink(games_dir):
        raise StoreError(f"{games_dir} is a symbolic link: the report is written only into "
                         "a folder of its own")  # fmt: skip
    try:
        os.makedirs(games_dir, exist_ok=True)
        written = []
        pictures = False
        if snapshot.report.games:
            try:
                _write_pictures(snapshot, directory)
                pictures = True
            except ImportError:
                pass
        refused: dict[int, str] = {}
        end_frames: dict[int, int] = {}  # each cause links to the frame its game ended on
        with reading(db) as store:
            for record in snapshot.records:
                number = snapshot.numbers[record.key]
                try:
                    found = store.log_by_number(number)
                    if found is None or found[1] is None:
                        continue
                    frames = build_frames(found[1])
                    page = render_viewer(frames, backlink=BACKLINK)
                except ValueError as error:  # StoreError, ReplayError: a one-line reason
                    refused[number] = str(error)
                    continue
                path = os.path.join(games_dir, f"{number}.html")
                write_page(path, page)
                written.append(path)
                end_frames[number] = len(frames["frames"]) - 1
        index = os.path.join(directory, "index.html")

        def cause_link(number: int) -> str:
            end = end_frames.get(number)
            return game_link(number) if end is None else end_link(number, end)

        write_page(index, report_page(snapshot, game=GAME, pictures=pictures, unlinked=refused,
                                      cause_link=cause_link))  # fmt: skip
    except OSError as error:
        raise StoreError(f"cannot write the HTML report in {directory}: {error.strerror}") from None
    if refused:
        numbers = ", ".join(map(str, sorted(refused)))
        raise StoreError(f"no page for games {numbers} of {db} (listed in index.html without "
                         f"a link): {next(iter(refused.values()))}")  # fmt: skip
    return [index, *written]


def _write_pictures(snapshot: Snapshot, directory: str) -> None:
    """The PNG pictures, drawn in a temporary folder and renamed into ``directory`` (a link
    at their names is replaced, not followed)."""
    with tempfile.TemporaryDirectory(prefix=".pictures-", dir=directory) as scratch:
        for path in write_pictures(snapshot.report, scratch):
            os.replace(path, os.path.join(directory, os.path.basename(path)))
