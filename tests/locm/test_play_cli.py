"""``locm play`` with a human seat, from the command line: the address first, one-line errors,
and Ctrl-C or SIGTERM stopping the game and its bot."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cardarena.locm.cli.main import main
from cardarena.locm.referee.gameresult import answers_from_log

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 60


STARTED: list[subprocess.Popen[str]] = []


def locm_play(*args: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "cardarena.locm", "play", *args],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    STARTED.append(process)
    return process


@pytest.fixture(autouse=True)
def _no_server_left() -> Iterator[None]:
    """A failing test leaves no server (and no bot) behind."""
    yield
    while STARTED:
        process = STARTED.pop()
        if process.poll() is None:
            process.send_signal(signal.SIGINT)  # the referee stops its bot, then exits
        try:
            process.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


def test_a_port_in_use_is_one_line_and_exit_2() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        process = locm_play("-p1", "human", "-p2", "builtin:random", "--port", str(port))
        out, err = process.communicate(timeout=TIMEOUT_S)
    assert process.returncode == 2
    assert out == "" and err.count("\n") == 1 and "cannot listen" in err and "Traceback" not in err


def test_a_bad_opponent_is_refused_before_serving() -> None:
    process = locm_play("-p1", "human", "-p2", "builtin:nosuchagent")
    out, err = process.communicate(timeout=TIMEOUT_S)
    assert process.returncode == 2 and out == "" and err.startswith("locm: error: -p2:")


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_stopping_mid_game_stops_the_bot(signum: int, status: int, tmp_path: Path) -> None:
    pid_file = tmp_path / "bot.pid"
    bot = f"echo $$ > {pid_file}; exec python3 examples/bots/minimal_bot.py"
    process = locm_play("-p1", "human", "-p2", bot, "--no-sandbox", "-l", str(tmp_path / "g.json"))
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as page:
        assert page.status == 200
        assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    decision, seq = None, -1
    while decision is None:  # the person's deck (by the agent): then the bot is asked too
        with urllib.request.urlopen(f"{url}state?after={seq}", timeout=TIMEOUT_S) as state:
            view = json.load(state)
        decision, seq = view["decision"], view["seq"]
    move = json.dumps({"id": decision["id"], "auto": True}).encode()
    request = urllib.request.Request(url + "move", move, {"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=TIMEOUT_S).close()
    deadline = time.monotonic() + TIMEOUT_S
    while not pid_file.read_text(encoding="ascii").strip() if pid_file.exists() else True:
        assert time.monotonic() < deadline, "the bot never started"
        time.sleep(0.05)
    bot_pid = int(pid_file.read_text(encoding="ascii"))
    assert Path(f"/proc/{bot_pid}").exists()
    process.send_signal(signum)
    _out, err = process.communicate(timeout=TIMEOUT_S)
    assert process.returncode == status
    assert "the bots were stopped" in err and "Traceback" not in err
    # The person's deck is made; the log holds it if the bot had answered its own (a round).
    kept = (tmp_path / "g.json").exists()
    assert ("the log of the game so far is in" in err) == kept
    assert ("no log written" in err) == (not kept)
    assert not Path(f"/proc/{bot_pid}").exists()  # stopped and reaped


def next_decision(url: str, seq: int) -> tuple[dict[str, Any], int]:
    """The person's next decision, as the page waits for it: (decision, seq)."""
    while True:
        with urllib.request.urlopen(f"{url}state?after={seq}", timeout=TIMEOUT_S) as state:
            view = json.load(state)
        assert not view["over"] and view["error"] is None, view
        seq = view["seq"]
        if view["decision"] is not None:
            return view["decision"], seq


def post_move(url: str, move: dict[str, Any]) -> None:
    body = json.dumps(move).encode()
    request = urllib.request.Request(url + "move", body, {"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=TIMEOUT_S).close()


def test_ctrl_c_mid_game_keeps_the_log_of_what_was_played(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "game.json"
    process = locm_play("-p1", "human", "-p2", "builtin:greedy", "--version", "1.5", "-l",
                        str(log))  # fmt: skip
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    decision, seq = next_decision(url, -1)
    assert decision["kind"] == "construct"
    post_move(url, {"id": decision["id"], "auto": True})
    played = []
    for _turn in range(2):  # two battle turns: a summon where one is offered, then the end
        decision, seq = next_decision(url, seq)
        assert decision["kind"] == "battle"
        summons = [action for action in decision["actions"] if action.startswith("SUMMON")]
        if summons:
            post_move(url, {"id": decision["id"], "action": summons[0]})
            decision, seq = next_decision(url, seq)  # each move gives the decision a new id
        post_move(url, {"id": decision["id"], "action": "PASS"})
        played.append(summons[0] if summons else "PASS")
    next_decision(url, seq)  # the person's third turn: the bot has played its second
    process.send_signal(signal.SIGINT)
    _out, err = process.communicate(timeout=TIMEOUT_S)
    assert process.returncode == 130 and "Traceback" not in err
    said = f"the log of the game so far is in {log} (locm view {log})"
    assert err.splitlines()[-1] == f"locm play: interrupted; the bots were stopped; {said}"
    kept = json.loads(log.read_text(encoding="utf-8"))
    assert kept["cardarena"]["interrupted"] is True and kept["scores"] == {}
    person, bot = answers_from_log(kept)
    assert person[1:] == played and len(person) == 3 and len(bot) == 3
    # Both readers take it, and say where it stopped.
    assert main(["replay", str(log)]) == 0
    replayed = capsys.readouterr().out.splitlines()
    assert replayed[-1] == "result: none: the game was interrupted at turn 5 (Ctrl-C or SIGTERM)"
    assert main(["view", str(log), "-o", str(tmp_path / "game.html")]) == 0
    page = (tmp_path / "game.html").read_text(encoding="utf-8")
    data = json.loads(page.split('<script id="game-data" type="application/json">', 1)[1]
                      .split("</script>", 1)[0])  # fmt: skip
    assert data["frames"][-1]["reason"] == "interrupted" and data["frames"][-1]["turn"] == 5
