//! Partial decoding and encoding: the pieces a codec needs to read or
//! rewrite part of a chunk without holding all of it.
//!
//! A codec never does I/O itself (STYLE.md, "Layout"): it is given a
//! [`BytesRangeReader`] over one stored value (a chunk or shard) and asks it
//! for batches of byte ranges. The array code builds the reader over
//! [`Store::get_partial_values`](crate::store::Store::get_partial_values)
//! for the chunk's key, so one call to [`BytesRangeReader::read_ranges`] is
//! one batched store request.
//!
//! Boxes within a chunk are [`ChunkBox`]es, the crate's one box type
//! ([`Region`]); a partial decode either returns each box's elements
//! ([`CodecChain::decode_partial`](super::CodecChain::decode_partial)) or
//! puts one box straight into the caller's buffer, described by a
//! [`BoxOut`] ([`CodecChain::decode_partial_into`](super::CodecChain::decode_partial_into)).

use super::copy::BoxCopy;
use super::{ChunkData, ChunkRepr, CodecError};
use crate::grid::Region;
use crate::store::ByteRange;

/// Ranges separated by fewer bytes than this are read as one range: one
/// request costs more than reading some kilobytes more (on object storage
/// a round trip; `object_store` itself merges ranges up to 1 MiB apart).
/// On a filesystem, a cold file read in many small ranges waits on the
/// disk once per range: 64 regions of 32³ from uncompressed 64³ `uint16`
/// chunks (ranges 4 KiB apart) read cold in 86–106 ms with a 4 KiB gap
/// and 47–58 ms with this one, and about as fast warm.
pub const COALESCE_GAP: u64 = 64 << 10;

/// Reads byte ranges of one stored value, a batch at a time.
pub trait BytesRangeReader: Sync {
    /// Reads each range of the value, in order, as one batch; `Ok(None)`
    /// when the value does not exist.
    ///
    /// # Errors
    /// [`CodecError::Store`] if the store fails or a range does not lie
    /// within the value.
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>, CodecError>;

    /// Says that `range` of the value will be read soon, so that a store
    /// on a device can start reading it ahead of the requests. A hint: it
    /// does nothing by default, and nothing waits for it.
    fn will_read(&self, range: ByteRange) {
        let _ = range;
    }
}

/// Where an encoder that writes its value in parts ([`CodecChain::encode_from_streamed`])
/// appends them, in order: a store's pending value.
///
/// [`CodecChain::encode_from_streamed`]: crate::codec::CodecChain::encode_from_streamed
pub(crate) trait BytesSink: Send {
    /// Appends `parts`, one after another.
    ///
    /// # Errors
    /// [`CodecError::Store`] if the store cannot take them.
    fn append(&mut self, parts: &[&[u8]]) -> Result<(), CodecError>;
}

impl<F> BytesRangeReader for F
where
    F: Fn(&[ByteRange]) -> Result<Option<Vec<Vec<u8>>>, CodecError> + Sync,
{
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>, CodecError> {
        self(ranges)
    }
}

/// A reader of a window of another reader's value: ranges are relative to
/// the window (`offset..offset + length` of the value), as a shard reads an
/// inner chunk that is itself read in parts (a nested shard, or `bytes`
/// with no compression).
pub struct WindowReader<'a> {
    /// The reader of the whole value.
    pub reader: &'a dyn BytesRangeReader,
    /// Where the window starts in the value.
    pub offset: u64,
    /// The window's length.
    pub length: u64,
}

impl WindowReader<'_> {
    /// `range` of the window as a range of the whole value.
    fn map(&self, range: &ByteRange) -> Result<ByteRange, CodecError> {
        let (start, length) = match *range {
            ByteRange::FromStart { offset, length } => {
                let length = length.unwrap_or(self.length.saturating_sub(offset));
                (offset, length)
            }
            ByteRange::Suffix(n) => {
                let n = n.min(self.length);
                (self.length - n, n)
            }
        };
        if start
            .checked_add(length)
            .is_none_or(|end| end > self.length)
        {
            return Err(CodecError::Corrupt {
                codec: "sharding_indexed",
                reason: format!(
                    "a read of {range:?} does not lie within an inner chunk of {} bytes",
                    self.length
                ),
            });
        }
        Ok(ByteRange::new(self.offset + start, length))
    }
}

