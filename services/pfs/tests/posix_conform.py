#!/usr/bin/env python3
"""posix_conform: POSIX file-system semantics checked in a directory, for the PFS mount
beside a local file system (services/pfs/README.md, docs/benchmarks.md).

    posix_conform.py DIR [--json]

Runs as root in DIR (it makes and removes DIR/conform), and as a second user (nobody,
65534, in a forked child) where permissions are the point.  The checks follow pjdfstest's
areas (open, mkdir, rmdir, unlink, link, symlink, rename, chmod, chown, truncate,
utimensat, mkfifo/mknod, posix_fallocate) plus times of reads and writes, user.*
attributes, statfs and paths longer than PATH_MAX: success semantics, the errno of each
refusal, and the times each call must update.  Times are checked against times set in
the past first; a ctime check waits one clock tick of the local disk.  Prints one line
per failure, then "posix_conform checks: N of M held"; --json prints
{"passed": N, "failed": [names]} instead.  Exit 0
when nothing failed.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path

NOBODY = 65534
OLD = 1_000_000_000 * 10**9  # a time in the past that checks compare against
TICK = 0.02  # longer than a clock tick of the local disk's timestamps (4 ms at HZ=250)


class Checks:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.passed = 0
        self.failed: list[str] = []
        self.n = 0

    def check(self, name: str, ok: bool, detail: object = "") -> None:
        if ok:
            self.passed += 1
        else:
            self.failed.append(f"{name}: {detail}")

    def path(self, tag: str) -> Path:
        """A fresh name."""
        self.n += 1
        return self.root / f"{tag}{self.n}"


def err_of(fn: Callable[[], object]) -> int:
    try:
        fn()
    except OSError as e:
        return e.errno or -1
    return 0


def as_nobody(fn: Callable[[], object]) -> int:
    """fn in a child as uid and gid 65534 with no other groups; its errno (0: done)."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.setgroups([])
            os.setresgid(NOBODY, NOBODY, NOBODY)
            os.setresuid(NOBODY, NOBODY, NOBODY)
            fn()
        except OSError as e:
            code = e.errno or 255
        except BaseException:
            code = 254
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def old(p: Path) -> None:
    """Atime and mtime far in the past, so any update shows."""
    os.utime(p, ns=(OLD, OLD), follow_symlinks=False)


def times(p: Path) -> tuple[int, int, int]:
    st = os.lstat(p)
    return st.st_atime_ns, st.st_mtime_ns, st.st_ctime_ns


def file(c: Checks, tag: str, data: bytes = b"", mode: int = 0o644) -> Path:
    p = c.path(tag)
    p.write_bytes(data)
    p.chmod(mode)
    return p


def sticky(c: Checks, tag: str) -> Path:
    """A fresh directory of root's that anyone may write in (1777), as /tmp."""
    p = c.path(tag)
    p.mkdir()
    p.chmod(0o1777)
    return p


def changed(
    c: Checks,
    name: str,
    p: Path,
    op: Callable[[], object],
    m: bool,
    ct: bool,
    after: Path | None = None,
) -> None:
    """After op, the mtime of p (at after, if op moves it) is newer than OLD iff m, its
    ctime newer than before iff ct.  A local disk stamps ctime from a clock that moves
    in ticks (ext4: the kernel's jiffies), so a tick passes before op."""
    old(p)
    ctime = os.lstat(p).st_ctime_ns
    time.sleep(TICK)
    op()
    _, mt, ctime2 = times(after or p)
    c.check(f"{name}: mtime", (mt > OLD) == m, (mt, m))
    c.check(f"{name}: ctime", (ctime2 > ctime) == ct, (ctime, ctime2))


