#!/usr/bin/env python3
"""Zarr v2 string, structured and object arrays: interop between zarrkit,
zarr-python 2.18 (which writes v2 natively), zarr-python 3.1
(`zarr_format=2`) and tensorstore's `zarr` driver.

Usage (with either zarr-python; the mode says what it does):
  v2_strings_interop.py write DIR   the running zarr-python writes every case under
                                    DIR/store and DIR/manifest.json (with zarr-python
                                    3.1, tensorstore writes `|S` and structured arrays
                                    too); zarrkit reads it (zarrkit/tests/it/data_types/strings_v2.rs).
  v2_strings_interop.py read DIR    the running zarr-python (and tensorstore, if
                                    installed) reads what zarrkit wrote, as listed in
                                    DIR/manifest.json. Exits 1 listing every mismatch.
  v2_strings_interop.py read3 DIR   zarr-python 3.1 reads the v3 arrays zarrkit
                                    migrated from zarr-python 2.18's v2 arrays.

Manifest entries: {"id", "path", "kind", "shape", "expected"}, `kind` one
of `S` (expected: base64 of the raw elements), `U` and `str` (a list of
strings, C order), `bytes` (a list of base64 strings) and `struct`
(base64 of the records with every field little-endian).

Peers that cannot read a case say so, by name (printed as "not checked"):
tensorstore's `zarr` driver has no `<U`/`>U` or `|O` dtypes, opens a
structured array one field at a time, and refuses `|S<n>` fill values
shorter than n bytes (zarr-python writes them without trailing zeros);
zarr-python 3.1 cannot hold structured fields with a shape.

Made with zarr 2.18.7 / numcodecs 0.15.2 / numpy 1.26.4 and zarr 3.1.6 /
numcodecs 0.16.6 / numpy 2.4.6 / tensorstore 0.1.86.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import traceback
import warnings

import numcodecs
import numpy as np
import zarr

warnings.filterwarnings("ignore")

ZARR2 = zarr.__version__.startswith("2.")

# (id, dtype, kind, fill value, whether zarr-python 3.1 can create it)
DTYPES = [
    ("S5", "|S5", "S", b"ab", True),
    ("U3_le", "<U3", "U", "h\u00e9", True),
    ("U3_be", ">U3", "U", "", True),
    ("struct_le", [("a", "<i4"), ("b", "<f8"), ("c", "|S3")], "struct", (7, 1.5, b"x"), True),
    ("struct_be", [("a", ">i4"), ("b", ">f8"), ("c", ">U2")], "struct", (-1, -2.5, "y"), True),
    ("struct_mixed", [("a", "<i4"), ("b", ">u2"), ("c", "|S2")], "struct", (3, 4, b"z"), True),
    (
        "struct_nested",
        [("a", "<i4"), ("b", ">f8"), ("d", "<i2", (2, 3)), ("e", [("x", "|u1"), ("y", ">u2")])],
        "struct",
        None,
        False,
    ),
    ("vlen_utf8", "str", "str", "-", True),
    ("vlen_bytes", "bytes", "bytes", None, True),
]


def cases():
    """(id, dtype, kind, fill, zarr3_ok, order, separator, compressor, partial)."""
    out = []
    comps = [None, numcodecs.Blosc("lz4", 5, numcodecs.Blosc.AUTOSHUFFLE), numcodecs.Zlib(1), numcodecs.Zstd(1)]
    i = 0
    for cid, dtype, kind, fill, z3 in DTYPES:
        for order in ["C", "F"]:
            for sep in [".", "/"]:
                comp = comps[i % len(comps)]
                i += 1
                # Half the cases leave the last chunks unwritten, to read the fill value.
                partial = fill is not None and sep == "/"
                name = f"{cid}_{order}_{'slash' if sep == '/' else 'dot'}"
                out.append((name, dtype, kind, fill, z3, order, sep, comp, partial))
    return out


def _hash(i: int, seed: int) -> int:
    x = (i + seed * 1000 + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return x ^ (x >> 31)


def values(dtype, kind: str, shape, seed: int) -> np.ndarray:
    """Deterministic, distinct elements (strings of varied length, some non-ASCII)."""
    n = int(np.prod(shape))
    alphabet = "ab\u00e9\u4e2d\U0001f600z"
    if kind in ("U", "str"):
        width = np.dtype(dtype).itemsize // 4 if kind == "U" else 9
        items = ["".join(alphabet[(_hash(i, seed) >> (3 * k)) % len(alphabet)] for k in range(_hash(i, seed) % (width + 1))) for i in range(n)]
        return np.array(items, dtype=dtype if kind == "U" else object).reshape(shape)
    if kind in ("S", "bytes"):
        width = np.dtype(dtype).itemsize if kind == "S" else 7
        items = [bytes((_hash(i, seed) >> (8 * k)) & 0xFF or 1 for k in range(_hash(i, seed) % (width + 1))) for i in range(n)]
        return np.array(items, dtype=dtype if kind == "S" else object).reshape(shape)
    dt = np.dtype(dtype)
    raw = bytearray()
    for i in range(n):
        raw += b"".join(_hash(i, seed + k).to_bytes(8, "little") for k in range(dt.itemsize // 8 + 1))[: dt.itemsize]
    arr = np.frombuffer(bytes(raw), dtype=dt).copy()
    # Printable `S`/`U` fields, so that every reader agrees on them.
    for name in dt.names:
        if dt[name].kind in "SU":
            arr[name] = ["q" * (i % 3) for i in range(n)]
    return arr.reshape(shape)


def le_dtype(dt: np.dtype) -> np.dtype:
    return dt.newbyteorder("<")


def expected_of(arr: np.ndarray, kind: str):
    flat = arr.reshape(-1)
    if kind == "S":
        return base64.b64encode(np.ascontiguousarray(arr).tobytes()).decode()
    if kind == "struct":
        return base64.b64encode(np.ascontiguousarray(arr.astype(le_dtype(arr.dtype))).tobytes()).decode()
    if kind == "bytes":
        return [base64.b64encode(bytes(x)).decode() for x in flat]
    return [str(x) for x in flat]


def create(store: str, path: str, shape, chunks, dtype, kind, fill, order, sep, comp):
    if ZARR2:
        group = zarr.open_group(store, mode="a")
        kwargs = {}
        if kind == "str":
            dtype = str
        elif kind == "bytes":
            dtype = bytes
        return group.create(path, shape=shape, chunks=chunks, dtype=dtype, order=order,
                            fill_value=fill, compressor=comp, dimension_separator=sep, **kwargs)
    if kind == "str":
        dtype = str
    elif kind == "bytes":
        dtype = zarr.dtype.VariableLengthBytes()
    elif kind == "struct":
        dtype = np.dtype(dtype)
        if fill is not None:
            fill = np.array([fill], dtype=dtype)[0]
    return zarr.create_array(store, name=path, shape=shape, chunks=chunks, dtype=dtype, order=order,
                             chunk_key_encoding={"name": "v2", "separator": sep}, compressors=comp,
                             filters="auto" if kind in ("str", "bytes") else None, fill_value=fill,
                             zarr_format=2)


def write(root: str) -> None:
    store = os.path.join(root, "store")
    manifest = {"writer": f"zarr-python {zarr.__version__}", "arrays": [], "not_written": []}
    if ZARR2:
        zarr.open_group(store, mode="w")
    else:
        zarr.open_group(store, mode="w", zarr_format=2)
    for seed, (cid, dtype, kind, fill, z3, order, sep, comp, partial) in enumerate(cases()):
        if not ZARR2 and not z3:
            manifest["not_written"].append(f"{cid}: zarr-python 3.1 cannot create structured fields with a shape")
            continue
        shape, chunks = (5, 4), (2, 3)
        arr = create(store, cid, shape, chunks, dtype, kind, fill, order, sep, comp)
        data = values(dtype, kind, shape, seed)
        if partial:
            arr[:4] = data[:4]
        else:
            arr[...] = data
        got = np.asarray(arr[...])
        if kind in ("str", "bytes"):
            got = got.astype(object)
        manifest["arrays"].append({"id": cid, "path": "/" + cid, "kind": kind, "shape": list(shape),
                                   "expected": expected_of(got, kind)})
    if not ZARR2:
        write_tensorstore(store, manifest)
    with open(os.path.join(root, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


# Arrays tensorstore writes (with zarr-python 3.1's venv): `|S` and
# structured dtypes, the v2 string types its zarr driver has; a structured
# array is written one field at a time, as tensorstore opens them.
TENSORSTORE_CASES = [
    ("ts_S4_C_dot", "|S4", "C", "."),
    ("ts_S4_F_slash", "|S4", "F", "/"),
    ("ts_struct_mixed_C_slash", [["a", "<i4"], ["b", ">f8"], ["c", "|S2"], ["d", ">u2", [2]]], "C", "/"),
    ("ts_struct_be_F_dot", [["a", ">i8"], ["b", ">f4"]], "F", "."),
]


def write_tensorstore(store: str, manifest) -> None:
    import tensorstore as ts

    for seed, (cid, dtype, order, sep) in enumerate(TENSORSTORE_CASES, start=1000):
        shape = [5, 4]
        meta = {"dtype": dtype, "shape": shape, "chunks": [2, 3], "order": order, "compressor": {"id": "zlib", "level": 1},
                "dimension_separator": sep, "fill_value": None, "filters": None}
        spec = {"driver": "zarr", "kvstore": {"driver": "file", "path": os.path.join(store, cid)}, "metadata": meta}
        if isinstance(dtype, str):
            n = int(dtype[2:])
            raw = bytes((_hash(i, seed) % 255) + 1 for i in range(20 * n))
            t = ts.open({**spec, "create": True}).result()
            t[...].write(np.frombuffer(raw, dtype="S1").reshape(shape + [n])).result()
            manifest["arrays"].append({"id": cid, "path": "/" + cid, "kind": "S", "shape": shape,
                                       "expected": base64.b64encode(raw).decode()})
            continue
        fields = _tuples(dtype)
        np_dtype = np.dtype([tuple(f) if len(f) == 2 else (f[0], f[1], tuple(f[2])) for f in fields])
        raw = bytearray()
        for i in range(20):
            raw += b"".join(_hash(i, seed + k).to_bytes(8, "little") for k in range(np_dtype.itemsize // 8 + 1))[: np_dtype.itemsize]
        records = np.frombuffer(bytes(raw), dtype=np_dtype).reshape(shape).copy()
        for name in np_dtype.names:
            if np_dtype[name].kind == "S":
                records[name] = b"xy"
        for k, name in enumerate(np_dtype.names):
            t = ts.open({**spec, "field": name, "create": k == 0, "open": k > 0}).result()
            values = records[name]
            if values.dtype.kind == "S":
                values = np.frombuffer(np.ascontiguousarray(values).tobytes(), dtype="S1").reshape(shape + [values.dtype.itemsize])
            t[...].write(values).result()
        manifest["arrays"].append({"id": cid, "path": "/" + cid, "kind": "struct", "shape": shape,
                                   "expected": expected_of(records, "struct")})


def compare(got: np.ndarray, entry) -> str | None:
    kind = entry["kind"]
    if list(got.shape) != entry["shape"]:
        return f"shape {got.shape}, expected {entry['shape']}"
    if kind in ("str", "bytes"):
        got = np.asarray(got).astype(object)
    mine = expected_of(got, kind)
    if mine != entry["expected"]:
        return f"values differ: {str(mine)[:300]} vs {str(entry['expected'])[:300]}"
    return None


def read(root: str) -> None:
    with open(os.path.join(root, "manifest.json")) as f:
        manifest = json.load(f)
    store = os.path.join(root, "store")
    errors, not_checked, checked = [], [], 0
    try:
        import tensorstore as ts
    except ImportError:
        ts = None
    me = f"zarr-python {zarr.__version__}"
    for entry in manifest["arrays"]:
        where = entry["id"]
        path = entry["path"].lstrip("/")
        zarray = json.load(open(os.path.join(store, path, ".zarray")))
        subarray = entry["kind"] == "struct" and any(len(f) == 3 or isinstance(f[1], list) for f in zarray["dtype"])
        if not ZARR2 and subarray:
            not_checked.append(f"{me} {where}: zarr-python 3.1 cannot read structured fields with a shape")
        else:
            try:
                arr = zarr.open_array(store, path=path, mode="r")
                problem = compare(np.asarray(arr[...]), entry)
                if problem:
                    errors.append(f"{me} {where}: {problem}")
                checked += 1
            except Exception:
                errors.append(f"{me} {where}: {traceback.format_exc()}")
        if ts is None:
            continue
        kind = entry["kind"]
        if kind in ("U", "str", "bytes"):
            not_checked.append(f"tensorstore {where}: its zarr driver has no `{zarray['dtype']}` dtype")
            continue
        spec = {"driver": "zarr", "kvstore": {"driver": "file", "path": os.path.join(store, path)}}
        try:
            if kind == "S":
                fill = zarray["fill_value"]
                n = int(zarray["dtype"][2:])
                if fill is not None and len(base64.b64decode(fill)) != n:
                    not_checked.append(f"tensorstore {where}: it needs {n} base64 bytes as the `|S{n}` fill value, "
                                       f"and zarr-python writes {fill!r}")
                    continue
                got = np.asarray(ts.open(spec, open=True).result().read().result())
                if got.dtype.itemsize == 0:
                    not_checked.append(f"tensorstore {where}: its Python API gives `char` data as NumPy `|S0`, losing the bytes")
                    continue
                raw = np.ascontiguousarray(got).tobytes()
                if base64.b64encode(raw).decode() != entry["expected"]:
                    errors.append(f"tensorstore {where}: values differ")
                checked += 1
            else:
                records = np.frombuffer(base64.b64decode(entry["expected"]),
                                        dtype=le_dtype(np.dtype([tuple(f) if len(f) == 2 else (f[0], f[1], tuple(f[2])) for f in _tuples(zarray["dtype"])])))
                for field in records.dtype.names:
                    t = ts.open({**spec, "field": field}, open=True).result()
                    got = np.asarray(t.read().result())
                    if got.dtype.itemsize == 0:
                        not_checked.append(f"tensorstore {where} field {field}: its Python API gives `char` data as NumPy `|S0`, losing the bytes")
                        continue
                    want = records[field].reshape(entry["shape"] + list(records.dtype[field].shape))
                    if got.dtype.kind == "S" or want.dtype.kind in "SUV":
                        same = np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes()
                    else:
                        same = np.array_equal(got.view(f"u{got.dtype.itemsize}"), want.astype(got.dtype).view(f"u{got.dtype.itemsize}"))
                    if not same:
                        errors.append(f"tensorstore {where} field {field}: values differ")
                checked += 1
        except Exception as e:
            if "Unsupported zarr dtype" in str(e) or 'member "dtype"' in str(e):
                not_checked.append(f"tensorstore {where}: {str(e).splitlines()[0][:200]}")
            else:
                errors.append(f"tensorstore {where}: {traceback.format_exc()}")
    for line in not_checked:
        print(f"not checked: {line}")
    print(f"{checked} checks; {len(errors)} errors")
    if errors:
        print("\n".join(errors), file=sys.stderr)
        sys.exit(1)


def _tuples(fields):
    out = []
    for f in fields:
        t = f[1] if isinstance(f[1], str) else [tuple(x) if len(x) == 2 else (x[0], x[1], tuple(x[2])) for x in _tuples(f[1])]
        out.append([f[0], t] + ([f[2]] if len(f) == 3 else []))
    return out


def legacy_structured(data_type):
    """The legacy `structured` spelling zarr-python 3.1 reads, of a v3 `struct`."""
    fields = []
    for field in data_type["configuration"]["fields"]:
        inner = field["data_type"]
        if isinstance(inner, dict) and inner.get("name") == "struct":
            inner = legacy_structured(inner)
        fields.append([field["name"], inner])
    return {"name": "structured", "configuration": {"fields": fields}}


V3_TO_NUMPY = {"bool": "?", "int8": "i1", "int16": "<i2", "int32": "<i4", "int64": "<i8", "uint8": "u1",
               "uint16": "<u2", "uint32": "<u4", "uint64": "<u8", "float32": "<f4", "float64": "<f8"}


def legacy_fill(data_type, fill):
    """The base64 little-endian record that legacy `structured` fill values are."""
    fields, values = [], []
    for name, inner in data_type["configuration"]["fields"]:
        value = fill[name]
        if isinstance(inner, dict) and inner["name"] == "null_terminated_bytes":
            fields.append((name, f"S{inner['configuration']['length_bytes']}"))
            value = base64.b64decode(value)
        elif isinstance(inner, dict) and inner["name"] == "fixed_length_utf32":
            fields.append((name, f"<U{inner['configuration']['length_bytes'] // 4}"))
        else:
            fields.append((name, V3_TO_NUMPY[inner]))
            if isinstance(value, str):
                value = float(value)
        values.append(value)
    record = np.array([tuple(values)], dtype=np.dtype(fields))
    return base64.b64encode(record.tobytes()).decode()


def read3(root: str) -> None:
    with open(os.path.join(root, "manifest.json")) as f:
        manifest = json.load(f)
    store = os.path.join(root, "migrated")
    errors, notes, checked = [], [], 0
    for entry in manifest["arrays"]:
        where = entry["id"]
        path = entry["path"].lstrip("/")
        doc_path = os.path.join(store, path, "zarr.json")
        doc = json.load(open(doc_path))
        if entry["kind"] == "struct":
            bytes_codec = next((c for c in doc["codecs"] if c["name"] == "bytes"), {})
            if bytes_codec.get("configuration", {}).get("endian") == "big":
                notes.append(f"{where}: not checked: zarr-python {zarr.__version__} reads legacy `structured` "
                             "little-endian only (it ignores the `bytes` codec's `endian`)")
                continue
            try:
                zarr.open_array(store, path=path, mode="r", zarr_format=3)
                notes.append(f"{where}: zarr-python {zarr.__version__} now reads `struct`")
            except Exception:
                notes.append(f"{where}: zarr-python {zarr.__version__} reads only the legacy `structured` "
                             "spelling; checked with the data type rewritten to it")
            doc["data_type"] = legacy_structured(doc["data_type"])
            doc["fill_value"] = legacy_fill(doc["data_type"], doc["fill_value"])
            with open(doc_path, "w") as f:
                json.dump(doc, f)
        try:
            arr = zarr.open_array(store, path=path, mode="r", zarr_format=3)
            problem = compare(np.asarray(arr[...]), entry)
            if problem:
                errors.append(f"{where}: {problem}")
            checked += 1
        except Exception:
            errors.append(f"{where}: {traceback.format_exc()}")
    for line in notes:
        print(f"note: {line}")
    print(f"{checked} checks; {len(errors)} errors")
    if errors:
        print("\n".join(errors), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "read", "read3"):
        sys.exit(__doc__)
    {"write": write, "read": read, "read3": read3}[sys.argv[1]](sys.argv[2])
