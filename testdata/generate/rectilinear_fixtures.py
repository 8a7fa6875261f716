"""Writes the `rectilinear` chunk grid fixtures under
testdata/fixtures/v3/rectilinear.zarr and prints their manifest entries.

Run from the repository root with a Python that has numpy:

    python testdata/generate/rectilinear_fixtures.py

Neither zarr-python 3.1.6 nor tensorstore 0.1.86 implements the registered
`rectilinear` chunk grid extension
(shared/specs/extensions/chunk-grids/rectilinear/README.md), so these stores
are written here by hand with numpy: the `zarr.json` documents use the grids
of the README's examples verbatim, and the chunks are cut from the array by
the README's indexing rule (cumulative sums of the edge lengths), padded
with the fill value past the array's edge. That is an implementation
independent of zarrkit's, which the corpus test (zarrkit/tests/it/interop/corpus.rs)
checks against the recorded SHA-256 of the values (little-endian, C order).
"""

import gzip
import hashlib
import json
import os
import shutil

import numpy as np

ROOT = os.path.join("testdata", "fixtures", "v3", "rectilinear.zarr")


def expand(edges, length):
    """The README's expansion of one dimension's `chunk_shapes` entry."""
    if isinstance(edges, int):
        # "repeat the integer m until it defines a sequence with a sum
        # greater than or equal to L"
        n = max(1, -(-length // edges))
        return [edges] * n
    out = []
    for item in edges:
        if isinstance(item, list):
            value, count = item
            out.extend([value] * count)
        else:
            out.append(item)
    return out


def starts(lengths):
    return [int(s) for s in np.concatenate([[0], np.cumsum(lengths)[:-1]])]


def write_json(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


def write_array(name, values, chunk_shapes, fill_value, compress, skip=()):
    """Writes `values` as array `name`; chunks listed in `skip` are left out
    (they read as the fill value), and so are chunks wholly past the array."""
    dtype = values.dtype
    codecs = [{"name": "bytes", "configuration": {"endian": "little"}}]
    if compress:
        codecs.append({"name": "gzip", "configuration": {"level": 5}})
    write_json(
        os.path.join(ROOT, name, "zarr.json"),
        {
            "zarr_format": 3,
            "node_type": "array",
            "shape": list(values.shape),
            "data_type": str(dtype),
            "chunk_grid": {
                "name": "rectilinear",
                "configuration": {"kind": "inline", "chunk_shapes": chunk_shapes},
            },
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": fill_value,
            "codecs": codecs,
            "attributes": {},
        },
    )
    grids = [expand(e, n) for e, n in zip(chunk_shapes, values.shape)]
    origins = [starts(g) for g in grids]
    expected = values.copy()
    for coords in np.ndindex(*[len(g) for g in grids]):
        origin = [origins[d][c] for d, c in enumerate(coords)]
        shape = [grids[d][c] for d, c in enumerate(coords)]
        if any(o >= n for o, n in zip(origin, values.shape)):
            continue  # an overflow chunk: no element of the array
        inside = tuple(slice(o, min(o + s, n)) for o, s, n in zip(origin, shape, values.shape))
        if coords in skip:
            expected[inside] = fill_value
            continue
        chunk = np.full(shape, fill_value, dtype=dtype)
        chunk[tuple(slice(0, s.stop - s.start) for s in inside)] = values[inside]
        data = chunk.astype(dtype.newbyteorder("<")).tobytes()
        if compress:
            data = gzip.compress(data, compresslevel=5, mtime=0)
        key = os.path.join(ROOT, name, "c", *[str(c) for c in coords])
        os.makedirs(os.path.dirname(key), exist_ok=True)
        with open(key, "wb") as f:
            f.write(data)
    le = expected.astype(dtype.newbyteorder("<"))
    return hashlib.sha256(np.ascontiguousarray(le).tobytes()).hexdigest()


def main():
    shutil.rmtree(ROOT, ignore_errors=True)
    write_json(
        os.path.join(ROOT, "zarr.json"),
        {"zarr_format": 3, "node_type": "group", "attributes": {}},
    )
    entries = []

    # README "Indexing": edge lengths [[16, 10], [24, 14]], so an array of
    # shape [26, 38]; index (20, 15) is element (4, 15) of chunk (1, 0).
    values = np.arange(26 * 38, dtype=np.int32).reshape(26, 38)
    sha = write_array("readme_indexing", values, [[16, 10], [24, 14]], -1, compress=False)
    entries.append(("rectilinear_readme_indexing", "/readme_indexing", "int32", values.shape, sha))

    # README "Example": shape [6, 6, 6, 6, 6] and its five spellings of edge
    # lengths, verbatim; gzip-compressed, one chunk left out.
    values = (np.arange(6**5, dtype=np.int64) * 2654435761 % 65521).astype(np.uint16)
    values = values.reshape(6, 6, 6, 6, 6)
    sha = write_array(
        "readme_example",
        values,
        [4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4]],
        7,
        compress=True,
        skip={(1, 2, 0, 3, 1)},
    )
    entries.append(("rectilinear_readme_example", "/readme_example", "uint16", values.shape, sha))

    for name, node, data_type, shape, sha in entries:
        print("[[fixture]]")
        print(f'name = "{name}"')
        print('format = "v3"')
        print('store = "fixtures/v3/rectilinear.zarr"')
        print(f'node = "{node}"')
        print(f'data_type = "{data_type}"')
        print(f"shape = {list(shape)}")
        print(f'sha256 = "{sha}"')
        print(f'writer = "hand-made from the rectilinear README with numpy {np.__version__}"')
        print()


if __name__ == "__main__":
    main()
