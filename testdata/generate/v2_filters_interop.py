"""numcodecs filters and checksums in Zarr v2 (and v3): zarr-python 3.1 <-> zarrkit.

`write DIR`: zarr-python writes DIR/py.zarr (zarr_format=2) and DIR/py3.zarr
(zarr_format=3, the `numcodecs.<id>` codecs of zarr.codecs.numcodecs), one
array per filter case, with DIR/expected/<id>.bin holding the little-endian
bytes zarr-python reads back and DIR/manifest.json listing the cases.
`read DIR`: zarr-python reads DIR/rk.zarr and DIR/rk3.zarr (which zarrkit
wrote from the same metadata and expected values) and checks every element;
for cases without a compressor (v2) or without zlib (v3) it also checks that
zarrkit's chunk files equal zarr-python's byte for byte. Run by
zarrkit/tests/it/codecs/numcodecs.rs.
"""

import json
import os
import sys
import warnings

import numcodecs
import numpy as np
import zarr
from zarr.codecs import numcodecs as nc

warnings.filterwarnings("ignore")


def cases():
    rng = np.random.default_rng(4)
    i4 = rng.integers(-1000, 1000, size=(7, 5)).astype("<i4")
    f8 = rng.normal(1000, 3, size=(7, 5))
    f4 = rng.normal(0, 10, size=(9,)).astype("<f4")
    b1 = rng.integers(0, 2, size=(13, 3)).astype(bool)
    u2 = rng.integers(0, 60000, size=(11,)).astype(">u2")
    z = numcodecs.Zlib(level=1)
    yield "delta_i4", i4, [numcodecs.Delta(dtype="<i4")], None, "C"
    yield "delta_i4_to_i2_F", i4, [numcodecs.Delta(dtype="<i4", astype="<i2")], None, "F"
    yield "delta_be_u2_zlib", u2, [numcodecs.Delta(dtype=">u2")], z, "C"
    yield "fso_f8_u1", f8, [numcodecs.FixedScaleOffset(offset=1000, scale=10, dtype="<f8", astype="|u1")], None, "C"
    yield "fso_f8_i2_zlib", f8, [numcodecs.FixedScaleOffset(offset=990.5, scale=100, dtype="<f8", astype="<i2")], z, "C"
    yield "quantize_f8", f8, [numcodecs.Quantize(digits=2, dtype="<f8")], None, "C"
    yield "quantize_f4_to_f8", f4, [numcodecs.Quantize(digits=1, dtype="<f4", astype="<f8")], None, "C"
    yield "bitround_f8", f8, [numcodecs.BitRound(keepbits=7)], None, "C"
    yield "bitround_f4_zlib", f4, [numcodecs.BitRound(keepbits=3)], z, "C"
    yield "astype_f8_f4", f8, [numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8")], None, "C"
    yield "astype_i4_i8_be", i4, [numcodecs.AsType(encode_dtype=">i8", decode_dtype="<i4")], None, "C"
    yield "packbits", b1, [numcodecs.PackBits()], None, "C"
    yield "packbits_F_zlib", b1, [numcodecs.PackBits()], z, "F"
    yield "shuffle_i4", i4, [numcodecs.Shuffle(elementsize=4)], None, "C"
    yield "shuffle_zlib", f8, [numcodecs.Shuffle(elementsize=8)], z, "C"
    yield "crc32_compressor", i4, None, numcodecs.CRC32(), "C"
    yield "crc32_end_filter", i4, [numcodecs.CRC32(location="end")], z, "C"
    yield "adler32_compressor", f8, None, numcodecs.Adler32(), "C"
    yield "fletcher32_compressor", u2, None, numcodecs.Fletcher32(), "C"
    yield "jenkins_compressor", i4, None, numcodecs.JenkinsLookup3(initval=0), "C"
    yield "jenkins_seeded_filter", f4, [numcodecs.JenkinsLookup3(initval=9)], None, "C"
    yield "crc32c_compressor", f8, None, numcodecs.CRC32C(), "C"
    yield "crc32c_filter_zlib", i4, [numcodecs.CRC32C()], z, "F"
    yield "delta_shuffle_adler32_zlib", i4, [numcodecs.Delta(dtype="<i4"), numcodecs.Shuffle(elementsize=4), numcodecs.Adler32()], z, "C"
    yield "astype_delta_crc32", f8, [numcodecs.AsType(encode_dtype="<i8", decode_dtype="<f8"), numcodecs.Delta(dtype="<i8", astype="<i4"), numcodecs.CRC32()], None, "C"


def cases_v3():
    rng = np.random.default_rng(3)
    i4 = rng.integers(-1000, 1000, size=(6, 5)).astype("<i4")
    f8 = rng.normal(1000, 3, size=(9,))
    b1 = rng.integers(0, 2, size=(11,)).astype(bool)
    yield "v3_delta_fso_shuffle_crc32_jenkins", i4, [nc.Delta(dtype="<i4"), nc.FixedScaleOffset(offset=0, scale=1, dtype="<i4", astype="<i2")], [nc.Shuffle(elementsize=2), nc.CRC32(), nc.JenkinsLookup3()]
    yield "v3_quantize_adler32", f8, [nc.Quantize(digits=2, dtype="<f8")], [nc.Adler32()]
    yield "v3_bitround_fletcher32", f8, [nc.BitRound(keepbits=6)], [nc.Fletcher32()]
    yield "v3_astype_zlib", f8, [nc.AsType(encode_dtype="<f4", decode_dtype="<f8")], [nc.Zlib(level=1)]
    yield "v3_packbits", b1, [nc.PackBits()], None
    yield "v3_crc32_end", i4, None, [nc.CRC32(location="end")]
    yield "v3_crc32c", f8, None, [nc.CRC32C()]


def write(root):
    os.makedirs(os.path.join(root, "expected"), exist_ok=True)
    group = zarr.open_group(os.path.join(root, "py.zarr"), mode="w", zarr_format=2)
    manifest = []
    for name, data, filters, compressor, order in cases():
        chunks = tuple(max(1, (n + 1) // 2) for n in data.shape)
        a = group.create_array(name, shape=data.shape, chunks=chunks, dtype=data.dtype,
                               filters=filters, compressor=compressor, order=order,
                               fill_value=0)
        a[...] = data
        back = zarr.open_array(os.path.join(root, "py.zarr", name), mode="r")[...]
        back.astype(back.dtype.newbyteorder("<")).tofile(os.path.join(root, "expected", name + ".bin"))
        manifest.append({"id": name, "format": 2, "dtype": data.dtype.str,
                         "shape": list(data.shape), "compare_chunks": compressor is None})
    group3 = zarr.open_group(os.path.join(root, "py3.zarr"), mode="w", zarr_format=3)
    for name, data, filters, compressors in cases_v3():
        chunks = tuple(max(1, (n + 1) // 2) for n in data.shape)
        a = group3.create_array(name, shape=data.shape, chunks=chunks, dtype=data.dtype,
                                filters=filters, compressors=compressors, fill_value=0)
        a[...] = data
        back = zarr.open_array(os.path.join(root, "py3.zarr", name), mode="r")[...]
        back.astype(back.dtype.newbyteorder("<")).tofile(os.path.join(root, "expected", name + ".bin"))
        manifest.append({"id": name, "format": 3, "dtype": data.dtype.str,
                         "shape": list(data.shape), "compare_chunks": "zlib" not in name})
    with open(os.path.join(root, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


def read(root):
    with open(os.path.join(root, "manifest.json")) as f:
        manifest = json.load(f)
    failures = []
    for entry in manifest:
        name = entry["id"]
        try:
            suffix = "" if entry["format"] == 2 else "3"
            a = zarr.open_array(os.path.join(root, "rk" + suffix + ".zarr", name), mode="r")
            got = a[...]
            expected = np.fromfile(os.path.join(root, "expected", name + ".bin"),
                                   dtype=np.dtype(entry["dtype"]).newbyteorder("<")).reshape(entry["shape"])
            if not np.array_equal(got, expected):
                failures.append(f"{name}: values differ")
            if entry["compare_chunks"]:
                py_dir = os.path.join(root, "py" + suffix + ".zarr", name)
                rk_dir = os.path.join(root, "rk" + suffix + ".zarr", name)
                keys = [os.path.relpath(os.path.join(d, f), py_dir)
                        for d, _, files in os.walk(py_dir) for f in files
                        if not f.startswith(".") and f != "zarr.json"]
                if not keys:
                    failures.append(f"{name}: no chunks to compare")
                for key in sorted(keys):
                    with open(os.path.join(py_dir, key), "rb") as f1, \
                         open(os.path.join(rk_dir, key), "rb") as f2:
                        if f1.read() != f2.read():
                            failures.append(f"{name}: chunk {key} differs from zarr-python's")
        except Exception as e:  # report every case, not only the first
            failures.append(f"{name}: {e!r}")
    print(f"checked {len(manifest)} arrays")
    if failures:
        print("\n".join(failures))
        sys.exit(1)


if __name__ == "__main__":
    {"write": write, "read": read}[sys.argv[1]](sys.argv[2])
