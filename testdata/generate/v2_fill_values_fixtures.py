"""Writes testdata/fixtures/v2/zarr-python-2.18-fill-values.zarr: one v2
array per data type and fill-value spelling that zarr-python 2.x wrote, made
by the real writer, and their manifest entries (issue #9, "the rest of the
same class").

Run from the repository root with zarr-python 2.18 (its venv from
scripts/requirements-zarr2.txt):

    python testdata/generate/v2_fill_values_fixtures.py

Each array has shape (5,) and chunks (2,), and only elements 0..2 are
written, so chunks 1 and 2 are missing and read as the fill value. The
compressor is zlib (deterministic, unlike gzip's timestamps).

zarr-python 2.18 writes, through `Metadata2.encode_fill_value`: `"NaN"`,
`"Infinity"`, `"-Infinity"` for non-finite floats, `[re, im]` for complex
(each part likewise), `true`/`false`, the i8 count for `M8`/`m8` (NaT is
-2^63), base64 for `S`, `V` and structured records, the string for `U`,
and plain numbers otherwise. zarr-python 2.0-era arrays also carry a
number on `S`/`U` arrays (zarr-python's own compatibility fixture has
`"|S1"` and `"<U4"` with `0`), and zarr 1.x carried `0` on complex arrays:
those documents are written by zarr-python 2.18 and then given that fill
value by hand (`edited`), and their expected values are NumPy's cast of
the number (zarr-python 2.18 reads the `S`/`U` ones so and is checked
here; it cannot read a number on a complex type, where NumPy's `re + 0j`
is the reference).
"""

import json
import os
import shutil
import sys

import numcodecs
import numpy as np
import zarr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from draft_common import entry, update_manifest  # noqa: E402

ROOT = os.path.join("testdata", "fixtures", "v2")
STORE = os.path.join(ROOT, "zarr-python-2.18-fill-values.zarr")
WRITER = "zarr-python " + zarr.__version__

MIXED = np.dtype([("x", "<i4"), ("y", ">f8")])

# name, dtype, fill value (as given to zarr), the five values.
CASES = [
    ("float64_nan", "<f8", float("nan"), [1.5, -2.0, 0, 0, 0]),
    ("float32_big_infinity", ">f4", float("inf"), [1.5, -2.0, 0, 0, 0]),
    ("float16_minus_infinity", "<f2", float("-inf"), [1.5, -2.0, 0, 0, 0]),
    ("complex128_nan_infinity", "<c16", complex(float("nan"), float("inf")),
     [1 + 2j, -3j, 0, 0, 0]),
    ("complex64_big_pair", ">c8", complex(1.5, -2.0), [1 + 2j, -3j, 0, 0, 0]),
    ("bool_true", "|b1", True, [False, True, False, False, False]),
    ("int64_min", "<i8", -(2**63), [1, -1, 0, 0, 0]),
    ("uint64_max", ">u8", 2**64 - 1, [1, 2, 0, 0, 0]),
    ("datetime64_ns_nat", "<M8[ns]", np.datetime64("NaT", "ns"),
     np.array(["2020-01-01", "1970-01-02", "NaT", "NaT", "NaT"], dtype="<M8[ns]")),
    ("timedelta64_s_big", ">m8[s]", np.timedelta64(-7, "s"),
     np.array([1, 2, 0, 0, 0], dtype=">m8[s]")),
    ("bytes3_base64", "|S3", b"ab", [b"x", b"yz", b"", b"", b""]),
    ("unicode3_string", "<U3", "h\u00e9", ["a", "\u4e2d\u6587", "", "", ""]),
    ("unicode2_big_string", ">U2", "x", ["a", "bc", "", "", ""]),
    ("raw3_base64", "|V3", b"\x01\xfe\x7f", [b"abc", b"def", b"", b"", b""]),
    ("structured_mixed_order", MIXED, np.array((-1, 0.5), dtype=MIXED)[()],
     np.array([(1, 1.5), (2, -2.5), (0, 0), (0, 0), (0, 0)], dtype=MIXED)),
]

# name, dtype, the fill value zarr-python 2.18 writes, the hand-given one.
EDITED = [
    ("bytes1_number_fill", "|S1", b"0", 0, [b"a", b"b", b"", b"", b""]),
    ("unicode4_number_fill", "<U4", "0", 0, ["ab", "cdef", "", "", ""]),
    ("unicode2_float_fill", ">U2", "1.", 1.5, ["ab", "c", "", "", ""]),
    ("complex128_real_fill", "<c16", 0j, 0, [1 + 2j, -3j, 0, 0, 0]),
    ("complex64_real_nan_fill", "<c8", complex(float("nan"), 0), "NaN", [1 + 2j, -3j, 0, 0, 0]),
]


def write(name, dtype, fill, values):
    arr = zarr.open_array(
        zarr.DirectoryStore(os.path.join(STORE, name)), mode="w", shape=(5,), chunks=(2,),
        dtype=dtype, fill_value=fill, compressor=numcodecs.Zlib(level=1),
    )
    values = np.array(values, dtype=dtype)
    arr[0:2] = values[0:2]
    expected = np.full(5, fill, dtype=dtype) if fill is not None else np.zeros(5, dtype=dtype)
    expected[0:2] = values[0:2]
    return arr, expected


def manifest_entry(name, expected, writer):
    if expected.dtype.kind == "V" and not expected.dtype.names:
        # Raw bytes are the model's `r<8n>`, compared as their bytes.
        e = entry(name, "v2", STORE, "/" + name, expected.view("|u1"), writer)
        e["data_type"] = f"r{expected.dtype.itemsize * 8}"
        e["shape"] = list(expected.shape)
        return e
    return entry(name, "v2", STORE, "/" + name, expected, writer)


def same(a, b):
    return a.tobytes() == b.tobytes()


def main():
    shutil.rmtree(STORE, ignore_errors=True)
    os.makedirs(STORE)
    zarr.open_group(zarr.DirectoryStore(STORE), mode="w")
    entries = []
    for name, dtype, fill, values in CASES:
        _, expected = write(name, dtype, fill, values)
        got = zarr.open_array(zarr.DirectoryStore(os.path.join(STORE, name)), mode="r")[...]
        assert same(got, expected), name
        entries.append(manifest_entry(name, expected, WRITER))
    for name, dtype, fill, given, values in EDITED:
        _, expected = write(name, dtype, fill, values)
        path = os.path.join(STORE, name, ".zarray")
        with open(path) as f:
            doc = json.load(f)
        doc["fill_value"] = given
        with open(path, "w") as f:
            json.dump(doc, f, indent=4, sort_keys=True, ensure_ascii=True)
        # NumPy's cast of the number is what the expected values hold.
        cast = np.array(float(given) if isinstance(given, str) else given).astype(dtype)
        assert same(np.array(fill, dtype=dtype), cast), name
        if np.dtype(dtype).kind in "SU":
            got = zarr.open_array(zarr.DirectoryStore(os.path.join(STORE, name)), mode="r")[...]
            assert same(got, expected), name
        entries.append(manifest_entry(name, expected, WRITER + ", then the fill value set by hand"))
    update_manifest(entries, [os.path.relpath(STORE, "testdata")])


if __name__ == "__main__":
    main()
