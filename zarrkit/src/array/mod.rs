//! Arrays: the `Array` handle, its builder, regions and planned reads and writes.
//!
//! - `plan.rs`: the array's plans: the pure planner of `grid/` (a region
//!   → per-chunk work) with each chunk's key and representation; the one
//!   walk over chunk coordinates, [`GridWalk`] (from `grid/` too), is
//!   shared by reads, writes, `resize`, listing, migration, sharding and
//!   the CLI's export;
//! - `io.rs`: the batched, parallel read and write engines over a plan;
//! - `select.rs`: reads and writes of [`Selection`]s (NumPy's indexing),
//!   grouped by chunk with the pure selection planner of `grid/`;
//! - `stored.rs`: the chunks in the store ([`Array::stored_chunks`]);
//! - `vlen.rs`, `vlen_array.rs`, `object.rs`: variable-length and object data.

mod builder;
#[allow(unsafe_code)]
mod disjoint;
mod element;
mod io;
pub(crate) use io::remote_pool;
mod object;
mod plan;
mod select;
mod stored;
mod verify;
mod vlen;
mod vlen_array;

pub use crate::grid::{
    GridWalk, Region, Selection, SelectionError, SelectionItem, SelectionMode, Slice,
};
pub use builder::ArrayBuilder;
pub use element::Element;
pub use stored::{MAX_PROBED_CHUNKS, StoredChunk, StoredSize};
pub use verify::VerifiedChunk;

use crate::codec::{ChunkRepr, Codec, CodecChain, CodecError};
use crate::error::{Error, NodeKind};
use crate::format::draft_dtypes::DraftReadOptions;
use crate::format::{self, ChunkLayout, ZarrFormat};
use crate::grid::axis::Axis;
use crate::metadata::{
    ArrayMetadata, ChunkEdgeLengths, ChunkGrid, DataType, FillValue, JsonMap, NodeMetadata,
};
use crate::node::NodePath;
use crate::store::{Store, StoreKey};
use std::borrow::Cow;
use std::sync::Arc;

/// An array in a store: its metadata, resolved codec chain and chunk layout.
///
/// Cloning is cheap; a clone shares the store.
#[derive(Clone, Debug)]
pub struct Array {
    store: Arc<dyn Store>,
    path: NodePath,
    format: ZarrFormat,
    metadata: ArrayMetadata,
    codecs: CodecChain,
    layout: ChunkLayout,
    /// The representation of chunk (0, …, 0): of every chunk when
    /// `uniform_chunks`.
    chunk_repr: ChunkRepr,
    /// Each dimension of the chunk grid, for index ↔ chunk lookups.
    axes: Vec<Axis>,
    /// Whether every chunk has the shape of `chunk_repr` (a `regular` grid,
    /// or a `rectilinear` one whose dimensions are each one integer), so the
    /// read and write paths need no per-chunk representation.
    uniform_chunks: bool,
    write_empty_chunks: bool,
    /// The most bytes one read may hold in memory for its output and plan.
    memory_budget: u64,
    /// The decoded bytes a read from a remote store keeps in flight.
    in_flight_bytes: usize,
}

/// The default of [`Array::in_flight_bytes`]: 256 MiB.
pub const DEFAULT_IN_FLIGHT_BYTES: usize = 256 << 20;

/// The default of [`Array::memory_budget`]: 8 GiB.
///
/// Sizes in metadata are untrusted: an edited `shape` asks for petabytes.
/// A read checks what it is about to allocate against the budget and
/// returns [`Error::MemoryBudget`] rather than letting the allocator abort
/// the process.
pub const DEFAULT_MEMORY_BUDGET: u64 = 8 << 30;

impl Array {
    /// A builder for a new array of `shape` elements of `data_type` in
    /// chunks of `chunk_shape`, with `bytes` + `zstd` codecs and a zero fill
    /// value unless set otherwise.
    #[must_use]
    pub fn builder(shape: &[u64], data_type: DataType, chunk_shape: &[u64]) -> ArrayBuilder {
        ArrayBuilder::new(shape, data_type, chunk_shape)
    }

