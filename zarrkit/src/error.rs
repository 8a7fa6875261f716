//! The top-level error type that users match on.

use crate::codec::CodecError;
use crate::grid::SelectionError;
use crate::metadata::{DataType, MetadataError};
use crate::metadata::{NodePath, NodePathError};
use crate::store::{StoreError, StoreKey};

/// What kind of node was found where another was expected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// An array.
    Array,
    /// A group.
    Group,
}

impl std::fmt::Display for NodeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Array => "an array",
            Self::Group => "a group",
        })
    }
}

/// Why the nodes given to [`create_hierarchy`](crate::create_hierarchy) do
/// not form a hierarchy.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HierarchyProblem {
    /// The path is given twice (perhaps spelled differently: `a`, `/a/`).
    Duplicate,
    /// The path is an array, and another node given lies below it.
    ArrayWithChildren {
        /// A node below the array.
        child: NodePath,
    },
    /// The node's format differs from the other nodes' (one batch writes
    /// one format, as zarr-python's `create_hierarchy` does).
    MixedFormats {
        /// The node's format (as `ZarrFormat::name`).
        format: &'static str,
        /// The format of the first node.
        first: &'static str,
    },
}

impl std::fmt::Display for HierarchyProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Duplicate => f.write_str("it is given more than once"),
            Self::ArrayWithChildren { child } => {
                write!(f, "it is an array, and `{child}` would lie below it")
            }
            Self::MixedFormats { format, first } => write!(
                f,
                "it is {format} while the other nodes are {first} (one batch writes one format)"
            ),
        }
    }
}