def open_checks(c: Checks) -> None:
    p = c.path("open")
    os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o640))
    c.check(
        "open: O_CREAT mode", stat.S_IMODE(os.stat(p).st_mode) == 0o640, oct(os.stat(p).st_mode)
    )
    c.check(
        "open: O_CREAT|O_EXCL on existing",
        err_of(lambda: os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY)) == errno.EEXIST,
    )
    c.check("open: missing", err_of(lambda: os.open(c.root / "nope", os.O_RDONLY)) == errno.ENOENT)
    c.check(
        "open: file as directory", err_of(lambda: os.open(p / "x", os.O_RDONLY)) == errno.ENOTDIR
    )
    c.check(
        "open: directory for writing", err_of(lambda: os.open(c.root, os.O_WRONLY)) == errno.EISDIR
    )
    c.check(
        "open: name of 256 bytes",
        err_of(lambda: os.open(c.root / ("x" * 256), os.O_CREAT | os.O_WRONLY))
        == errno.ENAMETOOLONG,
    )
    ln = c.path("openln")
    os.symlink(p.name, ln)
    c.check(
        "open: O_NOFOLLOW on a link",
        err_of(lambda: os.open(ln, os.O_RDONLY | os.O_NOFOLLOW)) == errno.ELOOP,
    )
    d = c.path("opendir")
    d.mkdir()
    old(d)
    os.close(os.open(d / "new", os.O_CREAT | os.O_WRONLY, 0o644))
    _, mt, _ = times(d)
    c.check("open: O_CREAT updates the directory's mtime", mt > OLD, mt)
    f = file(c, "trunc", b"12345")
    changed(
        c, "open: O_TRUNC", f, lambda: os.close(os.open(f, os.O_WRONLY | os.O_TRUNC)), True, True
    )
    c.check("open: O_TRUNC empties", os.stat(f).st_size == 0)
    f = file(c, "keep", b"12345")
    os.close(os.open(f, os.O_CREAT | os.O_WRONLY, 0o600))
    c.check(
        "open: O_CREAT of an existing file keeps it",
        os.stat(f).st_size == 5 and stat.S_IMODE(os.stat(f).st_mode) == 0o644,
    )
    f = file(c, "append", b"abc")
    fd = os.open(f, os.O_WRONLY | os.O_APPEND)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, b"def")
    os.close(fd)
    c.check("open: O_APPEND writes at the end", f.read_bytes() == b"abcdef", f.read_bytes())
    ro = file(c, "ro", b"x", 0o644)
    c.check(
        "open: nobody writes a 0644 file of root",
        as_nobody(lambda: os.open(ro, os.O_WRONLY)) == errno.EACCES,
    )
    c.check(
        "open: nobody reads a 0644 file of root",
        as_nobody(lambda: os.close(os.open(ro, os.O_RDONLY))) == 0,
    )
    dd = c.path("noexec")
    dd.mkdir(mode=0o700)
    (dd / "f").write_bytes(b"")
    c.check(
        "open: nobody through a 0700 directory",
        as_nobody(lambda: os.open(dd / "f", os.O_RDONLY)) == errno.EACCES,
    )


def mkdir_checks(c: Checks) -> None:
    d = c.path("mkdir")
    os.mkdir(d, 0o751)
    st = os.stat(d)
    c.check("mkdir: mode", stat.S_IMODE(st.st_mode) == 0o751, oct(st.st_mode))
    c.check("mkdir: nlink 2", st.st_nlink == 2, st.st_nlink)
    c.check("mkdir: existing", err_of(lambda: os.mkdir(d)) == errno.EEXIST)
    c.check(
        "mkdir: missing parent", err_of(lambda: os.mkdir(c.root / "nope" / "x")) == errno.ENOENT
    )
    f = file(c, "mkf")
    c.check("mkdir: file as parent", err_of(lambda: os.mkdir(f / "x")) == errno.ENOTDIR)
    c.check(
        "mkdir: name of 256 bytes",
        err_of(lambda: os.mkdir(c.root / ("y" * 256))) == errno.ENAMETOOLONG,
    )
    old(d)
    os.mkdir(d / "sub")
    st = os.stat(d)
    c.check("mkdir: parent's nlink grows", st.st_nlink == 3, st.st_nlink)
    c.check("mkdir: parent's mtime", st.st_mtime_ns > OLD)
    c.check(
        "mkdir: nobody in a 0755 directory of root",
        as_nobody(lambda: os.mkdir(d / "n")) == errno.EACCES,
    )
    pub = sticky(c, "pub")
    c.check("mkdir: nobody in a 1777 directory", as_nobody(lambda: os.mkdir(pub / "n")) == 0)
    st = os.stat(pub / "n")
    c.check(
        "mkdir: owner is the caller",
        (st.st_uid, st.st_gid) == (NOBODY, NOBODY),
        (st.st_uid, st.st_gid),
    )
    sg = c.path("setgid")
    sg.mkdir()
    os.chown(sg, 0, 1234)
    sg.chmod(0o2777)
    os.mkdir(sg / "in")
    st = os.stat(sg / "in")
    c.check(
        "mkdir: a set-group-ID directory's group and bit",
        st.st_gid == 1234 and st.st_mode & stat.S_ISGID,
        (st.st_gid, oct(st.st_mode)),
    )


