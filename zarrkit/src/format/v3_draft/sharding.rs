//! The v3 drafts' sharding storage transformer ↔ the `sharding_indexed` codec.
//!
//! Spec: `draft-2022-companions/extensions/storage-transformers/sharding/v1.0.rst`
//! (editor's draft of 18 February 2022), as the May 2022 draft and
//! zarr-python 2.x's experimental v3 (`ZARR_V3_SHARDING=1`) use it.
//!
//! The transformer stores the chunks of `chunks_per_shard` neighbouring grid
//! positions under one key, the key of the shard's position in the coarser
//! grid ("Key & value transformation": chunk `c96/18` with
//! `chunks_per_shard` `[32, 2]` is in shard `c3/9`), as the chunks' bytes
//! followed by an index of a little-endian `u64` offset and length per chunk
//! in C order, `2^64 - 1` twice for a missing chunk ("Binary shard format").
//! That is byte for byte the final v3 `sharding_indexed` codec with the
//! index at the `end` and `index_codecs` `[bytes (little endian)]`, the inner
//! chunk shape being the draft's chunk shape and the inner codecs its
//! compressor chain. So a draft array with the transformer is read as an
//! array whose chunk grid is the shard grid and whose one codec is
//! `sharding_indexed`; reading part of a shard then reads its index and the
//! inner chunks needed only, as for final v3. Writing does the reverse, and
//! refuses a `sharding_indexed` codec the transformer cannot express (an
//! index checksum, the index at the start, nested sharding, a shard shape
//! that is not a multiple of the inner chunk shape).

use crate::codec::sharding::{IndexLocation, ShardingConfig};
use crate::format::v3::{extension_from_json, extension_to_json};
use crate::metadata::{ArrayMetadata, ChunkGrid, ExtensionObject, JsonMap, MetadataError};
use serde_json::Value;

/// The transformer's URI as the text names it ("Specification URI"),
/// written into 2022 draft documents.
pub const SPEC_URI: &str =
    "https://purl.org/zarr/spec/extensions/storage-transformers/sharding/1.0";

/// The URI zarr-python 2.18 writes (and the only one it reads), written into
/// its json-suffixed 2019 layout.
pub const ZARR_PYTHON_URI: &str = "https://purl.org/zarr/spec/storage_transformers/sharding/1.0";

/// Every spelling of the URI that is read: the specification URI, the one in
/// the text's configuration example (`storage_transformers` with an
/// underscore) and zarr-python's.
const URIS: &[&str] = &[
    SPEC_URI,
    "https://purl.org/zarr/spec/extensions/storage_transformers/sharding/1.0",
    ZARR_PYTHON_URI,
];

/// The name of the model codec the transformer maps onto.
const SHARDING: &str = "sharding_indexed";

