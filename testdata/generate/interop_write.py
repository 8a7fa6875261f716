#!/usr/bin/env python3
"""Write Zarr v3 arrays and groups with zarr-python 3.1 and tensorstore.

Usage: interop_write.py OUT_DIR

Writes, under OUT_DIR:
  zarr_python/   one hierarchy written by zarr-python (nested groups with
                 attributes, arrays in them)
  tensorstore/   one array per case, written by tensorstore's `zarr3` driver
  expected/<id>.bin  each array's values, raw little-endian C order
  manifest.json  {"arrays": [...], "groups": [...]} describing every node

The matrix covers every data type, every codec and option, every chunk key
encoding, partial edge chunks, 0-d and zero-length arrays, missing chunks,
every form of fill value, dimension names with nulls and attributes.
zarrkit's interop test (zarrkit/tests/it/interop/matrix.rs) runs this script and
checks that zarrkit reads every node exactly. Before writing the manifest,
this script reads every array back with the library that wrote it, so a
mismatch found later is zarrkit's.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import tensorstore as ts
import zarr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop_common import (  # noqa: E402
    DATA_TYPES,
    bit_view,
    scalar_le_hex,
    to_le_bytes,
    values,
    write_json,
)


def bytes_codec(dtype: str, endian: str = "little") -> dict:
    if np.dtype(dtype).itemsize == 1:
        return {"name": "bytes"}
    return {"name": "bytes", "configuration": {"endian": endian}}


def gzip(level: int) -> dict:
    return {"name": "gzip", "configuration": {"level": level}}


def zstd(level: int, checksum: bool = False) -> dict:
    return {"name": "zstd", "configuration": {"level": level, "checksum": checksum}}


def blosc(cname: str, shuffle: str, typesize: int, clevel: int = 5, blocksize: int = 0) -> dict:
    return {
        "name": "blosc",
        "configuration": {
            "cname": cname,
            "clevel": clevel,
            "shuffle": shuffle,
            "typesize": typesize,
            "blocksize": blocksize,
        },
    }


def transpose(order: list[int]) -> dict:
    return {"name": "transpose", "configuration": {"order": order}}


CRC32C = {"name": "crc32c"}

ARRAY_ATTRIBUTES = {
    "units": "m/s",
    "scale": 0.5,
    "offset": -3,
    "flags": [True, False, None],
    "nested": {"deep": {"deeper": [1, [2, [3]]]}, "empty": {}},
    "unicode": "Grüße, 世界 🌍 \u00e9\u0301",
}


def hex_float(bits: int, dtype: str):
    """A float whose bits are `bits` (a NaN payload survives)."""
    unsigned = {"float16": np.uint16, "float32": np.uint32, "float64": np.uint64}[dtype]
    return unsigned(bits).view(dtype)


class Case:
    """One array to write: its metadata and which parts hold data."""

    def __init__(
        self,
        group: str,
        name: str,
        dtype: str,
        shape,
        chunks,
        *,
        codecs=None,
        fill=0,
        fill_json=None,
        cke=None,
        dims=None,
        attrs=None,
        written="all",
        seed=0,
    ):
        self.group = group
        self.name = name
        self.dtype = dtype
        self.shape = tuple(shape)
        self.chunks = tuple(chunks)
        self.codecs = codecs
        self.fill = fill
        # The fill value as v3 JSON, when json.dumps of `fill` is not it.
        self.fill_json = fill_json
        self.cke = cke
        self.dims = dims
        self.attrs = attrs or {}
        # "all", "none", or a list of tuples of slices to write.
        self.written = written
        self.seed = seed

    def data(self) -> np.ndarray:
        return values(self.dtype, self.shape, self.seed)

    def expected(self) -> np.ndarray:
        data = self.data()
        if self.written == "all":
            return data
        out = np.full(self.shape, self.fill, dtype=self.dtype)
        if self.written != "none":
            for region in self.written:
                out[region] = data[region]
        return out

    def fill_value_json(self):
        if self.fill_json is not None:
            return self.fill_json
        f = np.array(self.fill, dtype=self.dtype)[()]
        if self.dtype.startswith("complex"):
            return [float_json(f.real), float_json(f.imag)]
        if self.dtype.startswith("float"):
            return float_json(f)
        if self.dtype == "bool":
            return bool(f)
        return int(f)


def float_json(x):
    x = float(x)
    if np.isnan(x):
        return "NaN"
    if np.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def cases() -> list[Case]:
    out: list[Case] = []
    seed = iter(range(1, 10_000))

    # Every data type, written whole with each writer's default codecs.
    for dt in DATA_TYPES:
        out.append(Case("dtypes", dt, dt, (17, 23), (5, 7), seed=next(seed)))

    # Big-endian bytes for every multi-byte type, behind gzip.
    for dt in DATA_TYPES:
        if np.dtype(dt).itemsize > 1:
            out.append(
                Case(
                    "big_endian",
                    dt,
                    dt,
                    (9, 4),
                    (4, 3),
                    codecs=[bytes_codec(dt, "big"), gzip(1)],
                    seed=next(seed),
                )
            )

    # transpose with non-trivial permutations, alone and with big endian.
    out.append(
        Case(
            "transpose",
            "int32_3d_201",
            "int32",
            (4, 5, 6),
            (3, 2, 4),
            codecs=[transpose([2, 0, 1]), bytes_codec("int32"), gzip(5)],
            seed=next(seed),
        )
    )
    out.append(
        Case(
            "transpose",
            "float16_3d_120_big",
            "float16",
            (5, 3, 4),
            (2, 3, 3),
            codecs=[transpose([1, 2, 0]), bytes_codec("float16", "big"), zstd(3)],
            seed=next(seed),
        )
    )
    out.append(
        Case(
            "transpose",
            "complex64_2d_10_big",
            "complex64",
            (7, 6),
            (3, 4),
            codecs=[transpose([1, 0]), bytes_codec("complex64", "big")],
            seed=next(seed),
        )
    )
    out.append(
        Case(
            "transpose",
            "bool_2d_10",
            "bool",
            (6, 5),
            (4, 4),
            codecs=[transpose([1, 0]), bytes_codec("bool")],
            seed=next(seed),
        )
    )

    for level in (0, 1, 9):
        out.append(
            Case(
                "gzip",
                f"level_{level}",
                "uint16",
                (30,),
                (8,),
                codecs=[bytes_codec("uint16"), gzip(level)],
                seed=next(seed),
            )
        )

    for level, checksum in ((0, False), (1, False), (-5, False), (19, False), (3, True), (-1, True)):
        name = f"level_{level}" + ("_checksum" if checksum else "")
        out.append(
            Case(
                "zstd",
                name.replace("-", "neg"),
                "float64",
                (30,),
                (8,),
                codecs=[bytes_codec("float64"), zstd(level, checksum)],
                seed=next(seed),
            )
        )

    blosc_types = ["int32", "float64", "uint16"]
    for i, cname in enumerate(["lz4", "lz4hc", "blosclz", "zstd", "zlib"]):
        for j, shuffle in enumerate(["noshuffle", "shuffle", "bitshuffle"]):
            dt = blosc_types[(i + j) % len(blosc_types)]
            out.append(
                Case(
                    "blosc",
                    f"{cname}_{shuffle}",
                    dt,
                    (40, 3),
                    (16, 2),
                    codecs=[bytes_codec(dt), blosc(cname, shuffle, np.dtype(dt).itemsize)],
                    seed=next(seed),
                )
            )
    out.append(
        Case(
            "blosc",
            "blocksize_64_clevel_9",
            "float32",
            (200,),
            (96,),
            codecs=[bytes_codec("float32"), blosc("lz4", "shuffle", 4, clevel=9, blocksize=64)],
            seed=next(seed),
        )
    )
    out.append(
        Case(
            "blosc",
            "typesize_1_clevel_0",
            "int64",
            (50,),
            (16,),
            codecs=[bytes_codec("int64"), blosc("zstd", "bitshuffle", 1, clevel=0)],
            seed=next(seed),
        )
    )

    out.append(
        Case("crc32c", "bytes_crc32c", "int32", (13,), (5,), codecs=[bytes_codec("int32"), CRC32C], seed=next(seed))
    )
    out.append(
        Case(
            "crc32c",
            "zstd_crc32c",
            "uint64",
            (13,),
            (5,),
            codecs=[bytes_codec("uint64"), zstd(3), CRC32C],
            seed=next(seed),
        )
    )
    out.append(
        Case(
            "crc32c",
            "big_gzip_crc32c",
            "float32",
            (13, 2),
            (5, 2),
            codecs=[bytes_codec("float32", "big"), gzip(6), CRC32C],
            seed=next(seed),
        )
    )

    encodings = {
        "default_slash": {"name": "default", "configuration": {"separator": "/"}},
        "default_dot": {"name": "default", "configuration": {"separator": "."}},
        "v2_dot": {"name": "v2", "configuration": {"separator": "."}},
        "v2_slash": {"name": "v2", "configuration": {"separator": "/"}},
    }
    for name, cke in encodings.items():
        out.append(Case("chunk_keys", name, "int16", (5, 4, 3), (2, 3, 2), cke=cke, seed=next(seed)))
        out.append(Case("chunk_keys", f"{name}_0d", "int32", (), (), cke=cke, seed=next(seed)))

    out.append(Case("shapes", "one_d", "uint32", (100,), (9,), seed=next(seed)))
    out.append(Case("shapes", "zero_d", "float64", (), (), seed=next(seed)))
    out.append(Case("shapes", "zero_d_missing", "float32", (), (), fill=-2.5, written="none"))
    out.append(Case("shapes", "zero_length", "int8", (0, 5), (2, 2)))
    out.append(Case("shapes", "zero_length_3d", "float32", (3, 0, 4), (2, 2, 2), fill=1.0))
    out.append(Case("shapes", "chunk_larger_than_array", "int64", (3, 4), (10, 10), seed=next(seed)))
    out.append(Case("shapes", "four_d", "uint8", (3, 2, 4, 5), (2, 2, 3, 2), seed=next(seed)))
    out.append(Case("shapes", "one_element_chunks", "int16", (3, 4), (1, 1), seed=next(seed)))

    # Missing chunks: only some regions are written, the rest reads as fill.
    partial = [
        (slice(0, 5), slice(0, 7)),  # one whole chunk
        (slice(10, 17), slice(14, 23)),  # edge chunks
        (slice(6, 8), slice(2, 9)),  # parts of two chunks
    ]
    fills = [
        ("nan_float32", "float32", np.nan, None),
        ("inf_float64", "float64", np.inf, None),
        ("neg_inf_float64", "float64", -np.inf, None),
        ("hex_nan_float32", "float32", hex_float(0x7FC00001, "float32"), "0x7fc00001"),
        ("hex_nan_float64", "float64", hex_float(0x7FF8000000000123, "float64"), "0x7ff8000000000123"),
        ("hex_nan_float16", "float16", hex_float(0xFE01, "float16"), "0xfe01"),
        ("hex_number_float32", "float32", hex_float(0x3FC00000, "float32"), "0x3fc00000"),
        ("neg_float16", "float16", -1.5, None),
        ("zero_int32", "int32", 0, None),
        ("neg_int16", "int16", -7, None),
        ("min_int64", "int64", -(2**63), None),
        ("max_uint64", "uint64", 2**64 - 1, None),
        ("max_uint8", "uint8", 255, None),
        ("complex128_1.5_nan", "complex128", complex(1.5, np.nan), None),
        ("complex64_inf_neg", "complex64", complex(np.inf, -2.25), None),
        ("bool_true", "bool", True, None),
        ("float32_neg_zero", "float32", -0.0, None),
    ]
    for name, dt, fill, fill_json in fills:
        out.append(
            Case(
                "fill_values",
                name.replace(".", "_"),
                dt,
                (17, 23),
                (5, 7),
                fill=fill,
                fill_json=fill_json,
                written=partial,
                seed=next(seed),
            )
        )
    out.append(
        Case("fill_values", "never_written", "int32", (6, 6), (4, 4), fill=-123456, written="none")
    )

    out.append(
        Case(
            "dimension_names",
            "with_nulls",
            "int8",
            (3, 4, 5),
            (2, 2, 2),
            dims=["z", None, "x"],
            seed=next(seed),
        )
    )
    out.append(
        Case(
            "dimension_names",
            "all_named",
            "float32",
            (4, 3),
            (2, 2),
            dims=["latitude", "longitude"],
            attrs=ARRAY_ATTRIBUTES,
            seed=next(seed),
        )
    )
    out.append(
        Case(
            "dimension_names",
            "all_null",
            "uint16",
            (4,),
            (3,),
            dims=[None],
            seed=next(seed),
        )
    )
    return out


GROUP_ATTRIBUTES = {
    "root": {
        "title": "zarrkit interop",
        "count": 3,
        "pi": 3.141592653589793,
        "negative": -17,
        "big": 9007199254740993,
        "nested": {"a": [1, 2, {"b": None}], "t": True, "f": False},
        "unicode": "Grüße, 世界 🌍",
        "empty_list": [],
    },
    "nested": {"level": 1, "names": ["a", "b"]},
    "nested/inner": {"level": 2, "ünï": {"cödé": "✓"}},
    "nested/inner/deep": {},
}


def zarr_python_codecs(codecs: list[dict]):
    """zarr-python's filters, serializer and compressors for a v3 codec list."""
    filters, serializer, compressors = [], None, []
    for codec in codecs:
        if codec["name"] == "transpose":
            filters.append(codec)
        elif codec["name"] == "bytes":
            serializer = codec
        else:
            compressors.append(codec)
    return {"filters": filters, "serializer": serializer, "compressors": compressors}


