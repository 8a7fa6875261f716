"""Writes stores with arrays but no root node, as tensorstore writes them
(issue #9, item 6): tensorstore has no groups, so arrays opened at `a` and
`b/c` of a kvstore leave no group document anywhere, not even at the root.

Run from the repository root with the pinned tensorstore
(scripts/requirements.txt):

    python testdata/generate/no_root_fixtures.py

Writes testdata/fixtures/no-root/{v2,v3}.zarr and replaces their entries in
testdata/fixtures.toml; the corpus test reads every array, and
zarrkit/tests/it/migrate.rs migrates the stores.
"""

import importlib.metadata
import os
import shutil
import sys

import tensorstore as ts

sys.path.insert(0, os.path.dirname(__file__))
from draft_common import entry, pattern, update_manifest  # noqa: E402

ROOT = os.path.join("testdata", "fixtures", "no-root")
WRITER = "tensorstore " + importlib.metadata.version("tensorstore")

# (node, shape, chunks, NumPy dtype)
ARRAYS = [
    ("a", [7, 5], [3, 2], "<i4"),
    ("b/c", [10], [4], "<f8"),
]


def main():
    shutil.rmtree(ROOT, ignore_errors=True)
    entries = []
    for fmt in ["v2", "v3"]:
        store = os.path.join(ROOT, fmt + ".zarr")
        for node, shape, chunks, dtype in ARRAYS:
            path = os.path.join(store, node)
            if fmt == "v2":
                spec = {
                    "driver": "zarr",
                    "kvstore": {"driver": "file", "path": path},
                    "metadata": {"shape": shape, "chunks": chunks, "dtype": dtype,
                                 "compressor": {"id": "zlib", "level": 1}, "fill_value": 0},
                }
            else:
                spec = {
                    "driver": "zarr3",
                    "kvstore": {"driver": "file", "path": path},
                    "metadata": {
                        "shape": shape,
                        "data_type": {"<i4": "int32", "<f8": "float64"}[dtype],
                        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
                        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                   {"name": "gzip", "configuration": {"level": 1}}],
                        "fill_value": 0,
                        "dimension_names": ["y", "x"][-len(shape):],
                    },
                }
            array = ts.open(spec, create=True, delete_existing=True).result()
            values = pattern(tuple(shape), dtype)
            array.write(values).result()
            name = f"no_root_{fmt}_{node.replace('/', '_')}"
            entries.append(entry(name, fmt, store, "/" + node, values, WRITER))
    update_manifest(entries, ["fixtures/no-root/"])


if __name__ == "__main__":
    main()
