"""Zarr v1 interop with the reference implementations (issue #9, items 7-8).

Usage:
    v1_interop.py zarr1-write DIR   zarr 1.1.0 writes the arrays of CASES
                                    under DIR/<name>/ and DIR/manifest.json
    v1_interop.py zarr1-read DIR    zarr 1.1.0 reads every array listed in
                                    DIR/manifest.json and compares it
    v1_interop.py zarr2-read DIR    zarr-python 2.18 migrates a copy of each
                                    array with `zarr.storage.migrate_1to2`,
                                    reads it and compares it

The manifest is a list of {"name", "dtype", "shape", "fill_value" (a
string for non-finite floats), "attributes", "values" (base64 of the
little-endian C-order bytes)}; zarrkit writes the same manifest for the
arrays it writes (zarrkit/tests/it/formats/v1.rs). Prints one line per array.

zarr 1.1.0 imports `collections.MutableMapping`, which Python 3.10
removed, so it is aliased to `collections.abc.MutableMapping` first.
"""

import base64
import collections
import collections.abc
import json
import math
import os
import shutil
import sys
import tempfile

if not hasattr(collections, "MutableMapping"):
    collections.MutableMapping = collections.abc.MutableMapping

import numpy as np
import zarr

# What zarr 1.1.0 writes for zarrkit to read: non-finite fill values (written
# as bare `NaN`/`Infinity`/`-Infinity`) and non-ASCII attributes (written
# as `\uXXXX`), chunks partly written so the fill value shows.
CASES = [
    # (name, dtype, shape, chunks, fill value, compression, compression_opts, order)
    ("nan_f8_zlib", "<f8", (10,), (4,), "nan", "zlib", 1, "C"),
    ("inf_f4_lzma", "<f4", (5, 6), (2, 4), "inf", "lzma", None, "C"),
    ("neg_inf_be_f8_none", ">f8", (7,), (3,), "-inf", "none", None, "C"),
    ("int_i2_bz2", "<i2", (9,), (4,), 7, "bz2", 1, "C"),
    # zarr 1.x's default compression, and F order (which zarr 1.x lays out
    # column-major only for blosc, see zarrkit's format/v1.rs).
    ("nan_f4_blosc_default", "<f4", (5, 6), (2, 4), "nan", "blosc", None, "C"),
    ("u4_blosc_f_order", "<u4", (5, 6), (2, 4), 3, "blosc",
     {"cname": "zstd", "clevel": 3, "shuffle": 2}, "F"),
]


def le_bytes(values):
    values = np.asarray(values)
    if values.dtype.byteorder not in "|=<":
        values = values.astype(values.dtype.newbyteorder("<"))
    return np.ascontiguousarray(values).tobytes()


def fill_json(value):
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def same_fill(got, want):
    if isinstance(want, str):
        want = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[want]
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    return got == want


def zarr1_write(root):
    manifest = []
    for name, dtype, shape, chunks, fill, compression, opts, order in CASES:
        fill = float(fill) if isinstance(fill, str) else fill
        z = zarr.open(os.path.join(root, name), mode="w", shape=shape, chunks=chunks,
                      dtype=dtype, compression=compression, compression_opts=opts,
                      fill_value=fill, order=order)
        n = int(np.prod(shape))
        data = (np.arange(n) * 3 - 5).reshape(shape).astype(dtype)
        # The first half of the first dimension only: the rest is the fill value.
        half = tuple([slice(0, shape[0] // 2)] + [slice(None)] * (len(shape) - 1))
        z[half] = data[half]
        z.attrs["city"] = "Zürich"
        z.attrs["ünits"] = ["°C", "🌍"]
        manifest.append({
            "name": name, "dtype": dtype, "shape": list(shape),
            "fill_value": fill_json(fill),
            "attributes": dict(z.attrs),
            "values": base64.b64encode(le_bytes(z[:])).decode(),
        })
    with open(os.path.join(root, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    print(len(manifest), "arrays written by zarr", zarr.__version__)


def check(name, z, entry):
    assert z.dtype == np.dtype(entry["dtype"]), f"{name}: dtype {z.dtype}"
    assert list(z.shape) == entry["shape"], f"{name}: shape {z.shape}"
    got = le_bytes(z[...])
    want = base64.b64decode(entry["values"])
    assert got == want, f"{name}: values differ:\n{got.hex()}\n{want.hex()}"
    assert dict(z.attrs) == entry["attributes"], f"{name}: attributes {dict(z.attrs)}"
    assert same_fill(z.fill_value, entry["fill_value"]), f"{name}: fill value {z.fill_value!r}"


def zarr1_read(root):
    manifest = json.load(open(os.path.join(root, "manifest.json")))
    for entry in manifest:
        z = zarr.open(os.path.join(root, entry["name"]), mode="r")
        check(entry["name"], z, entry)
        print("zarr", zarr.__version__, "read", entry["name"])


def zarr2_read(root):
    manifest = json.load(open(os.path.join(root, "manifest.json")))
    scratch = tempfile.mkdtemp()
    try:
        for entry in manifest:
            copy = os.path.join(scratch, entry["name"])
            shutil.copytree(os.path.join(root, entry["name"]), copy)
            store = zarr.storage.DirectoryStore(copy)
            zarr.storage.migrate_1to2(store)
            z = zarr.open_array(store, mode="r")
            check(entry["name"], z, entry)
            print("zarr", zarr.__version__, "read", entry["name"], "after migrate_1to2")
    finally:
        shutil.rmtree(scratch)


if __name__ == "__main__":
    mode, root = sys.argv[1], sys.argv[2]
    {"zarr1-write": zarr1_write, "zarr1-read": zarr1_read, "zarr2-read": zarr2_read}[mode](root)
