"""Adaptive read-ahead (services/prefetch/pf_adapt.h) over the store back-end: what each
reader makes the library fetch, by its counters; coreutils' readers, which advise
SEQUENTIAL, are prefetched.  Run times are docs/benchmarks.md's (loggp bench prefetch).
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest
import test_prefetch_safety
from conftest import base_env, run
from test_pfs import fuse_ok  # noqa: F401 (a fixture)
from test_prefetch import TIMEOUT, KiB, MiB, Prefetch, entry
from test_prefetch_safety import Store

pytestmark = pytest.mark.integration

BIG = 16 * MiB


@pytest.fixture(scope="module")
def pf(tmp_path_factory: pytest.TempPathFactory) -> Prefetch:
    return Prefetch(tmp_path_factory.mktemp("prefetch-adaptive"))


store = test_prefetch_safety.store  # the fixture, shared


@pytest.fixture(scope="module")
def big(pf: Prefetch, store: Store) -> tuple[Path, Path]:
    """A 16 MiB pattern file on the store and an Adaptive entry for it."""
    assert store.mount is not None
    path = store.mount.mnt / "big.dat"
    pf.read(base_env(), "make", str(path), str(BIG))
    hint = entry(path, 4 * MiB, 4, 2, []) | {"Adaptive": True}
    return path, pf.config("adaptive.json", [hint])


def strided(pf: Prefetch, env: dict[str, str], path: Path, req: int, stride: int) -> dict:
    res = pf.read(env, "strided", str(path), str(req), str(stride))
    assert res["ok"] and res["reads"] == (BIG - req) // stride + 1, res
    return pf.stats(env)


def test_a_sparse_strided_reader_fetches_only_what_it_reads(
    pf: Prefetch, store: Store, big: tuple[Path, Path]
) -> None:
    path, config = big
    reads = BIG // (512 * KiB)
    st = strided(pf, store.env(config), path, 16 * KiB, 512 * KiB)
    # the first three reads find the stride; the others are served from what it fetched
    assert st["served"] >= reads - 3, st
    assert st["store_bytes"] <= reads * 16 * KiB, st
    # whole blocks (Mercury's WillNeed) fetch the gaps too
    blocks = pf.config("blocks.json", [entry(path, MiB, 8, 2, [(0, 0)])])
    assert strided(pf, store.env(blocks), path, 16 * KiB, 512 * KiB)["store_bytes"] >= 8 * MiB


def test_a_dense_strided_reader_fetches_only_what_it_reads(
    pf: Prefetch, store: Store, big: tuple[Path, Path]
) -> None:
    path, config = big
    reads = BIG // (512 * KiB)
    st = strided(pf, store.env(config), path, 256 * KiB, 512 * KiB)
    assert st["served"] >= reads - 3, st
    assert st["store_bytes"] <= reads * 256 * KiB, st  # the gaps are not fetched


def test_strided_reads_with_small_gaps_are_joined_into_few_fetches(
    pf: Prefetch, store: Store, big: tuple[Path, Path]
) -> None:
    path, config = big
    reads = BIG // (288 * KiB)
    st = strided(pf, store.env(config), path, 256 * KiB, 288 * KiB)
    assert st["served"] >= reads - 3, st
    assert st["store_reads"] < reads / 2, st  # gaps of an eighth of a read: joined


def test_a_sequential_reader_is_read_ahead_in_batches(
    pf: Prefetch, store: Store, big: tuple[Path, Path]
) -> None:
    path, config = big
    reads = BIG // (64 * KiB)
    st = strided(pf, store.env(config), path, 64 * KiB, 64 * KiB)
    assert st["served"] >= reads - 2, st
    assert st["store_reads"] < reads / 4 and st["store_bytes"] <= BIG, st


@pytest.mark.parametrize("tool", ["md5sum", "cat", "cp"])
def test_coreutils_readers_are_prefetched(pf: Prefetch, store: Store, tool: str) -> None:
    # Mercury's whole-block hints; the tools' SEQUENTIAL advice turns to adaptive read-ahead
    want = store.pattern.read_bytes()
    env = store.env()
    out = pf.root / f"{tool}.out"
    if tool == "md5sum":
        proc = run([tool, str(store.pattern)], env, timeout=TIMEOUT)
        assert proc.returncode == 0 and proc.stdout.split()[0] == hashlib.md5(want).hexdigest()
    elif tool == "cat":
        with out.open("wb") as f:
            done = subprocess.run([tool, str(store.pattern)], env=env, stdout=f, timeout=TIMEOUT)
        assert done.returncode == 0 and out.read_bytes() == want
    else:
        proc = run([tool, str(store.pattern), str(out)], env, timeout=TIMEOUT)
        assert proc.returncode == 0 and out.read_bytes() == want, proc.stderr
    st = pf.stats(env)
    assert st["app_sequential"] == 1 and st["app_advice"] == 0, st
    assert st["served"] > 0 and st["store_reads"] > 0, st
