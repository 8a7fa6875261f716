"""Interop for the `n5_default` codec (issue #5) with tensorstore's `n5` driver.

tensorstore 0.1 writes and reads N5 arrays: an `attributes.json` and one
block per chunk under `<i0>/<i1>/...`, each block a default-mode header and
the big-endian, column-major elements, compressed per `compression`. That
is the block format `n5_default` defines, so zarrkit reads the blocks
tensorstore writes (given a `zarr.json` beside `attributes.json`, as the
extension's "Compatibility notes" describe) and tensorstore reads the
blocks zarrkit writes.

Each case's values are `arange(n) * step + offset` in C order, so the
Rust test (zarrkit/tests/it/codecs/ext_compression.rs) computes them too.

`write DIR`: tensorstore writes each case under DIR/<name>.
`read DIR`: prints, as JSON, tensorstore's reading of each DIR/<name>
(zarrkit wrote them), flattened in C order.
"""

import json
import sys

import numpy as np
import tensorstore as ts

# name: (dimensions, blockSize, dataType, compression, step, offset)
CASES = {
    "uint16_raw": ([5, 7], [2, 3], "uint16", {"type": "raw"}, 1, 0),
    "float32_gzip": ([4, 6], [3, 4], "float32", {"type": "gzip", "level": 5}, 0.5, -3),
    "int64_raw_1d": ([9], [4], "int64", {"type": "raw"}, -1000000007, 5),
}


def values(shape, dtype, step, offset):
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.float64) * step + offset).astype(dtype).reshape(shape)


def spec(root, name):
    return {"driver": "n5", "kvstore": {"driver": "file", "path": f"{root}/{name}"}}


def write(root):
    for name, (dims, block, dtype, compression, step, offset) in CASES.items():
        metadata = {
            "dimensions": dims,
            "blockSize": block,
            "dataType": dtype,
            "compression": compression,
        }
        array = ts.open({**spec(root, name), "metadata": metadata}, create=True).result()
        array[...] = values(dims, dtype, step, offset)


def read(root):
    out = {}
    for name in CASES:
        array = ts.open(spec(root, name)).result()
        out[name] = array.read().result().ravel().tolist()
    print(json.dumps(out))


if __name__ == "__main__":
    {"write": write, "read": read}[sys.argv[1]](sys.argv[2])
