"""Dask reads zarrkit arrays and stores into them, from worker processes too."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator

import dask
import dask.array as da
import numpy as np
import pytest
import zarr
from distributed import Client, LocalCluster, get_task_stream

import zarrkit


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    """One cluster of two worker processes (two threads each) per module."""
    with LocalCluster(
        n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None,
        silence_logs=40,
    ) as cluster, Client(cluster) as c:
        yield c


def test_from_array_computes_the_right_values(tmp_path: pathlib.Path) -> None:
    expected = np.arange(20 * 30, dtype="float32").reshape(20, 30)
    a = zarrkit.create_array(tmp_path / "r.zarr", shape=(20, 30), dtype="float32", chunks=(6, 7))
    a[...] = expected
    x = da.from_array(a, chunks=a.chunks)
    assert x.chunks == ((6, 6, 6, 2), (7, 7, 7, 7, 2))
    with dask.config.set(scheduler="threads"):
        np.testing.assert_array_equal(x.compute(), expected)
        assert float(x[::-3, 5:].sum().compute()) == float(expected[::-3, 5:].sum())


def test_workers_read_pickled_arrays(client: Client, tmp_path: pathlib.Path) -> None:
    expected = np.arange(40 * 12, dtype="int64").reshape(40, 12)
    a = zarrkit.create_array(tmp_path / "w.zarr", shape=(40, 12), dtype="int64", chunks=(5, 12))
    a[...] = expected
    x = da.from_array(zarrkit.open_array(tmp_path / "w.zarr", mode="r"), chunks=a.chunks)
    np.testing.assert_array_equal(client.compute(x).result(), expected)
    assert int(client.compute((x * 2).sum(axis=1)).result()[7]) == int(2 * expected[7].sum())


def _workers_by_block(client: Client, run: object) -> dict[tuple[int, ...], str]:
    """The worker that ran each `store` task: block index -> worker address."""
    with get_task_stream(client) as ts:
        run()  # type: ignore[operator]
    out = {}
    for task in ts.data:
        key = task["key"]
        if isinstance(key, tuple) and "store" in str(key[0]):
            out[tuple(key[1:])] = task["worker"]
    return out


def test_store_whole_chunks_from_worker_processes(client: Client, tmp_path: pathlib.Path) -> None:
    expected = np.arange(64 * 48, dtype="int32").reshape(64, 48)
    a = zarrkit.create_array(tmp_path / "s.zarr", shape=(64, 48), dtype="int32", chunks=(8, 12))
    x = da.from_array(expected, chunks=(16, 24))  # 2x2 chunks a block
    by_block = _workers_by_block(client, lambda: da.store(x, a, lock=False, scheduler=client))
    assert len(by_block) == 8
    assert len(set(by_block.values())) == 2  # both processes wrote
    np.testing.assert_array_equal(a[...], expected)
    assert a.nchunks_initialized == 8 * 4


def test_store_partial_shards_from_worker_processes(client: Client, tmp_path: pathlib.Path) -> None:
    # Two shards of 16x256, each of 8x32 inner chunks; Dask blocks of 4x8
    # cover a quarter of an inner chunk's rows and columns, so every shard
    # (and every inner chunk) is written in parts by several tasks, from
    # both worker processes: read-modify-writes of one shard that only the
    # store's per-key conditional writes keep from losing elements.
    shape = (32, 256)
    expected = np.arange(np.prod(shape), dtype="uint32").reshape(shape) + 1
    a = zarrkit.create_array(
        tmp_path / "p.zarr", shape=shape, dtype="uint32", chunks=(8, 32), shards=(16, 256)
    )
    x = da.from_array(expected, chunks=(4, 8))
    by_block = _workers_by_block(client, lambda: da.store(x, a, lock=False, scheduler=client))
    assert len(by_block) == 8 * 32
    for shard_row in range(2):
        writers = {w for (i, _), w in by_block.items() if i // 4 == shard_row}
        assert len(writers) == 2, f"shard {shard_row} was written by {writers}"
    got = a[...]
    assert int((got == 0).sum()) == 0  # no element lost (the fill value is 0)
    np.testing.assert_array_equal(got, expected)
    assert a.nchunks_initialized == 2
    # The control: the same writes race. zarr-python 3.1.6, which has no
    # guard across processes, loses elements (about half of them here).
    z = zarr.create_array(
        str(tmp_path / "z.zarr"), shape=shape, dtype="uint32", chunks=(8, 32), shards=(16, 256)
    )
    da.store(x, z, lock=False, scheduler=client)
    assert int((z[...] == 0).sum()) > 0
