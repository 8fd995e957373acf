"""The languages a ladder builds: how to compile a submission and how to run the result.

A :class:`Language` holds two argument-vector templates, ``build`` (None: nothing to
compile) and ``run``, whose words may name these placeholders:

``{src}``    the folder holding the submission's entry file (the build's working folder)
``{out}``    the folder the build writes to, and the bot later runs from
``{main}``   the entry file's name (``source_name``)
``{files}``  (a word on its own) every source file of the submission with one of the
             language's ``suffixes``, relative to ``{src}``, sorted

The built-in table is :data:`LANGUAGES`; an organiser adds or replaces languages with a
TOML or JSON file (:func:`load_languages`). Nothing here runs a build: that is the game's
(``cardarena.locm.ladder.build``), inside its sandbox.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PLACEHOLDERS = ("src", "out", "main", "files")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_NAME = re.compile(r"[a-z][a-z0-9_+-]{0,31}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SOURCE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,99}")


class LanguageError(ValueError):
    """A languages file or a submission's layout refused; the message is one line."""


@dataclass(frozen=True)
class Language:
    """How one language is built and run (templates: see the module's docstring)."""

    name: str
    source_name: str
    """The entry file: an upload of one file is stored under this name; an archive must
    hold it at its top (or in its only top-level folder)."""
    build: tuple[str, ...] | None
    """The compile command, run in ``{src}``; None when there is nothing to compile."""
    run: tuple[str, ...]
    """The bot's command line once built."""
    suffixes: tuple[str, ...] = ()
    """What ``{files}`` gathers (``.c``): every file of the submission ending so."""
    copy_sources: bool = False
    """True: the whole submission is copied to ``{out}`` before ``build`` runs (for
    interpreted languages, whose sources are the bot)."""
    env: tuple[tuple[str, str], ...] = field(default=())
    """Variables the build runs with, besides the sandbox's (e.g. where a cache goes)."""

    def tools(self) -> list[str]:
        """The programs this language needs on the PATH: the first word of each template,
        unless it is a placeholder (``{out}/bot``)."""
        words = [template[0] for template in (self.build, self.run) if template]
        return [word for word in dict.fromkeys(words) if "{" not in word]


LANGUAGES: dict[str, Language] = {
    language.name: language
    for language in (
        Language(
            "python", "bot.py", ("python3", "-m", "compileall", "-q", "{out}"),
            ("python3", "{out}/bot.py"), (".py",), copy_sources=True,
        ),
        Language(
            "c", "main.c", ("gcc", "-O2", "-std=c17", "-o", "{out}/bot", "{files}", "-lm"),
            ("{out}/bot",), (".c",),
        ),
        Language(
            "cpp", "main.cpp", ("g++", "-O2", "-std=c++17", "-o", "{out}/bot", "{files}"),
            ("{out}/bot",), (".cpp", ".cc", ".cxx"),
        ),
        Language(
            "java", "Main.java",
            ("javac", "-proc:none", "-encoding", "UTF-8", "-d", "{out}", "{files}"),
            ("java", "-cp", "{out}", "Main"), (".java",),
        ),
        Language(
            "csharp", "Main.cs", ("mcs", "-optimize+", "-out:{out}/bot.exe", "{files}"),
            ("mono", "{out}/bot.exe"), (".cs",),
        ),
        Language(
            "rust", "main.rs", ("rustc", "-O", "--edition", "2021", "-o", "{out}/bot", "{main}"),
            ("{out}/bot",), (".rs",),
        ),
        Language(
            "go", "main.go", ("go", "build", "-o", "{out}/bot", "{files}"), ("{out}/bot",),
            (".go",),
            env=(("GOTOOLCHAIN", "local"), ("GOPROXY", "off"),
                 ("GOCACHE", "/tmp/go-cache"), ("GOPATH", "/tmp/go"), ("CGO_ENABLED", "0")),
        ),
    )
}  # fmt: skip
"""The built-in languages. C and C++ compile every ``.c`` / ``.cpp`` file of the
submission together; Java every ``.java`` file (the bot is the class ``Main``); C# every
``.cs`` file; Rust the crate rooted at ``main.rs`` (its ``mod`` files beside it); Go every
``.go`` file; Python copies the whole submission and checks that each ``.py`` file
compiles."""


def available(language: Language) -> bool:
    """True if every program the language needs is on the PATH here."""
    return all(shutil.which(tool) is not None for tool in language.tools())


def expand(
    template: Sequence[str], values: Mapping[str, str], files: Sequence[str] = ()
) -> list[str]:
    """``template`` with its placeholders filled in (``{files}``, a word on its own, becomes
    the words of ``files``)."""
    words: list[str] = []
    for word in template:
        if word == "{files}":
            words += files
        else:
            words.append(_PLACEHOLDER.sub(lambda match: values[match.group(1)], word))
    return words


def source_files(folder: Path, language: Language) -> list[str]:
    """The files of ``folder`` (searched through, symlinks not followed) with one of the
    language's suffixes, relative to it, sorted."""
    found: list[str] = []
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in names:
            path = Path(root, name)
            if name.endswith(language.suffixes) and path.is_file() and not path.is_symlink():
                found.append(path.relative_to(folder).as_posix())
    return sorted(found)


