"""A participant's upload, checked and written to a fresh folder: a source file, a .zip or
a .tar.gz / .tgz.

An upload is a stranger's bytes. Nothing in it is trusted: names are checked one by one
(no ``..``, no absolute paths, no backslashes or drive letters, no control characters, no
duplicates, a bounded depth), only regular files and folders are taken (no symlinks, hard
links, devices or FIFOs), modes are not copied (files are written 0644, or 0755 where the
archive marks them executable; folders 0755: no setuid bit ever lands), and every file is
written by this module itself, through folder descriptors with ``O_NOFOLLOW`` and
``O_EXCL``, never by ``extractall``. Sizes are counted on the bytes really read out, while
they stream, not taken from the archive's headers: a bomb stops at the cap. An archive
inside the upload is just a file. Each refusal is an :class:`UploadError` with one line
that says why.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import shutil
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

CHUNK = 1 << 16
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
"""A zip archive starts with a local file header (or, empty, with its end record)."""
GZIP_MAGIC = b"\x1f\x8b"
ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_DRIVE = re.compile(r"^[A-Za-z]:")
NAME_BYTES = 255
"""The longest file or folder name (in UTF-8 bytes) most file systems take."""
TAR_OVERHEAD = 20 << 10
"""Bytes of a tar stream that are not file contents, besides each entry's own headers:
its end blocks and record padding."""
ENTRY_OVERHEAD = 3 << 10
"""Header bytes allowed per tar entry (a 512-byte header, a long name or PAX record)."""


class UploadError(ValueError):
    """An upload refused; the message is one line that says why, for the participant."""


@dataclass(frozen=True)
class UploadLimits:
    """What one upload may hold. The defaults fit any contest bot's source code."""

    upload_bytes: int = 2 << 20
    """The upload itself, as sent (compressed, for an archive)."""
    unpacked_bytes: int = 20 << 20
    """All its files together, unpacked."""
    files: int = 200
    """Regular files in an archive (folders are counted apart, with the same cap)."""
    file_bytes: int = 10 << 20
    """Any single file, unpacked."""
    depth: int = 8
    """Folders a file may lie in, one inside another (``a/b/c.py`` is depth 3)."""


def _mb(size: int) -> str:
    return f"{size / (1 << 20):g} MB"


def is_archive(filename: str) -> bool:
    """True if the upload's name makes it an archive (.zip, .tar.gz, .tgz, any case)."""
    return filename.lower().endswith(ARCHIVE_SUFFIXES)


def checked_parts(name: str, limits: UploadLimits, what: str = "archive member") -> list[str]:
    """The path components of a name from an upload, or UploadError: a relative path
    of ordinary names (``.`` parts and a trailing ``/`` are dropped)."""
    if "\x00" in name or _CONTROL.search(name):
        raise UploadError(f"{what} {name!r} has a control character in its name")
    if "\\" in name:
        raise UploadError(f"{what} {name!r} has a backslash in its name")
    if name.startswith("/") or _DRIVE.match(name):
        raise UploadError(f"{what} {name!r} is an absolute path")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise UploadError(f"{what} {name!r} has a name that is not UTF-8") from None
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise UploadError(f"{what} {name!r} points outside the upload (..)")
    if not parts:
        raise UploadError(f"{what} {name!r} has an empty name")
    if any(len(part.encode("utf-8")) > NAME_BYTES for part in parts):
        raise UploadError(f"{what} {name!r} has a name longer than {NAME_BYTES} bytes")
    if len(parts) > limits.depth:
        raise UploadError(f"{what} {name!r} lies deeper than {limits.depth} folders")
    return parts


@dataclass
class _Entry:
    """One member of an archive: a folder (``data`` None) or a file and its contents."""

    parts: list[str]
    data: BinaryIO | None
    executable: bool = False


