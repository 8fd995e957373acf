"""The web side of A/B tests and rate limits: ``POST /api/ab``, ``GET /api/ab/ID``, ``POST
/api/ab/ID/stop``, ``GET /api/ab`` (one's own tests), the test's live page ``/ab/ID`` (its
script fetches the API every few seconds; no inline script) and the form on one's own page.

A test is its owner's (and the organisers'): anyone else is answered 404, as if it did not
exist. The API's writes take the bearer token only; the forms carry the session's CSRF field.
A request over a participant's rate limit is refused with 429 and ``Retry-After``.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .abtests import SUGGESTED_ELO1, AbTests
from .limits import RateLimits, Throttled, check_ab, check_submission
from .sprt import DEFAULT_ELO0, DEFAULT_ELO1
from .store import LadderError, User

if TYPE_CHECKING:
    from aiohttp import web

REFRESH_S = 3
"""How often the live page asks for the test's state."""
TEST_NUMBER = "[0-9]{1,12}"


@dataclass
class AbWeb:
    """The ladder's A/B tests and its participants' rate limits, as the server uses them."""

    tests: AbTests
    limits: RateLimits = field(default_factory=RateLimits)

    def check_submission(self, user: User) -> None:
        """Throttled when ``user`` submitted too much lately."""
        check_submission(self.tests.store, user, self.limits)

    def create(self, user: User, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Start the test the fields ask for (a, b, elo0, elo1, max_pairs); its id and
        addresses. LadderError (one line) for bad fields, Throttled over a rate limit."""
        a, b = fields.get("a"), fields.get("b")
        if not isinstance(a, str) or not a.strip() or not isinstance(b, str) or not b.strip():
            raise LadderError("give a (your version: NAME or NAME.vN) and b (the version to "
                          "compare it with)")  # fmt: skip
        elo0 = _number(fields.get("elo0"), "elo0", DEFAULT_ELO0)
        elo1 = _number(fields.get("elo1"), "elo1", DEFAULT_ELO1)
        pairs = fields.get("max_pairs")
        max_pairs = None if pairs in (None, "") else int(_number(pairs, "max_pairs", 0, True))
        store = self.tests.store
        check_ab(self.tests.created_since(user, store._clock() - 86400),
                 self.tests.running_count(user), user, self.limits,
                 self.tests.settings.running_per_participant, store._clock())  # fmt: skip
        test = self.tests.create(user, a, b, elo0, elo1, max_pairs)
        return {"id": test, "page": f"/ab/{test}", "api": f"/api/ab/{test}"}


def _number(value: Any, name: str, default: float, whole: bool = False) -> float:
    if value is None or value == "":
        return default
    try:
        number = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number) or (whole and number != int(number)):
        kind = "a whole number" if whole else "a number"
        raise LadderError(f"{name} is {kind}, not {str(value)[:30]!r}")
    return number


@dataclass(frozen=True)
class WebTools:
    """What the server's application lends the A/B routes (its closures)."""

    api_user: Callable[..., User | None]
    browser_user: Callable[[web.Request], User | None]
    needs_user: Callable[[User | None], User]
    form_of: Callable[[web.Request], Awaitable[tuple[User, dict[str, str]]]]
    page: Callable[..., web.Response]
    api_body: Callable[[web.Request], Awaitable[dict[str, Any]]]
    see_other: Callable[[str], web.Response]
    refused: Callable[..., Exception]
    """The server's ``Refused(status, reason, headers)``: its answer to a refused request."""
    json: Callable[..., web.Response]
    headers: Mapping[str, str]


def add_routes(routes: Any, ab: AbWeb, tools: WebTools) -> None:
    """The A/B routes, added to the server's router before its catch-all."""
    from aiohttp import web

    Refused, _json, HEADERS = tools.refused, tools.json, tools.headers

    def refusal(error: LadderError) -> Exception:
        if isinstance(error, Throttled):
            return Refused(429, str(error), {"Retry-After": str(error.retry_after)})
        return Refused(400, str(error))

    def create(user: User, fields: Mapping[str, Any]) -> dict[str, Any]:
        try:
            return ab.create(user, fields)
        except LadderError as error:
            raise refusal(error) from None

    def test_of(request: web.Request, user: User | None) -> dict[str, Any]:
        test = int(request.match_info["id"])
        shown = ab.tests.get(test, user)
        if shown is None:
            raise Refused(404, f"no A/B test {test} of yours")
        return shown

    async def fields_of(request: web.Request) -> dict[str, Any]:
        if request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
            if request.content_length is not None and request.content_length > 16 << 10:
                raise Refused(413, "this request is too large")
            form = await request.post()
            return {key: value for key, value in form.items() if isinstance(value, str)}
        return await tools.api_body(request)

    async def api_create(request: web.Request) -> web.Response:
        user = tools.needs_user(tools.api_user(request, cookie=False))
        return _json(create(user, await fields_of(request)), 201)

    async def api_test(request: web.Request) -> web.Response:
        user = tools.needs_user(tools.api_user(request, cookie=True))
        return _json(test_of(request, user))

    async def api_mine(request: web.Request) -> web.Response:
        user = tools.needs_user(tools.api_user(request, cookie=True))
        return _json({"tests": ab.tests.mine(user)})

    def stop(user: User, shown: Mapping[str, Any]) -> None:
        by = "an organiser" if user.organiser and shown["owner"] != user.name else "its owner"
        ab.tests.stop(int(shown["id"]), user, f"stopped by {by}")

    async def api_stop(request: web.Request) -> web.Response:
        user = tools.needs_user(tools.api_user(request, cookie=False))
        stop(user, test_of(request, user))
        return _json(test_of(request, user))

    async def test_page(request: web.Request) -> web.Response:
        user = tools.browser_user(request)
        if user is None:
            raise Refused(401, "log in to see your A/B tests")
        return tools.page(request, "ab.html", test=test_of(request, user), refresh=REFRESH_S)

    def list_page(request: web.Request, user: User, status: int = 200,
                  error: str = "") -> web.Response:  # fmt: skip
        return tools.page(request, "ab_list.html", status, tests=ab.tests.mine(user),
                          error=error, elo1=SUGGESTED_ELO1,
                          max_pairs=ab.tests.settings.max_pairs)  # fmt: skip

    async def mine_page(request: web.Request) -> web.Response:
        user = tools.browser_user(request)
        if user is None:
            raise Refused(401, "log in to see your A/B tests")
        return list_page(request, user)

    async def create_form(request: web.Request) -> web.Response:
        user, form = await tools.form_of(request)
        try:
            answer = ab.create(user, form)
        except LadderError as error:
            refused: Any = refusal(error)
            page = list_page(request, user, refused.status, refused.reason)
            page.headers.update(refused.headers)
            return page
        return tools.see_other(answer["page"])

    async def stop_form(request: web.Request) -> web.Response:
        user, _form = await tools.form_of(request)
        shown = test_of(request, user)
        stop(user, shown)
        return tools.see_other(f"/ab/{shown['id']}")

    async def script(_request: web.Request) -> web.Response:
        from importlib.resources import files

        text = files("cardarena.ladder.web").joinpath("ab.js").read_text(encoding="utf-8")
        return web.Response(text=text, content_type="text/javascript", charset="utf-8",
                            headers={**HEADERS, "Cache-Control": "no-cache"})  # fmt: skip

    number = f"{{id:{TEST_NUMBER}}}"
    routes.add_post("/api/ab", api_create)
    routes.add_get("/api/ab", api_mine)
    routes.add_get(f"/api/ab/{number}", api_test)
    routes.add_post(f"/api/ab/{number}/stop", api_stop)
    routes.add_get(f"/ab/{number}", test_page)
    routes.add_post(f"/ab/{number}/stop", stop_form)
    routes.add_get("/me/ab", mine_page)
    routes.add_post("/me/ab", create_form)
    routes.add_get("/static/ab.js", script)
