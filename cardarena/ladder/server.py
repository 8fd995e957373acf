"""The ladder's web server: its pages and its JSON API, for any game (aiohttp, imported here).

The server only reads and writes through a :class:`LadderData` (the store, seen as JSON-ready
dictionaries) and knows the game only through :class:`LadderHooks`: the game's side gives the
viewer page of a game's log and hides a bot's stderr from a log. ``cardarena.ladder`` never
imports a game.

Who may do what:

- anyone reads the leaderboard, the bots, the games and their viewer pages; a bot's build log
  and its stderr in games are shown to its owner only;
- a participant is known by their token: in an ``Authorization: Bearer`` header (the JSON API,
  ``locm ladder submit``), never in an address; or, in a browser, by the session cookie that
  the login form sets (HttpOnly, SameSite=Strict) once it was given the token;
- an organiser may also pause and resume the games, freeze submissions, disable and retire bots.

Requests that change something come from this server's own pages or from programs: every
request but GET and HEAD whose ``Origin``/``Sec-Fetch-Site`` name another site is refused
(403); each form carries a secret of the browser's session (the CSRF field), checked in
constant time; the JSON API's POSTs take the bearer token alone, never the cookie, so no page
elsewhere can make a browser send one. An upload is refused (413) when its declared length
is over the cap, before a byte of it is read, and as soon as what arrives goes over it.
Pages are rendered by :func:`cardarena.pages.render` (autoescape) and served with a
Content-Security-Policy that lets only the server's own script file run.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import math
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any, Protocol, TypeVar
from urllib.parse import urlsplit

from ..pages import render
from ..tournaments.store import StoreError
from .store import User
from .uploads import UploadLimits, unpack

if TYPE_CHECKING:
    from aiohttp import web

    from ..httpguard import HttpLimits
    from .abweb import AbWeb

WEB = "cardarena.ladder.web"
"""The package of the templates, the style sheet and the script."""
STATUSES = ("building", "failed", "validating", "active", "disabled", "retired")
"""A bot's (and a version's) status, as the store, the API and the pages say it."""
MAX_FIELD_BYTES = 4096
"""A form field other than the file (a name, a language, the CSRF secret) at most."""
MAX_JSON_BYTES = 16 << 10
"""The body of an organiser's JSON request at most."""
MAX_PAGE = 100
"""Games listed in one answer at most (``limit``)."""
SESSION_SECONDS = 7 * 24 * 3600.0
MAX_SESSIONS = 10_000
"""Browser sessions kept at most (the oldest is forgotten first: it logs in again)."""
MAX_SESSIONS_PER_USER = 32
"""One participant's sessions at most (their oldest goes first): logging in again and again
cannot push everyone else's sessions out."""
NAME_PATTERN = "[^/]{1,100}"
"""A bot's or a participant's name in an address."""
GAME_NUMBER = "[0-9]{1,18}"
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
VIEWER_HEADERS = {
    # The viewer page carries its own policy (a <meta> that lets its inline script run by
    # hash); this one adds what a <meta> cannot say.
    "Content-Security-Policy": "frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
VIEWER_CACHE = 32
"""Viewer pages kept, the most recently asked for (a few hundred KB each)."""
VIEWER_RENDERS = 2
"""Viewer pages made at once (each replays its game in a worker thread)."""
ASSETS = {"ladder.js": "text/javascript", "ladder.css": "text/css"}
BODY_SECONDS = 10.0
"""A form's or a JSON request's body must have arrived this long after its head (the
connection guard never times a request being answered: a body sent a byte at a time would
keep its connection, and its place under the cap, for ever)."""
UPLOAD_BODY_FACTOR = 3
"""An upload's body may take this many times longer (30 s for 2 MB by default: 70 KB/s)."""
MAX_PARTS = 32
"""Parts of a multipart upload at most (fields named alike included)."""
MAX_FILENAME = 255
"""An uploaded file's name at most, in characters."""


class Refused(Exception):
    """A request the ladder refuses: ``status`` and a one-line reason for the person."""

    def __init__(self, status: int, reason: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.headers = dict(headers or {})
        """Added to the answer (``Retry-After`` of a request over a rate limit)."""


class LadderData(Protocol):
    """What the server reads and writes: the store, in JSON-ready dictionaries (the shapes of
    the JSON API, docs/ladder.md). A write refused for the person's input raises ValueError
    with a one-line reason."""

    def state(self) -> dict[str, Any]: ...  # {"paused": bool, "frozen": bool}

    def leaderboard(self) -> list[dict[str, Any]]: ...

    def bot(self, name: str) -> dict[str, Any] | None: ...

    def games(self, bot: str | None, limit: int, offset: int) -> list[dict[str, Any]]: ...

    def game(self, game_id: int) -> tuple[dict[str, Any], Mapping[str, Any] | None] | None: ...

    def user_for_token(self, token: str) -> User | None: ...

    def user(self, name: str) -> dict[str, Any] | None: ...

    def submissions(self, user: User) -> list[dict[str, Any]]: ...

    def submit(self, user: User, bot: str, language: str, new_bot: bool, filename: str,
               data: bytes) -> dict[str, Any]: ...  # fmt: skip

    def set_paused(self, paused: bool) -> None: ...

    def set_frozen(self, frozen: bool) -> None: ...

    def set_bot_status(self, bot: str, status: str, reason: str) -> None: ...


def _no_viewer(_log: Mapping[str, Any], _hidden: frozenset[int], _back: str) -> str:
    raise Refused(404, "this ladder has no viewer for its games")


def _as_is(log: Mapping[str, Any], _hidden: frozenset[int]) -> Mapping[str, Any]:
    return log


class HumanPlay(Protocol):
    """Games of a person against a ladder's bot in the browser, served under ``/play``."""

    limit: int
    """Games at once at most (0: none)."""

    async def start(self, user: str, bot: str, seat: str) -> str:
        """Start ``user``'s game against ``bot`` (``seat``: ``first``, ``second`` or else
        either); its key, the address being ``/play/KEY/``. A ValueError with a one-line
        reason (and ``status``, an HTTP status) when it cannot start."""
        ...

    def app(self, who: Callable[[web.Request], str | None]) -> web.Application:
        """The games' pages, mounted at ``/play``; ``who`` names a request's participant."""
        ...


@dataclass(frozen=True)
class LadderHooks:
    """What the game's side gives the server."""

    title: str = "Ladder"
    """The ladder's name on its pages (``LOCM 1.5 ladder``)."""
    languages: tuple[str, ...] = ()
    """The languages a submission may be written in (none given: any name is passed on)."""
    entries: Mapping[str, str] = field(default_factory=dict)
    """Each language's entry file (``bot.py``, ``main.c``): ``GET /api/languages`` says it."""
    max_upload_bytes: int = UploadLimits.upload_bytes
    """A submission's file at most (the whole request may add MAX_FIELD_BYTES per field)."""
    viewer_page: Callable[[Mapping[str, Any], frozenset[int], str], str] = _no_viewer
    """(log, seats whose stderr is hidden, address back) -> the game's viewer page."""
    redact_log: Callable[[Mapping[str, Any], frozenset[int]], Mapping[str, Any]] = _as_is
    """(log, seats whose stderr is hidden) -> the log without those seats' stderr."""
    submitted: Callable[[dict[str, Any]], None] | None = None
    """Told of each new submission (the builder starts at once)."""
    changed: Callable[[], None] | None = None
    """Told when an organiser paused, resumed, froze or changed a bot (the scheduler)."""
    extra_routes: tuple[Callable[[Any, RouteTools], None], ...] = ()
    """More pages and API routes (the final's, :mod:`.final_web`): each is called with the
    application's router and :class:`RouteTools`, before the catch-all route."""
    play: HumanPlay | None = None
    """Games of a person against a bot in the browser (None: the ladder offers none)."""


@dataclass(frozen=True)
class RouteTools:
    """What a route added through :attr:`LadderHooks.extra_routes` uses of the server: who
    asks, refusals, pages and JSON answers with this server's headers and policy."""

    api_user: Callable[..., User | None]
    """(request, cookie=bool) -> the bearer token's user (for reads also the browser's)."""
    needs_organiser: Callable[[User | None], User]
    """Refused(401/403) unless an organiser."""
    body: Callable[[Any], Awaitable[dict[str, Any]]]
    """The request's JSON object body (size-capped)."""
    form: Callable[[Any], Awaitable[tuple[User, dict[str, str]]]]
    """A logged-in browser's form, its CSRF field checked."""
    page: Callable[..., Any]
    """(request, template of this package, status=200, **context) -> the page."""
    json: Callable[..., Any]
    """(data, status=200) -> the JSON answer."""
    see_other: Callable[[str], Any]


@dataclass
class _Session:
    user: User
    csrf: str
    expires: float


@dataclass
class Sessions:
    """The browsers logged in: a random cookie value -> the user and the session's CSRF
    secret. Kept in memory: after a restart, people log in again."""

    limit: int = MAX_SESSIONS
    seconds: float = SESSION_SECONDS
    per_user: int = MAX_SESSIONS_PER_USER
    known: OrderedDict[str, _Session] = field(default_factory=OrderedDict)

    def open(self, user: User) -> tuple[str, str]:
        """A new session of ``user``: (cookie value, CSRF secret)."""
        theirs = [cookie for cookie, session in self.known.items() if session.user.id == user.id]
        for cookie in theirs[: max(0, len(theirs) - self.per_user + 1)]:
            del self.known[cookie]
        while len(self.known) >= self.limit:
            self.known.popitem(last=False)
        cookie, csrf = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        self.known[cookie] = _Session(user, csrf, time.monotonic() + self.seconds)
        return cookie, csrf

    def get(self, cookie: str | None) -> _Session | None:
        if not cookie:
            return None
        session = self.known.get(cookie)
        if session is None:
            return None
        if session.expires < time.monotonic():
            del self.known[cookie]
            return None
        return session

    def close(self, cookie: str | None) -> None:
        if cookie:
            self.known.pop(cookie, None)


def same_secret(given: str, secret: str) -> bool:
    """In constant time; a form may hold any text, lone surrogates included."""
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), secret.encode())


