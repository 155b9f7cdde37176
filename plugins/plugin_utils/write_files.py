# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write a list of files on the controller in one step: the logic of the ``gpufabric.cluster.write_files`` action.

Each file is ``{path, content, mode, volatile}``. A file is rewritten only when its content or mode differs
(atomically: a temporary file in the same directory, then a rename), so a second run with the same input changes
nothing; text that ``volatile`` (a regular expression) matches, such as a report's generation time, is left out of
that comparison, so a file that differs from its content only there is left as it is. The
directory of each file is created when it is missing and, with ``directory_mode``, given that mode. In check
mode nothing is touched and the result says what would change; with ``diff`` the result carries a before/after
pair per changed file (and one per changed mode), as Ansible's ``--diff`` prints them.

Symbolic links are not followed where the task writes: a link at a file's path is refused, and so is a link as
the file's own directory (its last component) unless ``follow_directory_links`` allows it; links further up the
path (``/var -> /private/var``, a home directory on a link) are followed as usual. Every directory is opened once
with ``O_NOFOLLOW`` and every file is read, written and chmodded relative to that descriptor, with ``O_NOFOLLOW``
again, so a link swapped in after the checks is refused too, and a mode is never set through a link. The
"before" of a diff is only ever the content of the regular file the task replaces.

A write that was killed leaves its temporary file, ``.<name>.<8 random characters>``, beside the file. The next
call that writes that file (outside check mode) removes such temporaries of the same file when they are regular
files of the same owner not modified for :data:`STALE_AFTER` seconds; a younger one may be a concurrent writer's
(two runs writing one report directory) and is left alone, and any other file (``.report.md.swp``) is kept.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import re
import secrets
import stat
import time
import typing as t

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments

DEFAULT_MODE = 0o644
# A temporary file older than this (by its modification time) is litter of a killed write, not a write under way.
STALE_AFTER = 300
# The random part of a temporary file's name: 8 characters of tempfile.mkstemp's alphabet, as the temporaries of
# earlier releases (written with mkstemp) have, so that their litter is recognised too.
TEMP_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789_"
TEMP_RANDOM_LENGTH = 8
_LINK_ERRNOS = (errno.ELOOP, errno.EMLINK)


class WriteFilesError(ValueError):
    """An input that cannot be written: a wrong type, a duplicate path, a path that is a directory or a link."""


@dataclasses.dataclass
class _Directory:
    """A directory of the files: its descriptor (``None`` while it does not exist) and how it was found."""

    path: str
    fd: int | None = None
    mode: int | None = None
    linked: bool = False


def parse_mode(name: str, value: t.Any) -> int:
    """``value`` as permission bits: an octal string (``"0644"``, ``"644"``) or an int (``0o644``, YAML ``0644``)."""
    if isinstance(value, bool):
        raise arguments.ArgumentError(f"{name} must be an octal mode such as '0644', got {value!r}")
    if isinstance(value, int):
        mode = value
    elif isinstance(value, str) and value.strip():
        digits = value.strip()
        digits = digits[2:] if digits[:2] in ("0o", "0O") else digits
        if not digits or any(char not in "01234567" for char in digits):
            raise arguments.ArgumentError(f"{name} must be an octal mode such as '0644', got {value!r}")
        mode = int(digits, 8)
    else:
        raise arguments.ArgumentError(f"{name} must be an octal mode such as '0644', got {value!r}")
    if not 0 <= mode <= 0o7777:
        raise arguments.ArgumentError(f"{name} must be an octal mode between 0000 and 7777, got {value!r}")
    return mode


def parse_volatile(name: str, value: t.Any) -> re.Pattern:
    """The compiled pattern of a file's ``volatile`` text, which must not match the empty string."""
    text = arguments.text(name, value)
    try:
        pattern = re.compile(text.encode("utf-8", errors="surrogateescape"))
    except (re.error, UnicodeEncodeError) as exc:
        raise arguments.ArgumentError(f"{name} {text!r} is not a regular expression ({exc})") from None
    if pattern.fullmatch(b""):
        raise arguments.ArgumentError(f"{name} {text!r} matches the empty string, which would hide every change")
    return pattern


def same_but_volatile(before: bytes, after: bytes, volatile: re.Pattern | None) -> bool:
    """Whether ``before`` and ``after`` are equal once every match of ``volatile`` is left out of both."""
    if volatile is None:
        return before == after
    return volatile.sub(b"", before) == volatile.sub(b"", after)


