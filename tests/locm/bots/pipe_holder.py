"""Leaves behind a child outside its process group (``setsid``) that keeps its stdout and
stderr open for up to 120 s (so that a failing test leaves nothing for long).

Usage: pipe_holder.py MODE [TAG]. ``hold``: ignore SIGTERM and never answer; ``exit``: exit
with status 3 at once. TAG is ignored.
"""

import os
import signal
import sys
import time

if sys.argv[1] == "hold":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if os.fork() == 0:
    os.setsid()
    time.sleep(120)
    os._exit(0)
if sys.argv[1] == "exit":
    sys.exit(3)
time.sleep(120)
