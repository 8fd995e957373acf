"""Secret checks (scrypt) off the event loop, in a small pool that a flood cannot monopolise.

A wrong secret costs the server one scrypt (tens of milliseconds of CPU and 16 MiB), so the
checks are rationed: they run in a dedicated pool of ``threads`` threads (at a lower CPU
priority than the game where the OS allows it), the checks waiting for a thread are queued per
client address and served round-robin across addresses (a flood from one address delays
another address's login by at most one check per flooding address). An address may have at
most ``per_address`` checks waiting or running (many honest bots often share one address), a
name at most one per address and CHECKS_PER_NAME in all (a flood aimed at one player takes
few turns of the pool, and a flood from one address cannot lock that player out). A check over
those limits is refused at once, without running scrypt. A check whose client has left before
it started is dropped without running.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from .store import dummy_hash, verify_secret

CHECKS_PER_NAME = 4
"""Checks waiting or running for one name, from all addresses together."""
LOGIN_NICE = 10
"""Niceness added to the secret-check threads (Linux applies it per thread): a flood of
logins then takes CPU mostly when the game does not need it."""


class Check:
    """One secret waiting to be checked, then being checked; ``done`` gets the verdict."""

    __slots__ = ("address", "done", "name", "secret", "started", "stored")

    def __init__(
        self, address: str, name: str, secret: str, stored: str | None,
        done: Callable[[bool], None],
    ) -> None:  # fmt: skip
        self.address, self.name, self.secret, self.stored = address, name, secret, stored
        self.done = done
        self.started = False


def _count(counts: dict[str, int], key: str, change: int) -> None:
    """Add to a count, forgetting keys that reach zero (the dicts stay as small as the load)."""
    value = counts.get(key, 0) + change
    if value:
        counts[key] = value
    else:
        del counts[key]


def _lower_priority() -> None:
    """Thread initializer: be nicer than the event loop (ignored where not supported)."""
    with contextlib.suppress(AttributeError, OSError):
        thread = threading.get_native_id()
        os.setpriority(
            os.PRIO_PROCESS, thread, os.getpriority(os.PRIO_PROCESS, thread) + LOGIN_NICE
        )


def _verify(secret: str, stored: str | None) -> bool:
    # An unknown name is checked against a dummy hash: it takes as long as a known one.
    checked = verify_secret(secret, dummy_hash() if stored is None else stored)
    return checked and stored is not None


class SecretChecker:
    """Runs on the event loop; only scrypt itself runs in the pool's threads."""

    def __init__(self, loop: asyncio.AbstractEventLoop, threads: int, per_address: int) -> None:
        self.loop = loop
        self.threads = threads
        self.per_address = per_address
        self.pool = ThreadPoolExecutor(
            max_workers=threads, thread_name_prefix="shared-deck-login", initializer=_lower_priority
        )
        self.queues: dict[str, deque[Check]] = {}
        """Checks waiting for a thread, per address, in round-robin order (dict order)."""
        self.per_address_count: dict[str, int] = {}
        self.per_name_count: dict[str, int] = {}
        self.names: set[tuple[str, str]] = set()
        """(name, address) pairs with a check waiting or running."""
        self.running = 0
        self.refused = 0
        """Checks refused over the limits (for diagnostics and tests)."""
        self.dropped = 0
        """Checks dropped unrun because their client left."""

    def submit(
        self, address: str, name: str, secret: str, stored: str | None,
        done: Callable[[bool], None],
    ) -> Check | None:  # fmt: skip
        """Queue a check; None if it is refused (its address or name has too many already)."""
        if (
            (name, address) in self.names
            or self.per_name_count.get(name, 0) >= CHECKS_PER_NAME
            or self.per_address_count.get(address, 0) >= self.per_address
        ):
            self.refused += 1
            return None
        check = Check(address, name, secret, stored, done)
        self.names.add((name, address))
        _count(self.per_name_count, name, 1)
        _count(self.per_address_count, address, 1)
        self.queues.setdefault(address, deque()).append(check)
        self._start_next()
        return check

    def cancel(self, check: Check) -> None:
        """The client left: drop the check if it has not started (a running one finishes)."""
        if check.started:
            return
        queue = self.queues.get(check.address)
        if queue is None or check not in queue:
            return
        queue.remove(check)
        if not queue:
            del self.queues[check.address]
        self.dropped += 1
        self._release(check)

    def close(self) -> None:
        """Drop the waiting checks; a running one finishes (``pool.shutdown()`` waits for it)."""
        self.queues.clear()
        self.pool.shutdown(wait=False, cancel_futures=True)

    def _release(self, check: Check) -> None:
        self.names.discard((check.name, check.address))
        _count(self.per_name_count, check.name, -1)
        _count(self.per_address_count, check.address, -1)

    def _start_next(self) -> None:
        while self.running < self.threads and self.queues:
            address = next(iter(self.queues))
            queue = self.queues.pop(address)
            check = queue.popleft()
            if queue:
                self.queues[address] = queue  # to the back of the round
            check.started = True
            self.running += 1
            future = self.loop.run_in_executor(self.pool, _verify, check.secret, check.stored)
            future.add_done_callback(lambda finished, check=check: self._finished(check, finished))

    def _finished(self, check: Check, future: asyncio.Future[bool]) -> None:
        self.running -= 1
        self._release(check)
        accepted = not future.cancelled() and future.exception() is None and bool(future.result())
        try:
            check.done(accepted)
        finally:
            self._start_next()
