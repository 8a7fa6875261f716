"""Issue #17: worker processes writing overlapping parts of shared shards
through the Python package, as Dask workers write a sharded array, lose no
element, and a reader alongside never sees a torn inner chunk."""

from __future__ import annotations

import multiprocessing
import pathlib
import time

import numpy as np

import zarrkit

EDGE = 64
# Each task writes one row across the array: a partial write of two shards
# (32×32) and of one row of each of 8 inner chunks (8×8), so every inner
# chunk gets its rows from 8 tasks spread over every worker.
ROWS = 1


def expected() -> np.ndarray:
    return (np.arange(EDGE * EDGE, dtype="uint16") + 1).reshape(EDGE, EDGE)


def write_stripes(store: str, stripes: list[int]) -> None:
    """A worker: writes its stripes, each a partial write of two shards."""
    a = zarrkit.open_array(store, mode="r+")
    full = expected()
    for s in stripes:
        rows = slice(s * ROWS, (s + 1) * ROWS)
        a[rows, :] = full[rows, :]


def test_worker_processes_writing_overlapping_shards_lose_nothing(tmp_path: pathlib.Path) -> None:
    full = expected()
    workers = 4
    stripes = list(range(EDGE // ROWS))
    ctx = multiprocessing.get_context("spawn")
    for trial in range(3):
        store = str(tmp_path / f"t{trial}.zarr")
        a = zarrkit.create_array(
            store, shape=(EDGE, EDGE), dtype="uint16", chunks=(8, 8), shards=(32, 32),
        )
        # Interleaved: worker w gets rows w, w + 4, …, in an order of its own.
        plans = [stripes[w::workers][::(1 if w % 2 else -1)] for w in range(workers)]
        procs = [ctx.Process(target=write_stripes, args=(store, plan)) for plan in plans]
        for p in procs:
            p.start()
        reads = 0
        while any(p.is_alive() for p in procs) or reads == 0:
            seen = a[...]
            # Every element is the fill value or its final value: a torn
            # inner chunk would hold neither (or not decode at all).
            assert np.all((seen == 0) | (seen == full)), f"trial {trial}: a torn read"
            reads += 1
            time.sleep(0.001)
        for p in procs:
            p.join()
            assert p.exitcode == 0
        lost = int(np.count_nonzero(a[...] != full))
        print(f"trial {trial}: {workers} processes, {len(stripes)} partial writes, {reads} reads: {lost} lost")
        assert lost == 0