def write_region(target, case: Case, data: np.ndarray) -> None:
    if case.written == "none" or 0 in case.shape:
        return
    if case.written == "all":
        target(..., data)
        return
    for region in case.written:
        target(region, data[region])


def write_zarr_python(root_dir: str) -> tuple[list[dict], list[dict]]:
    root = zarr.open_group(root_dir, mode="w", zarr_format=3, attributes=GROUP_ATTRIBUTES["root"])
    nested = root.create_group("nested", attributes=GROUP_ATTRIBUTES["nested"])
    inner = nested.create_group("inner", attributes=GROUP_ATTRIBUTES["nested/inner"])
    inner.create_group("deep", attributes=GROUP_ATTRIBUTES["nested/inner/deep"])

    arrays = []
    groups = {}
    for case in cases():
        if case.group not in groups:
            groups[case.group] = root.create_group(case.group, attributes={"category": case.group})
        kwargs = {}
        if case.codecs is not None:
            kwargs.update(zarr_python_codecs(case.codecs))
        if case.cke is not None:
            kwargs["chunk_key_encoding"] = case.cke
        if case.dims is not None:
            kwargs["dimension_names"] = case.dims
        arr = groups[case.group].create_array(
            case.name,
            shape=case.shape,
            chunks=case.chunks,
            dtype=case.dtype,
            fill_value=case.fill,
            attributes=case.attrs,
            **kwargs,
        )

        def put(region, values, arr=arr):
            arr[region] = values

        write_region(put, case, case.data())
        path = f"{case.group}/{case.name}"
        if case.fill_json is not None and isinstance(case.fill_json, str) and case.fill_json.startswith("0x"):
            # zarr-python writes every NaN as "NaN"; the hex form of a NaN
            # payload (v3 core, "fill_value") is put in the document by hand.
            doc_path = os.path.join(root_dir, path, "zarr.json")
            with open(doc_path, encoding="utf-8") as f:
                doc = json.load(f)
            doc["fill_value"] = case.fill_json
            with open(doc_path, "w", encoding="utf-8") as f:
                json.dump(doc, f, indent=2)
        arrays.append((case, path, lambda p=path: zarr.open_array(root_dir, path=p, mode="r")[...]))

    # An array deep in the nested groups, with attributes.
    deep = Case("nested/inner/deep", "leaf", "float32", (6, 7), (4, 4), attrs=ARRAY_ATTRIBUTES, seed=9999)
    arr = inner["deep"].create_array(
        "leaf", shape=deep.shape, chunks=deep.chunks, dtype=deep.dtype, attributes=deep.attrs
    )
    arr[...] = deep.data()
    arrays.append((deep, "nested/inner/deep/leaf", lambda: zarr.open_array(root_dir, path="nested/inner/deep/leaf", mode="r")[...]))

    group_entries = []
    for path in ["", "nested", "nested/inner", "nested/inner/deep", *groups]:
        g = zarr.open_group(root_dir, path=path, mode="r")
        key = path or "root"
        attrs = GROUP_ATTRIBUTES.get(key, {"category": path})
        group_entries.append(
            {
                "id": f"zarr_python/group/{key}",
                "writer": "zarr-python",
                "store": "zarr_python",
                "path": path,
                "attributes": attrs,
                "children": sorted(name for name, _ in g.members()),
            }
        )
    return arrays, group_entries


