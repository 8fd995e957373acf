"""Crafted logs and tournament databases: one clear line, a non-zero exit, no traceback, and
bounded memory; the pages never overwrite their input or write through a planted link.

Every database here starts as a real one (two games of built-in agents) and is then altered
with SQL, as someone handing over a file could; every log is a real game's log, altered.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

from cardarena.locm.cli.tournament import print_report
from cardarena.locm.referee.replay import ReplayError, replay_lines
from cardarena.locm.viewer.frames import build_frames
from cardarena.locm.viewer.tournament_pages import game_page, write_html_report
from cardarena.tournaments.store import StoreError
from cardarena.untrusted import MAX_LOG_BYTES
from tests.locm.test_viewer_report import LOCM, Server, locm, tournament
from tests.locm.viewer_expect import played_log

MEMORY_BOUND_MB = 600
"""Peak memory of a command fed a decompression bomb (it was 2.1 GB before the cap); a
normal report with its pictures takes about 150 MB."""


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("crafted") / "t.db"
    tournament(db, 1)
    return db


def altered(database: Path, tmp_path: Path, *statements: str, params: tuple[Any, ...] = ()) -> Path:
    copy = tmp_path / "crafted.db"
    copy.write_bytes(database.read_bytes())
    with sqlite3.connect(copy) as db:
        for statement in statements:
            db.execute(statement, params if "?" in statement else ())
    return copy


def one_line(result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


def bomb(gigabytes: float = 1.0) -> bytes:
    """zlib data of a JSON log that decompresses to ``gigabytes`` of text (about 1 MB)."""
    packer = zlib.compressobj(9)
    parts = [packer.compress(b'{"outputs": {}, "summaries": ["')]
    chunk = b"x" * 2**20
    parts += [packer.compress(chunk) for _ in range(int(gigabytes * 1024))]
    parts.append(packer.compress(b'"]}') + packer.flush())
    return b"".join(parts)


CRAFTED_ROWS = [
    ("UPDATE games SET round = 'abc'", ["round = 'abc'", "want a whole number"]),
    ("UPDATE games SET winner = 5", ["winner = 5", "want 0, 1 or NULL"]),
    ("UPDATE games SET error_seat = 7", ["error_seat = 7"]),
    ("UPDATE games SET first = X'00'", ["first = b'\\x00'", "want text"]),
    ("UPDATE games SET second = first", ["another bot than first"]),
    ("UPDATE games SET turns = -3", ["turns = -3"]),
    ("INSERT INTO bots VALUES (X'01', 'x')", ["the bots table", "not text"]),
]


@pytest.mark.parametrize(("statement", "words"), CRAFTED_ROWS)
def test_crafted_rows_are_named_by_the_report(
    database: Path, tmp_path: Path, statement: str, words: list[str]
) -> None:
    """What every form of ``locm report`` reads first (the one-line reason the case below
    prints through each of them), in-process."""
    db = altered(database, tmp_path, statement)
    with pytest.raises(StoreError) as refused:
        print_report(str(db), out_dir=str(tmp_path / "out"))
    assert all(word in str(refused.value) for word in words), refused.value
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["report", "report --html", "report --json"])
def test_a_crafted_row_is_one_line(database: Path, tmp_path: Path, command: str) -> None:
    statement, words = CRAFTED_ROWS[1]
    db = altered(database, tmp_path, statement)
    extra = ["--html", str(tmp_path / "html")] if "html" in command else []
    extra += ["--json"] if "json" in command else []
    one_line(locm("report", "--db", str(db), "--out", str(tmp_path / "out"), *extra), *words)


CRAFTED_BLOBS = {
    "not zlib": (b"\x00\x11\x22\x33", ["not zlib-compressed data"]),
    "a list": (zlib.compress(b"[1, 2, 3]"), ["is not a game log"]),
    "binary": (zlib.compress(b"\xff\xfe garbage"), ["binary, not UTF-8"]),
    "invalid": (zlib.compress(b"{" * 10), ["invalid JSON"]),
    "many items": (zlib.compress(b"[" * 250_000 + b"]" * 250_000), ["items"]),
    "truncated": (zlib.compress(b'{"outputs": "x"')[:-4], ["truncated"]),
}


def html_report_without(html: Path) -> None:
    """The report and game 2's page are written, game 1 is listed without a link."""
    index = (html / "index.html").read_text()
    assert "<td>game 1</td>" in index and '<a href="games/2.html">' in index
    assert sorted(p.name for p in (html / "games").iterdir()) == ["2.html"]


