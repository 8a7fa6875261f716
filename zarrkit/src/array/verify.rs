//! Verifying stored chunks: each decoded in full, as a read would decode
//! it, so that checksums (`crc32c`, a shard index's codecs) and every
//! inner chunk of a shard are checked. `zarrkit check` runs it over every
//! stored chunk.

use super::Array;
use crate::codec::ChunkData;
use crate::error::Error;

/// A stored chunk that [`Array::verify_chunk`] decoded without error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VerifiedChunk {
    /// Its stored (encoded) size in bytes.
    pub stored_bytes: u64,
    /// Its decoded size in bytes: the element bytes of a fixed-size data
    /// type, the elements' bytes (without lengths) of a variable-length one.
    pub decoded_bytes: u64,
}

impl Array {
    /// Reads the chunk at `chunk_coords` and decodes it in full, verifying
    /// what the codecs verify (the `crc32c` checksum, a shard's index and
    /// each of its inner chunks); `None` when it is not stored.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use zarrkit::{Array, Region, metadata::DataType, store::{MemoryStore, Store}};
    /// let store = Arc::new(MemoryStore::new());
    /// let array = Array::builder(&[4], DataType::UInt8, &[2]).create(store.clone(), "/a")?;
    /// array.write_region(&Region::new(vec![0], vec![2]), &[1u8, 2])?;
    /// assert_eq!(array.verify_chunk(&[0])?.map(|c| c.decoded_bytes), Some(2));
    /// assert_eq!(array.verify_chunk(&[1])?, None);
    /// // A truncated chunk fails to decode, with its key in the error.
    /// let key = array.chunk_key(&[0])?;
    /// store.set(&key, &[0x28, 0xb5])?;
    /// let err = array.verify_chunk(&[0]).unwrap_err();
    /// assert!(err.to_string().contains("`a/c/0`"));
    /// # Ok::<(), zarrkit::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::OutOfBounds`] for coordinates outside the grid,
    /// [`Error::Decode`] naming the chunk's key when it does not decode
    /// (or decodes to the wrong size), or a store error.
    pub fn verify_chunk(&self, chunk_coords: &[u64]) -> Result<Option<VerifiedChunk>, Error> {
        self.check_chunk_coords(chunk_coords)?;
        let key = self.chunk_key(chunk_coords)?;
        let Some(bytes) = self.store.get(&key, None)? else {
            return Ok(None);
        };
        let stored_bytes = bytes.len() as u64;
        let repr = self.chunk_repr_at(chunk_coords);
        let decoded_bytes = match self.decode_stored(&key, &repr, bytes)? {
            ChunkData::Fixed(bytes) => bytes.len() as u64,
            ChunkData::Vlen(chunk) => chunk.data_len() as u64,
        };
        Ok(Some(VerifiedChunk {
            stored_bytes,
            decoded_bytes,
        }))
    }
}
