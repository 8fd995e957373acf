"""The seccomp filter of the bot sandbox: the kernel interfaces a bot never needs, refused.

A bot reads its input, computes and prints; every contest language does that with
ordinary system calls. What it never needs is the kernel's large, rarely exercised
surfaces, where privilege escalations are usually found: creating namespaces (a new
user namespace would give it every capability there), mounting, the keyrings, BPF,
perf events, tracing other processes, kernel modules, kexec, userfaultfd, io_uring,
file handles, and any socket family but Unix, IP and the netlink routing family
(``getifaddrs`` uses it; nf_tables and the other netlink families are refused).

Each refused call fails with ``EPERM`` (``clone3`` with ``ENOSYS``, on which the C
library falls back to ``clone``, whose flags the filter can read), never kills: a
runtime that probes a call still starts. System calls of another ABI (i386 through
``int 0x80``, x32) fail with ``ENOSYS`` as if that ABI did not exist, so that none of
the rules can be bypassed through another call table.

bwrap installs the filter (``--seccomp FD``) right before it runs the sandbox's start-up
shell. That shell still makes two bind mounts read-only (``/proc/sys`` and, as root,
``/etc``), so ``mount(2)`` is let through in exactly that form: a non-recursive bind,
read-only, with no move or propagation change. The kernel refuses even that to a process
without ``CAP_SYS_ADMIN``, which the bot never has; every other mount call, the new
mount API, ``umount2``, ``pivot_root`` and ``chroot`` are refused by the filter itself.
(Why not install it after the start-up instead: nothing there could, short of a helper
program started after ``setpriv`` — util-linux 2.38's has no ``--seccomp-filter`` — whose
own start-up would then run on the bot's clock; and the ``/proc/sys`` mount cannot move
into bwrap's options, since ``pid_max`` is written through it in the new PID namespace
first.) A ``mount(8)`` that used the new mount API would make the sandbox's probe fail
with the filter: the sandbox then runs without it, with one warning.

The filter is compiled by libseccomp (through the ``pyseccomp`` binding) once per process;
where libseccomp cannot be loaded, :func:`program` is None and the sandbox runs without it
(:func:`unavailable_reason` says why, for a one-line warning).
"""

from __future__ import annotations

import errno
import functools
import os
import tempfile
from collections.abc import Iterator
from typing import Any

REFUSED = (
    # new namespaces (clone and clone3: see below)
    "unshare", "setns",
    # mounts (mount(2) itself: see _mount_rules)
    "umount2", "umount", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr",
    # keyrings
    "add_key", "request_key", "keyctl",
    # BPF, perf events, io_uring, userfaultfd, file handles
    "bpf", "perf_event_open", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "userfaultfd", "open_by_handle_at",
    # other processes' memory
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
    # kernel modules and kexec
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
)  # fmt: skip
"""System calls refused outright (EPERM)."""

CLONE_NEW = {
    "CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000, "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000, "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}  # fmt: skip
"""The namespace flags of ``clone`` (``CLONE_NEWTIME`` exists only for ``clone3`` and
``unshare``, both refused)."""

MS_RDONLY, MS_BIND, MS_MOVE, MS_REC = 0x1, 0x1000, 0x2000, 0x4000
MS_PROPAGATION = (1 << 17, 1 << 18, 1 << 19, 1 << 20)  # unbindable, private, slave, shared
MOUNT_ALLOWED = MS_BIND | MS_RDONLY
"""The one form of ``mount(2)`` let through (the sandbox's start-up makes a bind mount
read-only): these flags set, and none of ``MOUNT_CHECKED``'s others."""
MOUNT_CHECKED = (MS_RDONLY, MS_BIND, MS_MOVE, MS_REC, *MS_PROPAGATION)

AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_MAX_CHECKED = 1, 2, 10, 16, 17
NETLINK_ROUTE = 0
SOCKET_FAMILIES = (AF_UNIX, AF_INET, AF_INET6, AF_NETLINK)
"""The socket families a bot may open (netlink: only ``NETLINK_ROUTE``)."""

_reason = ""


def _rules(lib: Any) -> Iterator[tuple[int, str, tuple[Any, ...]]]:
    """(action, system call, argument comparisons) of every rule; a call is refused if any
    of its rules matches (libseccomp compares each argument at most once per rule)."""
    eperm, enosys = lib.ERRNO(errno.EPERM), lib.ERRNO(errno.ENOSYS)
    for name in REFUSED:
        yield eperm, name, ()
    yield enosys, "clone3", ()  # its flags are behind a pointer: glibc falls back to clone
    for flag in CLONE_NEW.values():
        yield eperm, "clone", (lib.Arg(0, lib.MASKED_EQ, flag, flag),)
    for flag in MOUNT_CHECKED:  # refused unless (flags & all checked) == MOUNT_ALLOWED
        wanted = flag & MOUNT_ALLOWED
        yield eperm, "mount", (lib.Arg(3, lib.MASKED_EQ, flag, flag - wanted),)
    for family in range(AF_MAX_CHECKED):
        if family not in SOCKET_FAMILIES:
            yield eperm, "socket", (lib.Arg(0, lib.EQ, family),)
    yield eperm, "socket", (lib.Arg(0, lib.GE, AF_MAX_CHECKED),)
    yield eperm, "socket", (lib.Arg(0, lib.EQ, AF_NETLINK), lib.Arg(2, lib.NE, NETLINK_ROUTE))
    yield eperm, "socketpair", (lib.Arg(0, lib.NE, AF_UNIX),)


def _compile() -> bytes:
    import pyseccomp as lib  # raises RuntimeError where libseccomp.so is missing

    refused = lib.SyscallFilter(lib.ALLOW)
    # Only the machine's own ABI has rules; any other (i386, x32) is refused whole.
    refused.set_attr(lib.Attr.ACT_BADARCH, lib.ERRNO(errno.ENOSYS))
    for action, name, args in _rules(lib):
        if lib.resolve_syscall(lib.Arch.NATIVE, name) < 0:
            continue  # not a system call on this architecture (e.g. umount on x86_64)
        refused.add_rule(action, name, *args)
    with tempfile.TemporaryFile() as file:
        refused.export_bpf(file)
        file.seek(0)
        return file.read()


@functools.cache
def program() -> bytes | None:
    """The compiled filter (classic BPF, as bwrap's ``--seccomp`` reads it), built once
    per process; None where libseccomp cannot be loaded."""
    global _reason
    try:
        return _compile()
    except ImportError:
        _reason = "the pyseccomp package is not installed: pip install pyseccomp"
    except (RuntimeError, OSError, AttributeError) as error:
        _reason = f"libseccomp cannot be used: {error}; apt-get install libseccomp2"
    return None


def unavailable_reason() -> str:
    """Why :func:`program` is None ("" if it is not)."""
    program()
    return _reason


def open_program() -> int | None:
    """A new descriptor to read the filter from, for one bwrap (which reads it to its end,
    so two sandboxes never share one); the caller closes it. It is close-on-exec: the spawn
    that runs bwrap passes it (``pass_fds``). None without a filter."""
    code = program()
    if code is None:
        return None
    fd = os.memfd_create("cardarena-seccomp")
    try:
        os.write(fd, code)
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd
