//! The chunks an array has in its store: one listing of the array's chunk
//! prefix, parsed with the array's key layout, or a probe of every grid
//! position when the store cannot list.

use super::Array;
use crate::error::Error;
use crate::grid::GridWalk;
use crate::store::{StoreError, StoreKey};

/// The most chunk positions [`Array::stored_chunks`] asks a store that
/// cannot list about, one request each; a larger grid is an error
/// ([`Error::TooManyChunksToProbe`]) rather than hours of requests.
pub const MAX_PROBED_CHUNKS: u64 = 1 << 20;

/// A chunk of an array found in its store.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StoredChunk {
    /// The chunk's position in the chunk grid.
    pub chunk_coords: Vec<u64>,
    /// The key it is stored under.
    pub key: StoreKey,
}

/// How many chunks an array has in its store and how many bytes they take.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoredSize {
    /// The number of stored chunks ([`Array::stored_chunks`]).
    pub chunks: u64,
    /// Their stored (encoded) size in bytes.
    pub bytes: u64,
}

impl Array {
    /// The chunks of the array that are stored, sorted in C order of their
    /// coordinates.
    ///
    /// The array's chunk prefix is listed once and each key parsed with the
    /// array's [key layout](Array::key_layout); keys that are not chunk keys
    /// of this array (its documents, other nodes' keys under the prefix,
    /// chunks outside the grid, such as those a shrinking resize left
    /// behind) are skipped. A store that cannot list is asked for the size
    /// of every position of the grid instead.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use zarrkit::{Array, Region, metadata::DataType, store::MemoryStore};
    /// let array = Array::builder(&[4, 6], DataType::UInt8, &[2, 3])
    ///     .create(Arc::new(MemoryStore::new()), "/a")?;
    /// array.write_region(&Region::new(vec![2, 3], vec![2, 3]), &[1u8; 6])?;
    /// array.write_region(&Region::new(vec![0, 0], vec![1, 1]), &[2u8])?;
    /// let stored = array.stored_chunks()?;
    /// let coords: Vec<&[u64]> = stored.iter().map(|c| c.chunk_coords.as_slice()).collect();
    /// assert_eq!(coords, [&[0, 0], &[1, 1]]);
    /// assert_eq!(stored[1].key.as_str(), "a/c/1/1");
    /// # Ok::<(), zarrkit::Error>(())
    /// ```
    ///
    /// # Errors
    /// A store error (listing, or probing a key).
    pub fn stored_chunks(&self) -> Result<Vec<StoredChunk>, Error> {
        let grid = self.chunk_grid_shape();
        let mut found = match self.listed_chunks()? {
            Some(listed) => {
                let mut found = Vec::with_capacity(listed.len());
                for chunk in listed {
                    if self.is_own_chunk(&chunk, &grid)? {
                        found.push(chunk);
                    }
                }
                found
            }
            None => {
                // Without a listing each position is asked for: fine for
                // the grids of an HTTP store's usual arrays, hopeless for a
                // sparse grid of 10^12 chunks.
                let chunks = grid.iter().try_fold(1u64, |n, &d| n.checked_mul(d));
                if chunks.is_none_or(|chunks| chunks > MAX_PROBED_CHUNKS) {
                    return Err(Error::TooManyChunksToProbe {
                        path: self.path().clone(),
                        grid: grid.clone(),
                        limit: MAX_PROBED_CHUNKS,
                    });
                }
                let mut found = Vec::new();
                for chunk_coords in GridWalk::whole(&grid) {
                    let key = self.chunk_key(&chunk_coords)?;
                    if self.store.size(&key)?.is_some() {
                        found.push(StoredChunk { chunk_coords, key });
                    }
                }
                found
            }
        };
        found.sort_unstable_by(|a, b| a.chunk_coords.cmp(&b.chunk_coords));
        found.dedup_by(|a, b| a.chunk_coords == b.chunk_coords);
        Ok(found)
    }

    /// The number of stored chunks ([`Array::stored_chunks`]) and the sum of
    /// their stored sizes; a chunk erased between the listing and the
    /// size query counts no bytes. One listing with sizes
    /// ([`Store::list_prefix_sizes`](crate::store::Store::list_prefix_sizes))
    /// where the store can list, so object storage answers without a
    /// request per chunk.
    ///
    /// # Errors
    /// A store error.
    pub fn stored_size(&self) -> Result<StoredSize, Error> {
        if let Some(listed) = self.listed_chunk_sizes()? {
            let grid = self.chunk_grid_shape();
            let mut stored = StoredSize::default();
            for (chunk, size) in listed {
                if self.is_own_chunk(&chunk, &grid)? {
                    stored.chunks += 1;
                    stored.bytes = stored.bytes.saturating_add(size);
                }
            }
            return Ok(stored);
        }
        let chunks = self.stored_chunks()?;
        let mut bytes = 0u64;
        for chunk in &chunks {
            bytes = bytes.saturating_add(self.store.size(&chunk.key)?.unwrap_or(0));
        }
        Ok(StoredSize {
            chunks: chunks.len() as u64,
            bytes,
        })
    }

    /// Whether `chunk` (a listed key that parses as a chunk key) is a chunk
    /// of the array: inside the grid `grid`, and under the one key its
    /// coordinates have (listing may meet other spellings that parse to the
    /// same coordinates).
    fn is_own_chunk(&self, chunk: &StoredChunk, grid: &[u64]) -> Result<bool, Error> {
        let inside = chunk.chunk_coords.iter().zip(grid).all(|(c, n)| c < n);
        Ok(inside && self.chunk_key(&chunk.chunk_coords)? == chunk.key)
    }

    /// As [`Array::listed_chunks`], each with its stored size, from one
    /// listing with sizes; `None` when the store cannot list.
    fn listed_chunk_sizes(&self) -> Result<Option<Vec<(StoredChunk, u64)>>, Error> {
        if !self.store.capabilities().list {
            return Ok(None);
        }
        let sized = match self.store.list_prefix_sizes(self.layout.prefix()) {
            Ok(sized) => sized,
            Err(StoreError::Unsupported { .. }) => return Ok(None),
            Err(error) => return Err(error.into()),
        };
        let ndim = self.ndim();
        Ok(Some(
            sized
                .into_iter()
                .filter_map(|(key, size)| {
                    let chunk_coords = self.layout.parse_chunk_key(&key, ndim)?;
                    Some((StoredChunk { chunk_coords, key }, size))
                })
                .collect(),
        ))
    }

    /// Every key under the array's chunk prefix that parses as a chunk key
    /// of the array (at any coordinates, inside the grid or not), in the
    /// store's order; `None` when the store cannot list.
    pub(super) fn listed_chunks(&self) -> Result<Option<Vec<StoredChunk>>, Error> {
        if !self.store.capabilities().list {
            return Ok(None);
        }
        let keys = match self.store.list_prefix(self.layout.prefix()) {
            Ok(keys) => keys,
            Err(StoreError::Unsupported { .. }) => return Ok(None),
            Err(error) => return Err(error.into()),
        };
        let ndim = self.ndim();
        Ok(Some(
            keys.into_iter()
                .filter_map(|key| {
                    let chunk_coords = self.layout.parse_chunk_key(&key, ndim)?;
                    Some(StoredChunk { chunk_coords, key })
                })
                .collect(),
        ))
    }
}