def rmdir_checks(c: Checks) -> None:
    d = c.path("rmdir")
    d.mkdir()
    (d / "sub").mkdir()
    c.check("rmdir: not empty", err_of(lambda: os.rmdir(d)) in (errno.ENOTEMPTY, errno.EEXIST))
    old(d)
    os.rmdir(d / "sub")
    st = os.stat(d)
    c.check("rmdir: parent's nlink shrinks", st.st_nlink == 2, st.st_nlink)
    c.check("rmdir: parent's mtime", st.st_mtime_ns > OLD)
    c.check("rmdir: missing", err_of(lambda: os.rmdir(d / "sub")) == errno.ENOENT)
    f = file(c, "rmf")
    c.check("rmdir: a file", err_of(lambda: os.rmdir(f)) == errno.ENOTDIR)
    c.check("rmdir: '.'", err_of(lambda: os.rmdir(f"{d}/.")) == errno.EINVAL)  # pathlib drops "."
    pub = sticky(c, "sticky")
    (pub / "roots").mkdir()
    c.check(
        "rmdir: nobody, root's directory in a sticky one",
        as_nobody(lambda: os.rmdir(pub / "roots")) in (errno.EPERM, errno.EACCES),
    )
    os.rmdir(d)
    c.check("rmdir: gone", not d.exists())


def unlink_checks(c: Checks) -> None:
    f = file(c, "unl", b"x")
    os.link(f, c.root / f"{f.name}.2")
    changed(c, "unlink: the other name", c.root / f"{f.name}.2", lambda: os.unlink(f), False, True)
    c.check("unlink: nlink shrinks", os.stat(c.root / f"{f.name}.2").st_nlink == 1)
    c.check("unlink: missing", err_of(lambda: os.unlink(f)) == errno.ENOENT)
    d = c.path("unld")
    d.mkdir()
    c.check("unlink: a directory", err_of(lambda: os.unlink(d)) in (errno.EISDIR, errno.EPERM))
    old(d)
    (d / "f").write_bytes(b"")
    old(d)
    os.unlink(d / "f")
    c.check("unlink: parent's mtime", os.stat(d).st_mtime_ns > OLD)
    t = file(c, "target")
    ln = c.path("unlln")
    os.symlink(t.name, ln)
    os.unlink(ln)
    c.check("unlink: a link, not its target", not os.path.lexists(ln) and t.exists())
    pub = sticky(c, "sticky")
    (pub / "roots").write_bytes(b"")
    c.check(
        "unlink: nobody, root's file in a sticky directory",
        as_nobody(lambda: os.unlink(pub / "roots")) in (errno.EPERM, errno.EACCES),
    )
    fifo = c.path("unlfifo")
    os.mkfifo(fifo)
    os.unlink(fifo)
    c.check("unlink: a FIFO", not os.path.lexists(fifo))


def link_checks(c: Checks) -> None:
    f = file(c, "link", b"data")
    g = c.path("link")
    changed(c, "link: the file", f, lambda: os.link(f, g), False, True)
    a, b = os.stat(f), os.stat(g)
    c.check(
        "link: one inode",
        a.st_ino == b.st_ino and a.st_nlink == 2,
        (a.st_ino, b.st_ino, a.st_nlink),
    )
    c.check("link: existing", err_of(lambda: os.link(f, g)) == errno.EEXIST)
    c.check("link: missing", err_of(lambda: os.link(c.root / "nope", c.path("x"))) == errno.ENOENT)
    d = c.path("linkd")
    d.mkdir(mode=0o755)
    c.check("link: a directory", err_of(lambda: os.link(d, c.path("x"))) == errno.EPERM)
    ln = c.path("linkln")
    os.symlink("nowhere", ln)
    h = c.path("linkh")
    os.link(ln, h, follow_symlinks=False)
    c.check("link: of a link is a link", os.readlink(h) == "nowhere")
    own = file(c, "linkown")  # its own file: protected_hardlinks refuses others' (EPERM)
    os.chown(own, NOBODY, NOBODY)
    c.check(
        "link: nobody in a 0755 directory of root",
        as_nobody(lambda: os.link(own, d / "x")) == errno.EACCES,
    )


