//! Zarr v3 (3.0 and 3.1): `zarr.json` documents ↔ the internal model.
//! (Stub: replaced by the full implementation.)

use crate::metadata::{MetadataError, NodeMetadata};

/// The name of the metadata document in every node.
pub const METADATA_KEY: &str = "zarr.json";

/// Parses a `zarr.json` document.
///
/// # Errors
/// A [`MetadataError`] saying which field is wrong.
pub fn parse_node(bytes: &[u8]) -> Result<NodeMetadata, MetadataError> {
    let _ = bytes;
    todo!("format/v3 parse")
}

/// Serialises a node to canonical `zarr.json`.
#[must_use]
pub fn serialize_node(metadata: &NodeMetadata) -> Vec<u8> {
    let _ = metadata;
    todo!("format/v3 serialize")
}
