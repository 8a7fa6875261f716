"""Writes the Zarr v1 fixtures under testdata/fixtures/v1/ and their manifest
entries (format "v1") in testdata/fixtures.toml, leaving every other
format's entries as they are.

Run from the repository root with a Python that has the pinned numpy and
numcodecs (scripts/requirements.txt):

    python testdata/generate/v1_fixtures.py

The real v1 writer, zarr-python 1.x, cannot be installed on Python 3.11
(it predates the packaging it would need and its C extensions do not build
there), so these stores are written by hand from the spec text
(specs/seeds/v1-storage-spec.rst): `meta` as zarr 1.x wrote it,
`json.dumps(..., indent=4, sort_keys=True)` (so a NaN or infinite fill
value is the bare, non-standard token `NaN` / `Infinity` / `-Infinity`),
`attrs` always present, each chunk the raw bytes of the whole chunk in the
array's `order` (edge chunks padded with the fill value) passed through the
primary compressor with no header added, under the key `i.j`. The
compressors are numcodecs', which produce the same bytes as the libraries
zarr 1.x called (zlib.compress, bz2.compress, lzma.compress, blosc).

Every v1 store is a single array, so each fixture is its own store, opened
at `/`. Some chunks are left unwritten, so the fill value shows. The
manifest records the data type (by its v3 name), the shape and the SHA-256
of the values as little-endian C-order bytes, which the corpus test
(zarrkit/tests/it/interop/corpus.rs) checks through every store backend.

Note that zarr 1.x itself wrote the chunks of F-order arrays in C order
for every compressor but blosc; these fixtures follow the spec (F order is
column-major within each chunk), as zarrkit does.
"""

import hashlib
import importlib.metadata
import itertools
import json
import os
import shutil
import sys

import numcodecs
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from v3_fixtures import write_manifest_entries  # noqa: E402

ROOT = os.path.join("testdata", "fixtures", "v1")
WRITER = (
    "hand-made from the v1 spec text "
    f"(numpy {np.__version__}, numcodecs {importlib.metadata.version('numcodecs')})"
)


def pattern(shape, dtype):
    n = int(np.prod(shape)) if shape else 1
    i = np.arange(n, dtype=np.int64)
    dtype = np.dtype(dtype)
    kind = dtype.kind
    if dtype.names:
        # Structured: each field its own pattern.
        v = np.zeros(n, dtype=dtype)
        for name in dtype.names:
            field = dtype.fields[name][0]
            v[name] = pattern((n,) + field.shape, field.base)
        return v.reshape(shape)
    if kind == "S":
        v = np.array([b"s%d" % (k * 37 % 100000) for k in i], dtype=object)
    elif kind == "U":
        v = np.array(["\u00e9%d\u4e2d" % (k * 37 % 1000) for k in i], dtype=object)
    elif kind == "b":
        v = (i * 7 % 3) == 0
    elif kind == "c":
        v = (i * 0.5 - 3) + 1j * (n - i)
    elif kind == "f":
        v = np.sin(i * 0.1) * 100
    else:
        v = (i * 2654435761) % 251
    return v.astype(dtype).reshape(shape)


def digest(values):
    values = values.astype(values.dtype.newbyteorder("<"), copy=False)
    return hashlib.sha256(np.ascontiguousarray(values).tobytes()).hexdigest()


def compressor(compression, opts):
    if compression == "none":
        return None
    if compression == "zlib":
        return numcodecs.Zlib(level=opts)
    if compression == "bz2":
        return numcodecs.BZ2(level=opts)
    if compression == "lzma":
        return numcodecs.LZMA(**opts)
    if compression == "blosc":
        return numcodecs.Blosc(cname=opts["cname"], clevel=opts["clevel"], shuffle=opts["shuffle"])
    raise ValueError(compression)