def symlink_checks(c: Checks) -> None:
    ln = c.path("sym")
    d = c.path("symdir")
    d.mkdir()
    old(d)
    os.symlink("some/where", d / "l")
    c.check("symlink: parent's mtime", os.stat(d).st_mtime_ns > OLD)
    os.symlink("some/where", ln)
    st = os.lstat(ln)
    c.check(
        "symlink: lstat",
        stat.S_ISLNK(st.st_mode) and st.st_size == len("some/where"),
        oct(st.st_mode),
    )
    c.check("symlink: readlink", os.readlink(ln) == "some/where")
    c.check("symlink: stat of a dangling one", err_of(lambda: os.stat(ln)) == errno.ENOENT)
    c.check("symlink: existing", err_of(lambda: os.symlink("x", ln)) == errno.EEXIST)
    a, b = c.path("loopa"), c.path("loopb")
    os.symlink(b.name, a)
    os.symlink(a.name, b)
    c.check("symlink: a loop", err_of(lambda: os.stat(a)) == errno.ELOOP)
    c.check(
        "symlink: target of 4096 bytes",
        err_of(lambda: os.symlink("t" * 4096, c.path("long"))) == errno.ENAMETOOLONG,
    )
    t = c.path("symt")
    t.mkdir()
    (t / "f").write_bytes(b"in")
    rel = c.path("symrel")
    os.symlink(f"../{c.root.name}/{t.name}", rel)
    c.check("symlink: '..' in a target", (rel / "f").read_bytes() == b"in")
    absl = c.path("symabs")
    os.symlink(str(t), absl)
    c.check("symlink: an absolute target", (absl / "f").read_bytes() == b"in")
    pub = sticky(c, "pub")
    c.check(
        "symlink: nobody's",
        as_nobody(lambda: os.symlink("x", pub / "l")) == 0 and os.lstat(pub / "l").st_uid == NOBODY,
    )


def rename_checks(c: Checks) -> None:
    f = file(c, "ren", b"1")
    g = c.path("ren")
    changed(c, "rename: the file", f, lambda: os.rename(f, g), False, True, after=g)
    c.check("rename: moved", not f.exists() and g.read_bytes() == b"1")
    h = file(c, "ren", b"2")
    os.link(h, c.root / f"{h.name}.2")
    os.rename(g, h)
    c.check(
        "rename: over a file",
        h.read_bytes() == b"1" and os.stat(c.root / f"{h.name}.2").st_nlink == 1,
    )
    d1, d2 = c.path("rd"), c.path("rd")
    d1.mkdir()
    (d1 / "sub").mkdir()
    d2.mkdir()
    old(d1)
    old(d2)
    os.rename(d1 / "sub", d2 / "sub")
    c.check(
        "rename: a directory between parents, nlinks",
        os.stat(d1).st_nlink == 2 and os.stat(d2).st_nlink == 3,
        (os.stat(d1).st_nlink, os.stat(d2).st_nlink),
    )
    c.check(
        "rename: both parents' mtimes",
        os.stat(d1).st_mtime_ns > OLD and os.stat(d2).st_mtime_ns > OLD,
    )
    c.check(
        "rename: '..' of the moved directory",
        os.stat(d2 / "sub" / "..").st_ino == os.stat(d2).st_ino,
    )
    fx = file(c, "renf")
    c.check("rename: a file over a directory", err_of(lambda: os.rename(fx, d2)) == errno.EISDIR)
    c.check("rename: a directory over a file", err_of(lambda: os.rename(d1, fx)) == errno.ENOTDIR)
    c.check(
        "rename: over a full directory",
        err_of(lambda: os.rename(d1, d2)) in (errno.ENOTEMPTY, errno.EEXIST),
    )
    c.check(
        "rename: beneath itself", err_of(lambda: os.rename(d2, d2 / "sub" / "x")) == errno.EINVAL
    )
    os.rename(d1, d2 / "sub")
    c.check("rename: a directory over an empty one", not d1.exists() and (d2 / "sub").is_dir())
    a = file(c, "rena")
    b = c.path("renb")
    os.link(a, b)
    os.rename(a, b)
    c.check("rename: two names of one inode", a.exists() and b.exists())
    t = file(c, "rent")
    ln = c.path("renln")
    os.symlink(t.name, ln)
    ln2 = c.path("renln")
    os.rename(ln, ln2)
    c.check("rename: a link, not its target", os.readlink(ln2) == t.name and t.exists())
    pub = sticky(c, "sticky")
    (pub / "roots").write_bytes(b"")
    c.check(
        "rename: nobody, root's file in a sticky directory",
        as_nobody(lambda: os.rename(pub / "roots", pub / "mine")) in (errno.EPERM, errno.EACCES),
    )
    c.check(
        "rename: missing", err_of(lambda: os.rename(c.root / "nope", c.path("x"))) == errno.ENOENT
    )


