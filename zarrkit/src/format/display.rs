//! What a node looks like in its own format, for display (the CLI's `info`
//! and `tree`): its documents, the fields a format spells differently from
//! the model, and its fill value as stored. The CLI asks these questions
//! here rather than deciding per format itself.

use super::{ZarrFormat, v2, v3, version};
use crate::metadata::{ArrayMetadata, MetadataError, NodeMetadata};
use serde_json::Value;

/// The node's metadata document in `format`: v2 and v1, which keep
/// attributes in a document of their own, give an object of each document
/// under its key (`.zarray` or `.zgroup` and `.zattrs`; `meta` and
/// `attrs`); the other formats give the node document (for the v3 drafts,
/// without the entry point).
///
/// # Errors
/// The [`MetadataError`] of writing the metadata in `format`, or
/// [`MetadataError::Json`] if the written document is not JSON.
pub fn node_document(format: ZarrFormat, metadata: &NodeMetadata) -> Result<Value, MetadataError> {
    version(format).node_document(metadata)
}

/// The array's v2 document (`.zarray`) when it is stored as v2, whose NumPy
/// type string, order, filters and compressor the model spells the v3 way;
/// `None` for other formats or a document that cannot be written.
#[must_use]
pub fn v2_array_document(format: ZarrFormat, array: &ArrayMetadata) -> Option<Value> {
    (format == ZarrFormat::V2)
        .then(|| v2::array_to_json(array).ok())
        .flatten()
}

/// The fields of the array's own document that the model (and its v3
/// codec list) spells differently, each as a label and its JSON text: v2's
/// `dtype`, `order`, `filters` and `compressor`; v1's `dtype`, `order` and
/// `compression` with `compression_opts`. Empty for the other formats.
#[must_use]
pub fn array_display_facts(format: ZarrFormat, array: &ArrayMetadata) -> Vec<(String, String)> {
    version(format).display_facts(array)
}

/// The fill value as the array's own document spells it. v3 JSON has no
/// spelling for v2's `|O` elements (the model holds their encoded bytes, so
/// `0` would show as `[48]`), so a variable-length type outside v3 gives
/// its document's `fill_value`; everything else the v3 spelling.
#[must_use]
pub fn fill_value_as_stored(format: ZarrFormat, array: &ArrayMetadata) -> Value {
    let v3_value = || v3::fill_value_to_json(&array.fill_value, &array.data_type);
    if !array.data_type.is_variable_length() || format.is_v3() {
        return v3_value();
    }
    let document = version(format).array_document(array);
    match document.as_ref().and_then(|d| d.get("fill_value")) {
        Some(fill) => fill.clone(),
        None => v3_value(),
    }
}

/// The node's Zarr v3 document (`zarr.json`), as [`node_document`] gives it
/// for v3: what a v3 reader would be handed.
///
/// # Errors
/// As [`node_document`].
pub fn v3_document(metadata: &NodeMetadata) -> Result<Value, MetadataError> {
    node_document(ZarrFormat::V3, metadata)
}
