"""Writes the numcodecs compressor vectors in testdata/codecs/numcodecs/.

Each vector is numcodecs' encoding of known data; zarrkit/tests/it/formats/v2.rs
decodes every one and compares with the same data, computed there by the
same formula, and checks which of zarrkit's encodings are byte-identical.

Run from the repository root, in a venv with numcodecs and numpy:

    python testdata/generate/numcodecs_vectors.py

Made with numcodecs 0.16.6 and numpy 2.4.6.
"""

import lzma
from pathlib import Path

import numcodecs

OUT = Path(__file__).resolve().parent.parent / "codecs" / "numcodecs"


def data() -> bytes:
    """2000 bytes: ((i % 97) * 3) ^ (i // 400): a 97-byte period that shifts every 400."""
    return bytes((((i % 97) * 3) % 256) ^ (i // 400) for i in range(2000))


VECTORS = {
    "zlib_level1.bin": numcodecs.Zlib(level=1),
    "zlib_level9.bin": numcodecs.Zlib(level=9),
    "bz2_level1.bin": numcodecs.BZ2(level=1),
    "bz2_level9.bin": numcodecs.BZ2(level=9),
    "lzma_xz_default.bin": numcodecs.LZMA(),
    "lzma_xz_preset1_sha256.bin": numcodecs.LZMA(preset=1, check=lzma.CHECK_SHA256),
    "lzma_alone_preset2.bin": numcodecs.LZMA(format=lzma.FORMAT_ALONE, preset=2),
    "lzma_raw_delta_lzma2.bin": numcodecs.LZMA(
        format=lzma.FORMAT_RAW,
        filters=[dict(id=lzma.FILTER_DELTA, dist=4), dict(id=lzma.FILTER_LZMA2, preset=1)],
    ),
    "lz4_acceleration1.bin": numcodecs.LZ4(acceleration=1),
    "lz4_acceleration10.bin": numcodecs.LZ4(acceleration=10),
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    raw = data()
    for name, codec in VECTORS.items():
        encoded = bytes(codec.encode(raw))
        assert bytes(codec.decode(encoded)) == raw, name
        assert len(encoded) < 4096, (name, len(encoded))
        (OUT / name).write_bytes(encoded)
        print(f"{name}: {len(raw)} -> {len(encoded)} bytes")


if __name__ == "__main__":
    main()
