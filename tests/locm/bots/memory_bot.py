"""A bot that holds memory, for the memory budget tests.

Usage: memory_bot.py MODE MB [TAG] — plays like simple_bot.py, but first (MODE):

  fat     holds MB MiB of ordinary memory, every page touched, from its start: a big but
          legal bot (it plays whole games)
  memfd   at its first input, writes MB MiB into memfds (each under the sandbox's file size
          limit) that it never maps: memory no process's address space shows
  fork    at its first input, starts 8 children that each grow by 16 MiB steps up to MB MiB,
          then waits for them (it never answers while they live)
  tmpfs   at its first input, fills /tmp, HOME and /dev/shm with files of up to MB MiB each
          (stopping at each one's size limit), says how much it wrote on stderr, then plays

TAG is ignored: tests put a unique word there to find their processes.
"""

import os
import sys

from simple_bot import answer, read_turn

MIB = 1 << 20
CHUNK = b"\x5a" * MIB


def touched(mib):
    """``mib`` MiB of anonymous memory, every page written."""
    block = bytearray(mib * MIB)
    block[:: 4096] = b"\x01" * len(range(0, len(block), 4096))
    return block


def memfds(mib):
    held = []
    while len(held) * 32 < mib:
        fd = os.memfd_create("hog")
        for _ in range(32):  # 32 MiB each: under the 64 MiB file size limit
            os.write(fd, CHUNK)
        held.append(fd)
    return held


def fork_children(mib):
    children = []
    for _ in range(8):
        pid = os.fork()
        if pid == 0:
            blocks = [touched(16) for _ in range(mib // 16)]
            os.read(0, 1) if blocks else None  # stays, holding them, until its stdin ends
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)
    sys.exit(0)


def fill(mib):
    written = {}
    for folder in ("/tmp", os.environ.get("HOME", "/tmp"), "/dev/shm"):
        total = 0
        try:
            with open(os.path.join(folder, "filler"), "wb") as out:
                while total < mib * MIB:
                    out.write(CHUNK)
                    out.flush()
                    total += MIB
        except OSError:  # its size limit: full
            pass
        written[folder] = total // MIB
    print(f"wrote {written}", file=sys.stderr, flush=True)
    return written


def main():
    mode, mib = sys.argv[1], int(sys.argv[2])
    held = touched(mib) if mode == "fat" else None
    first = True
    while (block := read_turn(sys.stdin)) is not None:
        if first:
            first = False
            if mode == "memfd":
                held = memfds(mib)
            elif mode == "fork":
                fork_children(mib)
            elif mode == "tmpfs":
                held = fill(mib)
        print(answer(*block), flush=True)
    return held


if __name__ == "__main__":
    main()
