//! The decoded data of a chunk, fixed-size or variable-length: what flows
//! between codecs, through the chain, sharding and the array engine.
//!
//! Like zarrs' `ArrayBytes`, a chunk is either the C-order bytes of its
//! fixed-size elements in native byte order ([`ChunkData::Fixed`]) or its
//! variable-length elements ([`ChunkData::Vlen`], a [`VlenChunk`]). Both
//! are [`Cow`]s, so data the caller already holds (an update taken from
//! its buffer) is lent, not copied. A codec that serves one kind takes it
//! with [`ChunkData::into_fixed`] or [`ChunkData::into_vlen`], the one
//! place the error for the other kind is built.
//!
//! ```
//! use zarrkit::codec::ChunkData;
//! use zarrkit::codec::vlen::VlenChunk;
//! let fixed = ChunkData::from(vec![1u8, 2, 3, 4]);
//! assert_eq!(fixed.into_fixed("bytes")?, vec![1, 2, 3, 4]);
//! let strings = ChunkData::from(VlenChunk::from_items(["a", "bc"]));
//! assert!(strings.into_fixed("bytes").is_err());
//! # Ok::<(), zarrkit::codec::CodecError>(())
//! ```

use super::copy::BoxCopy;
use super::partial::ChunkBox;
use super::{ChunkRepr, CodecError};
use std::borrow::Cow;

/// The decoded form of a chunk of variable-length elements: the elements'
/// bytes back to back, and where each starts and ends.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VlenChunk {
    /// `offsets[i]..offsets[i + 1]` is element `i`; `offsets[0] == 0`.
    offsets: Vec<usize>,
    data: Vec<u8>,
}

