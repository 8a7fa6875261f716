"""Writes the fixtures of the v3 drafts that no implementation ever wrote,
by hand from the spec texts:

- testdata/fixtures/v3-draft-2022/: the core draft of 25 May 2022
  (seeds/v3-core-2022-05-25-draft.txt and draft-2022-companions/codecs/);
- testdata/fixtures/v3-draft-2019/: the core protocol draft of 19 June 2019
  (seeds/v3-core-protocol-2019-06-19-draft.rst);
- testdata/fixtures/v3-draft-2019a/: the early 2019 draft
  (seeds/v3-core-protocol-2019-early-draft.rst), stored like the June
  draft as the specs README says.

Run from the repository root with numpy and numcodecs (the interop venv of
scripts/requirements.txt has both):

    python testdata/generate/v3_draft_fixtures.py

Documents follow the examples of each text: "Storage keys" for where they
go, "Array metadata" for their fields. Chunks are the elements of each
(edge-padded) chunk in the array's byte order and memory layout, then each
codec of the document applied in order, using numcodecs.
"""

import gzip
import json
import os
import shutil
import sys

import numcodecs
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from draft_common import entry, pattern, update_manifest  # noqa: E402

class GZip:
    """gzip (RFC 1952) with a zero timestamp, so the fixtures are reproducible
    (numcodecs.GZip stamps the current time into each chunk)."""

    def __init__(self, level):
        self.level = level

    def encode(self, data):
        return gzip.compress(bytes(data), compresslevel=self.level, mtime=0)


WRITER = "hand-written from the spec text (testdata/generate/v3_draft_fixtures.py)"
entries = []


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else (json.dumps(data, indent=4) + "\n").encode())