def bearer_token(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer TOKEN`` header, else None."""
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


@cache
def _asset(name: str) -> str:
    return files(WEB).joinpath(name).read_text(encoding="utf-8")


def interval_text(row: Mapping[str, Any]) -> str:
    """The fitted rating and its 95% interval, as the board shows them (``1520 [1480, 1560]``)."""
    elo = row.get("elo")
    if not isinstance(elo, Mapping) or elo.get("value") is None:
        return "–"
    return f"{elo['value']:.0f} [{elo['low']:.0f}, {elo['high']:.0f}]"


def size_text(size: int) -> str:
    """A size in bytes as people read it: ``2 MB``, ``4 KB``, ``512 bytes``."""
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} bytes"


def win_rate(row: Mapping[str, Any]) -> float | None:
    """Wins plus half the draws over the games, None before any game."""
    games = row.get("games") or 0
    if not games:
        return None
    return (row.get("wins", 0) + 0.5 * row.get("draws", 0)) / games


@dataclass(frozen=True)
class Chart:
    """A bot's rating over its games, as the points of an SVG polyline (drawn server-side:
    numbers only reach the page)."""

    width: int
    height: int
    line: str
    band: str
    low: float
    high: float
    count: int


def rating_chart(points: Sequence[Mapping[str, Any]], width: int = 600,
                 height: int = 160) -> Chart | None:  # fmt: skip
    """The chart of ``points`` (``mu`` and ``sigma`` after each rated game), None for fewer
    than two: the line is mu, the band mu ± 3 sigma."""
    values = [(float(p["mu"]), float(p["sigma"])) for p in points
              if math.isfinite(float(p["mu"])) and math.isfinite(float(p["sigma"]))]  # fmt: skip
    if len(values) < 2:
        return None
    low = min(mu - 3 * sigma for mu, sigma in values)
    high = max(mu + 3 * sigma for mu, sigma in values)
    span = (high - low) or 1.0
    step = width / (len(values) - 1)

    def y(value: float) -> float:
        return round(height - (value - low) / span * height, 1)

    line = " ".join(f"{round(i * step, 1)},{y(mu)}" for i, (mu, _s) in enumerate(values))
    upper = [f"{round(i * step, 1)},{y(mu + 3 * s)}" for i, (mu, s) in enumerate(values)]
    lower = [f"{round(i * step, 1)},{y(mu - 3 * s)}" for i, (mu, s) in enumerate(values)]
    band = " ".join(upper + lower[::-1])
    return Chart(width, height, line, band, low, high, len(values))


def head_to_head(bot: str, games: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per opponent of ``bot`` in finished ``games``: games, wins, draws, losses."""
    table: dict[str, dict[str, Any]] = {}
    for game in games:
        seats = game.get("seats") or []
        names = [seat.get("bot") for seat in seats]
        if game.get("state", "done") != "done" or bot not in names or len(names) != 2:
            continue
        mine = names.index(bot)
        opponent = str(names[1 - mine])
        row = table.setdefault(opponent, {"opponent": opponent, "games": 0, "wins": 0,
                                          "draws": 0, "losses": 0})  # fmt: skip
        row["games"] += 1
        winner = game.get("winner")
        if winner is None:
            row["draws"] += 1
        elif winner == mine:
            row["wins"] += 1
        else:
            row["losses"] += 1
    return sorted(table.values(), key=lambda row: (-row["games"], row["opponent"]))


