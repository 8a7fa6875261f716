//! Every registered codec's decoder fed arbitrary bytes with a valid chunk
//! representation: the first byte chooses a chain (`CHAINS`, one or more per
//! codec), the rest is stored as its one chunk, which is read whole, in part
//! and element by element.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use zarrkit::Region;
use zarrkit::metadata::DataType;
use zarrkit_fuzz::{OneChunkArrays, codec};

/// The chunk (and array) shape of every chain.
const SHAPE: [u64; 2] = [8, 8];

fn chains() -> Vec<(DataType, Vec<(&'static str, Value)>)> {
    let le = || ("bytes", json!({"endian": "little"}));
    let be = || ("bytes", json!({"endian": "big"}));
    use DataType::*;
    vec![
        (UInt8, vec![("bytes", Value::Null)]),
        (UInt16, vec![be()]),
        (
            Complex64,
            vec![("transpose", json!({"order": [1, 0]})), le()],
        ),
        (Float32, vec![le(), ("gzip", json!({"level": 1}))]),
        (
            Float64,
            vec![le(), ("zstd", json!({"level": 3, "checksum": true}))],
        ),
        (
            UInt16,
            vec![
                le(),
                (
                    "blosc",
                    json!({"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}),
                ),
            ],
        ),
        (
            Int32,
            vec![
                le(),
                (
                    "blosc",
                    json!({"cname": "zstd", "clevel": 1, "shuffle": "bitshuffle", "typesize": 4, "blocksize": 0}),
                ),
            ],
        ),
        (Int32, vec![le(), ("crc32c", Value::Null)]),
        (UInt8, vec![le(), ("numcodecs.crc32c", Value::Null)]),
        (UInt8, vec![le(), ("numcodecs.zlib", json!({"level": 1}))]),
        (UInt8, vec![le(), ("numcodecs.bz2", json!({"level": 1}))]),
        (
            UInt8,
            vec![
                le(),
                (
                    "numcodecs.lzma",
                    json!({"format": 1, "check": -1, "preset": 1}),
                ),
            ],
        ),
        (
            UInt8,
            vec![le(), ("numcodecs.lz4", json!({"acceleration": 1}))],
        ),
        (
            Int32,
            vec![("numcodecs.delta", json!({"dtype": "<i4"})), le()],
        ),
        (
            Float64,
            vec![
                (
                    "numcodecs.fixedscaleoffset",
                    json!({"scale": 10, "offset": 1000, "dtype": "<f8", "astype": "<i4"}),
                ),
                le(),
            ],
        ),
        (
            Float64,
            vec![
                ("numcodecs.quantize", json!({"digits": 1, "dtype": "<f8"})),
                le(),
            ],
        ),
        (
            Float32,
            vec![("numcodecs.bitround", json!({"keepbits": 3})), le()],
        ),
        (
            Float64,
            vec![
                (
                    "numcodecs.astype",
                    json!({"encode_dtype": "<f4", "decode_dtype": "<f8"}),
                ),
                le(),
            ],
        ),
        (Bool, vec![("numcodecs.packbits", json!({})), le()]),
        (
            Float32,
            vec![le(), ("numcodecs.shuffle", json!({"elementsize": 4}))],
        ),
        (UInt8, vec![le(), ("numcodecs.crc32", json!({}))]),
        (UInt8, vec![le(), ("numcodecs.adler32", json!({}))]),
        (UInt8, vec![le(), ("numcodecs.fletcher32", json!({}))]),
        (
            UInt8,
            vec![
                le(),
                (
                    "numcodecs.jenkins_lookup3",
                    json!({"initval": 0, "prefix": null}),
                ),
            ],
        ),
        (Float32, vec![("bitround", json!({"keepbits": 2})), le()]),
        (Int32, vec![("scale_offset", json!({"offset": 1000})), le()]),
        (
            Float64,
            vec![("cast_value", json!({"data_type": "float32"})), le()],
        ),
        (
            Bool,
            vec![("packbits", json!({"padding_encoding": "first_byte"}))],
        ),
        (UInt16, vec![("reshape", json!({"shape": [[0, 1]]})), le()]),
        (
            Float32,
            vec![
                le(),
                (
                    "conditional",
                    json!({"header_bits": 16, "codecs": [{"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}}, {"name": "zstd", "configuration": {"level": 5, "checksum": false}}]}),
                ),
            ],
        ),
        (
            UInt16,
            vec![(
                "n5_default",
                json!({"codecs": [{"name": "transpose", "configuration": {"order": [1, 0]}}, {"name": "bytes", "configuration": {"endian": "big"}}, {"name": "gzip", "configuration": {"level": 5}}]}),
            )],
        ),
        (String, vec![("vlen-utf8", Value::Null)]),
        (
            Bytes,
            vec![
                ("vlen-bytes", Value::Null),
                ("zstd", json!({"level": 1, "checksum": false})),
            ],
        ),
        (
            VlenArray(Box::new(Int16)),
            vec![("vlen-array", json!({"dtype": ">i2"}))],
        ),
        (Object, vec![("json2", Value::Null)]),
        (Object, vec![("msgpack2", Value::Null)]),
        (
            FixedUtf32(8),
            vec![
                (
                    "numcodecs.categorize",
                    json!({"labels": ["x", "yy", "é"], "dtype": "<U2", "astype": "<u2"}),
                ),
                be(),
            ],
        ),
        (
            String,
            vec![
                (
                    "categorize",
                    json!({"labels": ["x", "yy", "é"], "dtype": "|O", "astype": "|u1"}),
                ),
                ("bytes", json!({})),
            ],
        ),
        (
            UInt16,
            vec![(
                "sharding_indexed",
                json!({"chunk_shape": [4, 4], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}], "index_location": "end"}),
            )],
        ),
    ]
}

fn arrays() -> &'static OneChunkArrays {
    static ARRAYS: OnceLock<OneChunkArrays> = OnceLock::new();
    ARRAYS.get_or_init(|| {
        let chains = chains()
            .into_iter()
            .map(|(data_type, codecs)| {
                let codecs = codecs.into_iter().map(|(n, c)| codec(n, c)).collect();
                (data_type, codecs)
            })
            .collect();
        OneChunkArrays::new(&SHAPE, chains)
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, chunk)) = data.split_first() else {
        return;
    };
    let array = arrays().with_chunk(selector, chunk);
    let whole = Region::whole(&SHAPE);
    let part = Region::new(vec![1, 2], vec![3, 5]);
    if array.data_type().is_variable_length() {
        let _ = array.read_vlen(&whole);
        let _ = array.read_vlen(&part);
    } else {
        let _ = array.read_region_bytes(&whole);
        let _ = array.read_region_bytes(&part);
        let _ = array.read_region_bytes(&Region::new(vec![7, 7], vec![1, 1]));
    }
    let _ = array.read_chunk_bytes(&[0, 0]);
});
