"""Selections read and written through `Array` equal NumPy's."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import zarrkit

BASIC = [
    (),
    (Ellipsis,),
    3,
    -1,
    (2, 5),
    (-7, -9),
    slice(None),
    slice(1, 6, 2),
    slice(None, None, -1),
    slice(None, None, -3),
    slice(5, 1, -2),
    slice(-2, None, -1),
    slice(100, -100, -4),
    (slice(None, None, -1), slice(None, None, -2)),
    (slice(6, 0, -3), 4),
    (Ellipsis, 2),
    (1, Ellipsis),
    (None, 3),
    (slice(None), None, slice(2, 4)),
    (Ellipsis, None),
    (slice(0, 0),),
    (slice(5, 2),),
    ([0, 3, 3, -1],),
    (np.array([6, 0, 2]),),
    (slice(None), [8, 0, 4]),
    ([1, 2], [3, 4]),
    (np.array([[0, 1], [2, 3]]), 5),
    ([0, 2], slice(None, None, -2)),
    (np.arange(7) % 2 == 0,),
    (slice(None), np.arange(9) > 5),
    (np.arange(63).reshape(7, 9) % 5 == 0,),
    ([],),
    (np.int64(2), np.int32(-1)),
]


@pytest.mark.parametrize("key", BASIC, ids=repr)
def test_basic_reads_equal_numpy(arr2d, key) -> None:
    a, expected = arr2d
    got = a[key]
    want = expected[key]
    assert np.asarray(got).shape == np.asarray(want).shape
    np.testing.assert_array_equal(got, want)
    assert np.asarray(got).dtype == want.dtype


def test_integer_index_gives_a_numpy_scalar(arr2d) -> None:
    a, _ = arr2d
    v = a[2, 3]
    assert isinstance(v, np.int32)
    assert v == 21


ORTHOGONAL = [
    ([0, 6], [1, 8]),
    ([6, 0, 3], slice(None, None, -4)),
    (np.arange(7) > 3, [2, -1]),
    (np.arange(7) > 3, np.arange(9) % 3 == 0),
    (2, [0, 0, 5]),
    (slice(1, 5), 4),
]


@pytest.mark.parametrize("key", ORTHOGONAL, ids=repr)
def test_oindex_equals_numpy_ix(arr2d, key) -> None:
    a, expected = arr2d
    # NumPy's orthogonal indexing: each list selects along its own dimension.
    want = expected
    for d, k in reversed(list(enumerate(key))):
        if isinstance(k, (int, np.integer)):
            want = np.take(want, k, axis=d)
        else:
            idx = np.arange(expected.shape[d])[k]
            want = np.take(want, idx, axis=d)
    np.testing.assert_array_equal(a.oindex[key], want)


def test_vindex_coordinates_and_mask(arr2d) -> None:
    a, expected = arr2d
    np.testing.assert_array_equal(a.vindex[[0, 6, 3], [8, 0, 3]], [8, 54, 30])
    rows = np.array([[0, 1], [2, 3]])
    cols = np.array([[4, 5], [6, 7]])
    np.testing.assert_array_equal(a.vindex[rows, cols], expected[rows, cols])
    mask = expected % 10 == 0
    np.testing.assert_array_equal(a.vindex[mask], [0, 10, 20, 30, 40, 50, 60])
    np.testing.assert_array_equal(a.get_mask_selection(mask), expected[mask])
    np.testing.assert_array_equal(a.get_coordinate_selection(([1], [1])), [10])


def test_blocks_select_whole_chunks(arr2d) -> None:
    a, expected = arr2d
    # chunks of 3×4: block (1, 0) is rows 3..6, columns 0..4.
    np.testing.assert_array_equal(a.blocks[1, 0], expected[3:6, 0:4])
    # the last block along each dimension is cut at the array's edge.
    np.testing.assert_array_equal(a.blocks[2, 2], expected[6:7, 8:9])
    np.testing.assert_array_equal(a.blocks[1:, -2:], expected[3:, 4:])
    np.testing.assert_array_equal(a.get_block_selection((0, 1)), expected[0:3, 4:8])


WRITES = [
    ((slice(None, None, -2), slice(1, 8, 3)), None),
    ((slice(None), [8, 1]), None),
    (([0, 2], [3, 4]), None),
    ((np.arange(7) % 3 == 0,), None),
    ((Ellipsis, -1), None),
    ((slice(5, None, -1), 2), None),
    ((2,), "row"),
    ((slice(None), slice(None)), "scalar"),
    ((slice(1, 4), slice(None, None, -1)), "column"),
]


@pytest.mark.parametrize(("key", "kind"), WRITES, ids=repr)
def test_writes_equal_numpy_assignment(arr2d, key, kind) -> None:
    a, expected = arr2d
    shape = expected[key].shape
    if kind == "scalar":
        value = -5
    elif kind == "row":
        value = np.arange(100, 109, dtype="int32")
    elif kind == "column":
        value = np.arange(100, 103, dtype="int32").reshape(3, 1)
    else:
        value = (np.arange(np.prod(shape), dtype="int32") + 1000).reshape(shape)
    a[key] = value
    expected[key] = value
    np.testing.assert_array_equal(a[...], expected)


def test_oindex_vindex_blocks_writes(arr2d) -> None:
    a, expected = arr2d
    a.oindex[[0, 6], [1, 2]] = [[1, 2], [3, 4]]
    expected[np.ix_([0, 6], [1, 2])] = [[1, 2], [3, 4]]
    a.vindex[[1, 5], [7, 0]] = [-1, -2]
    expected[[1, 5], [7, 0]] = [-1, -2]
    a.blocks[2, 0] = 99
    expected[6:7, 0:4] = 99
    mask = expected > 50
    a.set_mask_selection(mask, 7)
    expected[mask] = 7
    np.testing.assert_array_equal(np.asarray(a), expected)


def test_sharded_selections(tmp_path: pathlib.Path) -> None:
    expected = np.arange(20 * 18, dtype="float64").reshape(20, 18) / 4
    a = zarrkit.create_array(
        tmp_path / "s.zarr", shape=(20, 18), dtype="float64", chunks=(2, 3), shards=(4, 9)
    )
    assert a.chunks == (2, 3)
    assert a.shards == (4, 9)
    a[:] = expected
    assert a.nchunks == 10
    assert a.nchunks_initialized == 10
    np.testing.assert_array_equal(a[::-3, 1::4], expected[::-3, 1::4])
    np.testing.assert_array_equal(a.oindex[[19, 0], [17, 2]], expected[np.ix_([19, 0], [17, 2])])
    np.testing.assert_array_equal(a.vindex[[3, 4], [5, 6]], [14.75, 19.5])
    np.testing.assert_array_equal(a.blocks[4, 1], expected[16:20, 9:18])
    a[5:7, ::-1] = 0.5
    expected[5:7, ::-1] = 0.5
    np.testing.assert_array_equal(a[...], expected)


def test_missing_chunks_read_as_the_fill_value(tmp_path: pathlib.Path) -> None:
    a = zarrkit.create_array(
        tmp_path / "f.zarr", shape=(10,), dtype="float32", chunks=(3,), fill_value=np.nan
    )
    a[4] = 1.5
    assert a.nchunks_initialized == 1
    got = a[...]
    assert got[4] == 1.5
    assert np.isnan(got[[0, 3, 5, 9]]).all()
    assert np.isnan(a.fill_value)


THREE_D = [
    (slice(None, None, -1), 1, slice(None, None, -2)),
    ([0, 2], slice(None), [1, 3]),  # advanced indices apart: broadcast dims first
    (slice(None), [0, 2], [1, 3]),  # side by side: they stay in place
    (Ellipsis, [4, 0]),
    (None, [1], Ellipsis, None),
    (np.array([True, False, True]), slice(1, None), -1),
    (np.eye(3, 4, dtype=bool), [0, 4, 2]),  # a 2-d mask of 3 points with 3 indices
    (1, np.array([[0, 1], [3, 2]]), slice(None, None, -3)),
    (slice(-1, None, -2), slice(3, -5, -1), slice(4, None, -4)),
]


@pytest.mark.parametrize("key", THREE_D, ids=repr)
def test_three_dimensions_read_and_write_as_numpy(tmp_path: pathlib.Path, key) -> None:
    expected = np.arange(3 * 4 * 5, dtype="int16").reshape(3, 4, 5)
    a = zarrkit.create_array(tmp_path / "c.zarr", shape=(3, 4, 5), dtype="int16", chunks=(2, 3, 2))
    a[...] = expected
    np.testing.assert_array_equal(a[key], expected[key])
    assert a[key].shape == expected[key].shape
    value = -np.arange(expected[key].size, dtype="int16").reshape(expected[key].shape)
    a[key] = value
    expected[key] = value
    np.testing.assert_array_equal(a[...], expected)