@pytest.mark.parametrize(("blob", "words"), CRAFTED_BLOBS.values(), ids=CRAFTED_BLOBS.keys())
def test_a_crafted_log_blob_is_named_by_the_pages(
    database: Path, tmp_path: Path, blob: bytes, words: list[str]
) -> None:
    """What ``locm report --html`` and ``locm view --game`` say of a stored log that is not
    one (the case below runs the commands, each printing it as one line), in-process."""
    db = altered(database, tmp_path, "UPDATE games SET log = ? WHERE rowid = 1", params=(blob,))
    html = tmp_path / "html"
    with pytest.raises(StoreError) as refused:
        write_html_report(str(db), str(html))
    assert "no page for games 1" in str(refused.value), refused.value
    assert all(word in str(refused.value) for word in words), refused.value
    html_report_without(html)
    with pytest.raises(StoreError) as refused:
        game_page(str(db), 1)
    assert all(word in str(refused.value) for word in words), refused.value


def test_a_crafted_log_blob_is_one_line(database: Path, tmp_path: Path) -> None:
    blob, words = CRAFTED_BLOBS["binary"]
    db = altered(database, tmp_path, "UPDATE games SET log = ? WHERE rowid = 1", params=(blob,))
    # the text report never reads the logs: it still works
    assert locm("report", "--db", str(db), "--out", str(tmp_path / "out")).returncode == 0
    html = tmp_path / "html"
    result = locm("report", "--db", str(db), "--html", str(html))
    one_line(result, "no page for games 1", *words)
    html_report_without(html)
    one_line(locm("view", "--db", str(db), "--game", "1", "-o", str(tmp_path / "g.html")), *words)
    assert not (tmp_path / "g.html").exists()


def test_a_decompression_bomb_is_refused_in_bounded_memory(database: Path, tmp_path: Path) -> None:
    blob = bomb(1.0)
    assert len(blob) < 2 * 2**20
    db = altered(database, tmp_path, "UPDATE games SET log = ? WHERE rowid = 1", params=(blob,))
    report = ["report", "--db", str(db), "--html", str(tmp_path / "html")]
    view = ["view", "--db", str(db), "--game", "1", "-o", str(tmp_path / "g.html")]
    for args in (report, view):
        process = subprocess.Popen([*LOCM, *args], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)  # fmt: skip
        assert process.stderr is not None
        err = process.stderr.read()
        _pid, status, usage = os.wait4(process.pid, 0)
        result = subprocess.CompletedProcess(args, os.waitstatus_to_exitcode(status), "", err)
        one_line(result, f"more than {MAX_LOG_BYTES // 2**20} MiB once decompressed")
        assert usage.ru_maxrss / 1024 < MEMORY_BOUND_MB, args
    # locm serve: that game's page is a 404 saying why, the server stays small and serves on
    server = Server(db)
    try:
        import urllib.error
        import urllib.request

        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(server.url + "games/1.html", timeout=120)
        assert refused.value.code == 404
        assert b"MiB once decompressed" in refused.value.read()
        with urllib.request.urlopen(server.url + "games/2.html", timeout=120) as answer:
            assert b'id="game-data"' in answer.read()
        status = Path(f"/proc/{server.process.pid}/status").read_text()
        peak_kb = int(next(line for line in status.splitlines()
                           if line.startswith("VmHWM:")).split()[1])  # fmt: skip
        assert peak_kb / 1024 < MEMORY_BOUND_MB
    finally:
        assert server.stop() == 0


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = played_log(tmp_path_factory.mktemp("log"), "1.2")
    return json.loads(path.read_text())  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        # the rest of cardarena's own entries: test_an_entry_of_another_shape_is_named
        (lambda log: log["cardarena"].update(league=float("inf")), ["league is inf"]),
        (lambda log: log.update(scores={"0": 7, "1": 7}), ["does not replay"]),
        # an SDK entry of another shape (the rest: test_an_entry_of_another_shape_is_named)
        (lambda log: log.update(outputs="x"), ["'outputs' is not a JSON object"]),
    ],
)
def test_a_crafted_log_file_is_one_line(
    log: dict[str, Any], tmp_path: Path, change: Any, words: list[str]
) -> None:
    crafted = json.loads(json.dumps(log))
    change(crafted)
    path = tmp_path / "crafted.json"
    path.write_text(json.dumps(crafted))  # Infinity is what Python writes for inf
    one_line(locm("view", str(path)), *words)
    if words != ["does not replay"]:
        one_line(locm("replay", str(path)), *words)
    else:  # locm replay shows the game, then says on stderr that it differs: exit 1
        differs = locm("replay", str(path))
        assert differs.returncode == 1 and "Traceback" not in differs.stderr
        assert differs.stdout.splitlines()[-1].endswith("replay differs!")
        said = "locm: the replay differs from the log: the log says scores 7 7, the engine gives"
        assert re.fullmatch(rf"{said} -?[01] -?[01]\n", differs.stderr), differs.stderr
    assert not (tmp_path / "crafted.html").exists()


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda log: log["cardarena"].update(league="x"), ["league is 'x'"]),
        (lambda log: log["cardarena"].update(players=["one"]), ["exactly two players"]),
        (lambda log: log["cardarena"].update(players=[[1], {}]), ["two names"]),
        (lambda log: log.update(cardarena=[1]), ["not a JSON object"]),
        (lambda log: log.update(outputs="x"), ["'outputs' is not a JSON object"]),
        (lambda log: log.update(outputs=None), ["'outputs' is not a JSON object"]),
        (lambda log: log["outputs"].update({"0": None}), ["outputs['0'] is not a list"]),
        (lambda log: log["outputs"]["1"].append(5), ["outputs['1'] holds something else"]),
        (lambda log: log.update(errors=[5]), ["'errors' is not a JSON object"]),
        (lambda log: log["errors"].update({"0": {"a": 1}}), ["errors['0'] is not a list"]),
        (lambda log: log.update(scores="x"), ["'scores' is not a JSON object of whole numbers"]),
        (lambda log: log.update(scores={"0": 1.5}), ["'scores' is not a JSON object of whole"]),
        (lambda log: log.update(gameParameters=5), ["'gameParameters' is not a list of texts"]),
        (lambda log: log.update(summaries=[{}]), ["'summaries' is not a list of texts"]),
    ],
)
def test_an_entry_of_another_shape_is_named(
    log: dict[str, Any], change: Any, words: list[str]
) -> None:
    """What `locm view` and `locm replay` say (one line: the case above runs them) for a log
    whose entries are not of the GameResult's shape (cardarena's own, or the SDK's), before
    any replay reads them: for the SDK's, it was a Python error from inside the replay, and
    a traceback from `locm replay`."""
    crafted = json.loads(json.dumps(log))
    change(crafted)
    for replay in (build_frames, lambda log: list(replay_lines(log))):
        with pytest.raises(ReplayError) as refused:
            replay(crafted)
        assert all(word in str(refused.value) for word in words), refused.value


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"outputs": ' + "[" * 250_000 + "]" * 250_000 + "}", ["items"]),
        ('{"outputs": ' + "[" * 5_000 + "]" * 5_000 + "}", ["nested too deeply"]),
        ('{"outputs": {}, "x": "' + "y" * (MAX_LOG_BYTES + 1) + '"}', ["MiB of JSON"]),
    ],
    ids=["many items", "deep", "huge"],  # (the test's name goes into the environment)
)
def test_a_huge_or_deep_log_file_is_one_line(tmp_path: Path, text: str, words: list[str]) -> None:
    path = tmp_path / "crafted.json"
    path.write_text(text)
    one_line(locm("view", str(path)), "is not a game log", *words)


