"""Writes terminal escape sequences where a referee may print them.

Usage: escape_bot.py MODE [TAG]. Every mode first writes a stderr line holding
:data:`PAYLOAD`; then ``exit`` exits with status 3 before its first answer, ``answer``
plays 1.2 (PICK 0 in the draft) and ends every battle answer with the payload as an
unknown action. TAG is ignored.
"""

import sys

PAYLOAD = (
    "\x1b]0;owned\x07"  # window title
    "\x1b]52;c;b3duZWQ=\x07"  # clipboard (OSC 52)
    "\x1b[2J"  # clear the screen
    "\x9b31m"  # C1 CSI: red, without ESC
    "\u202eevil"  # right-to-left override
)


def main() -> None:
    sys.stderr.write(f"stderr {PAYLOAD}\n")
    sys.stderr.flush()
    if sys.argv[1] == "exit":
        sys.exit(3)
    while line := sys.stdin.readline():
        sys.stdin.readline()  # opponent
        actions = int(sys.stdin.readline().split()[1])
        for _ in range(actions):
            sys.stdin.readline()
        for _ in range(int(sys.stdin.readline())):
            sys.stdin.readline()
        mana = int(line.split()[1])
        print("PICK 0" if mana == 0 else f"PASS;{PAYLOAD}", flush=True)


if __name__ == "__main__":
    main()
