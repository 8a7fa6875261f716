#!/usr/bin/env python3
"""Zarr v2 interop between zarrkit, zarr-python 3.1 (zarr_format=2) and tensorstore.

Usage:
  v2_interop.py write DIR   zarr-python writes the v2 matrix under DIR/zarr-python.zarr
                            and DIR/manifest.json; zarrkit reads it
                            (zarrkit/tests/it/formats/v2.rs).
  v2_interop.py read DIR    zarr-python and tensorstore read what zarrkit wrote, as
                            listed in DIR/manifest.json. Exits 1 listing every mismatch.

The manifest lists arrays as {"id", "path", "dtype", "shape", "expected"}:
`dtype` is the NumPy type string, `expected` a file of the values as raw
little-endian C-order bytes (what the writer reads back, so chunks never
written hold the fill value). Groups are {"path", "attributes", "children"}.

Tensorstore's `zarr` driver reads every case except those whose compressor
it does not implement (`lz4`, `lzma`) or whose options it refuses (zstd
`checksum`): those are reported as not checked by
it, by name, never skipped silently.

Made with zarr 3.1.6, numcodecs 0.16.6, numpy 2.4.6, tensorstore 0.1.86.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
import warnings

import numcodecs
import numpy as np
import zarr

warnings.filterwarnings("ignore")

DTYPES = [
    "|b1", "|i1", "|u1",
    "<i2", ">i2", "<i4", ">i4", "<i8", ">i8",
    "<u2", ">u2", "<u4", ">u4", "<u8", ">u8",
    "<f2", ">f2", "<f4", ">f4", "<f8", ">f8",
    "<c8", ">c8", "<c16", ">c16",
    "|V3",
]


def compressors():
    """(name, numcodecs compressor or None) for every compressor option tested."""
    import lzma

    out = [("none", None)]
    for cname in ["lz4", "lz4hc", "blosclz", "zstd", "zlib"]:
        for shuffle in [numcodecs.Blosc.NOSHUFFLE, numcodecs.Blosc.SHUFFLE, numcodecs.Blosc.BITSHUFFLE, numcodecs.Blosc.AUTOSHUFFLE]:
            out.append((f"blosc-{cname}-{shuffle}", numcodecs.Blosc(cname=cname, clevel=5, shuffle=shuffle)))
    out.append(("blosc-lz4-blocksize", numcodecs.Blosc(cname="lz4", clevel=9, shuffle=1, blocksize=64)))
    out += [
        ("zlib-1", numcodecs.Zlib(level=1)),
        ("zlib-9", numcodecs.Zlib(level=9)),
        ("gzip-5", numcodecs.GZip(level=5)),
        ("bz2-1", numcodecs.BZ2(level=1)),
        ("bz2-9", numcodecs.BZ2(level=9)),
        ("lzma-default", numcodecs.LZMA()),
        ("lzma-preset1-crc32", numcodecs.LZMA(preset=1, check=lzma.CHECK_CRC32)),
        ("lzma-alone", numcodecs.LZMA(format=lzma.FORMAT_ALONE, preset=2)),
        (
            "lzma-raw-delta",
            numcodecs.LZMA(
                format=lzma.FORMAT_RAW,
                filters=[dict(id=lzma.FILTER_DELTA, dist=4), dict(id=lzma.FILTER_LZMA2, preset=1)],
            ),
        ),
        ("zstd-0", numcodecs.Zstd(level=0)),
        ("zstd-3-checksum", numcodecs.Zstd(level=3, checksum=True)),
        ("lz4-1", numcodecs.LZ4(acceleration=1)),
        ("lz4-10", numcodecs.LZ4(acceleration=10)),
    ]
    return out


def random_values(dtype: str, shape, seed: int) -> np.ndarray:
    """Random bit patterns of `dtype` (any NaN payload), 0/1 for bool."""
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    raw = np.random.default_rng(seed).bytes(n * dt.itemsize)
    if dt.kind == "b":
        raw = bytes(b & 1 for b in raw)
    return np.frombuffer(raw, dtype=dt).reshape(shape).copy()


def fill_value(dtype: str):
    """A fill value that a zero-filling reader would get wrong."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return True
    if dt.kind == "i":
        return -7
    if dt.kind == "u":
        return dt.type(np.iinfo(dt).max)  # 2^64-1 for u8
    if dt.kind == "f":
        return np.nan if dtype[1:] != "f8" else -np.inf
    if dt.kind == "c":
        return complex(1.5, np.nan)
    return b"\x01\xfe\x7f"


