//! Array and group metadata in the internal model.

use super::{ChunkKeyEncoding, DataType, ExtensionObject, FillValue, JsonMap, MetadataError};
use std::num::NonZeroU64;

/// The chunk grid of an array.
///
/// Spec: `final/v3/chunk-grids/regular-grid`, and the registered extension
/// `extensions/chunk-grids/rectilinear`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChunkGrid {
    /// `regular`: every chunk has `chunk_shape`; chunks at the upper edge
    /// extend past the array's shape.
    Regular {
        /// The shape of every chunk.
        chunk_shape: Vec<NonZeroU64>,
    },
    /// `rectilinear` (registered extension): along each dimension the chunks
    /// have their own edge lengths, so chunk shapes differ across the grid.
    Rectilinear {
        /// The edge lengths along each dimension (`chunk_shapes` in the document).
        chunk_shapes: Vec<ChunkEdgeLengths>,
    },
}

/// The chunk edge lengths along one dimension of a [`ChunkGrid::Rectilinear`] grid.
///
/// Spec: `extensions/chunk-grids/rectilinear`, "Chunk edge lengths". Explicit
/// lengths are held run-length encoded (as the document may give them), so a
/// document declaring `[1, 1000000000000]` (a trillion chunks of length 1)
/// costs a few bytes, not a trillion entries.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ChunkEdgeLengths {
    /// A single integer: the step of a regular grid along this dimension,
    /// repeated to cover the dimension whatever its length (so the dimension
    /// can grow like a `regular` grid's).
    Regular(NonZeroU64),
    /// Explicit edge lengths, as runs of equal lengths in order. Adjacent runs
    /// never share a length (the constructors merge them), so equal lists of
    /// edges compare equal however the document spelled them.
    Runs(Vec<EdgeRun>),
}

/// `count` consecutive chunks of edge length `length`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EdgeRun {
    /// The edge length of each chunk of the run.
    pub length: NonZeroU64,
    /// The number of chunks in the run.
    pub count: NonZeroU64,
}