    /// Opens the array at `path` (`/` or empty for the root), finding its format.
    ///
    /// # Errors
    /// [`Error::NodeNotFound`] if nothing is there, [`Error::WrongNodeKind`]
    /// for a group, [`Error::Metadata`] for an invalid document, and
    /// [`Error::Codecs`] for an invalid codec chain.
    pub fn open(store: Arc<dyn Store>, path: &str) -> Result<Self, Error> {
        let path = NodePath::new(path)?;
        let found = format::read_node(store.as_ref(), &path)?;
        Self::from_found(store, path, found)
    }

    /// Opens the array at `path` of a v3 draft hierarchy (May 2022, June or
    /// early 2019, zarr-python 2.x's layout) with `options`: with
    /// [`DraftReadOptions::allowing_fallback`], an array whose data type
    /// extension zarrkit does not know opens with the first known `fallback`.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use zarrkit::store::{MemoryStore, Store, StoreKey};
    /// use zarrkit::{Array, format::draft_dtypes::DraftReadOptions};
    /// # let store = Arc::new(MemoryStore::new());
    /// # let put = |k: &str, v: &str| store.set(&StoreKey::new(k).unwrap(), v.as_bytes()).unwrap();
    /// # put("zarr.json", r#"{"zarr_format": "https://purl.org/zarr/spec/core/3.0",
    /// #     "metadata_encoding": {"type": "json"}, "extensions": []}"#);
    /// # put("meta/t.array.json", r#"{"shape": [2], "chunk_grid": {"type": "regular",
    /// #     "chunk_shape": [2], "separator": "/"}, "chunk_memory_layout": "C", "fill_value": 0,
    /// #     "data_type": {"extension": "https://example.org/dt/angle", "type": "deg16",
    /// #                   "fallback": ["float8", "int16"]}, "extensions": [], "attributes": {}}"#);
    /// let array = Array::open_draft(store.clone(), "/t", DraftReadOptions::allowing_fallback())?;
    /// assert_eq!(array.data_type(), &zarrkit::metadata::DataType::Int16);
    /// assert!(Array::open_draft(store, "/t", DraftReadOptions::default()).is_err());
    /// # Ok::<(), zarrkit::Error>(())
    /// ```
    ///
    ///
    /// # Errors
    /// [`Error::NodeNotFound`] when no draft has a node at `path`,
    /// [`Error::WrongNodeKind`] for a group, or the errors of reading the
    /// document and of [`Array::from_metadata`].
    pub fn open_draft(
        store: Arc<dyn Store>,
        path: &str,
        options: DraftReadOptions,
    ) -> Result<Self, Error> {
        let path = NodePath::new(path)?;
        let found = format::draft_dtypes::read_node(store.as_ref(), &path, options)?;
        Self::from_found(store, path, found)
    }

    /// The array of a node read at `path`: an error when there is none or
    /// it is a group.
    fn from_found(
        store: Arc<dyn Store>,
        path: NodePath,
        found: Option<(ZarrFormat, NodeMetadata)>,
    ) -> Result<Self, Error> {
        match found {
            None => Err(Error::NodeNotFound { path }),
            Some((_, NodeMetadata::Group(_))) => Err(Error::WrongNodeKind {
                path,
                expected: NodeKind::Array,
                found: NodeKind::Group,
            }),
            Some((format, NodeMetadata::Array(metadata))) => {
                Self::from_metadata(store, path, format, metadata)
            }
        }
    }

