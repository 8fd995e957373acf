"""Take the pictures of the ladder's pages for docs/ladder.md, with Debian's Chromium.

    python scripts/ladder_pictures.py docs/img

Starts a real ``locm ladder serve`` (LOCM 1.5, one worker) in a temporary folder over a
ladder of three built-in bots of three owners, logs in as a fourth participant, alice,
submits a small Python bot through the page's form, waits until it has played some rated
games, then saves ``ladder-board.png`` (the leaderboard), ``ladder-bot.png`` (alice's bot,
seen by alice: with its build log), ``ladder-me.png`` (alice's own page) and
``ladder-play.png`` (alice playing her bot from its page). Takes about half a minute on two
busy cores.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BOT_SOURCE = ROOT / "tests" / "locm" / "bots" / "simple_bot.py"
BUILTINS = (("olga", "greedy"), ("oscar", "random"), ("pat", "learned"))
RATED_GAMES = 24
"""Games alice's bot plays before the pictures: enough for a rating line."""
WAIT_S = 600.0
SIZE = {"width": 1280, "height": 720}
MAX_BYTES = 150_000
"""A picture larger than this is saved with fewer colours."""


def prepare(folder: Path) -> tuple[Path, str]:
    """The ladder's database with the built-in bots active; alice's token."""
    sys.path.insert(0, str(ROOT))
    from cardarena.ladder.store import LadderStore

    db = folder / "ladder.db"
    with LadderStore(str(db)) as store:
        store.configure(game="locm", version="1.5")
        token = store.add_user("alice")
        for owner, agent in BUILTINS:
            user = store.user_for_token(store.add_user(owner, owner == "olga"))
            assert user is not None
            version = store.submit(user, agent, "python", "bot.py", b"#", new_bot=True)
            store.record_build(version, True, "built in", f"builtin:{agent}", None)
            store.set_status(version, "active")
    return db, token


def get_json(address: str) -> Any:
    with urllib.request.urlopen(address, timeout=30) as answer:
        return json.loads(answer.read())


def wait_until(what: str, check: Any) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"ladder_pictures: gave up waiting for {what}")
        time.sleep(1.0)


def save(page: Any, path: Path, height: int = SIZE["height"]) -> None:
    """A screenshot of the page's top ``height`` pixels, made smaller if it is too large."""
    clip = {"x": 0, "y": 0, "width": SIZE["width"], "height": height}
    page.screenshot(path=str(path), full_page=True, clip=clip)
    if path.stat().st_size > MAX_BYTES:
        from PIL import Image

        with Image.open(path) as image:
            image.convert("RGB").quantize(colors=128).save(path, optimize=True)
    print(f"{path} ({path.stat().st_size // 1000} KB)")


def shoot(address: str, token: str, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium,
                                             args=["--no-sandbox", "--disable-gpu"])  # fmt: skip
        page = browser.new_context(viewport=SIZE).new_page()
        page.goto(address + "me")
        page.fill("#token", token)
        page.click("#login button[type=submit]")
        page.wait_for_selector("#submit")
        page.fill("#bot-name-field", "simple")
        page.check("#new-bot")
        page.select_option("#language", "python")
        page.set_input_files("#file", str(BOT_SOURCE))
        page.click("#send")
        page.wait_for_selector('#bot-name[data-bot="simple"]')

        def played() -> bool:
            bot = get_json(address + "api/bots/simple")
            if bot["status"] == "failed":
                raise SystemExit("ladder_pictures: the bot failed (no sandbox here?)")
            return bot["status"] == "active" and len(bot.get("ratings") or []) >= RATED_GAMES

        wait_until(f"{RATED_GAMES} rated games of alice's bot", played)
        page.goto(address)
        page.wait_for_selector('tr[data-bot="simple"][data-status="active"]')
        save(page, out / "ladder-board.png")
        page.goto(address + "bots/simple")
        page.wait_for_selector("#rating-chart")
        save(page, out / "ladder-bot.png", height=1250)  # down to its first games
        page.goto(address + "me")
        save(page, out / "ladder-me.png")

        page.goto(address + "bots/simple")
        page.select_option("#play-seat", "first")
        page.click("#play")
        page.wait_for_selector("[data-auto]:not([hidden])")
        page.click("[data-auto]")
        page.wait_for_selector('[data-action="PASS"]', timeout=60_000)
        for _turn in range(3):  # a few turns: creatures on both sides
            for _move in range(3):
                moves = page.locator('#moves [data-action^="SUMMON"]')
                if not moves.count():
                    break
                old = page.get_attribute("body", "data-decision")
                moves.first.click()
                page.wait_for_selector(f'body:not([data-decision="{old}"])')
            page.locator('[data-action="PASS"]').click()
            # the bot's moves are shown one at a time; then the page says it is our turn
            page.wait_for_selector('#status:has-text("your turn"), #end:not([hidden])',
                                   timeout=60_000)  # fmt: skip
        save(page, out / "ladder-play.png")
        browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder for the PNG files (docs/img)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ladder-pictures-") as folder:
        db, token = prepare(Path(folder))
        server = subprocess.Popen(
            [sys.executable, "-m", "cardarena.locm", "ladder", "serve", "--db", str(db),
             "--version", "1.5", "--port", "0", "--workers", "1"],
            stdout=subprocess.PIPE, text=True, cwd=ROOT,
        )  # fmt: skip
        assert server.stdout is not None
        try:
            address = server.stdout.readline().strip()
            if not address.startswith("http"):
                raise SystemExit("ladder_pictures: the ladder did not start")
            shoot(address, token, args.out)
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
