"""Writes the zarr-python 2.x "experimental v3" fixtures (the json-suffixed
`meta/root` layout, zarrkit's `v3-draft-2019-json`) with the real writer.

Run from the repository root with zarr-python 2.18 (the last writer of this
layout; it needs numpy < 2):

    python3.11 -m venv /tmp/drafts-venv
    /tmp/drafts-venv/bin/pip install "zarr==2.18.*" numcodecs "numpy<2"
    ZARR_V3_EXPERIMENTAL_API=1 /tmp/drafts-venv/bin/python testdata/generate/v3_draft2019_json_fixtures.py

The store holds a group with attributes, an implicit group (`/nested`),
arrays in C and F order with gzip, blosc, zstd and no compressor, a
big-endian array, a complex array (zarr-python writes its complex-dtypes
extension object), a 0-d array, and arrays with chunks left unwritten (read
as the fill value).
"""

import os
import shutil
import sys

import numcodecs
import numpy as np
import zarr
from zarr._storage.v3 import DirectoryStoreV3

sys.path.insert(0, os.path.dirname(__file__))
from draft_common import entry, pattern, update_manifest  # noqa: E402

ROOT = os.path.join("testdata", "fixtures", "v3-draft-2019-json")
STORE = os.path.join(ROOT, "zarr-python-2.18.zarr")
WRITER = "zarr-python " + zarr.__version__


def main():
    if os.environ.get("ZARR_V3_EXPERIMENTAL_API") != "1":
        sys.exit("set ZARR_V3_EXPERIMENTAL_API=1")
    shutil.rmtree(ROOT, ignore_errors=True)
    os.makedirs(ROOT)
    store = DirectoryStoreV3(STORE)
    root = zarr.group(store=store, path="", zarr_version=3)
    root.attrs["title"] = "zarr-python 2.x experimental v3"
    root.attrs["numbers"] = [1, 2, 3]
    entries = []

    def add(name, shape, chunks, dtype, compressor, order="C", fill_value=0, write=None, separator="/"):
        values = pattern(shape, dtype)
        arr = root.create_dataset(
            name, shape=shape, chunks=chunks, dtype=dtype, compressor=compressor,
            order=order, fill_value=fill_value, dimension_separator=separator,
        )
        if write is None:
            arr[...] = values
            expected = values
        else:
            # Write only part, so some chunks are missing and read as the fill value.
            expected = np.full(shape, fill_value, dtype=dtype)
            arr[write] = values[write]
            expected[write] = values[write]
        entries.append(entry(name.replace("/", "_"), "v3-draft-2019-json", STORE, "/" + name, expected, WRITER))

    add("int16_gzip", (7, 9), (3, 4), "<i2", numcodecs.GZip(level=5))
    add("uint16_blosc_bitshuffle", (33,), (10,), "<u2", numcodecs.Blosc(cname="lz4", clevel=5, shuffle=2))
    add("float32_zstd_f_order", (6, 5, 4), (4, 2, 3), "<f4", numcodecs.Zstd(level=3), order="F",
        fill_value=float("nan"), write=(slice(0, 4), slice(0, 2), slice(None)))
    add("float64_big_endian_raw", (5, 5), (2, 2), ">f8", None, fill_value=-1.5)
    add("complex64_gzip", (3, 4), (2, 2), "<c8", numcodecs.GZip(level=1))
    add("int64_scalar", (), (), "<i8", numcodecs.Blosc(cname="zstd", clevel=3, shuffle=1))
    add("bool_dot_separator", (11,), (4,), "|b1", numcodecs.Zstd(level=1), separator=".")
    add("nested/deeper/uint8_missing_chunks", (10, 10), (5, 5), "|u1", numcodecs.GZip(level=1),
        fill_value=7, write=(slice(0, 5), slice(5, 10)))
    group = root.create_group("sub")
    group.attrs["kind"] = "explicit group"
    update_manifest(entries, [os.path.relpath(ROOT, "testdata")])


if __name__ == "__main__":
    main()