def chmod_checks(c: Checks) -> None:
    f = file(c, "chmod")
    changed(c, "chmod", f, lambda: f.chmod(0o600), False, True)
    c.check("chmod: mode", stat.S_IMODE(os.stat(f).st_mode) == 0o600)
    f.chmod(0o4755)
    c.check("chmod: set-user-ID", stat.S_IMODE(os.stat(f).st_mode) == 0o4755)
    c.check("chmod: nobody on root's file", as_nobody(lambda: os.chmod(f, 0o777)) == errno.EPERM)
    pub = sticky(c, "pub")
    mine = pub / "mine"
    as_nobody(lambda: mine.write_bytes(b""))
    os.chown(mine, NOBODY, 0)
    c.check("chmod: nobody on its own file", as_nobody(lambda: os.chmod(mine, 0o2755)) == 0)
    c.check(
        "chmod: set-group-ID dropped outside the group",
        not os.stat(mine).st_mode & stat.S_ISGID,
        oct(os.stat(mine).st_mode),
    )
    t = file(c, "chmt")
    ln = c.path("chmln")
    os.symlink(t.name, ln)
    os.chmod(ln, 0o600)
    c.check("chmod: follows a link", stat.S_IMODE(os.stat(t).st_mode) == 0o600)
    d = sticky(c, "chmd")
    c.check("chmod: sticky directory", stat.S_IMODE(os.stat(d).st_mode) == 0o1777)


def chown_checks(c: Checks) -> None:
    f = file(c, "chown")
    changed(c, "chown", f, lambda: os.chown(f, 123, 456), False, True)
    st = os.stat(f)
    c.check("chown: owner and group", (st.st_uid, st.st_gid) == (123, 456))
    os.chown(f, -1, 789)
    c.check("chown: -1 keeps", (os.stat(f).st_uid, os.stat(f).st_gid) == (123, 789))
    c.check(
        "chown: nobody gives away root's file",
        as_nobody(lambda: os.chown(f, NOBODY, NOBODY)) == errno.EPERM,
    )
    os.chown(f, NOBODY, 0)
    c.check(
        "chown: nobody gives its file away", as_nobody(lambda: os.chown(f, 0, -1)) == errno.EPERM
    )
    c.check(
        "chown: nobody to its own group",
        as_nobody(lambda: os.chown(f, -1, NOBODY)) == 0 and os.stat(f).st_gid == NOBODY,
    )
    f.chmod(0o6755)
    os.chown(f, 0, 0)
    c.check(
        "chown: clears set-user-ID and set-group-ID",
        stat.S_IMODE(os.stat(f).st_mode) == 0o755,
        oct(os.stat(f).st_mode),
    )
    f.chmod(0o2745)
    os.chown(f, 1, 1)
    c.check(
        "chown: keeps set-group-ID without group execute",
        stat.S_IMODE(os.stat(f).st_mode) == 0o2745,
        oct(os.stat(f).st_mode),
    )
    t = file(c, "chot")
    ln = c.path("choln")
    os.symlink(t.name, ln)
    os.chown(ln, 77, 77, follow_symlinks=False)
    c.check(
        "lchown: the link, not its target", os.lstat(ln).st_uid == 77 and os.stat(t).st_uid == 0
    )