def owner_view(bot: Mapping[str, Any], viewer: User | None) -> dict[str, Any]:
    """``bot`` as ``viewer`` may see it: the build logs only for its owner."""
    mine = viewer is not None and viewer.name == bot.get("owner")
    shown = dict(bot, mine=mine)
    versions = []
    for version in bot.get("versions") or []:
        version = dict(version)
        if not mine:
            version.pop("build_log", None)
        versions.append(version)
    shown["versions"] = versions
    return shown


def hidden_seats(game: Mapping[str, Any], viewer: User | None) -> frozenset[int]:
    """The seats of ``game`` whose stderr ``viewer`` may not see: every seat but their own."""
    seats = game.get("seats") or []
    return frozenset(
        index for index, seat in enumerate(seats)
        if viewer is None or seat.get("owner") != viewer.name
    )  # fmt: skip


def _json(data: Any, status: int = 200) -> web.Response:
    from aiohttp import web

    return web.Response(text=json.dumps(data, ensure_ascii=False, allow_nan=False),
                        status=status, content_type="application/json",
                        headers=HEADERS)  # fmt: skip


def _cookie_names(request: web.Request) -> tuple[str, str]:
    """(session, login) cookie names, per port: browsers send a host's cookies to all its
    ports, and two ladders (or a ladder and a game page) may run on one machine."""
    sockname = request.transport.get_extra_info("sockname") if request.transport else None
    port = sockname[1] if sockname else 0
    return f"ladder-session-{port}", f"ladder-login-{port}"


def same_origin_posts() -> Any:
    """Middleware: a request other than GET and HEAD that a browser says comes from another
    site (its ``Origin`` or ``Sec-Fetch-Site``) is refused, 403. Programs send neither and are
    judged by their bearer token."""
    from aiohttp import web

    @web.middleware
    async def posts(
        request: web.Request,
        handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
    ) -> web.StreamResponse:
        if request.method not in ("GET", "HEAD"):
            origin = request.headers.get("Origin")
            site = request.headers.get("Sec-Fetch-Site")
            # The host alone: behind a proxy that adds TLS the page is https and this
            # server sees http; a page of another site never has this host.
            if (origin is not None and urlsplit(origin).netloc != request.host) or (
                site is not None and site not in ("same-origin", "none")
            ):
                return web.Response(status=403, text="refused: this server takes requests "
                                    "from its own pages only\n")  # fmt: skip
        return await handler(request)

    return posts


