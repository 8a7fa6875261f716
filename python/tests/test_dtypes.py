"""Structured, raw and small-float data types, `order`, and `info`."""

from __future__ import annotations

import hashlib
import pathlib
import tomllib
import warnings

import numpy as np
import pytest
import zarr

import zarrkit

from conftest import REPO

TESTDATA = REPO / "testdata"
FIXTURES = tomllib.loads((TESTDATA / "fixtures.toml").read_text())["fixture"]
STRUCTS = [f for f in FIXTURES if f["data_type"] == "struct"]
SMALL_COMPLEX = [f for f in FIXTURES if f["data_type"].startswith("complex_float")]

RECORD = np.dtype([("a", "<u1"), ("b", "<i4"), ("c", "<f8"), ("d", "S3")])
# v2 structured types may have sub-array fields (v3 `struct` may not).
NESTED = np.dtype([("a", "<u1"), ("p", [("x", "<i2"), ("y", ">f4")]), ("c", "<f8", (2,))])


def records(n: int) -> np.ndarray:
    out = np.zeros(n, dtype=RECORD)
    out["a"] = np.arange(n) % 250
    out["b"] = np.arange(n) * -1000
    out["c"] = np.arange(n) / 4
    out["d"] = [f"r{i}".encode() for i in range(n)]
    return out


@pytest.mark.parametrize("fixture", STRUCTS, ids=[f["name"] for f in STRUCTS])
def test_struct_fixtures_read_as_structured_dtypes(fixture: dict) -> None:
    assert len(STRUCTS) == 8
    a = zarrkit.open_array(TESTDATA / fixture["store"], path=fixture["node"], mode="r")
    assert a.dtype.names is not None and len(a.dtype.names) >= 2
    values = a[...]
    assert values.dtype == a.dtype and values.shape == tuple(fixture["shape"])
    little = values.astype(values.dtype.newbyteorder("<"))
    assert hashlib.sha256(little.tobytes()).hexdigest() == fixture["sha256"]
    # A field of a strided selection is NumPy's.
    name = values.dtype.names[0]
    np.testing.assert_array_equal(a[::-1][name], values[::-1][name])


@pytest.mark.parametrize("fixture", SMALL_COMPLEX, ids=[f["name"] for f in SMALL_COMPLEX])
def test_small_complex_fixtures_read_as_raw_bytes(fixture: dict) -> None:
    a = zarrkit.open_array(TESTDATA / fixture["store"], path=fixture["node"], mode="r")
    assert a.dtype == np.dtype("V2")
    assert hashlib.sha256(a[...].tobytes()).hexdigest() == fixture["sha256"]


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_structured_arrays_round_trip(tmp_path: pathlib.Path, zarr_format: int) -> None:
    fill = np.array((7, -1, 0.5, b"f"), dtype=RECORD)
    a = zarrkit.create_array(
        tmp_path / "s.zarr", shape=(10,), dtype=RECORD, chunks=(4,), fill_value=fill,
        zarr_format=zarr_format,
    )
    assert a.dtype == RECORD
    assert a.data_type == "struct"
    assert a.fill_value.tolist() == (7, -1, 0.5, b"f")
    expected = records(10)
    a[2:9] = expected[2:9]
    got = zarrkit.open_array(tmp_path / "s.zarr", mode="r")[...]
    assert got.dtype == RECORD
    assert got[0].tolist() == (7, -1, 0.5, b"f")
    np.testing.assert_array_equal(got[2:9], expected[2:9])
    a[0] = (1, 2, 3.0, b"xyz")
    assert a[0].tolist() == (1, 2, 3.0, b"xyz")
    # A big-endian dtype is stored the same, in little-endian records.
    b = zarrkit.create_array(tmp_path / "b.zarr", shape=(3,), dtype=RECORD.newbyteorder(">"), chunks=(3,))
    b[...] = expected[:3].astype(RECORD.newbyteorder(">"))
    np.testing.assert_array_equal(b[...], expected[:3])


