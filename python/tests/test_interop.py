"""Arrays written by zarr-python 3.1.6 read by zarrkit, and the reverse."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
import zarr

import zarrkit

DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "datetime64[ns]",
    "timedelta64[s]",
]


def values(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    n = int(np.prod(shape))
    dt = np.dtype(dtype)
    if dt.kind == "b":
        v = np.arange(n) % 3 == 0
    elif dt.kind == "c":
        v = np.arange(n) * (1 - 0.5j)
    elif dt.kind in "mM":
        v = (np.arange(n, dtype="int64") * 1_000_003 - 7).view(dt)
    else:
        v = np.arange(n) % 120
    return np.asarray(v).astype(dt).reshape(shape)


@pytest.mark.parametrize("zarr_format", [3, 2])
@pytest.mark.parametrize("dtype", DTYPES)
def test_zarr_python_writes_zarrkit_reads(tmp_path: pathlib.Path, dtype: str, zarr_format: int) -> None:
    expected = values(dtype, (9, 5))
    z = zarr.create_array(
        store=str(tmp_path / "z.zarr"), shape=(9, 5), chunks=(4, 2), dtype=dtype,
        zarr_format=zarr_format,
    )
    z[...] = expected
    a = zarrkit.open_array(tmp_path / "z.zarr", mode="r")
    assert a.zarr_format == zarr_format
    assert a.dtype == expected.dtype
    assert a.shape == (9, 5)
    assert a.chunks == (4, 2)
    np.testing.assert_array_equal(a[...], expected)
    np.testing.assert_array_equal(a[::-2, 1], expected[::-2, 1])


@pytest.mark.parametrize("zarr_format", [3, 2])
@pytest.mark.parametrize("dtype", DTYPES)
def test_zarrkit_writes_zarr_python_reads(tmp_path: pathlib.Path, dtype: str, zarr_format: int) -> None:
    expected = values(dtype, (6, 7))
    a = zarrkit.create_array(
        tmp_path / "k.zarr", shape=(6, 7), chunks=(4, 3), dtype=dtype, zarr_format=zarr_format,
        attributes={"units": "m"}, dimension_names=("y", "x") if zarr_format == 3 else None,
    )
    a[...] = expected
    z = zarr.open_array(str(tmp_path / "k.zarr"), mode="r")
    assert z.metadata.zarr_format == zarr_format
    assert z.dtype == expected.dtype
    np.testing.assert_array_equal(z[...], expected)
    assert z.attrs["units"] == "m"
    if zarr_format == 3:
        assert z.metadata.dimension_names == ("y", "x")


def test_sharded_both_ways(tmp_path: pathlib.Path) -> None:
    expected = np.arange(24 * 10, dtype="uint16").reshape(24, 10)
    z = zarr.create_array(
        store=str(tmp_path / "z.zarr"), shape=(24, 10), chunks=(3, 5), shards=(12, 10),
        dtype="uint16",
    )
    z[...] = expected
    a = zarrkit.open_array(tmp_path / "z.zarr", mode="r+")
    assert a.shards == (12, 10)
    assert a.chunks == (3, 5)
    np.testing.assert_array_equal(a[...], expected)
    a[1:23:2, ::-1] = 7
    expected[1:23:2, ::-1] = 7
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "z.zarr"))[...], expected)

    k = zarrkit.create_array(
        tmp_path / "k.zarr", shape=(24, 10), chunks=(3, 5), shards=(12, 10), dtype="uint16",
        compressors=[{"name": "gzip", "configuration": {"level": 1}}],
    )
    k[...] = expected
    z = zarr.open_array(str(tmp_path / "k.zarr"), mode="r")
    assert z.shards == (12, 10)
    assert z.chunks == (3, 5)
    np.testing.assert_array_equal(z[...], expected)


def test_strings_both_ways(tmp_path: pathlib.Path) -> None:
    words = np.array(["a", "", "zarr", "ünïcode", "e"] * 2, dtype=object).reshape(2, 5)
    z = zarr.create_array(store=str(tmp_path / "z.zarr"), shape=(2, 5), chunks=(1, 3), dtype=str)
    z[...] = words
    a = zarrkit.open_array(tmp_path / "z.zarr", mode="r")
    assert a.dtype == np.dtypes.StringDType()
    assert a.dtype == z.dtype
    assert a[...].tolist() == words.tolist()
    assert a[1, ::-1].tolist() == ["e", "ünïcode", "zarr", "", "a"]

    k = zarrkit.create_array(tmp_path / "k.zarr", shape=(2, 5), chunks=(1, 3), dtype=str)
    k[...] = words
    k[0, 0] = "changed"
    got = zarr.open_array(str(tmp_path / "k.zarr"), mode="r")[...]
    assert got[0, 0] == "changed"
    assert got[1].tolist() == words[1].tolist()


def test_groups_both_ways(tmp_path: pathlib.Path) -> None:
    root = zarr.create_group(str(tmp_path / "g.zarr"), attributes={"title": "t"})
    sub = root.create_group("sub")
    sub.create_array("x", shape=(3,), dtype="int8")[...] = [1, 2, 3]
    g = zarrkit.open_group(tmp_path / "g.zarr", mode="r")
    assert g.attrs["title"] == "t"
    assert list(g) == ["sub"]
    assert g["sub/x"][...].tolist() == [1, 2, 3]
    assert isinstance(g["sub"], zarrkit.Group)

    k = zarrkit.create_group(tmp_path / "k.zarr", attributes={"a": [1, 2]})
    k.create_group("c").create_array("y", shape=(2, 2), dtype="float32", fill_value=2.5)
    zg = zarr.open_group(str(tmp_path / "k.zarr"), mode="r")
    assert zg.attrs["a"] == [1, 2]
    np.testing.assert_array_equal(zg["c/y"][...], np.full((2, 2), 2.5, dtype="float32"))


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_consolidated_metadata_for_zarr_python(tmp_path: pathlib.Path, zarr_format: int) -> None:
    root = zarrkit.create_group(tmp_path / "c.zarr", zarr_format=zarr_format)
    root.create_group("g").create_array("x", shape=(4,), dtype="f8", fill_value=0.25)
    g = zarrkit.consolidate_metadata(tmp_path / "c.zarr")
    assert sorted(g) == ["g"]
    if zarr_format == 2:
        assert (tmp_path / "c.zarr" / ".zmetadata").is_file()
    else:
        assert "x" in str(g.metadata["consolidated_metadata"])
    z = zarr.open_consolidated(str(tmp_path / "c.zarr"), zarr_format=zarr_format)
    assert z.metadata.consolidated_metadata is not None
    assert sorted(z.metadata.consolidated_metadata.flattened_metadata) == ["g", "g/x"]
    np.testing.assert_array_equal(z["g/x"][...], [0.25] * 4)