class _Writer:
    """Writes checked entries under a fresh folder, keeping count of files and bytes."""

    def __init__(self, into: Path, limits: UploadLimits) -> None:
        self.into = into
        self.limits = limits
        self.files: dict[str, None] = {}
        self.folders: set[str] = set()
        self.total = 0
        self._root = os.open(into, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)

    def close(self) -> None:
        os.close(self._root)

    def _folder_fd(self, parts: list[str]) -> int:
        """A descriptor of the folder ``parts`` (made where missing, 0755), never through
        a symlink; the caller closes it."""
        fd = os.dup(self._root)
        try:
            for depth, part in enumerate(parts, 1):
                key = "/".join(parts[:depth])
                if key in self.files:
                    raise UploadError(f"archive member {key!r} is both a file and a folder")
                made = key not in self.folders
                if made:
                    if len(self.folders) >= self.limits.files:
                        raise UploadError(f"the archive has more than {self.limits.files} folders")
                    self.folders.add(key)
                    os.mkdir(part, 0o755, dir_fd=fd)
                inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                                dir_fd=fd)  # fmt: skip
                os.close(fd)
                fd = inner
                if made:
                    os.fchmod(fd, 0o755)  # whatever the umask
        except BaseException:
            os.close(fd)
            raise
        return fd

    def add(self, entry: _Entry) -> None:
        key = "/".join(entry.parts)
        if entry.data is None:
            if key in self.files:
                raise UploadError(f"archive member {key!r} is both a file and a folder")
            os.close(self._folder_fd(entry.parts))
            return
        if key in self.files:
            raise UploadError(f"archive member {key!r} appears twice")
        if key in self.folders:
            raise UploadError(f"archive member {key!r} is both a file and a folder")
        if len(self.files) >= self.limits.files:
            raise UploadError(f"the archive has more than {self.limits.files} files")
        folder = self._folder_fd(entry.parts[:-1])
        try:
            self.files[key] = None
            mode = 0o755 if entry.executable else 0o644
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(entry.parts[-1], flags, mode, dir_fd=folder)
            with os.fdopen(fd, "wb") as out:
                os.fchmod(out.fileno(), mode)  # whatever the umask
                self._copy(key, entry.data, out)
        finally:
            os.close(folder)

    def _copy(self, key: str, source: BinaryIO, out: BinaryIO) -> None:
        size = 0
        while chunk := _read(key, source):
            size += len(chunk)
            self.total += len(chunk)
            if size > self.limits.file_bytes:
                raise UploadError(
                    f"archive member {key!r} is over the {_mb(self.limits.file_bytes)} "
                    "limit for one file"
                )
            if self.total > self.limits.unpacked_bytes:
                raise UploadError(
                    f"the archive unpacks to more than {_mb(self.limits.unpacked_bytes)}"
                )
            out.write(chunk)


READ_ERRORS = (
    tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error, gzip.BadGzipFile, OSError,
    NotImplementedError,
)  # fmt: skip
"""What reading a damaged or unusual archive raises (besides the caps' UploadError)."""


def _read(key: str, source: BinaryIO) -> bytes:
    try:
        return source.read(CHUNK)
    except READ_ERRORS as error:
        raise UploadError(f"archive member {key!r} cannot be read: {_one_line(error)}") from None


def _zip_entries(data: bytes, filename: str, limits: UploadLimits) -> Iterator[_Entry]:
    if not data.startswith(ZIP_MAGICS):
        raise UploadError(f"{filename!r} is not a zip archive")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError):
        raise UploadError(f"{filename!r} is not a valid zip archive") from None
    with archive:
        members = archive.infolist()
        if len(members) > 2 * limits.files:
            raise UploadError(f"the archive has more than {limits.files} files")
        for info in members:
            # orig_filename: the name as stored (zipfile cuts a name at its first NUL).
            parts = checked_parts(info.orig_filename, limits)
            shown = "/".join(parts)
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode)
            if info.is_dir() or kind == stat.S_IFDIR:
                yield _Entry(parts, None)
                continue
            _refuse_kind(kind, shown)
            if info.flag_bits & 0x1:
                raise UploadError(f"archive member {shown!r} is encrypted")
            if info.file_size > limits.file_bytes:  # a quick refusal; the real count is below
                raise UploadError(
                    f"archive member {shown!r} is over the "
                    f"{_mb(limits.file_bytes)} limit for one file"
                )
            try:
                with archive.open(info) as member:
                    yield _Entry(parts, member, bool(mode & 0o111))
            except (
                zipfile.BadZipFile,
                NotImplementedError,
                zlib.error,
                EOFError,
                OSError,
            ) as error:
                raise UploadError(
                    f"archive member {shown!r} cannot be read: {_one_line(error)}"
                ) from None


def _refuse_kind(kind: int, name: str) -> None:
    """UploadError unless ``kind`` (an ``S_IFMT`` value, 0 for none given) is a regular file."""
    if kind == stat.S_IFLNK:
        raise UploadError(f"archive member {name!r} is a symlink")
    if kind in (stat.S_IFCHR, stat.S_IFBLK):
        raise UploadError(f"archive member {name!r} is a device file")
    if kind == stat.S_IFIFO:
        raise UploadError(f"archive member {name!r} is a FIFO")
    if kind == stat.S_IFSOCK:
        raise UploadError(f"archive member {name!r} is a socket")
    if kind not in (0, stat.S_IFREG):
        raise UploadError(f"archive member {name!r} is not a regular file")


class _Capped(io.RawIOBase):
    """A stream that fails once more than ``cap`` bytes have been read from it: the
    decompressed tar stream, counted before tarfile sees it."""

    def __init__(self, source: BinaryIO, cap: int, shown: int) -> None:
        self.source = source
        self.cap = cap
        self.shown = shown
        """The unpacked cap the participant is told of (``cap`` adds the headers' room)."""
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self.source.read(len(buffer))
        self.read_bytes += len(data)
        if self.read_bytes > self.cap:
            raise UploadError(f"the archive unpacks to more than {_mb(self.shown)}")
        buffer[: len(data)] = data
        return len(data)


