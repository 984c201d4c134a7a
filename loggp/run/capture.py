"""Output of a point's processes captured to files of bounded size, never into memory.

A TailFile keeps the last bytes written to it, at most MAX_STREAM_BYTES per stream: it
writes halves of the cap in turn (PATH, then PATH.old once PATH is full) and, when closed,
joins the two into PATH with a first line saying how much was dropped.  A process that
writes gigabytes (`exec cat /dev/zero`) leaves at most the cap on disk and the reader never
holds more than one chunk.  A write the file system refuses (a full disk) loses that chunk,
counted, and never stops the copy: whoever drains a pipe into a TailFile keeps draining it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

MAX_STREAM_BYTES = 8 << 20  # per stream (stdout, stderr, a service's log); the tail is kept
CHUNK = 64 << 10
_DROPPED = b"[loggp: "  # the first line of a cut stream (dropped_note reads it)


class TailFile:
    """Bytes written to path, of which the last cap (at least cap/2) are kept."""

    def __init__(self, path: Path, cap: int = MAX_STREAM_BYTES) -> None:
        self.path = path
        self.old = path.with_name(path.name + ".old")
        self.half = max(1, cap // 2)
        self.cap = cap
        self.size = 0  # bytes in the current half
        self.dropped = 0  # bytes no longer kept (older than the cap)
        self.lost = 0  # bytes the file system refused
        self.error = ""
        self.old.unlink(missing_ok=True)
        self._fd = _create(path)

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            room = self.half - self.size
            if room <= 0:
                self._turn()
                continue
            chunk, view = view[:room], view[room:]
            try:
                while chunk:
                    n = os.write(self._fd, chunk)
                    chunk = chunk[n:]
                    self.size += n
            except OSError as e:  # a full disk: count the loss, keep draining
                self.lost += len(chunk)
                self.size += len(chunk)
                self.error = e.strerror or str(e)

    def _turn(self) -> None:
        """The current half becomes the old one; the old one's bytes are dropped."""
        os.close(self._fd)
        if self.old.exists():
            self.dropped += self.old.stat().st_size
        os.replace(self.path, self.old)
        self._fd = _create(self.path)
        self.size = 0

    def close(self) -> None:
        """Joins the halves into path, after a line naming what was dropped (if any)."""
        os.close(self._fd)
        if not self.old.exists() and not self.lost:
            return
        note = []
        if self.old.exists() or self.dropped:
            note.append(f"the first {self.dropped} bytes dropped: at most {self.cap} are kept")
        if self.lost:
            note.append(f"{self.lost} bytes lost: {self.error}")
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            with tmp.open("wb") as out:
                out.write(_DROPPED + "; ".join(note).encode() + b"]\n")
                for part in (self.old, self.path):
                    if part.exists():
                        with part.open("rb") as f:
                            shutil.copyfileobj(f, out, CHUNK)
            os.replace(tmp, self.path)
            self.old.unlink(missing_ok=True)
        except OSError:
            tmp.unlink(missing_ok=True)  # the halves stay as they are


def _create(path: Path) -> int:
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)


def dropped_note(path: Path) -> str | None:
    """What a TailFile's first line says was dropped from path, or None."""
    try:
        with path.open("rb") as f:
            first = f.readline(512)
    except OSError:
        return None
    if not first.startswith(_DROPPED):
        return None
    return first[len(_DROPPED) :].rstrip(b"]\n").decode(errors="replace")


def tail_text(path: Path, limit: int = CHUNK) -> str:
    """The last limit bytes of path as text ("" if it cannot be read)."""
    try:
        with path.open("rb") as f:
            f.seek(max(0, path.stat().st_size - limit))
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