def parse_files(files: t.Any) -> list[dict]:
    """The checked list of ``{path, data, mode, volatile}`` (absolute normalised path, UTF-8 content, int mode,
    compiled bytes pattern or None)."""
    checked = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(arguments.sequence("files", files)):
        where = f"files[{index}]"
        entry = arguments.mapping(where, entry)
        unknown = sorted(str(key) for key in entry if key not in ("path", "content", "mode", "volatile"))
        if unknown:
            raise arguments.ArgumentError(f"{where} has unknown key(s) {', '.join(unknown)} "
                                          "(path, content, mode, volatile)")
        if "path" not in entry or "content" not in entry:
            raise arguments.ArgumentError(f"{where} needs path and content")
        path = arguments.text(f"{where}.path", entry["path"])
        if "\x00" in path:
            raise arguments.ArgumentError(f"{where}.path must not contain a NUL character")
        path = os.path.normpath(os.path.abspath(os.path.expanduser(path)))
        content = arguments.text(f"{where}.content", entry["content"], allow_empty=True)
        try:
            data = content.encode("utf-8", errors="surrogateescape")
        except UnicodeEncodeError as exc:
            raise arguments.ArgumentError(f"{where}.content cannot be written as UTF-8: {exc.reason}") from None
        mode = parse_mode(f"{where}.mode", entry.get("mode", DEFAULT_MODE))
        volatile = arguments.optional(parse_volatile, f"{where}.volatile", entry.get("volatile"))
        if path in seen:
            raise WriteFilesError(f"{where}.path {path} is also files[{seen[path]}].path")
        seen[path] = index
        checked.append({"path": path, "data": data, "mode": mode, "volatile": volatile})
    # A path cannot be a file to write and, at the same time, the directory (or a directory above) of another.
    for entry in checked:
        for other, parent in ((other, os.path.dirname(other["path"])) for other in checked):
            if parent == entry["path"] or parent.startswith(entry["path"].rstrip(os.sep) + os.sep):
                raise WriteFilesError(f"{entry['path']} is a file to write and a directory of {other['path']}")
    return checked


@contextlib.contextmanager
def _naming(path: str) -> t.Iterator[None]:
    """Turn an operating system error about ``path`` into a :class:`WriteFilesError` that names the whole path."""
    try:
        yield
    except WriteFilesError:
        raise
    except OSError as exc:
        if exc.errno in _LINK_ERRNOS:
            raise WriteFilesError(f"{path}: too many levels of symbolic links") from None
        raise WriteFilesError(f"{path}: {exc.strerror or exc}") from None


def _link_refused(path: str, directory: bool) -> WriteFilesError:
    """The refusal of a symbolic link at ``path``."""
    if directory:
        return WriteFilesError(f"{path} is a symbolic link; write_files does not follow links "
                               "(follow_directory_links allows a link as the directory of the files)")
    return WriteFilesError(f"{path} is a symbolic link; write_files does not follow links")


def _check_creatable(path: str) -> None:
    """Refuse a missing directory ``path`` that cannot be created: its nearest existing ancestor is no directory."""
    ancestor = path
    while os.path.dirname(ancestor) != ancestor:
        ancestor = os.path.dirname(ancestor)
        try:
            info = os.stat(ancestor)  # the directories above the files' own are followed when they are links
        except (FileNotFoundError, NotADirectoryError):
            if os.path.islink(ancestor):
                raise WriteFilesError(f"{ancestor} is a symbolic link to a missing path") from None
            continue
        if not stat.S_ISDIR(info.st_mode):
            raise WriteFilesError(f"{ancestor} exists and is not a directory")
        return


def _open_directory(path: str, follow: bool) -> int:
    """A descriptor of the directory ``path``; its last component may be a link only when ``follow``."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        return os.open(path, flags)
    except OSError as exc:
        if not follow and (exc.errno in _LINK_ERRNOS or os.path.islink(path)):
            raise _link_refused(path, directory=True) from None
        if exc.errno == errno.ENOTDIR:
            raise WriteFilesError(f"{path} exists and is not a directory") from None
        raise


def _inspect_directory(path: str, follow: bool) -> _Directory:
    """``path`` as found: missing (and creatable), a directory (opened), or a link allowed by ``follow``."""
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        _check_creatable(path)
        return _Directory(path)
    linked = stat.S_ISLNK(info.st_mode)
    if linked:
        if not follow:
            raise _link_refused(path, directory=True)
        try:
            info = os.stat(path)
        except FileNotFoundError:
            raise WriteFilesError(f"{path} is a symbolic link to a missing path") from None
    if not stat.S_ISDIR(info.st_mode):
        raise WriteFilesError(f"{path} exists and is not a directory")
    fd = _open_directory(path, follow)
    return _Directory(path, fd, stat.S_IMODE(os.fstat(fd).st_mode), linked)


def _open_file(directory: _Directory, name: str, path: str) -> int:
    """A read-only descriptor of the regular file ``name`` in ``directory``, never through a link."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=directory.fd)
    except OSError as exc:
        if exc.errno in _LINK_ERRNOS:
            raise _link_refused(path, directory=False) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise WriteFilesError(f"{path} exists and is not a regular file")
    return fd


