"""Writes the zarr-python 2.x "experimental v3" fixtures (the json-suffixed
`meta/root` layout, zarrkit's `v3-draft-2019-json`) with the real writer.

Run from the repository root with zarr-python 2.18 (the last writer of this
layout; it needs numpy < 2):

    python3.11 -m venv /tmp/drafts-venv
    /tmp/drafts-venv/bin/pip install "zarr==2.18.*" numcodecs "numpy<2"
    ZARR_V3_EXPERIMENTAL_API=1 ZARR_V3_SHARDING=1 /tmp/drafts-venv/bin/python testdata/generate/v3_draft2019_json_fixtures.py

The store holds a group with attributes, an implicit group (`/nested`),
arrays in C and F order with gzip, blosc, zstd and no compressor, a
big-endian array, a complex array (zarr-python writes its complex-dtypes
extension object), a 0-d array, and arrays with chunks left unwritten (read
as the fill value).

A second store (`zarr-python-2.18-ext.zarr`) holds what zarr-python 2.18
writes besides: arrays with its sharding storage transformer (shards with
inner chunks missing, shards missing, F order, the `.` separator, filters
inside shards), numcodecs `filters` (kept in `attributes.filters`),
`M8`/`m8` datetime types (its datetime extension object), fixed-length
strings and structured types (fields in one or in mixed byte orders), the
string data types extension object as `data_type` (set by hand, issue #9),
and its consolidated metadata (`meta/root/consolidated/.zmetadata`).

A third store (`zarr-python-2.18-objects.zarr`) holds `|O` arrays with
the object codecs `vlen-utf8`, `vlen-bytes`, `vlen-array` and `json2`.

Gzip stamps the time into each chunk: after running, restore the chunks
of arrays that already existed (`git checkout -- '*/data/*'`) so only new
arrays change.
"""

import json
import os
import shutil
import sys

import types

import numcodecs
import numpy as np

# zarr 2.18 decodes storage transformers by importing its test module, which
# needs pytest; the sharding transformer is all these fixtures use.
_stub = types.ModuleType("zarr.tests.test_storage_v3")
_stub.DummyStorageTransfomer = type("DummyStorageTransfomer", (), {"extension_uri": None})
sys.modules["zarr.tests.test_storage_v3"] = _stub

import zarr  # noqa: E402
from zarr._storage.v3 import DirectoryStoreV3  # noqa: E402
from zarr._storage.v3_storage_transformers import ShardingStorageTransformer  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from draft_common import entry, pattern, update_manifest  # noqa: E402

ROOT = os.path.join("testdata", "fixtures", "v3-draft-2019-json")
STORE = os.path.join(ROOT, "zarr-python-2.18.zarr")
EXT_STORE = os.path.join(ROOT, "zarr-python-2.18-ext.zarr")
WRITER = "zarr-python " + zarr.__version__


def main():
    if os.environ.get("ZARR_V3_EXPERIMENTAL_API") != "1":
        sys.exit("set ZARR_V3_EXPERIMENTAL_API=1")
    shutil.rmtree(ROOT, ignore_errors=True)
    os.makedirs(ROOT)
    store = DirectoryStoreV3(STORE)
    root = zarr.group(store=store, path="", zarr_version=3)
    root.attrs["title"] = "zarr-python 2.x experimental v3"
    root.attrs["numbers"] = [1, 2, 3]
    entries = []

    def add(name, shape, chunks, dtype, compressor, order="C", fill_value=0, write=None, separator="/"):
        values = pattern(shape, dtype)
        arr = root.create_dataset(
            name, shape=shape, chunks=chunks, dtype=dtype, compressor=compressor,
            order=order, fill_value=fill_value, dimension_separator=separator,
        )
        if write is None:
            arr[...] = values
            expected = values
        else:
            # Write only part, so some chunks are missing and read as the fill value.
            expected = np.full(shape, fill_value, dtype=dtype)
            arr[write] = values[write]
            expected[write] = values[write]
        entries.append(entry(name.replace("/", "_"), "v3-draft-2019-json", STORE, "/" + name, expected, WRITER))

    add("int16_gzip", (7, 9), (3, 4), "<i2", numcodecs.GZip(level=5))
    add("uint16_blosc_bitshuffle", (33,), (10,), "<u2", numcodecs.Blosc(cname="lz4", clevel=5, shuffle=2))
    add("float32_zstd_f_order", (6, 5, 4), (4, 2, 3), "<f4", numcodecs.Zstd(level=3), order="F",
        fill_value=float("nan"), write=(slice(0, 4), slice(0, 2), slice(None)))
    add("float64_big_endian_raw", (5, 5), (2, 2), ">f8", None, fill_value=-1.5)
    add("complex64_gzip", (3, 4), (2, 2), "<c8", numcodecs.GZip(level=1))
    add("int64_scalar", (), (), "<i8", numcodecs.Blosc(cname="zstd", clevel=3, shuffle=1))
    add("bool_dot_separator", (11,), (4,), "|b1", numcodecs.Zstd(level=1), separator=".")
    add("nested/deeper/uint8_missing_chunks", (10, 10), (5, 5), "|u1", numcodecs.GZip(level=1),
        fill_value=7, write=(slice(0, 5), slice(5, 10)))
    group = root.create_group("sub")
    group.attrs["kind"] = "explicit group"
    entries.extend(extensions())
    objects()
    update_manifest(entries, [os.path.relpath(ROOT, "testdata")])


