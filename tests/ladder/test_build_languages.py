"""The languages table: templates, entry files, what is installed, and the organiser's
extension file (TOML or JSON), whose every mistake is one line naming the key."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cardarena.ladder.languages import (
    LANGUAGES,
    Language,
    LanguageError,
    available,
    entry_folder,
    expand,
    load_languages,
    source_files,
)


def test_every_builtin_language_names_its_entry_and_its_tools() -> None:
    assert {"python", "c", "cpp", "java", "csharp", "rust", "go"} <= set(LANGUAGES)
    assert LANGUAGES["java"].tools() == ["javac", "java"]
    assert LANGUAGES["c"].tools() == ["gcc"]  # the built bot runs on its own
    assert available(LANGUAGES["c"]) == (shutil.which("gcc") is not None)
    assert not available(Language("x", "main.x", ("no-such-compiler-here",), ("{out}/bot",)))


def test_templates_expand_files_as_separate_words() -> None:
    template = LANGUAGES["c"].build
    assert template is not None
    words = expand(template, {"src": "/s", "out": "/o", "main": "main.c"}, ["a b.c", "main.c"])
    assert words == ["gcc", "-O2", "-std=c17", "-o", "/o/bot", "a b.c", "main.c", "-lm"]


def test_the_entry_folder(tmp_path: Path) -> None:
    c = LANGUAGES["c"]
    single = tmp_path / "single"
    single.mkdir()
    (single / "my bot.c").write_text("int main(void){}\n")
    assert entry_folder(single, c) == single
    assert [p.name for p in single.iterdir()] == ["main.c"]  # stored under the entry name
    nested = tmp_path / "nested"
    (nested / "bot" / "lib").mkdir(parents=True)
    for name in ("bot/main.c", "bot/lib/util.c", "bot/lib/util.h"):
        (nested / name).write_text("\n")
    assert entry_folder(nested, c) == nested / "bot"
    assert source_files(nested / "bot", c) == ["lib/util.c", "main.c"]
    with pytest.raises(LanguageError, match=r"needs its entry file Main\.java"):
        entry_folder(nested, LANGUAGES["java"])


def test_an_organisers_file_adds_replaces_and_removes_languages(tmp_path: Path) -> None:
    toml = tmp_path / "languages.toml"
    toml.write_text(
        '[languages.kotlin]\nsource_name = "Main.kt"\nsuffixes = [".kt"]\n'
        'build = ["kotlinc", "{files}", "-include-runtime", "-d", "{out}/bot.jar"]\n'
        'run = ["java", "-jar", "{out}/bot.jar"]\n'
        '[languages.python]\nsource_name = "main.py"\nrun = ["pypy3", "{out}/main.py"]\n'
        'copy_sources = true\nenv = { PYTHONHASHSEED = "0" }\n'
        "[languages.go]\nenabled = false\n"
    )
    table = load_languages(toml)
    assert "go" not in table and table["c"] == LANGUAGES["c"]
    assert table["kotlin"].build == (
        "kotlinc",
        "{files}",
        "-include-runtime",
        "-d",
        "{out}/bot.jar",
    )
    pypy = Language("python", "main.py", None, ("pypy3", "{out}/main.py"), copy_sources=True,
                    env=(("PYTHONHASHSEED", "0"),))  # fmt: skip
    assert table["python"] == pypy
    as_json = tmp_path / "languages.json"
    as_json.write_text(json.dumps({"languages": {"go": {"enabled": False}}}))
    assert set(load_languages(as_json)) == set(LANGUAGES) - {"go"}


BAD = {
    "not toml": ("[languages\n", "not valid TOML"),
    "other table": ("[bots]\nx = 1\n", "expected one table, 'languages'"),
    "bad name": ('[languages."C Sharp"]\nsource_name = "a.cs"\nrun = ["x"]\n', "a name is"),
    "unknown key": (
        '[languages.x]\nsource_name = "a"\nrun = ["x"]\ncompile = ["y"]\n',
        "unknown key 'compile'",
    ),
    "no run": ('[languages.x]\nsource_name = "a.x"\n', "languages.x.run: missing"),
    "run not a list": ('[languages.x]\nsource_name = "a.x"\nrun = "x"\n', "non-empty list"),
    "path as source": ('[languages.x]\nsource_name = "../a.x"\nrun = ["x"]\n', "plain file name"),
    "unknown placeholder": (
        '[languages.x]\nsource_name = "a.x"\nrun = ["{home}/x"]\n',
        "unknown placeholder {home}",
    ),
    "files in run": (
        '[languages.x]\nsource_name = "a.x"\nrun = ["x", "{files}"]\n',
        "{files} is for the build only",
    ),
    "files glued": (
        '[languages.x]\nsource_name = "a.x"\nsuffixes = [".x"]\nrun = ["x"]\n'
        'build = ["cc", "-o{files}"]\n',
        "a word on its own",
    ),
    "files without suffixes": (
        '[languages.x]\nsource_name = "a.x"\nrun = ["x"]\nbuild = ["cc", "{files}"]\n',
        "needs suffixes",
    ),
    "bad env": (
        '[languages.x]\nsource_name = "a.x"\nrun = ["x"]\nenv = { "A B" = "1" }\n',
        "languages.x.env",
    ),
    "disabled with keys": ('[languages.c]\nenabled = false\nrun = ["x"]\n', "stands alone"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_languages_file_is_one_line(tmp_path: Path, case: str) -> None:
    text, expected = BAD[case]
    path = tmp_path / "languages.toml"
    path.write_text(text)
    with pytest.raises(LanguageError) as refused:
        load_languages(path)
    assert expected in str(refused.value) and "\n" not in str(refused.value)
    assert str(refused.value).startswith(f"{path}: ")


def test_a_missing_languages_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(LanguageError, match="cannot read it: No such file"):
        load_languages(tmp_path / "nowhere.toml")
