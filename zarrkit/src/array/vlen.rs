//! Strings, byte strings and struct fields: the element API for the data
//! types that are not plain numbers.
//!
//! Variable-length arrays (`string`, `bytes`) are read and written by the
//! same planned, batched engine as fixed-size arrays
//! ([`Array::read_vlen`] and [`Array::write_vlen`] hand it
//! [`ChunkData::Vlen`]); this module holds the typed wrappers over it.
//! Fixed-length strings (`fixed_length_utf32`, NumPy `S`) go through the
//! fixed-size path and are converted at the edge.

use super::io::ReadOut;
use super::{Array, Element, Region};
use crate::codec::vlen::VlenChunk;
use crate::codec::{ChunkData, ChunkRepr};
use crate::error::Error;
use crate::metadata::{DataType, strings};

impl Array {
    pub(super) fn vlen_only(&self, requested: &'static str) -> Result<(), Error> {
        if self.data_type().is_variable_length() {
            Ok(())
        } else {
            Err(Error::DataTypeMismatch {
                path: self.path.clone(),
                data_type: self.data_type().clone(),
                requested,
            })
        }
    }

    /// The number of elements of a checked region, as a `usize`.
    fn region_len(&self, region: &Region) -> Result<usize, Error> {
        self.check_region_bounds(region)?;
        let n = region
            .num_elements()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| Error::TooLarge {
                path: self.path.clone(),
                shape: region.shape().to_vec(),
            })?;
        // Each element holds at least its place in the output (a `String`
        // or `Vec`, or its offsets and source) before any of its bytes.
        let per_element = std::mem::size_of::<Vec<u8>>() as u64;
        self.check_budget((n as u64).saturating_mul(per_element), || {
            format!("reading a region of shape {:?}", region.shape())
        })?;
        Ok(n)
    }

    /// The number of elements of one chunk of representation `repr`.
    pub(super) fn chunk_len(&self, repr: &ChunkRepr) -> Result<usize, Error> {
        repr.num_elements()
            .and_then(|n| usize::try_from(n).ok())
            .filter(|&n| u32::try_from(n).is_ok())
            .ok_or_else(|| Error::TooLarge {
                path: self.path.clone(),
                shape: repr.shape.clone(),
            })
    }

    /// Reads `region` of a variable-length array (`string`, `bytes`): the
    /// elements' bytes in C order. Missing chunks read as the fill value.
    ///
    /// # Errors
    /// [`Error::DataTypeMismatch`] for a fixed-size array,
    /// [`Error::DimensionMismatch`], [`Error::OutOfBounds`], or a store or
    /// decode error naming the chunk.
    pub fn read_vlen(&self, region: &Region) -> Result<VlenChunk, Error> {
        self.vlen_only("variable-length elements")?;
        let n = self.region_len(region)?;
        if n == 0 {
            return Ok(VlenChunk::default());
        }
        self.chunk_len(&self.chunk_repr)?;
        // Chunks of other shapes (a rectilinear grid) are checked too.
        for repr in self.plan(region)?.iter().filter_map(|p| p.repr.as_ref()) {
            self.chunk_len(repr)?;
        }
        let mut out = ReadOut::vlen(n);
        self.read_planned(region, &mut out)?;
        Ok(out.into_vlen(self.fill_value().as_bytes()))
    }

    /// Writes `data` (C order, one element per region element) into
    /// `region` of a variable-length array. Chunks the region covers
    /// entirely are encoded without being read; others are read, updated
    /// and rewritten, safely against concurrent writers in this process. A
    /// chunk that ends up equal to the fill value everywhere is erased,
    /// unless [`Array::set_write_empty_chunks`] says otherwise.
    ///
    /// # Errors
    /// [`Error::DataTypeMismatch`] for a fixed-size array,
    /// [`Error::BufferLength`] if `data` is not one element per region
    /// element, [`Error::InvalidInput`] for a `string` element that is not
    /// UTF-8, [`Error::OutOfBounds`], or a store or encode error naming the
    /// chunk.
    pub fn write_vlen(&self, region: &Region, data: &VlenChunk) -> Result<(), Error> {
        self.vlen_only("variable-length elements")?;
        let n = self.region_len(region)?;
        if data.len() != n {
            return Err(Error::BufferLength {
                path: self.path.clone(),
                expected: n as u64,
                actual: data.len() as u64,
            });
        }
        self.check_utf8(data)?;
        if n == 0 {
            return Ok(());
        }
        self.chunk_len(&self.chunk_repr)?;
        self.write_planned(region, &ChunkData::from(data))
    }

    /// Reads `region` as strings, for `string` (variable-length UTF-8),
    /// `fixed_length_utf32` (NumPy `U`; trailing U+0000 padding removed)
    /// and NumPy `S` byte strings that hold UTF-8 (trailing zero bytes
    /// removed).
    ///
    /// # Errors
    /// [`Error::DataTypeMismatch`] for other data types,
    /// [`Error::InvalidValue`] for an element that is not a valid string,
    /// or the errors of [`Array::read_vlen`] and [`Array::read_region_bytes`].
    pub fn read_strings(&self, region: &Region) -> Result<Vec<String>, Error> {
        self.strings_from(|| self.read_vlen(region), || self.read_region_bytes(region))
    }

    /// Checks that every element of `data` is UTF-8 when the array holds
    /// `string`s.
    pub(super) fn check_utf8(&self, data: &VlenChunk) -> Result<(), Error> {
        if *self.data_type() == DataType::String
            && let Some(i) = data.iter().position(|e| std::str::from_utf8(e).is_err())
        {
            return Err(Error::InvalidInput {
                path: self.path.clone(),
                reason: format!("element {i} is not UTF-8"),
            });
        }
        Ok(())
    }

    /// The strings of a read: from `vlen` for `string`, from the element
    /// bytes `bytes` gives for the fixed-length string types.
    pub(super) fn strings_from(
        &self,
        vlen: impl FnOnce() -> Result<VlenChunk, Error>,
        bytes: impl FnOnce() -> Result<Vec<u8>, Error>,
    ) -> Result<Vec<String>, Error> {
        let invalid = |i: usize, reason: String| Error::InvalidValue {
            path: self.path.clone(),
            data_type: self.data_type().clone(),
            reason: format!("element {i} of the region: {reason}"),
        };
        match self.data_type() {
            DataType::String => vlen()?
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    String::from_utf8(e.to_vec()).map_err(|err| invalid(i, err.to_string()))
                })
                .collect(),
            DataType::FixedUtf32(n) => {
                let n = *n;
                bytes()?
                    .chunks_exact(n)
                    .enumerate()
                    .map(|(i, e)| strings::decode_utf32(e).map_err(|reason| invalid(i, reason)))
                    .collect()
            }
            DataType::FixedBytes(n) => {
                let n = *n;
                bytes()?
                    .chunks_exact(n)
                    .enumerate()
                    .map(|(i, e)| {
                        String::from_utf8(strings::trim_nul(e).to_vec())
                            .map_err(|err| invalid(i, err.to_string()))
                    })
                    .collect()
            }
            other => Err(Error::DataTypeMismatch {
                path: self.path.clone(),
                data_type: other.clone(),
                requested: "String",
            }),
        }
    }

    /// Reads `region` as byte strings, for `bytes` and `string` (the UTF-8
    /// bytes) and NumPy `S` (trailing zero bytes removed, as NumPy does).
    ///
    /// # Errors
    /// [`Error::DataTypeMismatch`] for other data types, or the errors of
    /// [`Array::read_vlen`] and [`Array::read_region_bytes`].
    pub fn read_byte_strings(&self, region: &Region) -> Result<Vec<Vec<u8>>, Error> {
        self.byte_strings_from(|| self.read_vlen(region), || self.read_region_bytes(region))
    }

    /// The byte strings of a read: from `vlen` for `string` and `bytes`,
    /// from the element bytes `bytes` gives for NumPy `S`.
    pub(super) fn byte_strings_from(
        &self,
        vlen: impl FnOnce() -> Result<VlenChunk, Error>,
        bytes: impl FnOnce() -> Result<Vec<u8>, Error>,
    ) -> Result<Vec<Vec<u8>>, Error> {
        match self.data_type() {
            DataType::String | DataType::Bytes => Ok(vlen()?.iter().map(<[u8]>::to_vec).collect()),
            DataType::FixedBytes(n) => {
                let n = *n;
                Ok(bytes()?
                    .chunks_exact(n)
                    .map(|e| strings::trim_nul(e).to_vec())
                    .collect())
            }
            other => Err(Error::DataTypeMismatch {
                path: self.path.clone(),
                data_type: other.clone(),
                requested: "Vec<u8>",
            }),
        }
    }

    /// Writes strings into `region` (C order), for `string`,
    /// `fixed_length_utf32` and NumPy `S` (UTF-8 bytes, zero-padded).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the first string that does not fit a
    /// fixed-length type, [`Error::DataTypeMismatch`] for other data types,
    /// or the errors of [`Array::write_vlen`] and [`Array::write_region_bytes`].
    pub fn write_strings<S: AsRef<str>>(&self, region: &Region, data: &[S]) -> Result<(), Error> {
        match self.strings_data(data)? {
            ChunkData::Vlen(chunk) => self.write_vlen(region, &chunk),
            ChunkData::Fixed(bytes) => self.write_region_bytes(region, &bytes),
        }
    }

    /// The elements of strings for the array's data type: variable-length
    /// for `string`, element bytes for the fixed-length string types.
    pub(super) fn strings_data<S: AsRef<str>>(
        &self,
        data: &[S],
    ) -> Result<ChunkData<'static>, Error> {
        match self.data_type() {
            DataType::String => Ok(VlenChunk::from_items(data.iter().map(|s| s.as_ref())).into()),
            DataType::FixedUtf32(n) => {
                let n = *n;
                let mut bytes = Vec::with_capacity(data.len().saturating_mul(n));
                for (i, s) in data.iter().enumerate() {
                    let encoded = strings::encode_utf32(s.as_ref(), n).ok_or_else(|| {
                        Error::InvalidInput {
                            path: self.path.clone(),
                            reason: format!("string {i} has more than {} code points", n / 4),
                        }
                    })?;
                    bytes.extend(encoded);
                }
                Ok(bytes.into())
            }
            DataType::FixedBytes(n) => {
                let bytes: Vec<&[u8]> = data.iter().map(|s| s.as_ref().as_bytes()).collect();
                Ok(self.fixed_byte_strings(*n, &bytes)?.into())
            }
            other => Err(Error::DataTypeMismatch {
                path: self.path.clone(),
                data_type: other.clone(),
                requested: "String",
            }),
        }
    }

    /// Byte strings as NumPy `S` elements of `n` bytes, zero-padded.
    fn fixed_byte_strings<B: AsRef<[u8]>>(&self, n: usize, data: &[B]) -> Result<Vec<u8>, Error> {
        let mut bytes = Vec::with_capacity(data.len().saturating_mul(n));
        for (i, b) in data.iter().enumerate() {
            let b = b.as_ref();
            if b.len() > n {
                return Err(Error::InvalidInput {
                    path: self.path.clone(),
                    reason: format!("byte string {i} has {} bytes, more than {n}", b.len()),
                });
            }
            bytes.extend_from_slice(b);
            bytes.resize(bytes.len() + n - b.len(), 0);
        }
        Ok(bytes)
    }

    /// Writes byte strings into `region` (C order), for `bytes`, `string`
    /// (each must be UTF-8) and NumPy `S` (zero-padded; at most the type's
    /// length).
    ///
    /// # Errors
    /// As [`Array::write_strings`].
    pub fn write_byte_strings<B: AsRef<[u8]>>(
        &self,
        region: &Region,
        data: &[B],
    ) -> Result<(), Error> {
        match self.data_type() {
            DataType::String | DataType::Bytes => {
                self.write_vlen(region, &VlenChunk::from_items(data))
            }
            DataType::FixedBytes(n) => {
                self.write_region_bytes(region, &self.fixed_byte_strings(*n, data)?)
            }
            other => Err(Error::DataTypeMismatch {
                path: self.path.clone(),
                data_type: other.clone(),
                requested: "Vec<u8>",
            }),
        }
    }

    /// Reads one field of a struct array over `region`, as `T` (which must
    /// hold the field's type; a sub-array field gives its elements one
    /// record after another).
    ///
    /// # Errors
    /// [`Error::DataTypeMismatch`] if the array is not a struct, has no
    /// such field, or `T` does not hold the field's type; the errors of
    /// [`Array::read_region_bytes`].
    pub fn read_field<T: Element>(&self, region: &Region, field: &str) -> Result<Vec<T>, Error> {
        let mismatch = |requested: &'static str| Error::DataTypeMismatch {
            path: self.path.clone(),
            data_type: self.data_type().clone(),
            requested,
        };
        let DataType::Struct(fields) = self.data_type() else {
            return Err(mismatch("a struct field"));
        };
        let mut offset = 0;
        let mut found = None;
        for f in fields {
            if f.name == field {
                found = Some(f);
                break;
            }
            offset += f.size();
        }
        let f = found.ok_or_else(|| Error::InvalidInput {
            path: self.path.clone(),
            reason: format!(
                "no field `{field}` (fields: {})",
                fields
                    .iter()
                    .map(|f| format!("`{}`", f.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })?;
        if !T::is_compatible(&f.data_type) || std::mem::size_of::<T>() != f.data_type.size() {
            return Err(mismatch(T::NAME));
        }
        let record = self.data_type().size();
        let bytes = self.read_region_bytes(region)?;
        let size = f.size();
        let mut field_bytes = Vec::with_capacity(bytes.len() / record.max(1) * size);
        for r in bytes.chunks_exact(record) {
            field_bytes.extend_from_slice(&r[offset..offset + size]);
        }
        let mut out = vec![T::zero(); field_bytes.len() / std::mem::size_of::<T>().max(1)];
        T::from_bytes(&field_bytes, &mut out).map_err(|reason| Error::InvalidValue {
            path: self.path.clone(),
            data_type: f.data_type.clone(),
            reason,
        })?;
        Ok(out)
    }
}
