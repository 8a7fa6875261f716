//! Planned, parallel reads and writes of regions.

use super::{Array, Element, Region};
use crate::error::Error;

impl Array {
    /// Reads `region` into a new vector, in C order.
    ///
    /// # Errors
    /// [`Error::DataTypeMismatch`] if `T` does not hold the data type,
    /// [`Error::OutOfBounds`], or a store or decode error naming the chunk.
    pub fn read_region<T: Element>(&self, region: &Region) -> Result<Vec<T>, Error> {
        let _ = region;
        todo!()
    }

    /// Reads `region` into `out` (C order, exactly the region's elements).
    ///
    /// # Errors
    /// As [`Array::read_region`], and [`Error::BufferLength`].
    pub fn read_region_into<T: Element>(
        &self,
        region: &Region,
        out: &mut [T],
    ) -> Result<(), Error> {
        let _ = (region, out);
        todo!()
    }

    /// Reads `region` as raw element bytes (native byte order, C order), for any data type.
    ///
    /// # Errors
    /// As [`Array::read_region`].
    pub fn read_region_bytes(&self, region: &Region) -> Result<Vec<u8>, Error> {
        let _ = region;
        todo!()
    }

    /// Writes `data` (C order) into `region`.
    ///
    /// # Errors
    /// [`Error::DataTypeMismatch`], [`Error::OutOfBounds`],
    /// [`Error::BufferLength`], or a store or encode error naming the chunk.
    pub fn write_region<T: Element>(&self, region: &Region, data: &[T]) -> Result<(), Error> {
        let _ = (region, data);
        todo!()
    }

    /// Writes raw element bytes (native byte order, C order) into `region`, for any data type.
    ///
    /// # Errors
    /// As [`Array::write_region`].
    pub fn write_region_bytes(&self, region: &Region, data: &[u8]) -> Result<(), Error> {
        let _ = (region, data);
        todo!()
    }

    /// Reads the decoded chunk at `chunk_coords` (the whole chunk, including
    /// any part past the array's edge), or `None` if it is not stored.
    ///
    /// # Errors
    /// A store or decode error naming the chunk.
    pub fn read_chunk_bytes(&self, chunk_coords: &[u64]) -> Result<Option<Vec<u8>>, Error> {
        let _ = chunk_coords;
        todo!()
    }

    /// Erases the chunk at `chunk_coords` (it then reads as the fill value).
    ///
    /// # Errors
    /// A store error.
    pub fn erase_chunk(&self, chunk_coords: &[u64]) -> Result<(), Error> {
        let _ = chunk_coords;
        todo!()
    }

    /// Changes the shape, erasing chunks wholly outside the new shape and
    /// rewriting the metadata document.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] or a store error.
    pub fn resize(&mut self, new_shape: &[u64]) -> Result<(), Error> {
        let _ = new_shape;
        todo!()
    }
}

#[cfg(feature = "ndarray")]
impl Array {
    /// Reads `region` as an `ndarray` array.
    ///
    /// # Errors
    /// As [`Array::read_region`].
    pub fn read_ndarray<T: Element>(&self, region: &Region) -> Result<ndarray::ArrayD<T>, Error> {
        let _ = region;
        todo!()
    }

    /// Writes an `ndarray` view with its first element at `start`.
    ///
    /// # Errors
    /// As [`Array::write_region`].
    pub fn write_ndarray<T: Element>(
        &self,
        start: &[u64],
        data: ndarray::ArrayViewD<'_, T>,
    ) -> Result<(), Error> {
        let _ = (start, data);
        todo!()
    }
}