def le_bytes(arr: np.ndarray) -> bytes:
    arr = np.ascontiguousarray(arr)
    if arr.dtype.kind == "V":
        return arr.tobytes()
    return arr.astype(arr.dtype.newbyteorder("<")).tobytes()


def cases():
    """(id, dtype, shape, chunks, order, separator, compressor, fill, partial)."""
    comps = compressors()
    out = []
    i = 0
    for dtype in DTYPES:
        for order, sep in [("C", "."), ("F", "/")]:
            name, comp = comps[i % len(comps)]
            i += 7
            out.append((f"dtype_{dtype[1:]}_{'le' if dtype[0] == '<' else 'be' if dtype[0] == '>' else 'na'}_{order}", dtype, (7, 5), (3, 2), order, sep, comp, 0 if dtype[1] != "V" else b"\0\0\0", False))
        out.append((f"fill_{dtype[1:]}_{'le' if dtype[0] == '<' else 'be' if dtype[0] == '>' else 'na'}", dtype, (6, 4), (4, 3), "C", ".", None, fill_value(dtype), True))
        out.append((f"nullfill_{dtype[1:]}_{'le' if dtype[0] == '<' else 'be' if dtype[0] == '>' else 'na'}", dtype, (5,), (2,), "F", "/", numcodecs.Zlib(1), None, True))
    for name, comp in comps:
        for dtype in ["<i4", ">f8", "|u1", "<c8"]:
            out.append((f"comp_{name}_{dtype[1:]}", dtype, (9, 11), (4, 5), "C", ".", comp, 0, False))
    out.append(("f_order_3d", ">u2", (4, 3, 5), (3, 2, 2), "F", ".", numcodecs.Blosc("zstd", 3, 1), 3, False))
    out.append(("scalar", "<f8", (), (), "C", ".", numcodecs.Zlib(1), 0.0, False))
    out.append(("zero_length", "<i4", (0, 5), (2, 2), "C", ".", None, 0, False))
    out.append(("missing_chunks", "<i2", (10, 10), (3, 3), "C", "/", numcodecs.BZ2(1), 5, True))
    return out


