"""``locm ladder serve --languages FILE``: the organiser's table is the one the server offers,
less the languages whose tools are not installed (``GET /api/languages``, the submit form)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("aiohttp")

LANGUAGES = """\
[languages.shell]
source_name = "bot.sh"
copy_sources = true
run = ["sh", "{out}/bot.sh"]

[languages.kotlin]
source_name = "Main.kt"
suffixes = [".kt"]
build = ["kotlinc-not-installed-here", "{files}", "-d", "{out}/bot.jar"]
run = ["java", "-jar", "{out}/bot.jar"]

[languages.c]
enabled = false
"""


def test_serve_offers_the_organiser_s_installed_languages(tmp_path: Path) -> None:
    table = tmp_path / "languages.toml"
    table.write_text(LANGUAGES)
    server = subprocess.Popen(
        [sys.executable, "-m", "cardarena.locm", "ladder", "serve", "--db",
         str(tmp_path / "ladder.db"), "--port", "0", "--workers", "1", "--languages", str(table)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        base = server.stdout.readline().strip()
        assert base.startswith("http://127.0.0.1:"), server.communicate(timeout=30)
        with urllib.request.urlopen(base + "api/languages", timeout=30) as answer:
            offered = {row["name"]: row["entry"] for row in json.load(answer)["languages"]}
        with urllib.request.urlopen(base + "me", timeout=30) as answer:
            assert answer.status == 200
    finally:
        server.send_signal(signal.SIGTERM)
        _out, err = server.communicate(timeout=60)
    assert server.returncode == 0, err
    assert offered["shell"] == "bot.sh" and offered["python"] == "bot.py"
    assert "kotlin" not in offered  # its compiler is not installed
    assert "c" not in offered  # removed by the organiser
    assert "kotlin" in err and "not installed" in err  # the organiser is told at the start
