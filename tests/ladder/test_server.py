"""The ladder's web server over real HTTP on loopback, a real store on a real SQLite file:
the JSON API's shapes, tokens (a bad or missing one is 401, never a page of someone else's),
the build log and stderr shown to their owner only, the login cookie and its CSRF secret, a
cross-site form refused, the upload cap enforced before the body is read, the Host check."""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Iterator

import pytest

pytest.importorskip("aiohttp")

from cardarena.ladder.server import bearer_token, head_to_head, rating_chart
from cardarena.locm.cli.ladder import multipart
from cardarena.locm.ladder.web import HIDDEN_NOTE, redact_stderr
from cardarena.tournaments.store import compress_log
from tests.ladder.server_fixture import (
    BUILD_LOG,
    MAX_UPLOAD,
    SECRET_STDERR,
    TIMEOUT_S,
    Ladder,
    a_record,
    bearer,
    request,
    serve,
)

STATUSES = {"building", "failed", "validating", "active", "disabled", "retired"}


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ladder]:
    yield from serve(tmp_path_factory.mktemp("ladder"))


def upload(ladder: Ladder, user: str | None, name: str, data: bytes = b"print(1)\n",
           language: str = "python", new_bot: bool = True,
           extra: dict[str, str] | None = None) -> tuple[int, dict]:  # fmt: skip
    fields = {"name": name, "language": language, "new_bot": "1" if new_bot else ""}
    body, content_type = multipart(fields | (extra or {}), "file", "bot.py", data)
    headers = {"Content-Type": content_type, **(bearer(ladder, user) if user else {})}
    answer = request(ladder, "POST", "/api/submissions", body, headers)
    return answer.status, answer.json()


def log_in(ladder: Ladder, user: str) -> tuple[str, str]:
    """Log ``user`` in through the form: (the session cookie header, the page's CSRF secret)."""
    login = request(ladder, "GET", "/me")
    assert login.status == 200 and 'id="login"' in login.text
    ((login_name, login_secret),) = login.cookies().items()
    csrf = login.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    form = f"csrf={csrf}&token={ladder.tokens[user]}".encode()
    answer = request(ladder, "POST", "/login", form, {
        "Content-Type": "application/x-www-form-urlencoded",
        "Cookie": f"{login_name}={login_secret}",
        "Origin": ladder.base.rstrip("/"), "Sec-Fetch-Site": "same-origin",
    })  # fmt: skip
    assert answer.status == 303 and answer.headers["Location"] == "/me", answer.text
    set_cookie = answer.headers["Set-Cookie"]
    assert "HttpOnly" in set_cookie and "SameSite=Strict" in set_cookie
    name = f"ladder-session-{ladder.port}"
    cookie = f"{name}={answer.cookies()[name]}"
    me = request(ladder, "GET", "/me", headers={"Cookie": cookie})
    assert me.status == 200 and 'id="submit"' in me.text
    return cookie, me.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]


# ------------------------------------------------------------------ pure functions
def test_bearer_tokens_are_read_from_the_header_only() -> None:
    assert bearer_token("Bearer abc") == "abc"
    assert bearer_token("bearer  abc ") == "abc"
    assert bearer_token("Basic abc") is None
    assert bearer_token("Bearer ") is None
    assert bearer_token(None) is None


def test_head_to_head_and_the_rating_chart() -> None:
    seats = [{"bot": "a"}, {"bot": "b"}]
    games = [{"seats": seats, "winner": 0, "state": "done"},
             {"seats": seats[::-1], "winner": 0, "state": "done"},
             {"seats": seats, "winner": None, "state": "done"}]  # fmt: skip
    assert head_to_head("a", games) == [
        {"opponent": "b", "games": 3, "wins": 1, "draws": 1, "losses": 1}
    ]
    assert rating_chart([{"mu": 25, "sigma": 8}]) is None
    chart = rating_chart([{"mu": 25, "sigma": 8}, {"mu": 27, "sigma": 6}], width=100, height=50)
    assert chart is not None and chart.line.split()[0].startswith("0.0,")
    assert chart.line.split()[-1].startswith("100.0,") and chart.count == 2


def test_a_logs_stderr_is_hidden_seat_by_seat() -> None:
    log = {"errors": {"0": ["boot", None, "mine"], "1": ["x", "theirs", None], "referee": []}}
    shown = redact_stderr(log, frozenset({1}))
    assert shown["errors"]["0"] == ["boot", None, "mine"]
    assert shown["errors"]["1"] == [HIDDEN_NOTE, "", None]
    assert log["errors"]["1"][1] == "theirs"  # the stored log is not changed


