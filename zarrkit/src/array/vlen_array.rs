//! Typed access to v2 object arrays of variable-length numeric arrays
//! ([`DataType::VlenArray`], numcodecs' `vlen-array` object codec): each
//! element is a `Vec<T>` of the inner type.
//!
//! The elements go through the variable-length path of
//! [`Array::read_vlen`] and [`Array::write_vlen`]; this module only checks
//! the Rust type and converts each element's native-endian bytes.

use super::{Array, Element, Region};
use crate::codec::vlen::VlenChunk;
use crate::error::Error;
use crate::metadata::DataType;

impl Array {
    /// The inner type of a `vlen_array<T>` array, checked against `T`.
    fn vlen_array_inner<T: Element>(&self) -> Result<&DataType, Error> {
        match self.data_type() {
            DataType::VlenArray(inner)
                if T::is_compatible(inner) && std::mem::size_of::<T>() == inner.size() =>
            {
                Ok(inner)
            }
            other => Err(Error::DataTypeMismatch {
                path: self.path.clone(),
                data_type: other.clone(),
                requested: T::NAME,
            }),
        }
    }

    /// Reads `region` of a variable-length array array (a v2 `|O` array
    /// with the `vlen-array` object codec): one `Vec<T>` per element, in C
    /// order. Elements of missing chunks are the fill value (empty unless
    /// the array says otherwise).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use zarrkit::{Array, Region, metadata::{DataType, ExtensionObject, JsonMap}};
    /// # use zarrkit::store::MemoryStore;
    /// let mut config = JsonMap::new();
    /// config.insert("dtype".into(), "<i4".into());
    /// let array = Array::builder(&[3], DataType::VlenArray(Box::new(DataType::Int32)), &[2])
    ///     .codecs_metadata(vec![ExtensionObject::with_configuration("vlen-array", config)])
    ///     .create(Arc::new(MemoryStore::new()), "/ragged")?;
    /// let all = Region::new(vec![0], vec![3]);
    /// array.write_vlen_arrays::<i32, _>(&all, &[vec![1, 2], vec![], vec![3]])?;
    /// assert_eq!(array.read_vlen_arrays::<i32>(&all)?, [vec![1, 2], vec![], vec![3]]);
    /// # Ok::<(), zarrkit::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::DataTypeMismatch`] unless the array is `vlen_array<U>`
    /// with `T` holding `U`; [`Error::InvalidValue`] for an element whose
    /// bytes are not whole values (or not valid ones, such as a `bool`
    /// other than 0 or 1); the errors of [`Array::read_vlen`].
    pub fn read_vlen_arrays<T: Element>(&self, region: &Region) -> Result<Vec<Vec<T>>, Error> {
        let inner = self.vlen_array_inner::<T>()?.clone();
        let size = std::mem::size_of::<T>();
        let invalid = |i: usize, reason: String| Error::InvalidValue {
            path: self.path.clone(),
            data_type: inner.clone(),
            reason: format!("element {i} of the region: {reason}"),
        };
        self.read_vlen(region)?
            .iter()
            .enumerate()
            .map(|(i, bytes)| {
                if bytes.len() % size != 0 {
                    return Err(invalid(
                        i,
                        format!("{} bytes is not a whole number of values", bytes.len()),
                    ));
                }
                let mut values = vec![T::zero(); bytes.len() / size];
                T::from_bytes(bytes, &mut values).map_err(|reason| invalid(i, reason))?;
                Ok(values)
            })
            .collect()
    }

    /// Writes one `T` slice per element of `region` (C order) into a
    /// variable-length array array; see [`Array::read_vlen_arrays`].
    ///
    /// # Errors
    /// [`Error::DataTypeMismatch`] as for [`Array::read_vlen_arrays`], and
    /// the errors of [`Array::write_vlen`].
    pub fn write_vlen_arrays<T: Element, A: AsRef<[T]>>(
        &self,
        region: &Region,
        data: &[A],
    ) -> Result<(), Error> {
        self.vlen_array_inner::<T>()?;
        let chunk = VlenChunk::from_items(data.iter().map(|values| T::as_bytes(values.as_ref())));
        self.write_vlen(region, &chunk)
    }
}
