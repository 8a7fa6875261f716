"""Writes the fill-value fixtures of zarr-python 3.1 and tensorstore (issue
#9, "the rest of the same class"): one array per data type and fill-value
spelling each writer produces, in v3 and in v2, with the real writers.

Run from the repository root with the interop venv (scripts/requirements.txt):

    python testdata/generate/fill_values_fixtures.py

Stores:

- testdata/fixtures/v3/zarr-python-fill-values.zarr and
  testdata/fixtures/v2/zarr-python-3-fill-values.zarr: zarr-python 3.1
  (`zarr_format=3` and `=2`);
- testdata/fixtures/v3/tensorstore-fill-values.zarr and
  testdata/fixtures/v2/tensorstore-fill-values.zarr: tensorstore's `zarr3`
  and `zarr` drivers.

Each array has shape (5,) and chunks (2,); only elements 0..2 are written,
so chunks 1 and 2 are missing and read as the fill value. The generator
reads every array back with its writer and asserts the expected values
(writer's reading = NumPy's full array of the fill value, then the written
elements), which the manifest records.
"""

import importlib.metadata
import json
import os
import shutil
import sys

import numpy as np
import tensorstore as ts
import zarr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from draft_common import entry, update_manifest  # noqa: E402

V3_ZP = os.path.join("testdata", "fixtures", "v3", "zarr-python-fill-values.zarr")
V2_ZP = os.path.join("testdata", "fixtures", "v2", "zarr-python-3-fill-values.zarr")
V3_TS = os.path.join("testdata", "fixtures", "v3", "tensorstore-fill-values.zarr")
V2_TS = os.path.join("testdata", "fixtures", "v2", "tensorstore-fill-values.zarr")

# A NaN with a payload (0x7fc00001): zarr-python 3.1 writes it as "NaN" in
# v3 and v2 and reads back the canonical NaN, tensorstore's v2 driver
# likewise, so only tensorstore's zarr3 fixture keeps it ("0x7fc00001");
# the others are skipped by `checked` below, saying so.
NAN_PAYLOAD_F32 = np.frombuffer(np.uint32(0x7FC00001).tobytes(), dtype="<f4")[0]

# name, NumPy dtype, fill value, values.
CASES = [
    ("float64_nan", "<f8", np.nan, [1.5, -2.0, 0, 0, 0]),
    ("float32_infinity", "<f4", np.inf, [1.5, -2.0, 0, 0, 0]),
    ("float16_minus_infinity", "<f2", -np.inf, [1.5, -2.0, 0, 0, 0]),
    ("float64_tenth", "<f8", 0.1, [1.5, -2.0, 0, 0, 0]),
    ("complex128_nan_infinity", "<c16", complex(np.nan, np.inf), [1 + 2j, -3j, 0, 0, 0]),
    ("complex64_pair", "<c8", complex(1.5, -2.0), [1 + 2j, -3j, 0, 0, 0]),
    ("bool_true", "|b1", True, [False, True, False, False, False]),
    ("int64_min", "<i8", -(2**63), [1, -1, 0, 0, 0]),
    ("uint64_max", "<u8", 2**64 - 1, [1, 2, 0, 0, 0]),
    ("int8_minus_one", "|i1", -1, [1, 2, 0, 0, 0]),
    ("float32_nan_payload", "<f4", NAN_PAYLOAD_F32, [1.5, -2.0, 0, 0, 0]),
]

# tensorstore names.
TS_V3 = {"<f8": "float64", "<f4": "float32", "<f2": "float16", "<c16": "complex128",
         "<c8": "complex64", "|b1": "bool", "<i8": "int64", "<u8": "uint64", "|i1": "int8"}


def expected_of(dtype, fill, values):
    expected = np.full(5, fill, dtype=dtype)
    expected[0:2] = np.array(values, dtype=dtype)[0:2]
    return expected


def same(a, b):
    return np.asarray(a).tobytes() == np.asarray(b).tobytes()


def checked(path, name, fmt, got, expected, writer):
    """The manifest entry of array `name`, if its writer reads back the
    expected values; otherwise none, and the array is removed (saying so)."""
    if same(got, expected):
        return [entry(name, fmt, path, "/" + name, expected, writer)]
    print(f"skipped {writer} {name}: reads back {got!r}, not {expected!r}")
    shutil.rmtree(os.path.join(path, name))
    return []


def zarr_python(path, zarr_format, fmt):
    shutil.rmtree(path, ignore_errors=True)
    root = zarr.open_group(path, mode="w", zarr_format=zarr_format)
    writer = f"zarr-python {zarr.__version__}" + (" (zarr_format=2)" if zarr_format == 2 else "")
    entries = []
    for name, dtype, fill, values in CASES:
        arr = root.create_array(name, shape=(5,), chunks=(2,), dtype=dtype, fill_value=fill,
                                compressors=None)
        arr[0:2] = np.array(values, dtype=dtype)[0:2]
        expected = expected_of(dtype, fill, values)
        got = zarr.open_array(path, path=name, mode="r", zarr_format=zarr_format)[...]
        entries += checked(path, name, fmt, got, expected, writer)
    return entries


def tensorstore(path, driver, fmt):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    version = "tensorstore " + importlib.metadata.version("tensorstore")
    if driver == "zarr3":
        with open(os.path.join(path, "zarr.json"), "w") as f:
            json.dump({"zarr_format": 3, "node_type": "group", "attributes": {}}, f)
    else:
        with open(os.path.join(path, ".zgroup"), "w") as f:
            json.dump({"zarr_format": 2}, f)
    entries = []
    for name, dtype, fill, values in CASES:
        if driver == "zarr3":
            metadata = {
                "shape": [5], "data_type": TS_V3[dtype],
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                "fill_value": None,
            }
        else:
            metadata = {"shape": [5], "chunks": [2], "dtype": dtype, "compressor": None,
                        "fill_value": None}
        # tensorstore takes the fill value in its own JSON form: give it
        # NumPy's value through the array API instead.
        spec = {"driver": driver, "kvstore": {"driver": "file", "path": os.path.join(path, name)},
                "metadata": metadata, "create": True, "delete_existing": True}
        del metadata["fill_value"]
        try:
            arr = ts.open(spec, fill_value=np.array(fill, dtype=dtype)).result()
        except Exception as e:  # noqa: BLE001
            print(f"skipped {version} {driver} {name}: {e}")
            continue
        arr[0:2].write(np.array(values, dtype=dtype)[0:2]).result()
        expected = expected_of(dtype, fill, values)
        got = ts.open({"driver": driver, "kvstore": spec["kvstore"]}).result().read().result()
        entries += checked(path, name, fmt, got, expected, f"{version} ({driver} driver)")
    return entries


def main():
    entries = []
    entries += zarr_python(V3_ZP, 3, "v3")
    entries += zarr_python(V2_ZP, 2, "v2")
    entries += tensorstore(V3_TS, "zarr3", "v3")
    entries += tensorstore(V2_TS, "zarr", "v2")
    update_manifest(entries, [os.path.relpath(p, "testdata") for p in (V3_ZP, V2_ZP, V3_TS, V2_TS)])
    print(len(entries), "arrays")


if __name__ == "__main__":
    main()
