//! The one internal model of arrays and groups, shaped on Zarr v3.
//!
//! Every format maps its documents onto these plain data types (in
//! [`crate::format`]) and back. The model is lossless for v3: fields an
//! implementation may ignore (`"must_understand": false`) are kept in
//! `extra_fields` and written back unchanged.

mod array;
mod chunk_key_encoding;
mod data_type;
mod extension;
mod fill_value;
pub mod json;
mod node_path;
pub mod numpy;
pub(crate) mod python_json;
mod small_float;
pub mod strings;

pub use array::{ArrayMetadata, ChunkEdgeLengths, ChunkGrid, EdgeRun, GroupMetadata, NodeMetadata};
pub use chunk_key_encoding::{ChunkKeyEncoding, Separator};
pub use data_type::{DataType, StructField, TimeUnit};
pub use extension::ExtensionObject;
pub use fill_value::FillValue;
pub use node_path::{NodePath, NodePathError};
pub use small_float::{SmallFloat, SmallInt, SmallTypeError};

/// A JSON object, as found in `attributes` and codec `configuration`s.
pub type JsonMap = serde_json::Map<String, serde_json::Value>;

/// Errors in a metadata document. The caller adds the key of the document.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MetadataError {
    /// The document is not valid JSON.
    #[error("invalid JSON")]
    Json(#[source] serde_json::Error),

    /// The document is not a JSON object.
    #[error("the document is not a JSON object")]
    NotAnObject,

    /// A required field is absent.
    #[error("missing required field `{field}`")]
    MissingField {
        /// The field's name.
        field: &'static str,
    },

    /// A field has the wrong JSON type or an impossible value.
    #[error("field `{field}` is invalid: expected {expected}, found `{found}`")]
    InvalidField {
        /// The field's name, as a JSON path such as `chunk_grid.configuration.chunk_shape`.
        field: String,
        /// What the field should hold.
        expected: String,
        /// The value found, as compact JSON (shortened when long).
        found: String,
    },

    /// The document is of another Zarr format than the one being read.
    #[error("unsupported `zarr_format` `{found}` (expected {expected})")]
    ZarrFormat {
        /// What was expected.
        expected: &'static str,
        /// The value found.
        found: String,
    },

    /// A field this implementation does not know, without `"must_understand": false`.
    ///
    /// v3 core, "Extensions" / `must_understand`: an implementation must
    /// fail to open a node with an unrecognised field that does not opt out.
    #[error("unknown field `{field}` (it does not say `\"must_understand\": false`)")]
    UnknownField {
        /// The field's name.
        field: String,
    },

    /// An extension (data type, chunk grid, chunk key encoding, codec, storage
    /// transformer) that this implementation does not support.
    #[error("unsupported {point} `{name}`")]
    UnsupportedExtension {
        /// The extension point, such as `data type` or `codec`.
        point: &'static str,
        /// The extension's name.
        name: String,
    },

    /// The fill value does not fit the data type.
    #[error("fill value `{found}` is invalid for data type `{data_type}`")]
    InvalidFillValue {
        /// The data type's name.
        data_type: String,
        /// The value found, as compact JSON.
        found: String,
    },

    /// A binary (`0b…`) or hexadecimal (`0x…`) fill value whose digits do
    /// not give exactly the bits of one element.
    #[error(
        "fill value `{found}` has {digits} {radix} digits, but data type `{data_type}` \
         needs exactly {expected} (every leading zero of its {size} bytes)"
    )]
    FillValueLength {
        /// The data type's name.
        data_type: String,
        /// The value found.
        found: String,
        /// `binary` or `hexadecimal`.
        radix: &'static str,
        /// The number of digits after the prefix.
        digits: usize,
        /// The number of digits the type needs.
        expected: usize,
        /// The type's size in bytes.
        size: usize,
    },

    /// The model holds something that the target format cannot express
    /// (such as a checksum codec in Zarr v2).
    #[error("Zarr {format} cannot represent {what}")]
    NotRepresentable {
        /// The format's short name, such as `v2`.
        format: &'static str,
        /// What cannot be written, naming the codec or field.
        what: String,
    },

    /// The fields are each valid but contradict one another.
    #[error("{0}")]
    Inconsistent(String),
}

impl MetadataError {
    /// An [`MetadataError::InvalidField`] for `field`, showing `found` as
    /// compact JSON shortened to 100 characters.
    pub fn invalid(
        field: impl Into<String>,
        expected: impl Into<String>,
        found: &serde_json::Value,
    ) -> Self {
        Self::InvalidField {
            field: field.into(),
            expected: expected.into(),
            found: json::compact(found),
        }
    }
}