def _tgz_entries(data: bytes, filename: str, limits: UploadLimits) -> Iterator[_Entry]:
    if not data.startswith(GZIP_MAGIC):
        raise UploadError(f"{filename!r} is not a gzip-compressed tar archive")
    return _tar_entries(gzip.GzipFile(fileobj=io.BytesIO(data)), filename, limits)


def _tar_entries(source: BinaryIO, filename: str, limits: UploadLimits) -> Iterator[_Entry]:
    """The entries of the (uncompressed) tar stream ``source``."""
    cap = limits.unpacked_bytes + TAR_OVERHEAD + 2 * limits.files * ENTRY_OVERHEAD
    stream = io.BufferedReader(_Capped(source, cap, limits.unpacked_bytes), CHUNK)
    try:
        # "r|": read as a stream, never seeking: each member's bytes are read once, in order.
        with tarfile.open(fileobj=stream, mode="r|") as archive:
            count = 0
            for member in archive:
                count += 1
                if count > 2 * limits.files:
                    raise UploadError(f"the archive has more than {limits.files} files")
                if member.isdir() and member.name.strip("/") in ("", "."):
                    continue  # the archive's own top folder ("tar -cf x.tgz ." writes ./)
                parts = checked_parts(member.name, limits)
                shown = "/".join(parts)
                if member.isdir():
                    yield _Entry(parts, None)
                    continue
                if member.issym():
                    raise UploadError(f"archive member {shown!r} is a symlink")
                if member.islnk():
                    raise UploadError(f"archive member {shown!r} is a hard link")
                if member.ischr() or member.isblk():
                    raise UploadError(f"archive member {shown!r} is a device file")
                if member.isfifo():
                    raise UploadError(f"archive member {shown!r} is a FIFO")
                if not member.isreg() or member.issparse():
                    raise UploadError(f"archive member {shown!r} is not a regular file")
                if member.size > limits.file_bytes:
                    raise UploadError(
                        f"archive member {shown!r} is over the "
                        f"{_mb(limits.file_bytes)} limit for one file"
                    )
                contents = archive.extractfile(member)
                assert contents is not None  # a regular file always has contents
                yield _Entry(parts, contents, bool(member.mode & 0o111))
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile, OSError) as error:
        raise UploadError(f"{filename!r} is not a valid tar archive: {_one_line(error)}") from None


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return _CONTROL.sub("?", text)[:200]


def unpack(
    data: bytes, filename: str, into: Path, limits: UploadLimits = UploadLimits()
) -> list[str]:
    """Write the upload ``data`` (named ``filename`` by its sender) under ``into`` and return
    the relative paths of the files written, sorted.

    ``into`` must not exist yet or be an empty folder; it is made 0755. A single source
    file keeps its (checked) name; an archive is unpacked. On UploadError nothing of the
    upload is left in ``into``.
    """
    name = os.path.basename(filename.replace("\\", "/")) if filename else ""
    if not name:
        raise UploadError("the upload has no file name")
    checked_parts(name, limits, "upload")
    if len(data) > limits.upload_bytes:
        raise UploadError(
            f"the upload is {_mb(len(data))}, over the {_mb(limits.upload_bytes)} limit"
        )
    if not is_archive(name):
        _refuse_binary(data, name)
        return _write(into, limits, iter([_Entry([name], io.BytesIO(data))]), name)
    entries = _zip_entries if name.lower().endswith(".zip") else _tgz_entries
    return _write(into, limits, entries(data, name, limits), name)


def unpack_tar(data: bytes, into: Path, limits: UploadLimits, what: str) -> list[str]:
    """:func:`unpack` for an uncompressed tar archive ``data`` that is not an upload (what
    a sandboxed build hands back, called ``what`` in messages): the same checks and caps."""
    return _write(into, limits, _tar_entries(io.BytesIO(data), what, limits), what)


def _write(into: Path, limits: UploadLimits, entries: Iterator[_Entry], name: str) -> list[str]:
    made = not into.exists()
    into.mkdir(mode=0o755, exist_ok=True)
    if any(into.iterdir()):
        raise ValueError(f"{into} is not empty")
    into.chmod(0o755)
    writer = _Writer(into, limits)
    try:
        for entry in entries:
            writer.add(entry)
        if not writer.files:
            raise UploadError(f"{name!r} holds no files")
    except BaseException:
        writer.close()
        _clear(into, made)
        raise
    writer.close()
    return sorted(writer.files)


def _refuse_binary(data: bytes, name: str) -> None:
    """A single uploaded file is source code: text, not an archive or a program."""
    if data.startswith((*ZIP_MAGICS, GZIP_MAGIC)):
        raise UploadError(f"{name!r} is an archive: name it .zip, .tar.gz or .tgz")
    if b"\x00" in data:
        raise UploadError(f"{name!r} is not a source file (it holds NUL bytes)")
    if not data.strip():
        raise UploadError(f"{name!r} is empty")


def _clear(into: Path, made: bool) -> None:
    if made:
        shutil.rmtree(into, ignore_errors=True)
        return
    for child in into.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)
