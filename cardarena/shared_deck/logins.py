"""Secret checks (scrypt) off the event loop, in a small pool that a flood cannot monopolise.

A wrong secret costs the server one scrypt (tens of milliseconds of CPU and 16 MiB), so the
checks are rationed. They run in a dedicated pool of ``threads`` threads (at a lower CPU
priority than the game where the OS allows it). Clients are grouped by *source*: an IPv4
address, or an IPv6 /64 (one machine's allocation hands out addresses freely within it).

- A source may have at most ``per_address`` checks waiting or running (many honest bots
  often share one address), and at most one per name: a further one for the same name
  takes the waiting one's place in the queue (that client is closed unanswered: it is
  usually the same player retrying after a timeout), or is refused at once while the first
  is running; either way without running scrypt.
- The checks waiting for a thread are queued per source and served round-robin across
  sources: a login waits for at most one check of each other source with checks waiting,
  however many checks each of them sent, and however many sources aim at the same name
  (no per-name total can be filled by others, so no group of sources locks a player out).
- A source from which a name has logged in with its secret (one of the last
  KNOWN_SOURCES_PER_NAME such sources since the server started) is served first for that
  name, in a lane of its own with one more thread kept for it (not niced: its checks are
  few): a returning player waits for at most the other returning players' checks, never for
  attackers', however many sources they have.

A check whose client has left before it started is dropped without running.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import threading
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from .store import dummy_hash, verify_secret

KNOWN_SOURCES_PER_NAME = 4
"""Sources remembered per name, from which it logged in with its secret (the latest ones)."""
LOGIN_NICE = 10
"""Niceness added to the secret-check threads (Linux applies it per thread): a flood of
logins then takes CPU mostly when the game does not need it."""


def source_of(address: str) -> str:
    """The source a client address counts as: an IPv4 address (also one mapped into IPv6),
    or the /64 of an IPv6 address; anything else (a Unix socket path) as it is."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class Check:
    """One secret waiting to be checked, then being checked; ``done`` gets the verdict."""

    __slots__ = ("address", "done", "known", "name", "secret", "started", "stored")

    def __init__(
        self, address: str, name: str, secret: str, stored: str | None,
        done: Callable[[bool | None], None], known: bool = False,
    ) -> None:  # fmt: skip
        self.address, self.name, self.secret, self.stored = address, name, secret, stored
        """``address`` is the client's source (see :func:`source_of`)."""
        self.done = done
        """Called with the verdict, or with None if the check was replaced unrun."""
        self.known = known
        """The name has logged in from this source before: the check is served first."""
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
        self.first_pool = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="shared-deck-login-known"
        )
        """The thread kept for checks from a source the name has logged in from, at the
        server's own priority: its checks are few (one per name and source, and only from
        sources that gave the secret before), so a busy machine does not delay them."""
        self.first_busy = False
        self.queues: dict[str, deque[Check]] = {}
        """Checks waiting for a thread, per source, in round-robin order (dict order)."""
        self.returning: deque[Check] = deque()
        """Checks from a source the name has logged in from: served before the others."""
        self.known: dict[str, OrderedDict[str, None]] = {}
        """Per name, the sources it last logged in from with its secret (latest last)."""
        self.per_address_count: dict[str, int] = {}
        """Checks waiting or running per source."""
        self.names: dict[tuple[str, str], Check] = {}
        """The check waiting or running of each (name, source) pair that has one."""
        self.running = 0
        self.refused = 0
        """Checks refused over the limits (for diagnostics and tests)."""
        self.dropped = 0
        """Checks dropped unrun because their client left."""
        self.replaced = 0
        """Waiting checks replaced by a newer one for the same name and source."""

    def submit(
        self, address: str, name: str, secret: str, stored: str | None,
        done: Callable[[bool | None], None],
    ) -> Check | None:  # fmt: skip
        """Queue a check of a client at ``address``; None if it is refused (its source has
        too many checks already, or one for this name that is running)."""
        source = source_of(address)
        earlier = self.names.get((name, source))
        if earlier is not None and not earlier.started:
            return self._replace(earlier, Check(source, name, secret, stored, done, earlier.known))
        if earlier is not None or self.per_address_count.get(source, 0) >= self.per_address:
            self.refused += 1
            return None
        known = source in self.known.get(name, ())
        check = Check(source, name, secret, stored, done, known)
        self.names[(name, source)] = check
        _count(self.per_address_count, source, 1)
        if known:
            self.returning.append(check)
        else:
            self.queues.setdefault(source, deque()).append(check)
        self._start_next()
        return check

    def _replace(self, earlier: Check, check: Check) -> Check:
        """``check`` takes the place of ``earlier`` (not started) in its queue."""
        queue = self.returning if earlier.known else self.queues[earlier.address]
        queue[queue.index(earlier)] = check
        self.names[(check.name, check.address)] = check
        self.replaced += 1
        earlier.done(None)
        return check

    def cancel(self, check: Check) -> None:
        """The client left: drop the check if it has not started (a running one finishes)."""
        if check.started:
            return
        if check.known:
            if check not in self.returning:
                return
            self.returning.remove(check)
        else:
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
        self.returning.clear()
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.first_pool.shutdown(wait=False, cancel_futures=True)

    def shutdown(self) -> None:
        """Wait for the running checks to end (in a thread, after :meth:`close`)."""
        self.pool.shutdown()
        self.first_pool.shutdown()

    def _release(self, check: Check) -> None:
        if self.names.get((check.name, check.address)) is check:
            del self.names[(check.name, check.address)]
        _count(self.per_address_count, check.address, -1)

    def _remember(self, check: Check) -> None:
        """The name logged in from this source: its next checks from there go first."""
        sources = self.known.setdefault(check.name, OrderedDict())
        sources[check.address] = None
        sources.move_to_end(check.address)
        while len(sources) > KNOWN_SOURCES_PER_NAME:
            sources.popitem(last=False)

    def _next(self) -> Check:
        if self.returning:
            return self.returning.popleft()
        source = next(iter(self.queues))
        queue = self.queues.pop(source)
        check = queue.popleft()
        if queue:
            self.queues[source] = queue  # to the back of the round
        return check

    def _start_next(self) -> None:
        if self.returning and not self.first_busy:
            self.first_busy = True
            self._run(self.returning.popleft(), True)
        while self.running < self.threads and (self.returning or self.queues):
            self.running += 1
            self._run(self._next(), False)

    def _run(self, check: Check, first: bool) -> None:
        check.started = True
        pool = self.first_pool if first else self.pool
        future = self.loop.run_in_executor(pool, _verify, check.secret, check.stored)
        future.add_done_callback(
            lambda finished, check=check: self._finished(check, finished, first)
        )

    def _finished(self, check: Check, future: asyncio.Future[bool], first: bool) -> None:
        if first:
            self.first_busy = False
        else:
            self.running -= 1
        self._release(check)
        accepted = not future.cancelled() and future.exception() is None and bool(future.result())
        if accepted:
            self._remember(check)
        try:
            check.done(accepted)
        finally:
            self._start_next()
