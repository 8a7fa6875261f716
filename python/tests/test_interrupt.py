"""Long reads and writes can be interrupted (Ctrl-C), and release the GIL."""

from __future__ import annotations

import pathlib
import signal
import threading
import time

import numpy as np
import pytest

import zarrkit


@pytest.fixture(scope="module")
def sparse(tmp_path_factory: pytest.TempPathFactory) -> zarrkit.Array:
    """A large array of which nothing is stored: 1.2 million chunks of 4
    elements, each looked up in the store (and found missing) when read."""
    path = tmp_path_factory.mktemp("interrupt") / "big.zarr"
    a = zarrkit.create_array(path, shape=(1200, 4000), dtype="float64", chunks=(1, 4), fill_value=1.5)
    a[0, :8] = np.arange(8)
    return a


def _interrupt_after(seconds: float) -> threading.Timer:
    timer = threading.Timer(seconds, signal.raise_signal, (signal.SIGINT,))
    timer.start()
    return timer


def test_a_long_read_stops_soon_after_ctrl_c(sparse: zarrkit.Array) -> None:
    # The whole read takes several seconds (measured below on a part);
    # KeyboardInterrupt must arrive well before it could have finished.
    t0 = time.perf_counter()
    part = sparse[:60]
    per_row = (time.perf_counter() - t0) / 60
    assert part[0, :8].tolist() == list(range(8)) and float(part[5, 7]) == 1.5
    assert per_row * 1200 > 1.5, "the whole read must be long for this test to mean anything"
    timer = _interrupt_after(0.3)
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        sparse[...]
    elapsed = time.perf_counter() - t0
    timer.join()
    assert elapsed < 0.3 + max(0.5, per_row * 1200 / 3), (elapsed, per_row * 1200)


def test_a_long_write_stops_soon_after_ctrl_c(tmp_path: pathlib.Path) -> None:
    a = zarrkit.create_array(tmp_path / "w.zarr", shape=(800, 1000), dtype="int16", chunks=(1, 8))
    t0 = time.perf_counter()
    a[:16] = 3
    per_row = (time.perf_counter() - t0) / 16
    assert per_row * 800 > 1.5
    timer = _interrupt_after(0.3)
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        a[...] = 7
    elapsed = time.perf_counter() - t0
    timer.join()
    assert elapsed < 0.3 + max(0.5, per_row * 800 / 3), (elapsed, per_row * 800)
    # What was written before the interrupt is whole rows of 7s, then 0s.
    rows = (a[:, 0] == 7).sum()
    assert 0 < rows < 800
    np.testing.assert_array_equal(a[:rows], 7)
    assert int(a[rows:, :].sum()) == 0


def test_reads_release_the_gil(sparse: zarrkit.Array) -> None:
    done = threading.Event()
    result = {}

    def read() -> None:
        result["v"] = sparse[:200]
        done.set()

    reader = threading.Thread(target=read)
    reader.start()
    spins = 0
    while not done.is_set():
        spins += 1  # Python bytecode running while the reader works
    reader.join()
    assert spins > 10_000
    assert result["v"].shape == (200, 4000) and float(result["v"][199, 3999]) == 1.5


def test_threads_read_and_write_one_array_at_once(tmp_path: pathlib.Path) -> None:
    a = zarrkit.create_array(
        tmp_path / "t.zarr", shape=(64, 64), dtype="int32", chunks=(8, 8), shards=(32, 32)
    )
    errors: list[BaseException] = []

    def writer(t: int) -> None:
        try:
            for r in range(t, 64, 4):  # rows of 4 threads interleave in every shard
                a[r, :] = np.arange(64) + 1000 * r
                assert a[r, 5] == 1000 * r + 5
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    expected = np.arange(64)[None, :] + 1000 * np.arange(64)[:, None]
    np.testing.assert_array_equal(a[...], expected)