def test_view_never_overwrites_its_input(log: dict[str, Any], tmp_path: Path) -> None:
    source = tmp_path / "game.html"  # a log whose name ends in .html: the default output
    source.write_text(json.dumps(log))
    before = source.read_bytes()
    one_line(locm("view", str(source)), "would overwrite", "-o OUT.html")
    link = tmp_path / "link.html"
    link.symlink_to(source)
    one_line(locm("view", str(source), "-o", str(link)), "would overwrite")
    assert source.read_bytes() == before
    result = locm("view", str(source), "-o", str(tmp_path / "page.html"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "page.html").read_text().startswith("<!DOCTYPE html>")


def test_report_html_never_writes_through_a_link(database: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    out = tmp_path / "html"
    (out / "games").mkdir(parents=True)
    for name in ("games/1.html", "index.html", "matrix.png"):
        (out / name).symlink_to(victim)
    result = locm("report", "--db", str(database), "--html", str(out))
    assert result.returncode == 0, result.stderr
    assert victim.read_text() == "keep me\n"
    for name in ("games/1.html", "index.html", "matrix.png"):
        assert not (out / name).is_symlink() and (out / name).stat().st_size > 0
    assert not [p for p in out.rglob("*") if p.name.startswith(".")]  # no temporary left
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "games").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    one_line(locm("report", "--db", str(database), "--html", str(linked)), "symbolic link")
    assert not (tmp_path / "elsewhere").exists()


def test_view_still_writes_to_standard_output(log: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    path.write_text(json.dumps(log))
    result = subprocess.run([*LOCM, "view", str(path), "-o", "/dev/stdout"], capture_output=True,
                            text=True, timeout=180, check=False)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("<!DOCTYPE html>")
    assert Path("/dev/stdout").is_symlink() or sys.platform != "linux"


def test_serve_answers_a_crafted_database_with_its_reason(database: Path, tmp_path: Path) -> None:
    import urllib.error
    import urllib.request

    db = altered(database, tmp_path, "UPDATE games SET winner = 5 WHERE rowid = 2")
    server = Server(db)
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(server.url, timeout=120)
        assert refused.value.code == 503
        assert refused.value.headers["Content-Type"].startswith("text/plain")
        body = refused.value.read().decode()
        assert "winner = 5" in body and "Traceback" not in body
        assert len(body.strip().splitlines()) == 1
    finally:
        assert server.stop() == 0