# ------------------------------------------------------------------ the JSON API
def test_the_leaderboard(ladder: Ladder) -> None:
    answer = request(ladder, "GET", "/api/leaderboard")
    assert answer.status == 200 and answer.headers["Content-Type"].startswith("application/json")
    data = answer.json()
    assert data["paused"] is False and data["frozen"] is False
    bots = {row["name"]: row for row in data["bots"]}
    assert set(bots) == {"alpha", "beta"}
    alpha = bots["alpha"]
    assert alpha["owner"] == "alice" and alpha["status"] in STATUSES
    assert (alpha["rank"], alpha["games"], alpha["wins"], alpha["win_rate"]) == (1, 4, 4, 1.0)
    assert alpha["rating"]["conservative"] > bots["beta"]["rating"]["conservative"]
    assert alpha["elo"]["low"] < alpha["elo"]["value"] < alpha["elo"]["high"]


def test_a_bot_its_games_and_a_game(ladder: Ladder) -> None:
    bot = request(ladder, "GET", "/api/bots/alpha").json()
    assert bot["name"] == "alpha" and bot["owner"] == "alice" and bot["status"] == "active"
    assert [v["version"] for v in bot["versions"]] == [1]
    assert bot["head_to_head"] == [
        {"opponent": "beta", "games": 4, "wins": 4, "draws": 0, "losses": 0}
    ]
    assert len(bot["ratings"]) == 4 and bot["ratings"][-1]["mu"] > bot["ratings"][0]["mu"]
    games = request(ladder, "GET", "/api/games?bot=alpha&limit=3").json()["games"]
    assert len(games) == 3 and games[0]["id"] > games[1]["id"]  # newest first
    game = games[0]
    assert {seat["bot"] for seat in game["seats"]} == {"alpha", "beta"}
    assert game["seed"] in (11, 12) and game["end_reason"] == "HEALTH"
    assert game["seats"][game["winner"]]["bot"] == "alpha"
    assert game["viewer"] == f"/games/{game['id']}"
    one = request(ladder, "GET", f"/api/games/{game['id']}").json()
    assert one["game"]["id"] == game["id"] and one["log"]["gameParameters"]
    assert request(ladder, "GET", "/api/games/999999").status == 404
    assert request(ladder, "GET", "/api/bots/nobody").json() == {
        "error": "no bot called 'nobody' on this ladder"
    }
    assert request(ladder, "GET", "/api/games?limit=1000").status == 400


def test_the_build_log_and_stderr_are_the_owners_only(ladder: Ladder) -> None:
    def build_log(headers: dict[str, str]) -> str | None:
        bot = request(ladder, "GET", "/api/bots/alpha", headers=headers).json()
        return bot["versions"][0].get("build_log")

    assert build_log(bearer(ladder, "alice")) == BUILD_LOG
    assert build_log(bearer(ladder, "bob")) is None
    assert build_log({}) is None
    page = request(ladder, "GET", "/bots/alpha").text
    assert "compiling alpha" not in page and "<script>alert" not in page
    game = ladder.games[0]
    seat = request(ladder, "GET", f"/api/games/{game}").json()["game"]["seats"]
    alpha = [s["bot"] for s in seat].index("alpha")

    def stderr(headers: dict[str, str]) -> list[str | None]:
        return request(ladder, "GET", f"/api/games/{game}", headers=headers).json()["log"][
            "errors"][str(alpha)]  # fmt: skip

    assert SECRET_STDERR in stderr(bearer(ladder, "alice"))
    assert SECRET_STDERR not in stderr(bearer(ladder, "bob"))
    assert stderr({})[0] == HIDDEN_NOTE
    viewer = request(ladder, "GET", f"/games/{game}")
    assert viewer.status == 200 and "<!DOCTYPE html>" in viewer.text
    assert "go face" not in viewer.text
    cookie, _csrf = log_in(ladder, "alice")
    mine = request(ladder, "GET", f"/games/{game}", headers={"Cookie": cookie}).text
    assert "alpha thinks: go face \\u003cb\\u003enow" in mine  # escaped into the page's JSON
    owner_page = request(ladder, "GET", "/bots/alpha", headers={"Cookie": cookie}).text
    assert "compiling alpha... &lt;script&gt;alert(&#39;build&#39;)&lt;/script&gt;" in owner_page
    bob, _csrf = log_in(ladder, "bob")  # logged in, but not alpha's owner
    assert "compiling alpha" not in request(ladder, "GET", "/bots/alpha",
                                            headers={"Cookie": bob}).text  # fmt: skip
    assert "go face" not in request(ladder, "GET", f"/games/{game}", headers={"Cookie": bob}).text


