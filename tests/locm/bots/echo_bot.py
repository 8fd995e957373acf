"""Replays one player's side of a recorded game, checking every input it receives.

Usage: echo_bot.py SCRIPT.json REPORT
SCRIPT holds ``[{"input": ..., "output": ...}, ...]`` for this player. For each turn
the bot reads as many lines as the recorded input has, compares them, and prints
the recorded output (``null``: exit without answering). The first difference is
written to REPORT and the bot exits with status 3.
"""

import json
import sys


def main() -> int:
    script_path, report_path = sys.argv[1], sys.argv[2]
    with open(script_path, encoding="utf-8") as handle:
        turns = json.load(handle)
    stdin = sys.stdin.buffer
    for index, turn in enumerate(turns):
        expected = turn["input"].encode("utf-8")
        received = b"".join(stdin.readline() for _ in range(expected.count(b"\n")))
        if received != expected:
            with open(report_path, "w", encoding="utf-8") as report:
                report.write(f"turn {index}: expected {expected!r}\nreceived {received!r}\n")
            return 3
        if turn["output"] is None:
            return 0
        sys.stdout.write(turn["output"] + "\n")
        sys.stdout.flush()
    # The game is over for us: wait for the referee to close our stdin.
    stdin.read()
    return 0


if __name__ == "__main__":
    sys.exit(main())