# name, v3 data type name, dtype, shape, chunks, order, compression,
# compression_opts, fill value (None: null), which chunks to write (a
# predicate on the chunk's indices), extra meta keys.
FIXTURES = [
    # The spec's "Example", exactly: z[0:10, 0:10] = 1, z[0:10, 10:20] = 2, z[10:20, :] = 3.
    ("spec_example_int32_zlib", "int32", "<i4", (20, 20), (10, 10), "C", "zlib", 1, 42, None, {}),
    ("float64_big_f_lzma_nan", "float64", ">f8", (9, 7), (4, 3), "F", "lzma",
     {"format": 1, "check": 0, "preset": 1, "filters": None}, float("nan"),
     lambda c: c != (1, 1), {}),
    ("bool_blosc_bitshuffle", "bool", "|b1", (33,), (10,), "C", "blosc",
     {"cname": "lz4", "clevel": 5, "shuffle": 2}, False, lambda c: c != (2,), {}),
    ("uint16_big_bz2_extra_keys", "uint16", ">u2", (6, 5), (4, 4), "C", "bz2", 9, 7,
     lambda c: c != (1, 0), {"creator": {"library": "zarr", "version": "1.1.0"}}),
    ("complex64_f_none_null_fill", "complex64", "<c8", (4, 3, 2), (3, 2, 2), "F", "none", None,
     None, lambda c: c[0] == 0, {}),
    ("float32_blosc_zstd_neg_inf", "float32", "<f4", (10,), (4,), "C", "blosc",
     {"cname": "zstd", "clevel": 3, "shuffle": 1}, float("-inf"), lambda c: c != (1,), {}),
    ("float16_f_zlib_inf", "float16", "<f2", (5, 6), (2, 4), "F", "zlib", 9, float("inf"),
     lambda c: c != (2, 1), {}),
    ("int64_big_blosc_noshuffle", "int64", ">i8", (7, 3), (3, 3), "C", "blosc",
     {"cname": "zlib", "clevel": 1, "shuffle": 0}, -5, lambda c: c != (0, 0), {}),
    # String data types: `|S7` (zero-padded bytes; fill value base64, as v2),
    # `<U5`/`>U5` (UTF-32; fill value the string itself), structured types as
    # lists of [name, typestr(, shape)].
    ("bytes7_zlib", "null_terminated_bytes", "|S7", (9,), (4,), "C", "zlib", 1,
     ("eHk=", b"xy"), lambda c: c != (1,), {}),
    ("unicode5_f_bz2", "fixed_length_utf32", "<U5", (4, 3), (3, 2), "F", "bz2", 5,
     ("\u00e9!", "\u00e9!"), lambda c: c != (1, 1), {}),
    ("unicode5_big_none", "fixed_length_utf32", ">U5", (5,), (2,), "C", "none", None,
     None, lambda c: c != (2,), {}),
    ("structured_blosc", "struct", [["name", "<U3"], ["age", "<i2"], ["ok", "|b1"], ["w", "<f4"]],
     (6, 2), (4, 2), "C", "blosc", {"cname": "lz4", "clevel": 5, "shuffle": 1}, None,
     lambda c: c != (1, 0), {}),
    ("structured_big_f_zlib", "struct", [["id", ">u4"], ["tag", "|S2"], ["v", ">f8"]],
     (3, 4), (2, 3), "F", "zlib", 1,
     ("AAAAAXh5QAAAAAAAAAA=", (1, b"xy", 2.0)), lambda c: c != (0, 1), {}),
    # Issue #9: the fill values zarr 1.x wrote for complex and string types.
    # It wrote the NumPy scalar the user gave, so `fill_value=0` is `0` for
    # `<c16`/`>c8` (NumPy reads it as 0+0j) and a bare `NaN` token for a NaN
    # real part; numbers for `|S1`/`<U4` (NumPy casts them: b"0", "1234").
    ("complex128_real_fill_zlib", "complex128", "<c16", (7,), (3,), "C", "zlib", 1,
     0, lambda c: c != (1,), {}),
    ("complex64_big_f_real_nan_fill", "complex64", ">c8", (3, 4), (2, 3), "F", "none", None,
     float("nan"), lambda c: c != (1, 0), {}),
    ("bytes1_number_fill_zlib", "null_terminated_bytes", "|S1", (9,), (4,), "C", "zlib", 1,
     0, lambda c: c != (1,), {}),
    ("unicode4_number_fill_none", "fixed_length_utf32", "<U4", (2, 5), (2, 2), "C", "none", None,
     12345, lambda c: c != (0, 1), {}),
    # NumPy datetimes, whose `dtype.str` zarr 1.x wrote as any other; their
    # fill value is the i8 count (Python's json cannot write a datetime64).
    ("datetime64_ns_zlib", "numpy.datetime64", "<M8[ns]", (5,), (2,), "C", "zlib", 1,
     (-(2**63), np.datetime64("NaT", "ns")), lambda c: c != (1,), {}),
    ("timedelta64_s_big_none", "numpy.timedelta64", ">m8[s]", (3, 2), (2, 2), "F", "none", None,
     (-7, np.timedelta64(-7, "s")), lambda c: c != (1, 0), {}),
]


