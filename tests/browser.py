"""A real headless Chromium for the viewer and dashboard tests, driven by Playwright.

The browser is Debian's (`apt-get install -y chromium chromium-driver`); Playwright's own browser
download is never used. Where Chromium or Playwright is missing, the tests that need it skip with
a message naming what to install.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMIUM_ARGS = [
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str | None:
    """Debian's Chromium, if installed."""
    for candidate in CHROMIUM_CANDIDATES:
        if shutil.which(candidate):
            return candidate
    return shutil.which("chromium")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """One headless Chromium per test module (pages are cheap, browsers are not).

    Not per session: while Playwright's sync API is open, its event loop counts as running
    in the main thread, so every later test calling ``asyncio.run`` (the referee, Shared
    Deck) would fail with "cannot be called from a running event loop".
    """
    executable = chromium_path()
    if executable is None:
        pytest.skip("no Chromium: install Debian's packages with `apt-get install -y chromium "
                    "chromium-driver` to run the browser tests")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("no Playwright: `pip install -e '.[test]'` installs it")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture()
def page(browser: object) -> Iterator[object]:
    """A fresh page (own context: no shared storage between tests).

    ``bypass_csp``: the pages allow only their own script (Content-Security-Policy), and
    Playwright's ``wait_for_function`` evaluates its predicate as a string in the page;
    tests/locm/test_pages_hostile.py checks the pages with their policy in force."""
    context = browser.new_context(viewport={"width": 1400, "height": 900}, bypass_csp=True)  # type: ignore[attr-defined]
    try:
        yield context.new_page()
    finally:
        context.close()


WATCH = """
window.__hostile = [];
const note = (what) => window.__hostile.push(what);
const check = (node) => {
  if (node.nodeType !== 1) return;
  for (const element of [node, ...node.querySelectorAll('*')]) {
    for (const attribute of element.attributes) {
      if (/^on/i.test(attribute.name)) note(element.tagName + ' attribute ' + attribute.name);
      if (/^\\s*javascript:/i.test(attribute.value)) note('javascript: URL in ' + attribute.name);
    }
    const tag = element.tagName.toLowerCase();
    if (['svg', 'iframe', 'object', 'embed'].includes(tag)) note('element ' + tag);
    if (tag === 'img' && !['matrix', 'ratings'].includes(element.getAttribute('alt'))) note('img');
  }
};
new MutationObserver((changes) => changes.forEach((change) => {
  change.addedNodes.forEach(check);
  if (change.type === 'attributes') check(change.target);
})).observe(document, {subtree: true, childList: true, attributes: true});
document.addEventListener('securitypolicyviolation',
                          (e) => note('blocked by the policy: ' + e.violatedDirective));
"""
"""Runs before every page's own script: records anything stored data could have injected
(tests/locm/test_pages_hostile.py, tests/shared_deck/test_dashboard_hostile.py)."""



def watched_page(browser: Any, *, bypass_csp: bool) -> Iterator[Any]:
    """A page that records every dialog (``page.alerts``) and, through :data:`WATCH`, every
    handler attribute, ``javascript:`` URL, foreign element or blocked script; ``bypass_csp``
    switches the pages' Content-Security-Policy off, so that escaping alone is tested."""
    context = browser.new_context(bypass_csp=bypass_csp)
    context.add_init_script(WATCH)
    page = context.new_page()
    page.alerts = []

    def on_dialog(dialog: Any) -> None:
        page.alerts.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    try:
        yield page
    finally:
        context.close()


def assert_nothing_injected(page: Any) -> None:
    """No dialog opened, :data:`WATCH` saw nothing, and no element has an ``on*`` attribute."""
    assert page.alerts == []
    assert page.evaluate("window.__hostile") == []
    found = page.evaluate("""() => [...document.querySelectorAll('*')].flatMap((e) =>
        [...e.attributes].filter((a) => /^on/i.test(a.name)).map((a) => e.tagName + a.name))""")
    assert found == []