def test_tokens_bad_or_missing(ladder: Ladder) -> None:
    assert upload(ladder, None, "gamma")[0] == 401
    bad = {"Authorization": "Bearer not-a-token"}
    assert request(ladder, "GET", "/api/me", headers=bad).status == 401
    assert request(ladder, "GET", "/api/me").status == 401
    assert request(ladder, "GET", "/api/bots/alpha", headers=bad).status == 401
    me = request(ladder, "GET", "/api/me", headers=bearer(ladder, "alice")).json()
    assert me["name"] == "alice" and me["organiser"] is False
    assert [s["bot"] for s in me["submissions"]] == ["alpha"]
    # a token in the address is no token
    assert request(ladder, "GET", f"/api/me?token={ladder.tokens['alice']}").status == 401


def test_a_submission_and_its_refusals(ladder: Ladder) -> None:
    status, answer = upload(ladder, "bob", "delta")
    assert status == 201, answer
    assert answer["bot"] == "delta" and answer["version"] == 1 and answer["page"] == "/bots/delta"
    version = ladder.store.version(answer["submission"])
    assert version is not None and version.owner == "bob" and version.status == "building"
    board = request(ladder, "GET", "/api/leaderboard").json()["bots"]
    assert {"name": "delta", "status": "building", "rank": None}.items() <= next(
        row for row in board if row["name"] == "delta"
    ).items()
    assert upload(ladder, "alice", "delta", new_bot=False) == (
        400, {"error": "the bot 'delta' belongs to another participant"}
    )  # fmt: skip
    assert upload(ladder, "alice", "alpha", language="cobol")[0] == 400
    assert upload(ladder, "alice", "x/y")[0] in (400, 404)


def test_the_upload_cap_is_enforced_before_the_body_is_read(ladder: Ladder) -> None:
    assert upload(ladder, "alice", "big", b"#" * (MAX_UPLOAD + 1))[0] == 413
    assert upload(ladder, "alice", "fits", b"#" * (MAX_UPLOAD - 10))[0] == 201
    # A declared length far over the cap: refused on the headers alone, the body never sent.
    with socket.create_connection(("127.0.0.1", ladder.port), timeout=TIMEOUT_S) as raw:
        raw.sendall(b"POST /api/submissions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    b"Authorization: Bearer " + ladder.tokens["alice"].encode() +
                    b"\r\nContent-Type: multipart/form-data; boundary=x\r\n"
                    b"Content-Length: 1000000000\r\n\r\n")  # fmt: skip
        head = raw.recv(4096)
    assert head.startswith(b"HTTP/1.1 413"), head[:100]


def test_the_host_header_is_checked(ladder: Ladder) -> None:
    elsewhere = {"Host": "evil.example"}
    assert request(ladder, "GET", "/api/leaderboard", headers=elsewhere).status == 421
    assert request(ladder, "GET", "/", headers={"Host": f"localhost:{ladder.port}"}).status == 200


def test_cross_site_forms_are_refused(ladder: Ladder) -> None:
    cookie, csrf = log_in(ladder, "olga")
    form = {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie}
    body = f"csrf={csrf}".encode()
    elsewhere = request(ladder, "POST", "/ladder/freeze", body,
                        {**form, "Origin": "http://evil.example"})  # fmt: skip
    assert elsewhere.status == 403
    assert request(ladder, "POST", "/ladder/freeze", body,
                   {**form, "Sec-Fetch-Site": "cross-site"}).status == 403  # fmt: skip
    assert request(ladder, "POST", "/ladder/freeze", b"csrf=wrong", form).status == 403
    assert request(ladder, "POST", "/ladder/freeze", body,
                   {"Content-Type": form["Content-Type"]}).status == 401  # fmt: skip
    assert ladder.store.settings()["frozen"] is False
    other_port = ladder.base.rstrip("/").rsplit(":", 1)[0] + ":1"
    assert request(ladder, "POST", "/ladder/freeze", body,
                   {**form, "Origin": other_port}).status == 403  # fmt: skip
    behind_tls = ladder.base.rstrip("/").replace("http://", "https://")  # a proxy adds TLS
    done = request(ladder, "POST", "/ladder/freeze", body,
                   {**form, "Origin": behind_tls})  # fmt: skip
    assert done.status == 303 and ladder.store.settings()["frozen"] is True
    assert "Submissions are frozen" in request(ladder, "GET", "/").text
    assert upload(ladder, "bob", "frozen")[0] == 400
    assert request(ladder, "POST", "/ladder/unfreeze", body, form).status == 303
    assert ladder.store.settings()["frozen"] is False
    # the JSON API takes no cookie for a change: a browser's session cannot be used there
    assert request(ladder, "POST", "/api/ladder/pause", b"", {"Cookie": cookie}).status == 401


