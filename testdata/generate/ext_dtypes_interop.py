"""Interop for the registered v3 extension data types (issue #5).

`write DIR`: zarr-python writes `numpy.datetime64`/`numpy.timedelta64`
arrays and tensorstore a `bfloat16` array; zarrkit reads them
(zarrkit/tests/it/data_types/extension.rs checks the values).

`read DIR`: reads the arrays zarrkit wrote under DIR (`dt`, `td`, `bf`) and
prints, as JSON, zarr-python's NumPy dtype, fill value and elements as
integer counts (NaT as -2^63) of `dt` and `td`, and tensorstore's reading of
`bf` as bit patterns (zarr-python 3.1 has no bfloat16).

zarr-python 3.1 and tensorstore 0.1 support neither `complex_bfloat16` nor
`complex_float16`, so those are covered by unit tests only.
"""

import json
import sys

import numpy as np
import tensorstore as ts
import zarr
from zarr.codecs import BytesCodec


def write(root):
    dt = zarr.create_array(
        f"{root}/dt", shape=(6,), chunks=(2,), dtype="datetime64[10us]",
        fill_value=np.datetime64("NaT"), compressors=None,
    )
    # The last chunk is never written: it reads as the NaT fill value.
    dt[:4] = np.array([0, 1, -5, "NaT"], dtype="datetime64[10us]")
    td = zarr.create_array(
        f"{root}/td", shape=(3,), chunks=(3,), dtype="m8[s]",
        fill_value=np.timedelta64(7, "s"), compressors=None,
        serializer=BytesCodec(endian="big"),
    )
    td[:2] = np.array([1, -2], dtype="m8[s]")
    bf = ts.open({
        "driver": "zarr3", "kvstore": {"driver": "file", "path": f"{root}/bf"},
        "metadata": {
            "shape": [5], "data_type": "bfloat16",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
            "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}],
            "fill_value": 1.5,
        },
    }, create=True).result()
    # 3.140625 is 0x4049; the last element stays the fill value 1.5 (0x3fc0).
    bf[:4] = np.array([1.0, -2.5, 3.140625, float("inf")], dtype=ts.bfloat16.numpy_dtype)


def read(root):
    out = {}
    for name in ["dt", "td"]:
        a = zarr.open_array(f"{root}/{name}", mode="r")
        values = a[...]
        out[name] = {
            "dtype": str(a.dtype),
            "fill": values.dtype.type(a.fill_value).view(f"i{values.itemsize}").item(),
            "values": values.view(f"i{values.itemsize}").tolist(),
        }
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": f"{root}/bf"}}).result()
    out["bf_tensorstore"] = t.read().result().view(np.uint16).tolist()
    print(json.dumps(out))


if __name__ == "__main__":
    {"write": write, "read": read}[sys.argv[1]](sys.argv[2])
