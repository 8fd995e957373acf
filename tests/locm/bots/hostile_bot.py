"""An honest player whose every word is an HTML and script payload, for the page tests.

It plays as simple_bot.py does, and writes PAYLOAD to stderr before each answer and after
each battle answer (behind a PASS, whose rest the referee ignores): every way a string could
break out of a page's text, attribute or script, each one calling alert() if it runs.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from simple_bot import answer, read_turn

PAYLOAD = (
    "<img src=x onerror=alert(1)>\"'><svg onload=alert(2)></script><script>alert(3)</script>"
    "<!--javascript:alert(4)\" onmouseover=\"alert(5)' onfocus='alert(6)' autofocus x='"
)


def main():
    turn = 0
    while (block := read_turn(sys.stdin)) is not None:
        print(f"stderr {turn} {PAYLOAD}", file=sys.stderr, flush=True)
        line = answer(*block)
        if block[0] != 0:  # battle: one more action, a PASS with the payload after it
            line += f";PASS {PAYLOAD}"
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
        turn += 1


if __name__ == "__main__":
    main()
