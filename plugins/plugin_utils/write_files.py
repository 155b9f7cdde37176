# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write a list of files on the controller in one step: the logic of the ``gpufabric.cluster.write_files`` action.

Each file is ``{path, content, mode}``. A file is rewritten only when its content or mode differs (atomically: a
temporary file in the same directory, then a rename), so a second run with the same input changes nothing. The
directory of each file is created when it is missing and, with ``directory_mode``, given that mode. In check
mode nothing is touched and the result says what would change; with ``diff`` the result carries a before/after
pair per changed file (and one per changed mode), as Ansible's ``--diff`` prints them.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import typing as t

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments

DEFAULT_MODE = 0o644


class WriteFilesError(ValueError):
    """An input that cannot be written: a wrong type, a duplicate path, a path that is a directory."""


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


def parse_files(files: t.Any) -> list[dict]:
    """The checked list of ``{path, content, mode}`` (absolute normalised path, text content, int mode)."""
    checked = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(arguments.sequence("files", files)):
        where = f"files[{index}]"
        entry = arguments.mapping(where, entry)
        unknown = sorted(str(key) for key in entry if key not in ("path", "content", "mode"))
        if unknown:
            raise arguments.ArgumentError(f"{where} has unknown key(s) {', '.join(unknown)} (path, content, mode)")
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
        if path in seen:
            raise WriteFilesError(f"{where}.path {path} is also files[{seen[path]}].path")
        seen[path] = index
        checked.append({"path": path, "data": data, "mode": mode})
    return checked


def _read(path: str) -> tuple[bytes | None, int | None]:
    """The bytes and permission bits of ``path``, ``(None, None)`` when it does not exist."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None, None
    if stat.S_ISDIR(info.st_mode):
        raise WriteFilesError(f"{path} is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise WriteFilesError(f"{path} exists and is not a regular file")
    with open(path, "rb") as handle:
        return handle.read(), stat.S_IMODE(info.st_mode)


def _write_atomically(path: str, data: bytes, mode: int) -> None:
    """Replace ``path`` by ``data`` with ``mode``: a temporary file beside it, then a rename."""
    fd, temp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


def _directory(path: str, mode: int | None, check_mode: bool) -> tuple[str, int | None]:
    """Make sure ``path`` is a directory (with ``mode`` when given); what changed and the mode it had."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if not check_mode:
            os.makedirs(path, exist_ok=True)
            if mode is not None:
                os.chmod(path, mode)
        return "created", None
    if not stat.S_ISDIR(info.st_mode):
        raise WriteFilesError(f"{path} exists and is not a directory")
    before = stat.S_IMODE(info.st_mode)
    if mode is not None and before != mode:
        if not check_mode:
            os.chmod(path, mode)
        return "mode", before
    return "unchanged", before


def _text(data: bytes) -> str:
    """``data`` as text for a diff (undecodable bytes replaced)."""
    return data.decode("utf-8", errors="replace")


def write_files(files: t.Any, directory_mode: t.Any = None, check_mode: bool = False,
                diff: bool = False) -> dict:
    """Write ``files``; return ``{changed, files: [{path, state}], directories: [{path, state}], diff?}``.

    ``state`` is ``created``, ``updated`` (content, and mode when it differed too), ``mode`` (only the mode
    changed) or ``unchanged``; a directory's is ``created``, ``mode`` or ``unchanged``. Every input is checked
    before anything is written.
    """
    entries = parse_files(files)
    dir_mode = arguments.optional(parse_mode, "directory_mode", directory_mode)
    check_mode = arguments.boolean("check_mode", check_mode)
    diff = arguments.boolean("diff", diff)

    directories: list[dict] = []
    # Look at every target before writing any, so that a bad path fails the task with nothing written.
    for entry in entries:
        parent = os.path.dirname(entry["path"])
        if os.path.isdir(parent):
            entry["before"], entry["before_mode"] = _read(entry["path"])
        elif os.path.exists(parent):
            raise WriteFilesError(f"{parent} exists and is not a directory")
        else:
            entry["before"], entry["before_mode"] = None, None

    diffs: list[dict] = []
    results: list[dict] = []
    for parent in dict.fromkeys(os.path.dirname(entry["path"]) for entry in entries):
        state, before_mode = _directory(parent, dir_mode, check_mode)
        directories.append({"path": parent, "state": state})
        if state == "mode" and diff:
            diffs.append({"before_header": f"{parent} (mode)", "after_header": f"{parent} (mode)",
                          "before": f"{before_mode:04o}\n", "after": f"{dir_mode:04o}\n"})
    for entry in entries:
        data = entry["data"]
        before, before_mode = entry["before"], entry["before_mode"]
        if before is None:
            state = "created"
        elif before != data:
            state = "updated"
        elif before_mode != entry["mode"]:
            state = "mode"
        else:
            state = "unchanged"
        if state in ("created", "updated") and not check_mode:
            _write_atomically(entry["path"], data, entry["mode"])
        elif state == "mode" and not check_mode:
            os.chmod(entry["path"], entry["mode"])
        if diff and state in ("created", "updated"):
            diffs.append({"before_header": entry["path"], "after_header": entry["path"],
                          "before": "" if before is None else _text(before), "after": _text(data)})
        if diff and before_mode is not None and before_mode != entry["mode"]:
            diffs.append({"before_header": f"{entry['path']} (mode)", "after_header": f"{entry['path']} (mode)",
                          "before": f"{before_mode:04o}\n", "after": f"{entry['mode']:04o}\n"})
        results.append({"path": entry["path"], "state": state})

    result: dict = {
        "changed": any(item["state"] != "unchanged" for item in results + directories),
        "files": results,
        "directories": directories,
    }
    if diff:
        result["diff"] = diffs
    return result