def extensions():
    """Sharding, filters, datetimes and consolidated metadata."""
    if os.environ.get("ZARR_V3_SHARDING") != "1":
        sys.exit("set ZARR_V3_SHARDING=1")
    store = DirectoryStoreV3(EXT_STORE)
    root = zarr.group(store=store, path="", zarr_version=3)
    root.attrs["title"] = "zarr-python 2.x experimental v3 extensions"
    entries = []
    entries_expected = {}

    def add(name, shape, chunks, dtype, compressor=None, filters=None, order="C", fill_value=0,
            shards=None, write=None, separator="/", values=None, lossy=False):
        if values is None:
            values = pattern(shape, dtype)
        transformers = [] if shards is None else [ShardingStorageTransformer("indexed", shards)]
        arr = root.create_dataset(
            name, shape=shape, chunks=chunks, dtype=dtype, compressor=compressor, filters=filters,
            order=order, fill_value=fill_value, dimension_separator=separator,
            storage_transformers=transformers,
        )
        if write is None:
            arr[...] = values
            expected = values
        else:
            expected = np.full(shape, fill_value, dtype=dtype)
            for region in write:
                arr[region] = values[region]
                expected[region] = values[region]
        got = arr[...]
        if lossy:
            # What zarr-python reads back is the reference.
            expected = got
        if expected.dtype.kind in "Mm":
            # NaT never equals itself; compare the counts.
            assert np.array_equal(got.view("i8"), expected.view("i8")), name
        else:
            assert np.array_equal(got, expected, equal_nan=expected.dtype.kind in "fc"), name
        entries.append(entry(name.replace("/", "_"), "v3-draft-2019-json", EXT_STORE, "/" + name,
                             expected, WRITER))
        entries_expected[name] = expected

    # Sharding: shards of 2x3 chunks; the first shard row complete, one
    # chunk of the second, the third shard row never written.
    add("sharded/int32_gzip", (9, 13), (2, 2), "<i4", numcodecs.GZip(level=1), fill_value=3,
        shards=(2, 3), write=[(slice(0, 4), slice(None)), (slice(4, 6), slice(0, 2))])
    add("sharded/float64_f_order_raw", (6, 5, 4), (2, 2, 2), "<f8", None, order="F",
        fill_value=float("nan"), shards=(2, 1, 2))
    add("sharded/uint16_blosc_dot", (33, 2), (4, 1), ">u2",
        numcodecs.Blosc(cname="zstd", clevel=3, shuffle=2), shards=(3, 2), separator=".")
    add("sharded/int64_delta_zstd", (20, 6), (5, 3), "<i8", numcodecs.Zstd(level=2),
        filters=[numcodecs.Delta(dtype="<i8")], shards=(2, 2))
    # A 0-d array: zarr-python gives it `chunks_per_shard` `[1]` and the key `c0`.
    add("sharded/int32_scalar", (), (), "<i4", None, fill_value=-1, shards=())
    # Filters.
    add("filters/int32_delta_zlib", (10, 7), (4, 3), "<i4", numcodecs.Zlib(level=3),
        filters=[numcodecs.Delta(dtype="<i4", astype="<i2")])
    add("filters/float64_fixedscaleoffset_bz2", (12,), (5,), "<f8", numcodecs.BZ2(level=1),
        filters=[numcodecs.FixedScaleOffset(offset=0, scale=2, dtype="<f8", astype="<i2")],
        values=np.arange(12, dtype="<f8") * 0.5 - 2)
    add("filters/float32_quantize_shuffle_lz4", (4, 9), (2, 4), "<f4", numcodecs.LZ4(),
        filters=[numcodecs.Quantize(digits=3, dtype="<f4"), numcodecs.Shuffle(elementsize=4)],
        lossy=True)
    # Datetimes (the datetime extension data type), NaT included.
    add("datetime/datetime64_ns", (5,), (2,), "<M8[ns]", numcodecs.GZip(level=1),
        values=np.array(["2020-01-01T00:00:01", "NaT", "1970-01-02", "1900-12-31", "2262-04-11"],
                        dtype="<M8[ns]"))
    add("datetime/timedelta64_s_big", (4, 2), (3, 2), ">m8[s]", None,
        fill_value=np.timedelta64(5, "s"), write=[(slice(0, 3), slice(None))],
        values=np.arange(8, dtype=">i8").astype(">m8[s]").reshape(4, 2) * 1000 - 3000)
    add("datetime/datetime64_days", (6,), (4,), "<M8[D]", numcodecs.Zstd(level=1),
        values=(np.arange(6, dtype="<i8") * 3653 - 7000).astype("<M8[D]"))
    # Fixed-length strings and structured types (zarr-python's placeholder
    # extension URIs), both byte orders, fill values as it encodes them.
    add("strings/bytes4_gzip", (7,), (3,), "|S4", numcodecs.GZip(level=1), fill_value=b"ab",
        write=[slice(0, 4)], values=np.array([b"x", b"yz", b"wxyz", b"", b"a", b"b", b"c"], dtype="|S4"))
    add("strings/unicode3_big_f", (3, 4), (2, 3), ">U3", None, order="F", fill_value="h\u00e9",
        write=[(slice(0, 2), slice(None))],
        values=np.array([["a", "bc", "d\u4e2d", ""], ["\u00e9\u00e9", "x", "yy", "zzz"],
                         ["1", "2", "3", "4"]], dtype=">U3"))
    record = np.dtype([("name", "<U3"), ("age", "<i2"), ("w", "<f4")])
    add("strings/structured_blosc", (5,), (2,), record,
        numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1), fill_value=None,
        values=np.array([("ab", 3, 1.5), ("c", -1, 0), ("", 7, 3),
                         ("xyz", 0, -1), ("q", 9, 9)], dtype=record))
    big_record = np.dtype([("id", ">u4"), ("tag", "|S2"), ("v", ">f8")])
    add("strings/structured_big", (4,), (3,), big_record, None,
        fill_value=np.array((1, b"xy", 2.0), dtype=big_record)[()], write=[slice(0, 2)],
        values=np.array([(5, b"a", 0.5), (6, b"bc", -2.0), (7, b"", 1e10), (8, b"zz", 0)],
                        dtype=big_record))
    # Issue #9: structured types whose fields differ in byte order, as
    # zarr-python 2.18 writes them (its structured placeholder URI, `type`
    # NumPy's descr with each field's own order).
    mixed = np.dtype([("x", "<i4"), ("y", ">f8")])
    add("mixed/structured_mixed_order_zlib", (5,), (2,), mixed, numcodecs.Zlib(level=1),
        fill_value=np.array((-1, 0.5), dtype=mixed)[()], write=[slice(0, 3)],
        values=np.array([(1, 1.5), (-2, 2.25), (3, -1e300), (4, 0), (5, 7)], dtype=mixed))
    nested = np.dtype([("id", ">u2"), ("p", [("a", "<f4"), ("b", ">i8")]), ("s", "<U2")])
    add("mixed/structured_nested_mixed_order_f", (2, 3), (2, 2), nested, None, order="F",
        fill_value=None,
        values=np.array([[(1, (0.5, -3), "ab"), (2, (1.5, 4), "c"), (3, (2.5, 5), "")],
                         [(4, (3.5, -6), "d"), (5, (4.5, 7), "ef"), (6, (5.5, 8), "g")]],
                        dtype=nested))
    # Issue #9: the string data types extension object
    # (seeds/v3-ext-string-dtypes-2022-03-02-draft.rst) as the `data_type`
    # of this layout. No writer produced it here (zarr-python 2.18 writes
    # its placeholders), so zarr-python 2.18 writes the arrays and the
    # document's `data_type` is replaced by the extension object with the
    # same `type`, from the text; zarr-python 2.18 reads the result (it
    # takes `type` and ignores the URI), and what it reads is the reference.
    string_uri = "http://purl.org/zarr/spec/extensions/string-dtypes/1.0"
    for name, dtype, fill, vals in [
        ("string_dtypes/unicode3_big", ">U3", "z", ["a", "bc", "d\u4e2d", "", "\u00e9\u00e9"]),
        ("string_dtypes/unicode5_little", "<U5", "", ["hello", "w", "\u00e9t\u00e9", "", "12345"]),
        ("string_dtypes/bytes7", "|S7", b"pad", [b"abc", b"", b"1234567", b"xy", b"q"]),
    ]:
        add(name, (5,), (2,), dtype, numcodecs.Zlib(level=1), fill_value=fill,
            write=[slice(0, 3)], values=np.array(vals, dtype=dtype))
        doc_path = os.path.join(EXT_STORE, "meta", "root", name + ".array.json")
        with open(doc_path) as f:
            doc = json.load(f)
        doc["data_type"] = {"extension": string_uri, "type": dtype, "fallback": None}
        with open(doc_path, "w") as f:
            json.dump(doc, f, indent=4, sort_keys=True, ensure_ascii=True)
        reread = zarr.open_array(store=store, path=name, mode="r", zarr_version=3)
        assert reread.dtype == np.dtype(dtype), name
        assert np.array_equal(reread[...], entries_expected[name]), name
    zarr.consolidate_metadata(store)
    return entries


