"""A bot that plays as simple_bot.py does, and misbehaves when it is behind, for the
scoring tests (a sore loser trying to turn its losses into something else).

Usage: sore_bot.py MODE — behind means its health is below its opponent's, in battle:

  empty        answer an empty line (1.0/1.2: the official runner aborts the game)
  crash        exit with status 3 without answering
  spin         think for ever, in eight processes (a timeout with its CPU busy); as root
               it first raises its session's priority (autogroup nice -15), so that it
               gets the CPU it asks for however loaded the machine is
  sleep        sleep for ever (a timeout asleep: not starved, whatever the machine does)
  starve       not when behind, but at its first battle turn after the first: pin itself to
               CPU $SORE_CPU, send SIGCONT to the processes $SORE_HOGS (busy loops the test
               stopped, pinned to that CPU), then think until it used $SORE_SPIN_S seconds of
               CPU and answer (in time on an idle CPU; starved by the hogs, it times out)
  starve-nice  as starve, but first lower its own priority (nice 19): starved by its own
               choice
  starve-group as starve, but first lower its session's priority (autogroup nice 5)
"""

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from simple_bot import answer


def read_turn(stdin):
    """One input block: (my health, the opponent's health, my mana, the card fields)."""
    me = stdin.readline()
    if not me:
        return None
    me, them = me.split(), stdin.readline().split()
    _hand, actions = map(int, stdin.readline().split())
    for _ in range(actions):
        stdin.readline()
    cards = [stdin.readline().split() for _ in range(int(stdin.readline()))]
    return int(me[0]), int(them[0]), int(me[1]), cards


def think(cpu_s):
    start = time.process_time()
    while time.process_time() - start < cpu_s:
        pass


def starve(how):
    if how == "nice":
        os.nice(19)
    elif how == "group":
        Path("/proc/self/autogroup").write_text("5")
    os.sched_setaffinity(0, {int(os.environ["SORE_CPU"])})
    for pid in os.environ["SORE_HOGS"].split():
        os.kill(int(pid), signal.SIGCONT)
    think(float(os.environ["SORE_SPIN_S"]))


def main():
    mode = sys.argv[1]
    battle_turns = 0
    while (block := read_turn(sys.stdin)) is not None:
        health, their_health, mana, cards = block
        line = answer(mana, cards)
        if mana > 0:
            battle_turns += 1
            if mode.startswith("starve") and battle_turns == 2:
                starve(mode.partition("-")[2])
            elif health < their_health:
                if mode == "empty":
                    line = ""
                elif mode == "crash":
                    print("behind: leaving", file=sys.stderr, flush=True)
                    sys.exit(3)
                elif mode == "spin":
                    with contextlib.suppress(OSError):  # not root: what the machine gives
                        Path("/proc/self/autogroup").write_text("-15")
                    for _ in range(8):
                        if os.fork() == 0:
                            break
                    think(3600)
                elif mode == "sleep":
                    time.sleep(3600)
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