def chunks(values, chunk_shape, fill):
    """Every chunk (edge-padded with `fill`) and its grid coordinates."""
    grid = [-(-n // c) for n, c in zip(values.shape, chunk_shape)]
    for coords in np.ndindex(*grid) if grid else [()]:
        block = np.full(chunk_shape, fill, dtype=values.dtype)
        src = tuple(slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(coords, chunk_shape, values.shape))
        block[tuple(slice(0, s.stop - s.start) for s in src)] = values[src]
        yield coords, block


def encode(block, dtype, order, codecs):
    data = np.asarray(block, dtype=dtype).tobytes(order=order)
    for codec in codecs:
        data = codec.encode(data)
    return bytes(data)


def array(store, fmt, node, doc_key, data_prefix, key_of, values, chunk_shape, dtype, order,
          codecs, fill, doc, missing=()):
    """Writes one array: its document and its chunks except those in `missing`.
    The expected values have the fill value where chunks are missing."""
    write(os.path.join(store, doc_key), doc)
    expected = values.copy()
    for coords, block in chunks(values, chunk_shape, fill):
        if coords in missing:
            region = tuple(slice(i * c, (i + 1) * c) for i, c in zip(coords, chunk_shape))
            expected[region] = fill
            continue
        write(os.path.join(store, data_prefix + key_of(coords)), encode(block, dtype, order, codecs))
    entries.append(entry(node.strip("/").replace("/", "_"), fmt, store, node, expected, WRITER))


def sharded_array(store, fmt, node, doc_key, data_prefix, key_of, values, chunk_shape, per_shard,
                  dtype, order, codecs, fill, doc, missing=(), reverse=False, gap=b""):
    """Writes one array with the sharding storage transformer
    (draft-2022-companions/extensions/storage-transformers/sharding/v1.0.rst):
    the chunks of each `per_shard` block of the chunk grid under the shard's
    key ("the chunk key divided by chunks_per_shard and floored"), one
    after another (`reverse`: last first; `gap`: unused bytes before each,
    which the text allows), then the index: a little-endian uint64 offset
    and length per chunk in C order, 2^64-1 twice for a missing one."""
    write(os.path.join(store, doc_key), doc)
    expected = values.copy()
    encoded = {}
    for coords, block in chunks(values, chunk_shape, fill):
        if coords in missing:
            region = tuple(slice(i * c, (i + 1) * c) for i, c in zip(coords, chunk_shape))
            expected[region] = fill
            continue
        encoded[coords] = encode(block, dtype, order, codecs)
    grid = [-(-n // c) for n, c in zip(values.shape, chunk_shape)]
    shard_grid = [-(-g // k) for g, k in zip(grid, per_shard)]
    empty = 2**64 - 1
    for shard in np.ndindex(*shard_grid):
        inner = [tuple(s * k + o for s, k, o in zip(shard, per_shard, offset))
                 for offset in np.ndindex(*per_shard)]
        index = np.full((len(inner), 2), empty, dtype="<u8")
        body = b""
        for i in (reversed(range(len(inner))) if reverse else range(len(inner))):
            data = encoded.get(inner[i])
            if data is None:
                continue
            body += gap
            index[i] = (len(body), len(data))
            body += data
        if (index == empty).all():
            continue
        write(os.path.join(store, data_prefix + key_of(shard)), body + index.tobytes())
    entries.append(entry(node.strip("/").replace("/", "_"), fmt, store, node, expected, WRITER))


# --- 2022 draft -------------------------------------------------------------

def draft2022():
    store = os.path.join("testdata", "fixtures", "v3-draft-2022", "spec-text.zarr")
    # "Entry point metadata", second example: an extension that may be ignored.
    write(os.path.join(store, "zarr.json"), {
        "zarr_format": "https://purl.org/zarr/spec/core/3.0",
        "metadata_encoding": {"type": "json", "metadata_key_suffix": ".json"},
        "extensions": [{"extension": "http://example.org/zarr/extension/foo",
                        "must_understand": False, "configuration": {"foo": "bar"}}],
    })
    write(os.path.join(store, "meta/group.json"), {"attributes": {"spam": "ham", "eggs": 42}})
    write(os.path.join(store, "meta/sub.group.json"), {"attributes": {}})

    def key_of(separator):
        # "Regular grids": "c" then the indices joined by the separator; "c" for 0-d.
        return lambda coords: "c" + separator.join(map(str, coords))

    def doc(shape, dtype, chunk_shape, separator, order, codecs, fill):
        return {
            "shape": list(shape), "data_type": dtype,
            "chunk_grid": {"type": "regular", "chunk_shape": list(chunk_shape), "separator": separator},
            "chunk_memory_layout": order, "codecs": codecs, "fill_value": fill,
            "extensions": [], "attributes": {"description": "see testdata/generate/v3_draft_fixtures.py"},
        }

    gzip = lambda level: {"type": "https://purl.org/zarr/spec/codecs/gzip/1.0", "configuration": {"level": level}}
    values = pattern((7, 9), "<i4")
    array(store, "v3-draft-2022", "/int32_gzip", "meta/int32_gzip.array.json", "data/int32_gzip/",
          key_of("/"), values, (3, 4), "<i4", "C", [GZip(1)], 0,
          doc((7, 9), "int32", (3, 4), "/", "C", [gzip(1)], 0))
    values = pattern((6, 5, 4), ">f8")
    array(store, "v3-draft-2022", "/sub/float64_big_f_blosc", "meta/sub/float64_big_f_blosc.array.json",
          "data/sub/float64_big_f_blosc/", key_of("/"), values, (4, 2, 3), ">f8", "F",
          [numcodecs.Blosc("lz4", 1, shuffle=1)], np.nan,
          doc((6, 5, 4), "float64", (4, 2, 3), "/", "F", [
              {"type": "https://purl.org/zarr/spec/codecs/endian/1.0", "configuration": {"endian": "big"}},
              {"type": "https://purl.org/zarr/spec/codecs/blosc/1.0",
               "configuration": {"cname": "lz4", "clevel": 1, "shuffle": 1, "blocksize": 0}},
          ], "NaN"), missing={(1, 2, 1)})
    # An implicit group: nothing is stored for /implicit itself.
    values = pattern((10, 3), "<u2")
    array(store, "v3-draft-2022", "/implicit/uint16_hex_fill", "meta/implicit/uint16_hex_fill.array.json",
          "data/implicit/uint16_hex_fill/", key_of("."), values, (4, 3), "<u2", "C", [], 0xFFFF,
          doc((10, 3), "uint16", (4, 3), ".", "C", [], "0xffff"), missing={(1, 0)})
    values = pattern((5,), "<i1")
    array(store, "v3-draft-2022", "/int8_binary_fill", "meta/int8_binary_fill.array.json",
          "data/int8_binary_fill/", key_of("/"), values, (2,), "<i1", "C", [GZip(9)], -1,
          doc((5,), "int8", (2,), "/", "C", [gzip(9)], "0b11111111"), missing={(2,)})
    values = pattern((3, 2), "<c16")
    array(store, "v3-draft-2022", "/complex128_gzip", "meta/complex128_gzip.array.json",
          "data/complex128_gzip/", key_of("/"), values, (2, 2), "<c16", "C", [GZip(5)],
          complex(np.inf, -1.0),
          doc((3, 2), "complex128", (2, 2), "/", "C", [gzip(5)], ["+Infinity", -1.0]))
    values = pattern((), "|b1")
    array(store, "v3-draft-2022", "/bool_scalar", "meta/bool_scalar.array.json", "data/bool_scalar/",
          key_of("/"), values, (), "|b1", "C", [], False,
          doc((), "bool", (), "/", "C", [], False))
    values = pattern((4, 4), "<f4")
    array(store, "v3-draft-2022", "/float32_plus_infinity_fill", "meta/float32_plus_infinity_fill.array.json",
          "data/float32_plus_infinity_fill/", key_of("/"), values, (3, 3), "<f4", "C", [], np.inf,
          doc((4, 4), "float32", (3, 3), "/", "C", [], "+Infinity"), missing={(0, 1), (1, 1)})
    # Issue #9. "fill_value": a binary string (`0b`) for a float, with every
    # leading zero of the type's size, as the hexadecimal one (`0x`).
    values = pattern((5, 3), "<f2")
    array(store, "v3-draft-2022", "/float16_binary_fill", "meta/float16_binary_fill.array.json",
          "data/float16_binary_fill/", key_of("/"), values, (2, 2), "<f2", "C", [], np.float16(1.0),
          doc((5, 3), "float16", (2, 2), "/", "C", [], "0b0011110000000000"),
          missing={(1, 0), (2, 1)})
    # 0.1 exactly as the nearest float64, which decimal text may round.
    values = pattern((4,), ">f8")
    array(store, "v3-draft-2022", "/float64_big_binary_fill",
          "meta/float64_big_binary_fill.array.json",
          "data/float64_big_binary_fill/", key_of("/"), values, (3,), ">f8", "C", [], 0.1,
          doc((4,), "float64", (3,), "/", "C", [
              {"type": "https://purl.org/zarr/spec/codecs/endian/1.0", "configuration": {"endian": "big"}},
          ], "0b" + format(np.array(0.1, dtype=">f8").view(">u8")[()], "064b")), missing={(1,)})
    # A complex fill value as a real number (read as re + 0j, as NumPy does),
    # and as a pair whose parts are bit strings of the part's size.
    values = pattern((3, 4), "<c8")
    array(store, "v3-draft-2022", "/complex64_real_fill", "meta/complex64_real_fill.array.json",
          "data/complex64_real_fill/", key_of("/"), values, (2, 3), "<c8", "C", [GZip(1)],
          complex(-2.5, 0), doc((3, 4), "complex64", (2, 3), "/", "C", [gzip(1)], -2.5),
          missing={(1, 1)})
    values = pattern((4,), "<c16")
    array(store, "v3-draft-2022", "/complex128_bit_string_parts_fill",
          "meta/complex128_bit_string_parts_fill.array.json",
          "data/complex128_bit_string_parts_fill/", key_of("/"), values, (3,), "<c16", "C", [],
          complex(1.0, -2.0),
          doc((4,), "complex128", (3,), "/", "C", [],
              ["0b0011111111110000" + "0" * 48, "0xc000000000000000"]), missing={(1,)})

    # The sharding storage transformer ("Configuration" of its text): shards
    # of 2x3 chunks, one shard with a chunk missing, one with none (not stored).
    sharding = lambda per_shard: [{
        "extension": "https://purl.org/zarr/spec/extensions/storage-transformers/sharding/1.0",
        "type": "indexed", "configuration": {"chunks_per_shard": list(per_shard)}}]
    values = pattern((9, 13), "<i4")
    sharded_doc = doc((9, 13), "int32", (2, 2), "/", "C", [gzip(1)], 7)
    sharded_doc["storage_transformers"] = sharding((2, 3))
    sharded_array(store, "v3-draft-2022", "/sharded/int32_gzip", "meta/sharded/int32_gzip.array.json",
                  "data/sharded/int32_gzip/", key_of("/"), values, (2, 2), (2, 3), "<i4", "C",
                  [GZip(1)], 7, sharded_doc,
                  missing={(0, 1), (4, 0), (4, 1), (4, 2), (4, 3), (4, 4), (4, 5), (4, 6)})
    # Big endian, F order, the "." separator, chunks written last first with
    # unused bytes between them.
    values = pattern((10, 6), ">u2")
    sharded_doc = doc((10, 6), "uint16", (3, 2), ".", "F", [
        {"type": "https://purl.org/zarr/spec/codecs/endian/1.0", "configuration": {"endian": "big"}},
    ], "0x0102")
    sharded_doc["storage_transformers"] = sharding((2, 3))
    sharded_array(store, "v3-draft-2022", "/sharded/uint16_big_f_dot", "meta/sharded/uint16_big_f_dot.array.json",
                  "data/sharded/uint16_big_f_dot/", key_of("."), values, (3, 2), (2, 3), ">u2", "F",
                  [], 0x0102, sharded_doc, missing={(1, 1)}, reverse=True, gap=b"\xee" * 5)

    # A hierarchy whose root is an array: "meta/array.json", chunks "data/c…".
    root = os.path.join("testdata", "fixtures", "v3-draft-2022", "root-array.zarr")
    write(os.path.join(root, "zarr.json"), {
        "zarr_format": "https://purl.org/zarr/spec/core/3.0",
        "metadata_encoding": {"type": "json", "metadata_key_suffix": ".json"},
        "extensions": [],
    })
    values = pattern((4, 6), "<i8")
    array(root, "v3-draft-2022", "/", "meta/array.json", "data/", key_of("/"), values, (2, 4), "<i8",
          "C", [GZip(1)], 0, doc((4, 6), "int64", (2, 4), "/", "C", [gzip(1)], 0))
    entries[-1]["name"] = "draft2022_root_array"


def draft2022_extension_dtypes():
    """Extension data types (2022 draft, "data_type"): the string, datetime
    and struct extensions of draft-2022-companions/extensions/data-types and
    seeds/v3-ext-string-dtypes-2022-03-02-draft.rst, each with the fallback
    the draft recommends (a raw type of the element's size), and an unknown
    extension that only its fallback makes readable (not in the manifest:
    zarrkit reads it only when told to use fallbacks)."""
    store = os.path.join("testdata", "fixtures", "v3-draft-2022", "extension-dtypes.zarr")
    write(os.path.join(store, "zarr.json"), {
        "zarr_format": "https://purl.org/zarr/spec/core/3.0",
        "metadata_encoding": {"type": "json", "metadata_key_suffix": ".json"},
        "extensions": [],
    })
    gzip = {"type": "https://purl.org/zarr/spec/codecs/gzip/1.0", "configuration": {"level": 1}}

    def doc(shape, data_type, chunk_shape, codecs, fill, order="C"):
        return {
            "shape": list(shape), "data_type": data_type,
            "chunk_grid": {"type": "regular", "chunk_shape": list(chunk_shape), "separator": "/"},
            "chunk_memory_layout": order, "codecs": codecs, "fill_value": fill,
            "extensions": [], "attributes": {},
        }

    key_of = lambda coords: "c" + "/".join(map(str, coords))
    # `S12`: zero-padded bytes; the fill value as base64 (as v3 writes it).
    values = np.array([b"a", b"hello world!", b"", b"xyz", b"12345", b"\x00\x01"], dtype="S12")
    array(store, "v3-draft-2022", "/bytes12_gzip", "meta/bytes12_gzip.array.json", "data/bytes12_gzip/",
          key_of, values, (4,), "S12", "C", [GZip(1)], b"fill",
          doc((6,), {"extension": "https://purl.org/zarr/spec/extensions/data-types/string/1.0",
                     "type": "S12", "fallback": "r96"}, (4,), [gzip], "ZmlsbA=="), missing={(1,)})
    # `>U3`: big-endian UTF-32 (its byte order from `type`, and the endian
    # codec saying the same), F order, the URI of the 2 March 2022 text.
    values = np.array([["a", "\u00e9t\u00e9", "\u4e2d"], ["", "xyz", "q"]], dtype=">U3")
    array(store, "v3-draft-2022", "/unicode3_big_f", "meta/unicode3_big_f.array.json", "data/unicode3_big_f/",
          key_of, values, (1, 2), ">U3", "F", [], "-",
          doc((2, 3), {"extension": "http://purl.org/zarr/spec/extensions/string-dtypes/1.0",
                       "type": ">U3", "fallback": ["r96"]}, (1, 2),
              [{"type": "https://purl.org/zarr/spec/codecs/endian/1.0", "configuration": {"endian": "big"}}],
              "-", order="F"), missing={(1, 1)})
    # `<M8[s]` (the 2022 draft's own example), NaT included.
    values = np.array([0, 86400, -1, np.iinfo(np.int64).min, 1700000000], dtype="<i8").view("<M8[s]")
    array(store, "v3-draft-2022", "/datetime64_s", "meta/datetime64_s.array.json", "data/datetime64_s/",
          key_of, values, (2,), "<M8[s]", "C", [GZip(5)], np.datetime64(7, "s"),
          doc((5,), {"extension": "https://purl.org/zarr/spec/extensions/data-types/datetime/1.0",
                     "type": "<M8[s]", "fallback": "int64"}, (2,),
              [{"type": "https://purl.org/zarr/spec/codecs/gzip/1.0", "configuration": {"level": 5}}], 7),
          missing={(1,)})
    # A structure: NumPy's `descr`, little endian.
    record = np.dtype([("name", "<U2"), ("age", "<i2"), ("ok", "|b1")])
    values = np.array([("ab", 3, True), ("c", -7, False), ("", 300, True)], dtype=record)
    array(store, "v3-draft-2022", "/struct_gzip", "meta/struct_gzip.array.json", "data/struct_gzip/",
          key_of, values, (2,), record, "C", [GZip(1)], np.zeros((), dtype=record)[()],
          doc((3,), {"extension": "https://purl.org/zarr/spec/extensions/data-types/struct/1.0",
                     "type": [["name", "<U2"], ["age", "<i2"], ["ok", "|b1"]], "fallback": "r88"},
              (2,), [gzip], {"name": "", "age": 0, "ok": False}))
    # An extension zarrkit does not know, in a store of its own: readable
    # through its fallbacks (the first, `float8`, is unknown too; `int16` is
    # used).
    store = os.path.join("testdata", "fixtures", "v3-draft-2022", "fallback-dtype.zarr")
    write(os.path.join(store, "zarr.json"), {
        "zarr_format": "https://purl.org/zarr/spec/core/3.0",
        "metadata_encoding": {"type": "json", "metadata_key_suffix": ".json"},
        "extensions": [],
    })
    values = pattern((5,), "<i2")
    array(store, "v3-draft-2022", "/unknown_with_fallback", "meta/unknown_with_fallback.array.json",
          "data/unknown_with_fallback/", key_of, values, (3,), "<i2", "C", [], 0,
          doc((5,), {"extension": "https://example.org/zarr/data-types/angle/1.0", "type": "deg16",
                     "fallback": ["float8", "int16"]}, (3,), [], 0))
    entries.pop()


def june2019_extension_dtypes():
    """The June 2019 draft's extension data types: its own datetime example
    (with the `<i8` fallback) and the string data types extension."""
    store = os.path.join("testdata", "fixtures", "v3-draft-2019", "extension-dtypes.zarr")
    write(os.path.join(store, "zarr.json"), BOOTSTRAP_2019)
    key_of = lambda coords: ".".join(map(str, coords))

    def doc(shape, data_type, chunk_shape, fill):
        return {
            "shape": list(shape), "data_type": data_type,
            "chunk_grid": {"type": "regular", "chunk_shape": list(chunk_shape)},
            "chunk_memory_layout": "C",
            "compressor": {"codec": "https://purl.org/zarr/spec/codec/gzip/1.0", "configuration": {"level": 1}},
            "fill_value": fill, "extensions": [], "attributes": {},
        }

    values = np.array([0, 10**18, -(10**18), 5], dtype=">i8").view(">M8[ns]")
    array(store, "v3-draft-2019", "/datetime64_ns_big", "meta/root/datetime64_ns_big.array",
          "data/datetime64_ns_big/", key_of, values, (3,), ">M8[ns]", "C", [GZip(1)], np.datetime64(0, "ns"),
          doc((4,), {"extension": "http://purl.org/zarr/spec/protocol/extensions/datetime-dtypes/1.0",
                     "type": ">M8[ns]", "fallback": ">i8"}, (3,), 0))
    values = np.array([b"ab", b"", b"xyzw", b"q"], dtype="S4")
    array(store, "v3-draft-2019", "/bytes4", "meta/root/bytes4.array", "data/bytes4/", key_of, values,
          (2,), "S4", "C", [GZip(1)], b"",
          doc((4,), {"extension": "http://purl.org/zarr/spec/extensions/string-dtypes/1.0", "type": "S4"},
              (2,), None), missing={(1,)})
    values = np.array(["\u00e9", "ab", "", "\u4e2d\u6587"], dtype="<U2")
    array(store, "v3-draft-2019", "/unicode2", "meta/root/unicode2.array", "data/unicode2/", key_of, values,
          (3,), "<U2", "C", [GZip(1)], "z",
          doc((4,), {"extension": "http://purl.org/zarr/spec/extensions/string-dtypes/1.0", "type": "<U2"},
              (3,), "z"))


# --- June 2019 draft --------------------------------------------------------

BOOTSTRAP_2019 = {
    "zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0",
    "metadata_encoding": "application/json",
    "extensions": [],
}


def june2019():
    store = os.path.join("testdata", "fixtures", "v3-draft-2019", "spec-text.zarr")
    write(os.path.join(store, "zarr.json"), BOOTSTRAP_2019)
    write(os.path.join(store, "meta/root.group"), {"extensions": [], "attributes": {"spam": "ham", "eggs": 42}})

    def key_of(separator):
        # "Regular grids": the indices joined by the separator ("1.23.45").
        return lambda coords: separator.join(map(str, coords))

    values = pattern((10, 4), ">i4")
    # The "Array metadata" example: no separator (so "."), an unversioned codec URI.
    array(store, "v3-draft-2019", "/a/int32_big_gzip", "meta/root/a/int32_big_gzip.array", "data/a/int32_big_gzip/",
          key_of("."), values, (5, 2), ">i4", "C", [GZip(1)], 0, {
              "shape": [10, 4], "data_type": ">i4",
              "chunk_grid": {"type": "regular", "chunk_shape": [5, 2]},
              "chunk_memory_layout": "C",
              "compressor": {"codec": "http://purl.org/zarr/spec/codec/gzip", "configuration": {"level": 1}},
              "fill_value": 0, "extensions": [], "attributes": {"foo": 42, "bar": "apples", "baz": [1, 2, 3, 4]},
          })
    values = pattern((5, 6), "<f4")
    array(store, "v3-draft-2019", "/float32_f_blosc", "meta/root/float32_f_blosc.array", "data/float32_f_blosc/",
          key_of("/"), values, (2, 4), "<f4", "F", [numcodecs.Blosc("zstd", 3, shuffle=1)], 0.0, {
              "shape": [5, 6], "data_type": "<f4",
              "chunk_grid": {"type": "regular", "chunk_shape": [2, 4], "separator": "/"},
              "chunk_memory_layout": "F",
              "compressor": {"codec": "https://purl.org/zarr/spec/codec/blosc/1.0",
                             "configuration": {"cname": "zstd", "clevel": 3, "shuffle": -1, "blocksize": 0}},
              # "the fill value is undefined": zarrkit uses zero.
              "fill_value": None, "extensions": [], "attributes": {},
          }, missing={(2, 1)})
    values = pattern((9,), "|u1")
    array(store, "v3-draft-2019", "/uint8_raw", "meta/root/uint8_raw.array", "data/uint8_raw/",
          key_of("."), values, (4,), "|u1", "C", [], 255, {
              "shape": [9], "data_type": "u1",
              "chunk_grid": {"type": "regular", "chunk_shape": [4]},
              "chunk_memory_layout": "C", "compressor": None,
              "fill_value": 255, "extensions": [], "attributes": {},
          }, missing={(1,)})
    # Issue #9. The text leaves complex fill values open ("TODO what about
    # complex data types?"); as NumPy and zarr-python, a real number is
    # re + 0j.
    values = pattern((6,), "<c8")
    array(store, "v3-draft-2019", "/complex64_real_fill", "meta/root/complex64_real_fill.array",
          "data/complex64_real_fill/", key_of("."), values, (4,), "<c8", "C", [], complex(-0.25, 0), {
              "shape": [6], "data_type": "<c8",
              "chunk_grid": {"type": "regular", "chunk_shape": [4]},
              "chunk_memory_layout": "C", "compressor": None,
              "fill_value": -0.25, "extensions": [], "attributes": {},
          }, missing={(1,)})
    entries[-1]["name"] = "draft2019_complex64_real_fill"

    # "If the root node is an array, the metadata key is meta/root.array, and
    # the data keys are formed by concatenating data/ and the chunk identifier."
    root = os.path.join("testdata", "fixtures", "v3-draft-2019", "root-array.zarr")
    write(os.path.join(root, "zarr.json"), BOOTSTRAP_2019)
    values = pattern((4, 5), "<u8")
    array(root, "v3-draft-2019", "/", "meta/root.array", "data/", key_of("."), values, (3, 3), "<u8", "C",
          [numcodecs.Zstd(level=1)], 0, {
              "shape": [4, 5], "data_type": "<u8",
              "chunk_grid": {"type": "regular", "chunk_shape": [3, 3], "separator": "."},
              "chunk_memory_layout": "C",
              "compressor": {"codec": "https://purl.org/zarr/spec/codec/zstd/1.0", "configuration": {"level": 1}},
              "fill_value": 0, "extensions": [], "attributes": {},
          })
    entries[-1]["name"] = "draft2019_root_array"


# --- early 2019 draft -------------------------------------------------------

def early2019():
    store = os.path.join("testdata", "fixtures", "v3-draft-2019a", "spec-text.zarr")
    early = "http://purl.org/zarr/spec/protocol/core/3.0"
    # The June bootstrap with the early draft's own URI, as zarrkit writes it
    # (the early draft has no bootstrap document).
    write(os.path.join(store, "zarr.json"), dict(BOOTSTRAP_2019, zarr_format=early))
    write(os.path.join(store, "meta/root.group"), {"zarr_format": early, "extensions": [], "attributes": {"spam": "ham"}})
    key_of = lambda coords: ".".join(map(str, coords))
    values = pattern((6, 3), "<c8")
    array(store, "v3-draft-2019a", "/complex64_gzip", "meta/root/complex64_gzip.array", "data/complex64_gzip/",
          key_of, values, (4, 2), "<c8", "C", [GZip(1)], complex(0, np.nan), {
              "zarr_format": early, "shape": [6, 3], "data_type": "<c8",
              "chunk_grid": {"type": "regular", "chunk_shape": [4, 2]},
              "chunk_memory_layout": "C",
              "chunk_codecs": [{"codec": "http://purl.org/zarr/spec/codec/gzip", "level": 1}],
              "fill_value": [0.0, "NaN"], "extensions": [], "attributes": {},
          }, missing={(1, 1)})
    values = pattern((7, 5), ">i2")
    # Two codecs, applied in order when encoding.
    array(store, "v3-draft-2019a", "/g/int16_f_two_codecs", "meta/root/g/int16_f_two_codecs.array",
          "data/g/int16_f_two_codecs/", key_of, values, (3, 3), ">i2", "F",
          [numcodecs.Blosc("lz4", 5, shuffle=2), GZip(1)], -3, {
              "zarr_format": early, "shape": [7, 5], "data_type": ">i2",
              "chunk_grid": {"type": "regular", "chunk_shape": [3, 3], "separator": "."},
              "chunk_memory_layout": "F",
              "chunk_codecs": [
                  {"codec": "http://purl.org/zarr/spec/codec/blosc/1.0", "cname": "lz4", "clevel": 5, "shuffle": 2,
                   "blocksize": 0},
                  {"codec": "http://purl.org/zarr/spec/codec/gzip/1.0", "level": 1},
              ],
              "fill_value": -3, "extensions": [], "attributes": {"units": "m"},
          })
    values = pattern((8,), "<f2")
    array(store, "v3-draft-2019a", "/float16_no_codecs", "meta/root/float16_no_codecs.array",
          "data/float16_no_codecs/", key_of, values, (3,), "<f2", "C", [], -np.inf, {
              "zarr_format": early, "shape": [8], "data_type": "<f2",
              "chunk_grid": {"type": "regular", "chunk_shape": [3]},
              "chunk_memory_layout": "C", "chunk_codecs": [],
              "fill_value": "-Infinity", "extensions": [], "attributes": {},
          }, missing={(0,)})
    # Issue #9: a real number as a complex fill value (re + 0j, as NumPy).
    values = pattern((5,), ">c16")
    array(store, "v3-draft-2019a", "/complex128_big_real_fill", "meta/root/complex128_big_real_fill.array",
          "data/complex128_big_real_fill/", key_of, values, (2,), ">c16", "C", [], complex(np.nan, 0), {
              "zarr_format": early, "shape": [5], "data_type": ">c16",
              "chunk_grid": {"type": "regular", "chunk_shape": [2]},
              "chunk_memory_layout": "C", "chunk_codecs": [],
              "fill_value": "NaN", "extensions": [], "attributes": {},
          }, missing={(1,)})


def main():
    dirs = ["v3-draft-2022", "v3-draft-2019", "v3-draft-2019a"]
    for d in dirs:
        shutil.rmtree(os.path.join("testdata", "fixtures", d), ignore_errors=True)
    draft2022()
    draft2022_extension_dtypes()
    june2019()
    june2019_extension_dtypes()
    early2019()
    update_manifest(entries, ["fixtures/" + d + "/" for d in dirs])


if __name__ == "__main__":
    main()
