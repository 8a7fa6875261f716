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

#[cfg(test)]
mod tests {
    use crate::metadata::{DataType, ExtensionObject};
    use crate::store::MemoryStore;
    use crate::{Array, Error, Region};
    use std::sync::Arc;

    fn extension(value: serde_json::Value) -> ExtensionObject {
        crate::metadata::json::extension_from_json(&value, "codecs").unwrap()
    }

    /// Flips one bit of the stored chunk `chunk_coords`, `from_end` bytes
    /// before its end.
    fn flip(array: &Array, chunk_coords: &[u64], from_end: usize) {
        let key = array.chunk_key(chunk_coords).unwrap();
        let mut bytes = array.store().get(&key, None).unwrap().unwrap();
        let at = bytes.len() - from_end;
        bytes[at] ^= 0x10;
        array.store().set(&key, &bytes).unwrap();
    }

    #[test]
    fn a_flipped_bit_under_crc32c_fails_with_the_chunk_key() {
        let store = Arc::new(MemoryStore::new());
        let array = Array::builder(&[6], DataType::UInt16, &[3])
            .codecs_metadata(vec![
                extension(
                    serde_json::json!({"name": "bytes", "configuration": {"endian": "little"}}),
                ),
                extension(serde_json::json!({"name": "crc32c"})),
            ])
            .create(store, "/x")
            .unwrap();
        array
            .write_region(&Region::whole(array.shape()), &[1u16, 2, 3, 4, 5, 6])
            .unwrap();
        let verified = array.verify_chunk(&[1]).unwrap().unwrap();
        assert_eq!((verified.stored_bytes, verified.decoded_bytes), (10, 6));
        flip(&array, &[1], 6);
        match array.verify_chunk(&[1]) {
            Err(Error::Decode { key, .. }) => assert_eq!(key.as_str(), "x/c/1"),
            other => panic!("{other:?}"),
        }
        assert!(array.verify_chunk(&[0]).unwrap().is_some());
        assert!(matches!(
            array.verify_chunk(&[2]),
            Err(Error::OutOfBounds { .. })
        ));
    }

    #[test]
    fn every_inner_chunk_of_a_shard_is_verified() {
        let store = Arc::new(MemoryStore::new());
        let array = Array::builder(&[8], DataType::UInt8, &[8])
            .codecs_metadata(vec![extension(serde_json::json!({
                "name": "sharding_indexed",
                "configuration": {
                    "chunk_shape": [2],
                    "codecs": [{"name": "bytes"}, {"name": "crc32c"}],
                    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                     {"name": "crc32c"}],
                },
            }))])
            .create(store, "/s")
            .unwrap();
        array
            .write_region(&Region::whole(array.shape()), &[1u8, 2, 3, 4, 5, 6, 7, 8])
            .unwrap();
        assert_eq!(array.verify_chunk(&[0]).unwrap().unwrap().decoded_bytes, 8);
        // The last inner chunk's data: 2 bytes and their checksum, before
        // the index (4 × 16 bytes and its checksum).
        flip(&array, &[0], 68 + 5);
        let err = array.verify_chunk(&[0]).unwrap_err();
        assert!(matches!(err, Error::Decode { .. }), "{err:?}");
        // A read of the first inner chunk alone does not touch it.
        assert_eq!(
            array
                .read_region::<u8>(&Region::new(vec![0], vec![2]))
                .unwrap(),
            [1, 2]
        );
    }
}
