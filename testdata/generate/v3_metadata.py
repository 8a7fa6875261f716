"""Write the zarr.json documents under testdata/metadata/v3/.

Each document is copied byte for byte from an array or group that a
reference implementation created, so the Rust tests parse exactly what
real writers produce (tests/it/formats/documents.rs parses every file there).

Run from anywhere, with a Python that has the pinned versions installed:

    pip install zarr==3.1.6 tensorstore==0.1.86
    python testdata/generate/v3_metadata.py

Documents are named `<writer>-<what>.json`. zarr-python cannot create the
core `r*` raw types (it writes its own `raw_bytes` extension instead) and
tensorstore 0.1.86 aborts when creating them, so no fixture has one.
"""

import json
import math
import os
import shutil
import tempfile

import tensorstore as ts
from importlib.metadata import version
import zarr

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "metadata", "v3")

CORE_TYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]


def copy_document(node_dir, name):
    with open(os.path.join(node_dir, "zarr.json"), "rb") as f:
        data = f.read()
    json.loads(data)  # fail here rather than in the Rust tests
    with open(os.path.join(OUT, name + ".json"), "wb") as f:
        f.write(data)


def zarr_python(tmp):
    def array(name, **kwargs):
        path = os.path.join(tmp, "zp-" + name)
        zarr.create_array(store=path, **kwargs)
        copy_document(path, "zarr_python-" + name)

    for dtype in CORE_TYPES:
        array(dtype + "-default-fill", shape=(3, 4), chunks=(2, 2), dtype=dtype)

    array("float32-nan", shape=(5,), chunks=(2,), dtype="float32", fill_value=math.nan)
    array("float64-infinity", shape=(5,), chunks=(2,), dtype="float64", fill_value=math.inf)
    array("float16-negative-infinity", shape=(5,), chunks=(2,), dtype="float16", fill_value=-math.inf)
    array("float32-one-tenth", shape=(5,), chunks=(2,), dtype="float32", fill_value=0.1)
    array("float64-negative-zero", shape=(5,), chunks=(2,), dtype="float64", fill_value=-0.0)
    array("complex128-nan-negative-infinity", shape=(5,), chunks=(2,), dtype="complex128",
          fill_value=complex(math.nan, -math.inf))
    array("complex64-one-two", shape=(5,), chunks=(2,), dtype="complex64", fill_value=1 + 2j)
    array("bool-true", shape=(5,), chunks=(2,), dtype="bool", fill_value=True)
    array("int64-minimum", shape=(5,), chunks=(2,), dtype="int64", fill_value=-(2**63))
    array("uint64-maximum", shape=(5,), chunks=(2,), dtype="uint64", fill_value=2**64 - 1)
    array("dimension-names-with-null", shape=(3, 4, 5), chunks=(2, 2, 2), dtype="int16",
          dimension_names=["z", None, "x"], attributes={"units": "m", "nested": {"a": [1, 2.5, None]}})
    array("zero-dimensional-v2-keys", shape=(), dtype="float64", fill_value=1.5,
          chunk_key_encoding={"name": "v2", "separator": "."})
    array("zero-length-dimension", shape=(0, 7), chunks=(3, 7), dtype="uint8")
    array("sharded-gzip", shape=(16, 16), chunks=(4, 4), shards=(8, 8), dtype="int32",
          compressors=zarr.codecs.GzipCodec(level=3), fill_value=-1)

    group = os.path.join(tmp, "zp-group")
    zarr.open_group(group, mode="w", attributes={"title": "example", "count": 3})
    copy_document(group, "zarr_python-group")
    zarr.create_array(store=group, name="child", shape=(4,), dtype="uint8")
    zarr.consolidate_metadata(group)
    copy_document(group, "zarr_python-group-consolidated")


def tensorstore(tmp):
    def array(name, metadata):
        path = os.path.join(tmp, "ts-" + name)
        spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": path}, "metadata": metadata}
        ts.open(spec, create=True).result()
        copy_document(path, "tensorstore-" + name)

    grid = {"name": "regular", "configuration": {"chunk_shape": [2, 2]}}
    for dtype in CORE_TYPES:
        array(dtype + "-default-fill", {"data_type": dtype, "shape": [3, 4], "chunk_grid": grid})

    array("float16-nan", {"data_type": "float16", "shape": [3, 4], "chunk_grid": grid, "fill_value": "NaN"})
    array("float64-nan-payload", {"data_type": "float64", "shape": [3, 4], "chunk_grid": grid,
                                  "fill_value": "0x7ff0000000000001"})
    array("float32-negative-infinity", {"data_type": "float32", "shape": [3, 4], "chunk_grid": grid,
                                        "fill_value": "-Infinity"})
    array("complex128-nan-negative-infinity", {"data_type": "complex128", "shape": [3, 4], "chunk_grid": grid,
                                               "fill_value": ["NaN", "-Infinity"]})
    array("v2-keys-dimension-names", {"data_type": "int8", "shape": [3, 4], "chunk_grid": grid,
                                      "chunk_key_encoding": {"name": "v2"}, "dimension_names": ["y", None],
                                      "attributes": {"u": [1]}})
    array("zero-dimensional-sharded", {
        "data_type": "uint16",
        "shape": [],
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": []}},
        "codecs": [{
            "name": "sharding_indexed",
            "configuration": {
                "chunk_shape": [],
                "codecs": [{"name": "bytes", "configuration": {"endian": "big"}},
                           {"name": "gzip", "configuration": {"level": 5}}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            },
        }],
    })


def main():
    print("zarr", version("zarr"), "tensorstore", version("tensorstore"))
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    with tempfile.TemporaryDirectory() as tmp:
        zarr_python(tmp)
        tensorstore(tmp)
    print("wrote", len(os.listdir(OUT)), "documents to", os.path.normpath(OUT))


if __name__ == "__main__":
    main()