OBJECTS_STORE = os.path.join(ROOT, "zarr-python-2.18-objects.zarr")


def objects():
    """Issue #9: `|O` arrays, which zarr-python 2.18 writes under its object
    placeholder URI with the object codec first in `attributes.filters`.
    Not in the manifest (the corpus digests fixed-size elements);
    zarrkit/tests/it/regressions.rs reads these values:

    - `vlen_utf8`: "a", "bc", "dé", "", "中文" (blosc);
    - `vlen_bytes`: b"x", b"", b"yz\x00" (zlib);
    - `vlen_array_int32`: [1, 2], [], [-3] (no compressor);
    - `json2`: 1, "x", [1, 2], {"k": None} (F order is not used).

    Every chunk is written (a missing chunk of an `|O` array reads as the
    integer 0 in zarr-python 2.18)."""
    store = DirectoryStoreV3(OBJECTS_STORE)
    root = zarr.group(store=store, path="", zarr_version=3)
    for name, codec, compressor, values in [
        ("vlen_utf8", numcodecs.VLenUTF8(), numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1),
         ["a", "bc", "d\u00e9", "", "\u4e2d\u6587"]),
        ("vlen_bytes", numcodecs.VLenBytes(), numcodecs.Zlib(level=1), [b"x", b"", b"yz\x00"]),
        ("vlen_array_int32", numcodecs.VLenArray("<i4"), None,
         [np.array([1, 2], dtype="<i4"), np.array([], dtype="<i4"), np.array([-3], dtype="<i4")]),
        ("json2", numcodecs.JSON(), None, [1, "x", [1, 2], {"k": None}]),
    ]:
        data = np.empty(len(values), dtype=object)
        data[:] = values
        arr = root.create_dataset(name, shape=(len(values),), chunks=(2,), dtype=object,
                                  object_codec=codec, compressor=compressor)
        arr[...] = data
        got = zarr.open_array(store, path=name, mode="r", zarr_version=3)[...]
        for a, b in zip(got, data):
            assert (np.array_equal(a, b) if isinstance(b, np.ndarray) else a == b), name


if __name__ == "__main__":
    main()