/// Parses a draft `storage_transformers` list (absent or empty: none) for an
/// array of `ndim` dimensions, returning the sharding transformer's
/// `chunks_per_shard` when there is one.
///
/// # Errors
/// [`MetadataError::UnsupportedExtension`] naming the URI of any other
/// transformer (or of a second one); [`MetadataError::InvalidField`] naming
/// the member of a malformed one.
pub(crate) fn from_json(
    value: Option<&Value>,
    ndim: usize,
) -> Result<Option<Vec<u64>>, MetadataError> {
    let items = match value {
        None => return Ok(None),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(MetadataError::invalid(
                "storage_transformers",
                "an array of storage transformer objects",
                other,
            ));
        }
    };
    let mut chunks_per_shard = None;
    for (i, item) in items.iter().enumerate() {
        let field = |name: &str| format!("storage_transformers[{i}].{name}");
        let Value::Object(object) = item else {
            return Err(MetadataError::invalid(
                format!("storage_transformers[{i}]"),
                "a storage transformer object",
                item,
            ));
        };
        let uri = match object.get("extension") {
            Some(Value::String(uri)) => uri,
            Some(other) => return Err(MetadataError::invalid(field("extension"), "a URI", other)),
            None => {
                return Err(MetadataError::MissingField {
                    field: "storage_transformers[].extension",
                });
            }
        };
        if !URIS.contains(&uri.as_str()) || chunks_per_shard.is_some() {
            // 2022 draft, "storage_transformers": a stack of transformers;
            // zarrkit knows only sharding, once (sharding sharded keys
            // again would need a second grid).
            return Err(MetadataError::UnsupportedExtension {
                point: if chunks_per_shard.is_some() {
                    "second storage transformer"
                } else {
                    "storage transformer"
                },
                name: uri.clone(),
            });
        }
        if let Some((key, other)) = object
            .iter()
            .find(|(k, _)| !["extension", "type", "configuration"].contains(&k.as_str()))
        {
            return Err(MetadataError::invalid(
                field(key),
                "no member other than `extension`, `type` and `configuration`",
                other,
            ));
        }
        // Sharding v1.0, "Configuration": `indexed` is the only binary format.
        match object.get("type") {
            Some(Value::String(t)) if t == "indexed" => {}
            Some(other) => {
                return Err(MetadataError::invalid(
                    field("type"),
                    "`\"indexed\"`",
                    other,
                ));
            }
            None => {
                return Err(MetadataError::MissingField {
                    field: "storage_transformers[].type",
                });
            }
        }
        let configuration = match object.get("configuration") {
            Some(Value::Object(c)) => c,
            Some(other) => {
                return Err(MetadataError::invalid(
                    field("configuration"),
                    "an object",
                    other,
                ));
            }
            None => {
                return Err(MetadataError::MissingField {
                    field: "storage_transformers[].configuration",
                });
            }
        };
        if let Some((key, other)) = configuration
            .iter()
            .find(|(k, _)| k.as_str() != "chunks_per_shard")
        {
            return Err(MetadataError::invalid(
                field(&format!("configuration.{key}")),
                "no member other than `chunks_per_shard`",
                other,
            ));
        }
        let value = configuration
            .get("chunks_per_shard")
            .ok_or(MetadataError::MissingField {
                field: "storage_transformers[].configuration.chunks_per_shard",
            })?;
        let expected = format!("{ndim} positive integers, one per dimension of `shape`");
        let invalid = || {
            MetadataError::invalid(
                field("configuration.chunks_per_shard"),
                expected.clone(),
                value,
            )
        };
        let counts = value
            .as_array()
            .ok_or_else(invalid)?
            .iter()
            .map(|n| n.as_u64().filter(|&n| n > 0).ok_or_else(invalid))
            .collect::<Result<Vec<u64>, _>>()?;
        // "The length of the array must match the length of the array
        // metadata shape entry." zarr-python 2.18 turns `()` into `(1,)`,
        // which a 0-d array therefore may carry.
        let counts = match (ndim, counts.as_slice()) {
            (0, [] | [1]) => Vec::new(),
            (n, c) if c.len() == n => counts,
            _ => return Err(invalid()),
        };
        chunks_per_shard = Some(counts);
    }
    Ok(chunks_per_shard)
}

/// The storage transformer object of `chunks_per_shard` under `uri`.
pub(crate) fn to_json(uri: &str, chunks_per_shard: &[u64]) -> Value {
    serde_json::json!([{
        "extension": uri,
        "type": "indexed",
        "configuration": {"chunks_per_shard": chunks_per_shard},
    }])
}

/// The model array of a draft array whose chunks (`array.chunk_grid`,
/// `array.codecs`) are grouped `chunks_per_shard` to a shard: the grid
/// becomes the shard grid and the codecs one `sharding_indexed` codec around
/// the draft's chain.
///
/// # Errors
/// [`MetadataError::Inconsistent`] when a shard's shape overflows `u64`.
pub(crate) fn shard(
    mut array: ArrayMetadata,
    chunks_per_shard: &[u64],
) -> Result<ArrayMetadata, MetadataError> {
    let regular = array
        .chunk_grid
        .chunk_shape()
        .ok_or_else(|| {
            MetadataError::Inconsistent(
                "the sharding storage transformer needs a regular chunk grid".into(),
            )
        })?
        .to_vec();
    let inner: Vec<u64> = regular.iter().map(|n| n.get()).collect();
    let shard_shape = inner
        .iter()
        .zip(chunks_per_shard)
        .map(|(&n, &k)| n.checked_mul(k))
        .collect::<Option<Vec<u64>>>()
        .ok_or_else(|| {
            MetadataError::Inconsistent(format!(
                "a shard of {chunks_per_shard:?} chunks of shape {inner:?} is too large"
            ))
        })?;
    let mut index_bytes = JsonMap::new();
    index_bytes.insert("endian".into(), "little".into());
    let config = ShardingConfig {
        chunk_shape: regular,
        codecs: array.codecs.iter().map(extension_to_json).collect(),
        // Sharding v1.0, "Binary shard format": little-endian uint64 pairs
        // at the end of the shard, no checksum.
        index_codecs: vec![extension_to_json(&ExtensionObject::with_configuration(
            "bytes",
            index_bytes,
        ))],
        index_location: IndexLocation::End,
    };
    let configuration = match serde_json::to_value(&config) {
        Ok(Value::Object(c)) => c,
        _ => JsonMap::new(),
    };
    array.chunk_grid = ChunkGrid::regular(&shard_shape)?;
    array.codecs = vec![ExtensionObject::with_configuration(SHARDING, configuration)];
    Ok(array)
}