impl BytesRangeReader for WindowReader<'_> {
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>, CodecError> {
        let mapped = ranges
            .iter()
            .map(|range| self.map(range))
            .collect::<Result<Vec<_>, _>>()?;
        self.reader.read_ranges(&mapped)
    }

    fn will_read(&self, range: ByteRange) {
        // A range outside the window is an error when read, not here.
        if let Ok(range) = self.map(&range) {
            self.reader.will_read(range);
        }
    }
}

/// A reader over a value held in memory (or `None` for a missing value),
/// for tests and for codecs that already hold the encoded bytes.
#[derive(Clone, Copy, Debug)]
pub struct SliceReader<'a>(pub Option<&'a [u8]>);

impl BytesRangeReader for SliceReader<'_> {
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>, CodecError> {
        let Some(value) = self.0 else {
            return Ok(None);
        };
        ranges
            .iter()
            .map(|range| {
                let (start, end) =
                    range
                        .bounds(value.len() as u64)
                        .ok_or_else(|| CodecError::Corrupt {
                            codec: "partial read",
                            reason: format!(
                                "{range} is out of bounds for a value of {} bytes",
                                value.len()
                            ),
                        })?;
                // Bounds lie within `value`, whose length is a usize.
                Ok(value[start as usize..end as usize].to_vec())
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}

/// A box of elements within one chunk: where it starts and its shape. The
/// same type as [`Region`] (`array::Region`), the crate's one box type;
/// here its coordinates are relative to the chunk.
pub type ChunkBox = Region;

/// The size in bytes of `b`'s elements of `elem` bytes each, checked
/// against `usize`.
pub(crate) fn box_size_bytes(b: &ChunkBox, elem: usize) -> Result<usize, CodecError> {
    b.num_elements()
        .and_then(|n| n.checked_mul(elem as u64))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| CodecError::TooLarge {
            shape: b.shape().to_vec(),
        })
}

/// Checks that every box lies within a chunk of `repr`.
pub(crate) fn check_boxes<'a>(
    repr: &ChunkRepr,
    boxes: impl IntoIterator<Item = &'a ChunkBox>,
) -> Result<(), CodecError> {
    for b in boxes {
        if !b.is_within(&repr.shape) {
            return Err(CodecError::OutsideChunk {
                start: b.start().to_vec(),
                shape: b.shape().to_vec(),
                chunk_shape: repr.shape.clone(),
            });
        }
    }
    Ok(())
}

