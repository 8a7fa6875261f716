"""Fixtures for the `conditional` and `n5_default` codecs (issue #5).

Run from the repository root with the interop virtualenv
(scripts/requirements.txt):

    .venv/bin/python testdata/generate/codecs_ext2_fixtures.py

testdata/codecs/conditional/readme_example_1/ is the `conditional`
configuration of the extension README's Example 1 (a shuffle of 4-byte
elements, then zstd level 5) after little-endian `bytes`, on a float32
array of shape [2, 12] in [2, 4] chunks, with the chunks made here by hand
from the README's "Encoding Process": chunk 0 with both codecs (mask
0b11), chunk 1 with neither (0b00), chunk 2 with zstd only (0b10), each
behind a one-byte header, the codecs being numcodecs' Shuffle and Zstd.
testdata/codecs/conditional/header_bits_16/ is one chunk with shuffle only
(0b01) behind a two-byte header (`header_bits` 16).

testdata/codecs/n5_default/tensorstore_uint16_gzip/ is an N5 array that
tensorstore's `n5` driver wrote (uint16, shape [5, 7], blocks [2, 3],
gzip), with the `zarr.json` that reads it through `n5_default` beside its
`attributes.json` (the README's "Compatibility notes", "Storage").

The values are `arange(n) * 0.25 - 2` (float32) and `arange(n) * 3 + 1`
(uint16) in C order; zarrkit/tests/it/codecs/ext_compression.rs checks them.
"""

import json
import pathlib
import shutil

import numcodecs
import numpy as np
import tensorstore as ts

ROOT = pathlib.Path("testdata/codecs")


def zarr_json(shape, chunks, dtype, codecs, **extra):
    return {
        "zarr_format": 3,
        "node_type": "array",
        "shape": shape,
        "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0,
        "codecs": codecs,
        **extra,
    }


def encode(raw, mask, header_bytes):
    shuffle = numcodecs.Shuffle(elementsize=4)
    zstd = numcodecs.Zstd(level=5)
    data = raw
    for bit, codec in enumerate([shuffle, zstd]):
        if mask >> bit & 1:
            data = bytes(codec.encode(data))
    return mask.to_bytes(header_bytes, "little") + data


def conditional(name, header_bits, masks):
    out = ROOT / "conditional" / name
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    ncols = 4 * len(masks)
    values = (np.arange(2 * ncols) * 0.25 - 2).astype("<f4").reshape(2, ncols)
    configuration = {
        "codecs": [
            {"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}},
            {"name": "zstd", "configuration": {"level": 5, "checksum": False}},
        ]
    }
    if header_bits is not None:
        configuration["header_bits"] = header_bits
    codecs = [
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "conditional", "configuration": configuration},
    ]
    (out / "zarr.json").write_text(json.dumps(zarr_json([2, ncols], [2, 4], "float32", codecs), indent=2) + "\n")
    header_bytes = (header_bits or 8) // 8
    for j, mask in enumerate(masks):
        chunk = np.ascontiguousarray(values[:, 4 * j : 4 * j + 4]).tobytes()
        (out / "c" / "0").mkdir(parents=True, exist_ok=True)
        (out / "c" / "0" / str(j)).write_bytes(encode(chunk, mask, header_bytes))


def n5():
    out = ROOT / "n5_default" / "tensorstore_uint16_gzip"
    shutil.rmtree(out, ignore_errors=True)
    metadata = {"dimensions": [5, 7], "blockSize": [2, 3], "dataType": "uint16",
                "compression": {"type": "gzip", "level": 5}}
    array = ts.open({"driver": "n5", "kvstore": {"driver": "file", "path": str(out)},
                     "metadata": metadata}, create=True).result()
    array[...] = (np.arange(35) * 3 + 1).astype("uint16").reshape(5, 7)
    codecs = [{"name": "n5_default", "configuration": {"codecs": [
        {"name": "transpose", "configuration": {"order": [1, 0]}},
        {"name": "bytes", "configuration": {"endian": "big"}},
        {"name": "gzip", "configuration": {"level": 5}},
    ]}}]
    doc = zarr_json([5, 7], [2, 3], "uint16", codecs)
    doc["chunk_key_encoding"] = {"name": "v2", "configuration": {"separator": "/"}}
    (out / "zarr.json").write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    conditional("readme_example_1", None, [0b11, 0b00, 0b10])
    conditional("header_bits_16", 16, [0b01])
    n5()
