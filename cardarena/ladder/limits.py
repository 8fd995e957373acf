"""Per-participant rate limits of a ladder: submissions per hour, A/B tests per day and at
once. Counted from the database (the versions and tests a participant created), so a
restart forgets nothing; organisers are exempt. A request over a limit is refused with one
line and how long to wait (HTTP 429 with ``Retry-After``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .store import LadderError, LadderStore, User

HOUR_S = 3600.0
DAY_S = 24 * HOUR_S
BUSY_RETRY_S = 60
"""Retry-After when too many of one's tests run at once (a verdict may come any time)."""


@dataclass(frozen=True)
class RateLimits:
    """The organiser's limits per participant (None: no limit)."""

    submissions_per_hour: int | None = 10
    ab_per_day: int | None = 20


class Throttled(LadderError):
    """A request over a participant's rate limit: one line, and the seconds to wait."""

    def __init__(self, reason: str, retry_after: int) -> None:
        super().__init__(reason)
        self.retry_after = max(1, int(retry_after))


def wait_s(times: Sequence[float], limit: int, window: float, now: float) -> float:
    """Seconds until fewer than ``limit`` of ``times`` (oldest first) are in the last
    ``window`` seconds; 0 if that is already so."""
    recent = sorted(t for t in times if t > now - window)
    if len(recent) < limit:
        return 0.0
    return recent[len(recent) - limit] + window - now


def _refuse(what: str, limit: int, per: str, wait: float) -> Throttled:
    seconds = max(1, math.ceil(wait))
    later = f"{math.ceil(seconds / 60)} min" if seconds >= 60 else f"{seconds} s"
    return Throttled(f"at most {limit} {what} per {per} on this ladder: try again in {later}",
                     seconds)  # fmt: skip


def check_submission(store: LadderStore, user: User, limits: RateLimits) -> None:
    """Throttled if ``user`` submitted ``submissions_per_hour`` versions in the last hour."""
    limit = limits.submissions_per_hour
    if user.organiser or limit is None:
        return
    now = store._clock()
    with store._lock:
        times = [
            float(row[0])
            for row in store.db.execute(
                "SELECT v.created FROM versions v JOIN bots b ON b.id = v.bot "
                "WHERE b.owner = ? AND v.created > ?",
                (user.id, now - HOUR_S),
            )
        ]
    wait = wait_s(times, limit, HOUR_S, now)
    if wait > 0 or limit == 0:
        raise _refuse("submissions", limit, "hour", wait or HOUR_S)


def check_ab(
    created: Sequence[float], running: int, user: User, limits: RateLimits, at_once: int,
    now: float,
) -> None:  # fmt: skip
    """Throttled if ``user`` started ``ab_per_day`` tests in the last day (``created``) or
    has ``at_once`` tests ``running``."""
    if user.organiser:
        return
    if running >= at_once:
        raise Throttled(f"you have {running} A/B test(s) running, the most at once on this "
                        "ladder: stop one or wait for a verdict", BUSY_RETRY_S)  # fmt: skip
    limit = limits.ab_per_day
    if limit is None:
        return
    wait = wait_s(created, limit, DAY_S, now)
    if wait > 0 or limit == 0:
        raise _refuse("A/B tests", limit, "day", wait or DAY_S)
