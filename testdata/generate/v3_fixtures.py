"""Writes the v3 fixtures under testdata/fixtures/v3/ and their manifest entries.

Run from the repository root with a Python that has the pinned zarr and
tensorstore (scripts/requirements.txt):

    python testdata/generate/v3_fixtures.py

Each fixture is a small store written by a real implementation. The
manifest (testdata/fixtures.toml) records, per array, the data type, the
shape and the SHA-256 of its values as little-endian C-order bytes, which the
corpus test (zarrkit/tests/it/interop/corpus.rs) checks through every store backend.
"""

import hashlib
import importlib.metadata
import json
import os
import shutil

import numpy as np
import tensorstore as ts
import zarr
from zarr.codecs import (
    BloscCodec,
    BytesCodec,
    Crc32cCodec,
    GzipCodec,
    ShardingCodec,
    TransposeCodec,
    ZstdCodec,
)

ROOT = os.path.join("testdata", "fixtures", "v3")


def pattern(shape, dtype):
    n = int(np.prod(shape)) if shape else 1
    i = np.arange(n, dtype=np.int64)
    if np.dtype(dtype).kind == "b":
        v = (i * 7 % 3) == 0
    elif np.dtype(dtype).kind == "c":
        v = (i * 0.5 - 3) + 1j * (n - i)
    elif np.dtype(dtype).kind == "f":
        v = np.sin(i * 0.1) * 100
    else:
        v = (i * 2654435761) % 251
    return v.astype(dtype).reshape(shape)


def digest(values):
    le = values.astype(values.dtype.newbyteorder("<"), copy=False)
    return hashlib.sha256(np.ascontiguousarray(le).tobytes()).hexdigest()


entries = []


def record(name, store_dir, node, values, writer, data_type):
    entries.append(
        {
            "name": name,
            "format": "v3",
            "store": os.path.relpath(store_dir, "testdata"),
            "node": node,
            "data_type": data_type,
            "shape": list(values.shape),
            "sha256": digest(values),
            "writer": writer,
        }
    )


def zarr_python():
    path = os.path.join(ROOT, "zarr-python.zarr")
    root = zarr.open_group(path, mode="w", zarr_format=3, attributes={"title": "zarrkit v3 fixtures", "n": 3})
    cases = [
        ("uint16_zstd", (20, 30), (7, 8), "uint16", [BytesCodec(), ZstdCodec(level=3, checksum=True)], 0),
        ("float32_big_gzip", (13, 9), (5, 4), "float32", [BytesCodec(endian="big"), GzipCodec(level=6)], float("nan")),
        ("complex64_transpose", (6, 5, 4), (3, 5, 2), "complex64", [TransposeCodec(order=[2, 0, 1]), BytesCodec(), Crc32cCodec()], 0),
        ("bool_blosc", (33,), (10,), "bool", [BytesCodec(), BloscCodec(cname="lz4", clevel=5, shuffle="bitshuffle", typesize=1)], False),
        ("int64_scalar", (), (), "int64", [BytesCodec()], -5),
        # 10x12 shards of 5x4 inner chunks; the unwritten last rows leave
        # inner chunks and a shard missing.
        (
            "uint16_sharded",
            (20, 30),
            (10, 12),
            "uint16",
            [
                ShardingCodec(
                    chunk_shape=(5, 4),
                    codecs=[BytesCodec(), ZstdCodec(level=3)],
                    index_codecs=[BytesCodec(), Crc32cCodec()],
                    index_location="end",
                )
            ],
            7,
        ),
    ]
    for name, shape, chunks, dtype, codecs, fill in cases:
        serializer = codecs[0] if not isinstance(codecs[0], TransposeCodec) else codecs[1]
        filters = [c for c in codecs if isinstance(c, TransposeCodec)]
        compressors = [c for c in codecs if c is not serializer and c not in filters]
        a = root.create_array(
            name,
            shape=shape,
            chunks=chunks,
            dtype=dtype,
            serializer=serializer,
            filters=filters or None,
            compressors=compressors or None,
            fill_value=fill,
            attributes={"case": name},
        )
        values = pattern(shape, dtype)
        if len(shape) >= 1 and shape[0] > 4:
            # Leave the last rows unwritten so some chunks are missing.
            values[shape[0] - 3 :] = np.array(fill, dtype=dtype)
            a[: shape[0] - 3] = values[: shape[0] - 3]
        else:
            a[...] = values
        record(name, path, "/" + name, values, "zarr-python " + zarr.__version__, dtype)


def tensorstore_fixture():
    path = os.path.join(ROOT, "tensorstore.zarr")
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "zarr.json"), "w") as f:
        json.dump({"zarr_format": 3, "node_type": "group", "attributes": {"writer": "tensorstore"}}, f)
    cases = [
        ("int16_dot_keys", [17, 11], [4, 4], "int16", [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}], {"name": "default", "configuration": {"separator": "."}}),
        ("uint32_v2_keys", [10, 10], [3, 6], "uint32", [{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}], {"name": "v2", "configuration": {"separator": "."}}),
        ("float32_sharded_index_start", [9, 10], [6, 10], "float32", [{"name": "sharding_indexed", "configuration": {"chunk_shape": [3, 5], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}], "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "index_location": "start"}}], {"name": "default", "configuration": {"separator": "/"}}),
        ("float64_f_order", [9, 7], [4, 3], "float64", [{"name": "transpose", "configuration": {"order": [1, 0]}}, {"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}], {"name": "default", "configuration": {"separator": "/"}}),
    ]
    for name, shape, chunks, dtype, codecs, cke in cases:
        arr = ts.open(
            {
                "driver": "zarr3",
                "kvstore": {"driver": "file", "path": os.path.join(path, name)},
                "metadata": {
                    "shape": shape,
                    "data_type": dtype,
                    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
                    "chunk_key_encoding": cke,
                    "codecs": codecs,
                    "fill_value": 0,
                },
                "create": True,
                "delete_existing": True,
            }
        ).result()
        values = pattern(tuple(shape), dtype)
        arr.write(values).result()
        record(name, path, "/" + name, values, "tensorstore " + importlib.metadata.version("tensorstore"), dtype)


def main():
    shutil.rmtree(ROOT, ignore_errors=True)
    os.makedirs(ROOT)
    zarr_python()
    tensorstore_fixture()
    write_manifest_entries("v3", entries)


def write_manifest_entries(fmt, new_entries):
    """Replaces the `format = fmt` entries of testdata/fixtures.toml, keeping
    the header and every other format's entries as they are."""
    path = os.path.join("testdata", "fixtures.toml")
    with open(path) as f:
        text = f.read()
    header, _, body = text.partition("[[fixture]]")
    blocks = ["[[fixture]]" + b for b in body.split("[[fixture]]") if b.strip()] if body else []
    # Only this script's stores: other generators (no_root_fixtures.py)
    # write v3 entries under other folders.
    kept = [
        b for b in blocks
        if f"format = {json.dumps(fmt)}" not in b or f'store = "fixtures/{fmt}/' not in b
    ]
    ours = []
    for e in new_entries:
        lines = ["[[fixture]]"]
        for k in ["name", "format", "store", "node", "data_type", "shape", "sha256", "writer"]:
            lines.append(f"{k} = {json.dumps(e[k])}")
        ours.append("\n".join(lines) + "\n\n")
    with open(path, "w") as f:
        f.write(header + "".join(ours) + "".join(b if b.endswith("\n\n") else b.rstrip("\n") + "\n\n" for b in kept).rstrip("\n") + "\n")

if __name__ == "__main__":
    main()