impl VlenChunk {
    /// An empty chunk with room for `n` elements.
    #[must_use]
    pub fn with_capacity(n: usize) -> Self {
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0);
        Self {
            offsets,
            data: Vec::new(),
        }
    }

    /// A chunk of `n` copies of `value`.
    #[must_use]
    pub fn filled(n: usize, value: &[u8]) -> Self {
        let mut chunk = Self::with_capacity(n);
        chunk.data.reserve(n.saturating_mul(value.len()));
        for _ in 0..n {
            chunk.push(value);
        }
        chunk
    }

    /// A chunk of `items`, in order.
    pub fn from_items<I, T>(items: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: AsRef<[u8]>,
    {
        let mut chunk = Self::with_capacity(0);
        for item in items {
            chunk.push(item.as_ref());
        }
        chunk
    }

    /// Reserves room for `n` more bytes of elements.
    pub fn reserve_data(&mut self, n: usize) {
        self.data.reserve(n);
    }

    /// Appends an element.
    pub fn push(&mut self, value: &[u8]) {
        self.data.extend_from_slice(value);
        self.offsets.push(self.data.len());
    }

    /// The number of elements.
    #[must_use]
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether there are no elements.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i`, or `None` past the end.
    #[must_use]
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let start = *self.offsets.get(i)?;
        let end = *self.offsets.get(i + 1)?;
        self.data.get(start..end)
    }

    /// The elements in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        self.offsets.windows(2).map(|w| &self.data[w[0]..w[1]])
    }

    /// The total length of the elements' bytes.
    #[must_use]
    pub fn data_len(&self) -> usize {
        self.data.len()
    }

    /// A chunk of the elements of `self` at `indices`, in that order.
    ///
    /// # Errors
    /// [`CodecError::Corrupt`] naming `codec` if an index is out of range.
    pub fn gather(&self, indices: &[u64], codec: &'static str) -> Result<Self, CodecError> {
        let mut out = Self::with_capacity(indices.len());
        for &i in indices {
            let value = usize::try_from(i)
                .ok()
                .and_then(|i| self.get(i))
                .ok_or_else(|| CodecError::Corrupt {
                    codec,
                    reason: format!("element index {i} out of range"),
                })?;
            out.push(value);
        }
        Ok(out)
    }
}

/// The decoded data of one chunk (or of a box of one): fixed-size element
/// bytes or variable-length elements, owned or lent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChunkData<'a> {
    /// The C-order bytes of fixed-size elements, in native byte order.
    Fixed(Cow<'a, [u8]>),
    /// Variable-length elements (`string`, `bytes`, objects), in C order.
    Vlen(Cow<'a, VlenChunk>),
}

impl From<Vec<u8>> for ChunkData<'static> {
    fn from(bytes: Vec<u8>) -> Self {
        Self::Fixed(Cow::Owned(bytes))
    }
}

impl<'a> From<&'a [u8]> for ChunkData<'a> {
    fn from(bytes: &'a [u8]) -> Self {
        Self::Fixed(Cow::Borrowed(bytes))
    }
}

impl<'a> From<&'a Vec<u8>> for ChunkData<'a> {
    fn from(bytes: &'a Vec<u8>) -> Self {
        Self::Fixed(Cow::Borrowed(bytes))
    }
}

impl From<VlenChunk> for ChunkData<'static> {
    fn from(chunk: VlenChunk) -> Self {
        Self::Vlen(Cow::Owned(chunk))
    }
}

impl<'a> From<&'a VlenChunk> for ChunkData<'a> {
    fn from(chunk: &'a VlenChunk) -> Self {
        Self::Vlen(Cow::Borrowed(chunk))
    }
}

impl PartialEq<Vec<u8>> for ChunkData<'_> {
    fn eq(&self, other: &Vec<u8>) -> bool {
        matches!(self, Self::Fixed(bytes) if **bytes == **other)
    }
}

impl<const N: usize> PartialEq<[u8; N]> for ChunkData<'_> {
    fn eq(&self, other: &[u8; N]) -> bool {
        matches!(self, Self::Fixed(bytes) if **bytes == other[..])
    }
}

impl PartialEq<VlenChunk> for ChunkData<'_> {
    fn eq(&self, other: &VlenChunk) -> bool {
        matches!(self, Self::Vlen(chunk) if **chunk == *other)
    }
}

impl<'a> ChunkData<'a> {
    /// The fixed-size bytes, owned (copied only if they were lent).
    ///
    /// # Errors
    /// [`CodecError::Incompatible`] naming `codec` for variable-length data:
    /// the one place that error is built.
    pub fn into_fixed(self, codec: &'static str) -> Result<Vec<u8>, CodecError> {
        match self {
            Self::Fixed(bytes) => Ok(bytes.into_owned()),
            Self::Vlen(_) => Err(vlen_refused(codec)),
        }
    }

    /// The fixed-size bytes, lent.
    ///
    /// # Errors
    /// As [`Self::into_fixed`].
    pub fn as_fixed(&self, codec: &'static str) -> Result<&[u8], CodecError> {
        match self {
            Self::Fixed(bytes) => Ok(bytes),
            Self::Vlen(_) => Err(vlen_refused(codec)),
        }
    }

    /// The variable-length elements, owned (copied only if they were lent).
    ///
    /// # Errors
    /// [`CodecError::Incompatible`] naming `codec` for fixed-size data.
    pub fn into_vlen(self, codec: &'static str) -> Result<VlenChunk, CodecError> {
        match self {
            Self::Vlen(chunk) => Ok(chunk.into_owned()),
            Self::Fixed(_) => Err(fixed_refused(codec)),
        }
    }

    /// The variable-length elements, lent.
    ///
    /// # Errors
    /// As [`Self::into_vlen`].
    pub fn as_vlen(&self, codec: &'static str) -> Result<&VlenChunk, CodecError> {
        match self {
            Self::Vlen(chunk) => Ok(chunk),
            Self::Fixed(_) => Err(fixed_refused(codec)),
        }
    }

    /// The data, owning what it borrowed.
    #[must_use]
    pub fn into_owned(self) -> ChunkData<'static> {
        match self {
            Self::Fixed(bytes) => ChunkData::Fixed(Cow::Owned(bytes.into_owned())),
            Self::Vlen(chunk) => ChunkData::Vlen(Cow::Owned(chunk.into_owned())),
        }
    }

    /// The data lent, without copying.
    #[must_use]
    pub fn borrowed(&self) -> ChunkData<'_> {
        match self {
            Self::Fixed(bytes) => ChunkData::Fixed(Cow::Borrowed(bytes)),
            Self::Vlen(chunk) => ChunkData::Vlen(Cow::Borrowed(chunk)),
        }
    }

    /// Whether the data is variable-length.
    #[must_use]
    pub fn is_vlen(&self) -> bool {
        matches!(self, Self::Vlen(_))
    }

    /// The size of the data: bytes for fixed-size data, elements for
    /// variable-length data (what [`ChunkData::check`] compares).
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            Self::Fixed(bytes) => bytes.len(),
            Self::Vlen(chunk) => chunk.len(),
        }
    }

    /// Whether the data holds no elements.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks that the data is one box of `shape` elements of `repr`'s
    /// data type, of the kind (fixed or variable-length) that type has.
    ///
    /// # Errors
    /// [`CodecError::WrongSize`] for the wrong number of bytes or elements,
    /// [`CodecError::Incompatible`] for the wrong kind.
    pub fn check_shape(&self, repr: &ChunkRepr, shape: &[u64]) -> Result<(), CodecError> {
        let vlen = repr.data_type.is_variable_length();
        if vlen != self.is_vlen() {
            return Err(if vlen {
                fixed_refused("chunk")
            } else {
                vlen_refused("chunk")
            });
        }
        let expected = shape_len(shape, if vlen { 1 } else { repr.data_type.size() })?;
        if self.len() != expected {
            return Err(CodecError::WrongSize {
                expected,
                actual: self.len(),
            });
        }
        Ok(())
    }

    /// Checks that the data is one chunk of `repr`; see [`Self::check_shape`].
    ///
    /// # Errors
    /// As [`Self::check_shape`].
    pub fn check(&self, repr: &ChunkRepr) -> Result<(), CodecError> {
        self.check_shape(repr, &repr.shape)
    }

    /// A box of `shape` elements of `repr`'s data type, all the fill value.
    ///
    /// # Errors
    /// [`CodecError::TooLarge`] if it does not fit in memory's address space.
    pub fn fill(repr: &ChunkRepr, shape: &[u64]) -> Result<ChunkData<'static>, CodecError> {
        if repr.data_type.is_variable_length() {
            let n = shape_len(shape, 1)?;
            Ok(VlenChunk::filled(n, repr.fill_value.as_bytes()).into())
        } else {
            let mut bytes = vec![0u8; shape_len(shape, repr.data_type.size())?];
            repr.fill_value.fill(&mut bytes);
            Ok(bytes.into())
        }
    }

    /// Whether every element is `repr`'s fill value.
    #[must_use]
    pub fn is_fill(&self, repr: &ChunkRepr) -> bool {
        match self {
            Self::Fixed(bytes) => repr.fill_value.equals_all(bytes),
            Self::Vlen(chunk) => {
                let fill = repr.fill_value.as_bytes();
                chunk.iter().all(|e| e == fill)
            }
        }
    }

    /// The elements of box `b` of this chunk of `shape`, in C order.
    ///
    /// # Errors
    /// [`CodecError::TooLarge`], or [`CodecError::Corrupt`] if the data
    /// has fewer elements than `shape`.
    pub fn extract_box(
        &self,
        repr: &ChunkRepr,
        shape: &[u64],
        b: &ChunkBox,
    ) -> Result<ChunkData<'static>, CodecError> {
        let zeros = vec![0; b.ndim()];
        let mut out = Assembler::new(repr, b.shape(), false)?;
        out.copy(
            self,
            &BoxCopy {
                src_shape: shape,
                src_start: b.start(),
                dst_shape: b.shape(),
                dst_start: &zeros,
                shape: b.shape(),
                elem: 0,
            },
        );
        out.finish("partial decode")
    }

    /// The box of `shape` at `start` (in the coordinates of `updates`)
    /// after `updates`: each element from the last update whose box covers
    /// it, else from `old` (the old data of the box, `None` if there is
    /// none), else the fill value. Owned fixed-size old data is updated in
    /// place.
    ///
    /// # Errors
    /// [`CodecError::TooLarge`], or [`CodecError::WrongSize`] if the old
    /// data is not one box of `shape`.
    pub fn merge<'s>(
        old: Option<ChunkData<'s>>,
        repr: &'s ChunkRepr,
        shape: &[u64],
        start: &[u64],
        updates: &'s [(ChunkBox, ChunkData<'s>)],
    ) -> Result<ChunkData<'static>, CodecError> {
        if let Some(old) = &old {
            old.check_shape(repr, shape)?;
        }
        let mut out = Assembler::from_old(old, repr, shape, true)?;
        for (b, data) in updates {
            let Some(common) = b.intersect_box(start, shape) else {
                continue;
            };
            let src_start: Vec<u64> = common
                .start()
                .iter()
                .zip(b.start())
                .map(|(c, s)| c - s)
                .collect();
            let dst_start: Vec<u64> = common
                .start()
                .iter()
                .zip(start)
                .map(|(c, s)| c - s)
                .collect();
            out.copy(
                data,
                &BoxCopy {
                    src_shape: b.shape(),
                    src_start: &src_start,
                    dst_shape: shape,
                    dst_start: &dst_start,
                    shape: common.shape(),
                    elem: 0,
                },
            );
        }
        out.finish("partial encode")
    }
}

impl ChunkData<'_> {
    /// A chunk of `repr` after copying the elements `copy` describes (its
    /// `elem` is ignored) from `src` into `old` (the chunk's old data,
    /// `None` for all fill value): the array engine's write of one chunk.
    /// Owned fixed-size old data is updated in place; a chunk `copy`
    /// covers entirely is built from `src` alone, without filling first.
    ///
    /// # Errors
    /// [`CodecError::TooLarge`], or [`CodecError::WrongSize`] if the old
    /// data is not one chunk of `repr`.
    pub(crate) fn merge_from<'s>(
        old: Option<ChunkData<'s>>,
        repr: &'s ChunkRepr,
        src: &'s ChunkData<'s>,
        copy: &BoxCopy<'_>,
    ) -> Result<ChunkData<'static>, CodecError> {
        if let Some(old) = &old {
            old.check(repr)?;
        }
        let covers = copy.shape == repr.shape.as_slice();
        if let (None, true, ChunkData::Fixed(bytes)) = (&old, covers, src) {
            // Every element comes from `src`, and the runs arrive in the
            // chunk's C order: append them rather than zero-filling a
            // buffer only to overwrite it.
            let elem = repr.data_type.size();
            let mut chunk = Vec::with_capacity(shape_len(&repr.shape, elem)?);
            BoxCopy { elem, ..*copy }.for_each_run(|s, d, len| {
                debug_assert_eq!(d, chunk.len());
                chunk.extend_from_slice(&bytes[s..s + len]);
            });
            return Ok(chunk.into());
        }
        let mut out = Assembler::from_old(old, repr, &repr.shape, !covers)?;
        out.copy(src, copy);
        out.finish("array")
    }
}

/// Builds a box of elements from runs of other chunks' elements, the rest
/// the fill value: bytes are copied at once for fixed-size data; for
/// variable-length data, which has no layout to copy into, each element's
/// source is recorded and the elements gathered at the end.
pub(crate) enum Assembler<'s> {
    /// Fixed-size elements of `elem` bytes, copied into `out`.
    Fixed { out: Vec<u8>, elem: usize },
    /// Per element, its source chunk and index there (`None`: fill value).
    Vlen {
        sources: Vec<Option<(usize, usize)>>,
        chunks: Vec<&'s VlenChunk>,
        /// Where elements without a source come from, before the fill value.
        base: Option<Cow<'s, VlenChunk>>,
        fill: &'s [u8],
    },
}

impl<'s> Assembler<'s> {
    /// A box of `shape` elements of `repr`, all the fill value; with
    /// `filled` false the caller copies into every element, so fixed-size
    /// data is left zeroed rather than filled.
    pub(crate) fn new(
        repr: &'s ChunkRepr,
        shape: &[u64],
        filled: bool,
    ) -> Result<Self, CodecError> {
        if repr.data_type.is_variable_length() {
            Ok(Self::Vlen {
                sources: vec![None; shape_len(shape, 1)?],
                chunks: Vec::new(),
                base: None,
                fill: repr.fill_value.as_bytes(),
            })
        } else {
            let elem = repr.data_type.size();
            let mut out = vec![0u8; shape_len(shape, elem)?];
            if filled {
                repr.fill_value.fill(&mut out);
            }
            Ok(Self::Fixed { out, elem })
        }
    }

    /// A box of `shape` elements of `repr` holding `old` (`None`: see
    /// [`Self::new`]), to copy more elements over. Owned fixed-size old
    /// data is updated in place.
    pub(crate) fn from_old(
        old: Option<ChunkData<'s>>,
        repr: &'s ChunkRepr,
        shape: &[u64],
        filled: bool,
    ) -> Result<Self, CodecError> {
        Ok(match old {
            Some(ChunkData::Fixed(bytes)) => Self::Fixed {
                out: bytes.into_owned(),
                elem: repr.data_type.size(),
            },
            Some(ChunkData::Vlen(chunk)) => Self::Vlen {
                sources: vec![None; chunk.len()],
                chunks: Vec::new(),
                base: Some(chunk),
                fill: repr.fill_value.as_bytes(),
            },
            None => Self::new(repr, shape, filled)?,
        })
    }

    /// Copies the elements `copy` describes (its `elem` is ignored) from
    /// `src`. Data of the other kind than the box is skipped: the chain
    /// and the codecs check kinds before they assemble.
    pub(crate) fn copy(&mut self, src: &'s ChunkData<'_>, copy: &BoxCopy<'_>) {
        match (self, src) {
            (Self::Fixed { out, elem }, ChunkData::Fixed(bytes)) => {
                BoxCopy {
                    elem: *elem,
                    ..*copy
                }
                .run(bytes, out);
            }
            (
                Self::Vlen {
                    sources, chunks, ..
                },
                ChunkData::Vlen(chunk),
            ) => {
                let k = chunks.len();
                chunks.push(chunk);
                BoxCopy { elem: 1, ..*copy }.for_each_run(|s, d, len| {
                    for j in 0..len {
                        sources[d + j] = Some((k, s + j));
                    }
                });
            }
            _ => {}
        }
    }

    /// The assembled box.
    ///
    /// # Errors
    /// [`CodecError::Corrupt`] naming `codec` if a source chunk has fewer
    /// elements than its copy read.
    pub(crate) fn finish(self, codec: &'static str) -> Result<ChunkData<'static>, CodecError> {
        match self {
            Self::Fixed { out, .. } => Ok(out.into()),
            Self::Vlen {
                sources,
                chunks,
                base,
                fill,
            } => {
                let mut out = VlenChunk::with_capacity(sources.len());
                for (i, source) in sources.into_iter().enumerate() {
                    let value = match source {
                        Some((k, e)) => chunks[k].get(e).ok_or_else(|| CodecError::Corrupt {
                            codec,
                            reason: format!("element index {e} out of range"),
                        })?,
                        None => base.as_ref().and_then(|base| base.get(i)).unwrap_or(fill),
                    };
                    out.push(value);
                }
                Ok(out.into())
            }
        }
    }
}

/// The number of elements of `shape` times `elem`, as a `usize`.
fn shape_len(shape: &[u64], elem: usize) -> Result<usize, CodecError> {
    shape
        .iter()
        .try_fold(1u64, |acc, &n| acc.checked_mul(n))
        .and_then(|n| n.checked_mul(elem as u64))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| CodecError::TooLarge {
            shape: shape.to_vec(),
        })
}

fn vlen_refused(codec: &'static str) -> CodecError {
    CodecError::Incompatible {
        codec,
        what: "variable-length data (use `vlen-utf8` or `vlen-bytes`)".to_string(),
    }
}

fn fixed_refused(codec: &'static str) -> CodecError {
    CodecError::Incompatible {
        codec,
        what: "fixed-size elements".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::{DataType, FillValue};

    fn strings(shape: &[u64]) -> ChunkRepr {
        ChunkRepr {
            shape: shape.to_vec(),
            data_type: DataType::String,
            fill_value: FillValue::new(b"-".to_vec()),
        }
    }

    #[test]
    fn merge_takes_updates_then_old_data_then_the_fill_value() {
        let r = strings(&[4]);
        let old = ChunkData::from(VlenChunk::from_items(["a", "b", "c", "d"]));
        let update = VlenChunk::from_items(["x"]);
        let updates = [(ChunkBox::new(vec![1], vec![1]), ChunkData::from(&update))];
        let merged = ChunkData::merge(Some(old), &r, &[4], &[0], &updates).unwrap();
        assert_eq!(
            merged,
            ChunkData::from(VlenChunk::from_items(["a", "x", "c", "d"]))
        );
        let merged = ChunkData::merge(None, &r, &[2], &[1], &updates).unwrap();
        assert_eq!(merged, ChunkData::from(VlenChunk::from_items(["x", "-"])));
    }

    #[test]
    fn kinds_are_checked_against_the_data_type() {
        let r = strings(&[2]);
        assert!(ChunkData::from(vec![0u8; 2]).check(&r).is_err());
        assert!(
            ChunkData::from(VlenChunk::from_items(["a", "b"]))
                .check(&r)
                .is_ok()
        );
        assert!(ChunkData::fill(&r, &[3]).unwrap().is_fill(&r));
    }
}