_Read = TypeVar("_Read")


@dataclass
class _Upload:
    fields: dict[str, str]
    filename: str
    data: bytes


async def read_upload(request: web.Request, max_file: int) -> _Upload:
    """The fields and the file of a multipart upload, read as it arrives: Refused(413) once
    the file goes over ``max_file`` bytes or a field over MAX_FIELD_BYTES, before the rest
    is read; Refused(400) for a body that is not a form with one file."""
    from aiohttp import BodyPartReader

    limit = max_file + 16 * MAX_FIELD_BYTES
    if request.content_length is not None and request.content_length > limit:
        raise Refused(413, f"the upload is larger than the ladder's cap of {size_text(max_file)}")
    if not request.content_type.startswith("multipart/form-data"):
        raise Refused(400, "send the bot as multipart/form-data (a form with a file)")
    try:
        reader = await request.multipart()
        fields: dict[str, str] = {}
        filename: str | None = None
        data = b""
        parts = 0
        while True:
            part = await reader.next()
            if part is None:
                break
            parts += 1
            if parts > MAX_PARTS:
                raise Refused(400, "too many parts in the upload")
            # A chunked body declares no length: count what arrives, every part together.
            if request.content.total_bytes > limit:
                raise Refused(413, f"the upload is larger than the ladder's cap of "
                              f"{size_text(max_file)}")  # fmt: skip
            if not isinstance(part, BodyPartReader):
                raise Refused(400, "a nested multipart body is not an upload")
            if part.filename is not None and part.name == "file":
                if filename is not None:
                    raise Refused(400, "one file per submission (a .zip or .tar.gz for more)")
                filename = part.filename
                data = await _read_part(part, max_file, f"the file is larger than the "
                                        f"ladder's cap of {size_text(max_file)}")  # fmt: skip
            else:
                if len(fields) >= 16:
                    raise Refused(400, "too many fields in the upload")
                raw = await _read_part(part, MAX_FIELD_BYTES, f"the field {part.name!r} is "
                                       "too long")  # fmt: skip
                fields[str(part.name)] = raw.decode("utf-8", "replace")
    except ValueError as error:  # a malformed body (aiohttp's own errors are ValueErrors)
        raise Refused(400, f"not a form upload: {error}") from None
    if filename is None:
        raise Refused(400, "no file in the upload (the field 'file')")
    if request.content.total_bytes > limit:
        raise Refused(413, f"the upload is larger than the ladder's cap of {size_text(max_file)}")
    return _Upload(fields, checked_filename(filename), data)


async def _read_part(part: Any, cap: int, too_large: str) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = await part.read_chunk(65536)
        if not chunk:
            break
        size += len(chunk)
        if size > cap:
            raise Refused(413, too_large)
        chunks.append(chunk)
    data = b"".join(chunks)
    encoding = part.headers.get("Content-Transfer-Encoding")
    return part.decode(data) if encoding else data


def checked_filename(name: str) -> str:
    """The uploaded file's name, or Refused(400) for one no page or terminal should show: a
    control, format (bidi), surrogate or line-separator character, or a very long one."""
    import unicodedata

    if len(name) > MAX_FILENAME:
        raise Refused(400, f"the file's name is longer than {MAX_FILENAME} characters")
    if any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") for c in name):
        raise Refused(400, "the file's name holds a control or formatting character")
    return name


def check_upload(data: bytes, filename: str) -> None:
    """UploadError (one line) for an upload that the build would refuse to unpack: an archive
    that is not one, a name that climbs out, a bomb, a binary where a source file goes."""
    import tempfile
    from pathlib import Path

    limits = UploadLimits(upload_bytes=max(len(data), 1))  # the server's cap was applied
    with tempfile.TemporaryDirectory(prefix="ladder-upload-") as folder:
        unpack(data, filename, Path(folder) / "upload", limits)


