"""Every data type zarrkit and zarr-python 3.1.6 share, both ways, v3 and v2.

An array of each type is written in part (so some chunks are never
stored and read as the fill value) by one implementation's Python API and
read by the other: the same dtype, the same fill value (NaN, NaT and
infinities included) and the same bytes in every element (so -0.0, NaN
and NaT are checked exactly, not only as equal values).
"""

from __future__ import annotations

import json
import pathlib
import warnings
from typing import Any

import numpy as np
import pytest
import zarr

import zarrkit

STRING = np.dtypes.StringDType()
NAN = float("nan")
INF = float("inf")
NAT = "NaT"

# (dtype, a fill value that is not the type's default, v2 too). "str" is
# a variable-length string (StringDType in both).
CASES: list[tuple[str, Any]] = [
    ("bool", True),
    ("int8", -7),
    ("int16", -300),
    ("int32", 2**31 - 1),
    ("int64", -(2**63)),
    ("uint8", 255),
    ("uint16", 7),
    ("uint32", 2**32 - 1),
    ("uint64", 2**64 - 1),
    ("float16", NAN),
    ("float32", -INF),
    ("float64", NAN),
    ("complex64", complex(NAN, 1.5)),
    ("complex128", complex(1.0, -INF)),
    ("datetime64[Y]", 30),
    ("datetime64[M]", NAT),
    ("datetime64[W]", -2),
    ("datetime64[D]", NAT),
    ("datetime64[h]", 5),
    ("datetime64[m]", NAT),
    ("datetime64[s]", 1_700_000_000),
    ("datetime64[ms]", NAT),
    ("datetime64[us]", -1),
    ("datetime64[ns]", NAT),
    ("datetime64[ps]", 12),
    ("datetime64[fs]", NAT),
    ("datetime64[as]", 3),
    ("datetime64[10s]", 6),
    ("timedelta64[h]", NAT),
    ("timedelta64[s]", -9),
    ("timedelta64[ms]", NAT),
    ("timedelta64[ns]", 1),
    ("timedelta64[25us]", NAT),
    ("S1", b"z"),
    ("S5", b"ab"),
    ("U1", "é"),
    ("U3", "ü€"),
    ("str", "fill"),
]

SHAPE = (7, 5)
CHUNKS = (3, 2)
# The part written: chunks (0..2, 0..1) are stored whole or in part, the
# others never, so they read as the fill value.
WRITTEN = (slice(0, 5), slice(0, 3))


def np_dtype(name: str) -> np.dtype[Any]:
    return STRING if name == "str" else np.dtype(name)


def fill_scalar(name: str, fill: Any) -> Any:
    """The fill value as a NumPy scalar of the type (or a str)."""
    dtype = np_dtype(name)
    if name == "str":
        return fill
    if dtype.kind in "mM":
        ticks = np.iinfo(np.int64).min if fill == NAT else fill
        return np.array(ticks, dtype=np.int64).view(dtype)[()]
    return np.array(fill, dtype=dtype)[()]


