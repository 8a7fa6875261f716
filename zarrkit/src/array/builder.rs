//! `ArrayBuilder`: create arrays with the defaults users expect.

use super::{Array, Element};
use crate::codec::Codec;
use crate::error::{Error, NodeKind};
use crate::format::{self, ZarrFormat};
use crate::metadata::{
    ArrayMetadata, ChunkGrid, ChunkKeyEncoding, DataType, ExtensionObject, FillValue, JsonMap,
    NodeMetadata,
};
use crate::node::NodePath;
use crate::store::Store;
use std::sync::Arc;

/// Builds a new array: `Array::builder(shape, data_type, chunk_shape)`, then
/// options, then [`ArrayBuilder::create`].
///
/// Defaults: codecs `bytes` (little endian) + `zstd` (level 0, as
/// zarr-python), fill value zero of the data type, chunk key encoding
/// `default` with `/` (`v2` with `.` when the format is v2), final v3, chunks equal to the fill value not stored.
#[derive(Clone, Debug)]
pub struct ArrayBuilder {
    shape: Vec<u64>,
    data_type: DataType,
    chunk_shape: Vec<u64>,
    chunk_grid: Option<ChunkGrid>,
    fill_value: Option<FillValue>,
    codecs: Option<Vec<ExtensionObject>>,
    chunk_key_encoding: Option<ChunkKeyEncoding>,
    dimension_names: Option<Vec<Option<String>>>,
    attributes: JsonMap,
    write_empty_chunks: bool,
    overwrite: bool,
    format: ZarrFormat,
}

impl ArrayBuilder {
    /// A builder; see [`Array::builder`].
    #[must_use]
    pub fn new(shape: &[u64], data_type: DataType, chunk_shape: &[u64]) -> Self {
        Self {
            shape: shape.to_vec(),
            data_type,
            chunk_shape: chunk_shape.to_vec(),
            chunk_grid: None,
            fill_value: None,
            codecs: None,
            chunk_key_encoding: None,
            dimension_names: None,
            attributes: JsonMap::new(),
            write_empty_chunks: false,
            overwrite: false,
            format: ZarrFormat::V3,
        }
    }

    /// Sets the fill value from one element of a matching Rust type.
    ///
    /// The type is checked against the data type in [`ArrayBuilder::create`].
    #[must_use]
    pub fn fill_value<T: Element>(mut self, value: T) -> Self {
        let bytes = T::as_bytes(std::slice::from_ref(&value)).into_owned();
        self.fill_value = Some(FillValue::new(if T::is_compatible(&self.data_type) {
            bytes
        } else {
            // An impossible length, so `create` reports the mismatch.
            Vec::new()
        }));
        self
    }

    /// Sets the fill value from the bytes of one element (native byte order).
    #[must_use]
    pub fn fill_value_bytes(mut self, value: FillValue) -> Self {
        self.fill_value = Some(value);
        self
    }

