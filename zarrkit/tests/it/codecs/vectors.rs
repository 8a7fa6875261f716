//! Codecs through the public API: decoding buffers numcodecs wrote, and
//! chains of real codecs.

use std::path::PathBuf;
use zarrkit::codec::blosc::{BloscCodec, BloscCompressor, BloscShuffle};
use zarrkit::codec::bytes::{BytesCodec, Endian};
use zarrkit::codec::crc32c::Crc32cCodec;
use zarrkit::codec::gzip::GzipCodec;
use zarrkit::codec::transpose::TransposeCodec;
use zarrkit::codec::zstd::ZstdCodec;
use zarrkit::codec::{
    BytesToBytesCodec, ChunkRepr, Codec, CodecChain, CodecError, codec_from_metadata,
};
use zarrkit::metadata::{DataType, ExtensionObject, FillValue, JsonMap};

/// The codec vectors, written by `testdata/generate/codec_vectors.py`.
fn vector(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/codecs")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// `uint16_ramp` in the script: (i * 7) % 1000 for i in 0..1000.
fn uint16_ramp() -> Vec<u16> {
    (0..1000u16).map(|i| (i * 7) % 1000).collect()
}

/// `float32_wave` in the script: floor(i / 8) for i in 0..512.
fn float32_wave() -> Vec<f32> {
    (0..512u16).map(|i| f32::from(i / 8)).collect()
}

/// `text` in the script.
fn text() -> Vec<u8> {
    b"zarrkit reads what numcodecs writes. ".repeat(25)[..900].to_vec()
}

fn le_bytes_u16(values: &[u16]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn repr(data_type: DataType, shape: &[u64]) -> ChunkRepr {
    ChunkRepr {
        shape: shape.to_vec(),
        fill_value: FillValue::zero(&data_type),
        data_type,
    }
}

fn extension(name: &str, configuration: &str) -> ExtensionObject {
    let configuration: JsonMap = serde_json::from_str(configuration).unwrap();
    ExtensionObject::with_configuration(name, configuration)
}

fn bytes_to_bytes(metadata: &ExtensionObject) -> std::sync::Arc<dyn BytesToBytesCodec> {
    match codec_from_metadata(metadata).unwrap() {
        Codec::BytesToBytes(codec) => codec,
        other => panic!("{} is not bytes-to-bytes", other.name()),
    }
}

#[test]
fn blosc_lz4_shuffle_from_numcodecs_decodes_through_a_chain() {
    let encoded = vector("blosc_lz4_shuffle_typesize2.bin");
    let r = repr(DataType::UInt16, &[1000]);
    let chain = CodecChain::from_metadata(
        &[
            extension("bytes", r#"{"endian": "little"}"#),
            extension(
                "blosc",
                r#"{"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}"#,
            ),
        ],
        &r,
    )
    .unwrap();
    let decoded = chain.decode(encoded, &r).unwrap();
    let values: Vec<u16> = decoded
        .as_fixed("test")
        .unwrap()
        .chunks_exact(2)
        .map(|c| u16::from_ne_bytes([c[0], c[1]]))
        .collect();
    assert_eq!(values, uint16_ramp());
}

#[test]
fn blosc_zstd_bitshuffle_from_numcodecs_decodes() {
    let codec = bytes_to_bytes(&extension(
        "blosc",
        r#"{"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "typesize": 4, "blocksize": 0}"#,
    ));
    let decoded = codec
        .decode(vector("blosc_zstd_bitshuffle_typesize4.bin"), Some(2048))
        .unwrap();
    let expected: Vec<u8> = float32_wave()
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(decoded, expected);
}

#[test]
fn zstd_with_checksum_from_numcodecs_decodes_and_detects_corruption() {
    let codec = ZstdCodec::new(3, true).unwrap();
    let encoded = vector("zstd_level3_checksum.bin");
    assert_eq!(
        codec.decode(encoded.clone(), Some(2000)).unwrap(),
        le_bytes_u16(&uint16_ramp())
    );
    // The last four bytes are the content checksum (RFC 8878).
    let mut corrupt = encoded;
    let last = corrupt.len() - 1;
    corrupt[last] ^= 1;
    assert!(codec.decode(corrupt, None).is_err());
}

#[test]
fn gzip_level_5_from_numcodecs_decodes() {
    let codec = bytes_to_bytes(&extension("gzip", r#"{"level": 5}"#));
    assert_eq!(
        codec.decode(vector("gzip_level5.bin"), None).unwrap(),
        text()
    );
}

#[test]
fn zarrkit_encodings_decode_to_the_same_data_as_the_vectors() {
    // Encoding differs between library versions, but decoding must agree.
    let data = le_bytes_u16(&uint16_ramp());
    let blosc =
        BloscCodec::new(BloscCompressor::Lz4, 5, BloscShuffle::Shuffle, Some(2), 0).unwrap();
    let zstd = ZstdCodec::new(3, true).unwrap();
    for codec in [&blosc as &dyn BytesToBytesCodec, &zstd] {
        let encoded = codec.encode(data.clone()).unwrap();
        assert_eq!(codec.decode(encoded, None).unwrap(), data);
    }
}

fn float32_chunk() -> (ChunkRepr, Vec<f32>) {
    let values: Vec<f32> = (0..60u8).map(|i| f32::from(i) * 0.5 - 3.0).collect();
    (repr(DataType::Float32, &[3, 4, 5]), values)
}

#[test]
fn transpose_bytes_gzip_crc32c_chain_applies_each_codec_in_order() {
    let (r, values) = float32_chunk();
    let chain = CodecChain::new(
        vec![
            Codec::ArrayToArray(std::sync::Arc::new(
                TransposeCodec::new(vec![2, 0, 1]).unwrap(),
            )),
            Codec::ArrayToBytes(std::sync::Arc::new(BytesCodec::new(Some(Endian::Big)))),
            Codec::BytesToBytes(std::sync::Arc::new(GzipCodec::new(6).unwrap())),
            Codec::BytesToBytes(std::sync::Arc::new(Crc32cCodec::new())),
        ],
        &r,
    )
    .unwrap();
    let decoded: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let encoded = chain.encode(decoded.clone(), &r).unwrap();

    // Peel the layers by hand: crc32c outermost, then gzip, then big-endian
    // elements of the transposed array, B[k][i][j] = A[i][j][k].
    let (body, checksum) = encoded.split_at(encoded.len() - 4);
    assert_eq!(checksum, crc32c::crc32c(body).to_le_bytes());
    let mut raw = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(body), &mut raw).unwrap();
    let mut expected = Vec::new();
    for k in 0..5 {
        for i in 0..3 {
            for j in 0..4 {
                expected.extend(values[i * 20 + j * 5 + k].to_be_bytes());
            }
        }
    }
    assert_eq!(raw, expected);

    assert_eq!(chain.decode(encoded.clone(), &r).unwrap(), decoded);
    let mut corrupt = encoded;
    corrupt[12] ^= 0x10;
    let err = chain.decode(corrupt, &r).unwrap_err();
    assert!(
        matches!(
            err,
            CodecError::ChecksumMismatch {
                codec: "crc32c",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn chain_metadata_round_trips_through_the_registry() {
    let (r, _) = float32_chunk();
    let codecs = [
        extension("transpose", r#"{"order": [1, 2, 0]}"#),
        extension("bytes", r#"{"endian": "little"}"#),
        extension(
            "blosc",
            r#"{"cname": "zstd", "clevel": 1, "shuffle": "bitshuffle", "typesize": 4, "blocksize": 0}"#,
        ),
        extension("zstd", r#"{"level": 0, "checksum": false}"#),
        extension("gzip", r#"{"level": 1}"#),
        ExtensionObject::new("crc32c"),
    ];
    let chain = CodecChain::from_metadata(&codecs, &r).unwrap();
    assert_eq!(chain.metadata(), codecs);
    let decoded: Vec<u8> = (0..240u8).collect();
    let encoded = chain.encode(decoded.clone(), &r).unwrap();
    assert_eq!(chain.decode(encoded, &r).unwrap(), decoded);
}

fn chain_error(codecs: &[ExtensionObject], r: &ChunkRepr) -> String {
    CodecChain::from_metadata(codecs, r)
        .unwrap_err()
        .to_string()
}

#[test]
fn two_array_to_bytes_codecs_are_rejected_at_the_second() {
    let (r, _) = float32_chunk();
    let bytes = extension("bytes", r#"{"endian": "little"}"#);
    let message = chain_error(&[bytes.clone(), bytes], &r);
    assert!(
        message.contains("codec `bytes` at position 1 is a second array-to-bytes codec"),
        "{message}"
    );
}

#[test]
fn bytes_to_bytes_before_array_to_bytes_is_rejected() {
    let (r, _) = float32_chunk();
    let message = chain_error(
        &[
            extension("gzip", r#"{"level": 1}"#),
            extension("bytes", r#"{"endian": "little"}"#),
        ],
        &r,
    );
    assert!(
        message.contains(
            "codec `gzip` at position 0 is bytes-to-bytes but comes before any array-to-bytes codec"
        ),
        "{message}"
    );
}

#[test]
fn array_to_array_after_array_to_bytes_is_rejected() {
    let (r, _) = float32_chunk();
    let message = chain_error(
        &[
            extension("bytes", r#"{"endian": "little"}"#),
            ExtensionObject::new("crc32c"),
            extension("transpose", r#"{"order": [2, 1, 0]}"#),
        ],
        &r,
    );
    assert!(
        message.contains(
            "codec `transpose` at position 2 is array-to-array but comes after the array-to-bytes codec"
        ),
        "{message}"
    );
}

#[test]
fn chain_without_array_to_bytes_is_rejected() {
    let (r, _) = float32_chunk();
    let message = chain_error(&[extension("transpose", r#"{"order": [2, 1, 0]}"#)], &r);
    assert!(
        message.contains(
            "codec `transpose` at position 0 ends a chain that has no array-to-bytes codec"
        ),
        "{message}"
    );
}

#[test]
fn transpose_order_for_other_dimensionality_is_rejected_with_its_position() {
    let (r, _) = float32_chunk();
    let message = chain_error(
        &[
            extension("transpose", r#"{"order": [1, 0]}"#),
            extension("bytes", r#"{"endian": "little"}"#),
        ],
        &r,
    );
    assert!(
        message.contains("codec `transpose` at position 0"),
        "{message}"
    );
    assert!(
        message.contains("3-dimensional chunk with `order` [1, 0]"),
        "{message}"
    );
}

#[test]
fn invalid_configurations_name_the_codec() {
    let cases = [
        extension("gzip", r#"{"level": 10}"#),
        extension(
            "blosc",
            r#"{"cname": "lzma", "clevel": 5, "shuffle": "shuffle", "typesize": 4}"#,
        ),
        extension(
            "blosc",
            r#"{"cname": "lz4", "clevel": 10, "shuffle": "shuffle", "typesize": 4}"#,
        ),
        extension("transpose", r#"{"order": [0, 0]}"#),
        extension("zstd", r#"{"level": 100}"#),
        extension("crc32c", r#"{"level": 1}"#),
    ];
    for metadata in cases {
        let err = codec_from_metadata(&metadata).unwrap_err();
        assert!(
            matches!(err, CodecError::InvalidConfiguration { .. }),
            "{err}"
        );
        let expected = format!("invalid configuration for codec `{}`", metadata.name);
        assert!(err.to_string().starts_with(&expected), "{err}");
    }
}

#[test]
fn every_v3_codec_is_registered() {
    let names = zarrkit::codec::registry::codec_names();
    for name in ["bytes", "transpose", "gzip", "zstd", "blosc", "crc32c"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
}
