"""Writes the Zarr v2 fixtures under testdata/fixtures/v2/ and prints their
manifest entries for testdata/fixtures.toml.

Run from the repository root with a Python that has the pinned zarr
(scripts/requirements.txt):

    python testdata/generate/v2_fixtures.py >> testdata/fixtures.toml

Each array is written by zarr-python 3.1 with zarr_format=2. One document
is then rewritten the way Python's `json` module writes a NaN fill value
(the bare, non-standard token `NaN`), as zarr-python 2.x and other writers
left it. The corpus test (zarrkit/tests/it/interop/corpus.rs) checks the data type
(by its v3 name), shape and SHA-256 of the values as little-endian C-order
bytes through every store backend.
"""

import hashlib
import importlib.metadata
import json
import lzma
import os
import shutil
import warnings

import numcodecs
import numpy as np
import zarr

warnings.filterwarnings("ignore")

ROOT = os.path.join("testdata", "fixtures", "v2", "zarr-python.zarr")
WRITER = f"zarr-python {importlib.metadata.version('zarr')} (zarr_format=2)"


def pattern(shape, dtype):
    n = int(np.prod(shape)) if shape else 1
    i = np.arange(n, dtype=np.int64)
    kind = np.dtype(dtype).kind
    if kind == "b":
        v = (i * 7 % 3) == 0
    elif kind == "c":
        v = (i * 0.5 - 3) + 1j * (n - i)
    elif kind == "f":
        v = np.sin(i * 0.1) * 100
    elif kind == "V":
        return np.frombuffer(bytes((j * 37) % 256 for j in range(n * np.dtype(dtype).itemsize)), dtype=dtype).reshape(shape)
    else:
        v = (i * 2654435761) % 251
    return v.astype(dtype).reshape(shape)


def digest(values):
    if values.dtype.kind != "V":
        values = values.astype(values.dtype.newbyteorder("<"), copy=False)
    return hashlib.sha256(np.ascontiguousarray(values).tobytes()).hexdigest()


# name, v3 data type name, dtype, shape, chunks, order, separator, compressor, fill, rows written
ARRAYS = [
    ("float64_big_f_zlib_nan", "float64", ">f8", (9, 7), (4, 3), "F", ".", numcodecs.Zlib(1), np.nan, 5),
    ("uint64_max_fill_bz2", "uint64", "<u8", (10,), (4,), "C", ".", numcodecs.BZ2(9), 2**64 - 1, 6),
    ("raw_v3_base64_fill_lzma", "r24", "|V3", (6, 5), (4, 4), "C", "/", numcodecs.LZMA(preset=1), b"\x01\xfe\x7f", 4),
    ("complex128_big_lz4_slash", "complex128", ">c16", (5, 4), (2, 3), "C", "/", numcodecs.LZ4(), complex(1.5, -2), 5),
    ("bool_blosc_autoshuffle", "bool", "|b1", (13,), (5,), "C", ".", numcodecs.Blosc("zstd", 5, numcodecs.Blosc.AUTOSHUFFLE), True, 13),
    ("int16_null_fill_gzip", "int16", "<i2", (7, 3), (3, 3), "F", ".", numcodecs.GZip(5), None, 3),
    ("float16_zstd_scalar", "float16", "<f2", (), (), "C", ".", numcodecs.Zstd(3), 0.0, None),
]


def main():
    shutil.rmtree(ROOT, ignore_errors=True)
    root = zarr.open_group(ROOT, mode="w", zarr_format=2)
    root.attrs["description"] = "zarrkit v2 fixtures"
    for name, v3_name, dtype, shape, chunks, order, sep, compressor, fill, rows in ARRAYS:
        arr = zarr.create_array(
            ROOT, name=name, shape=shape, chunks=chunks, dtype=dtype, order=order,
            chunk_key_encoding={"name": "v2", "separator": sep}, compressors=compressor,
            filters=None, fill_value=fill, zarr_format=2,
        )
        values = pattern(shape, dtype)
        if rows is None:
            arr[...] = values
        else:
            arr[:rows] = values[:rows]
        print()
        print("[[fixture]]")
        print(f'name = "v2_{name}"')
        print('format = "v2"')
        print('store = "fixtures/v2/zarr-python.zarr"')
        print(f'node = "/{name}"')
        print(f'data_type = "{v3_name}"')
        print(f"shape = {list(shape)}")
        print(f'sha256 = "{digest(arr[...])}"')
        print(f'writer = "{WRITER}"')
    # The bare token Python's json writes for NaN (allow_nan=True).
    path = os.path.join(ROOT, "float64_big_f_zlib_nan", ".zarray")
    with open(path) as f:
        doc = json.load(f)
    assert doc["fill_value"] == "NaN"
    doc["fill_value"] = float("nan")
    with open(path, "w") as f:
        json.dump(doc, f, indent=4, sort_keys=True, allow_nan=True)


if __name__ == "__main__":
    main()