    /// Replaces the regular grid of the builder's chunk shape with `grid`,
    /// such as a `rectilinear` grid of chunks that differ in shape (Zarr v3
    /// only: the other formats refuse it when the array is created).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use zarrkit::{Array, Region, metadata::{ChunkGrid, DataType}, store::MemoryStore};
    /// // Rows in chunks of 2 then 3; columns in chunks of 4, 1 and 1.
    /// let grid = ChunkGrid::rectilinear(&[vec![2, 3], vec![4, 1, 1]])?;
    /// let array = Array::builder(&[5, 6], DataType::Int32, &[])
    ///     .chunk_grid(grid)
    ///     .create(Arc::new(MemoryStore::new()), "/a")?;
    /// assert_eq!(array.chunk_grid_shape(), [2, 3]);
    /// assert_eq!(array.chunk_shape_at(&[1, 0]), Some(vec![3, 4]));
    /// array.write_region(&Region::new(vec![1, 3], vec![2, 2]), &[1, 2, 3, 4])?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn chunk_grid(mut self, grid: ChunkGrid) -> Self {
        self.chunk_grid = Some(grid);
        self
    }

    /// Replaces the whole codec chain.
    #[must_use]
    pub fn codecs(mut self, codecs: Vec<Codec>) -> Self {
        self.codecs = Some(codecs.iter().map(Codec::metadata).collect());
        self
    }

    /// Replaces the whole codec chain with codecs given as metadata.
    #[must_use]
    pub fn codecs_metadata(mut self, codecs: Vec<ExtensionObject>) -> Self {
        self.codecs = Some(codecs);
        self
    }

    /// Sets the chunk key encoding.
    #[must_use]
    pub fn chunk_key_encoding(mut self, encoding: ChunkKeyEncoding) -> Self {
        self.chunk_key_encoding = Some(encoding);
        self
    }

    /// Names the dimensions.
    #[must_use]
    pub fn dimension_names<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.dimension_names = Some(names.into_iter().map(|n| Some(n.into())).collect());
        self
    }

    /// Names some dimensions (`None` for an unnamed one).
    #[must_use]
    pub fn dimension_names_opt(mut self, names: Vec<Option<String>>) -> Self {
        self.dimension_names = Some(names);
        self
    }

    /// Sets the user attributes.
    #[must_use]
    pub fn attributes(mut self, attributes: JsonMap) -> Self {
        self.attributes = attributes;
        self
    }

    /// Whether chunks equal to the fill value everywhere are stored.
    #[must_use]
    pub fn write_empty_chunks(mut self, write_empty_chunks: bool) -> Self {
        self.write_empty_chunks = write_empty_chunks;
        self
    }

    /// Whether to replace a node already at the path (its chunks are erased).
    #[must_use]
    pub fn overwrite(mut self, overwrite: bool) -> Self {
        self.overwrite = overwrite;
        self
    }

    /// The format to write.
    #[must_use]
    pub fn format(mut self, format: ZarrFormat) -> Self {
        self.format = format;
        self
    }

    fn default_codecs(&self) -> Vec<ExtensionObject> {
        let mut zstd = JsonMap::new();
        zstd.insert("level".into(), 0.into());
        zstd.insert("checksum".into(), false.into());
        let zstd = ExtensionObject::with_configuration("zstd", zstd);
        // zarr-python 3.1's defaults: `vlen-utf8`/`vlen-bytes` for the
        // variable-length types, `bytes` for the rest.
        match self.data_type {
            DataType::String => {
                return vec![
                    ExtensionObject::with_configuration("vlen-utf8", JsonMap::new()),
                    zstd,
                ];
            }
            DataType::Bytes => {
                return vec![
                    ExtensionObject::with_configuration("vlen-bytes", JsonMap::new()),
                    zstd,
                ];
            }
            _ => {}
        }
        let mut bytes = JsonMap::new();
        if self.data_type.endian_unit() > 1 {
            bytes.insert("endian".into(), "little".into());
        }
        vec![ExtensionObject::with_configuration("bytes", bytes), zstd]
    }

    /// The metadata the builder would write.
    ///
    /// # Errors
    /// [`Error::InvalidMetadata`] if the options contradict each other.
    pub fn build_metadata(&self, path: &NodePath) -> Result<ArrayMetadata, Error> {
        let invalid = |source| Error::InvalidMetadata {
            path: path.clone(),
            source,
        };
        let chunk_grid = match &self.chunk_grid {
            Some(grid) => grid.clone(),
            None => ChunkGrid::regular(&self.chunk_shape).map_err(invalid)?,
        };
        let metadata = ArrayMetadata {
            shape: self.shape.clone(),
            data_type: self.data_type.clone(),
            chunk_grid,
            chunk_key_encoding: self
                .chunk_key_encoding
                .clone()
                .unwrap_or_else(|| format::default_chunk_key_encoding(self.format)),
            fill_value: self
                .fill_value
                .clone()
                .unwrap_or_else(|| FillValue::zero(&self.data_type)),
            codecs: self
                .codecs
                .clone()
                .or_else(|| format::default_codecs(self.format, &self.data_type))
                .unwrap_or_else(|| self.default_codecs()),
            storage_transformers: Vec::new(),
            dimension_names: self.dimension_names.clone(),
            attributes: self.attributes.clone(),
            extra_fields: JsonMap::new(),
        };
        metadata.validate().map_err(invalid)?;
        Ok(metadata)
    }

    /// The array the builder creates at `path`, checked without touching
    /// the store: its metadata, its codecs (resolved), and that its format
    /// can say everything in it; with the metadata to write.
    /// [`ArrayBuilder::create`] and [`create_hierarchy`](crate::create_hierarchy)
    /// write it.
    pub(crate) fn prepare(
        &self,
        store: Arc<dyn Store>,
        path: &NodePath,
    ) -> Result<(Array, NodeMetadata), Error> {
        let metadata = self.build_metadata(path)?;
        // Resolve the codecs before touching the store, so invalid options
        // leave whatever is stored untouched.
        let mut array = Array::from_metadata(store, path.clone(), self.format, metadata)?;
        array.set_write_empty_chunks(self.write_empty_chunks);
        // A format that cannot say something (a codec v2 or the v3 drafts
        // cannot name) fails here, before anything is erased.
        let metadata = NodeMetadata::Array(array.metadata().clone());
        format::check_representable(self.format, path, &metadata)?;
        Ok((array, metadata))
    }

    /// Writes the array's metadata at `path` and returns the array.
    ///
    /// With overwriting off (the default) the array's document is created
    /// only if none is there, in one atomic step where the store has
    /// [`StoreCapabilities::conditional_create`](crate::store::StoreCapabilities::conditional_create)
    /// (the filesystem, memory and zip-writer stores; S3, Azure and GCS):
    /// of several writers creating one array at once exactly one succeeds
    /// and the others get [`Error::NodeExists`]. Elsewhere the store is
    /// checked and then written, which two writers can both pass. See
    /// [`format::create_node`] for what the formats with two document
    /// names (v2, the drafts) leave open.
    ///
    /// # Errors
    /// [`Error::NodeExists`] if a node is there (or another writer created
    /// one meanwhile) and overwriting is off,
    /// [`Error::InvalidMetadata`] or [`Error::Codecs`] for invalid options,
    /// or a store error.
    pub fn create(&self, store: Arc<dyn Store>, path: &str) -> Result<Array, Error> {
        let path = NodePath::new(path)?;
        let (array, metadata) = self.prepare(Arc::clone(&store), &path)?;
        // A node whose documents do not read (half written by another
        // creator, or broken) is in the way as much as one that reads.
        if let Some(found) = format::node_in_the_way(store.as_ref(), &path, NodeKind::Array)? {
            if !self.overwrite {
                return Err(Error::NodeExists { path, found });
            }
            store.erase_prefix(&format::node_prefix(self.format, &path))?;
        }
        if self.overwrite {
            format::write_node(store.as_ref(), &path, self.format, &metadata)?;
        } else {
            // The check above is only a check: another writer may create
            // the node before this one writes. Create the document only if
            // it is still absent, atomically where the store can.
            format::create_node(store.as_ref(), &path, self.format, &metadata)?;
        }
        Ok(array)
    }
}
