"""Ignores SIGTERM, never answers, and leaves behind a child outside its process group
(``setsid``) that keeps its stdout and stderr open for up to 120 s (so that a failing test
leaves nothing for long). Usage: pipe_holder.py [TAG]; TAG is ignored."""

import os
import signal
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
if os.fork() == 0:
    os.setsid()
    time.sleep(120)
    os._exit(0)
time.sleep(120)
