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

    /// Writes `data` (C order) into `region`.
    ///
    /// # Errors
    /// [`Error::DataTypeMismatch`], [`Error::OutOfBounds`],
    /// [`Error::BufferLength`], or a store or encode error naming the chunk.
    pub fn write_region<T: Element>(&self, region: &Region, data: &[T]) -> Result<(), Error> {
        let _ = (region, data);
        todo!()
    }
}
