"""The final on the web server (real store, real port): the page for everyone, the organiser's
start and stop buttons (session + CSRF), the JSON API's checks (organiser only, bad input in
one line, 409 when it makes no sense)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator

import pytest

from cardarena.ladder.final_web import final_routes
from cardarena.locm.ladder.web import locm_hooks

from .server_fixture import Ladder, bearer, request, serve
from .test_server import log_in

FORM = "application/x-www-form-urlencoded"


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ladder]:
    yield from serve(
        tmp_path_factory.mktemp("final"),
        lambda store: dataclasses.replace(locm_hooks("1.5"), extra_routes=(final_routes(store),)),
    )


def post_json(ladder: Ladder, path: str, user: str, body: object) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json", **bearer(ladder, user)}
    answer = request(ladder, "POST", path, json.dumps(body).encode(), headers)
    return answer.status, answer.json()


def test_the_final_from_the_api(ladder: Ladder) -> None:
    answer = request(ladder, "GET", "/api/final")
    assert answer.status == 200 and answer.json() == {"final": None, "paused": False,
                                                      "frozen": False}  # fmt: skip
    assert post_json(ladder, "/api/final", "alice", {})[0] == 403
    assert request(ladder, "POST", "/api/final", b"{}").status == 401
    for body, why in (({"top": "x"}, "top is a whole number"),
                      ({"top": 2.5}, "top is a whole number"),
                      ({"confidence": "high"}, "confidence is a number"),
                      ({"confidence": 1.0}, "confidence is a number from 0.5"),
                      ({"top": 2, "budget": 1}, "less than one round"),
                      ({"top": 40}, "from 2 to 32")):  # fmt: skip
        status, answer_json = post_json(ladder, "/api/final", "olga", body)
        assert status in (400, 409) and why in answer_json["error"], (body, answer_json)
    status, started = post_json(ladder, "/api/final", "olga", {"top": 2, "budget": 8})
    assert status == 201 and started["frozen"] is True
    assert started["final"]["state"] == "running" and started["final"]["games_left"] == 8
    assert [f["name"] for f in started["final"]["finalists"]] == ["alpha", "beta"]
    status, again = post_json(ladder, "/api/final", "olga", {"top": 2})
    assert status == 409 and "still running" in again["error"]
    status, stopped = post_json(ladder, "/api/final/stop", "olga", {})
    assert status == 200 and stopped["final"]["state"] == "done"
    assert stopped["final"]["end_reason"] == "stopped"
    assert post_json(ladder, "/api/final/stop", "olga", {})[0] == 409


def test_the_final_page_and_its_buttons(ladder: Ladder) -> None:
    page = request(ladder, "GET", "/final")
    assert page.status == 200 and "start-final" not in page.text  # no buttons for visitors
    cookie, csrf = log_in(ladder, "olga")
    same = {"Cookie": cookie, "Content-Type": FORM, "Origin": ladder.base.rstrip("/")}
    page = request(ladder, "GET", "/final", headers={"Cookie": cookie})
    assert 'id="start-final"' in page.text
    refused = request(ladder, "POST", "/final/start", b"csrf=wrong&top=2", same)
    assert refused.status == 403
    started = request(ladder, "POST", "/final/start", f"csrf={csrf}&top=2&budget=4".encode(),
                      same)  # fmt: skip
    assert started.status == 303 and started.headers["Location"] == "/final"
    page = request(ladder, "GET", "/final", headers={"Cookie": cookie})
    assert 'data-state="running"' in page.text and 'id="stop-final"' in page.text
    assert '<meta http-equiv="refresh"' in page.text
    assert "Content-Security-Policy" in page.headers
    alice, alice_csrf = log_in(ladder, "alice")
    forbidden = request(ladder, "POST", "/final/stop", f"csrf={alice_csrf}".encode(),
                        {**same, "Cookie": alice})  # fmt: skip
    assert forbidden.status == 403
    stopped = request(ladder, "POST", "/final/stop", f"csrf={csrf}".encode(), same)
    assert stopped.status == 303
    page = request(ladder, "GET", "/final")
    assert 'data-state="done"' in page.text and "refresh" not in page.text