/// The reverse of [`shard`]: for an array whose only codec is
/// `sharding_indexed`, the array of its inner chunks (the grid of inner
/// chunks, the inner codecs) and `chunks_per_shard`. `Ok(None)` when the
/// array is not sharded.
///
/// # Errors
/// [`MetadataError::UnsupportedExtension`] naming what the transformer cannot
/// express: an index other than little-endian `bytes` (a `crc32c`
/// checksum), the index at the start, a shard shape that is not a multiple
/// of the inner chunk shape, or `sharding_indexed` beside other codecs.
pub(crate) fn unshard(
    array: &ArrayMetadata,
) -> Result<Option<(ArrayMetadata, Vec<u64>)>, MetadataError> {
    let Some(position) = array.codecs.iter().position(|c| c.name == SHARDING) else {
        return Ok(None);
    };
    let refuse = |what: &str| MetadataError::UnsupportedExtension {
        point: "codec in this format",
        name: format!("{SHARDING} ({what}; the draft sharding transformer cannot say it)"),
    };
    if array.codecs.len() != 1 || position != 0 {
        return Err(refuse("beside other codecs"));
    }
    let config: ShardingConfig =
        serde_json::from_value(Value::Object(array.codecs[0].configuration_or_empty()))
            .map_err(|_| refuse("with an invalid configuration"))?;
    if config.index_location != IndexLocation::End {
        return Err(refuse("with the index at the start"));
    }
    let index_is_plain_le_bytes = match config.index_codecs.as_slice() {
        [codec] => extension_from_json(codec, "index_codecs[0]").is_ok_and(|codec| {
            codec.name == "bytes"
                && codec
                    .configuration
                    .as_ref()
                    .and_then(|c| c.get("endian"))
                    .is_none_or(|e| e == "little")
        }),
        _ => false,
    };
    if !index_is_plain_le_bytes {
        return Err(refuse("with an index checksum or other index codecs"));
    }
    let shard_shape = array
        .chunk_grid
        .chunk_shape()
        .ok_or_else(|| refuse("on an irregular chunk grid"))?;
    if config.chunk_shape.len() != shard_shape.len() {
        return Err(refuse("with inner chunks of another dimensionality"));
    }
    let mut chunks_per_shard = Vec::new();
    for (shard, inner) in shard_shape.iter().zip(&config.chunk_shape) {
        if shard.get() % inner.get() != 0 {
            return Err(refuse(
                "with a shard shape that is not a multiple of the chunk shape",
            ));
        }
        chunks_per_shard.push(shard.get() / inner.get());
    }
    let codecs = config
        .codecs
        .iter()
        .enumerate()
        .map(|(i, c)| extension_from_json(c, &format!("codecs[0].configuration.codecs[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    if codecs.iter().any(|c| c.name == SHARDING) {
        return Err(refuse("nested"));
    }
    let mut inner = array.clone();
    inner.chunk_grid = ChunkGrid::Regular {
        chunk_shape: config.chunk_shape.clone(),
    };
    inner.codecs = codecs;
    Ok(Some((inner, chunks_per_shard)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::{ChunkKeyEncoding, DataType, FillValue};
    use serde_json::json;

    fn array() -> ArrayMetadata {
        let mut gzip = JsonMap::new();
        gzip.insert("level".into(), 1.into());
        let mut bytes = JsonMap::new();
        bytes.insert("endian".into(), "little".into());
        ArrayMetadata {
            shape: vec![7, 10],
            data_type: DataType::Int32,
            chunk_grid: ChunkGrid::regular(&[2, 2]).unwrap(),
            chunk_key_encoding: ChunkKeyEncoding::default(),
            fill_value: FillValue::zero(&DataType::Int32),
            codecs: vec![
                ExtensionObject::with_configuration("bytes", bytes),
                ExtensionObject::with_configuration("gzip", gzip),
            ],
            storage_transformers: Vec::new(),
            dimension_names: None,
            attributes: JsonMap::new(),
            extra_fields: JsonMap::new(),
        }
    }

    #[test]
    fn chunks_per_shard_multiply_the_grid_and_wrap_the_chain() {
        let sharded = shard(array(), &[2, 3]).unwrap();
        let shape: Vec<u64> = sharded
            .chunk_grid
            .chunk_shape()
            .unwrap()
            .iter()
            .map(|n| n.get())
            .collect();
        assert_eq!(shape, [4, 6]);
        assert_eq!(sharded.codecs.len(), 1);
        let config = Value::Object(sharded.codecs[0].configuration_or_empty());
        assert_eq!(config["chunk_shape"], json!([2, 2]));
        assert_eq!(config["index_location"], json!("end"));
        assert_eq!(
            config["index_codecs"],
            json!([{"name": "bytes", "configuration": {"endian": "little"}}])
        );
        assert_eq!(config["codecs"][1]["name"], json!("gzip"));
        let (inner, counts) = unshard(&sharded).unwrap().unwrap();
        assert_eq!(counts, [2, 3]);
        assert_eq!(inner, array());
        assert!(unshard(&array()).unwrap().is_none());
    }

    #[test]
    fn transformer_lists_are_checked_member_by_member() {
        let ok = |v: Value| from_json(Some(&v), 2);
        assert_eq!(
            ok(json!([{"extension": ZARR_PYTHON_URI, "type": "indexed",
                       "configuration": {"chunks_per_shard": [2, 3]}}]))
            .unwrap(),
            Some(vec![2, 3])
        );
        assert_eq!(ok(json!([])).unwrap(), None);
        assert_eq!(from_json(None, 2).unwrap(), None);
        let cases = [
            (json!({}), "`storage_transformers`"),
            (
                json!([{"extension": "https://x.org/t", "type": "indexed"}]),
                "`https://x.org/t`",
            ),
            (
                json!([{"extension": SPEC_URI, "type": "hashed", "configuration": {"chunks_per_shard": [1, 1]}}]),
                "`storage_transformers[0].type`",
            ),
            (
                json!([{"extension": SPEC_URI, "type": "indexed"}]),
                "configuration",
            ),
            (
                json!([{"extension": SPEC_URI, "type": "indexed", "configuration": {"chunks_per_shard": [2]}}]),
                "chunks_per_shard",
            ),
            (
                json!([{"extension": SPEC_URI, "type": "indexed", "configuration": {"chunks_per_shard": [2, 0]}}]),
                "chunks_per_shard",
            ),
            (
                json!([{"extension": SPEC_URI, "type": "indexed", "configuration": {"chunks_per_shard": [2, 2], "x": 1}}]),
                "configuration.x",
            ),
            (
                json!([{"extension": SPEC_URI, "type": "indexed", "configuration": {"chunks_per_shard": [2, 2]}},
                    {"extension": SPEC_URI, "type": "indexed", "configuration": {"chunks_per_shard": [2, 2]}}]),
                "second storage transformer",
            ),
            (json!([5]), "`storage_transformers[0]`"),
        ];
        for (value, needle) in cases {
            let err = ok(value.clone()).unwrap_err();
            assert!(err.to_string().contains(needle), "{err} for {value}");
        }
    }

    #[test]
    fn sharding_the_transformer_cannot_say_is_refused_by_reason() {
        let sharded = shard(array(), &[2, 2]).unwrap();
        let with = |f: &dyn Fn(&mut JsonMap)| {
            let mut a = sharded.clone();
            let mut c = a.codecs[0].configuration_or_empty();
            f(&mut c);
            a.codecs[0] = ExtensionObject::with_configuration(SHARDING, c);
            unshard(&a).unwrap_err().to_string()
        };
        assert!(
            with(&|c| {
                c.insert("index_location".into(), "start".into());
            })
            .contains("start")
        );
        assert!(
            with(&|c| {
                c["index_codecs"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"name": "crc32c"}));
            })
            .contains("checksum")
        );
        assert!(
            with(&|c| {
                c.insert("chunk_shape".into(), json!([3, 2]));
            })
            .contains("multiple")
        );
        let mut beside = sharded.clone();
        beside.codecs.push(ExtensionObject::new("crc32c"));
        assert!(unshard(&beside).unwrap_err().to_string().contains("beside"));
    }
}