def numpy_dtype(dtype):
    """The NumPy dtype of a v1 `dtype` (a string or a list of fields)."""
    if isinstance(dtype, list):
        return np.dtype([tuple(f[:2]) + ((tuple(f[2]),) if len(f) > 2 else ()) for f in dtype])
    return np.dtype(dtype)


def spec_example_values():
    z = np.full((20, 20), 42, dtype="<i4")
    z[0:10, 0:10] = 1
    z[0:10, 10:20] = 2
    z[10:20, :] = 3
    return z


def write(name, dtype, shape, chunks, order, compression, opts, fill, written, extra):
    # A (JSON, NumPy) pair where the two spellings differ.
    fill, np_fill = fill if isinstance(fill, tuple) else (fill, fill)
    json_dtype = dtype
    dtype = numpy_dtype(dtype)
    store = os.path.join(ROOT, name)
    shutil.rmtree(store, ignore_errors=True)
    os.makedirs(store)
    meta = {
        "zarr_format": 1, "shape": list(shape), "chunks": list(chunks), "dtype": json_dtype,
        "compression": compression, "compression_opts": opts, "fill_value": fill, "order": order,
    }
    meta.update(extra)
    with open(os.path.join(store, "meta"), "w") as f:
        # As zarr 1.x: Python's json, so a NaN fill value is the bare token NaN.
        f.write(json.dumps(meta, indent=4, sort_keys=True))
    with open(os.path.join(store, "attrs"), "w") as f:
        f.write(json.dumps({"fixture": name}, indent=4, sort_keys=True))
    values = spec_example_values() if name.startswith("spec_example") else pattern(shape, dtype)

    def filled(shape):
        # The fill value (null reads as zero).
        if np_fill is None:
            return np.zeros(shape, dtype=dtype)
        out = np.empty(shape, dtype=dtype)
        out[...] = np_fill
        return out

    # What zarrkit must read: written chunks hold the values, the others
    # the fill value.
    expected = filled(shape)
    codec = compressor(compression, opts)
    grid = [-(-s // c) for s, c in zip(shape, chunks)]
    for coords in itertools.product(*[range(g) for g in grid]):
        if written is not None and not written(coords):
            continue
        sel = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(coords, chunks, shape))
        # Spec "Chunks": all chunks have the same shape; the part beyond the
        # array is undefined (here the fill value, or zero for null).
        chunk = filled(chunks)
        chunk[tuple(slice(0, s.stop - s.start) for s in sel)] = values[sel]
        expected[sel] = values[sel]
        raw = chunk.tobytes(order=order)
        data = raw if codec is None else codec.encode(np.frombuffer(raw, dtype=dtype))
        with open(os.path.join(store, ".".join(str(i) for i in coords)), "wb") as f:
            f.write(bytes(data))
    return expected


def main():
    os.makedirs(ROOT, exist_ok=True)
    entries = []
    for (name, data_type, dtype, shape, chunks, order, compression, opts, fill, written,
         extra) in FIXTURES:
        expected = write(name, dtype, shape, chunks, order, compression, opts, fill, written, extra)
        entries.append({
            "name": f"v1_{name}", "format": "v1", "store": f"fixtures/v1/{name}", "node": "/",
            "data_type": data_type, "shape": list(shape), "sha256": digest(expected),
            "writer": WRITER,
        })
    write_manifest_entries("v1", entries)


if __name__ == "__main__":
    main()
