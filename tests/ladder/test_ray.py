"""``locm ladder serve --backend ray --address ADDR`` plays its games on a real local Ray
cluster of two nodes (``ray.cluster_utils.Cluster``); a Ray worker killed mid-game has its game
played again, a lost node leaves the other playing, and no game is counted twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cardarena.ladder.store import LadderStore

from .test_service import rows, wait_for

ray = pytest.importorskip("ray", reason='Ray is not installed: pip install ".[ray]"')
cluster_utils = pytest.importorskip("ray.cluster_utils")

SLOW_BOT = """\
import sys, time
readline, write, flush = sys.stdin.readline, sys.stdout.write, sys.stdout.flush
while readline():
    readline()
    actions = int(readline().split()[1])
    for _ in range(actions):
        readline()
    for _ in range(int(readline())):
        readline()
    time.sleep(0.02)
    write("PASS\\n")
    flush()
"""
"""Answers PASS after 20 ms: a game lasts a few seconds, long enough to lose a node in it."""


@pytest.fixture
def cluster() -> Iterator[Any]:
    """A head node and a second node, one CPU each (one game at a time on each)."""
    two_nodes = cluster_utils.Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}
    )
    try:
        two_nodes.add_node(num_cpus=1)
        two_nodes.wait_for_nodes()
        yield two_nodes
    finally:
        two_nodes.shutdown()


def playing_on_ray() -> list[int]:
    """The Ray worker processes running a game now (Ray titles them ``ray::play``)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                if cmdline.read().startswith(b"ray::play"):
                    found.append(int(entry))
        except (OSError, ValueError):
            continue
    return found


def ladder_of_slow_bots(tmp_path: Path) -> Path:
    """Three active process bots of three owners, each in a folder of its own."""
    db = tmp_path / "ladder.db"
    with LadderStore(str(db)) as store:
        store.configure(game="locm", version="1.5")
        for index in range(3):
            folder = tmp_path / f"bot{index}"
            folder.mkdir()
            (folder / "bot.py").write_text(SLOW_BOT)
            user = store.user_for_token(store.add_user(f"owner{index}"))
            assert user is not None
            version = store.submit(user, f"slow{index}", "python", "bot.py", b"#", new_bot=True)
            store.record_build(version, True, "built", f"python3 {folder}/bot.py", None)
            store.set_status(version, "active")
    return db


def test_games_run_on_a_ray_cluster_and_a_lost_node_s_games_are_played_again(
    tmp_path: Path, cluster: Any
) -> None:
    db = ladder_of_slow_bots(tmp_path)
    server = subprocess.Popen(
        [sys.executable, "-m", "cardarena.locm", "ladder", "serve", "--db", str(db),
         "--version", "1.5", "--port", "0", "--workers", "2", "--backend", "ray",
         "--address", cluster.address],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env={**os.environ, "RAY_ADDRESS": ""},
    )  # fmt: skip
    try:
        assert server.stdout is not None
        assert server.stdout.readline().startswith("http://127.0.0.1:")

        def done() -> int:
            return int(rows(db, "SELECT COUNT(*) FROM games WHERE state = 'done'")[0][0])

        wait_for(lambda: done() >= 1, "a game played on the cluster", timeout=90)
        [pid, *_] = wait_for(playing_on_ray, "a Ray worker in a game")
        os.kill(pid, signal.SIGKILL)  # the worker dies mid-game
        replayed = "SELECT COUNT(*) FROM games WHERE state = 'done' AND attempts > 1"
        wait_for(lambda: rows(db, replayed)[0][0] >= 1, "the lost game played again")
        [second_node] = [node for node in cluster.list_all_nodes() if not node.head]
        cluster.remove_node(second_node, allow_graceful=False)  # a whole node is lost
        finished = done()
        wait_for(lambda: done() >= finished + 2, "more games on the head node alone")
        server.send_signal(signal.SIGTERM)
        assert server.wait(60) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    stderr = server.stderr.read() if server.stderr else ""
    assert "Traceback" not in stderr and "SIGTERM received" not in stderr, stderr
    assert "ladder stopped (terminated by SIGTERM)" in stderr
    # Every game counted once: the bots' counters and the head-to-head table hold exactly
    # the rated games stored as done, and each done game has its result and its log.
    [(rated,)] = rows(db, "SELECT COUNT(*) FROM games WHERE state = 'done' AND rated = 1")
    [(counted,)] = rows(db, "SELECT SUM(rated_games) FROM versions")
    [(met,)] = rows(db, "SELECT SUM(wins + draws + losses) FROM results")
    [(history,)] = rows(db, "SELECT COUNT(*) FROM ratings")
    assert rated >= 3
    assert counted == met == history == 2 * rated
    lost = rows(db, "SELECT COUNT(*) FROM games WHERE state = 'done' AND error_kind = 'referee'")
    assert lost == [(0,)]  # a lost worker is never a result: the game was played again
    assert rows(db, "SELECT COUNT(*) FROM games WHERE state = 'done' AND log IS NULL") == [(0,)]
