"""Writes the codec interop vectors in testdata/codecs/ with numcodecs.

Each vector is the encoding of known data by the numcodecs reference
implementation; zarrkit/tests/it/codecs/vectors.rs decodes them and compares with
the same data, computed there by the same formulas.

Run from the repository root, in a venv with numcodecs and numpy:

    python testdata/generate/codec_vectors.py

Made with numcodecs 0.16.6 and numpy 2.4.6.
"""

from pathlib import Path

import numcodecs
import numpy as np

OUT = Path(__file__).resolve().parent.parent / "codecs"


def uint16_ramp() -> bytes:
    """1000 little-endian uint16: (i * 7) % 1000."""
    return ((np.arange(1000, dtype="<u2") * 7) % 1000).astype("<u2").tobytes()


def float32_wave() -> bytes:
    """512 little-endian float32: i / 8 rounded down, as floats (steps of 1.0)."""
    return (np.arange(512, dtype="<u4") // 8).astype("<f4").tobytes()


def text() -> bytes:
    """A repeated ASCII sentence, 900 bytes."""
    return (b"zarrkit reads what numcodecs writes. " * 25)[:900]


VECTORS = {
    "blosc_lz4_shuffle_typesize2.bin": (
        numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE, typesize=2),
        uint16_ramp,
    ),
    "blosc_zstd_bitshuffle_typesize4.bin": (
        numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.BITSHUFFLE, typesize=4),
        float32_wave,
    ),
    "zstd_level3_checksum.bin": (numcodecs.Zstd(level=3, checksum=True), uint16_ramp),
    "gzip_level5.bin": (numcodecs.GZip(level=5), text),
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (codec, data) in VECTORS.items():
        raw = data()
        encoded = bytes(codec.encode(raw))
        assert bytes(codec.decode(encoded)) == raw, name
        assert len(encoded) < 4096, (name, len(encoded))
        (OUT / name).write_bytes(encoded)
        print(f"{name}: {len(raw)} -> {len(encoded)} bytes")


if __name__ == "__main__":
    main()
