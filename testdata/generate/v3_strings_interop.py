"""Interop for the v3 string, byte-string and struct data types (issue #5).

`write DIR`: zarr-python 3.1 and tensorstore write arrays under DIR that
zarrkit reads (zarrkit/tests/it/data_types/strings_v3.rs checks every element):

- `s_zstd`, `s_gzip`, `s_blosc`: `string` (`vlen-utf8` then a compressor),
  shape 5x3 in 2x2 chunks with fill value "fill"; rows 0..3 written, so
  the chunks of row 4 are missing and the last column is an edge chunk.
- `s_transpose`: `string` with `transpose` before `vlen-utf8` and gzip;
  zarr-python 3.1.6 stores it wrongly (see `write`), so the script prints
  what zarr-python reads back.
- `b`: zarr-python's `variable_length_bytes` (`vlen-bytes`), fill b"x".
- `u_little`, `u_big`: `fixed_length_utf32` (`<U3`) with `bytes` little
  and big endian, fill "ab".
- `nt`: `null_terminated_bytes` (`S3`), fill b"ab".
- `st`: `structured` (tuple fields, `bytes` without `endian`), with a
  nested struct and a `datetime64[s]` field, and a non-default fill.
- `st_big`: `structured` from big-endian NumPy fields (see `write`).
- `sh_end`: `string` in shards of 4x4 (inner chunks 2x2, `vlen-utf8` +
  `zstd`, index at the end with `crc32c`); only some inner chunks written.
- `sh_nested`: `string` whose shards hold shards (index at the start,
  without `crc32c`, inner `vlen-utf8` + `blosc`), zarr-python's own nesting.
- `ts_struct`: tensorstore's `struct` (fields `a: int32`, `b: float64`,
  fill `{"a": 1, "b": 2.5}`), of which field `b` is written.

`read DIR`: reads the arrays zarrkit wrote under DIR and prints, as JSON,
what zarr-python (and tensorstore, for `struct`) sees, and the messages
with which they refuse the rest.

Element values follow one formula on both sides: element `i` (C order) of
a string array is `value(i)`.

`fixtures DIR`: writes testdata/fixtures/v3/complex_small_float.zarr (by
hand, with ml_dtypes for the bit patterns; neither zarr-python nor
tensorstore has the `complex_float8/6/4_*` types): one array per type,
shape 5 in chunks of 2 with chunk 1 missing, elements from the values of
`CANDIDATES` the type holds exactly, the fill value `[re, im]` in the forms
the type's README gives ("NaN", "Infinity"/"-Infinity", "0x.." hex, numbers),
and prints the fixtures.toml entries.
"""

import json
import sys

import numpy as np
import tensorstore as ts
import zarr
from zarr.codecs import (
    BloscCodec,
    BytesCodec,
    GzipCodec,
    ShardingCodec,
    TransposeCodec,
    VLenUTF8Codec,
    ZstdCodec,
)


def value(i):
    """The string at C-order index `i`: ASCII, non-ASCII and empty ones."""
    return "" if i % 7 == 3 else f"v{i}" + "é" * (i % 3)


def strings(shape, start=0):
    n = int(np.prod(shape))
    return np.array([value(start + i) for i in range(n)], dtype=object).reshape(shape)


