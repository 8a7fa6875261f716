"""What the v3 draft fixture scripts share: the value pattern, the digest and
the manifest update.

The manifest (testdata/fixtures.toml) records, per array, the data type (the
model's v3 name), the shape and the SHA-256 of its values as little-endian
C-order bytes; the corpus test (zarrkit/tests/it/interop/corpus.rs) checks them
through every store backend. Each script replaces only the entries of its own
stores, so the scripts of other formats keep theirs.
"""

import hashlib
import json
import os

import numpy as np

V3_NAMES = {
    "b1": "bool", "i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64",
    "u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64",
    "f2": "float16", "f4": "float32", "f8": "float64", "c8": "complex64", "c16": "complex128",
}


def v3_name(dtype):
    dtype = np.dtype(dtype)
    if dtype.names:
        return "struct"
    if dtype.kind in "SU":
        return {"S": "null_terminated_bytes", "U": "fixed_length_utf32"}[dtype.kind]
    if dtype.kind in "Mm":
        return {"M": "numpy.datetime64", "m": "numpy.timedelta64"}[dtype.kind]
    return V3_NAMES[dtype.kind + str(dtype.itemsize)]


def pattern(shape, dtype):
    """Deterministic values of every kind, as testdata/generate/v3_fixtures.py makes them."""
    n = int(np.prod(shape)) if shape else 1
    i = np.arange(n, dtype=np.int64)
    kind = np.dtype(dtype).kind
    if kind == "b":
        v = (i * 7 % 3) == 0
    elif kind == "c":
        v = (i * 0.5 - 3) + 1j * (n - i)
    elif kind == "f":
        v = np.sin(i * 0.1) * 100
    else:
        v = (i * 2654435761) % 251
    return v.astype(dtype).reshape(shape)


def digest(values):
    le = values.astype(values.dtype.newbyteorder("<"), copy=False)
    return hashlib.sha256(np.ascontiguousarray(le).tobytes()).hexdigest()


def entry(name, fmt, store_dir, node, values, writer):
    return {
        "name": name,
        "format": fmt,
        "store": os.path.relpath(store_dir, "testdata"),
        "node": node,
        "data_type": v3_name(values.dtype),
        "shape": list(values.shape),
        "sha256": digest(values),
        "writer": writer,
    }


def update_manifest(entries, store_prefixes):
    """Replaces the manifest entries whose store starts with one of
    `store_prefixes` (relative to testdata/) by `entries`."""
    path = os.path.join("testdata", "fixtures.toml")
    with open(path) as f:
        text = f.read()
    head, *blocks = text.split("[[fixture]]\n")
    kept = [
        b for b in blocks
        if not any(f'store = "{p}' in b for p in store_prefixes)
    ]
    for e in entries:
        lines = [f"{k} = {json.dumps(e[k])}" for k in
                 ["name", "format", "store", "node", "data_type", "shape", "sha256", "writer"]]
        kept.append("\n".join(lines) + "\n\n")
    out = head + "".join("[[fixture]]\n" + b for b in kept)
    with open(path, "w") as f:
        f.write(out.rstrip("\n") + "\n")