    /// An array handle from metadata already read (or about to be written).
    ///
    /// The codec chain is resolved and validated here, once, and the
    /// metadata's codecs are replaced by their canonical form, so a later
    /// rewrite of the document (resize, attributes) writes spec-canonical
    /// JSON ("read leniently, write canonically").
    ///
    /// # Errors
    /// [`Error::InvalidMetadata`] or [`Error::Codecs`].
    pub fn from_metadata(
        store: Arc<dyn Store>,
        path: NodePath,
        format: ZarrFormat,
        mut metadata: ArrayMetadata,
    ) -> Result<Self, Error> {
        metadata
            .validate()
            .map_err(|source| Error::InvalidMetadata {
                path: path.clone(),
                source,
            })?;
        let axes = Axis::of(&metadata.chunk_grid);
        let uniform_chunks = axes.iter().all(Axis::is_regular);
        let chunk_repr = ChunkRepr {
            shape: axes.iter().map(Axis::first_length).collect(),
            data_type: metadata.data_type.clone(),
            fill_value: metadata.fill_value.clone(),
        };
        let codecs_error = |source| Error::Codecs {
            path: path.clone(),
            source,
        };
        let codecs =
            CodecChain::from_metadata(&metadata.codecs, &chunk_repr).map_err(codecs_error)?;
        // rectilinear: chunk shapes differ, so the chain must hold for every
        // one. Codecs constrain each dimension on its own (sharding's inner
        // chunk shape must divide the chunk's, per dimension), so checking
        // each distinct edge length of each dimension covers every chunk
        // without enumerating them.
        if let ChunkGrid::Rectilinear { chunk_shapes } = &metadata.chunk_grid {
            for (d, edges) in chunk_shapes.iter().enumerate() {
                let ChunkEdgeLengths::Runs(runs) = edges else {
                    continue;
                };
                let mut lengths: Vec<u64> = runs.iter().map(|r| r.length.get()).collect();
                lengths.sort_unstable();
                lengths.dedup();
                for length in lengths.into_iter().filter(|&n| n != chunk_repr.shape[d]) {
                    let mut repr = chunk_repr.clone();
                    repr.shape[d] = length;
                    CodecChain::from_metadata(&metadata.codecs, &repr).map_err(codecs_error)?;
                }
            }
        }
        metadata.codecs = codecs.metadata();
        let layout = format::chunk_layout(format, &path, &metadata.chunk_key_encoding);
        // A `null` fill value (v1, v2, the drafts: kept as an extra
        // `fill_value` field) leaves missing chunks undefined for other
        // readers: zarr-python 2.x reads an object array's missing elements
        // as `None`, a number array's as uninitialised memory. So every
        // chunk is stored, as zarr-python 2.x does, rather than erased when
        // it equals the stand-in fill value.
        let undefined_fill = format::fill_value_is_undefined(&metadata);
        Ok(Self {
            store,
            path,
            format,
            metadata,
            codecs,
            layout,
            chunk_repr,
            axes,
            uniform_chunks,
            write_empty_chunks: undefined_fill,
            memory_budget: DEFAULT_MEMORY_BUDGET,
            in_flight_bytes: DEFAULT_IN_FLIGHT_BYTES,
        })
    }

    /// The array's path in its hierarchy.
    #[must_use]
    pub fn path(&self) -> &NodePath {
        &self.path
    }

    /// The format the array is stored in.
    #[must_use]
    pub fn format(&self) -> ZarrFormat {
        self.format
    }

    /// The store holding the array.
    #[must_use]
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The array's metadata.
    #[must_use]
    pub fn metadata(&self) -> &ArrayMetadata {
        &self.metadata
    }

    /// The array's shape.
    #[must_use]
    pub fn shape(&self) -> &[u64] {
        &self.metadata.shape
    }

    /// The number of dimensions.
    #[must_use]
    pub fn ndim(&self) -> usize {
        self.metadata.shape.len()
    }

    /// The element data type.
    #[must_use]
    pub fn data_type(&self) -> &DataType {
        &self.metadata.data_type
    }

    /// The shape of every chunk of a `regular` grid.
    ///
    /// For a `rectilinear` grid, whose chunks differ in shape, this is the
    /// shape of chunk (0, …, 0): use [`Array::regular_chunk_shape`] to tell
    /// the grids apart and [`Array::chunk_shape_at`] for a given chunk.
    #[must_use]
    pub fn chunk_shape(&self) -> &[u64] {
        &self.chunk_repr.shape
    }

    /// The shape of every chunk when all chunks have one shape (a `regular`
    /// grid, or a `rectilinear` one given as one integer per dimension),
    /// else `None`.
    #[must_use]
    pub fn regular_chunk_shape(&self) -> Option<&[u64]> {
        self.uniform_chunks
            .then_some(self.chunk_repr.shape.as_slice())
    }

