"""A small honest bot with optional misbehaviour, for the referee tests.

Usage: simple_bot.py [MODE [K [TAG [FILE]]]] — plays sensibly (summon what it can afford where
there is room; attack guards first, then the opponent) except at its K-th answer (0-based, deck
building included), where MODE happens:

  play        never misbehave (default)
  sleep       sleep 120 s before answering (a timeout)
  hang        create FILE (tests wait for it: the game is under way), then sleep 120 s
  crash       exit with status 3 without answering
  garbage     answer "HELLO WORLD" (a hard error)
  illegal     from then on, put "ATTACK 999 -1" before its battle actions (a warning)
  empty       answer an empty line
  two         answer two lines at once: its normal answer and "PASS"
  long        answer a line of 20,000 bytes
  noterm      ignore SIGTERM (and start a child that ignores it too), then sleep forever
  cr          end every answer with "\r\n" split over two writes (line-end quirks)
  chatty      never misbehave, but write "answer N" to stderr before each answer

TAG is ignored: tests put a unique word there to find their processes.
"""

import signal
import subprocess
import sys
import time


def read_turn(stdin):
    """One input block: (my mana, my hand/board card fields, is deck building)."""
    me = stdin.readline()
    if not me:
        return None
    me = me.split()
    stdin.readline()  # opponent
    _hand, actions = map(int, stdin.readline().split())
    for _ in range(actions):
        stdin.readline()
    cards = [stdin.readline().split() for _ in range(int(stdin.readline()))]
    return int(me[1]), cards


def answer(mana, cards):
    if mana == 0:  # deck building: 30 0 ... lines have mana 0
        return "PASS"
    lane_of = {}  # 1.0 lines have no lane field: everything is lane 0
    for card in cards:
        lane_of[int(card[1])] = int(card[-1]) if len(card) >= 12 else 0
    mine = [int(c[1]) for c in cards if c[2] == "1"]
    guards = [int(c[1]) for c in cards if c[2] == "-1" and "G" in c[7]]
    room = [3 - sum(1 for i in mine if lane_of[i] == lane) for lane in (0, 1)]
    actions = []
    for card in cards:
        instance, location, kind, cost = int(card[1]), int(card[2]), int(card[3]), int(card[4])
        if location == 0 and kind == 0 and cost <= mana:
            lane = 0 if room[0] >= room[1] else 1
            if room[lane] > 0:
                actions.append(f"SUMMON {instance} {lane}")
                mana -= cost
                room[lane] -= 1
        elif location == 1:
            targets = [g for g in guards if lane_of[g] == lane_of[instance]]
            actions.append(f"ATTACK {instance} {targets[0] if targets else -1}")
    return ";".join(actions) or "PASS"


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "play"
    at = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    stdin, out = sys.stdin, sys.stdout
    turn = 0
    while (block := read_turn(stdin)) is not None:
        line = answer(*block)
        if mode == "chatty":
            print(f"answer {turn}", file=sys.stderr, flush=True)
        if turn == at:
            if mode == "sleep":
                time.sleep(120)
            elif mode == "hang":
                with open(sys.argv[4], "w") as marker:
                    marker.write("hanging\n")
                time.sleep(120)
            elif mode == "crash":
                print("crashing on purpose", file=sys.stderr, flush=True)
                sys.exit(3)
            elif mode == "garbage":
                line = "HELLO WORLD"

            elif mode == "empty":
                line = ""
            elif mode == "two":
                line += "\nPASS"
            elif mode == "long":
                line = "PASS " + "x" * 20_000
            elif mode == "noterm":
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                child = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                subprocess.Popen([sys.executable, "-c", child + "time.sleep(600)", *sys.argv])
                time.sleep(600)
        if mode == "illegal" and turn >= at and block[0] > 0:
            line = f"ATTACK 999 -1;{line}"
        if mode == "cr":
            out.write(line + "\r")
            out.flush()
            out.write("\n")
        else:
            out.write(line + "\n")
        out.flush()
        turn += 1


if __name__ == "__main__":
    main()