/// Checks that every update's box lies within a chunk of `repr` and its
/// data is one box of elements of `repr`'s kind.
///
/// # Errors
/// [`CodecError::OutsideChunk`], or the error of [`ChunkData::check_shape`].
pub(crate) fn check_updates(
    repr: &ChunkRepr,
    updates: &[(ChunkBox, ChunkData<'_>)],
) -> Result<(), CodecError> {
    check_boxes(repr, updates.iter().map(|(b, _)| b))?;
    for (b, data) in updates {
        data.check_shape(repr, b.shape())?;
    }
    Ok(())
}

/// Where a decode of part of a chunk puts its box: the caller's C-order
/// buffer of `shape` elements, and where the box starts in it
/// ([`CodecChain::decode_partial_into`](super::CodecChain::decode_partial_into)).
#[derive(Debug)]
pub struct BoxOut<'a> {
    /// The buffer.
    pub buf: &'a mut [u8],
    /// The buffer's shape, in elements.
    pub shape: &'a [u64],
    /// The box's first element in the buffer.
    pub start: &'a [u64],
}

impl BoxOut<'_> {
    /// Checks that the buffer holds its shape of elements of `elem` bytes
    /// and that a box of `shape` fits at its start.
    ///
    /// # Errors
    /// [`CodecError::WrongSize`] if the buffer's length does not match its
    /// shape, [`CodecError::OutsideChunk`] if the box does not fit.
    pub(crate) fn check(&self, shape: &[u64], elem: usize) -> Result<(), CodecError> {
        let (out_shape, out_start) = (self.shape, self.start);
        let fits = out_shape.len() == shape.len()
            && out_start.len() == shape.len()
            && (0..shape.len()).all(|d| {
                out_start[d]
                    .checked_add(shape[d])
                    .is_some_and(|end| end <= out_shape[d])
            });
        if !fits {
            return Err(CodecError::OutsideChunk {
                start: out_start.to_vec(),
                shape: shape.to_vec(),
                chunk_shape: out_shape.to_vec(),
            });
        }
        let expected = out_shape
            .iter()
            .try_fold(elem as u64, |acc, &n| acc.checked_mul(n))
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| CodecError::TooLarge {
                shape: out_shape.to_vec(),
            })?;
        if self.buf.len() != expected {
            return Err(CodecError::WrongSize {
                expected,
                actual: self.buf.len(),
            });
        }
        Ok(())
    }
}

/// Copies `part`, the decoded elements of box `b` of a chunk of `repr`,
/// once into `out`: the default of
/// [`ArrayToBytesCodec::decode_partial_into`](super::ArrayToBytesCodec::decode_partial_into)
/// over a partial decode. `None` (the chunk is not stored) copies nothing
/// and returns `false`.
///
/// # Errors
/// [`CodecError::WrongSize`] if `part` is not one box of `b`'s shape, a
/// kind error if it is not fixed-size data.
pub(crate) fn copy_part_into(
    part: Option<Vec<ChunkData<'static>>>,
    repr: &ChunkRepr,
    b: &ChunkBox,
    out: BoxOut<'_>,
) -> Result<bool, CodecError> {
    let Some(part) = part.and_then(|parts| parts.into_iter().next()) else {
        return Ok(false);
    };
    part.check_shape(repr, b.shape())?;
    let zeros = vec![0; b.ndim()];
    BoxCopy {
        src_shape: b.shape(),
        src_start: &zeros,
        dst_shape: out.shape,
        dst_start: out.start,
        shape: b.shape(),
        elem: repr.data_type.size(),
    }
    .run(part.as_fixed("partial decode")?, out.buf);
    Ok(true)
}

/// Copies a whole decoded chunk of `repr` (C order) into the box of `out`
/// it fills: once, straight into place where its elements are contiguous
/// there.
///
/// # Errors
/// [`CodecError::WrongSize`] if `decoded` does not hold `repr`'s elements.
pub(crate) fn copy_chunk_into(
    decoded: &[u8],
    repr: &ChunkRepr,
    out: BoxOut<'_>,
) -> Result<(), CodecError> {
    let expected = repr.size_bytes()?;
    if decoded.len() != expected {
        return Err(CodecError::WrongSize {
            expected,
            actual: decoded.len(),
        });
    }
    let zeros = vec![0; repr.shape.len()];
    BoxCopy {
        src_shape: &repr.shape,
        src_start: &zeros,
        dst_shape: out.shape,
        dst_start: out.start,
        shape: &repr.shape,
        elem: repr.data_type.size(),
    }
    .run(decoded, out.buf);
    Ok(())
}

/// Reads a whole value through `reader`, or `None` when it is missing.
pub(crate) fn read_whole(reader: &dyn BytesRangeReader) -> Result<Option<Vec<u8>>, CodecError> {
    let whole = ByteRange::FromStart {
        offset: 0,
        length: None,
    };
    Ok(reader
        .read_ranges(&[whole])?
        .and_then(|values| values.into_iter().next()))
}

