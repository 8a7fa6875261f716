"""Interop for the registered small v3 data types (issue #5) with tensorstore.

tensorstore 0.1 reads and writes, under the registered names, `float8_e3m4`,
`float8_e4m3b11fnuz`, `float8_e4m3fnuz`, `float8_e5m2`, `float8_e5m2fnuz`,
`float8_e8m0fnu`, `float4_e2m1fn`, `int2` and `int4` (its `float8_e4m3fn`
is not the registered `float8_e4m3`, and it has no `uint2`/`uint4` or
`float6_*`); zarr-python 3.1 has none of them. `float8_e8m0fnu` is left
out: tensorstore 0.1.86 stores 1.0 as 0x3f, not the 0x7f of the
specification (bias 127) and ml_dtypes.

`write DIR`: tensorstore writes each type's VALUES under DIR/<name>
(zarrkit/tests/it/data_types/small.rs checks what zarrkit reads).
`read DIR`: prints, as JSON, tensorstore's reading of DIR/<name> as floats
or integers (zarrkit wrote them).
"""

import json
import sys

import tensorstore as ts

FLOATS = {
    "float8_e3m4": [1.0, -2.0, 0.5, 4.0],
    "float8_e4m3b11fnuz": [1.0, -2.0, 0.5, 4.0],
    "float8_e4m3fnuz": [1.0, -2.0, 0.5, 4.0],
    "float8_e5m2": [1.0, -2.0, 0.5, 4.0],
    "float8_e5m2fnuz": [1.0, -2.0, 0.5, 4.0],
    "float4_e2m1fn": [1.0, -2.0, 0.5, 4.0],
}
INTS = {"int2": [-2, 1, 0, -1], "int4": [-8, 7, -1, 3]}


def spec(root, name):
    return {"driver": "zarr3", "kvstore": {"driver": "file", "path": f"{root}/{name}"}}


def write(root):
    for name, values in {**FLOATS, **INTS}.items():
        array = ts.open(
            spec(root, name), create=True, dtype=name, shape=[4],
            chunk_layout=ts.ChunkLayout(chunk_shape=[2]),
        ).result()
        array[...] = ts.array(values, dtype=ts.float32 if name in FLOATS else ts.int8).astype(name)


def read(root):
    out = {}
    for name in {**FLOATS, **INTS}:
        array = ts.open(spec(root, name)).result()
        kind = ts.float32 if name in FLOATS else ts.int8
        out[name] = array.astype(kind).read().result().tolist()
    print(json.dumps(out))


if __name__ == "__main__":
    {"write": write, "read": read}[sys.argv[1]](sys.argv[2])