def test_nested_and_sub_array_fields_in_v2(tmp_path: pathlib.Path) -> None:
    a = zarrkit.create_array(tmp_path / "n.zarr", shape=(4,), dtype=NESTED, chunks=(3,), zarr_format=2)
    assert a.metadata["dtype"] == [["a", "|u1"], ["p", [["x", "<i2"], ["y", "<f4"]]], ["c", "<f8", [2]]]
    expected = np.zeros(4, dtype=NESTED)
    expected["a"] = [1, 2, 3, 4]
    expected["p"]["x"] = [-1, -2, -3, -4]
    expected["p"]["y"] = [0.5, 1.5, 2.5, 3.5]
    expected["c"] = [[1, 2], [3, 4], [5, 6], [7, 8]]
    a[...] = expected
    got = zarrkit.open_array(tmp_path / "n.zarr", mode="r")[::-1]
    assert got.dtype.names == ("a", "p", "c") and got.dtype["c"].shape == (2,)
    np.testing.assert_array_equal(got, expected[::-1])
    assert got["p"]["y"].tolist() == [3.5, 2.5, 1.5, 0.5]


def test_structured_v2_interop_with_zarr_python(tmp_path: pathlib.Path) -> None:
    expected = records(9)
    a = zarrkit.create_array(tmp_path / "k.zarr", shape=(9,), dtype=RECORD, chunks=(4,), zarr_format=2)
    a[...] = expected
    z = zarr.open_array(str(tmp_path / "k.zarr"), mode="r")
    assert z.dtype == RECORD
    np.testing.assert_array_equal(z[...], expected)
    z2 = zarr.create_array(str(tmp_path / "z.zarr"), shape=(9,), chunks=(5,), dtype=RECORD, zarr_format=2)
    z2[...] = expected
    got = zarrkit.open_array(tmp_path / "z.zarr", mode="r")
    assert got.dtype == RECORD
    np.testing.assert_array_equal(got[...], expected)


def test_padded_structured_dtypes_are_refused(tmp_path: pathlib.Path) -> None:
    padded = np.dtype([("a", "u1"), ("b", "<i4")], align=True)
    with pytest.raises(zarrkit.DataTypeError, match="padding"):
        zarrkit.create_array(tmp_path / "p.zarr", shape=(2,), dtype=padded)


def test_raw_and_v3_only_types_are_v_bytes(tmp_path: pathlib.Path) -> None:
    r = zarrkit.create_array(tmp_path / "r.zarr", shape=(4,), dtype="r16", chunks=(2,), fill_value=b"\x01\x02")
    assert (r.data_type, r.dtype) == ("r16", np.dtype("V2"))
    assert r[3].tobytes() == b"\x01\x02"
    r[1:3] = np.array([b"ab", b"cd"], dtype="V2")
    assert r[...].tobytes() == b"\x01\x02abcd\x01\x02"
    v = zarrkit.create_array(tmp_path / "v.zarr", shape=(2,), dtype="V3", chunks=(2,))
    assert (v.data_type, v[...].tobytes()) == ("r24", bytes(6))
    # bfloat16: 1.0 is 0x3F80, stored little-endian.
    b = zarrkit.create_array(
        tmp_path / "b.zarr", shape=(3,), dtype="bfloat16", chunks=(3,), fill_value=b"\x80\x3f"
    )
    assert (b.data_type, b.dtype) == ("bfloat16", np.dtype("V2"))
    assert b.metadata["fill_value"] == 1.0
    b[1] = np.frombuffer(b"\x00\xc0", dtype="V2")[0]  # -2.0
    assert zarrkit.open_array(tmp_path / "b.zarr", mode="r")[...].tobytes() == b"\x80\x3f\x00\xc0\x80\x3f"
    f8 = zarrkit.create_array(tmp_path / "f8.zarr", shape=(2,), dtype="float8_e4m3", chunks=(2,))
    assert f8.dtype == np.dtype("V1") and f8.metadata["data_type"] == "float8_e4m3"
    with pytest.raises(zarrkit.DataTypeError):
        zarrkit.create_array(tmp_path / "x.zarr", shape=(2,), dtype="bfloat16", fill_value=1.5)