    /// The shape of the chunk at `chunk_coords` (including any part past the
    /// array's edge), or `None` if the coordinates are outside the grid's
    /// declared chunks or have the wrong number of dimensions.
    #[must_use]
    pub fn chunk_shape_at(&self, chunk_coords: &[u64]) -> Option<Vec<u64>> {
        if chunk_coords.len() != self.ndim() {
            return None;
        }
        self.axes
            .iter()
            .zip(chunk_coords)
            .map(|(axis, &c)| axis.span(c).map(|(_, n)| n))
            .collect()
    }

    /// The chunk grid.
    #[must_use]
    pub fn chunk_grid(&self) -> &ChunkGrid {
        &self.metadata.chunk_grid
    }

    /// The representation of the chunk at `chunk_coords`: borrowed when
    /// every chunk has one shape, so the regular path allocates nothing.
    /// Coordinates past the declared chunks get chunk (0, …, 0)'s shape
    /// along that dimension; callers check coordinates first.
    fn chunk_repr_at(&self, chunk_coords: &[u64]) -> Cow<'_, ChunkRepr> {
        if self.uniform_chunks {
            return Cow::Borrowed(&self.chunk_repr);
        }
        let mut repr = self.chunk_repr.clone();
        for ((n, axis), &c) in repr.shape.iter_mut().zip(&self.axes).zip(chunk_coords) {
            if let Some((_, length)) = axis.span(c) {
                *n = length;
            }
        }
        Cow::Owned(repr)
    }

    /// The fill value.
    #[must_use]
    pub fn fill_value(&self) -> &FillValue {
        &self.metadata.fill_value
    }

    /// The user attributes.
    #[must_use]
    pub fn attributes(&self) -> &JsonMap {
        &self.metadata.attributes
    }

    /// The resolved codec chain.
    #[must_use]
    pub fn codecs(&self) -> &CodecChain {
        &self.codecs
    }

    /// Replaces the resolved codecs with `codecs`, whose metadata must be
    /// the array's: for what a codec holds at run time but its metadata
    /// does not record, such as the writer's decision of a `conditional`
    /// codec ([`crate::codec::conditional::ConditionalDecision`]), which
    /// its spec requires a library to let the user attach to an array.
    ///
    /// # Errors
    /// [`Error::Codecs`] if `codecs` do not form a valid chain for the
    /// array's chunks, or one differs from the array's codec there.
    pub fn set_codecs(&mut self, codecs: Vec<Codec>) -> Result<(), Error> {
        let error = |source| Error::Codecs {
            path: self.path.clone(),
            source,
        };
        let chain = CodecChain::new(codecs, &self.chunk_repr).map_err(error)?;
        let new = chain.metadata();
        if let Some(position) = (0..new.len().max(self.metadata.codecs.len()))
            .find(|&i| new.get(i) != self.metadata.codecs.get(i))
        {
            return Err(error(CodecError::InvalidChain {
                codec: new
                    .get(position)
                    .or(self.metadata.codecs.get(position))
                    .map_or_else(String::new, |c| c.name.clone()),
                position,
                reason: "differs from the array's metadata".into(),
            }));
        }
        self.codecs = chain;
        Ok(())
    }

    /// Whether chunks equal to the fill value everywhere are stored (`true`)
    /// or erased (`false`, the default unless the fill value is `null`, as
    /// v1, v2 and the drafts allow), like zarr-python's `write_empty_chunks`.
    #[must_use]
    pub fn write_empty_chunks(&self) -> bool {
        self.write_empty_chunks
    }

    /// Sets whether chunks equal to the fill value everywhere are stored.
    pub fn set_write_empty_chunks(&mut self, write_empty_chunks: bool) {
        self.write_empty_chunks = write_empty_chunks;
    }

    /// The most bytes a read holds in memory at once for its output and its
    /// plan (the list of chunks it touches); [`DEFAULT_MEMORY_BUDGET`]
    /// unless set.
    #[must_use]
    pub fn memory_budget(&self) -> u64 {
        self.memory_budget
    }

    /// Sets the memory budget of reads: a read whose output or plan would
    /// need more bytes fails with [`Error::MemoryBudget`] before allocating.
    /// Read a large array in regions that fit (as `zarrkit export` does).
    pub fn set_memory_budget(&mut self, bytes: u64) {
        self.memory_budget = bytes;
    }

    /// The decoded bytes a read from a remote store (one whose
    /// [`Store::concurrency`] is above 1)
    /// keeps in flight while it fetches ahead: three batches of chunks, each
    /// a third of this, but always at least one chunk per thread;
    /// [`DEFAULT_IN_FLIGHT_BYTES`] unless set.
    #[must_use]
    pub fn in_flight_bytes(&self) -> usize {
        self.in_flight_bytes
    }

    /// Sets [`Array::in_flight_bytes`]: less memory, or more requests in
    /// flight for large chunks.
    pub fn set_in_flight_bytes(&mut self, bytes: usize) {
        self.in_flight_bytes = bytes;
    }

    /// The number of chunks along each dimension.
    ///
    /// For a `rectilinear` grid these are the chunks that start inside the
    /// array: declared chunks wholly past its end (the README allows edge
    /// lengths to overflow the shape "by multiple chunks") hold no element
    /// and are not counted.
    #[must_use]
    pub fn chunk_grid_shape(&self) -> Vec<u64> {
        self.shape()
            .iter()
            .zip(&self.axes)
            .map(|(&n, axis)| axis.num_chunks(n))
            .collect()
    }

    /// The array's chunk key layout: where its chunks live (the key prefix)
    /// and how chunk coordinates and keys map to each other, in the array's
    /// format and chunk key encoding.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use zarrkit::{Array, metadata::DataType, store::{MemoryStore, StoreKey}};
    /// let array = Array::builder(&[4, 6], DataType::UInt8, &[2, 3])
    ///     .create(Arc::new(MemoryStore::new()), "/a")?;
    /// let layout = array.key_layout();
    /// assert_eq!(layout.prefix().as_str(), "a/");
    /// assert_eq!(layout.chunk_key(&[1, 0])?.as_str(), "a/c/1/0");
    /// let key = StoreKey::new("a/c/1/0")?;
    /// assert_eq!(layout.parse_chunk_key(&key, array.ndim()), Some(vec![1, 0]));
    /// # Ok::<(), zarrkit::Error>(())
    /// ```
    #[must_use]
    pub fn key_layout(&self) -> &ChunkLayout {
        &self.layout
    }

    /// The key of the chunk at `chunk_coords`.
    ///
    /// # Errors
    /// A store key error (never for a valid array path).
    pub fn chunk_key(&self, chunk_coords: &[u64]) -> Result<StoreKey, Error> {
        Ok(self.layout.chunk_key(chunk_coords)?)
    }

    /// The elements of the chunk at `chunk_coords` that lie inside the array.
    #[must_use]
    pub fn chunk_region(&self, chunk_coords: &[u64]) -> Region {
        let (start, shape) = chunk_coords
            .iter()
            .zip(&self.axes)
            .zip(self.shape())
            .map(|((&c, axis), &n)| {
                // Past the declared chunks: an empty region at the end.
                let (s, cs) = axis.span(c).unwrap_or((n, 0));
                (s, cs.min(n.saturating_sub(s)))
            })
            .unzip();
        Region::new(start, shape)
    }

    /// Rewrites the array's document with the current metadata.
    fn write_metadata(&self) -> Result<(), Error> {
        format::write_node(
            self.store.as_ref(),
            &self.path,
            self.format,
            &NodeMetadata::Array(self.metadata.clone()),
        )
    }

    /// Replaces the user attributes and rewrites the document, keeping every
    /// other field.
    ///
    /// # Errors
    /// A store error.
    pub fn set_attributes(&mut self, attributes: JsonMap) -> Result<(), Error> {
        let old = std::mem::replace(&mut self.metadata.attributes, attributes);
        self.write_metadata().inspect_err(|_| {
            // Keep the handle consistent with the store when the write fails.
            self.metadata.attributes = old;
        })
    }

    fn check_element<T: Element>(&self) -> Result<(), Error> {
        if T::is_compatible(self.data_type()) {
            Ok(())
        } else {
            Err(Error::DataTypeMismatch {
                path: self.path.clone(),
                data_type: self.data_type().clone(),
                requested: T::NAME,
            })
        }
    }
}
