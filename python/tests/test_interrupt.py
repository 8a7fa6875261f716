"""Long reads and writes can be interrupted (Ctrl-C), and release the GIL."""

from __future__ import annotations

import math
import pathlib
import signal
import sys
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest

import zarrkit


def _rows_for(seconds_per_row: float, minimum: int, multiple: int = 1) -> int:
    """How many rows an array needs for a whole read or write of it to take
    about 4 s on this machine (at least `minimum`, a multiple of
    `multiple`): the interrupt tests need an operation far longer than the
    0.3 s after which they press Ctrl-C, and machines differ tenfold in
    how fast they create or look up small files."""
    rows = max(minimum, math.ceil(4.0 / seconds_per_row))
    return -(-rows // multiple) * multiple


@pytest.fixture(scope="module")
def sparse(tmp_path_factory: pytest.TempPathFactory) -> zarrkit.Array:
    """A large array of which nothing is stored: 1000 chunks of 4 elements
    a row, each looked up in the store (and found missing) when read; at
    least 1200 rows, more on a machine that looks them up fast."""
    path = tmp_path_factory.mktemp("interrupt") / "big.zarr"
    a = zarrkit.create_array(path, shape=(1200, 4000), dtype="float64", chunks=(1, 4), fill_value=1.5)
    a[0, :8] = np.arange(8)
    t0 = time.perf_counter()
    a[:60]
    rows = _rows_for((time.perf_counter() - t0) / 60, 1200)
    if rows > 1200:  # nothing more is stored: only the shape grows
        a.resize((min(rows, 12_000), 4000))
    return a


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """Python's own Ctrl-C handler for the test: a process started in the
    background of a non-interactive shell (as CI may run the suite)
    inherits SIGINT ignored, and Python then never raises
    KeyboardInterrupt."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _interrupt_after(seconds: float) -> threading.Timer:
    timer = threading.Timer(seconds, signal.raise_signal, (signal.SIGINT,))
    timer.start()
    return timer


def test_a_long_read_stops_soon_after_ctrl_c(sparse: zarrkit.Array, ctrl_c: None) -> None:
    # The whole read takes several seconds (measured below on a part);
    # KeyboardInterrupt must arrive well before it could have finished.
    t0 = time.perf_counter()
    part = sparse[:60]
    per_row = (time.perf_counter() - t0) / 60
    assert part[0, :8].tolist() == list(range(8)) and float(part[5, 7]) == 1.5
    n = sparse.shape[0]
    assert per_row * n > 1.5, "the whole read must be long for this test to mean anything"
    timer = _interrupt_after(0.3)
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        sparse[...]
    elapsed = time.perf_counter() - t0
    timer.join()
    assert elapsed < 0.3 + max(0.5, per_row * n / 3), (elapsed, per_row * n)


def test_a_long_write_stops_soon_after_ctrl_c(tmp_path: pathlib.Path, ctrl_c: None) -> None:
    # Rows of 125 chunks; as many rows as this machine writes in about 4 s
    # (measured on 4 rows of a first array), in whole pieces of 16 rows.
    probe = zarrkit.create_array(tmp_path / "p.zarr", shape=(4, 1000), dtype="int16", chunks=(1, 8))
    t0 = time.perf_counter()
    probe[...] = 3
    per_row = (time.perf_counter() - t0) / 4
    assert probe.nchunks_initialized == 4 * 125 and int(probe[...].sum()) == 3 * 4000
    n = _rows_for(per_row, 800, 16)
    a = zarrkit.create_array(tmp_path / "w.zarr", shape=(n, 1000), dtype="int16", chunks=(1, 8))
    assert per_row * n > 1.5
    timer = _interrupt_after(0.3)
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        a[...] = 7
    elapsed = time.perf_counter() - t0
    timer.join()
    assert elapsed < 0.3 + max(0.5, per_row * n / 3), (elapsed, per_row * n)
    # What was written before the interrupt is whole pieces (of 16 rows:
    # 2048 chunks at most, 125 a row) of 7s; nothing after them.
    rows = int((a[:, 0] == 7).sum())
    assert 0 < rows < n and rows % 16 == 0
    np.testing.assert_array_equal(a[:rows], 7)
    assert a.nchunks_initialized == rows * 125


class _Timed:
    """A native array handle that notes when a read or write is running,
    and for how long each ran."""

    def __init__(self, native: object) -> None:
        self._native = native
        self.running = False
        self.spans: list[float] = []

    def __getattr__(self, name: str) -> object:
        method = getattr(self._native, name)
        if name not in ("read", "read_into", "write"):
            return method

        def timed(*args: object) -> object:
            t0 = time.perf_counter()
            self.running = True
            try:
                return method(*args)
            finally:
                self.running = False
                self.spans.append(time.perf_counter() - t0)

        return timed


def _python_steps_during(work: object, timed: _Timed) -> tuple[int, float]:
    """Runs `work` in a thread while this one counts its own steps: how
    many of them ran while a native call was running, and how long the
    native calls took."""
    done = threading.Event()

    def run() -> None:
        try:
            work()  # type: ignore[operator]
        finally:
            done.set()

    thread = threading.Thread(target=run)
    inside = 0
    # A short switch interval: were the GIL held by the native call, this
    # thread could only step in the moments around it (a few at most).
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        thread.start()
        while not done.is_set():
            if timed.running:
                inside += 1
        thread.join()
    finally:
        sys.setswitchinterval(interval)
    return inside, sum(timed.spans)


def test_reads_and_writes_release_the_gil(sparse: zarrkit.Array, tmp_path: pathlib.Path) -> None:
    # One native call each (1000 and 500 chunks), while this thread keeps
    # running Python: were the GIL held, it could not step during them.
    a = zarrkit.open_array(sparse.store_path, mode="r")
    a._native = timed = _Timed(a._native)
    out = {}
    inside, busy = _python_steps_during(lambda: out.setdefault("v", a[:1]), timed)
    assert len(timed.spans) == 1 and busy > 0.002
    assert inside > 1000 and inside / busy > 200_000, (inside, busy)
    assert out["v"].shape == (1, 4000) and out["v"][0, :9].tolist() == [*range(8), 1.5]
    w = zarrkit.create_array(tmp_path / "g.zarr", shape=(1, 2000), dtype="int8", chunks=(1, 4))
    w._native = timed = _Timed(w._native)
    inside, busy = _python_steps_during(lambda: w.__setitem__(..., 5), timed)
    assert len(timed.spans) == 1 and busy > 0.002
    assert inside > 1000 and inside / busy > 200_000, (inside, busy)
    assert int(w[...].sum()) == 5 * 2000


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


KEYS = [
    (...,),
    (slice(None, None, -1),),
    (slice(1, None, 3), 2),
    (slice(None, None, -2), slice(1, -1)),
    (slice(-2, 0, -3), Ellipsis),
    (4, slice(None, None, -1)),
    (Ellipsis, slice(2, 9)),
    (slice(3, 4), slice(None, None, -4)),
    (np.int64(-1), slice(None)),
    (slice(20, 30),),
]


@pytest.mark.parametrize("limits", [(3, 1 << 20), (1 << 20, 16)], ids=["by-chunks", "by-bytes"])
@pytest.mark.parametrize("key", KEYS, ids=[repr(k) for k in KEYS])
def test_reads_and_writes_in_pieces_equal_numpy(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, key: tuple, limits: tuple[int, int]
) -> None:
    # Tiny pieces (3 chunks: whole chunks along the first axis; or 16
    # bytes: single rows), so that the selections are split.
    monkeypatch.setattr(zarrkit, "_PIECE_CHUNKS", limits[0])
    monkeypatch.setattr(zarrkit, "_PIECE_BYTES", limits[1])
    expected = np.arange(13 * 11, dtype="int32").reshape(13, 11)
    a = zarrkit.create_array(tmp_path / "p.zarr", shape=(13, 11), dtype="int32", chunks=(3, 4))
    a[...] = expected
    np.testing.assert_array_equal(a[...], expected)
    pieces = zarrkit._pieces(a, "basic", key)
    # The native size check of a small read agrees with `_pieces`: it
    # declines (None) exactly the selections `_pieces` splits.
    small = a._native.read("basic", key, (limits[1], limits[0]))
    assert (small is None) == (pieces is not None)
    if small is not None:
        np.testing.assert_array_equal(small[1].view("int32").reshape(small[0]), expected[key])
    if limits[1] == 16 and len(np.ravel(expected[key])) > 4:
        assert pieces is not None and len(pieces[1]) > 1  # split into rows
    if pieces is not None:  # the pieces cover the selection's first axis once
        assert [(p[0], p[1]) for p in pieces[1]] == list(zip([0] + [p[1] for p in pieces[1]][:-1], [p[1] for p in pieces[1]]))
        assert pieces[1][-1][1] == len(expected[key])
    got = a[key]
    np.testing.assert_array_equal(got, expected[key])
    assert np.shape(got) == np.shape(expected[key])
    value = -np.arange(np.size(expected[key]), dtype="int32").reshape(np.shape(expected[key])) - 1
    a[key] = value
    expected[key] = value
    np.testing.assert_array_equal(a[...], expected)
    a[key] = 77  # a scalar, broadcast to every piece
    expected[key] = 77
    np.testing.assert_array_equal(a.oindex[key] if Ellipsis not in key else a[key], expected[key])
    np.testing.assert_array_equal(a[...], expected)


def test_string_reads_and_writes_in_pieces(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zarrkit, "_PIECE_CHUNKS", 2)
    a = zarrkit.create_array(tmp_path / "s.zarr", shape=(9, 2), dtype=str, chunks=(2, 1))
    expected = np.array([[f"r{i}c{j}" * (i + 1) for j in range(2)] for i in range(9)], dtype=object)
    a[...] = expected
    assert a[::-1].tolist() == expected[::-1].tolist()
    assert a[1:8:3, 1].tolist() == ["r1c1" * 2, "r4c1" * 5, "r7c1" * 8]