def write(root: str) -> None:
    store = os.path.join(root, "zarr-python.zarr")
    manifest = {"arrays": [], "groups": []}
    os.makedirs(os.path.join(root, "expected"), exist_ok=True)
    group = zarr.open_group(store, mode="w", zarr_format=2)
    group.attrs.update({"title": "v2 interop", "nested": {"a": [1, 2.5, None]}})
    sub = group.create_group("inner", attributes={"level": 1})
    sub.create_group("deeper")
    manifest["groups"] = [
        {"path": "/", "attributes": dict(group.attrs), "children": ["arrays", "inner"]},
        {"path": "/inner", "attributes": {"level": 1}, "children": ["deeper", "leaf"]},
        {"path": "/inner/deeper", "attributes": {}, "children": []},
    ]
    group.create_group("arrays")
    for seed, (cid, dtype, shape, chunks, order, sep, comp, fill, partial) in enumerate(cases()):
        path = f"arrays/{cid}"
        arr = zarr.create_array(
            store, name=path, shape=shape, chunks=chunks, dtype=dtype, order=order,
            chunk_key_encoding={"name": "v2", "separator": sep}, compressors=comp,
            filters=None, fill_value=fill, zarr_format=2,
            attributes={"case": cid},
        )
        data = random_values(dtype, shape, seed)
        if partial:
            # Leave the last chunks unwritten: they read as the fill value.
            arr[: max(shape[0] // 2, 1)] = data[: max(shape[0] // 2, 1)]
        else:
            arr[...] = data
        got = arr[...]
        with open(os.path.join(root, "expected", cid + ".bin"), "wb") as f:
            f.write(le_bytes(np.asarray(got, dtype=dtype)))
        manifest["arrays"].append({"id": cid, "path": "/" + path, "dtype": dtype, "shape": list(shape), "expected": f"expected/{cid}.bin"})
    leaf = zarr.create_array(store, name="inner/leaf", shape=(2,), dtype="<i4", zarr_format=2, fill_value=None)
    leaf[...] = [1, 2]
    with open(os.path.join(root, "expected", "leaf.bin"), "wb") as f:
        f.write(np.array([1, 2], dtype="<i4").tobytes())
    manifest["arrays"].append({"id": "leaf", "path": "/inner/leaf", "dtype": "<i4", "shape": [2], "expected": "expected/leaf.bin"})
    with open(os.path.join(root, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


TENSORSTORE_LACKS = {"lz4": "tensorstore's zarr driver has no lz4 compressor", "lzma": "tensorstore's zarr driver has no lzma compressor"}


def read(root: str) -> None:
    import tensorstore as ts

    with open(os.path.join(root, "manifest.json")) as f:
        manifest = json.load(f)
    errors: list[str] = []
    not_checked: list[str] = []
    checked = 0
    for entry in manifest["arrays"]:
        where = entry["id"]
        dtype = np.dtype(entry["dtype"])
        with open(os.path.join(root, entry["expected"]), "rb") as f:
            raw = f.read()
        expected = np.frombuffer(raw, dtype=dtype if dtype.kind == "V" else dtype.newbyteorder("<")).reshape(entry["shape"])
        store = os.path.join(root, entry["store"])
        try:
            arr = zarr.open_array(store, path=entry["path"].lstrip("/"), mode="r", zarr_format=2)
            if list(arr.shape) != entry["shape"] or arr.dtype != dtype:
                errors.append(f"zarr-python {where}: shape {arr.shape} dtype {arr.dtype}, expected {entry['shape']} {dtype}")
            elif le_bytes(np.asarray(arr[...], dtype=dtype)) != raw:
                errors.append(f"zarr-python {where}: values differ")
            if "attributes" in entry and dict(arr.attrs) != entry["attributes"]:
                errors.append(f"zarr-python {where}: attributes {dict(arr.attrs)}, expected {entry['attributes']}")
            checked += 1
        except Exception:
            errors.append(f"zarr-python {where}: {traceback.format_exc()}")
        compressor = json.load(open(os.path.join(store, entry["path"].lstrip("/"), ".zarray")))["compressor"]
        lacking = TENSORSTORE_LACKS.get((compressor or {}).get("id"))
        if (compressor or {}).get("checksum"):
            lacking = "tensorstore's zarr driver does not accept the zstd `checksum` option"
        if lacking:
            not_checked.append(f"{where}: {lacking}")
            continue
        try:
            t = ts.open({"driver": "zarr", "kvstore": {"driver": "file", "path": os.path.join(store, entry["path"].lstrip("/"))}}, open=True).result()
            got = t.read().result()
            if dtype.kind == "V":
                # tensorstore reads `|V<n>` as bytes with an extra dimension of n.
                got_bytes = np.ascontiguousarray(got).tobytes()
            else:
                got_bytes = le_bytes(np.asarray(got, dtype=dtype))
            if got_bytes != raw:
                errors.append(f"tensorstore {where}: values differ")
            checked += 1
        except Exception:
            errors.append(f"tensorstore {where}: {traceback.format_exc()}")
    for entry in manifest.get("groups", []):
        try:
            group = zarr.open_group(os.path.join(root, entry["store"]), path=entry["path"].lstrip("/"), mode="r", zarr_format=2)
            if dict(group.attrs) != entry["attributes"]:
                errors.append(f"zarr-python group {entry['path']}: attributes {dict(group.attrs)}, expected {entry['attributes']}")
            children = sorted(name for name, _ in group.members())
            if children != sorted(entry["children"]):
                errors.append(f"zarr-python group {entry['path']}: children {children}, expected {entry['children']}")
            checked += 1
        except Exception:
            errors.append(f"zarr-python group {entry['path']}: {traceback.format_exc()}")
    for line in not_checked:
        print(f"not checked by tensorstore: {line}")
    print(f"{checked} checks passed or failed; {len(errors)} errors")
    if errors:
        print("\n".join(errors), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "read"):
        sys.exit(__doc__)
    {"write": write, "read": read}[sys.argv[1]](sys.argv[2])
