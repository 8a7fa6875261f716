#!/usr/bin/env python3
"""Sharded arrays between zarrkit, zarr-python 3.1 and tensorstore.

Usage:
  interop_sharding.py write DIR   zarr-python and tensorstore write every case
  interop_sharding.py read DIR    both read what zarrkit wrote to DIR/zarrkit

`write` creates, under DIR:
  zarr_python/<case>/   written by zarr-python
  tensorstore/<case>/   written by tensorstore's `zarr3` driver
  expected/<case>.bin   the values every reader must see, little-endian C order
  manifest.json         {"cases": [...]}: name, data_type, shape, chunk_shape
                        (the shard shape), codecs, fill_value_hex and the
                        regions written ([[start, stop], ...] per region)

The cases cover `sharding_indexed` with the index at the end and at the
start, with and without a crc32c on the index, nested sharding, shards at
the array's edge, missing shards and missing inner chunks, uint16 and
float32, zstd and blosc inner codecs. zarrkit's test
(zarrkit/tests/it/sharding.rs) reads every case element by element, writes
each again under DIR/zarrkit/<case>, and runs `read`, which checks that both
libraries read zarrkit's shards exactly. Each writer reads its own output
back before the manifest is written, so a later mismatch is zarrkit's.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import tensorstore as ts
import zarr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop_common import bit_view, from_le_bytes, scalar_le_hex, to_le_bytes, values, write_json  # noqa: E402

LITTLE = {"name": "bytes", "configuration": {"endian": "little"}}
CRC32C = {"name": "crc32c"}


def zstd(level: int) -> dict:
    return {"name": "zstd", "configuration": {"level": level, "checksum": False}}


def blosc(typesize: int) -> dict:
    return {
        "name": "blosc",
        "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": typesize, "blocksize": 0},
    }


def sharding(chunk_shape, codecs, *, crc: bool, location: str) -> dict:
    return {
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": list(chunk_shape),
            "codecs": codecs,
            "index_codecs": [LITTLE, CRC32C] if crc else [LITTLE],
            "index_location": location,
        },
    }


# A whole shard, part of an inner shard's inner chunks, and an edge shard;
# every other shard and most inner chunks stay missing.
PARTIAL = [[[0, 8], [0, 12]], [[9, 11], [13, 17]], [[17, 20], [25, 30]]]


def cases() -> list[dict]:
    out = []

    def case(name, dtype, fill, codec, written, shape=(20, 30), shards=(8, 12), seed=0):
        out.append(
            {
                "name": name,
                "data_type": dtype,
                "shape": list(shape),
                "chunk_shape": list(shards),
                "fill": fill,
                "codecs": [codec],
                "written": written,
                "seed": seed,
            }
        )

    zstd_inner = [LITTLE, zstd(1)]
    blosc_inner = [LITTLE, blosc(4)]
    case("uint16_zstd_end_crc32c", "uint16", 7, sharding((4, 4), zstd_inner, crc=True, location="end"), PARTIAL, seed=1)
    case("uint16_zstd_start", "uint16", 0, sharding((4, 4), zstd_inner, crc=False, location="start"), "all", seed=2)
    case("uint16_zstd_start_crc32c", "uint16", 3, sharding((4, 6), zstd_inner, crc=True, location="start"), PARTIAL, seed=3)
    case("float32_blosc_end", "float32", -1.5, sharding((4, 4), blosc_inner, crc=False, location="end"), PARTIAL, seed=4)
    case("float32_blosc_start_crc32c", "float32", 0.0, sharding((2, 6), blosc_inner, crc=True, location="start"), "all", seed=5)
    nested = sharding(
        (4, 4),
        [sharding((2, 2), zstd_inner, crc=False, location="start")],
        crc=True,
        location="end",
    )
    case("uint16_nested", "uint16", 9, nested, PARTIAL, shards=(8, 12), seed=6)
    case("float32_nested_blosc", "float32", 2.0, sharding((4, 4), [sharding((2, 2), blosc_inner, crc=True, location="end")], crc=False, location="start"), "all", shape=(13, 10), shards=(8, 8), seed=7)
    return out


def expected(c: dict) -> np.ndarray:
    data = values(c["data_type"], tuple(c["shape"]), c["seed"])
    if c["written"] == "all":
        return data
    out = np.full(c["shape"], c["fill"], dtype=c["data_type"])
    for region in c["written"]:
        sl = tuple(slice(a, b) for a, b in region)
        out[sl] = data[sl]
    return out


def regions(c: dict):
    if c["written"] == "all":
        return [tuple(slice(0, n) for n in c["shape"])]
    return [tuple(slice(a, b) for a, b in region) for region in c["written"]]


def ts_spec(path: str) -> dict:
    return {"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}


def write(out_dir: str) -> int:
    os.makedirs(os.path.join(out_dir, "expected"), exist_ok=True)
    problems = []
    manifest = []
    for c in cases():
        data = values(c["data_type"], tuple(c["shape"]), c["seed"])
        zp_path = os.path.join(out_dir, "zarr_python", c["name"])
        arr = zarr.create_array(
            zp_path,
            shape=c["shape"],
            chunks=c["chunk_shape"],
            dtype=c["data_type"],
            serializer=c["codecs"][0],
            compressors=None,
            filters=None,
            fill_value=c["fill"],
        )
        for sl in regions(c):
            arr[sl] = data[sl]
        ts_path = os.path.join(out_dir, "tensorstore", c["name"])
        spec = ts_spec(ts_path) | {
            "metadata": {
                "shape": c["shape"],
                "data_type": c["data_type"],
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": c["chunk_shape"]}},
                "codecs": c["codecs"],
                "fill_value": c["fill"],
            },
            "create": True,
            "delete_existing": True,
        }
        store = ts.open(spec).result()
        for sl in regions(c):
            store[sl].write(data[sl]).result()
        want = expected(c)
        for writer, got in (
            ("zarr-python", zarr.open_array(zp_path, mode="r")[...]),
            ("tensorstore", ts.open(ts_spec(ts_path), read=True).result().read().result()),
        ):
            if not np.array_equal(bit_view(np.asarray(got)), bit_view(want)):
                problems.append(f"{writer} does not read back {c['name']} as written")
        with open(os.path.join(out_dir, "expected", c["name"] + ".bin"), "wb") as f:
            f.write(to_le_bytes(want, c["data_type"]))
        entry = {k: v for k, v in c.items() if k not in ("fill", "seed")}
        entry["fill_value_hex"] = scalar_le_hex(c["fill"], c["data_type"])
        entry["fill_value"] = c["fill"]
        if entry["written"] == "all":
            entry["written"] = [[[0, n] for n in c["shape"]]]
        manifest.append(entry)
    write_json(os.path.join(out_dir, "manifest.json"), {"cases": manifest})
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if problems else 0


def read(out_dir: str) -> int:
    problems = []
    checked = 0
    for c in cases():
        path = os.path.join(out_dir, "zarrkit", c["name"])
        with open(os.path.join(out_dir, "expected", c["name"] + ".bin"), "rb") as f:
            want = from_le_bytes(f.read(), c["data_type"], c["shape"])
        readers = (
            ("zarr-python", lambda: zarr.open_array(path, mode="r")[...]),
            ("tensorstore", lambda: ts.open(ts_spec(path), read=True).result().read().result()),
        )
        for reader, read_all in readers:
            try:
                got = np.asarray(read_all())
            except Exception as e:  # noqa: BLE001 - report every failure
                problems.append(f"{reader} cannot read zarrkit's {c['name']}: {e}")
                continue
            if got.shape != want.shape or not np.array_equal(bit_view(got), bit_view(want)):
                problems.append(f"{reader} reads zarrkit's {c['name']} with different values")
            checked += 1
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    print(f"checked {checked} reads of zarrkit's sharded arrays", file=sys.stderr)
    return 1 if problems else 0


def main() -> int:
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "read"):
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = os.path.abspath(sys.argv[2])
    return write(out_dir) if sys.argv[1] == "write" else read(out_dir)


if __name__ == "__main__":
    sys.exit(main())
