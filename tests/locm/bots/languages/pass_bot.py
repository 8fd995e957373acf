"""A LOCM bot in Python that answers PASS to every turn; it names itself on stderr once."""

import sys

first = True
while sys.stdin.readline():  # player 0's line
    sys.stdin.readline()  # player 1's line
    actions = int(sys.stdin.readline().split()[1])
    for _ in range(actions):
        sys.stdin.readline()
    for _ in range(int(sys.stdin.readline())):
        sys.stdin.readline()
    if first:
        first = False
        print(f"python bot running on {sys.prefix}", file=sys.stderr, flush=True)
    print("PASS", flush=True)
