"""Writes the numcodecs filter and checksum vectors in
testdata/codecs/numcodecs/filters/.

For each case: <name>.in.bin (the input array's bytes, little-endian),
<name>.out.bin (numcodecs' encoding), <name>.back.bin (numcodecs' decoding
of that, little-endian), and an entry in manifest.json with the v3 codec
(zarr-python 3.1's `numcodecs.<id>` name and configuration), the input
dtype and shape, and the NumPy type of the encoding (`null` for byte codecs).
zarrkit/tests/it/codecs/numcodecs.rs encodes each input and decodes each output
and compares byte for byte.

Run from the repository root, in a venv with numcodecs and numpy:

    python testdata/generate/numcodecs_filter_vectors.py

Made with numcodecs 0.16.6 and numpy 2.4.6.
"""

import json
from pathlib import Path

import numcodecs
import numpy as np

OUT = Path(__file__).resolve().parent.parent / "codecs" / "numcodecs" / "filters"


def inputs():
    rng = np.random.default_rng(16)
    return {
        "i4": rng.integers(-(2**31), 2**31, size=40, dtype=np.int64).astype("<i4"),
        "i4_small": np.cumsum(rng.integers(-50, 50, size=40)).astype("<i4"),
        "u2": rng.integers(0, 2**16, size=33).astype("<u2"),
        "i8": rng.integers(-(2**62), 2**62, size=20).astype("<i8"),
        "f8": rng.normal(1000, 5, size=30),
        "f8_wide": rng.normal(0, 1e6, size=30) * np.where(np.arange(30) % 7 == 0, 1e-9, 1),
        "f4": rng.normal(0, 100, size=30).astype("<f4"),
        "f2": rng.normal(0, 10, size=30).astype("<f2"),
        "b1": rng.integers(0, 2, size=29).astype(bool),
        "u1": rng.integers(0, 256, size=37).astype("|u1"),
    }


