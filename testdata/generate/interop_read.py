#!/usr/bin/env python3
"""Check arrays and groups written by zarrkit with zarr-python 3.1 and tensorstore.

Usage: interop_read.py DIR

DIR holds what zarrkit's interop test wrote: stores, expected/<id>.bin (each
array's values, raw little-endian C order) and manifest.json:

  {"arrays": [{"id", "store", "path", "data_type", "shape", "chunk_shape",
               "fill_value_hex", "dimension_names", "attributes", "expected",
               "readers"?}],
   "groups": [{"id", "store", "path", "attributes", "children"}]}

Every array is opened with zarr-python and with tensorstore (unless its
"readers" list names only one), and its shape, data type, chunk shape, fill
value, dimension names, attributes and every element (bit for bit, so NaN
payloads count) are compared with the manifest. Groups are opened with
zarr-python (tensorstore has no groups). Exits 1 listing every mismatch.
"""

from __future__ import annotations

import json
import os
import sys
import traceback

import numpy as np
import tensorstore as ts
import zarr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop_common import bit_view, from_le_bytes, scalar_le_hex  # noqa: E402

READERS = ("zarr-python", "tensorstore")


def first_difference(got: np.ndarray, expected: np.ndarray) -> str:
    diff = np.argwhere(bit_view(got) != bit_view(expected))
    n = len(diff)
    index = tuple(int(i) for i in diff[0])
    if expected.dtype.kind == "c":
        index = index[:-1]
    return (
        f"{n} element bit pattern(s) differ; first at {list(index)}: "
        f"got {got[index]!r}, expected {expected[index]!r}"
    )


def compare(errors: list[str], where: str, what: str, got, expected) -> None:
    if got != expected:
        errors.append(f"{where}: {what} is {got!r}, expected {expected!r}")


def compare_values(errors: list[str], where: str, got: np.ndarray, expected: np.ndarray) -> None:
    got = np.asarray(got)
    if got.shape != expected.shape:
        errors.append(f"{where}: read shape {got.shape}, expected {expected.shape}")
        return
    got = got.astype(expected.dtype, copy=False)
    if not np.array_equal(bit_view(got), bit_view(expected)):
        errors.append(f"{where}: values differ: {first_difference(got, expected)}")


def dimension_names(names):
    """Dimension names with all-null lists as absent (both mean "unnamed")."""
    if names is None or all(n is None for n in names):
        return None
    return list(names)


def check_zarr_python(errors, root: str, entry: dict, expected: np.ndarray) -> None:
    where = f"zarr-python reading {entry['id']}"
    arr = zarr.open_array(os.path.join(root, entry["store"]), path=entry["path"], mode="r", zarr_format=3)
    compare(errors, where, "shape", list(arr.shape), entry["shape"])
    compare(errors, where, "data type", arr.metadata.data_type.to_json(zarr_format=3), entry["data_type"])
    compare(errors, where, "chunk shape", list(arr.chunks), entry["chunk_shape"])
    compare(errors, where, "fill value bytes", scalar_le_hex(arr.fill_value, entry["data_type"]), entry["fill_value_hex"])
    compare(
        errors,
        where,
        "dimension names",
        dimension_names(arr.metadata.dimension_names),
        dimension_names(entry.get("dimension_names")),
    )
    compare(errors, where, "attributes", arr.attrs.asdict(), entry["attributes"])
    compare_values(errors, where, arr[...], expected)


def check_tensorstore(errors, root: str, entry: dict, expected: np.ndarray) -> None:
    where = f"tensorstore reading {entry['id']}"
    path = os.path.join(root, entry["store"], entry["path"])
    arr = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}, read=True).result()
    metadata = arr.spec().to_json()["metadata"]
    compare(errors, where, "shape", list(arr.shape), entry["shape"])
    compare(errors, where, "data type", metadata["data_type"], entry["data_type"])
    compare(errors, where, "chunk shape", list(arr.chunk_layout.read_chunk.shape or ()), entry["chunk_shape"])
    compare(
        errors,
        where,
        "fill value bytes",
        scalar_le_hex(np.asarray(arr.fill_value), entry["data_type"]),
        entry["fill_value_hex"],
    )
    labels = [label or None for label in arr.domain.labels]
    compare(errors, where, "dimension names", dimension_names(labels), dimension_names(entry.get("dimension_names")))
    compare(errors, where, "attributes", metadata.get("attributes", {}), entry["attributes"])
    compare_values(errors, where, arr.read().result(), expected)


def check_group(errors, root: str, entry: dict) -> None:
    where = f"zarr-python reading group {entry['id']}"
    group = zarr.open_group(os.path.join(root, entry["store"]), path=entry["path"], mode="r", zarr_format=3)
    compare(errors, where, "attributes", group.attrs.asdict(), entry["attributes"])
    compare(errors, where, "children", sorted(name for name, _ in group.members()), sorted(entry["children"]))


def ts_version() -> str:
    from importlib.metadata import version

    return version("tensorstore")


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = os.path.abspath(sys.argv[1])
    with open(os.path.join(root, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)

    errors: list[str] = []
    checked = {reader: 0 for reader in READERS}
    for entry in manifest["arrays"]:
        with open(os.path.join(root, entry["expected"]), "rb") as f:
            expected = from_le_bytes(f.read(), entry["data_type"], entry["shape"])
        for reader, check in (("zarr-python", check_zarr_python), ("tensorstore", check_tensorstore)):
            if reader not in entry.get("readers", READERS):
                continue
            checked[reader] += 1
            try:
                check(errors, root, entry, expected)
            except Exception as e:  # noqa: BLE001 - every failure is reported
                last = traceback.extract_tb(e.__traceback__)[-1]
                errors.append(
                    f"{reader} reading {entry['id']}: cannot read: {type(e).__name__}: {e} "
                    f"(at {os.path.basename(last.filename)}:{last.lineno})"
                )
    for entry in manifest.get("groups", []):
        try:
            check_group(errors, root, entry)
        except Exception as e:  # noqa: BLE001
            errors.append(f"zarr-python reading group {entry['id']}: cannot read: {type(e).__name__}: {e}")

    summary = (
        f"checked {checked['zarr-python']} arrays with zarr-python, "
        f"{checked['tensorstore']} with tensorstore and {len(manifest.get('groups', []))} groups "
        f"(zarr {zarr.__version__}, tensorstore {ts_version()})"
    )
    if errors:
        print(f"{len(errors)} interop mismatch(es); {summary}:", file=sys.stderr)
        for error in errors:
            print(f"  - {error}", file=sys.stderr)
        return 1
    print(f"all match; {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