impl ChunkEdgeLengths {
    /// Explicit edge lengths, one per chunk.
    ///
    /// # Errors
    /// [`MetadataError::Inconsistent`] if a length is zero.
    pub fn explicit(lengths: &[u64]) -> Result<Self, MetadataError> {
        let runs = lengths
            .iter()
            .map(|&n| {
                NonZeroU64::new(n)
                    .map(|length| EdgeRun {
                        length,
                        count: NonZeroU64::MIN,
                    })
                    .ok_or_else(|| {
                        MetadataError::Inconsistent(format!(
                            "chunk edge lengths `{lengths:?}` have a zero length"
                        ))
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Self::from_runs(runs)
    }

    /// Explicit edge lengths from runs, merging adjacent runs of one length.
    ///
    /// # Errors
    /// [`MetadataError::Inconsistent`] if the number of chunks overflows `u64`.
    pub fn from_runs(runs: impl IntoIterator<Item = EdgeRun>) -> Result<Self, MetadataError> {
        let mut merged: Vec<EdgeRun> = Vec::new();
        for run in runs {
            match merged.last_mut() {
                Some(last) if last.length == run.length => {
                    last.count = last.count.checked_add(run.count.get()).ok_or_else(|| {
                        MetadataError::Inconsistent(format!(
                            "the number of chunks of edge length `{}` overflows",
                            run.length
                        ))
                    })?;
                }
                _ => merged.push(run),
            }
        }
        Ok(Self::Runs(merged))
    }

    /// The sum of the explicit edge lengths (the extent the chunks cover),
    /// `None` for [`ChunkEdgeLengths::Regular`] (unbounded) or on overflow
    /// of `u64`.
    #[must_use]
    pub fn extent(&self) -> Option<u64> {
        match self {
            Self::Regular(_) => None,
            Self::Runs(runs) => runs.iter().try_fold(0u64, |acc, run| {
                acc.checked_add(run.length.get().checked_mul(run.count.get())?)
            }),
        }
    }
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

    /// A rectilinear grid with explicit edge lengths along each dimension.
    ///
    /// ```
    /// # use zarrkit::metadata::ChunkGrid;
    /// // Rows in chunks of 16 then 10, columns in chunks of 24 then 14.
    /// let grid = ChunkGrid::rectilinear(&[vec![16, 10], vec![24, 14]])?;
    /// assert_eq!(grid.ndim(), 2);
    /// # Ok::<(), zarrkit::metadata::MetadataError>(())
    /// ```
    ///
    /// # Errors
    /// [`MetadataError::Inconsistent`] if a length is zero.
    pub fn rectilinear(edge_lengths: &[Vec<u64>]) -> Result<Self, MetadataError> {
        let chunk_shapes = edge_lengths
            .iter()
            .map(|lengths| ChunkEdgeLengths::explicit(lengths))
            .collect::<Result<_, _>>()?;
        Ok(Self::Rectilinear { chunk_shapes })
    }

    /// The chunk shape of a regular grid, `None` for a rectilinear one.
    #[must_use]
    pub fn chunk_shape(&self) -> Option<&[NonZeroU64]> {
        match self {
            Self::Regular { chunk_shape } => Some(chunk_shape),
            Self::Rectilinear { .. } => None,
        }
    }

    /// The grid's name in v3 metadata (`regular`, `rectilinear`).
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::Regular { .. } => "regular",
            Self::Rectilinear { .. } => "rectilinear",
        }
    }

    /// The number of dimensions of the grid.
    #[must_use]
    pub fn ndim(&self) -> usize {
        match self {
            Self::Regular { chunk_shape } => chunk_shape.len(),
            Self::Rectilinear { chunk_shapes } => chunk_shapes.len(),
        }
    }

    /// Checks that the grid covers an array of `shape` (same number of
    /// dimensions, assumed checked by the caller).
    ///
    /// # Errors
    /// [`MetadataError::Inconsistent`] naming the dimension whose explicit
    /// edge lengths sum to less than its length, or overflow `u64`.
    pub fn check_covers(&self, shape: &[u64]) -> Result<(), MetadataError> {
        let Self::Rectilinear { chunk_shapes } = self else {
            return Ok(());
        };
        for (d, (edges, &len)) in chunk_shapes.iter().zip(shape).enumerate() {
            if matches!(edges, ChunkEdgeLengths::Regular(_)) {
                continue;
            }
            // rectilinear, "Chunk edge lengths": "The sum of the edge lengths
            // MUST equal or exceed L."
            match edges.extent() {
                None => {
                    return Err(MetadataError::Inconsistent(format!(
                        "the rectilinear chunk edge lengths of dimension {d} sum past 2^64"
                    )));
                }
                Some(extent) if extent < len => {
                    return Err(MetadataError::Inconsistent(format!(
                        "the rectilinear chunk edge lengths of dimension {d} sum to `{extent}`, \
                         less than its length `{len}`"
                    )));
                }
                Some(_) => {}
            }
        }
        Ok(())
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
    /// names and shape have the same number of dimensions, a rectilinear
    /// grid's explicit edge lengths cover the shape, and the fill value
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
        self.chunk_grid.check_covers(&self.shape)?;
        if let Some(names) = &self.dimension_names
            && names.len() != self.shape.len()
        {
            return Err(MetadataError::Inconsistent(format!(
                "`dimension_names` has {} entries but `shape` has {} dimensions",
                names.len(),
                self.shape.len()
            )));
        }
        check_data_type(&self.data_type)?;
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

/// Refuses a data type no format can write and read back: a
/// `fixed_length_utf32` whose `length_bytes` is not a positive multiple of 4
/// (its spec; NumPy's `<U<n>` counts code points), or raw bits that are
/// not a positive multiple of 8 (v3 core, `r<N>`), also inside a `struct`.
fn check_data_type(data_type: &DataType) -> Result<(), MetadataError> {
    match data_type {
        DataType::FixedUtf32(n) if *n == 0 || n % 4 != 0 => {
            Err(MetadataError::Inconsistent(format!(
                "`fixed_length_utf32` of {n} bytes: the length must be a positive multiple of 4"
            )))
        }
        DataType::RawBits(bits) if *bits == 0 || bits % 8 != 0 => Err(MetadataError::Inconsistent(
            format!("raw bits `r{bits}`: the width must be a positive multiple of 8"),
        )),
        DataType::Struct(fields) => fields
            .iter()
            .try_for_each(|f| check_data_type(&f.data_type)),
        DataType::VlenArray(inner) => check_data_type(inner),
        _ => Ok(()),
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