def truncate_checks(c: Checks) -> None:
    f = file(c, "trunc", b"0123456789")
    changed(c, "truncate", f, lambda: os.truncate(f, 4), True, True)
    c.check("truncate: shrinks", f.read_bytes() == b"0123")
    os.truncate(f, 8)
    c.check("truncate: grows with zeros", f.read_bytes() == b"0123\0\0\0\0")
    c.check("truncate: a directory", err_of(lambda: os.truncate(c.root, 0)) == errno.EISDIR)
    c.check("truncate: negative", err_of(lambda: os.truncate(f, -1)) == errno.EINVAL)
    c.check(
        "truncate: nobody on a 0644 file of root",
        as_nobody(lambda: os.truncate(f, 0)) == errno.EACCES,
    )
    fd = os.open(f, os.O_RDONLY)
    c.check(
        "ftruncate: a read-only descriptor",
        err_of(lambda: os.ftruncate(fd, 0)) in (errno.EINVAL, errno.EBADF),
    )
    os.close(fd)
    fd = os.open(f, os.O_RDWR)
    changed(c, "ftruncate", f, lambda: os.ftruncate(fd, 2), True, True)
    os.close(fd)
    c.check("ftruncate: size", os.stat(f).st_size == 2)


def utimensat_checks(c: Checks) -> None:
    f = file(c, "utim", b"x")
    os.utime(f, ns=(1_234_567_890_123_456_789, 1_300_000_000_987_654_321))
    st = os.stat(f)
    c.check(
        "utimensat: explicit times",
        (st.st_atime_ns, st.st_mtime_ns) == (1_234_567_890_123_456_789, 1_300_000_000_987_654_321),
        (st.st_atime_ns, st.st_mtime_ns),
    )
    os.utime(f)
    st = os.stat(f)
    c.check(
        "utimensat: UTIME_NOW",
        st.st_atime_ns > 1_300_000_000 * 10**9 and st.st_mtime_ns > 1_300_000_000 * 10**9,
    )
    changed(c, "utimensat", f, lambda: os.utime(f, ns=(OLD, OLD)), False, True)
    os.utime(f, ns=(OLD, OLD))
    # touch -m: atime UTIME_OMIT.
    os.utime(f, ns=(os.stat(f).st_atime_ns, 1_500_000_000 * 10**9))
    c.check(
        "utimensat: mtime alone",
        os.stat(f).st_atime_ns == OLD and os.stat(f).st_mtime_ns == 1_500_000_000 * 10**9,
    )
    c.check(
        "utimensat: nobody sets root's file's times",
        as_nobody(lambda: os.utime(f, ns=(1, 1))) == errno.EPERM,
    )
    c.check(
        "utimensat: nobody, now, no write permission",
        as_nobody(lambda: os.utime(f)) == errno.EACCES,
    )
    f.chmod(0o666)
    c.check("utimensat: nobody, now, write permission", as_nobody(lambda: os.utime(f)) == 0)
    t = file(c, "utt")
    ln = c.path("utln")
    os.symlink(t.name, ln)
    os.utime(t, ns=(OLD, OLD))
    os.utime(ln, ns=(5 * 10**17, 5 * 10**17), follow_symlinks=False)
    c.check(
        "utimensat: AT_SYMLINK_NOFOLLOW",
        os.lstat(ln).st_mtime_ns == 5 * 10**17 and os.stat(t).st_mtime_ns == OLD,
    )


def mknod_checks(c: Checks) -> None:
    d = c.path("nod")
    d.mkdir()
    old(d)
    os.mkfifo(d / "fifo", 0o640)
    st = os.stat(d / "fifo")
    c.check(
        "mkfifo: type and mode",
        stat.S_ISFIFO(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o640,
        oct(st.st_mode),
    )
    c.check("mkfifo: parent's mtime", os.stat(d).st_mtime_ns > OLD)
    c.check("mkfifo: existing", err_of(lambda: os.mkfifo(d / "fifo")) == errno.EEXIST)
    os.mknod(d / "chr", stat.S_IFCHR | 0o600, os.makedev(1, 7))
    st = os.stat(d / "chr")
    c.check("mknod: character device", stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 7))
    os.mknod(d / "blk", stat.S_IFBLK | 0o600, os.makedev(7, 1))
    c.check("mknod: block device", stat.S_ISBLK(os.stat(d / "blk").st_mode))
    os.mknod(d / "reg", stat.S_IFREG | 0o600)
    c.check("mknod: regular file", stat.S_ISREG(os.stat(d / "reg").st_mode))
    pub = sticky(c, "pub")
    c.check(
        "mknod: nobody makes a device",
        as_nobody(lambda: os.mknod(pub / "c", stat.S_IFCHR | 0o600, os.makedev(1, 3)))
        == errno.EPERM,
    )
    c.check("mkfifo: nobody makes a FIFO", as_nobody(lambda: os.mkfifo(pub / "f")) == 0)


