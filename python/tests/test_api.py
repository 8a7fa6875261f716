"""The zarr-python-like API: creation, modes, groups, attributes, metadata."""

from __future__ import annotations

import pathlib
import threading

import numpy as np
import pytest

import zarrkit


def test_create_array_describes_itself(tmp_path: pathlib.Path) -> None:
    a = zarrkit.create_array(
        tmp_path / "a.zarr", name="t", shape=(10, 8), dtype="<f8", chunks=(4, 4),
        fill_value=-1.0, dimension_names=("y", "x"), attributes={"k": 1},
    )
    assert a.path == "/t"
    assert a.shape == (10, 8)
    assert a.ndim == 2
    assert a.size == 80
    assert a.dtype == np.dtype("float64")
    assert a.nbytes == 640
    assert a.chunks == (4, 4)
    assert a.shards is None
    assert a.nchunks == 6
    assert a.nchunks_initialized == 0
    assert a.fill_value == -1.0
    assert a.dimension_names == ("y", "x")
    assert a.zarr_format == 3
    md = a.metadata
    assert md["zarr_format"] == 3
    assert md["node_type"] == "array"
    assert md["shape"] == [10, 8]
    assert md["data_type"] == "float64"
    assert md["chunk_grid"]["configuration"]["chunk_shape"] == [4, 4]
    assert [c["name"] for c in md["codecs"]] == ["bytes", "zstd"]
    assert md["attributes"] == {"k": 1}
    assert a[0, 0] == -1.0


def test_v2_creation_and_compressors(tmp_path: pathlib.Path) -> None:
    a = zarrkit.create_array(tmp_path / "v2.zarr", shape=(5,), dtype="u2", chunks=(2,), zarr_format=2)
    assert a.metadata["zarr_format"] == 2
    assert a.metadata["dtype"] == "<u2"
    b = zarrkit.create_array(tmp_path / "n.zarr", shape=(5,), dtype="u2", chunks=(2,), compressors=None)
    assert [c["name"] for c in b.metadata["codecs"]] == ["bytes"]
    b[:] = [1, 2, 3, 4, 5]
    assert b[...].tolist() == [1, 2, 3, 4, 5]


def test_attrs_write_through(tmp_path: pathlib.Path) -> None:
    a = zarrkit.create_array(tmp_path / "a.zarr", shape=(2,), dtype="i1")
    a.attrs["units"] = "K"
    a.attrs.update({"scale": 0.5, "list": [1, None]})
    del a.attrs["list"]
    again = zarrkit.open_array(tmp_path / "a.zarr", mode="r")
    assert dict(again.attrs) == {"units": "K", "scale": 0.5}
    g = zarrkit.create_group(tmp_path / "g.zarr")
    g.attrs["title"] = "x"
    assert zarrkit.open_group(tmp_path / "g.zarr", mode="r").attrs.asdict() == {"title": "x"}
    assert g.attrs["title"] == "x"


