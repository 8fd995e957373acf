"""Peak memory of the commands that read a stored log, fed a decompression bomb.

A tournament database from elsewhere may hold, as a game's log, 1 MB of zlib data that
decompresses to 1 GiB. ``locm report --html`` and ``locm view --db`` must refuse it in
bounded memory (cardarena/untrusted.py caps the decompressed size at 32 MiB). This builds
such a database (two real games, one log replaced) and prints each command's exit status and
peak resident memory (wait4's ru_maxrss), with a normal database's figures beside them.

    python benchmarks/crafted_log_memory.py           # medians of --runs runs, in MB
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import zlib

from cardarena.machine import describe, machine, run_script

LOCM = [sys.executable, "-m", "cardarena.locm"]


def bomb(gibibytes: int = 1) -> bytes:
    packer = zlib.compressobj(9)
    parts = [packer.compress(b'{"outputs": {}, "summaries": ["')]
    chunk = b"x" * 2**20
    parts += [packer.compress(chunk) for _ in range(gibibytes * 1024)]
    parts.append(packer.compress(b'"]}') + packer.flush())
    return b"".join(parts)


def peak(args: list[str]) -> tuple[int, float]:
    """(exit status, peak resident memory in MB) of one run."""
    process = subprocess.Popen([*LOCM, *args], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    try:
        _pid, status, usage = os.wait4(process.pid, 0)
    except BaseException:  # Ctrl-C reaches this script alone (the child's own session)
        process.kill()
        process.wait()
        raise
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as directory:
        normal = os.path.join(directory, "normal.db")
        subprocess.run([*LOCM, "tournament", "--bot", "builtin:random", "--bot", "builtin:greedy",
                        "--games", "1", "--db", normal, "--quiet", "--no-sandbox"],
                       check=True, stdout=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
        crafted = os.path.join(directory, "crafted.db")
        shutil.copy(normal, crafted)
        blob = bomb()
        with sqlite3.connect(crafted) as db:
            db.execute("UPDATE games SET log = ? WHERE rowid = 1", (blob,))
        print(f"bomb: {len(blob) / 2**20:.1f} MB of zlib data, 1024 MB decompressed; "
              f"{describe(machine())}")
        print(f"{'command':<32} {'database':<8} {'exit':>4} {'peak MB':>8}")
        for name, db in (("normal", normal), ("bomb", crafted)):
            for label, args in (
                ("locm report --html", ["report", "--db", db, "--html",
                                        os.path.join(directory, f"{name}-html")]),
                ("locm view --db --game 1", ["view", "--db", db, "--game", "1", "-o",
                                             os.path.join(directory, f"{name}.html")]),
            ):  # fmt: skip
                results = [peak(args) for _ in range(runs)]
                status = results[0][0]
                median = statistics.median(mb for _, mb in results)
                print(f"{label:<32} {name:<8} {status:>4} {median:>8.0f}")


if __name__ == "__main__":
    run_script(main, "benchmarks/crafted_log_memory.py")