def data_time_checks(c: Checks) -> None:
    f = file(c, "dt", b"abc")
    fd = os.open(f, os.O_WRONLY)
    changed(c, "write", f, lambda: os.pwrite(fd, b"x", 1), True, True)
    os.close(fd)
    os.utime(f, ns=(OLD, OLD + 1))
    f.read_bytes()
    c.check(
        "read: atime (relatime: it was older than mtime)",
        os.stat(f).st_atime_ns > OLD,
        os.stat(f).st_atime_ns,
    )
    fd = os.open(c.path("fall"), os.O_RDWR | os.O_CREAT, 0o644)
    os.posix_fallocate(fd, 4096, 1 << 20)
    c.check("posix_fallocate: size", os.fstat(fd).st_size == 4096 + (1 << 20))
    c.check("posix_fallocate: zeros", os.pread(fd, 8192, 0) == bytes(8192))
    os.close(fd)


def xattr_checks(c: Checks) -> None:
    f = file(c, "xa")
    os.setxattr(f, "user.k", b"v\0w")
    c.check("setxattr: get", os.getxattr(f, "user.k") == b"v\0w")
    c.check("setxattr: list", os.listxattr(f) == ["user.k"])
    c.check(
        "setxattr: XATTR_CREATE",
        err_of(lambda: os.setxattr(f, "user.k", b"", os.XATTR_CREATE)) == errno.EEXIST,
    )
    c.check(
        "setxattr: XATTR_REPLACE",
        err_of(lambda: os.setxattr(f, "user.n", b"", os.XATTR_REPLACE)) == errno.ENODATA,
    )
    os.removexattr(f, "user.k")
    c.check("removexattr", err_of(lambda: os.getxattr(f, "user.k")) == errno.ENODATA)
    c.check("getxattr: missing", err_of(lambda: os.getxattr(f, "user.none")) == errno.ENODATA)


def statfs_and_path_checks(c: Checks) -> None:
    st = os.statvfs(c.root)
    c.check("statfs: blocks", st.f_blocks > 0 and 0 < st.f_bavail <= st.f_blocks, st)
    c.check("statfs: inodes", st.f_files > 0 and st.f_ffree > 0, st)
    c.check("statfs: names of 255 bytes", st.f_namemax >= 255, st.f_namemax)
    fd = os.open(c.root, os.O_RDONLY)
    depth = 0
    try:
        while depth < 20:
            os.mkdir("d" * 250, dir_fd=fd)
            nfd = os.open("d" * 250, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nfd
            depth += 1
        leaf = os.open("leaf", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.close(leaf)
        c.check("paths: a tree deeper than PATH_MAX", depth == 20)
    except OSError as e:
        c.check("paths: a tree deeper than PATH_MAX", False, f"depth {depth}: {e}")
    finally:
        os.close(fd)


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        print("usage: posix_conform.py DIR [--json]", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("posix_conform: needs root (it checks ownership and a second user)", file=sys.stderr)
        return 2
    root = Path(sys.argv[1]) / "conform"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    root.chmod(0o755)
    os.umask(0)
    c = Checks(root)
    for area in (open_checks, mkdir_checks, rmdir_checks, unlink_checks, link_checks,
                 symlink_checks, rename_checks, chmod_checks, chown_checks, truncate_checks,
                 utimensat_checks, mknod_checks, data_time_checks, xattr_checks,
                 statfs_and_path_checks):  # fmt: skip
        try:
            area(c)
        except Exception as e:  # an area that breaks counts as one failure, the rest go on
            c.check(f"{area.__name__}", False, f"{type(e).__name__}: {e}")
    shutil.rmtree(root, ignore_errors=True)
    if "--json" in sys.argv[2:]:
        print(json.dumps({"passed": c.passed, "failed": c.failed}))
    else:
        for f in c.failed:
            print(f"FAIL {f}")
        print(f"posix_conform checks: {c.passed} of {c.passed + len(c.failed)} held")
    return 0 if not c.failed else 1


if __name__ == "__main__":
    sys.exit(main())
