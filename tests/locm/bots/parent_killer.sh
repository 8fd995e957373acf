#!/bin/sh
# At its first input line: SIGKILL its parent (the referee without the sandbox; inside
# the sandbox, the PID namespace's init, which it cannot signal), then exit with status 3.
# An end of input without a line (the pre-game check) kills nothing.
if read -r line; then
    kill -9 "$PPID"
fi
exit 3