/// Errors from zarrkit. Every variant names the node path or store key.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A store operation failed (the store error names the key).
    #[error(transparent)]
    Store(#[from] StoreError),

    /// A node path is invalid (the error names the path).
    #[error(transparent)]
    NodePath(#[from] NodePathError),

    /// A metadata document is invalid.
    #[error("invalid metadata in `{key}`")]
    Metadata {
        /// The document's key.
        key: StoreKey,
        /// What is wrong.
        #[source]
        source: MetadataError,
    },

    /// Metadata given to a builder or update is invalid.
    #[error("invalid metadata for `{path}`")]
    InvalidMetadata {
        /// The node.
        path: NodePath,
        /// What is wrong.
        #[source]
        source: MetadataError,
    },

    /// An array's codec chain cannot be built.
    #[error("invalid codecs for array `{path}`")]
    Codecs {
        /// The array.
        path: NodePath,
        /// What is wrong.
        #[source]
        source: CodecError,
    },

    /// A stored chunk cannot be decoded.
    #[error("cannot decode chunk `{key}`")]
    Decode {
        /// The chunk's key.
        key: StoreKey,
        /// Why.
        #[source]
        source: CodecError,
    },

    /// A chunk cannot be encoded.
    #[error("cannot encode chunk `{key}`")]
    Encode {
        /// The chunk's key.
        key: StoreKey,
        /// Why.
        #[source]
        source: CodecError,
    },

    /// The store is the destination of a `zarrkit migrate` that has not
    /// finished (it was interrupted, or failed): its chunks may be missing,
    /// and would read as the fill value. See
    /// [`migrate::check_finished`](crate::migrate::check_finished).
    #[error(
        "the store is an unfinished migration (marked by `{key}`): run the same `zarrkit migrate SRC DST` again to resume it, or delete the store"
    )]
    UnfinishedMigration {
        /// The marker key.
        key: StoreKey,
    },

    /// Nothing is stored at the path.
    #[error("no array or group at `{path}`")]
    NodeNotFound {
        /// The path.
        path: NodePath,
    },

    /// Something other than what was asked for is stored at the path.
    #[error("`{path}` is {found}, not {expected}")]
    WrongNodeKind {
        /// The path.
        path: NodePath,
        /// What was asked for.
        expected: NodeKind,
        /// What is there.
        found: NodeKind,
    },

    /// A node already exists where one is being created.
    #[error("`{path}` already exists ({found})")]
    NodeExists {
        /// The path.
        path: NodePath,
        /// What is there.
        found: NodeKind,
    },

    /// The nodes given to [`create_hierarchy`](crate::create_hierarchy) do
    /// not form a hierarchy; nothing was written.
    #[error("cannot create `{path}` in one hierarchy: {problem}")]
    InvalidHierarchy {
        /// The node at fault.
        path: NodePath,
        /// Why.
        problem: HierarchyProblem,
    },

    /// A region does not lie within the array.
    #[error("region {region} is out of bounds for array `{path}` of shape {shape:?}")]
    OutOfBounds {
        /// The array.
        path: NodePath,
        /// The region, as `[start..end, ...]`.
        region: String,
        /// The array's shape.
        shape: Vec<u64>,
    },

    /// A region has a different number of dimensions than the array.
    #[error("region has {region_ndim} dimensions but array `{path}` has {array_ndim}")]
    DimensionMismatch {
        /// The array.
        path: NodePath,
        /// The region's dimensions.
        region_ndim: usize,
        /// The array's dimensions.
        array_ndim: usize,
    },

    /// A buffer does not hold exactly the elements of the region.
    #[error("buffer for array `{path}` has {actual} bytes, the region needs {expected}")]
    BufferLength {
        /// The array.
        path: NodePath,
        /// Bytes the region needs.
        expected: u64,
        /// Bytes given.
        actual: u64,
    },

    /// The element type asked for does not match the array's data type.
    #[error(
        "array `{path}` has data type `{data_type}`, which cannot be read or written as `{requested}`"
    )]
    DataTypeMismatch {
        /// The array.
        path: NodePath,
        /// The array's data type.
        data_type: DataType,
        /// The Rust type asked for.
        requested: &'static str,
    },

    /// A region or array is too large to hold in memory.
    #[error("a region of shape {shape:?} of array `{path}` is too large to hold in memory")]
    TooLarge {
        /// The array.
        path: NodePath,
        /// The region's shape.
        shape: Vec<u64>,
    },

    /// An operation would hold more bytes in memory than the array's memory
    /// budget allows ([`Array::set_memory_budget`](crate::Array::set_memory_budget)).
    #[error(
        "{what} of array `{path}` needs {needed} bytes of memory, more than the budget of {budget} bytes"
    )]
    MemoryBudget {
        /// The array.
        path: NodePath,
        /// What needs the memory (such as ``a region of shape `[10, 10]` ``).
        what: String,
        /// Bytes the operation needs (at least).
        needed: u64,
        /// The budget.
        budget: u64,
    },

    /// A buffer within the memory budget could not be allocated.
    #[error("cannot allocate {bytes} bytes for {what} of array `{path}`")]
    OutOfMemory {
        /// The array.
        path: NodePath,
        /// What the buffer was for.
        what: String,
        /// The size asked for.
        bytes: u64,
    },

    /// A stored value is not valid for the data type (such as a `bool` that is neither 0 nor 1).
    #[error("array `{path}` holds an invalid `{data_type}` value: {reason}")]
    InvalidValue {
        /// The array.
        path: NodePath,
        /// The data type.
        data_type: DataType,
        /// What is wrong.
        reason: String,
    },

    /// Data given to a write cannot be stored in the array (such as a
    /// string longer than a fixed-length string type holds).
    #[error("cannot write to array `{path}`: {reason}")]
    InvalidInput {
        /// The array.
        path: NodePath,
        /// What is wrong, naming the element.
        reason: String,
    },

    /// A selection does not fit the array (an index out of bounds, a step
    /// of zero, a mask of the wrong shape, index arrays that do not
    /// broadcast, too many indices).
    #[error("invalid selection for array `{path}`")]
    Selection {
        /// The array.
        path: NodePath,
        /// What is wrong, naming the dimension and the bound.
        #[source]
        source: SelectionError,
    },

    /// Finding an array's stored chunks would ask its store for every
    /// position of the chunk grid (the store cannot list), and the grid
    /// has more positions than [`crate::array::MAX_PROBED_CHUNKS`].
    #[error(
        "cannot find the stored chunks of array `{path}`: its store cannot list them, and asking for each chunk of its {grid:?} grid is more than the limit of {limit} chunks"
    )]
    TooManyChunksToProbe {
        /// The array.
        path: NodePath,
        /// The number of chunks along each dimension (their product may
        /// exceed `u64`).
        grid: Vec<u64>,
        /// The limit.
        limit: u64,
    },
}
