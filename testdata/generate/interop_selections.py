"""Selections through zarr-python and NumPy, for zarrkit's interop test.

Usage: interop_selections.py DIR CASES.json

Writes two int32 arrays holding 0, 1, 2, … with zarr-python into the
store DIR (`plain`: regular chunks; `sharded`: shards of inner chunks),
then applies each case (a mode and NumPy's text of a selection) through
zarr-python (`z[...]`, `z.oindex`, `z.vindex`, `z.blocks`) and through
NumPy on the whole array, and prints one JSON line per case and array:
`{"zarr": RESULT, "numpy": RESULT}`, each `{"shape": [...], "values": [...]}`,
`{"error": "..."}` when it refuses the selection, or `null` when the
mode has no NumPy equivalent here (blocks).
"""

import json
import sys

import numpy as np
import zarr

SHAPE = (13, 11, 7)


def parse(text):
    """The index tuple NumPy's text stands for (only literals and names)."""
    return eval(f"np.s_[{text}]", {"np": np, "newaxis": None})


def as_tuple(selection):
    return selection if isinstance(selection, tuple) else (selection,)


def expand(selection, ndim):
    """Replace an ellipsis by whole slices (orthogonal selections)."""
    selection = as_tuple(selection)
    if any(s is Ellipsis for s in selection):
        i = next(k for k, s in enumerate(selection) if s is Ellipsis)
        rest = ndim - (len(selection) - 1)
        selection = selection[:i] + (slice(None),) * rest + selection[i + 1 :]
    return selection + (slice(None),) * (ndim - len(selection))


def numpy_orthogonal(data, selection):
    index = []
    keep = []
    for n, s in zip(data.shape, expand(selection, data.ndim)):
        if isinstance(s, (int, np.integer)):
            index.append([s])
            keep.append(False)
        elif isinstance(s, slice):
            index.append(np.arange(n)[s])
            keep.append(True)
        else:
            a = np.asarray(s)
            index.append(np.nonzero(a)[0] if a.dtype == bool else a)
            keep.append(True)
    out = data[np.ix_(*index)]
    return out.reshape([m for m, k in zip(out.shape, keep) if k])


def numpy_vectorized(data, selection):
    selection = as_tuple(selection)
    return data[tuple(np.asarray(s) for s in selection)]


def result(f):
    try:
        out = np.asarray(f())
    except Exception as e:  # noqa: BLE001 - any refusal is reported
        return {"error": f"{type(e).__name__}: {e}"}
    return {"shape": list(out.shape), "values": out.ravel().tolist()}


def main():
    store, cases_path = sys.argv[1], sys.argv[2]
    with open(cases_path) as f:
        cases = json.load(f)
    data = np.arange(np.prod(SHAPE), dtype="int32").reshape(SHAPE)
    arrays = {
        "plain": zarr.create_array(
            store, name="plain", shape=SHAPE, chunks=(4, 3, 5), dtype="int32"
        ),
        "sharded": zarr.create_array(
            store,
            name="sharded",
            shape=SHAPE,
            shards=(8, 6, 7),
            chunks=(4, 3, 7),
            dtype="int32",
        ),
    }
    for z in arrays.values():
        z[...] = data
    for case in cases:
        mode, text = case["mode"], case["text"]
        selection = parse(text)
        for name, z in arrays.items():
            if mode == "basic":
                zarr_result = result(lambda: z[selection])
                numpy_result = result(lambda: data[selection])
            elif mode == "orthogonal":
                zarr_result = result(lambda: z.oindex[selection])
                numpy_result = result(lambda: numpy_orthogonal(data, selection))
            elif mode == "vectorized":
                zarr_result = result(lambda: z.vindex[selection])
                numpy_result = result(lambda: numpy_vectorized(data, selection))
            else:
                zarr_result = result(lambda: z.blocks[selection])
                numpy_result = None
            print(json.dumps({"array": name, "zarr": zarr_result, "numpy": numpy_result}))


if __name__ == "__main__":
    main()