def make_app(data: LadderData, hooks: LadderHooks = LadderHooks(),
             middlewares: Sequence[Any] = (), ab: AbWeb | None = None,
             body_seconds: float = BODY_SECONDS) -> web.Application:  # fmt: skip
    """The aiohttp application of a ladder over ``data``; ``middlewares`` (the connection
    guard's) run first; ``ab``: the A/B tests and the rate limits (:mod:`.abweb`); a form's
    body must arrive within ``body_seconds`` of its head, an upload's within
    UPLOAD_BODY_FACTOR times that (else 408, and the connection is closed)."""
    from aiohttp import web
    from aiohttp.http_exceptions import HttpProcessingError

    sessions = Sessions()
    viewer_pages: OrderedDict[tuple[int, frozenset[int]], str] = OrderedDict()
    """Viewer pages by game and hidden seats (a finished game's log never changes)."""
    rendering = asyncio.Semaphore(VIEWER_RENDERS)

    async def in_time(reading: Awaitable[_Read], factor: int = 1) -> _Read:
        """``reading`` (of a request's body), Refused(408) if it takes too long."""
        try:
            return await asyncio.wait_for(reading, body_seconds * factor)
        except TimeoutError:
            raise Refused(408, "the request's body came too slowly") from None

    # ------------------------------------------------------------ who is asking
    def session_of(request: web.Request) -> tuple[str | None, _Session | None]:
        cookie = request.cookies.get(_cookie_names(request)[0])
        return cookie, sessions.get(cookie)

    def browser_user(request: web.Request) -> User | None:
        session = session_of(request)[1]
        return None if session is None else session.user

    def api_user(request: web.Request, *, cookie: bool) -> User | None:
        """The bearer token's user; for reads (``cookie``) the browser's session too."""
        header = request.headers.get("Authorization")
        if header is not None:
            token = bearer_token(header)
            user = data.user_for_token(token) if token else None
            if user is None:
                raise Refused(401, "unknown token (the line that locm ladder user add printed)")
            return user
        return browser_user(request) if cookie else None

    def needs_user(user: User | None) -> User:
        if user is None:
            raise Refused(401, "give your token: an 'Authorization: Bearer TOKEN' header")
        return user

    def needs_organiser(user: User | None) -> User:
        if not needs_user(user).organiser:
            raise Refused(403, "only an organiser may do this")
        assert user is not None
        return user

    async def form_of(request: web.Request) -> tuple[User, dict[str, str]]:
        """The form of a logged-in browser, its CSRF field checked."""
        _cookie, session = session_of(request)
        if session is None:
            raise Refused(401, "log in first (your session ended?)")
        if request.content_length is not None and request.content_length > MAX_FIELD_BYTES * 4:
            raise Refused(413, "this form is too large")
        form = await in_time(request.post())
        given = form.get("csrf")
        if not isinstance(given, str) or not same_secret(given, session.csrf):
            raise Refused(403, "this form is out of date: reload the page and try again")
        return session.user, {key: value for key, value in form.items() if isinstance(value, str)}

    # ------------------------------------------------------------ answers
    def page(request: web.Request, template: str, status: int = 200,
             **context: Any) -> web.Response:  # fmt: skip
        _cookie, session = session_of(request)
        text = render(WEB, template, title=hooks.title, me=session.user if session else None,
                      csrf=session.csrf if session else "", state=data.state(),
                      **context)  # fmt: skip
        return web.Response(text=text, status=status, content_type="text/html", charset="utf-8",
                            headers=HEADERS)  # fmt: skip

    def see_other(where: str) -> web.Response:
        return web.Response(status=303, headers={**HEADERS, "Location": where})

    def wants_json(request: web.Request) -> bool:
        return request.path.startswith("/api/")

    @web.middleware
    async def refusals(
        request: web.Request,
        handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
    ) -> web.StreamResponse:
        try:
            return await handler(request)
        except StoreError as error:  # the file itself (a full disk...): say so, keep serving
            refused = Refused(503, str(error))
        except Refused as caught:
            refused = caught
        except HttpProcessingError as error:  # a malformed body: a part's header too long...
            refused = Refused(400, f"a malformed request body ({type(error).__name__})")
        if wants_json(request):
            answer = _json({"error": refused.reason}, refused.status)
        else:
            try:
                answer = page(request, "error.html", refused.status, message=refused.reason)
            except StoreError:
                answer = web.Response(status=refused.status, text=f"{refused.reason}\n")
        answer.headers.update(refused.headers)
        return answer

    # ------------------------------------------------------------ JSON API
    async def api_leaderboard(_request: web.Request) -> web.Response:
        bots = data.leaderboard()
        for row in bots:
            row.setdefault("win_rate", win_rate(row))
        return _json({**data.state(), "title": hooks.title, "bots": bots})

    async def api_languages(_request: web.Request) -> web.Response:
        listed = [{"name": name, "entry": hooks.entries.get(name)} for name in hooks.languages]
        return _json({"languages": listed})

    def bot_or_404(name: str) -> dict[str, Any]:
        bot = data.bot(name)
        if bot is None:
            raise Refused(404, f"no bot called {name!r} on this ladder")
        return bot

    def bot_details(name: str, viewer: User | None) -> dict[str, Any]:
        bot = owner_view(bot_or_404(name), viewer)
        recent = data.games(name, MAX_PAGE, 0)
        bot.setdefault("head_to_head", head_to_head(name, recent))
        bot["recent_games"] = recent
        return bot

    async def api_bot(request: web.Request) -> web.Response:
        viewer = api_user(request, cookie=True)
        return _json(bot_details(request.match_info["name"], viewer))

    def paging(request: web.Request) -> tuple[int, int]:
        try:
            limit = int(request.query.get("limit", "50"))
            offset = int(request.query.get("offset", "0"))
        except ValueError:
            raise Refused(400, "limit and offset are whole numbers") from None
        if not 1 <= limit <= MAX_PAGE or offset < 0:
            raise Refused(400, f"limit is 1..{MAX_PAGE}, offset at least 0")
        return limit, offset

    async def api_games(request: web.Request) -> web.Response:
        limit, offset = paging(request)
        bot = request.query.get("bot")
        if bot is not None:
            bot_or_404(bot)
        return _json({"games": data.games(bot, limit, offset), "limit": limit,
                      "offset": offset})  # fmt: skip

    def game_or_404(request: web.Request) -> tuple[dict[str, Any], Mapping[str, Any] | None]:
        game_id = int(request.match_info["id"])
        found = data.game(game_id)
        if found is None:
            raise Refused(404, f"no game {game_id} on this ladder")
        return found

    async def api_game(request: web.Request) -> web.Response:
        viewer = api_user(request, cookie=True)
        game, log = game_or_404(request)
        shown = None if log is None else hooks.redact_log(log, hidden_seats(game, viewer))
        return _json({"game": game, "log": shown})

    async def api_me(request: web.Request) -> web.Response:
        user = needs_user(api_user(request, cookie=True))
        return _json({"name": user.name, "organiser": user.organiser,
                      "submissions": data.submissions(user)})  # fmt: skip

    async def take_submission(user: User, upload: _Upload) -> dict[str, Any]:
        fields = upload.fields
        name = fields.get("name", "").strip()
        language = fields.get("language", "").strip()
        if not name:
            raise Refused(400, "give the bot a name (the field 'name')")
        if not language:
            raise Refused(400, "say which language the bot is written in (the field 'language')")
        if hooks.languages and language not in hooks.languages:
            raise Refused(400, f"unknown language {language!r}: this ladder takes "
                          f"{', '.join(hooks.languages)}")  # fmt: skip
        new_bot = fields.get("new_bot", "").strip().lower() in ("1", "true", "yes", "on")
        if ab is not None:
            from .limits import Throttled

            try:
                ab.check_submission(user)
            except Throttled as over:
                raise Refused(429, str(over), {"Retry-After": str(over.retry_after)}) from None
        try:  # a broken archive is refused now, with its reason, not at the build
            await in_thread(check_upload, upload.data, upload.filename)
        except ValueError as error:
            raise Refused(400, str(error)) from None
        try:
            answer = data.submit(user, name, language, new_bot, upload.filename, upload.data)
        except ValueError as error:
            raise Refused(400, str(error)) from None
        if hooks.submitted is not None:
            hooks.submitted(answer)
        return answer

    async def api_submit(request: web.Request) -> web.Response:
        user = needs_user(api_user(request, cookie=False))
        upload = await in_time(read_upload(request, hooks.max_upload_bytes), UPLOAD_BODY_FACTOR)
        answer = await take_submission(user, upload)
        return _json(answer, 201)

    async def api_body(request: web.Request) -> dict[str, Any]:
        if request.content_length is not None and request.content_length > MAX_JSON_BYTES:
            raise Refused(413, "this request is too large")
        raw = await in_time(request.read())
        if not raw.strip():
            return {}
        try:
            body = json.loads(raw)
        except ValueError:
            raise Refused(400, "send a JSON object (or nothing)") from None
        if not isinstance(body, dict):
            raise Refused(400, "send a JSON object (or nothing)")
        return body

    def organise(action: str, bot: str | None, reason: str) -> None:
        if action in ("pause", "resume"):
            data.set_paused(action == "pause")
        elif action in ("freeze", "unfreeze"):
            data.set_frozen(action == "freeze")
        else:
            assert bot is not None
            bot_or_404(bot)
            status = {"disable": "disabled", "retire": "retired", "enable": "active"}[action]
            try:
                data.set_bot_status(bot, status, reason)
            except ValueError as error:
                raise Refused(409, str(error)) from None
        if hooks.changed is not None:
            hooks.changed()

    async def api_organise(request: web.Request) -> web.Response:
        needs_organiser(api_user(request, cookie=False))
        body = await api_body(request)
        reason = body.get("reason", "")
        if not isinstance(reason, str) or len(reason) > 500:
            raise Refused(400, "the reason is a text of at most 500 characters")
        action = request.match_info["action"]
        bot = request.match_info.get("name")
        organise(action, bot, reason.strip() or f"{action}d by an organiser")
        if bot is not None:
            return _json(owner_view(bot_or_404(bot), None))
        return _json(data.state())

    # ------------------------------------------------------------ pages
    async def leaderboard_page(request: web.Request) -> web.Response:
        bots = data.leaderboard()
        return page(request, "leaderboard.html", bots=bots, interval=interval_text,
                    win_rate=win_rate)  # fmt: skip

    async def bot_page(request: web.Request) -> web.Response:
        viewer = browser_user(request)
        bot = bot_details(request.match_info["name"], viewer)
        chart = rating_chart(bot.get("ratings") or [])
        playable = hooks.play is not None and hooks.play.limit > 0
        return page(request, "bot.html", bot=bot, chart=chart, interval=interval_text,
                    playable=playable)  # fmt: skip

    async def user_page(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        person = data.user(name)
        if person is None:
            raise Refused(404, f"no participant called {name!r} on this ladder")
        return page(request, "user.html", person=person, interval=interval_text)

    async def me_page(request: web.Request) -> web.Response:
        _cookie, session = session_of(request)
        if session is None:
            return login_page(request)
        return me(request, session.user)

    def me(request: web.Request, user: User, status: int = 200, error: str = "",
           notice: str = "") -> web.Response:  # fmt: skip
        return page(request, "me.html", status, submissions=data.submissions(user),
                    languages=hooks.languages, max_upload=size_text(hooks.max_upload_bytes),
                    error=error, notice=notice)  # fmt: skip

    def login_page(request: web.Request, status: int = 200, error: str = "") -> web.Response:
        secret = secrets.token_urlsafe(24)
        answer = page(request, "login.html", status, login_csrf=secret, error=error)
        answer.set_cookie(_cookie_names(request)[1], secret, path="/", httponly=True,
                          samesite="Strict", max_age=3600)  # fmt: skip
        return answer

    async def log_in(request: web.Request) -> web.Response:
        if request.content_length is not None and request.content_length > MAX_FIELD_BYTES:
            raise Refused(413, "this form is too large")
        form = await in_time(request.post())
        secret = request.cookies.get(_cookie_names(request)[1], "")
        given, token = form.get("csrf"), form.get("token")
        if not secret or not isinstance(given, str) or not same_secret(given, secret):
            return login_page(request, 403, "this form is out of date: try again")
        user = data.user_for_token(token.strip()) if isinstance(token, str) else None
        if user is None:
            return login_page(request, 401, "unknown token: paste the line that the "
                              "organisers gave you")  # fmt: skip
        cookie, _csrf = sessions.open(user)
        answer = see_other("/me")
        session_cookie, login_cookie = _cookie_names(request)
        answer.set_cookie(session_cookie, cookie, path="/", httponly=True, samesite="Strict",
                          max_age=int(SESSION_SECONDS))  # fmt: skip
        answer.del_cookie(login_cookie, path="/")
        return answer

    async def log_out(request: web.Request) -> web.Response:
        await form_of(request)
        cookie, _session = session_of(request)
        sessions.close(cookie)
        answer = see_other("/")
        answer.del_cookie(_cookie_names(request)[0], path="/")
        return answer

    async def submit_form(request: web.Request) -> web.Response:
        _cookie, session = session_of(request)
        if session is None:
            raise Refused(401, "log in first (your session ended?)")
        try:
            upload = await in_time(read_upload(request, hooks.max_upload_bytes), UPLOAD_BODY_FACTOR)
            if not same_secret(upload.fields.get("csrf", ""), session.csrf):
                raise Refused(403, "this form is out of date: reload the page and try again")
            answer = await take_submission(session.user, upload)
        except Refused as refused:
            answer = me(request, session.user, refused.status, error=refused.reason)
            answer.headers.update(refused.headers)
            return answer
        return see_other(f"/bots/{_quote(answer['bot'])}")

    async def organise_form(request: web.Request) -> web.Response:
        user, form = await form_of(request)
        action = request.match_info["action"]
        bot = request.match_info.get("name")
        if bot is not None and action == "retire":
            if not user.organiser and bot_or_404(bot).get("owner") != user.name:
                raise Refused(403, "only its owner or an organiser may retire a bot")
        else:
            needs_organiser(user)
        reason = " ".join(form.get("reason", "").split())[:500]
        who = "its owner" if bot is not None and not user.organiser else "an organiser"
        organise(action, bot, reason or f"{action}d by {who}")
        return see_other(f"/bots/{_quote(bot)}" if bot else "/me")

    async def game_page(request: web.Request) -> web.Response:
        viewer = browser_user(request)
        game, log = game_or_404(request)
        if log is None:
            raise Refused(404, f"game {game.get('id')} has no log yet ({game.get('state')})")
        hidden = hidden_seats(game, viewer)
        key = (int(game["id"]), hidden)
        text = viewer_pages.get(key)
        if text is None:
            bots = [seat["bot"] for seat in game.get("seats") or [] if not seat.get("builtin")]
            back = f"/bots/{_quote(bots[0])}" if bots else "/"
            async with rendering:  # a replay takes a while: a few at a time
                try:
                    text = await in_thread(hooks.viewer_page, log, hidden, back)
                except ValueError as error:  # a log that does not replay: say why
                    raise Refused(500, f"game {key[0]} cannot be shown: {error}") from None
            while len(viewer_pages) >= VIEWER_CACHE:
                viewer_pages.popitem(last=False)
            viewer_pages[key] = text
        viewer_pages.move_to_end(key)
        return web.Response(text=text, content_type="text/html", charset="utf-8",
                            headers=VIEWER_HEADERS)  # fmt: skip

    async def asset(request: web.Request) -> web.Response:
        name = request.match_info["asset"]
        return web.Response(text=_asset(name), content_type=ASSETS[name], charset="utf-8",
                            headers={**HEADERS, "Cache-Control": "no-cache"})  # fmt: skip

    async def not_found(_request: web.Request) -> web.Response:
        raise Refused(404, "no such page on this ladder")

    async def play_form(request: web.Request) -> web.Response:
        user, form = await form_of(request)
        bot = request.match_info["name"]
        bot_or_404(bot)
        if hooks.play is None:
            raise Refused(404, "this ladder plays no games against people")
        try:
            key = await hooks.play.start(user.name, bot, form.get("seat", ""))
        except ValueError as error:
            raise Refused(getattr(error, "status", 409), str(error)) from None
        return see_other(f"/play/{_quote(key)}/")

    def who(request: web.Request) -> str | None:
        user = browser_user(request)
        return None if user is None else user.name

    upload_cap = hooks.max_upload_bytes + 16 * MAX_FIELD_BYTES
    app = web.Application(middlewares=[*middlewares, same_origin_posts(), refusals],
                          client_max_size=max(upload_cap, MAX_JSON_BYTES))  # fmt: skip
    name = f"{{name:{NAME_PATTERN}}}"
    routes = app.router
    routes.add_get("/api/leaderboard", api_leaderboard)
    routes.add_get(f"/api/bots/{name}", api_bot)
    routes.add_get("/api/games", api_games)
    routes.add_get(f"/api/games/{{id:{GAME_NUMBER}}}", api_game)
    routes.add_get("/api/me", api_me)
    routes.add_get("/api/languages", api_languages)
    routes.add_post("/api/submissions", api_submit)
    routes.add_post("/api/ladder/{action:pause|resume|freeze|unfreeze}", api_organise)
    routes.add_post(f"/api/bots/{name}/{{action:disable|retire|enable}}", api_organise)
    routes.add_get("/", leaderboard_page)
    routes.add_get(f"/bots/{name}", bot_page)
    routes.add_get(f"/users/{name}", user_page)
    routes.add_get(f"/games/{{id:{GAME_NUMBER}}}", game_page)
    routes.add_get("/me", me_page)
    routes.add_post("/login", log_in)
    routes.add_post("/logout", log_out)
    routes.add_post("/me/submit", submit_form)
    routes.add_post("/ladder/{action:pause|resume|freeze|unfreeze}", organise_form)
    routes.add_post(f"/bots/{name}/{{action:disable|retire|enable}}", organise_form)
    routes.add_post(f"/bots/{name}/play", play_form)
    if hooks.play is not None:  # before the catch-all below
        app.add_subapp("/play", hooks.play.app(who))
    routes.add_get("/static/{asset:ladder\\.(js|css)}", asset)
    tools = RouteTools(api_user=api_user, needs_organiser=needs_organiser, body=api_body,
                       form=form_of, page=page, json=_json, see_other=see_other)  # fmt: skip
    for add_routes in hooks.extra_routes:
        add_routes(routes, tools)
    if ab is not None:
        from .abweb import WebTools, add_routes

        add_routes(routes, ab, WebTools(api_user, browser_user, needs_user, form_of, page,
                                        api_body, see_other, Refused, _json,
                                        HEADERS))  # fmt: skip
    routes.add_route("*", "/{tail:.*}", not_found)
    return app


R = TypeVar("R")


async def in_thread(function: Callable[..., R], *args: Any) -> R:
    """``function(*args)`` on a thread of its own, awaited. Not the event loop's default
    executor: in this process, which forks game workers and starts bots while it serves, its
    ``submit`` once failed on concurrent.futures' process-wide shutdown lock ("RuntimeError:
    release unlocked lock", a 500 to an upload, in a loaded test run); a plain thread takes
    no such lock."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[R] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if future.done():
            return
        if error is None:
            future.set_result(result)
        else:
            future.set_exception(error)

    def run() -> None:
        try:
            result = function(*args)
        except BaseException as error:  # handed to the awaiting coroutine
            loop.call_soon_threadsafe(settle, None, error)
        else:
            loop.call_soon_threadsafe(settle, result, None)

    threading.Thread(target=run, name="ladder-work", daemon=True).start()
    return await future


class _OneLineForMalformed(logging.Formatter):
    """aiohttp logs a malformed request (a bad request line, too many headers) with its
    traceback: anyone could fill the organiser's terminal with them. One line instead, its
    text escaped; a real fault of the server keeps its traceback."""

    def format(self, record: logging.LogRecord) -> str:
        from aiohttp.http_exceptions import HttpProcessingError

        from ..terminal import shown

        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, HttpProcessingError):
            why = shown(" ".join(str(error.message).split()))[:200]
            return f"locm: ladder: {record.getMessage()}: {type(error).__name__}: {why}"
        return super().format(record)


def _server_log() -> logging.Logger:
    """The logger of the ladder's HTTP protocol (malformed requests, faults)."""
    log = logging.getLogger("cardarena.ladder.http")
    if not log.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(_OneLineForMalformed("locm: ladder: %(message)s"))
        log.addHandler(handler)
        log.propagate = False
    return log


def _quote(name: str) -> str:
    from urllib.parse import quote

    return quote(name, safe="")


async def start(data: LadderData, hooks: LadderHooks, host: str, port: int,
                limits: HttpLimits | None = None, allowed_hosts: tuple[str, ...] = (),
                reserve: int = 64, ab: AbWeb | None = None,
                ) -> tuple[str, Callable[[], Awaitable[None]]]:  # fmt: skip
    """Serve the ladder on ``host:port`` (0: a free port) behind :mod:`cardarena.httpguard`
    (connection cap leaving ``reserve`` descriptors to the rest of the process, timeouts,
    the Host check); returns (base address ``http://HOST:PORT/``, the coroutine function that
    stops it). OSError when the address cannot be listened on; ValueError when the
    descriptor limit leaves no room."""
    from aiohttp import web

    from ..httpguard import ConnectionGuard, HostCheck, HttpLimits, fitted_cap

    limits = limits or HttpLimits()
    import resource

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    descriptors = 1 << 20 if soft == resource.RLIM_INFINITY else soft
    cap = fitted_cap(limits.max_connections, descriptors, reserve, "locm ladder serve")
    guard = ConnectionGuard(limits, HostCheck(host, allowed_hosts), cap)
    app = make_app(data, hooks, (guard.middleware(),), ab, body_seconds=limits.head_seconds)
    runner = web.AppRunner(app, access_log=None, logger=_server_log(),
                           keepalive_timeout=limits.idle_seconds)  # fmt: skip
    await runner.setup()
    try:
        await guard.site(runner, host, port).start()
    except OSError:
        guard.stop()
        await runner.cleanup()
        raise
    bound = runner.addresses[0][1]
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else (f"[{host}]" if ":" in host else host)

    async def stop() -> None:
        guard.stop()
        await runner.cleanup()

    return f"http://{shown}:{bound}/", stop
