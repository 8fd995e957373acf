"""The final on the ladder's web server: ``GET /api/final``, ``POST /api/final`` (start),
``POST /api/final/stop``, and the page ``/final`` (with the organiser's buttons).

Added to the server through :attr:`cardarena.ladder.server.LadderHooks.extra_routes`; the
server's own checks apply (the bearer token for the API's writes, the session's CSRF secret
for the forms, same-origin POSTs, the Host check).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .final import DEFAULT_BUDGET, DEFAULT_TOP, final_json, start_final, stop_final
from .ratings import CONFIDENCE
from .server import Refused, RouteTools
from .store import LadderError, LadderStore

REFRESH_S = 5
"""The final's page reloads itself this often while the final runs."""


def read_final(store: LadderStore) -> dict[str, Any] | None:
    """The newest final as the API shows it (None: there was none)."""
    with store._lock:  # the web thread shares the server's connection
        return final_json(store.db)


def _whole(value: Any, name: str, default: int) -> int:
    if value is None or value == "":
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise Refused(400, f"{name} is a whole number, not {str(value)[:20]!r}") from None
    if not math.isfinite(number) or number != int(number):
        raise Refused(400, f"{name} is a whole number, not {str(value)[:20]!r}")
    return int(number)


def _fraction(value: Any) -> float:
    if value is None or value == "":
        return CONFIDENCE
    try:
        number = float(value)
    except (TypeError, ValueError):
        shown = str(value)[:20]
        raise Refused(400, f"confidence is a number such as 0.95, not {shown!r}") from None
    if not math.isfinite(number):
        raise Refused(400, "confidence is a number such as 0.95")
    return number


def final_routes(store: LadderStore) -> Callable[[Any, RouteTools], None]:
    """The routes of the final over ``store``, for ``LadderHooks.extra_routes``."""

    def add(routes: Any, tools: RouteTools) -> None:
        def start(values: dict[str, Any], who: str) -> None:
            top = _whole(values.get("top"), "top", DEFAULT_TOP)
            budget = _whole(values.get("budget"), "budget", DEFAULT_BUDGET)
            confidence = _fraction(values.get("confidence"))
            try:
                start_final(store, top, confidence, budget, by=who)
            except LadderError as error:
                raise Refused(409, str(error)) from None

        def stop() -> None:
            try:
                stop_final(store)
            except LadderError as error:
                raise Refused(409, str(error)) from None

        async def api_final(_request: Any) -> Any:
            return tools.json({"final": read_final(store), **store.settings()})

        async def api_start(request: Any) -> Any:
            user = tools.needs_organiser(tools.api_user(request, cookie=False))
            start(await tools.body(request), user.name)
            return tools.json({"final": read_final(store), **store.settings()}, 201)

        async def api_stop(request: Any) -> Any:
            tools.needs_organiser(tools.api_user(request, cookie=False))
            stop()
            return tools.json({"final": read_final(store), **store.settings()})

        async def final_page(request: Any) -> Any:
            final = read_final(store)
            refresh = REFRESH_S if final is not None and final["state"] == "running" else None
            return tools.page(request, "final.html", final=final, refresh=refresh,
                              defaults={"top": DEFAULT_TOP, "confidence": CONFIDENCE,
                                        "budget": DEFAULT_BUDGET})  # fmt: skip

        async def start_form(request: Any) -> Any:
            user, form = await tools.form(request)
            tools.needs_organiser(user)
            start(form, user.name)
            return tools.see_other("/final")

        async def stop_form(request: Any) -> Any:
            user, _form = await tools.form(request)
            tools.needs_organiser(user)
            stop()
            return tools.see_other("/final")

        routes.add_get("/api/final", api_final)
        routes.add_post("/api/final", api_start)
        routes.add_post("/api/final/stop", api_stop)
        routes.add_get("/final", final_page)
        routes.add_post("/final/start", start_form)
        routes.add_post("/final/stop", stop_form)

    return add