def write(root):
    out = {}
    for name, compressors in [
        ("s_zstd", [ZstdCodec(level=3)]),
        ("s_gzip", [GzipCodec(level=4)]),
        ("s_blosc", [BloscCodec(cname="lz4", clevel=5)]),
    ]:
        a = zarr.create_array(
            f"{root}/{name}", shape=(5, 3), chunks=(2, 2), dtype=str,
            fill_value="fill", compressors=compressors,
        )
        a[:4] = strings((4, 3))
    a = zarr.create_array(
        f"{root}/s_transpose", shape=(2, 3), chunks=(2, 3), dtype=str,
        filters=[TransposeCodec(order=(1, 0))], compressors=[GzipCodec()],
    )
    a[:] = strings((2, 3))
    # zarr-python 3.1.6 writes the elements of a transposed string chunk in
    # the untransposed order (the transposed view is flattened in memory
    # order), and so reads its own chunk back scrambled: printed for the test.
    out["s_transpose_readback"] = zarr.open_array(f"{root}/s_transpose")[...].ravel().tolist()

    b = zarr.create_array(
        f"{root}/b", shape=(5,), chunks=(2,), dtype=zarr.dtype.VariableLengthBytes(),
        fill_value=b"x",
    )
    b[:3] = np.array([b"\x00\xff", b"", b"abc"], dtype=object)

    for name, endian in [("u_little", "little"), ("u_big", "big")]:
        u = zarr.create_array(
            f"{root}/{name}", shape=(5,), chunks=(2,), dtype="<U3", fill_value="ab",
            serializer=BytesCodec(endian=endian),
        )
        u[:3] = ["x", "yé😀", ""]

    nt = zarr.create_array(f"{root}/nt", shape=(5,), chunks=(2,), dtype="S3", fill_value=b"ab")
    nt[:3] = [b"a\x00b", b"xyz", b""]

    st_type = np.dtype([("a", "<i4"), ("b", [("c", "<f8"), ("d", "u1")]), ("t", "M8[s]")])
    st = zarr.create_array(
        f"{root}/st", shape=(3,), chunks=(2,), dtype=st_type, compressors=None,
        fill_value=np.array((5, (2.5, 3), 7), dtype=st_type)[()],
    )
    st[0] = (1, (1.5, 2), 10)
    st[1] = (-2, (-0.25, 255), np.datetime64("NaT"))
    # zarr-python 3.1.6 writes the chunks and the fill value of big-endian
    # fields big-endian but declares no `endian` (little-endian by the
    # legacy rules), so it reads its own array back byte-swapped: printed
    # for the test.
    big = np.dtype([("a", ">i4"), ("b", ">f8")])
    st_big = zarr.create_array(
        f"{root}/st_big", shape=(2,), chunks=(2,), dtype=big, compressors=None,
        fill_value=np.array((1, 2.0), dtype=big)[()],
    )
    st_big[0] = (3, 4.0)
    back = zarr.open_array(f"{root}/st_big")[...]
    out["st_big_readback"] = {"a": back["a"].tolist(), "b": back["b"].tolist()}

    sh = zarr.create_array(
        f"{root}/sh_end", shape=(6, 5), chunks=(2, 2), shards=(4, 4), dtype=str,
        fill_value="-",
    )
    # Shard (0, 0) gets inner chunks (0, 0) and (1, 1) only; shard (1, 1)
    # (rows 4..6, column 4) gets one element; the others stay missing.
    sh[0:2, 0:2] = strings((2, 2))
    sh[2:4, 2:4] = strings((2, 2), 100)
    sh[5, 4] = value(200)

    nested = zarr.create_array(
        f"{root}/sh_nested", shape=(6,), chunks=(2,), shards=(4,), dtype=str,
        serializer=ShardingCodec(
            chunk_shape=(2,), codecs=[VLenUTF8Codec(), BloscCodec()],
            index_location="start", index_codecs=[BytesCodec()],
        ),
    )
    nested[1:5] = strings((4,))

    t = ts.open({
        "driver": "zarr3", "kvstore": {"driver": "file", "path": f"{root}/ts_struct"},
        "field": "b",
        "metadata": {
            "shape": [4],
            "data_type": {"name": "struct", "configuration": {"fields": [
                {"name": "a", "data_type": "int32"}, {"name": "b", "data_type": "float64"},
            ]}},
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3]}},
            "fill_value": {"a": 1, "b": 2.5},
        },
    }, create=True).result()
    t[1:3] = np.array([-7.5, 1e300])
    # tensorstore's own string dtypes cannot be stored by its zarr3 driver.
    out["ts_create_errors"] = {
        dtype: error(lambda: ts.open({
            "driver": "zarr3", "kvstore": "memory://",
            "metadata": {"shape": [4], "chunk_grid": {
                "name": "regular", "configuration": {"chunk_shape": [2]}}},
        }, dtype=dtype, create=True).result())
        for dtype in ["string", "ustring", "json"]
    }
    print(json.dumps(out))


def error(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 (the message is the result)
        return f"{type(e).__name__}: {e}"
    return None


def tensorstore_open(path, **extra):
    return ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}, **extra}).result()


