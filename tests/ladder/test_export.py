"""``locm ladder export``: the board's standings, then a final's, as CSV, JSON and the
report page with each game's viewer page; from a database a writer holds open (read-only:
nothing written to it); stderr and hostile text kept out of harm's way; bad input in one line."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from cardarena.ladder.export import neutral
from cardarena.ladder.final import FinalProgramme, start_final
from cardarena.ladder.store import LadderStore
from cardarena.locm.cli.main import main
from cardarena.locm.ladder.export import export

from .server_fixture import SECRET_STDERR, _played_log, _with_stderr, a_record, fill

HOSTILE = "=HYPERLINK(\"http://evil\")<script>alert('x')</script>"


def locm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cardarena.locm", "ladder", *args],
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_neutral_cells() -> None:
    assert [neutral(c) for c in ("=1+1", "+1", "-x", "@a", "\tx", "ok", -12.5, 3)] == [
        "'=1+1", "'+1", "'-x", "'@a", "'\tx", "ok", -12.5, 3,
    ]  # fmt: skip


def test_export_board_then_final(tmp_path: Path) -> None:
    db = tmp_path / "ladder.db"
    store = LadderStore(str(db), lock=True)  # the writer (the server) keeps it open
    try:
        ladder = fill(store)
        store.configure(game="locm", version="1.5")
        # a third bot, disabled with a reason a spreadsheet would run
        user = ladder.users["olga"]
        version = store.submit(user, "gamma", "python", "bot.py", b"#", new_bot=True)
        store.record_build(version, True, "ok", "builtin:pass", None)
        store.set_status(version, "disabled", HOSTILE)

        board = tmp_path / "board"
        written = export(str(db), str(board))
        assert {os.path.basename(p) for p in written[:3]} == {
            "standings.csv", "standings.json", "index.html"}  # fmt: skip
        with open(board / "standings.csv", encoding="utf-8") as file:
            rows = list(csv.DictReader(file))
        assert [r["bot"] for r in rows] == ["alpha", "beta", "gamma"]
        assert rows[0]["games"] == "4" and rows[0]["wins"] == "4"
        assert rows[2]["reason"] == "'" + HOSTILE  # neutralised
        data = json.loads((board / "standings.json").read_text())
        assert data["source"] == "board" and data["final"] is None
        assert data["standings"][2]["reason"] == HOSTILE  # JSON keeps it as it is
        assert sorted(g["id"] for g in data["games"]) == sorted(ladder.games)
        index = (board / "index.html").read_text()
        for game in ladder.games:
            assert f'href="games/{game}.html"' in index
            page = (board / "games" / f"{game}.html").read_text()
            assert SECRET_STDERR not in page and "alpha thinks" not in page
        assert "<script>alert" not in index

        # a final between alpha and beta: two pairs, alpha wins every game
        start_final(store, top=2, budget=4)
        log = _played_log(21)
        programme, rng = FinalProgramme(), random.Random(3)
        for _ in range(4):
            game = store.lease("test")
            if game is None:
                assert programme.queue_games(store, rng)
                game = store.lease("test")
            assert game is not None and game.kind == "final"
            alpha = 0 if game.first.startswith("alpha.") else 1
            record = dataclasses.replace(a_record(game.id, game.seed, alpha),
                                         log=_with_stderr(log, alpha))  # fmt: skip
            store.finish(game.id, record)
        assert not programme.queue_games(store, rng)  # the budget is spent: done
        before = db.read_bytes(), (tmp_path / "ladder.db-wal").read_bytes()

        final = tmp_path / "final"
        answer = locm("export", "--db", str(db), "--out", str(final), "--with-stderr")
        assert answer.returncode == 0, answer.stderr
        assert answer.stdout.strip() == str(final / "index.html")
        assert (db.read_bytes(), (tmp_path / "ladder.db-wal").read_bytes()) == before
        data = json.loads((final / "standings.json").read_text())
        assert data["source"] == "final" and data["final"]["state"] == "done"
        assert [r["bot"] for r in data["standings"]] == ["alpha", "beta"]
        assert data["standings"][0]["wins"] == 4 and data["standings"][1]["losses"] == 4
        assert len(data["games"]) == 4 and {g["kind"] for g in data["games"]} == {"final"}
        with open(final / "standings.csv", encoding="utf-8") as file:
            assert [r["bot"] for r in csv.DictReader(file)] == ["alpha", "beta"]
        index = (final / "index.html").read_text()
        pages = sorted((final / "games").iterdir())
        assert len(pages) == 4 and all(f'href="games/{p.name}"' in index for p in pages)
        assert "alpha thinks" in pages[0].read_text()  # --with-stderr: the organisers' copy
    finally:
        store.close()


def test_export_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all" * 100)
    assert main(["ladder", "export", "--db", str(junk), "--out", str(tmp_path / "out")]) == 2
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and "not a ladder database" in said, said
    missing = str(tmp_path / "missing.db")
    assert main(["ladder", "export", "--db", missing, "--out", str(tmp_path / "o")]) == 2
    assert "no ladder database" in capsys.readouterr().err
    with LadderStore(str(tmp_path / "empty.db")):
        pass
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ValueError, match="symbolic link"):
        export(str(tmp_path / "empty.db"), str(tmp_path / "link"))
    assert not list((tmp_path / "elsewhere").iterdir())