def cases():
    d = inputs()
    return [
        ("delta_i4", d["i4"], numcodecs.Delta(dtype="<i4")),
        ("delta_i4_to_i2", d["i4_small"], numcodecs.Delta(dtype="<i4", astype="<i2")),
        ("delta_u2_wraps", d["u2"], numcodecs.Delta(dtype="<u2")),
        ("delta_i8_to_be", d["i8"], numcodecs.Delta(dtype="<i8", astype=">i8")),
        ("delta_f8", d["f8"], numcodecs.Delta(dtype="<f8")),
        ("delta_f4_to_f8", d["f4"], numcodecs.Delta(dtype="<f4", astype="<f8")),
        ("fso_f8_u1", d["f8"], numcodecs.FixedScaleOffset(offset=1000, scale=10, dtype="<f8", astype="|u1")),
        ("fso_f8_i2_float_offset", d["f8"], numcodecs.FixedScaleOffset(offset=997.25, scale=100, dtype="<f8", astype="<i2")),
        ("fso_f4_i4", d["f4"], numcodecs.FixedScaleOffset(offset=0, scale=1000, dtype="<f4", astype="<i4")),
        ("fso_i4_int", d["i4_small"], numcodecs.FixedScaleOffset(offset=-100, scale=3, dtype="<i4", astype="<i4")),
        ("fso_i4_float_scale", d["i4_small"], numcodecs.FixedScaleOffset(offset=5, scale=0.5, dtype="<i4", astype="<i2")),
        ("fso_f8_f4", d["f8"], numcodecs.FixedScaleOffset(offset=1000, scale=0.1, dtype="<f8", astype="<f4")),
        ("quantize_f8_d1", d["f8"], numcodecs.Quantize(digits=1, dtype="<f8")),
        ("quantize_f8_d5", d["f8_wide"], numcodecs.Quantize(digits=5, dtype="<f8")),
        ("quantize_f4_d2", d["f4"], numcodecs.Quantize(digits=2, dtype="<f4")),
        ("quantize_f8_to_f4", d["f8"], numcodecs.Quantize(digits=3, dtype="<f8", astype="<f4")),
        ("quantize_f2_d1", d["f2"], numcodecs.Quantize(digits=1, dtype="<f2")),
        ("bitround_f8_k0", d["f8_wide"], numcodecs.BitRound(keepbits=0)),
        ("bitround_f8_k9", d["f8_wide"], numcodecs.BitRound(keepbits=9)),
        ("bitround_f4_k5", d["f4"], numcodecs.BitRound(keepbits=5)),
        ("bitround_f4_k23", d["f4"], numcodecs.BitRound(keepbits=23)),
        ("bitround_f2_k3", d["f2"], numcodecs.BitRound(keepbits=3)),
        ("astype_f8_f4", d["f8_wide"], numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8")),
        ("astype_f8_i4", d["f8"], numcodecs.AsType(encode_dtype="<i4", decode_dtype="<f8")),
        ("astype_i4_u1", d["i4"], numcodecs.AsType(encode_dtype="|u1", decode_dtype="<i4")),
        ("astype_u2_f2", d["u2"], numcodecs.AsType(encode_dtype="<f2", decode_dtype="<u2")),
        ("packbits_29", d["b1"], numcodecs.PackBits()),
        ("packbits_24", d["b1"][:24], numcodecs.PackBits()),
        ("shuffle_4", d["i4"], numcodecs.Shuffle(elementsize=4)),
        ("shuffle_8", d["f8"], numcodecs.Shuffle(elementsize=8)),
        ("shuffle_2", d["u2"], numcodecs.Shuffle(elementsize=2)),
        ("crc32", d["u1"], numcodecs.CRC32()),
        ("crc32_end", d["f8"], numcodecs.CRC32(location="end")),
        ("adler32", d["u1"], numcodecs.Adler32()),
        ("adler32_end", d["i4"], numcodecs.Adler32(location="end")),
        ("fletcher32_odd", d["u1"], numcodecs.Fletcher32()),
        ("fletcher32_long", np.tile(d["f8"], 40), numcodecs.Fletcher32()),
        ("jenkins_lookup3", d["u1"], numcodecs.JenkinsLookup3()),
        ("jenkins_lookup3_seed", d["i4"], numcodecs.JenkinsLookup3(initval=12345)),
        ("jenkins_lookup3_12", d["u1"][:12], numcodecs.JenkinsLookup3()),
        ("jenkins_lookup3_24", d["u1"][:24], numcodecs.JenkinsLookup3(initval=1)),
    ]


BYTE_CODECS = {"shuffle", "crc32", "adler32", "fletcher32", "jenkins_lookup3"}


def le(a):
    a = np.asarray(a)
    return a.astype(a.dtype.newbyteorder("<")).tobytes()


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    manifest = []
    for name, data, codec in cases():
        config = codec.get_config()
        codec_id = config.pop("id")
        if codec_id == "jenkins_lookup3":
            config["prefix"] = None
        encoded = codec.encode(data)
        byte_codec = codec_id in BYTE_CODECS
        if byte_codec:
            out = bytes(np.asarray(encoded).view("u1")) if not isinstance(encoded, bytes) else encoded
            encoded_dtype = None
        else:
            encoded = np.asarray(encoded)
            out = encoded.tobytes()
            encoded_dtype = encoded.dtype.str
        back = np.asarray(codec.decode(out if byte_codec else encoded)).view(data.dtype).reshape(-1)
        (OUT / f"{name}.in.bin").write_bytes(le(data))
        (OUT / f"{name}.out.bin").write_bytes(out)
        (OUT / f"{name}.back.bin").write_bytes(le(back))
        manifest.append({
            "name": name,
            "codec": {"name": f"numcodecs.{codec_id}", "configuration": config},
            "dtype": data.dtype.str,
            "shape": [int(data.size)],
            "encoded_dtype": encoded_dtype,
        })
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{len(manifest)} vectors")


if __name__ == "__main__":
    main()
