"""A bot's memory attack on its opponent and the referee, with and without memory budgets.

    sudo python benchmarks/memory_budget.py                  # a 700 MB cgroup around locm play
    sudo python benchmarks/memory_budget.py --around 1000 --hog 800

Each game is ``locm play`` (1.5, sandbox on) run inside a v1 memory cgroup of AROUND MB
(the "machine" the organiser gave the referee) between a bot that, at its first input,
holds HOG MB in ``memfd`` files it never maps, and a second bot, either fat (150 MB, every
page touched) or small. Played with ``CARDARENA_CGROUPS=off`` (no budget, as before this
layer, but the bots' ``oom_score_adj`` stays), with the default 768 MB budget, and with
``--memory 300``; the script prints who
the kernel killed and how the game was recorded: the referee's exit status, the loser, and
the log's ``outOfMemory``. Needs root and a v1 ``memory`` hierarchy (hybrid machines).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cardarena.locm.referee import cgroups  # noqa: E402

BOT = ROOT / "tests" / "locm" / "bots" / "memory_bot.py"


def play(around: Path, hog: int, other: int, mode: str, extra: list[str]) -> str:
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "game.json"
        enter = 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"'
        done = subprocess.run(
            ["/bin/sh", "-c", enter, "enter", str(around), sys.executable, "-m",
             "cardarena.locm", "play", "-p1", f"python3 {BOT} memfd {hog}",
             "-p2", f"python3 {BOT} fat {other}", "--version", "1.5", "-d", "seed=1",
             "--time-scale", "10", "-l", str(log), *extra],
            cwd=ROOT, env=dict(os.environ, CARDARENA_CGROUPS=mode), capture_output=True,
            text=True, timeout=600, check=False,
        )  # fmt: skip
        if not log.exists():
            return f"referee exit status {done.returncode}, no log (the referee was killed)"
        game = json.loads(log.read_text())["cardarena"]
        loser = {0: "the hog", 1: "the other bot", None: "nobody"}[game["errorPlayer"]]
        return (
            f"referee exit status {done.returncode}; {loser} lost ({game['endReason']}); "
            f"outOfMemory {game.get('outOfMemory')}; peak MB {game.get('memoryPeakMB')}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--around", type=int, default=700, help="MB around the referee")
    parser.add_argument("--hog", type=int, default=550, help="MB the hog holds in memfds")
    args = parser.parse_args()
    found = cgroups.memory_support()
    if found.kind != "v1":
        sys.exit(f"needs root and a v1 memory hierarchy ({found.reason or found.kind})")
    around = Path(found.parents[0]) / f"memory-benchmark-{os.getpid()}"
    around.mkdir()
    try:
        for name in ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes"):
            if (around / name).exists():
                (around / name).write_text(str(args.around << 20))
        for other, what in ((150, "a 150 MB bot"), (1, "a small bot")):
            hog = args.hog if other == 150 else args.around - 50
            print(f"{args.around} MB around the referee; a {hog} MB memfd hog against {what}:")
            for label, mode, extra in (("no budget (off)", "off", []),
                                       ("default budget", "auto", []),
                                       ("--memory 300", "auto", ["--memory", "300"])):  # fmt: skip
                print(f"  {label:20} {play(around, hog, other, mode, extra)}")
    finally:
        for pid in (around / "cgroup.procs").read_text().split():
            os.kill(int(pid), 9)
        around.rmdir()


if __name__ == "__main__":
    main()
