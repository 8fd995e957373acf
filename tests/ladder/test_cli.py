"""``locm ladder user add`` and ``locm ladder submit`` as people run them: real processes, a
real ladder server on loopback, a real SQLite file. One line on stderr for every refusal:
exit status 2 for a usage error, 1 when the server refuses the upload (with its reason)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("aiohttp")

from cardarena.ladder.store import LadderStore
from cardarena.locm.cli.ladder import TOKEN_VARIABLE
from cardarena.locm.cli.main import main
from tests.ladder.server_fixture import MAX_UPLOAD, TIMEOUT_S, Ladder, serve

ROOT = Path(__file__).resolve().parents[2]
LOCM = [sys.executable, "-m", "cardarena.locm"]


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ladder]:
    yield from serve(tmp_path_factory.mktemp("ladder"))


def locm(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != TOKEN_VARIABLE}
    environment |= {"PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([*LOCM, *args], capture_output=True, text=True, timeout=TIMEOUT_S,
                          cwd=ROOT, env=environment, check=False)  # fmt: skip


def test_user_add_and_token(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "ladder.db")
    done = locm("ladder", "user", "add", "carol", "--db", db)
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip()
    assert done.stdout == token + "\n" and len(token) >= 32
    assert "only its hash is stored" in done.stderr
    with LadderStore(db) as store:
        user = store.user_for_token(token)
        assert user is not None and (user.name, user.organiser) == ("carol", False)
    assert main(["ladder", "user", "add", "carol", "--db", db]) == 2
    assert capsys.readouterr() == ("", "locm: error: there is already a user named 'carol'\n")
    assert main(["ladder", "user", "token", "carol", "--db", db]) == 0
    renewed = capsys.readouterr().out.strip()
    with LadderStore(db) as store:
        assert store.user_for_token(token) is None
        assert store.user_for_token(renewed) == user
    assert main(["ladder", "user", "token", "nobody", "--db", db]) == 2
    assert capsys.readouterr().err == "locm: error: no user named 'nobody'\n"


def test_submit_prints_the_submission_id(ladder: Ladder, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    source = tmp_path / "bot.py"
    source.write_text("print('PASS')\n")
    done = locm("ladder", "submit", "--server", ladder.base, "--name", "theta", "--language",
                "python", "--new-bot", str(source),
                env={TOKEN_VARIABLE: ladder.tokens["bob"]})  # fmt: skip
    assert done.returncode == 0, done.stderr
    version = ladder.store.version(int(done.stdout))
    assert version is not None and (version.bot, version.owner) == ("theta", "bob")
    assert f"{ladder.base}bots/theta" in done.stderr
    again = main(["ladder", "submit", "--server", ladder.base.rstrip("/"), "--token",
                  ladder.tokens["bob"], "--name", "theta", "--language", "python",
                  str(source)])  # fmt: skip
    assert again == 0
    printed = capsys.readouterr().out
    assert ladder.store.version(int(printed)).number == 2  # type: ignore[union-attr]


def test_a_refused_upload_says_why_on_one_line(ladder: Ladder, tmp_path: Path) -> None:
    source = tmp_path / "bot.py"
    source.write_text("print('PASS')\n")
    base = ["ladder", "submit", "--server", ladder.base, "--language", "python", str(source)]
    wrong = locm(*base, "--name", "alpha", "--token", "not-a-token")
    assert wrong.returncode == 1 and wrong.stdout == ""
    assert wrong.stderr == ("locm: refused (401): unknown token (the line that locm ladder "
                            "user add printed)\n")  # fmt: skip


def test_the_servers_reasons(ladder: Ladder, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    source = tmp_path / "bot.py"
    source.write_text("print('PASS')\n")
    base = ["ladder", "submit", "--server", ladder.base, "--language", "python", "--token",
            ladder.tokens["bob"]]  # fmt: skip
    assert main([*base, "--name", "alpha", str(source)]) == 1
    assert capsys.readouterr().err == (
        "locm: refused (400): the bot 'alpha' belongs to another participant\n"
    )
    source.write_bytes(b"#" * (MAX_UPLOAD + 1))
    assert main([*base, "--name", "iota", "--new-bot", str(source)]) == 1
    said = capsys.readouterr().err
    assert said.startswith("locm: refused (413): ") and said.count("\n") == 1


def test_submit_usage_errors(ladder: Ladder, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str],
                             monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.delenv(TOKEN_VARIABLE, raising=False)

    def submit(*args: str) -> tuple[int, str]:
        status = main(["ladder", "submit", "--name", "kappa", "--language", "python", *args])
        captured = capsys.readouterr()
        assert captured.out == ""
        return status, captured.err

    assert submit("--server", ladder.base, str(tmp_path / "bot.py")) == (
        2, f"locm: error: no token: give --token TOKEN or set {TOKEN_VARIABLE} (the line that "
        "locm ladder user add printed)\n",
    )  # fmt: skip
    status, said = submit("--server", ladder.base, "--token", "t", str(tmp_path / "nothing.py"))
    assert status == 2 and said.startswith("locm: error: cannot read ") and "No such" in said
    status, said = submit("--server", "ftp://x", "--token", "t", str(tmp_path))
    assert status == 2 and "not an http(s) address" in said
    status, said = submit("--server", ladder.base, "--token", "t", str(tmp_path))
    assert status == 2 and "not a file" in said
    assert submit("--token", "t", str(tmp_path))[0] == 2  # no --server


def test_every_documented_ladder_command_parses() -> None:
    """The walkthroughs' ``locm ladder`` lines are commands this ``locm`` takes as written."""
    from cardarena.locm.cli.main import build_parser

    commands = []
    for doc in (ROOT / "docs" / "ladder.md", ROOT / "README.md"):
        for line in doc.read_text(encoding="utf-8").splitlines():
            for part in line.split("&&"):
                if part.strip().startswith("locm ladder "):
                    commands.append(shlex.split(part.split("#", 1)[0])[1:])
    assert len(commands) >= 6
    parser = build_parser()
    for words in commands:
        args = parser.parse_args(words)
        assert args.run is not None, words


def _anchors(markdown: Path) -> set[str]:
    """The anchors GitHub gives a file's headings (lower case, punctuation dropped, spaces to -)."""
    anchors = set()
    for line in markdown.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


def test_the_ladder_docs_links_lead_to_sections_that_exist() -> None:
    """Every ``(#section)`` link of the ladder's docs, here or into another doc, has its heading."""
    for doc in (ROOT / "docs" / "ladder.md", ROOT / "docs" / "security.md", ROOT / "README.md"):
        text = doc.read_text(encoding="utf-8")
        links = re.findall(r"\]\(([\w./-]*\.md)?#([\w-]+)\)", text)
        assert len(links) > 5, doc
        for target, anchor in links:
            page = (doc.parent / target).resolve() if target else doc
            assert anchor in _anchors(page), f"{doc.name}: {target}#{anchor}"


def test_a_bad_languages_file_stops_serve_before_it_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    languages = tmp_path / "languages.toml"
    languages.write_text("[languages.go]\nenabled = false\nbogus = 1\n")
    db = tmp_path / "ladder.db"
    assert main(["ladder", "serve", "--db", str(db), "--languages", str(languages)]) == 2
    said = capsys.readouterr()
    assert said.out == "" and said.err.count("\n") == 1
    assert said.err.startswith(f"locm: error: {languages}: languages.go: unknown key 'bogus'")
    assert not db.exists()
