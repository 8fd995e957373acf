"""A participant's upload is unpacked only when every name, kind and size in it is safe:
each hostile archive below, made here with zipfile and tarfile, is refused with one line
and leaves nothing behind."""

from __future__ import annotations

import gzip
import io
import stat
import tarfile
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from cardarena.ladder.uploads import UploadError, UploadLimits, unpack, unpack_tar

SMALL = UploadLimits(upload_bytes=1 << 20, unpacked_bytes=1 << 20, files=5, file_bytes=512 << 10,
                     depth=3)  # fmt: skip


def make_zip(members: dict[str, bytes], modes: dict[str, int] | None = None) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of the duplicate names made on purpose
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, data in members.items():
                info = zipfile.ZipInfo(name.removeprefix("DUP:"))
                info.compress_type = zipfile.ZIP_DEFLATED
                mode = (modes or {}).get(name)
                if mode is not None:
                    info.external_attr = mode << 16
                archive.writestr(info, data)
    return buffer.getvalue()


def make_tgz(*members: tuple[tarfile.TarInfo, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for info, data in members:
            info.size = len(data) if info.isreg() else 0
            archive.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return buffer.getvalue()


def member(
    name: str, kind: bytes = tarfile.REGTYPE, mode: int = 0o644, **fields: str
) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    for key, value in fields.items():
        setattr(info, key, value)
    return info


def test_a_single_source_file_keeps_its_name(tmp_path: Path) -> None:
    assert unpack(b"print('hi')\n", "my_bot.py", tmp_path / "a") == ["my_bot.py"]
    written = tmp_path / "a" / "my_bot.py"
    assert written.read_bytes() == b"print('hi')\n"
    assert stat.S_IMODE(written.stat().st_mode) == 0o644
    # A browser may send the sender's whole path: only its last part counts.
    assert unpack(b"int x;\n", "C:\\Users\\me\\bot.c", tmp_path / "b") == ["bot.c"]


def test_archives_unpack_with_safe_modes(tmp_path: Path) -> None:
    members = {"bot/main.c": b"int main(){}\n", "bot/run.sh": b"#!/bin/sh\n",
               "bot/lib/": b"", "bot/lib/x.h": b"\n"}  # fmt: skip
    data = make_zip(members, {"bot/run.sh": stat.S_IFREG | 0o4777, "bot/main.c": 0o100600})
    into = tmp_path / "zip"
    assert unpack(data, "bot.ZIP", into) == ["bot/lib/x.h", "bot/main.c", "bot/run.sh"]
    assert stat.S_IMODE((into / "bot" / "run.sh").stat().st_mode) == 0o755  # no setuid
    assert stat.S_IMODE((into / "bot" / "main.c").stat().st_mode) == 0o644
    assert stat.S_IMODE((into / "bot" / "lib").stat().st_mode) == 0o755
    data = make_tgz((member(".", tarfile.DIRTYPE), b""), (member("./src", tarfile.DIRTYPE), b""),
                    (member("./src/bot.py", mode=0o6755, uid=0), b"pass\n"),
                    (member("inner.zip"), make_zip({"a": b"b"})))  # fmt: skip
    into = tmp_path / "tgz"
    assert unpack(data, "bot.tgz", into) == ["inner.zip", "src/bot.py"]
    assert stat.S_IMODE((into / "src" / "bot.py").stat().st_mode) == 0o755
    assert (into / "inner.zip").read_bytes().startswith(b"PK")  # a nested archive is a file


def _lying_zip() -> bytes:
    """A zip whose headers say its one member is 100 bytes; it inflates to 30 MB."""
    data = bytearray(make_zip({"bomb": b"\0" * (30 << 20)}))
    real = (30 << 20).to_bytes(4, "little")
    assert data.count(real) == 2  # the local header and the central directory
    return bytes(data.replace(real, (100).to_bytes(4, "little")))


def _renamed(data: bytes, old: bytes, new: bytes) -> bytes:
    assert len(old) == len(new) and data.count(old) == 2
    return data.replace(old, new)


HOSTILE: dict[str, tuple[Callable[[], bytes], str, str]] = {
    "traversal": (lambda: make_zip({"../evil.py": b"x"}), "a.zip", "points outside the upload"),
    "traversal inside": (lambda: make_tgz((member("a/../../b"), b"x")), "a.tgz", "outside"),
    "absolute": (lambda: make_tgz((member("/etc/cron.d/x"), b"x")), "a.tar.gz", "absolute path"),
    "drive letter": (lambda: make_zip({"C:/x.py": b"x"}), "a.zip", "absolute path"),
    "backslash": (lambda: make_zip({"..\\..\\x.py": b"x"}), "a.zip", "backslash"),
    "zip symlink": (
        lambda: make_zip({"link": b"/etc/passwd"}, {"link": stat.S_IFLNK | 0o777}),
        "a.zip",
        "is a symlink",
    ),
    "tar symlink": (
        lambda: make_tgz((member("l", tarfile.SYMTYPE, linkname="/etc"), b"")),
        "a.tgz",
        "is a symlink",
    ),
    "hard link": (
        lambda: make_tgz((member("h", tarfile.LNKTYPE, linkname="/etc/shadow"), b"")),
        "a.tgz",
        "is a hard link",
    ),
    "device": (lambda: make_tgz((member("sda", tarfile.BLKTYPE), b"")), "a.tgz", "device file"),
    "char device": (
        lambda: make_zip({"tty": b""}, {"tty": stat.S_IFCHR | 0o666}),
        "a.zip",
        "device file",
    ),
    "fifo": (lambda: make_tgz((member("pipe", tarfile.FIFOTYPE), b"")), "a.tgz", "is a FIFO"),
    "zip bomb": (lambda: make_zip({"a": b"\0" * (2 << 20)}), "a.zip", "over the 0.5 MB limit"),
    "lying zip header": (_lying_zip, "a.zip", "cannot be read"),
    "tar bomb": (
        lambda: make_tgz(*((member(f"f{i}"), b"\0" * (400 << 10)) for i in range(4))),
        "a.tgz",
        "unpacks to more than 1 MB",
    ),
    "oversize file": (
        lambda: make_tgz((member("big"), b"\0" * (600 << 10))),
        "a.tgz",
        "limit for one file",
    ),
    "too many files": (
        lambda: make_zip({f"f{i}.py": b"x" for i in range(6)}),
        "a.zip",
        "more than 5 files",
    ),
    "too deep": (lambda: make_zip({"a/b/c/d.py": b"x"}), "a.zip", "deeper than 3 folders"),
    "duplicate": (lambda: make_zip({"bot.py": b"1", "DUP:bot.py": b"2"}), "a.zip", "appears twice"),
    "file and folder": (
        lambda: make_tgz((member("a"), b"1"), (member("a/b"), b"2")),
        "a.tgz",
        "both a file and a folder",
    ),
    "control character": (lambda: make_zip({"bot\x1b[31m.py": b"x"}), "a.zip", "control character"),
    "NUL in a name": (
        lambda: _renamed(make_zip({"bot.pyXevil": b"x"}), b"bot.pyXevil", b"bot.py\0evil"),
        "a.zip",
        "control character",
    ),
    "empty zip": (lambda: make_zip({}), "a.zip", "holds no files"),
    "folders only": (lambda: make_tgz((member("d", tarfile.DIRTYPE), b"")), "a.tgz", "no files"),
    "gzip named zip": (lambda: gzip.compress(b"x"), "a.zip", "is not a zip archive"),
    "zip named tgz": (lambda: make_zip({"a": b"b"}), "a.tgz", "not a gzip-compressed tar"),
    "broken tgz": (lambda: gzip.compress(b"not a tar" * 100), "a.tar.gz", "not a valid tar"),
    "truncated tgz": (lambda: make_tgz((member("a"), b"x" * 5000))[:60], "a.tgz", "not a valid"),
    "archive as source": (lambda: make_zip({"a": b"b"}), "bot.py", "is an archive"),
    "binary as source": (lambda: b"\x7fELF\0\0", "bot.c", "NUL bytes"),
    "empty source": (lambda: b"\n", "bot.py", "is empty"),
    "too big": (lambda: b"#" * ((1 << 20) + 1), "bot.py", "over the 1 MB limit"),
    "bad upload name": (lambda: b"x", "..", "outside the upload"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_upload_is_refused_with_one_line(tmp_path: Path, case: str) -> None:
    make, filename, expected = HOSTILE[case]
    into = tmp_path / "upload"
    with pytest.raises(UploadError) as refused:
        unpack(make(), filename, into, SMALL)
    message = str(refused.value)
    assert expected in message
    assert "\n" not in message and "\x1b" not in message and "\0" not in message
    assert not into.exists()  # nothing of it is left
    assert [p.name for p in tmp_path.iterdir()] == []  # nor written beside


def test_a_refused_upload_leaves_a_given_folder_empty(tmp_path: Path) -> None:
    data = make_zip({"ok.py": b"x", "sub/ok.py": b"y", "../bad.py": b"z"})
    with pytest.raises(UploadError, match="outside"):
        unpack(data, "a.zip", tmp_path, SMALL)
    assert list(tmp_path.iterdir()) == []


def test_a_build_output_archive_gets_the_same_checks(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = member("./bot", mode=0o755)
        info.size = 3
        archive.addfile(info, io.BytesIO(b"ELF"))
        archive.addfile(member("./lib", tarfile.SYMTYPE, linkname="/"))
    with pytest.raises(UploadError, match="is a symlink"):
        unpack_tar(buffer.getvalue(), tmp_path / "out", SMALL, "the build's output")
    assert not (tmp_path / "out").exists()