def read(root):
    out = {}
    for name in ["s", "s_gzip", "s_blosc", "s_transpose", "sh", "sh_start", "sh_nested"]:
        a = zarr.open_array(f"{root}/{name}", mode="r")
        out[name] = {"fill": a.fill_value, "values": a[...].ravel().tolist()}
        out[name]["ts_error"] = error(lambda: tensorstore_open(f"{root}/{name}"))
    b = zarr.open_array(f"{root}/b", mode="r")
    out["b"] = {"fill": b.fill_value.hex(), "values": [v.hex() for v in b[...]]}
    for name in ["u_little", "u_big"]:
        a = zarr.open_array(f"{root}/{name}", mode="r")
        out[name] = {"dtype": a.dtype.str, "fill": str(a.fill_value), "values": a[...].tolist()}
    nt = zarr.open_array(f"{root}/nt", mode="r")
    out["nt"] = {"fill": nt.fill_value.hex(), "values": [v.hex() for v in nt[...]]}
    for name in ["u_little", "nt", "b"]:
        out.setdefault(f"{name}_ts", {})["error"] = error(lambda: tensorstore_open(f"{root}/{name}"))
    out["st_zarr_python_error"] = error(lambda: zarr.open_array(f"{root}/st", mode="r"))
    out["st_nested_ts_error"] = error(lambda: tensorstore_open(f"{root}/st_nested", field="v"))
    out["st_ts"] = {
        field: tensorstore_open(f"{root}/st", field=field).read().result().tolist()
        for field in ["id", "x"]
    }
    print(json.dumps(out))


# Component values the fixture elements are drawn from, in order.
CANDIDATES = [1.0, -0.5, 0.0, 2.0, 0.25, -3.0, 4.0, 0.5, 1.5, -6.0]

# Per complex type: the fill value as written (each README's forms) and the
# `bytes` codec (the endian parameter has no effect on 1-byte components).
COMPLEX_SMALL = {
    "complex_float8_e3m4": (["NaN", "-Infinity"], "little"),
    "complex_float8_e4m3": (["0x7c", "Infinity"], "big"),
    "complex_float8_e4m3b11fnuz": (["NaN", 0.5], None),
    "complex_float8_e4m3fnuz": ([-2.0, "0x80"], "little"),
    "complex_float8_e5m2": (["-Infinity", "0x7e"], None),
    "complex_float8_e5m2fnuz": (["NaN", -0.25], "big"),
    "complex_float8_e8m0fnu": (["0xFF", 0.25], None),
    "complex_float6_e2m3fn": ([1.5, "0x3f"], "little"),
    "complex_float6_e3m2fn": ([-28.0, "0x01"], None),
    "complex_float4_e2m1fn": ([6.0, "0x0f"], "big"),
}


def fixtures(root):
    import hashlib
    import os

    import ml_dtypes

    os.makedirs(root, exist_ok=True)
    with open(f"{root}/zarr.json", "w") as f:
        json.dump({"zarr_format": 3, "node_type": "group", "attributes": {}}, f, indent=2)
    for name, (fill, endian) in COMPLEX_SMALL.items():
        t = getattr(ml_dtypes, name.removeprefix("complex_"))
        exact = [x for x in CANDIDATES if float(np.array(x, dtype=t).astype(np.float64)) == x]
        parts = (exact * 2)[:8]
        bits = np.array(parts, dtype=t).view(np.uint8).reshape(4, 2)

        def component(v):
            if isinstance(v, str):
                if v.startswith("0x"):
                    return int(v, 16)
                return int(np.array(float(v.replace("Infinity", "inf")), dtype=t).view(np.uint8))
            return int(np.array(v, dtype=t).view(np.uint8))

        fill_bits = [component(v) for v in fill]
        # Elements 0, 1 (chunk 0) and 4 (chunk 2) are written; chunk 1 is not stored.
        values = [bits[0], bits[1], fill_bits, fill_bits, bits[2]]
        bytes_codec = {"name": "bytes"}
        if endian:
            bytes_codec["configuration"] = {"endian": endian}
        doc = {
            "zarr_format": 3, "node_type": "array", "shape": [5], "data_type": name,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": fill,
            "codecs": [bytes_codec], "attributes": {"components": parts[:6]},
        }
        os.makedirs(f"{root}/{name}/c", exist_ok=True)
        with open(f"{root}/{name}/zarr.json", "w") as f:
            json.dump(doc, f, indent=2)
        with open(f"{root}/{name}/c/0", "wb") as f:
            f.write(bytes([*values[0], *values[1]]))
        # The last chunk is an edge chunk: stored whole, its second element
        # past the array's end (zeros).
        with open(f"{root}/{name}/c/2", "wb") as f:
            f.write(bytes([*values[4], 0, 0]))
        digest = hashlib.sha256(bytes(int(b) for v in values for b in v)).hexdigest()
        print(f"""
[[fixture]]
name = "v3_{name}"
format = "v3"
store = "fixtures/v3/complex_small_float.zarr"
node = "/{name}"
data_type = "{name}"
shape = [5]
sha256 = "{digest}"
writer = "hand-made from the extension READMEs (testdata/generate/v3_strings_interop.py fixtures)"\
""")


if __name__ == "__main__":
    {"write": write, "read": read, "fixtures": fixtures}[sys.argv[1]](sys.argv[2])