def test_organiser_endpoints(ladder: Ladder) -> None:
    olga, alice = bearer(ladder, "olga"), bearer(ladder, "alice")
    assert request(ladder, "POST", "/api/ladder/pause", b"", alice).status == 403
    assert request(ladder, "POST", "/api/ladder/pause", b"", olga).json()["paused"] is True
    assert request(ladder, "GET", "/api/leaderboard").json()["paused"] is True
    assert request(ladder, "POST", "/api/ladder/resume", b"", olga).json()["paused"] is False
    why = b'{"reason": "crashes the referee"}'
    disabled = request(ladder, "POST", "/api/bots/beta/disable", why,
                       {**olga, "Content-Type": "application/json"}).json()  # fmt: skip
    assert (disabled["status"], disabled["reason"]) == ("disabled", "crashes the referee")
    assert request(ladder, "POST", "/api/bots/beta/disable", b"", olga).status == 409
    assert request(ladder, "POST", "/api/bots/beta/enable", b"", olga).json()["status"] == "active"
    assert request(ladder, "POST", "/api/bots/nobody/retire", b"", olga).status == 404
    assert request(ladder, "POST", "/api/bots/beta/retire", b"[1]", olga).status == 400


def test_pages(ladder: Ladder) -> None:
    board = request(ladder, "GET", "/")
    assert board.status == 200
    policy = board.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert 'href="/bots/alpha"' in board.text and '<script src="/static/ladder.js"' in board.text
    assert "<script>" not in board.text  # no inline script: the policy would block it
    bot = request(ladder, "GET", "/bots/alpha").text
    assert 'id="rating-chart"' in bot and "<polyline points=" in bot
    assert 'href="/games/' in bot and 'href="/users/alice"' in bot
    assert "alice" in request(ladder, "GET", "/users/alice").text
    assert request(ladder, "GET", "/users/nobody").status == 404
    assert request(ladder, "GET", "/static/ladder.js").status == 200
    assert request(ladder, "GET", "/nothing/here").status == 404


def test_a_bot_is_submitted_from_the_page(ladder: Ladder) -> None:
    cookie, csrf = log_in(ladder, "alice")
    fields = {"csrf": csrf, "name": "epsilon", "language": "python", "new_bot": "1"}
    body, content_type = multipart(fields, "file", "bot.py", b"print(2)\n")
    headers = {"Cookie": cookie, "Content-Type": content_type}
    answer = request(ladder, "POST", "/me/submit", body, headers)
    assert answer.status == 303 and answer.headers["Location"] == "/bots/epsilon"
    forged = multipart({**fields, "csrf": "x", "name": "zeta"}, "file", "bot.py", b"1")
    refused = request(ladder, "POST", "/me/submit", forged[0],
                      {**headers, "Content-Type": forged[1]})  # fmt: skip
    assert refused.status == 403 and "out of date" in refused.text
    history = request(ladder, "GET", "/me", headers={"Cookie": cookie}).text
    assert 'href="/bots/epsilon"' in history and "zeta" not in history
    out = request(
        ladder,
        "POST",
        "/logout",
        f"csrf={csrf}".encode(),
        {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert out.status == 303
    assert 'id="login"' in request(ladder, "GET", "/me", headers={"Cookie": cookie}).text


def test_a_failed_build_is_on_the_board_with_its_reason(ladder: Ladder) -> None:
    status, answer = upload(ladder, "olga", "eta")
    assert status == 201
    ladder.store.record_build(answer["submission"], False, "SyntaxError: bad", None, None)
    row = next(r for r in request(ladder, "GET", "/api/leaderboard").json()["bots"]
               if r["name"] == "eta")  # fmt: skip
    assert row["status"] == "failed" and row["reason"] == "the build failed"
    assert row["rank"] is None


def test_a_broken_archive_is_refused_with_its_reason(ladder: Ladder) -> None:
    status, answer = upload(ladder, "alice", "broken", b"PK\x03\x04 not really a zip")
    assert status == 400 and "archive" in answer["error"], answer
    assert ladder.store.bot("broken") is None


def test_a_log_that_does_not_replay_is_one_line_not_a_traceback(ladder: Ladder) -> None:
    store = ladder.store
    store.queue_pair("validation", 5, ladder.versions["beta"], None, opponent="builtin:greedy")
    for _game in range(2):
        leased = store.lease("test")
        assert leased is not None
        record = dataclasses.replace(a_record(leased.id, 5, winner=0),
                                     log=compress_log({"outputs": "not lists"}))  # fmt: skip
        store.finish(leased.id, record)
    answer = request(ladder, "GET", f"/games/{leased.id}")
    assert answer.status == 500 and "Traceback" not in answer.text
    assert f"game {leased.id} cannot be shown: the log&#39;s &#39;outputs&#39;" in answer.text
    game = request(ladder, "GET", f"/api/games/{leased.id}").json()["game"]
    builtin = {"bot": "builtin:greedy", "version": None, "owner": None, "builtin": True}
    assert builtin in game["seats"]  # a validation game's built-in opponent
