"""Writes the numcodecs object-codec vectors in testdata/codecs/<id>/.

Each vector is numcodecs' encoding of known objects (listed here, and
again in the unit tests of zarrkit/src/codec/<id>.rs, which decode every
vector and check that zarrkit's encoding is byte-identical):

- vlen-array/: `VLenArray` of ragged int32, big-endian float64 and complex64,
  and uint8 arrays;
- json2/: `JSON` (default configuration) of 1-d, 2-d and 0-d object arrays;
- msgpack2/: `MsgPack` (default configuration, and `use_single_float`,
  `use_bin_type=False`) of 1-d and 2-d object arrays;
- categorize/: `Categorize` of `<U3` and object strings to uint8/uint16 labels.

Run from the repository root, in a venv with numcodecs, numpy and msgpack:

    python testdata/generate/object_codec_vectors.py

Made with numcodecs 0.16.6, numpy 2.4.6 and msgpack 1.2.4.
"""

from pathlib import Path

import numcodecs
import numpy as np

OUT = Path(__file__).resolve().parent.parent / "codecs"


def objects(items, shape=None):
    """An object array of `items` (never letting NumPy nest lists)."""
    a = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):
        a[i] = item
    return a.reshape(shape) if shape is not None else a


def write(codec_dir: str, name: str, codec, data) -> None:
    encoded = bytes(codec.encode(data))
    decoded = codec.decode(encoded)
    assert decoded.shape == data.shape, (name, decoded.shape)
    for got, want in zip(decoded.ravel(), data.ravel()):
        if isinstance(want, np.ndarray):
            assert got.dtype == want.dtype and (got == want).all(), (name, got, want)
        else:
            assert got == want, (name, got, want)
    assert len(encoded) < 1024, (name, len(encoded))
    path = OUT / codec_dir / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(encoded)
    print(f"{codec_dir}/{name}: {len(encoded)} bytes")


def vlen_array() -> None:
    write(
        "vlen-array",
        "i4_le.bin",
        numcodecs.VLenArray("<i4"),
        objects([np.array([1, 2, 3], "<i4"), np.array([], "<i4"), np.array([7], "<i4")]),
    )
    write(
        "vlen-array",
        "f8_be.bin",
        numcodecs.VLenArray(">f8"),
        objects([np.array([1.5, -2.0], ">f8"), np.array([], ">f8"), np.array([1e300], ">f8")]),
    )
    write(
        "vlen-array",
        "c8_be.bin",
        numcodecs.VLenArray(">c8"),
        objects([np.array([1 + 2j], ">c8"), np.array([-0.5 + 0j], ">c8")]),
    )
    write(
        "vlen-array",
        "u1.bin",
        numcodecs.VLenArray("|u1"),
        objects([np.array([255, 0], "u1"), np.array([1, 2, 3, 4], "u1")]),
    )


# Objects every JSON reader holds exactly: strings with escapes and
# characters outside the BMP, nested lists and dicts (keys out of order),
# integers up to 2^63, and floats in both of Python's notations.
JSON_ITEMS = [
    "a",
    1,
    None,
    {"x": [1, 2.5], "b": "é", "a": {}},
    [1, "b", []],
    True,
    False,
    1e20,
    1.5e16,
    9999999999999998.0,
    1e-05,
    0.0001,
    0.1,
    -0.0,
    2.0,
    -(2**63),
    2**63 - 1,
    "\u2603 snow \U0001f600",
    'q"\\\n\t\x01\x7f/',
    "",
]


def json2() -> None:
    codec = numcodecs.JSON()
    write("json2", "1d.json", codec, objects(JSON_ITEMS))
    write("json2", "2d.json", codec, objects([1, "é", None, [2.0], {"k": 1}, "z"], (2, 3)))
    zero_d = np.empty((), dtype=object)
    zero_d[()] = {"only": [1, 2]}
    write("json2", "0d.json", codec, zero_d)


MSGPACK_ITEMS = [
    "a",
    1,
    None,
    {"x": [1, 2.5], "b": "é"},
    [1, "b", []],
    True,
    b"\x00\xff",
    b"",
    -3,
    -200,
    2**40,
    -(2**40),
    2**64 - 1,
    1.5,
    "é" * 40,
    list(range(20)),
    {f"k{i:02}": i for i in range(17)},
]


def msgpack2() -> None:
    write("msgpack2", "1d.msgpack", numcodecs.MsgPack(), objects(MSGPACK_ITEMS))
    write(
        "msgpack2",
        "2d.msgpack",
        numcodecs.MsgPack(),
        objects([1, "é", None, [2.0], {"k": 1}, "z"], (2, 3)),
    )
    # Floats as float32 and bytes as (raw) str, then read back as str.
    codec = numcodecs.MsgPack(use_single_float=True, use_bin_type=False)
    encoded = bytes(codec.encode(objects([0.5, b"ab", "c"])))
    assert list(codec.decode(encoded)) == [0.5, "ab", "c"]
    (OUT / "msgpack2" / "single_float_no_bin.msgpack").write_bytes(encoded)
    print(f"msgpack2/single_float_no_bin.msgpack: {len(encoded)} bytes")


def categorize() -> None:
    codec = numcodecs.Categorize(["foo", "bar", "baz"], dtype="<U3", astype="u1")
    data = np.array(["foo", "bar", "qux", "baz", "", "fo", "foo"], dtype="<U3")
    encoded = codec.encode(data)
    assert list(encoded) == [1, 2, 0, 3, 0, 0, 1]
    (OUT / "categorize" / "u3_u1.bin").write_bytes(encoded.tobytes())
    codec = numcodecs.Categorize(["α", "b", "α"], dtype=object, astype="<u2")
    data = np.array(["b", "α", "zz", "b", ""], dtype=object)
    encoded = codec.encode(data)
    # A repeated label takes its last position.
    assert list(encoded) == [2, 3, 0, 2, 0]
    (OUT / "categorize" / "object_u2.bin").write_bytes(encoded.astype("<u2").tobytes())
    print("categorize/u3_u1.bin, categorize/object_u2.bin")


def main() -> None:
    vlen_array()
    json2()
    msgpack2()
    categorize()


if __name__ == "__main__":
    main()