/// A partial decode that reads and decodes the whole value, for codecs
/// and chains that cannot do better.
pub(crate) fn decode_partial_whole(
    reader: &dyn BytesRangeReader,
    repr: &ChunkRepr,
    boxes: &[ChunkBox],
    decode: impl FnOnce(Vec<u8>) -> Result<ChunkData<'static>, CodecError>,
) -> Result<Option<Vec<ChunkData<'static>>>, CodecError> {
    check_boxes(repr, boxes)?;
    let Some(encoded) = read_whole(reader)? else {
        return Ok(None);
    };
    let chunk = decode(encoded)?;
    chunk.check(repr)?;
    if let [b] = boxes
        && b.shape() == repr.shape.as_slice()
    {
        // The whole chunk: hand it over without a copy.
        return Ok(Some(vec![chunk]));
    }
    boxes
        .iter()
        .map(|b| chunk.extract_box(repr, &repr.shape, b))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// A partial encode that reads, decodes and re-encodes the whole value;
/// `None` when every element is then the fill value.
pub(crate) fn encode_partial_whole(
    reader: &dyn BytesRangeReader,
    repr: &ChunkRepr,
    updates: &[(ChunkBox, ChunkData<'_>)],
    decode: impl FnOnce(Vec<u8>) -> Result<ChunkData<'static>, CodecError>,
    encode: impl FnOnce(ChunkData<'_>) -> Result<Vec<u8>, CodecError>,
) -> Result<Option<Vec<u8>>, CodecError> {
    check_updates(repr, updates)?;
    let old = read_whole(reader)?.map(decode).transpose()?;
    let zeros = vec![0; repr.shape.len()];
    let chunk = ChunkData::merge(old, repr, &repr.shape, &zeros, updates)?;
    if chunk.is_fill(repr) {
        return Ok(None);
    }
    encode(chunk).map(Some)
}

/// The bytes of `ranges` (offset, length) of `decoded`, one after another,
/// checking that `decoded` holds `decoded_size` bytes: the default of
/// [`BytesToBytesCodec::decode_ranges`](super::BytesToBytesCodec::decode_ranges).
///
/// # Errors
/// [`CodecError::WrongSize`] if `decoded` has another length,
/// [`CodecError::Corrupt`] for a range past its end.
pub(crate) fn gather_ranges(
    decoded: &[u8],
    decoded_size: usize,
    ranges: &[(usize, usize)],
) -> Result<Vec<u8>, CodecError> {
    if decoded.len() != decoded_size {
        return Err(CodecError::WrongSize {
            expected: decoded_size,
            actual: decoded.len(),
        });
    }
    let mut out = Vec::with_capacity(ranges_len(ranges, decoded_size)?);
    for &(offset, length) in ranges {
        out.extend_from_slice(&decoded[offset..offset + length]);
    }
    Ok(out)
}

/// The total length of `ranges` (offset, length), checking that each lies
/// within a value of `size` bytes.
///
/// # Errors
/// [`CodecError::Corrupt`] for a range past the end.
pub(crate) fn ranges_len(ranges: &[(usize, usize)], size: usize) -> Result<usize, CodecError> {
    let mut total = 0usize;
    for &(offset, length) in ranges {
        if offset.checked_add(length).is_none_or(|end| end > size) {
            return Err(CodecError::Corrupt {
                codec: "partial read",
                reason: format!(
                    "the range of {length} bytes at {offset} is out of bounds for a value of {size} bytes"
                ),
            });
        }
        total = total.saturating_add(length);
    }
    Ok(total)
}

/// Byte ranges (offset, length) of a value, and the size in bytes of each
/// box they hold ([`box_ranges`]).
pub(crate) type BoxRanges = (Vec<(usize, usize)>, Vec<usize>);

/// The byte ranges (offset, length) of a decoded chunk of `repr` (C
/// order) that hold the elements of each of `boxes`, in the boxes' order
/// and each box's C order, and the size in bytes of each box.
pub(crate) fn box_ranges(repr: &ChunkRepr, boxes: &[ChunkBox]) -> Result<BoxRanges, CodecError> {
    let elem = repr.data_type.size();
    let mut ranges = Vec::new();
    let mut sizes = Vec::with_capacity(boxes.len());
    for b in boxes {
        sizes.push(box_size_bytes(b, elem)?);
        let zeros = vec![0; b.ndim()];
        BoxCopy {
            src_shape: &repr.shape,
            src_start: b.start(),
            dst_shape: b.shape(),
            dst_start: &zeros,
            shape: b.shape(),
            elem,
        }
        .for_each_run(|s, _, len| ranges.push((s, len)));
    }
    Ok((ranges, sizes))
}

/// Merged ranges `(offset, length)`, and where each input range lies: the
/// merged range's index and the offset within it.
pub(crate) type Coalesced = (Vec<(u64, u64)>, Vec<(usize, u64)>);

/// Merges byte ranges `(offset, length)` whose gap is below [`COALESCE_GAP`].
///
/// Returns the merged ranges, sorted by offset, and for each input range
/// the index of the merged range holding it and its offset within that.
pub(crate) fn coalesce(ranges: &[(u64, u64)]) -> Coalesced {
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_by_key(|&i| ranges[i].0);
    let mut merged: Vec<(u64, u64)> = Vec::new();
    let mut placement = vec![(0usize, 0u64); ranges.len()];
    for i in order {
        let (offset, length) = ranges[i];
        let end = offset.saturating_add(length);
        let last = merged.len().wrapping_sub(1);
        match merged.last_mut() {
            Some((m_offset, m_length))
                if offset.saturating_sub(*m_offset + *m_length) < COALESCE_GAP =>
            {
                let m_end = (*m_offset + *m_length).max(end);
                *m_length = m_end - *m_offset;
                placement[i] = (last, offset - *m_offset);
            }
            _ => {
                merged.push((offset, length));
                placement[i] = (merged.len() - 1, 0);
            }
        }
    }
    (merged, placement)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearby_ranges_merge_and_distant_ones_do_not() {
        let (merged, placement) = coalesce(&[(100_000, 10), (0, 100), (200, 50), (150, 10)]);
        assert_eq!(merged, vec![(0, 250), (100_000, 10)]);
        assert_eq!(placement, vec![(1, 0), (0, 0), (0, 200), (0, 150)]);
    }

    #[test]
    fn box_copy_merges_full_trailing_dimensions() {
        // A 2x4 box at (1, 0) of a 3x4 source, into a 2x4 destination: one run.
        let src: Vec<u8> = (0..12).collect();
        let mut runs = Vec::new();
        BoxCopy {
            src_shape: &[3, 4],
            src_start: &[1, 0],
            dst_shape: &[2, 4],
            dst_start: &[0, 0],
            shape: &[2, 4],
            elem: 1,
        }
        .for_each_run(|s, d, len| runs.push((s, d, len)));
        assert_eq!(runs, vec![(4, 0, 8)]);
        let mut dst = vec![0u8; 4];
        BoxCopy {
            src_shape: &[3, 4],
            src_start: &[1, 1],
            dst_shape: &[2, 2],
            dst_start: &[0, 0],
            shape: &[2, 2],
            elem: 1,
        }
        .run(&src, &mut dst);
        assert_eq!(dst, vec![5, 6, 9, 10]);
    }

    #[test]
    fn slice_reader_rejects_ranges_past_the_end() {
        let reader = SliceReader(Some(&[1, 2, 3]));
        assert_eq!(
            reader
                .read_ranges(&[ByteRange::Suffix(2)])
                .unwrap()
                .unwrap(),
            vec![vec![2, 3]]
        );
        assert!(reader.read_ranges(&[ByteRange::new(2, 5)]).is_err());
        assert!(
            SliceReader(None)
                .read_ranges(&[ByteRange::Suffix(2)])
                .unwrap()
                .is_none()
        );
    }
}
