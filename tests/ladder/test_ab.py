"""A/B tests against a real ``locm ladder serve`` on a real port, with real (in-process
built-in) games: ``locm ladder ab --wait`` follows a test to its SPRT verdict over HTTP, the
A/B games move no rating, a test is its owner's only, one may not test another's version that
does not play, the live page and the form (and, in Chromium, a person who starts a test from
the form and watches its page reach the verdict), and the rate limits answer 429 with
Retry-After (organisers exempt)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cardarena.ladder.store import LadderStore
from cardarena.locm.cli.ladder import multipart
from tests.browser import browser  # noqa: F401 (the module-scoped Chromium)
from tests.ladder.server_fixture import Ladder, request
from tests.ladder.test_server import log_in
from tests.ladder.test_server_browser import VIOLATIONS, WAIT_MS
from tests.ladder.test_service import rows

CLI = [sys.executable, "-m", "cardarena.locm", "ladder"]


def playing(store: LadderStore, token: str, bot: str, *commands: str) -> None:
    """``bot`` of the token's owner: one version per command, the last one active."""
    user = store.user_for_token(token)
    assert user is not None
    versions = []
    for index, command in enumerate(commands):
        version = store.submit(user, bot, "python", "bot.py", b"#", new_bot=index == 0)
        store.record_build(version, True, "built", command, None)
        store.set_status(version, "active")
        versions.append(version)
    for old in versions[:-1]:
        store.set_status(old, "retired", "replaced by a newer version")


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ladder]:
    """A serving ladder: alice's bot "mine" (v1 random, retired; v2 greedy, active), bob's
    "rival" (v1 pass, retired; v2 random), carol's "other" (pass), an organiser."""
    db = tmp_path_factory.mktemp("ab") / "ladder.db"
    with LadderStore(str(db)) as store:
        store.configure(game="locm", version="1.5")
        tokens = {name: store.add_user(name) for name in ("alice", "bob", "carol", "dora")}
        tokens["boss"] = store.add_user("boss", organiser=True)
        playing(store, tokens["alice"], "mine", "builtin:random", "builtin:greedy")
        playing(store, tokens["bob"], "rival", "builtin:pass", "builtin:random")
        playing(store, tokens["carol"], "other", "builtin:pass")
        playing(store, tokens["dora"], "hers", "builtin:random", "builtin:greedy")
    server = subprocess.Popen(
        [*CLI, "serve", "--db", str(db), "--port", "0", "--workers", "2",
         "--submissions-per-hour", "1", "--ab-per-day", "2", "--ab-at-once", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert server.stdout is not None
    base = server.stdout.readline().strip()
    try:
        assert base.startswith("http://127.0.0.1:"), server.communicate(timeout=30)
        yield Ladder(base, None, tokens, {}, {}, [str(db)])  # type: ignore[arg-type, list-item]
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(60) == 0


def call(ladder: Ladder, method: str, path: str, user: str | None = None,
         body: dict[str, Any] | None = None) -> tuple[int, Any, Any]:  # fmt: skip
    """(status, JSON answer, headers) of a JSON API request as ``user``."""
    headers = {"Content-Type": "application/json"}
    if user is not None:
        headers["Authorization"] = f"Bearer {ladder.tokens[user]}"
    data = None if body is None else json.dumps(body).encode()
    answer = request(ladder, method, path, data, headers)
    return answer.status, answer.json(), answer.headers


def test_a_test_follows_to_its_verdict_and_moves_no_rating(ladder: Ladder) -> None:
    db = Path(str(ladder.games[0]))
    before = rows(db, "SELECT mu, sigma, rated_games FROM versions WHERE id = 1")
    run = subprocess.run(
        [*CLI, "ab", "--server", ladder.base, "--token", ladder.tokens["alice"], "mine",
         "mine.v1", "--elo0", "0", "--elo1", "400", "--max-pairs", "30", "--wait"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    test = int(lines[0])
    assert "accepted" in lines[-1] and "mine.v2 vs mine.v1" in lines[-1], run.stdout
    assert "running" in run.stderr  # the progress lines
    status, shown, _headers = call(ladder, "GET", f"/api/ab/{test}", "alice")
    assert status == 200 and shown["state"] == "accepted", shown
    assert (shown["a"], shown["b"], shown["elo0"], shown["elo1"]) == ("mine.v2", "mine.v1", 0, 400)
    assert sum(shown["pentanomial"]) == shown["pairs"] >= 5
    assert shown["llr"] >= shown["bounds"][1] and shown["elo"]["low"] > 0
    ab_games = rows(db, "SELECT COUNT(*), SUM(rated) FROM games WHERE kind = 'ab' AND "
                        "state = 'done'")[0]  # fmt: skip
    assert ab_games[0] >= 2 * shown["pairs"] and ab_games[1] == 0
    assert rows(db, "SELECT COUNT(*) FROM ratings r JOIN games g ON g.id = r.game "
                    "WHERE g.kind = 'ab'") == [(0,)]  # fmt: skip
    assert rows(db, "SELECT mu, sigma, rated_games FROM versions WHERE id = 1") == before
    # Every version's rated games are its games marked rated (one query: one snapshot of a
    # ladder that keeps playing).
    assert rows(db, "SELECT v.id FROM versions v WHERE v.rated_games != (SELECT COUNT(*) "
                    "FROM games g WHERE g.rated = 1 AND (g.first = v.id OR g.second = v.id))"
                ) == []  # fmt: skip
    assert rows(db, "SELECT COUNT(*) FROM games WHERE rated = 1")[0][0] > 0  # the ladder moved

    cookie, csrf = log_in(ladder, "alice")  # the live page: its script, no inline one
    page = request(ladder, "GET", f"/ab/{test}", headers={"Cookie": cookie})
    assert page.status == 200 and 'id="ab-state"' in page.text and "accepted" in page.text
    assert '<script src="/static/ab.js"' in page.text and "<script>" not in page.text
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert request(ladder, "GET", "/static/ab.js").status == 200
    me = request(ladder, "GET", "/me", headers={"Cookie": cookie})
    assert (
        'id="ab-form"' in me.text
        and 'id="ab-elo1" name="elo1" type="number" step="any" value="20"' in me.text
    )
    listed = request(ladder, "GET", "/me/ab", headers={"Cookie": cookie})
    assert f'data-test="{test}"' in listed.text
    form = {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie}
    sent = request(ladder, "POST", "/me/ab", f"csrf={csrf}&a=nobody&b=mine.v1".encode(), form)
    assert sent.status == 400 and "no bot or version" in sent.text and 'id="ab-form"' in sent.text
    assert request(ladder, "POST", "/me/ab", b"a=mine&b=mine.v1", form).status == 403  # no CSRF
    bob_cookie, _ = log_in(ladder, "bob")
    assert request(ladder, "GET", f"/ab/{test}", headers={"Cookie": bob_cookie}).status == 404


def test_a_test_is_its_owners_and_tests_only_what_may_be_tested(ladder: Ladder) -> None:
    status, created, _ = call(
        ladder, "POST", "/api/ab", "alice", {"a": "mine", "b": "other", "elo1": 20, "max_pairs": 3}
    )
    assert status == 201, created
    test = created["id"]
    for user in ("bob", "carol"):  # not theirs: as if it did not exist
        assert call(ladder, "GET", f"/api/ab/{test}", user)[0] == 404
        assert call(ladder, "POST", f"/api/ab/{test}/stop", user)[0] == 404
    assert call(ladder, "GET", f"/api/ab/{test}")[0] == 401
    assert call(ladder, "GET", f"/api/ab/{test}", "boss")[0] == 200  # an organiser may
    status, stopped, _ = call(ladder, "POST", f"/api/ab/{test}/stop", "alice")
    assert status == 200 and stopped["state"] == "stopped"
    refused = {
        ("carol", "mine", "other"): "not yours",  # A is one's own
        ("carol", "other", "rival.v1"): "rival.v1 is retired",  # another's version not playing
        ("carol", "other", "other"): "same version",
        ("carol", "other", "nobody"): "no bot or version",
    }
    for (user, a, b), why in refused.items():
        status, answer, _ = call(ladder, "POST", "/api/ab", user, {"a": a, "b": b})
        assert status == 400 and why in answer["error"], (a, b, answer)
    status, answer, _ = call(
        ladder, "POST", "/api/ab", "carol", {"a": "other", "b": "mine", "elo0": 5, "elo1": 5}
    )
    assert status == 400 and "elo0 < elo1" in answer["error"]
    assert call(ladder, "POST", "/api/ab", None, {"a": "other", "b": "mine"})[0] == 401


def test_rate_limits_answer_429_with_retry_after(ladder: Ladder) -> None:
    body, kind = multipart({"name": "rival", "language": "python"}, "file", "bot.py",
                           b"print(1)\n")  # fmt: skip
    answers = {
        user: request(ladder, "POST", "/api/submissions", body, {
            "Content-Type": kind, "Authorization": f"Bearer {ladder.tokens[user]}"})
        for user in ("bob", "boss")
    }  # fmt: skip
    assert answers["bob"].status == 429  # he submitted 2 versions this hour, 1 allowed
    assert "at most 1 submissions per hour" in answers["bob"].json()["error"]
    assert 3000 < int(answers["bob"].headers["Retry-After"]) <= 3600
    assert answers["boss"].status == 400  # exempt: refused for its own reason (not his bot)
    cli = subprocess.run(
        [*CLI, "submit", "--server", ladder.base, "--token", ladder.tokens["bob"], "--name",
         "rival", "--language", "python", str(Path(__file__))],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert cli.returncode == 1 and "refused (429): at most 1 submissions per hour" in cli.stderr

    ask = {"a": "rival", "b": "mine", "elo1": 20}
    status, first, _ = call(ladder, "POST", "/api/ab", "bob", ask)
    assert status == 201
    status, answer, headers = call(ladder, "POST", "/api/ab", "bob", ask)  # one at once
    assert status == 429 and "running" in answer["error"] and int(headers["Retry-After"]) > 0
    assert call(ladder, "POST", f"/api/ab/{first['id']}/stop", "bob")[0] == 200
    status, second, _ = call(ladder, "POST", "/api/ab", "bob", ask)
    assert status == 201
    call(ladder, "POST", f"/api/ab/{second['id']}/stop", "bob")
    status, answer, headers = call(ladder, "POST", "/api/ab", "bob", ask)  # two a day
    assert status == 429 and "at most 2 A/B tests per day" in answer["error"]
    assert 80000 < int(headers["Retry-After"]) <= 86400
    run = subprocess.run(
        [*CLI, "ab", "--server", ladder.base, "--token", ladder.tokens["bob"], "rival", "mine"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert run.returncode == 1 and "refused (429)" in run.stderr and "Retry-After" in run.stderr
    status, boss, _ = call(ladder, "POST", "/api/ab", "boss", {"a": "rival", "b": "mine"})
    assert status == 201, boss  # organisers are exempt (and may test any version)
    cookie, csrf = log_in(ladder, "boss")  # the Stop button of the test's page
    stopped = request(
        ladder,
        "POST",
        f"/ab/{boss['id']}/stop",
        f"csrf={csrf}".encode(),
        {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie},
    )
    assert stopped.status == 303 and stopped.headers["Location"] == f"/ab/{boss['id']}"
    _status, shown, _ = call(ladder, "GET", f"/api/ab/{boss['id']}", "boss")
    assert (shown["state"], shown["reason"]) == ("stopped", "stopped by its owner")


def test_a_person_starts_a_test_from_the_form_and_watches_it_decide(
    ladder: Ladder,
    browser: Any,  # noqa: F811
) -> None:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    context.add_init_script(VIOLATIONS)
    try:
        page = context.new_page()
        page.goto(ladder.base + "me")
        page.fill("#token", ladder.tokens["dora"])
        page.click("#login button[type=submit]")
        page.wait_for_selector("#ab-form", timeout=WAIT_MS)
        assert page.input_value("#ab-elo1") == "20"  # the suggested bounds
        page.fill("#ab-a", "hers")
        page.fill("#ab-b", "hers.v1")
        page.fill("#ab-elo1", "400")
        page.click("#ab-start")
        page.wait_for_selector("#ab-test", timeout=WAIT_MS)
        assert "hers.v2 against hers.v1" in (page.text_content("h1") or "")
        # the page's script follows the test to its verdict, without a reload
        page.wait_for_selector("#ab-state.ab-accepted", timeout=WAIT_MS)
        assert int(page.text_content("#ab-pairs") or 0) >= 5
        assert page.query_selector("#ab-stop") is None  # the verdict took the Stop button away
        assert page.evaluate("window.__violations") == []
    finally:
        context.close()
