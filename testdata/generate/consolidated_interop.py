#!/usr/bin/env python3
"""Consolidated metadata interop between zarrkit and zarr-python 3.1.

Usage:
  consolidated_interop.py write DIR   zarr-python writes a small hierarchy in
                                      v2 (DIR/v2.zarr) and v3 (DIR/v3.zarr) and
                                      consolidates it with zarr.consolidate_metadata;
                                      zarrkit reads it (zarrkit/tests/it/formats/consolidated.rs).
  consolidated_interop.py read DIR    zarr.open_consolidated reads DIR/v2.zarr and
                                      DIR/v3.zarr, which zarrkit wrote and consolidated,
                                      and prints what it found as JSON; exits 1 if
                                      zarr-python finds no consolidated metadata.

Both hierarchies are: root group (attributes {"title": "t"}), array `a`
(int32, shape [6], chunks [4], values 0..5), group `g` (attributes
{"k": 1}) holding array `b` (float64, shape [2, 3], chunks [2, 2], values
0.5 * i).

Made with zarr 3.1.6, numcodecs 0.16.6, numpy 2.4.6.
"""

from __future__ import annotations

import json
import os
import sys
import warnings

import numpy as np
import zarr


def write(root: str) -> None:
    for fmt in (2, 3):
        path = os.path.join(root, f"v{fmt}.zarr")
        g = zarr.open_group(path, mode="w", zarr_format=fmt)
        g.attrs["title"] = "t"
        a = g.create_array("a", shape=(6,), chunks=(4,), dtype="int32")
        a[:] = np.arange(6, dtype="int32")
        sub = g.create_group("g")
        sub.attrs["k"] = 1
        b = sub.create_array("b", shape=(2, 3), chunks=(2, 2), dtype="float64")
        b[:] = np.arange(6, dtype="float64").reshape(2, 3) * 0.5
        zarr.consolidate_metadata(path, zarr_format=fmt)


def read(root: str) -> int:
    out = {}
    for fmt in (2, 3):
        path = os.path.join(root, f"v{fmt}.zarr")
        # use_consolidated=True: fail rather than fall back to listing.
        g = zarr.open_consolidated(path, zarr_format=fmt)
        if g.metadata.consolidated_metadata is None:
            print(f"v{fmt}: no consolidated metadata found", file=sys.stderr)
            return 1
        nodes = {}
        for name, node in sorted(g.members(max_depth=None)):
            entry = {"attributes": dict(node.attrs)}
            if isinstance(node, zarr.Array):
                entry["shape"] = list(node.shape)
                entry["dtype"] = str(node.dtype)
                entry["values"] = np.asarray(node[...]).ravel().tolist()
            nodes[name] = entry
        out[f"v{fmt}"] = {
            "attributes": dict(g.attrs),
            "consolidated": sorted(g.metadata.consolidated_metadata.metadata),
            "nodes": nodes,
        }
    print(json.dumps(out, sort_keys=True))
    return 0


def main() -> int:
    warnings.simplefilter("ignore")
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "read"):
        print(__doc__, file=sys.stderr)
        return 2
    if sys.argv[1] == "write":
        write(sys.argv[2])
        return 0
    return read(sys.argv[2])


if __name__ == "__main__":
    sys.exit(main())
