"""Zarr v2 object arrays (`|O`) with the numcodecs object codecs
`vlen-array`, `json2` and `msgpack2`, and the `categorize` filter, between
zarr-python 2.18 and zarrkit (zarrkit/tests/it/data_types/objects.rs).

zarr-python 3.1 cannot make these arrays (it resolves `dtype=object` only
to its string and bytes types), so the arrays zarr-python writes are made
once with zarr-python 2.18 and committed under testdata/fixtures/v2/objects.zarr,
with expected.json beside them.

    python v2_objects_interop.py fixtures DIR  # write DIR/objects.zarr and DIR/expected.json
    python v2_objects_interop.py read DIR      # read DIR/objects.zarr (written by zarrkit)
                                               # and compare with DIR/expected.json

`read` also runs under zarr-python 3.1, which reads only the `<U` array
with `categorize`; it prints "not checked NAME" for each of the others.

zarr-python 2.18 writes an F-order chunk through `json2`/`msgpack2` in its
logical shape (`tolist()`) but reads it back as if the elements were in F
order, so it does not read its own 2-d F-order such arrays back: the
`json_2d_f` fixture is read by zarrkit only; zarrkit writes it as C order
(the same chunk bytes), which zarr-python 2.18 reads correctly.

expected.json maps each array's name to its `shape` and its `values` in C
order, as JSON: ragged arrays as lists of numbers, bytes as
{"$bin": base64} (zarrkit's JSON form of MessagePack bin), categorized
strings as strings. `read` prints "ok NAME" per array and fails on the
first difference.

Run in a venv with zarr 2.18.7, numcodecs 0.15.2, numpy 1.26.4 and
msgpack (scripts/requirements-zarr2.txt); the committed fixtures were made
with exactly those (msgpack 1.1.2).
"""

import base64
import json
import sys
from pathlib import Path

import numcodecs
import numpy as np
import zarr


def objects(items, shape):
    """An object array of `items` (never letting NumPy nest lists)."""
    a = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):
        a[i] = item
    return a.reshape(shape)


def to_json(value):
    """A Python value as expected.json holds it."""
    if isinstance(value, np.ndarray):
        return [to_json(v) for v in value.tolist()]
    if isinstance(value, bytes):
        return {"$bin": base64.b64encode(value).decode()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return value.item()
    return value


JSON_VALUES = ["a", 1, None, {"x": [1, 2.5], "b": "é"}, [1, "b", []], True, 1e20, "\U0001f600"]
MSGPACK_VALUES = [b"\x00\xff", "é", None, {"k": [1, -2]}, 1.5, 2**64 - 1, [], b""]


def arrays():
    """name -> (create kwargs, values as an array of the final shape)."""
    ragged_i4 = [np.array(v, "<i4") for v in ([1, 2, 3], [], [7], [-1, 2**31 - 1], [0])]
    ragged_f8 = [np.array(v, ">f8") for v in ([1.5, -2.0], [], [1e300])]
    grid = [
        "s",
        1,
        None,
        [2.0],
        {"k": 1},
        "z",
        True,
        -5,
        "é",
        [],
        {},
        0.25,
    ]
    return {
        "vlen_i4": (
            dict(object_codec=numcodecs.VLenArray("<i4"), chunks=(2,), compressor=None),
            objects(ragged_i4, (5,)),
        ),
        "vlen_f8_big_zlib": (
            dict(
                object_codec=numcodecs.VLenArray(">f8"),
                chunks=(2,),
                compressor=numcodecs.Zlib(level=1),
            ),
            objects(ragged_f8, (3,)),
        ),
        "json": (
            dict(object_codec=numcodecs.JSON(), chunks=(3,), compressor=None),
            objects(JSON_VALUES, (8,)),
        ),
        "json_2d_blosc": (
            dict(object_codec=numcodecs.JSON(), chunks=(2, 3)),
            objects(grid, (3, 4)),
        ),
        "json_2d_f": (
            dict(object_codec=numcodecs.JSON(), chunks=(2, 3), order="F", compressor=None),
            objects(grid, (3, 4)),
        ),
        "msgpack": (
            dict(object_codec=numcodecs.MsgPack(), chunks=(3,), compressor=None),
            objects(MSGPACK_VALUES, (8,)),
        ),
        "msgpack_2d_zlib": (
            dict(
                object_codec=numcodecs.MsgPack(),
                chunks=(2, 2),
                compressor=numcodecs.Zlib(level=1),
            ),
            objects(MSGPACK_VALUES, (2, 4)),
        ),
        "categorize": (
            dict(
                filters=[numcodecs.Categorize(["x", "yy", "é"], dtype=object)],
                chunks=(3,),
                compressor=None,
            ),
            objects(["x", "yy", "zzz", "é", "x", ""], (6,)),
        ),
        "categorize_u": (
            dict(
                dtype="<U3",
                filters=[numcodecs.Categorize(["x", "yy", "é"], dtype="<U3", astype="<u2")],
                chunks=(4,),
                compressor=None,
            ),
            np.array(["x", "yy", "zzz", "é", "x", ""], dtype="<U3"),
        ),
    }


def expected_values(name, values):
    flat = values.ravel(order="C")
    if name.startswith("categorize"):
        # Strings that are not labels read back as "".
        labels = {"x", "yy", "é"}
        return [str(v) if str(v) in labels else "" for v in flat]
    return [to_json(v) for v in flat]


def fixtures(out: Path) -> None:
    group = zarr.open_group(str(out / "objects.zarr"), mode="w")
    expected = {}
    for name, (kwargs, values) in arrays().items():
        kwargs = dict(kwargs)
        dtype = kwargs.pop("dtype", object)
        array = group.create_dataset(name, shape=values.shape, dtype=dtype, **kwargs)
        array[...] = values
        expected[name] = {
            "shape": list(values.shape),
            "values": expected_values(name, values),
        }
    (out / "expected.json").write_text(json.dumps(expected, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {len(expected)} arrays to {out / 'objects.zarr'}")


def read(directory: Path) -> None:
    expected = json.loads((directory / "expected.json").read_text())
    group = zarr.open_group(str(directory / "objects.zarr"), mode="r")
    zarr3 = zarr.__version__.startswith("3.")
    for name, want in expected.items():
        try:
            array = group[name]
            got = array[...]
        except ValueError as e:
            # zarr-python 3.1 resolves `|O` only to its string and bytes
            # types; say so by name rather than skip silently.
            if zarr3 and "No Zarr data type found" in str(e):
                print(f"not checked {name}: zarr-python {zarr.__version__} cannot read it ({e})")
                continue
            raise
        assert list(got.shape) == want["shape"], (name, got.shape, want["shape"])
        flat = got.ravel(order="C")
        if name.startswith("categorize"):
            values = [str(v) for v in flat]
        else:
            values = [to_json(v) for v in flat]
        for i, (g, w) in enumerate(zip(values, want["values"])):
            assert g == w, f"{name}[{i}]: zarr-python read {g!r}, zarrkit wrote {w!r}"
        assert len(values) == len(want["values"]), name
        print(f"ok {name} ({array.filters})")


def main() -> None:
    mode, directory = sys.argv[1], Path(sys.argv[2])
    if mode == "fixtures":
        fixtures(directory)
    elif mode == "read":
        read(directory)
    else:
        sys.exit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main()
