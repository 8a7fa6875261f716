"""Shared helpers for the interop scripts: element values and expected bytes.

Expected values are stored as raw little-endian C-order bytes, one file per
array, so that the reader needs nothing but the data type to compare them.
"""

from __future__ import annotations

import json
import os

import numpy as np

DATA_TYPES = [
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

# The unsigned integer type of the same size as each data type's endian unit,
# used to compare floats bit for bit (NaN payloads and signs included).
_BIT_VIEWS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def little_endian(dtype: str) -> np.dtype:
    """The little-endian numpy dtype of a v3 data type name."""
    return np.dtype(dtype).newbyteorder("<")


def _hash(n: int, seed: int) -> np.ndarray:
    # splitmix64 of the linear index: distinct, well mixed values per element,
    # so a transposed, shifted or mis-chunked read cannot match by accident.
    x = np.arange(n, dtype=np.uint64) + np.uint64(seed)
    with np.errstate(over="ignore"):
        x = x * np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    return x


def _floats(h: np.ndarray, dtype: str) -> np.ndarray:
    # Values in [-1000, 1000) with fractional parts, plus the special values a
    # careless codec or fill-value path mangles: NaN (both signs), ±inf, -0.0.
    scale = 64.0
    v = ((h >> np.uint64(11)) % np.uint64(128001)).astype(np.float64) - 64000.0
    v = v / scale
    if dtype == "float16":
        v = v / 100.0
    out = v.astype(dtype)
    idx = np.arange(len(out))
    out[idx % 7 == 3] = np.nan
    out[idx % 11 == 5] = np.inf
    out[idx % 13 == 6] = -np.inf
    out[idx % 17 == 8] = -0.0
    out[idx % 19 == 9] = -np.nan
    return out


def values(dtype: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Deterministic, distinct-per-element values of `dtype` and `shape`."""
    n = int(np.prod(shape, dtype=np.int64))
    h = _hash(n, seed)
    if dtype == "bool":
        out = ((h >> np.uint64(17)) & np.uint64(1)).astype(bool)
    elif dtype.startswith(("int", "uint")):
        # Wrapping conversion: negative values for the signed types.
        out = h.astype(dtype)
    elif dtype.startswith("float"):
        out = _floats(h, dtype)
    elif dtype in ("complex64", "complex128"):
        part = "float32" if dtype == "complex64" else "float64"
        # Assign the parts: arithmetic like `re + 1j * im` turns inf into NaN.
        out = np.empty(n, dtype=dtype)
        out.real = _floats(h, part)
        out.imag = _floats(_hash(n, seed + 1000), part)[::-1]
    else:
        raise ValueError(f"unknown data type {dtype}")
    return out.reshape(shape)


def to_le_bytes(arr: np.ndarray, dtype: str) -> bytes:
    """The C-order little-endian bytes of `arr` (complex: per component)."""
    return np.ascontiguousarray(arr, dtype=little_endian(dtype)).tobytes(order="C")


def from_le_bytes(data: bytes, dtype: str, shape: list[int]) -> np.ndarray:
    """The array of `dtype` and `shape` whose little-endian bytes are `data`."""
    arr = np.frombuffer(data, dtype=little_endian(dtype))
    return arr.reshape(shape).astype(np.dtype(dtype))


def bit_view(arr: np.ndarray) -> np.ndarray:
    """`arr` as unsigned integers of its endian unit, for exact comparison."""
    arr = np.ascontiguousarray(arr)
    if arr.dtype == np.bool_:
        return arr.view(np.uint8)
    unit = arr.dtype.itemsize // 2 if arr.dtype.kind == "c" else arr.dtype.itemsize
    return arr.view(_BIT_VIEWS[unit])


def scalar_le_hex(value, dtype: str) -> str:
    """The little-endian bytes of one element, as lowercase hex."""
    return to_le_bytes(np.array(value, dtype=dtype), dtype).hex()


def write_json(path: str, doc) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False, allow_nan=False)
