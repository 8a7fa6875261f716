//! Array and group metadata in the internal model.

use super::{ChunkKeyEncoding, DataType, ExtensionObject, FillValue, JsonMap, MetadataError};
use std::num::NonZeroU64;

/// The chunk grid of an array.
///
/// Spec: `final/v3/chunk-grids/regular-grid`. Irregular grids (the
/// `rectilinear` extension) are added as further variants.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChunkGrid {
    /// `regular`: every chunk has `chunk_shape`; chunks at the upper edge
    /// extend past the array's shape.
    Regular {
        /// The shape of every chunk.
        chunk_shape: Vec<NonZeroU64>,
    },
}

impl ChunkGrid {
    /// A regular grid with `chunk_shape`.
    ///
    /// # Errors
    /// [`MetadataError::Inconsistent`] if a length is zero.
    pub fn regular(chunk_shape: &[u64]) -> Result<Self, MetadataError> {
        let chunk_shape = chunk_shape
            .iter()
            .map(|&n| {
                NonZeroU64::new(n).ok_or_else(|| {
                    MetadataError::Inconsistent(format!(
                        "chunk shape `{chunk_shape:?}` has a zero length"
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self::Regular { chunk_shape })
    }

    /// The chunk shape of a regular grid.
    #[must_use]
    pub fn chunk_shape(&self) -> &[NonZeroU64] {
        match self {
            Self::Regular { chunk_shape } => chunk_shape,
        }
    }

    /// The number of dimensions of the grid.
    #[must_use]
    pub fn ndim(&self) -> usize {
        self.chunk_shape().len()
    }
}

/// The metadata of an array, shaped on the v3 `zarr.json` document.
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayMetadata {
    /// The length of each dimension (empty for a 0-d array).
    pub shape: Vec<u64>,
    /// The element type.
    pub data_type: DataType,
    /// How the array is divided into chunks.
    pub chunk_grid: ChunkGrid,
    /// How chunk coordinates become keys.
    pub chunk_key_encoding: ChunkKeyEncoding,
    /// The value of elements never written.
    pub fill_value: FillValue,
    /// The codec chain, in order from the array to the stored bytes.
    pub codecs: Vec<ExtensionObject>,
    /// Storage transformers (none are defined for final v3).
    pub storage_transformers: Vec<ExtensionObject>,
    /// Names of the dimensions, `None` for an unnamed one.
    pub dimension_names: Option<Vec<Option<String>>>,
    /// User attributes.
    pub attributes: JsonMap,
    /// Fields this implementation does not interpret but may ignore
    /// (`"must_understand": false`), kept so a rewrite does not lose them.
    pub extra_fields: JsonMap,
}

impl ArrayMetadata {
    /// The number of dimensions.
    #[must_use]
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Checks that the fields agree with each other: the grid, dimension
    /// names and shape have the same number of dimensions, and the fill value
    /// is one element of the data type.
    ///
    /// # Errors
    /// [`MetadataError::Inconsistent`] saying which fields disagree.
    pub fn validate(&self) -> Result<(), MetadataError> {
        if self.chunk_grid.ndim() != self.shape.len() {
            return Err(MetadataError::Inconsistent(format!(
                "`chunk_grid` has {} dimensions but `shape` has {}",
                self.chunk_grid.ndim(),
                self.shape.len()
            )));
        }
        if let Some(names) = &self.dimension_names {
            if names.len() != self.shape.len() {
                return Err(MetadataError::Inconsistent(format!(
                    "`dimension_names` has {} entries but `shape` has {} dimensions",
                    names.len(),
                    self.shape.len()
                )));
            }
        }
        if self.fill_value.as_bytes().len() != self.data_type.size()
            && !self.data_type.is_variable_length()
        {
            return Err(MetadataError::Inconsistent(format!(
                "the fill value has {} bytes but `{}` elements have {}",
                self.fill_value.as_bytes().len(),
                self.data_type,
                self.data_type.size()
            )));
        }
        if self.codecs.is_empty() {
            return Err(MetadataError::Inconsistent(
                "`codecs` is empty: it must hold an array-to-bytes codec".to_string(),
            ));
        }
        Ok(())
    }
}

/// The metadata of a group.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroupMetadata {
    /// User attributes.
    pub attributes: JsonMap,
    /// Fields kept verbatim (see [`ArrayMetadata::extra_fields`]); this is
    /// where v3 `consolidated_metadata` lives until it is interpreted.
    pub extra_fields: JsonMap,
}

/// The metadata of either kind of node.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeMetadata {
    /// An array.
    Array(ArrayMetadata),
    /// A group.
    Group(GroupMetadata),
}
