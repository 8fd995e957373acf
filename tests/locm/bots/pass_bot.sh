#!/bin/sh
# Answers PASS to every input (deck building included), in POSIX shell.
# With "noterm" as first argument it ignores SIGTERM.
[ "$1" = noterm ] && trap "" TERM
while read -r me; do
    read -r opponent
    read -r hand actions
    i=0; while [ "$i" -lt "$actions" ]; do read -r line; i=$((i + 1)); done
    read -r count
    i=0; while [ "$i" -lt "$count" ]; do read -r line; i=$((i + 1)); done
    echo PASS
done