def written_values(name: str) -> np.ndarray:
    """The values of WRITTEN's box: the type's extremes and specials."""
    dtype = np_dtype(name)
    shape = (5, 3)
    n = 15
    kind = dtype.kind
    if kind == "b":
        v: np.ndarray = np.arange(n) % 3 == 0
    elif kind in "iu":
        info = np.iinfo(dtype)
        v = np.array([info.min, info.max, 0, 1, info.max - 1] * 3, dtype=dtype)
    elif kind == "f":
        v = np.array(
            [NAN, INF, -INF, -0.0, 0.0, 1.5, -2.25, 1e-3, 3e4] + [i / 7 for i in range(6)],
            dtype=dtype,
        )
    elif kind == "c":
        v = np.array(
            [complex(NAN, 1), complex(-0.0, INF), complex(2.5, -0.0)]
            + [complex(i, -i / 3) for i in range(12)],
            dtype=dtype,
        )
    elif kind in "mM":
        ints = np.array(
            [np.iinfo(np.int64).min, 0, -1, 1, 1000] + list(range(-30, 300, 33)), dtype=np.int64
        )
        v = ints.view(dtype)
    elif kind == "S":
        v = np.array(
            [b"", b"a", b"ab\x00c"[: dtype.itemsize], b"xyz"[: dtype.itemsize], b"\xff"] * 3,
            dtype=dtype,
        )
    elif kind == "U":
        v = np.array(
            ["", "a", "ü€x"[: dtype.itemsize // 4], "z", "日本"[: dtype.itemsize // 4]] * 3,
            dtype=dtype,
        )
    else:
        v = np.array(
            ["", "a", "zarr", "ünïcode", "日本語", "x" * 40, "null\x00inside"] * 2 + ["e"],
            dtype=dtype,
        )
    return v[:n].reshape(shape)


def expected_array(name: str, fill: Any) -> np.ndarray:
    out = np.full(SHAPE, fill_scalar(name, fill), dtype=np_dtype(name))
    out[WRITTEN] = written_values(name)
    return out


def assert_identical(got: np.ndarray, want: np.ndarray) -> None:
    """Same dtype, shape and elements: byte for byte for fixed-size types."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    if want.dtype.kind == "T":
        assert got.tolist() == want.tolist()
    else:
        assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes(), (
            got,
            want,
        )


def assert_same_fill(got: Any, name: str, fill: Any) -> None:
    want = fill_scalar(name, fill)
    if name == "str":
        assert got == want
        return
    dtype = np_dtype(name)
    assert np.array(got, dtype=dtype).tobytes() == np.array(want, dtype=dtype).tobytes(), (
        got,
        want,
    )


def zarr_dtype(name: str) -> Any:
    return str if name == "str" else name


# v3, v3 with shards (of 2×2 inner chunks), v2.
FORMATS = ["v3", "v3-sharded", "v2"]
IDS = [name for name, _ in CASES]


def layout(fmt: str) -> dict[str, Any]:
    """The keywords both `create_array`s take for `fmt`."""
    shards = {"shards": (6, 4)} if fmt == "v3-sharded" else {}
    return {"zarr_format": 2 if fmt == "v2" else 3, "chunks": CHUNKS, **shards}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(("name", "fill"), CASES, ids=IDS)
def test_zarrkit_writes_zarr_python_reads(
    tmp_path: pathlib.Path, name: str, fill: Any, fmt: str
) -> None:
    path = tmp_path / "k.zarr"
    a = zarrkit.create_array(
        path,
        shape=SHAPE,
        dtype=str if name == "str" else name,
        fill_value=fill_scalar(name, fill),
        **layout(fmt),
    )
    a[WRITTEN] = written_values(name)
    expected = expected_array(name, fill)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr-python's notes on unstable v3 types
        z = zarr.open_array(str(path), mode="r")
        assert z.metadata.zarr_format == layout(fmt)["zarr_format"]
        assert z.shards == layout(fmt).get("shards")
        assert_same_fill(z.fill_value, name, fill)
        assert_identical(z[...], expected)
        # A selection too (zarr-python refuses negative steps), and what
        # zarr-python writes back reads in zarrkit.
        assert_identical(z[1:6:2, 1:], expected[1:6:2, 1:])
        # (Not a NaN: zarr-python takes a chunk of `nan+1j` for one of the
        # fill value `nan+1.5j` and does not store it.)
        zw = zarr.open_array(str(path), mode="r+")
        zw[6, 4] = expected[1, 1]
    expected[6, 4] = expected[1, 1]
    assert_identical(zarrkit.open_array(path, mode="r")[...], expected)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(("name", "fill"), CASES, ids=IDS)
def test_zarr_python_writes_zarrkit_reads(
    tmp_path: pathlib.Path, name: str, fill: Any, fmt: str
) -> None:
    path = tmp_path / "z.zarr"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.create_array(
            store=str(path),
            shape=SHAPE,
            dtype=zarr_dtype(name),
            fill_value=fill_scalar(name, fill),
            **layout(fmt),
        )
        z[WRITTEN] = written_values(name)
    expected = expected_array(name, fill)
    a = zarrkit.open_array(path, mode="r+")
    assert a.zarr_format == layout(fmt)["zarr_format"]
    assert a.shards == layout(fmt).get("shards")
    assert a.dtype == np_dtype(name)
    assert_same_fill(a.fill_value, name, fill)
    assert_identical(a[...], expected)
    assert_identical(a[::-2, 1:4], expected[::-2, 1:4])
    # zarrkit writes into zarr-python's array; zarr-python reads it back.
    a[6, 4] = expected[1, 1]
    expected[6, 4] = expected[1, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_identical(zarr.open_array(str(path), mode="r")[...], expected)


@pytest.mark.parametrize("name", ["int32", "float64", "complex128", "datetime64[ms]", "U2"])
def test_big_endian_v2_from_zarr_python(tmp_path: pathlib.Path, name: str) -> None:
    """zarr-python writes v2 big-endian arrays (`>i4`) as NumPy gives them;
    zarrkit reads the same values (in the native byte order)."""
    dtype = np.dtype(name).newbyteorder(">")
    values = written_values(name).astype(dtype)
    z = zarr.create_array(
        store=str(tmp_path / "be.zarr"), shape=(5, 3), chunks=(2, 2), dtype=dtype, zarr_format=2
    )
    z[...] = values
    assert json.loads((tmp_path / "be.zarr" / ".zarray").read_text())["dtype"].startswith(">")
    got = zarrkit.open_array(tmp_path / "be.zarr", mode="r")[...]
    assert got.dtype == dtype.newbyteorder("=")
    assert got.astype(dtype).tobytes() == values.tobytes()


def test_variable_length_bytes_from_zarr_python(tmp_path: pathlib.Path) -> None:
    """zarr-python's `variable_length_bytes` reads as an object array of
    bytes (zarrkit creates no such array from Python yet)."""
    values = np.array([b"", b"a", b"\x00\xff", b"zarr" * 10, b"x", b"yz"], dtype=object).reshape(
        2, 3
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.create_array(
            store=str(tmp_path / "vb.zarr"),
            shape=(3, 3),
            chunks=(2, 2),
            dtype=zarr.dtype.VariableLengthBytes(),
        )
        z[:2] = values
    a = zarrkit.open_array(tmp_path / "vb.zarr", mode="r")
    assert a.dtype == np.dtype(object)
    got = a[...]
    assert got[:2].tolist() == values.tolist()
    assert got[2].tolist() == [b"", b"", b""]
