"""zarr-python 2.18's reading of every array under a directory, for
zarrkit/tests/it/interop/zarr2_fixture.rs (issue #9).

Usage: python zarr2_fixture_dump.py ROOT OUT

ROOT is `../shared/testdata/zarr-python-2-fixture` (zarr-python's own
backward-compatibility data, see its README). Every directory holding a
`.zarray` is opened with zarr 2.18 through a plain DirectoryStore, as
`zarr.open_array(path, mode="r")` does, and its whole contents are written
to OUT/<n>.bin as little-endian C-order bytes (for `U` types: UTF-32LE code
units, as NumPy holds them). OUT/manifest.json lists, per array, the path
relative to ROOT, NumPy's `dtype.str`, the shape, the fill value the same
way (base64 of its little-endian bytes, or null) and the file.
"""

from __future__ import annotations

import base64
import json
import os
import sys

import numpy as np
import zarr


def little(dtype: np.dtype) -> np.dtype:
    return dtype.newbyteorder("<") if dtype.byteorder in "<>=" else dtype


def main() -> None:
    root, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    arrays = []
    for dirpath, _dirnames, filenames in sorted(os.walk(root)):
        if ".zarray" not in filenames:
            continue
        rel = os.path.relpath(dirpath, root)
        z = zarr.open_array(zarr.DirectoryStore(dirpath), mode="r")
        data = np.ascontiguousarray(z[...].astype(little(z.dtype)))
        name = f"{len(arrays)}.bin"
        with open(os.path.join(out, name), "wb") as f:
            f.write(data.tobytes())
        fill = None
        if z.fill_value is not None:
            fill_bytes = np.array(z.fill_value, dtype=little(z.dtype)).tobytes()
            fill = base64.b64encode(fill_bytes).decode()
        arrays.append(
            {
                "path": rel,
                "dtype": z.dtype.str,
                "shape": list(z.shape),
                "fill_value": fill,
                "file": name,
            }
        )
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"zarr": zarr.__version__, "arrays": arrays}, f, indent=1)
    print(f"{len(arrays)} arrays read by zarr {zarr.__version__}")


if __name__ == "__main__":
    main()