def test_order_f_v2_round_trips_with_zarr_python(tmp_path: pathlib.Path) -> None:
    expected = np.arange(7 * 5 * 3, dtype="int32").reshape(7, 5, 3)
    a = zarrkit.create_array(
        tmp_path / "f.zarr", shape=(7, 5, 3), dtype="int32", chunks=(4, 2, 3), order="F", zarr_format=2
    )
    a[...] = expected
    assert a.metadata["order"] == "F" and a.order == "F"
    assert a.metadata["compressor"]["id"] == "zstd" and a.metadata["filters"] is None
    z = zarr.open_array(str(tmp_path / "f.zarr"), mode="r")
    assert z.order == "F"
    np.testing.assert_array_equal(z[...], expected)
    # The stored chunk (0, 0, 0) is in Fortran order: its first dimension varies fastest.
    import numcodecs

    raw = numcodecs.Zstd().decode((tmp_path / "f.zarr" / "0.0.0").read_bytes())
    chunk = np.frombuffer(raw, dtype="<i4").reshape((4, 2, 3), order="F")
    np.testing.assert_array_equal(chunk, expected[:4, :2, :3])
    # zarr-python's F-order v2 arrays read right.
    zf = zarr.create_array(
        str(tmp_path / "zf.zarr"), shape=(6, 4), chunks=(4, 3), dtype="float64", order="F", zarr_format=2
    )
    zf[...] = np.arange(24).reshape(6, 4) * 1.5
    got = zarrkit.open_array(tmp_path / "zf.zarr", mode="r")
    assert got.order == "F"
    np.testing.assert_array_equal(got[...], np.arange(24).reshape(6, 4) * 1.5)
    np.testing.assert_array_equal(got[::-2, [3, 0]], (np.arange(24).reshape(6, 4) * 1.5)[::-2, [3, 0]])


def test_order_on_v3_warns_and_changes_nothing(tmp_path: pathlib.Path) -> None:
    with pytest.warns(RuntimeWarning, match="no effect for Zarr format 3"):
        a = zarrkit.create_array(tmp_path / "o.zarr", shape=(3, 4), dtype="uint8", order="F")
    assert a.order == "C"
    assert [c["name"] for c in a.metadata["codecs"]] == ["bytes", "zstd"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        zarrkit.create_array(tmp_path / "c.zarr", shape=(3, 4), dtype="uint8", order="C", zarr_format=2)
    with pytest.raises(zarrkit.InvalidValueError):
        zarrkit.create_array(tmp_path / "k.zarr", shape=(3,), dtype="uint8", order="K", zarr_format=2)


def test_array_info(tmp_path: pathlib.Path) -> None:
    a = zarrkit.create_array(
        tmp_path / "i.zarr", shape=(64, 64), dtype="int16", chunks=(16, 16), shards=(32, 64)
    )
    a[:32] = 1
    info = a.info
    assert isinstance(info, str) and repr(info) == str(info)
    lines = dict(line.split(" : ", 1) for line in info.splitlines())
    lines = {k.strip(): v for k, v in lines.items()}
    assert lines["Type"] == "Array"
    assert lines["Zarr format"] == "3"
    assert lines["Data type"] == "int16 (int16)"
    assert lines["Fill value"] == "np.int16(0)"
    assert lines["Shape"] == "(64, 64)"
    assert lines["Shard shape"] == "(32, 64)"
    assert lines["Chunk shape"] == "(16, 16)"
    assert lines["Order"] == "C"
    assert lines["Read-only"] == "False"
    assert lines["Store type"] == "LocalStore"
    assert lines["Filters"] == "[]"
    assert lines["Serializer"].startswith('{"name": "sharding_indexed"')
    assert lines["Compressors"] == "[]"
    assert lines["No. bytes"] == "8192 (8.0K)"
    stored = (tmp_path / "i.zarr" / "c" / "0" / "0").stat().st_size
    assert lines["No. bytes stored"] == str(stored)
    complete = a.info_complete()
    assert "Shards Initialized : 1" in complete
    v2 = zarrkit.create_array(tmp_path / "v2.zarr", shape=(5,), dtype="<f8", zarr_format=2, order="F")
    lines = {k.strip(): v for k, v in (line.split(" : ", 1) for line in v2.info.splitlines())}
    assert lines["Zarr format"] == "2"
    assert "Serializer" not in lines
    assert lines["Compressors"] == '[{"id": "zstd", "level": 0}]'
    assert lines["No. bytes stored"] == "0"


def test_group_info(tmp_path: pathlib.Path) -> None:
    g = zarrkit.create_group(tmp_path / "g.zarr", zarr_format=2)
    g.create_group("sub")
    g.create_array("x", shape=(2,), dtype="i1")
    r = zarrkit.open_group(tmp_path / "g.zarr", mode="r")
    assert r.info == (
        "Name        : /\nType        : Group\nZarr format : 2\nRead-only   : True\n"
        "Store type  : LocalStore"
    )
    assert r.info_complete().endswith("No. members : 2\nNo. arrays  : 1\nNo. groups  : 1")
