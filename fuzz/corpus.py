#!/usr/bin/env python3
"""Builds the seed corpora under fuzz/corpus/<target>/ from the test
fixtures (testdata/). Run from anywhere: `python3 fuzz/corpus.py`.

Inputs holding several documents separate them with a 0xFF byte, as
fuzz/src/lib.rs reads them; a leading selector byte is written where a
target takes one. Seeds are named by their content's hash, so a rerun
adds nothing twice. Each target keeps at most MAX_SEEDS seeds, smallest
documents first, none over MAX_BYTES: the corpus stays small enough to
commit, and the fuzzer finds the rest.
"""

import hashlib
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "testdata"
CORPUS = ROOT / "fuzz" / "corpus"
MAX_SEEDS = 60
MAX_BYTES = 4096
SEP = b"\xff"


def files(pattern):
    return sorted(p for p in FIXTURES.rglob(pattern) if p.is_file() and p.stat().st_size <= MAX_BYTES)


def first_chunk(node_dir):
    """The smallest stored chunk beside a node's documents, or b''."""
    chunks = [p for p in node_dir.rglob("*") if p.is_file() and not p.name.startswith(".")
              and p.name not in ("zarr.json", "meta", "attrs") and p.stat().st_size <= MAX_BYTES]
    return min(chunks, key=lambda p: p.stat().st_size).read_bytes() if chunks else b""


def write(target, seeds):
    out = CORPUS / target
    out.mkdir(parents=True, exist_ok=True)
    unique = {hashlib.sha1(s).hexdigest()[:16]: s for s in seeds if len(s) <= MAX_BYTES}
    for name, seed in sorted(unique.items(), key=lambda kv: len(kv[1]))[:MAX_SEEDS]:
        (out / name).write_bytes(seed)


def main():
    v3 = [p for p in files("zarr.json") if b'"zarr_format": 3' in p.read_bytes() or b'"zarr_format":3' in p.read_bytes()]
    write("v3_metadata", [p.read_bytes() + SEP + first_chunk(p.parent) for p in v3] + [p.read_bytes() for p in v3])
    write("consolidated", [b"\x00" + p.read_bytes() for p in v3 if b"consolidated_metadata" in p.read_bytes()]
          + [b"\x01" + p.read_bytes() for p in files(".zmetadata")]
          + [b"\x00" + p.read_bytes() for p in v3 if b'"group"' in p.read_bytes()][:10])

    v2 = []
    for p in files(".zarray") + files(".zgroup"):
        attrs = p.parent / ".zattrs"
        v2.append(p.read_bytes() + SEP + (attrs.read_bytes() if attrs.exists() else b"{}")
                  + SEP + b"{}" + SEP + first_chunk(p.parent))
    write("v2_metadata", v2 + [p.read_bytes() for p in files(".zattrs")])

    v1 = []
    for p in files("meta"):
        attrs = p.parent / "attrs"
        v1.append(p.read_bytes() + SEP + (attrs.read_bytes() if attrs.exists() else b"{}") + SEP + first_chunk(p.parent))
    write("v1_metadata", v1)

    drafts = []
    for entry in files("zarr.json"):
        if b"zarr_format" in entry.read_bytes() and b'"zarr_format": 3' not in entry.read_bytes():
            for doc in (entry.parent / "meta").rglob("*"):
                if doc.is_file() and doc.stat().st_size <= MAX_BYTES:
                    name = doc.name
                    selector = (0 if name.endswith(".array.json") and "/meta/root" not in str(doc) else
                                1 if name.endswith(".group.json") and "/meta/root" not in str(doc) else
                                2 if name.endswith(".array") else 3 if name.endswith(".group") else
                                4 if name.endswith(".array.json") else 5)
                    drafts.append(bytes([selector]) + doc.read_bytes() + SEP + entry.read_bytes())
    write("v3_draft", drafts)

    # dtype strings: every `dtype` in the v1 and v2 documents, and some more.
    dtypes = {"<f8", "|b1", "<M8[ns]", ">m8[10s]", "|S12", "<U3", "|V7", "|O", "<c16", ">i2", "float64", "<u8"}
    for p in files(".zarray") + files("meta"):
        try:
            dtype = json.loads(p.read_text()).get("dtype")
        except (ValueError, UnicodeDecodeError):
            continue
        if dtype is not None:
            dtypes.add(dtype if isinstance(dtype, str) else json.dumps(dtype))
    write("numpy_dtype", [d.encode() for d in dtypes])

    write("chunk_key", [bytes([n]) + k.encode() for n, k in
                        [(0, "c"), (0, "0"), (1, "c/0"), (1, "7"), (2, "c/1/2"), (2, "1.2"), (2, "1/2"),
                         (3, "c.0.10.3"), (3, "0.10.3"), (2, "01.2"), (1, "c/18446744073709551615")]])

    write("selection", [bytes([m << 4 | a]) + s.encode() for m, a, s in
                        [(0, 0, "2:8:2"), (0, 1, "1, ::-1"), (0, 2, "..., 1"), (0, 1, "None, 3"),
                         (1, 1, "[0, 2], [1, 3]"), (1, 0, "[True, False, True]"), (2, 1, "[0, 1], [2, 3]"),
                         (3, 1, "0, 1:3"), (0, 0, "-1"), (0, 3, "()"), (0, 3, "...")]])

    # Codec and shard chunks: the first byte chooses the chain (see the
    # targets' tables); the stored chunk files of the fixtures are the data.
    chunks = [p.read_bytes() for p in FIXTURES.joinpath("codecs").rglob("*.bin") if p.stat().st_size <= MAX_BYTES]
    write("codec_decode", [bytes([i]) + c for i in range(40) for c in chunks[:1]] + [bytes([i % 40]) + c for i, c in enumerate(chunks)])
    shards = []
    for p in v3:
        if b"sharding_indexed" in p.read_bytes():
            chunk = first_chunk(p.parent)
            if chunk:
                shards += [bytes([i]) + chunk for i in range(4)]
    write("sharded_chunk", shards + [bytes([i]) for i in range(16)])

    write("roundtrip", [bytes(range(i, i + 64)) for i in range(0, 192, 16)])


if __name__ == "__main__":
    main()