def _read(directory: _Directory, name: str, path: str) -> tuple[bytes | None, int | None]:
    """The bytes and permission bits of the regular file ``name``, ``(None, None)`` when it does not exist."""
    if not name:
        raise WriteFilesError(f"{path} is a directory, not a file")
    try:
        info = os.stat(name, dir_fd=directory.fd, follow_symlinks=False)
    except FileNotFoundError:
        return None, None
    if stat.S_ISLNK(info.st_mode):
        raise _link_refused(path, directory=False)
    if stat.S_ISDIR(info.st_mode):
        raise WriteFilesError(f"{path} is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise WriteFilesError(f"{path} exists and is not a regular file")
    with os.fdopen(_open_file(directory, name, path), "rb") as handle:
        return handle.read(), stat.S_IMODE(os.fstat(handle.fileno()).st_mode)


def _check_name_length(directory: _Directory, name: str, path: str) -> None:
    """Refuse a file name too long for its temporary file's name, before anything is written."""
    name_max = os.fpathconf(directory.fd, "PC_NAME_MAX") if directory.fd is not None else 255
    length = len(os.fsencode(name))
    if length + TEMP_RANDOM_LENGTH + 2 > name_max:
        raise WriteFilesError(f"{path}: the file name is too long ({length} bytes; with its temporary file's "
                              f"prefix and suffix at most {name_max - TEMP_RANDOM_LENGTH - 2})")


def _temporary_name(name: str) -> str:
    """A name for the temporary file of ``name``: ``.<name>.<8 random characters>``."""
    return f".{name}.{''.join(secrets.choice(TEMP_ALPHABET) for _position in range(TEMP_RANDOM_LENGTH))}"


def _write_atomically(directory: _Directory, name: str, data: bytes, mode: int) -> None:
    """Replace ``name`` by ``data`` with ``mode``: a temporary file beside it, then a rename."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _attempt in range(100):
        temp = _temporary_name(name)
        try:
            fd = os.open(temp, flags, 0o600, dir_fd=directory.fd)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(errno.EEXIST, "no unused name for a temporary file")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(temp, name, src_dir_fd=directory.fd, dst_dir_fd=directory.fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=directory.fd)
        raise


def _chmod(directory: _Directory, name: str, path: str, mode: int) -> None:
    """Give the regular file ``name`` ``mode``, through a descriptor of the file itself (never through a link)."""
    fd = _open_file(directory, name, path)
    try:
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def stale_temporaries(names: t.Iterable[str], target: str) -> list[str]:
    """The names among ``names`` that have the form of a temporary file of ``target`` (``.<target>.<random>``)."""
    pattern = re.compile(re.escape(f".{target}.") + f"[{re.escape(TEMP_ALPHABET)}]{{{TEMP_RANDOM_LENGTH}}}")
    return [name for name in names if pattern.fullmatch(name)]


def _remove_stale_temporaries(directory: _Directory, names: list[str], targets: list[str], now: float) -> list[str]:
    """Remove the temporaries of ``targets`` that a killed write left in ``directory``; return their paths."""
    removed = []
    owner = os.geteuid()
    for target in targets:
        for name in stale_temporaries(names, target):
            try:
                info = os.stat(name, dir_fd=directory.fd, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if not stat.S_ISREG(info.st_mode) or info.st_uid != owner or now - info.st_mtime < STALE_AFTER:
                continue
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=directory.fd)
                removed.append(os.path.join(directory.path, name))
    return removed


def _text(data: bytes) -> str:
    """``data`` as text for a diff (undecodable bytes replaced)."""
    return data.decode("utf-8", errors="replace")


def _mode_diff(path: str, before: int, after: int) -> dict:
    """The before/after pair of a changed mode."""
    return {"before_header": f"{path} (mode)", "after_header": f"{path} (mode)",
            "before": f"{before:04o}\n", "after": f"{after:04o}\n"}


def write_files(files: t.Any, directory_mode: t.Any = None, check_mode: bool = False,
                diff: bool = False, follow_directory_links: t.Any = False) -> dict:
    """Write ``files``; return ``{changed, files: [{path, state}], directories: [{path, state}], diff?}``.

    ``state`` is ``created``, ``updated`` (content, and mode when it differed too), ``mode`` (only the mode
    changed) or ``unchanged``; a directory's is ``created``, ``mode`` or ``unchanged`` (a directory that is a link,
    allowed by ``follow_directory_links``, keeps its mode: ``directory_mode`` is never set through a link). The
    paths of the stale temporary files removed, if any, are in ``removed_temporaries``. Every input and every path
    is checked before anything is written.
    """
    entries = parse_files(files)
    dir_mode = arguments.optional(parse_mode, "directory_mode", directory_mode)
    check_mode = arguments.boolean("check_mode", check_mode)
    diff = arguments.boolean("diff", diff)
    follow = arguments.boolean("follow_directory_links", follow_directory_links)

    with contextlib.ExitStack() as stack:
        # Look at every directory and every target before writing any, so that a bad path fails the task with
        # nothing written.
        directories: dict[str, _Directory] = {}
        for entry in entries:
            parent, name = os.path.split(entry["path"])
            if parent not in directories:
                with _naming(parent):
                    directories[parent] = _inspect_directory(parent, follow)
                if directories[parent].fd is not None:
                    stack.callback(os.close, directories[parent].fd)
            directory = directories[parent]
            entry["name"] = name
            entry["before"], entry["before_mode"] = (None, None)
            with _naming(entry["path"]):
                if directory.fd is not None:
                    entry["before"], entry["before_mode"] = _read(directory, name, entry["path"])
                _check_name_length(directory, name, entry["path"])

        diffs: list[dict] = []
        results: list[dict] = []
        directory_results: list[dict] = []
        for directory in directories.values():
            if directory.fd is None:
                state = "created"
                if not check_mode:
                    with _naming(directory.path):
                        os.makedirs(directory.path, exist_ok=True)
                        directory.fd = _open_directory(directory.path, follow=False)
                        stack.callback(os.close, directory.fd)
                        if dir_mode is not None:
                            os.fchmod(directory.fd, dir_mode)
            elif dir_mode is not None and not directory.linked and directory.mode != dir_mode:
                state = "mode"
                if not check_mode:
                    with _naming(directory.path):
                        os.fchmod(directory.fd, dir_mode)
                if diff:
                    diffs.append(_mode_diff(directory.path, directory.mode, dir_mode))
            else:
                state = "unchanged"
            directory_results.append({"path": directory.path, "state": state})

        for entry in entries:
            data = entry["data"]
            before, before_mode = entry["before"], entry["before_mode"]
            directory = directories[os.path.dirname(entry["path"])]
            if before is None:
                state = "created"
            elif not same_but_volatile(before, data, entry["volatile"]):
                state = "updated"
            elif before_mode != entry["mode"]:
                state = "mode"
            else:
                state = "unchanged"
            if not check_mode:
                with _naming(entry["path"]):
                    if state in ("created", "updated"):
                        _write_atomically(directory, entry["name"], data, entry["mode"])
                    elif state == "mode":
                        _chmod(directory, entry["name"], entry["path"], entry["mode"])
            if diff and state in ("created", "updated"):
                diffs.append({"before_header": entry["path"], "after_header": entry["path"],
                              "before": "" if before is None else _text(before), "after": _text(data)})
            if diff and before_mode is not None and before_mode != entry["mode"]:
                diffs.append(_mode_diff(entry["path"], before_mode, entry["mode"]))
            results.append({"path": entry["path"], "state": state})

        removed: list[str] = []
        if not check_mode:
            now = time.time()
            for directory in directories.values():
                targets = [entry["name"] for entry in entries if os.path.dirname(entry["path"]) == directory.path]
                with _naming(directory.path):
                    removed += _remove_stale_temporaries(directory, os.listdir(directory.fd), targets, now)

    result: dict = {
        "changed": any(item["state"] != "unchanged" for item in results + directory_results),
        "files": results,
        "directories": directory_results,
    }
    if removed:
        result["removed_temporaries"] = removed
    if diff:
        result["diff"] = diffs
    return result