# Cases where the writing library reads its own output differently from the
# spec; the self-check then compares values with NaNs equal, not bits.
KNOWN_QUIRKS = {
    ("zarr-python", "fill_values", "hex_nan_float16"): (
        "zarr-python 3.1.6 reads the float16 fill value \"0xfe01\" as 0xfe00, "
        "dropping the NaN payload (float32 and float64 payloads survive)"
    ),
}


def ts_data_type(dtype: str) -> str:
    return dtype


def write_tensorstore(root_dir: str) -> list:
    arrays = []
    for case in cases():
        path = f"{case.group}__{case.name}"
        metadata = {
            "shape": list(case.shape),
            "data_type": ts_data_type(case.dtype),
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(case.chunks)}},
            "fill_value": case.fill_value_json(),
        }
        # Without codecs tensorstore picks its own, which for some shapes is
        # `sharding_indexed`; this matrix covers the non-sharding codecs.
        metadata["codecs"] = case.codecs if case.codecs is not None else [bytes_codec(case.dtype)]
        if case.cke is not None:
            metadata["chunk_key_encoding"] = case.cke
        if case.dims is not None:
            metadata["dimension_names"] = case.dims
        if case.attrs:
            metadata["attributes"] = case.attrs
        spec = {
            "driver": "zarr3",
            "kvstore": {"driver": "file", "path": os.path.join(root_dir, path)},
            "metadata": metadata,
            "create": True,
            "delete_existing": True,
        }
        store = ts.open(spec).result()

        def put(region, values, store=store):
            store[region].write(values).result()

        write_region(put, case, case.data())
        spec_read = {"driver": "zarr3", "kvstore": {"driver": "file", "path": os.path.join(root_dir, path)}}
        arrays.append((case, path, lambda s=spec_read: ts.open(s, read=True).result().read().result()))
    return arrays


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = os.path.abspath(sys.argv[1])
    os.makedirs(os.path.join(out_dir, "expected"), exist_ok=True)

    zp_arrays, group_entries = write_zarr_python(os.path.join(out_dir, "zarr_python"))
    ts_arrays = write_tensorstore(os.path.join(out_dir, "tensorstore"))

    manifest_arrays = []
    problems = []
    for writer, store, entries in (
        ("zarr-python", "zarr_python", zp_arrays),
        ("tensorstore", "tensorstore", ts_arrays),
    ):
        for case, path, read_back in entries:
            ident = f"{store}/{path}"
            expected = case.expected()
            # The writer must read its own output as expected; otherwise the
            # case (or the writer) is wrong, not zarrkit.
            got = np.asarray(read_back())
            if got.shape != expected.shape:
                problems.append(f"{writer} reads back {ident} with shape {got.shape}")
            elif not np.array_equal(bit_view(got), bit_view(expected)):
                quirk = KNOWN_QUIRKS.get((writer, case.group, case.name))
                if quirk is not None and np.array_equal(got, expected, equal_nan=True):
                    print(f"note: {ident}: {quirk}", file=sys.stderr)
                else:
                    problems.append(f"{writer} does not read back {ident} as written")
            with open(os.path.join(out_dir, store, path, "zarr.json"), encoding="utf-8") as f:
                document = json.load(f)
            file_name = ident.replace("/", "__") + ".bin"
            with open(os.path.join(out_dir, "expected", file_name), "wb") as f:
                f.write(to_le_bytes(expected, case.dtype))
            manifest_arrays.append(
                {
                    "id": ident,
                    "writer": writer,
                    "store": store,
                    "path": path,
                    "data_type": case.dtype,
                    "shape": list(case.shape),
                    "chunk_shape": document["chunk_grid"]["configuration"]["chunk_shape"],
                    "fill_value_hex": scalar_le_hex(case.fill, case.dtype),
                    # As stored: tensorstore drops all-null dimension
                    # names, which the spec allows.
                    "fill_value": document["fill_value"],
                    "dimension_names": document.get("dimension_names"),
                    "attributes": document.get("attributes", {}),
                    "codecs": case.codecs,
                    "chunk_key_encoding": case.cke,
                    "expected": f"expected/{file_name}",
                }
            )

    write_json(
        os.path.join(out_dir, "manifest.json"),
        {"arrays": manifest_arrays, "groups": group_entries},
    )
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    print(
        f"wrote {len(manifest_arrays)} arrays and {len(group_entries)} groups to {out_dir}",
        file=sys.stderr,
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