def test_modes(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "m.zarr"
    with pytest.raises(FileNotFoundError):
        zarrkit.open(path, mode="r")
    with pytest.raises(FileNotFoundError):
        zarrkit.open(path, mode="r+")
    g = zarrkit.open(path, mode="a")
    assert isinstance(g, zarrkit.Group)
    assert isinstance(zarrkit.open(path, mode="a"), zarrkit.Group)
    with pytest.raises(FileExistsError):
        zarrkit.open(path, mode="w-")
    a = zarrkit.open(path, mode="w", shape=(3,), dtype="i4")
    assert isinstance(a, zarrkit.Array)
    a[:] = 5
    r = zarrkit.open_array(path, mode="r")
    assert r.read_only
    with pytest.raises(zarrkit.ReadOnlyError):
        r[0] = 1
    with pytest.raises(PermissionError):
        r.attrs["x"] = 1
    w = zarrkit.open_array(path, mode="r+")
    w[0] = 1
    assert r[...].tolist() == [1, 5, 5]
    # "w" replaces: a new, empty group.
    g = zarrkit.open_group(path, mode="w")
    assert list(g) == []
    with pytest.raises(ValueError):
        zarrkit.open(path, mode="x")  # type: ignore[arg-type]


def test_group_mapping(tmp_path: pathlib.Path) -> None:
    root = zarrkit.create_group(tmp_path / "h.zarr")
    a = root.create_array("a", shape=(2, 2), dtype="i2")
    sub = root.create_group("sub", attributes={"n": 1})
    sub.create_array("b", shape=(3,), dtype="f4", fill_value=1.5)
    assert a.path == "/a"
    assert list(root) == ["a", "sub"]
    assert len(root) == 2
    assert "sub/b" in root
    assert "nope" not in root
    assert [n for n, _ in root.arrays()] == ["a"]
    assert [n for n, _ in root.groups()] == ["sub"]
    assert list(root.group_keys()) == ["sub"]
    assert isinstance(root["sub/b"], zarrkit.Array)
    assert root["sub/b"][...].tolist() == [1.5, 1.5, 1.5]
    assert root.require_group("sub").attrs["n"] == 1
    assert root.require_group("new").path == "/new"
    assert "b (3,) float32" in root.tree()
    with pytest.raises(KeyError):
        root["missing"]
    with pytest.raises(FileNotFoundError):
        root["missing/x"]
    del root["new"]
    assert "new" not in root


def test_resize_and_append(tmp_path: pathlib.Path) -> None:
    a = zarrkit.create_array(tmp_path / "r.zarr", shape=(4, 3), dtype="i8", chunks=(2, 2))
    a[...] = np.arange(12).reshape(4, 3)
    a.resize((2, 3))
    assert a.shape == (2, 3)
    assert zarrkit.open_array(tmp_path / "r.zarr", mode="r").shape == (2, 3)
    assert a.append(np.full((1, 3), 9)) == (3, 3)
    np.testing.assert_array_equal(a[...], [[0, 1, 2], [3, 4, 5], [9, 9, 9]])


def test_threads_read_and_write_one_array(tmp_path: pathlib.Path) -> None:
    a = zarrkit.create_array(tmp_path / "t.zarr", shape=(8, 1000), dtype="u4", chunks=(1, 1000))
    def work(i: int) -> None:
        a[i] = np.arange(1000, dtype="u4") + i
        assert a[i, 999] == 999 + i
    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    np.testing.assert_array_equal(a[:, 0], np.arange(8))


def test_dtypes_round_trip(tmp_path: pathlib.Path) -> None:
    for dtype in ["?", "i1", "u8", "f2", "c16", "M8[ms]", "m8[us]", "S3", "U4"]:
        a = zarrkit.create_array(tmp_path / f"{dtype.replace('[', '_').replace(']', '')}.zarr",
                                 shape=(3,), dtype=dtype, chunks=(2,))
        assert a.dtype == np.dtype(dtype), dtype
        v = np.array([1, 0, 1]).astype(dtype) if dtype not in ("S3", "U4") else np.array(["ab", "", "xyz"], dtype=dtype)
        a[:] = v
        np.testing.assert_array_equal(a[...], v)


def test_positional_mode_and_storage_options(tmp_path: pathlib.Path) -> None:
    zarrkit.create_array(tmp_path / "p.zarr", shape=(2,), dtype="u1", fill_value=4)
    a = zarrkit.open(tmp_path / "p.zarr", "r")
    assert isinstance(a, zarrkit.Array)
    assert a[...].tolist() == [4, 4]
    # Options reach the store's backend: an unknown one is refused by name.
    with pytest.raises(OSError) as e:
        zarrkit.open_array("s3://bucket/p.zarr", mode="r",
                           storage_options={"anon": True, "not_an_option": "x"})
    assert "not_an_option" in str(e.value)


def test_info(tmp_path: pathlib.Path) -> None:
    a = zarrkit.create_array(tmp_path / "i.zarr", shape=(4, 4), dtype="i2", chunks=(2, 2), shards=(4, 4))
    info = a.info
    assert "Shape              : (4, 4)" in info
    assert "Chunk shape        : (2, 2)" in info
    assert "Shard shape        : (4, 4)" in info
    assert "sharding_indexed" in info
    assert "int16 (int16)" in info


def test_open_array_modes_that_create(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "oa.zarr"
    with pytest.raises(FileNotFoundError):
        zarrkit.open_array(path, mode="a")
    with pytest.raises(ValueError):
        zarrkit.open_array(path, mode="w")
    a = zarrkit.open_array(path, mode="a", shape=(2, 3), dtype="u2", chunks=(1, 3))
    a[1] = 7
    assert zarrkit.open_array(path, mode="a")[...].tolist() == [[0, 0, 0], [7, 7, 7]]
    b = zarrkit.open_array(path, mode="w", shape=(1,), dtype="f4", zarr_format=2)
    assert b.zarr_format == 2
    assert b.shape == (1,)
    with pytest.raises(FileExistsError):
        zarrkit.open_array(path, mode="w-", shape=(1,), dtype="f4")


def test_string_arrays(tmp_path: pathlib.Path) -> None:
    a = zarrkit.create_array(tmp_path / "s.zarr", shape=(2, 3), dtype=str, chunks=(1, 2))
    assert a.dtype == np.dtypes.StringDType()
    a[...] = "x"
    a[1, ::-1] = ["c", "bb", ""]
    a.vindex[[0], [1]] = ["mid"]
    got = a[...]
    assert got.dtype == np.dtypes.StringDType()
    assert got.tolist() == [["x", "mid", "x"], ["", "bb", "c"]]
    assert a[1, 1] == "bb"
    assert a.oindex[[1, 0], [2]].tolist() == [["c"], ["x"]]


def test_the_benchmark_pass_in_rust_writes_and_reads_what_the_api_does(tmp_path: pathlib.Path) -> None:
    # `_rust_pass` is bench_python.py's Rust side of its paired comparison:
    # it must do the workload, not only time something.
    a = zarrkit.create_array(tmp_path / "b.zarr", shape=(6, 10), dtype="<u2", chunks=(4, 4))
    data = np.arange(60, dtype="<u2").reshape(6, 10)
    seconds = a._native._rust_pass("write", [((0, 6), (0, 10))], data.reshape(-1).view(np.uint8))
    assert seconds > 0
    np.testing.assert_array_equal(a[...], data)
    assert a._native._rust_pass("read", [((1, 5), (2, 9)), ((0, 6), (0, 10))]) > 0
    # The reads decode the chunks: a damaged one fails, named.
    (tmp_path / "b.zarr" / "c" / "1" / "2").write_bytes(b"not zstd")
    with pytest.raises(zarrkit.errors.ZarrkitError, match="c/1/2"):
        a._native._rust_pass("read", [((0, 6), (0, 10))])
    assert a._native._rust_pass("read", [((0, 4), (0, 8))]) > 0
    with pytest.raises(zarrkit.errors.SelectionError):
        a._native._rust_pass("read", [((0, 7), (0, 10))])
    with pytest.raises(zarrkit.errors.InvalidValueError, match="expected"):
        a._native._rust_pass("write", [((0, 6), (0, 10))])
