"""cardarena/pages.py and cardarena/untrusted.py on their own: what a template can insert,
what JSON in a script element can hold, how files are written, and the input caps.

The pages themselves are checked in Chromium by tests/locm/test_pages_hostile.py and
tests/shared_deck/test_dashboard_hostile.py."""

from __future__ import annotations

import json
import os
import re
import zlib
from pathlib import Path

import pytest

from cardarena import pages, untrusted

PAYLOAD = "</script><script>alert(1)</script><!--\"' onmouseover=alert(2) \u2028&amp;"


def test_a_template_inserts_stored_strings_as_text_only(tmp_path: Path) -> None:
    page = pages.render("cardarena.shared_deck", "web/error.html", status=404, title=PAYLOAD,
                        message=PAYLOAD, policy=pages.content_policy())  # fmt: skip
    assert "<script" not in page and "onmouseover=alert" in page  # the text, as text
    assert '"' not in re.sub(r'="[^"<>]*"', "", page.split("<title>")[1])  # no quote left bare
    assert "&lt;/script&gt;" in page and "&amp;amp;" in page


def test_json_in_a_script_element_cannot_end_it() -> None:
    text = str(pages.script_json({"name": PAYLOAD, "n": [1, 2.5]}))
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\u2028" not in text
    assert json.loads(text) == {"name": PAYLOAD, "n": [1, 2.5]}
    with pytest.raises(ValueError):
        pages.script_json({"x": float("nan")})


def test_the_policy_lets_exactly_the_given_scripts_run() -> None:
    policy = pages.content_policy("alert(1)")
    # the hash CSP itself prescribes: base64 of the SHA-256 of the script's UTF-8 text
    assert "script-src 'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='" in policy
    assert "object-src 'none'" in policy and "base-uri 'none'" in policy
    assert "script-src 'none'" in pages.content_policy()


def test_a_page_replaces_a_link_and_never_writes_through_it(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep")
    link = tmp_path / "page.html"
    link.symlink_to(victim)
    pages.write_page(str(link), "<p>page</p>")
    assert victim.read_text() == "keep"
    assert not link.is_symlink() and link.read_text() == "<p>page</p>"
    assert oct(link.stat().st_mode & 0o777) == oct(0o666 & ~pages._umask())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.html", "victim"]
    with pytest.raises(OSError):
        pages.write_page(str(tmp_path / "missing" / "page.html"), "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.html", "victim"]


def test_decompression_stops_at_the_cap() -> None:
    data = b"x" * 5000
    assert untrusted.decompress(zlib.compress(data), limit=5000) == data
    with pytest.raises(untrusted.InputTooLargeError, match="once decompressed"):
        untrusted.decompress(zlib.compress(data), limit=4999)
    with pytest.raises(untrusted.UntrustedInputError, match="not zlib"):
        untrusted.decompress(b"plain text")
    with pytest.raises(untrusted.UntrustedInputError, match="truncated"):
        untrusted.decompress(zlib.compress(data)[:-3])
    with pytest.raises(untrusted.UntrustedInputError, match="not compressed data"):
        untrusted.decompress("text")  # type: ignore[arg-type]


def test_json_items_are_counted_outside_strings() -> None:
    inside = json.dumps({"stderr": "[{," * 1000}).encode()
    assert untrusted.load_json(inside, items=10) == {"stderr": "[{," * 1000}
    with pytest.raises(untrusted.InputTooLargeError, match="more than 10 JSON items"):
        untrusted.load_json(json.dumps(list(range(11))).encode(), items=10)
    escaped = json.dumps({"a": 'x\\"[[[', "b": "\\"}).encode()  # escapes do not end a string
    assert untrusted.load_json(escaped, items=3) == {"a": 'x\\"[[[', "b": "\\"}
    # an unclosed string costs one linear scan, and is invalid JSON
    with pytest.raises(untrusted.UntrustedInputError, match="invalid JSON"):
        untrusted.load_json(b'["' + b'\\"' * 100_000)


def test_umask_is_left_as_it_was() -> None:
    before = os.umask(0o027)
    try:
        pages._umask.cache_clear()
        assert pages._umask() == 0o027
        assert os.umask(0o027) == 0o027
    finally:
        os.umask(before)
        pages._umask.cache_clear()
