#!/usr/bin/env python3
"""Zip store interop between zarrkit and zarr-python 3.1.

Usage:
  zip_interop.py write DIR   zarr-python writes DIR/v2.zip and DIR/v3.zip
                             with its ZipStore, and repacks v3.zip as
                             DIR/deflated.zip (members deflated),
                             DIR/zip64.zip (zip64 extra fields forced) and
                             DIR/prefixed.zip (every member under
                             `image.zarr/`); zarrkit reads them
                             (zarrkit/tests/it/zip_stores.rs).
                             DIR/manifest.json lists each array and its
                             values, raw little-endian, in DIR/expected/.
  zip_interop.py read DIR    zarr-python's ZipStore(mode="r") reads the
                             zips that zarrkit wrote as DIR/manifest.json
                             lists them, compares every array with its
                             expected values and the root's attributes,
                             requires consolidated metadata where listed,
                             and prints "ok N"; exits 1 on any difference.

Both v2.zip and v3.zip hold: root group (attributes {"title": "zip"}),
array `a` (uint16, shape [40, 30], chunks [16, 8]), group `g`
(attributes {"k": 1}) holding array `b` (float64, shape [7], chunks
[3]); v3.zip also holds `s` (int32, shape [64, 64], shards [32, 32],
inner chunks [8, 8]). `a` is written twice (ones first), and the
hierarchy is consolidated after the arrays are written, so the zips hold
duplicate member names (zarr-python warns and appends), of which the last
is current.

Made with zarr 3.1.6, numcodecs 0.16.6, numpy 2.4.6.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
import zipfile

import numpy as np
import zarr
from zarr.storage import ZipStore


def values(name: str) -> np.ndarray:
    if name == "a":
        return (np.arange(40 * 30, dtype="uint32") * 7 % 65536).astype("<u2").reshape(40, 30)
    if name == "g/b":
        return np.arange(7, dtype="<f8") * 0.5
    if name == "s":
        return (np.arange(64 * 64, dtype="<i4") * -3).reshape(64, 64)
    raise KeyError(name)


def write(root: str) -> None:
    os.makedirs(os.path.join(root, "expected"), exist_ok=True)
    manifest = []
    for fmt in (2, 3):
        zip_name = f"v{fmt}.zip"
        store = ZipStore(os.path.join(root, zip_name), mode="w")
        g = zarr.open_group(store=store, mode="w", zarr_format=fmt)
        g.attrs["title"] = "zip"
        a = g.create_array("a", shape=(40, 30), chunks=(16, 8), dtype="uint16")
        a[:] = 1
        a[:] = values("a")
        sub = g.create_group("g")
        sub.attrs["k"] = 1
        b = sub.create_array("b", shape=(7,), chunks=(3,), dtype="float64")
        b[:] = values("g/b")
        names = ["a", "g/b"]
        if fmt == 3:
            s = g.create_array("s", shape=(64, 64), shards=(32, 32), chunks=(8, 8), dtype="int32")
            s[:] = values("s")
            names.append("s")
        zarr.consolidate_metadata(store, zarr_format=fmt)
        store.close()
        for name in names:
            v = values(name)
            bin_name = f"{zip_name}-{name.replace('/', '_')}.bin"
            with open(os.path.join(root, "expected", bin_name), "wb") as f:
                f.write(v.tobytes())
            manifest.append(
                {
                    "zip": zip_name,
                    "path": name,
                    "dtype": v.dtype.str,
                    "shape": list(v.shape),
                    "expected": bin_name,
                }
            )

    # The members of v3.zip, the last of each name as zipfile reads it.
    with zipfile.ZipFile(os.path.join(root, "v3.zip")) as zf:
        members = {info.filename: zf.read(info) for info in zf.infolist()}
    with zipfile.ZipFile(os.path.join(root, "deflated.zip"), "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    with zipfile.ZipFile(os.path.join(root, "zip64.zip"), "w", zipfile.ZIP_STORED) as zf:
        for name, data in members.items():
            with zf.open(name, "w", force_zip64=True) as f:
                f.write(data)
    with zipfile.ZipFile(os.path.join(root, "prefixed.zip"), "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("image.zarr/", b"")
        for name, data in members.items():
            zf.writestr(f"image.zarr/{name}", data)
    with open(os.path.join(root, "manifest.json"), "w") as f:
        json.dump({"arrays": manifest}, f, indent=1)


def read(root: str) -> int:
    with open(os.path.join(root, "manifest.json")) as f:
        manifest = json.load(f)
    checked = 0
    for entry in manifest["arrays"]:
        store = ZipStore(os.path.join(root, entry["zip"]), mode="r")
        arr = zarr.open_array(store=store, path=entry["path"], mode="r")
        with open(os.path.join(root, "expected", entry["expected"]), "rb") as f:
            expected = np.frombuffer(f.read(), dtype=entry["dtype"]).reshape(entry["shape"])
        got = np.asarray(arr[...])
        if got.dtype != expected.dtype or not np.array_equal(got, expected):
            print(f"{entry['zip']}:{entry['path']}: values differ", file=sys.stderr)
            return 1
        store.close()
        checked += 1
    for entry in manifest["groups"]:
        store = ZipStore(os.path.join(root, entry["zip"]), mode="r")
        if entry.get("consolidated"):
            g = zarr.open_consolidated(store=store, mode="r")
            if g.metadata.consolidated_metadata is None:
                print(f"{entry['zip']}: no consolidated metadata", file=sys.stderr)
                return 1
        else:
            g = zarr.open_group(store=store, mode="r")
        if dict(g.attrs) != entry["attributes"]:
            print(f"{entry['zip']}: attributes {dict(g.attrs)}", file=sys.stderr)
            return 1
        store.close()
        checked += 1
    print(f"ok {checked}")
    return 0


def main() -> int:
    warnings.simplefilter("ignore")
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "read"):
        print(__doc__, file=sys.stderr)
        return 2
    if sys.argv[1] == "write":
        write(sys.argv[2])
        return 0
    return read(sys.argv[2])


if __name__ == "__main__":
    sys.exit(main())
