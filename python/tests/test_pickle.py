"""Arrays and groups pickle by where they are, and reopen in another process."""

from __future__ import annotations

import multiprocessing
import pathlib
import pickle

import numpy as np
import pytest

import zarrkit


def _sum_in_child(payload: bytes) -> tuple[str, float, bool]:
    """Unpickles an array in a fresh process: its path, the sum, read-only."""
    a = pickle.loads(payload)
    return a.path, float(np.asarray(a).sum()), a.read_only


def _write_in_child(payload: bytes) -> None:
    a = pickle.loads(payload)
    a[0, :] = -1


def test_array_pickles_by_location_path_and_mode(tmp_path: pathlib.Path) -> None:
    a = zarrkit.create_array(tmp_path / "s.zarr", name="g/x", shape=(4, 6), dtype="int32", chunks=(2, 3))
    a[...] = np.arange(24).reshape(4, 6)
    b = pickle.loads(pickle.dumps(a))
    assert isinstance(b, zarrkit.Array)
    assert (b.path, b.store_path, b.read_only) == ("/g/x", str(tmp_path / "s.zarr"), False)
    np.testing.assert_array_equal(b[...], np.arange(24).reshape(4, 6))
    r = zarrkit.open_array(tmp_path / "s.zarr", mode="r", path="g/x")
    rb = pickle.loads(pickle.dumps(r))
    assert rb.read_only
    with pytest.raises(zarrkit.ReadOnlyError):
        rb[0, 0] = 5


def test_mode_w_is_not_truncated_again_on_unpickling(tmp_path: pathlib.Path) -> None:
    a = zarrkit.open_array(tmp_path / "w.zarr", mode="w", shape=(3,), dtype="int16", chunks=(2,))
    a[...] = [7, 8, 9]
    g = zarrkit.open_group(tmp_path / "g.zarr", mode="w", attributes={"k": 1})
    g.create_array("child", shape=(2,), dtype="uint8")[...] = [4, 5]
    a2 = pickle.loads(pickle.dumps(a))
    g2 = pickle.loads(pickle.dumps(g))
    # Reopened with r+: the data and the child are still there.
    assert a2[...].tolist() == [7, 8, 9]
    assert a2._mode == "r+" and g2._mode == "r+"
    assert list(g2) == ["child"] and g2["child"][...].tolist() == [4, 5]
    assert g2.attrs["k"] == 1
    a2[0] = 1
    assert a[...].tolist() == [1, 8, 9]


def test_group_members_and_storage_options_survive(tmp_path: pathlib.Path) -> None:
    g = zarrkit.open_group(f"file://{tmp_path}/o.zarr", mode="a", storage_options={"anon": True})
    g.create_array("v", shape=(2, 2), dtype="float32")[...] = [[1, 2], [3, 4]]
    v = g["v"]
    fn, args = v.__reduce__()
    assert args == ("array", f"file://{tmp_path}/o.zarr", "/v", "r+", {"anon": True})
    v2 = pickle.loads(pickle.dumps(v))
    assert v2[...].tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert pickle.loads(pickle.dumps(g)).__reduce__()[1][3] == "a"


def test_memory_stores_refuse_to_pickle() -> None:
    a = zarrkit.create_array("memory://", shape=(2,), dtype="int8")
    with pytest.raises(TypeError, match="memory://"):
        pickle.dumps(a)


def test_unpickled_in_another_process(tmp_path: pathlib.Path) -> None:
    a = zarrkit.create_array(tmp_path / "p.zarr", shape=(3, 4), dtype="float64", chunks=(2, 2))
    a[...] = np.arange(12).reshape(3, 4) / 2
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        path, total, read_only = pool.apply(_sum_in_child, (pickle.dumps(a),))
        assert (path, total, read_only) == ("/", 33.0, False)
        pool.apply(_write_in_child, (pickle.dumps(a),))
    np.testing.assert_array_equal(a[0], [-1, -1, -1, -1])
    np.testing.assert_array_equal(a[1:], np.arange(4, 12).reshape(2, 4) / 2)
