"""Vectors for the v3 `zfp` codec (issue #5), written with zfpy.

zfpy (the zfp library's own Python binding, which numcodecs' `zfpy` codec
wraps) compresses without its header when given `write_header=False`: that
is the stored form of the v3 `zfp` codec (extension README, "Differences
from `numcodecs.zfpy`"). zfpy has the three modes numcodecs exposes
(fixed accuracy, rate and precision); `reversible` and `expert` are
tested by round trips and error bounds in zarrkit/src/codec/ext/zfp.rs.

For each case this writes testdata/codecs/zfp/<case>.input (the array's
elements, little endian, C order), <case>.zfp (zfpy's stream) and
<case>.decoded (zfpy's decoding of that stream).
zarrkit/tests/it/codecs/ext_compression.rs checks that zarrkit encodes the input to
the same bytes and decodes the stream to the same values.

Run with the interop virtualenv (scripts/requirements.txt pins zfpy):
    .venv/bin/python testdata/generate/zfp_vectors.py
"""

import json
import pathlib

import numpy as np
import zfpy

OUT = pathlib.Path(__file__).resolve().parent.parent / "codecs" / "zfp"

TYPES = {
    "float32": zfpy.type_float,
    "float64": zfpy.type_double,
    "int32": zfpy.type_int32,
    "int64": zfpy.type_int64,
}

# name: (dtype, shape, mode parameters as the v3 configuration)
CASES = {
    "float32_3d_accuracy": ("float32", [3, 5, 6], {"mode": "fixed_accuracy", "tolerance": 0.05}),
    "float64_2d_rate": ("float64", [7, 9], {"mode": "fixed_rate", "rate": 10.5}),
    "float64_4d_precision": ("float64", [2, 3, 4, 5], {"mode": "fixed_precision", "precision": 19}),
    "int32_1d_precision": ("int32", [37], {"mode": "fixed_precision", "precision": 24}),
    "int64_2d_rate": ("int64", [5, 6], {"mode": "fixed_rate", "rate": 16}),
}


def data(dtype, shape):
    n = int(np.prod(shape))
    x = np.arange(n, dtype=np.float64)
    if dtype.startswith("float"):
        values = np.sin(x * 0.3) * 50 + x * 0.01
    else:
        values = np.round(np.sin(x * 0.2) * 1e6 + x * 1000)
    return values.astype(dtype).reshape(shape)


def kwargs(config):
    mode = config["mode"]
    if mode == "fixed_accuracy":
        return {"tolerance": config["tolerance"]}
    if mode == "fixed_rate":
        return {"rate": config["rate"]}
    return {"precision": config["precision"]}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    manifest = {}
    for name, (dtype, shape, config) in CASES.items():
        array = data(dtype, shape)
        stream = zfpy.compress_numpy(array, write_header=False, **kwargs(config))
        decoded = zfpy._decompress(stream, TYPES[dtype], shape, **kwargs(config))
        (OUT / f"{name}.input").write_bytes(array.astype(array.dtype.newbyteorder("<")).tobytes())
        (OUT / f"{name}.zfp").write_bytes(bytes(stream))
        (OUT / f"{name}.decoded").write_bytes(decoded.astype(decoded.dtype.newbyteorder("<")).tobytes())
        manifest[name] = {"data_type": dtype, "shape": shape, "configuration": config}
    (OUT / "cases.json").write_text(json.dumps(manifest, indent=2) + "\n")


if __name__ == "__main__":
    main()