def entry_folder(source_dir: Path, language: Language) -> Path:
    """The folder of ``source_dir`` a build runs in: the one holding the entry file.

    That is ``source_dir`` itself, or its only top-level folder (an archive of a folder).
    An upload of one file whatever its name (``mybot.c``) is renamed to the entry file
    here. LanguageError (one line) if there is no entry file.
    """
    entries = sorted(source_dir.iterdir())
    if (source_dir / language.source_name).is_file():
        return source_dir
    if len(entries) == 1 and entries[0].is_file() and not entries[0].is_symlink():
        entries[0].rename(source_dir / language.source_name)
        return source_dir
    only = entries[0] if len(entries) == 1 else None
    if only is not None and not only.is_symlink() and (only / language.source_name).is_file():
        return only
    raise LanguageError(
        f"a {language.name} submission needs its entry file {language.source_name} at the top "
        "of the archive (or in its only folder)"
    )


# --- the organiser's languages file ---------------------------------------------------------

_KEYS = {"source_name", "build", "run", "suffixes", "copy_sources", "env", "enabled"}


def load_languages(
    path: Path | str, base: Mapping[str, Language] | None = None
) -> dict[str, Language]:
    """The languages table: ``base`` (the built-in :data:`LANGUAGES` if None) with the
    organiser's file at ``path`` applied. LanguageError (one line) if it is not valid.

    The file (TOML, or JSON if its name ends in ``.json``) has a table ``languages`` with
    one table per language name: ``source_name``, ``run`` and optionally ``build``,
    ``suffixes``, ``copy_sources``, ``env`` (see :class:`Language`); a name of the base
    table is replaced, and ``enabled = false`` alone removes it::

        [languages.kotlin]
        source_name = "Main.kt"
        suffixes = [".kt"]
        build = ["kotlinc", "{files}", "-include-runtime", "-d", "{out}/bot.jar"]
        run = ["java", "-jar", "{out}/bot.jar"]

        [languages.go]
        enabled = false
    """
    path = Path(path)
    is_json = path.suffix.lower() == ".json"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise LanguageError(
            f"{path}: cannot read it: {getattr(error, 'strerror', None) or error}"
        ) from None
    try:
        document = json.loads(text) if is_json else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise LanguageError(f"{path}: not valid {'JSON' if is_json else 'TOML'}: {first}") from None
    if not isinstance(document, dict) or set(document) != {"languages"}:
        raise LanguageError(f"{path}: expected one table, 'languages'")
    table = document["languages"]
    if not isinstance(table, dict):
        raise LanguageError(f"{path}: 'languages' must be a table of languages")
    languages = dict(LANGUAGES if base is None else base)
    for name, entry in table.items():
        where = f"{path}: languages.{name}"
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise LanguageError(f"{where}: a name is lowercase letters, digits, _ + - (at most 32)")
        if not isinstance(entry, dict):
            raise LanguageError(f"{where}: expected a table")
        unknown = sorted(set(entry) - _KEYS)
        if unknown:
            raise LanguageError(
                f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_KEYS))})"
            )
        enabled = entry.get("enabled", True)
        if not isinstance(enabled, bool):
            raise LanguageError(f"{where}: enabled must be true or false")
        if not enabled:
            if set(entry) != {"enabled"}:
                raise LanguageError(f"{where}: enabled = false stands alone")
            languages.pop(name, None)
            continue
        languages[name] = _language(name, entry, where)
    return languages


def _language(name: str, entry: Mapping[str, Any], where: str) -> Language:
    source_name = entry.get("source_name")
    if not isinstance(source_name, str) or not _SOURCE_NAME.fullmatch(source_name):
        raise LanguageError(f'{where}: source_name must be a plain file name (e.g. "main.c")')
    run = _template(entry.get("run"), f"{where}.run", required=True)
    assert run is not None
    build = _template(entry.get("build"), f"{where}.build", required=False)
    if "{files}" in run:
        raise LanguageError(f"{where}.run: {{files}} is for the build only")
    suffixes = entry.get("suffixes", [])
    if not isinstance(suffixes, list) or not all(
        isinstance(s, str) and re.fullmatch(r"\.[A-Za-z0-9_+-]{1,15}", s) for s in suffixes
    ):
        raise LanguageError(f'{where}.suffixes: expected a list like [".c", ".h"]')
    if build is not None and "{files}" in build and not suffixes:
        raise LanguageError(f"{where}.build: {{files}} needs suffixes")
    copy_sources = entry.get("copy_sources", False)
    if not isinstance(copy_sources, bool):
        raise LanguageError(f"{where}.copy_sources: must be true or false")
    env = entry.get("env", {})
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and _ENV_NAME.fullmatch(k) and isinstance(v, str) and "\x00" not in v
        for k, v in env.items()
    ):
        raise LanguageError(f'{where}.env: expected a table of NAME = "value" strings')
    return Language(name, source_name, build, run, tuple(suffixes), copy_sources,
                    tuple(env.items()))  # fmt: skip


def _template(value: object, where: str, *, required: bool) -> tuple[str, ...] | None:
    if value is None:
        if required:
            raise LanguageError(f'{where}: missing (a list of words, e.g. ["{{out}}/bot"])')
        return None
    if not isinstance(value, list) or not value or not all(isinstance(w, str) for w in value):
        raise LanguageError(f"{where}: expected a non-empty list of strings")
    for word in value:
        if "\x00" in word or "\n" in word:
            raise LanguageError(f"{where}: a word holds a NUL or a line break")
        for match in _PLACEHOLDER.finditer(word):
            if match.group(1) not in PLACEHOLDERS:
                raise LanguageError(
                    f"{where}: unknown placeholder {match.group(0)} "
                    f"(known: {', '.join('{' + p + '}' for p in PLACEHOLDERS)})"
                )
        if "{files}" in word and word != "{files}":
            raise LanguageError(f"{where}: {{files}} must be a word on its own")
    return tuple(value)
