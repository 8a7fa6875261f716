//! The codec chain: resolved and validated once, then applied to every chunk.

use super::{
    ArrayToArrayCodec, ArrayToBytesCodec, BytesRangeReader, BytesToBytesCodec, ChunkBox, ChunkRepr,
    Codec, CodecError, codec_from_metadata, partial, vlen::VlenChunk,
};
use crate::metadata::ExtensionObject;
use std::sync::Arc;

/// A validated chain: array→array codecs, one array→bytes codec, and
/// bytes→bytes codecs (v3 core, "Codecs").
#[derive(Clone, Debug)]
pub struct CodecChain {
    array_to_array: Vec<Arc<dyn ArrayToArrayCodec>>,
    array_to_bytes: Arc<dyn ArrayToBytesCodec>,
    bytes_to_bytes: Vec<Arc<dyn BytesToBytesCodec>>,
    /// The representation the chain was validated against.
    decoded_repr: ChunkRepr,
}

impl CodecChain {
    /// Resolves `codecs` through the registry and checks the order and that
    /// each codec applies to the representation it receives, starting from
    /// the chunk representation `repr`.
    ///
    /// # Errors
    /// [`CodecError::InvalidChain`] naming the codec and its position, or the
    /// error of a codec whose configuration is invalid.
    pub fn from_metadata(codecs: &[ExtensionObject], repr: &ChunkRepr) -> Result<Self, CodecError> {
        let resolved = codecs
            .iter()
            .map(codec_from_metadata)
            .collect::<Result<Vec<_>, _>>()?;
        Self::new(resolved, repr)
    }

    /// Builds a chain from resolved codecs, checked against `repr` as in
    /// [`Self::from_metadata`].
    ///
    /// # Errors
    /// [`CodecError::InvalidChain`] naming the codec and its position.
    pub fn new(codecs: Vec<Codec>, repr: &ChunkRepr) -> Result<Self, CodecError> {
        let mut array_to_array = Vec::new();
        let mut array_to_bytes = None;
        let mut bytes_to_bytes = Vec::new();
        let mut current = repr.clone();
        let chain_error = |position: usize, codec: &Codec, reason: &str| CodecError::InvalidChain {
            codec: codec.name(),
            position,
            reason: reason.to_string(),
        };
        for (position, codec) in codecs.iter().enumerate() {
            match codec {
                Codec::ArrayToArray(c) => {
                    // A codec applies to variable-length data if it only
                    // moves elements, or turns them into fixed-size data
                    // (`categorize`).
                    let converts = || {
                        c.encoded_repr(&current)
                            .is_ok_and(|r| !r.data_type.is_variable_length())
                    };
                    if current.data_type.is_variable_length()
                        && !c.permutes_elements()
                        && !converts()
                    {
                        return Err(chain_error(
                            position,
                            codec,
                            &format!(
                                "cannot apply to variable-length `{}` data (only codecs that move elements, such as `transpose`, can)",
                                current.data_type
                            ),
                        ));
                    }
                    if array_to_bytes.is_some() {
                        return Err(chain_error(
                            position,
                            codec,
                            "is array-to-array but comes after the array-to-bytes codec",
                        ));
                    }
                    current = c
                        .encoded_repr(&current)
                        .map_err(|e| CodecError::InvalidChain {
                            codec: codec.name(),
                            position,
                            reason: e.to_string(),
                        })?;
                    array_to_array.push(Arc::clone(c));
                }
                Codec::ArrayToBytes(c) => {
                    if array_to_bytes.is_some() {
                        return Err(chain_error(
                            position,
                            codec,
                            "is a second array-to-bytes codec (a chain has exactly one)",
                        ));
                    }
                    c.validate(&current).map_err(|e| CodecError::InvalidChain {
                        codec: codec.name(),
                        position,
                        reason: e.to_string(),
                    })?;
                    array_to_bytes = Some(Arc::clone(c));
                }
                Codec::BytesToBytes(c) => {
                    if array_to_bytes.is_none() {
                        return Err(chain_error(
                            position,
                            codec,
                            "is bytes-to-bytes but comes before any array-to-bytes codec",
                        ));
                    }
                    bytes_to_bytes.push(Arc::clone(c));
                }
            }
        }
        let array_to_bytes = array_to_bytes.ok_or_else(|| CodecError::InvalidChain {
            codec: codecs
                .last()
                .map_or_else(|| "(none)".to_string(), Codec::name),
            position: codecs.len().saturating_sub(1),
            reason: "ends a chain that has no array-to-bytes codec".to_string(),
        })?;
        Ok(Self {
            array_to_array,
            array_to_bytes,
            bytes_to_bytes,
            decoded_repr: repr.clone(),
        })
    }

    /// The chain as metadata, each codec in its canonical form.
    #[must_use]
    pub fn metadata(&self) -> Vec<ExtensionObject> {
        let reprs = self
            .reprs(&self.decoded_repr)
            .unwrap_or_else(|_| vec![self.decoded_repr.clone(); self.array_to_array.len()]);
        self.array_to_array
            .iter()
            .zip(&reprs)
            .map(|(c, r)| c.metadata_for(r))
            .chain(std::iter::once(self.array_to_bytes.metadata()))
            .chain(self.bytes_to_bytes.iter().map(|c| c.metadata()))
            .collect()
    }

    /// The codecs of the chain, in order.
    #[must_use]
    pub fn codecs(&self) -> Vec<Codec> {
        self.array_to_array
            .iter()
            .map(|c| Codec::ArrayToArray(Arc::clone(c)))
            .chain(std::iter::once(Codec::ArrayToBytes(Arc::clone(
                &self.array_to_bytes,
            ))))
            .chain(
                self.bytes_to_bytes
                    .iter()
                    .map(|c| Codec::BytesToBytes(Arc::clone(c))),
            )
            .collect()
    }

    /// The representations each array→array codec receives, then the one
    /// the array→bytes codec receives.
    fn reprs(&self, repr: &ChunkRepr) -> Result<Vec<ChunkRepr>, CodecError> {
        let mut reprs = Vec::with_capacity(self.array_to_array.len() + 1);
        reprs.push(repr.clone());
        for codec in &self.array_to_array {
            let next = codec.encoded_repr(reprs.last().unwrap_or(repr))?;
            reprs.push(next);
        }
        Ok(reprs)
    }

    /// Encodes one decoded chunk of representation `repr`.
    ///
    /// # Errors
    /// [`CodecError::WrongSize`] if `decoded` is not one chunk of `repr`, or
    /// the error of a codec.
    pub fn encode(&self, decoded: Vec<u8>, repr: &ChunkRepr) -> Result<Vec<u8>, CodecError> {
        let expected = repr.size_bytes()?;
        if decoded.len() != expected {
            return Err(CodecError::WrongSize {
                expected,
                actual: decoded.len(),
            });
        }
        let reprs = self.reprs(repr)?;
        let mut data = decoded;
        for (codec, r) in self.array_to_array.iter().zip(&reprs) {
            data = codec.encode(data, r)?;
        }
        let last = reprs.last().unwrap_or(repr);
        data = self.array_to_bytes.encode(data, last)?;
        for codec in &self.bytes_to_bytes {
            data = codec.encode(data)?;
        }
        Ok(data)
    }

    /// Decodes one stored chunk into `out`, which must be exactly one chunk
    /// of `repr`. When the chain has no array→array codecs and its
    /// array→bytes codec works in place (`bytes`), the innermost
    /// bytes→bytes codec writes straight into `out`: no intermediate buffer.
    ///
    /// # Errors
    /// As [`Self::decode`].
    pub fn decode_into(
        &self,
        encoded: Vec<u8>,
        repr: &ChunkRepr,
        out: &mut [u8],
    ) -> Result<(), CodecError> {
        let expected = repr.size_bytes()?;
        if out.len() != expected {
            return Err(CodecError::WrongSize {
                expected,
                actual: out.len(),
            });
        }
        // Probing with an empty slice asks whether the codec works in place
        // without touching any data.
        let direct = self.array_to_array.is_empty()
            && self.array_to_bytes.decode_in_place(&mut [], repr).is_some();
        if !direct && self.array_to_array.is_empty() && self.bytes_to_bytes.is_empty() {
            // The array→bytes codec is the whole chain (as `sharding_indexed`
            // usually is): it may decode straight into `out`.
            return self.array_to_bytes.decode_into(encoded, repr, out);
        }
        if !direct {
            let decoded = self.decode(encoded, repr)?;
            out.copy_from_slice(&decoded);
            return Ok(());
        }
        let mut data = encoded;
        match self.bytes_to_bytes.split_first() {
            Some((innermost, outer)) => {
                for codec in outer.iter().rev() {
                    data = codec.decode(data, None)?;
                }
                innermost.decode_into(data, out)?;
            }
            None => {
                if data.len() != expected {
                    return Err(CodecError::WrongSize {
                        expected,
                        actual: data.len(),
                    });
                }
                out.copy_from_slice(&data);
            }
        }
        self.array_to_bytes
            .decode_in_place(out, repr)
            .unwrap_or(Ok(()))
    }

    /// Encodes the chunk of `repr` at `src_start` in `src`, a C-order
    /// buffer of `src_shape` elements, without first gathering it into a
    /// chunk buffer when the chain is its array→bytes codec alone and that
    /// codec can ([`ArrayToBytesCodec::encode_from`]).
    ///
    /// # Errors
    /// As [`Self::encode`].
    pub fn encode_from(
        &self,
        src: &[u8],
        src_shape: &[u64],
        src_start: &[u64],
        repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        if self.is_bare() {
            return self
                .array_to_bytes
                .encode_from(src, src_shape, src_start, repr);
        }
        let mut chunk = vec![0u8; repr.size_bytes()?];
        super::copy::BoxCopy {
            src_shape,
            src_start,
            dst_shape: &repr.shape,
            dst_start: &vec![0; repr.shape.len()],
            shape: &repr.shape,
            elem: repr.data_type.size(),
        }
        .run(src, &mut chunk);
        self.encode(chunk, repr)
    }

    /// Whether the array→bytes codec is the whole chain, so partial reads
    /// and writes can go straight to it.
    fn is_bare(&self) -> bool {
        self.array_to_array.is_empty() && self.bytes_to_bytes.is_empty()
    }

    /// Whether [`Self::decode_partial`] reads less than the whole chunk:
    /// the chain is its array→bytes codec alone, and that codec reads
    /// ranges (`sharding_indexed`, or `bytes` with no compression after it).
    #[must_use]
    pub fn supports_partial_decode(&self) -> bool {
        self.is_bare() && self.array_to_bytes.supports_partial_decode()
    }

    /// Whether [`Self::encode_partial`] rewrites less than the whole chunk
    /// (`sharding_indexed` alone: it re-encodes only the inner chunks it must).
    #[must_use]
    pub fn supports_partial_encode(&self) -> bool {
        self.is_bare() && self.array_to_bytes.supports_partial_encode()
    }

    /// Decodes `boxes` of one stored chunk of `repr`, reading it through
    /// `reader`: one buffer per box (C order, native byte order), or
    /// `Ok(None)` when the chunk is not stored. When
    /// [`Self::supports_partial_decode`] is false the whole chunk is read.
    ///
    /// # Errors
    /// [`CodecError::OutsideChunk`] for a box outside the chunk, a read
    /// error, or the error of a codec.
    pub fn decode_partial(
        &self,
        reader: &dyn BytesRangeReader,
        repr: &ChunkRepr,
        boxes: &[ChunkBox],
    ) -> Result<Option<Vec<Vec<u8>>>, CodecError> {
        partial::check_boxes(repr, boxes)?;
        if self.is_bare() {
            return self.array_to_bytes.decode_partial(reader, repr, boxes);
        }
        partial::decode_partial_whole(reader, repr, boxes, |encoded| self.decode(encoded, repr))
    }

    /// Decodes `boxes` of one stored chunk of variable-length elements of
    /// `repr`, reading it through `reader`: one chunk of elements per box
    /// (C order), or `Ok(None)` when the chunk is not stored. Reads only
    /// what it needs when [`Self::supports_partial_decode`] (a sharded
    /// string array reads the index and the inner chunks the boxes touch).
    ///
    /// # Errors
    /// [`CodecError::OutsideChunk`] for a box outside the chunk, a read
    /// error, or the error of a codec.
    pub fn decode_partial_vlen(
        &self,
        reader: &dyn BytesRangeReader,
        repr: &ChunkRepr,
        boxes: &[ChunkBox],
    ) -> Result<Option<Vec<VlenChunk>>, CodecError> {
        partial::check_boxes(repr, boxes)?;
        if self.is_bare() {
            return self.array_to_bytes.decode_partial_vlen(reader, repr, boxes);
        }
        partial::decode_partial_vlen_whole(reader, repr, boxes, |encoded| {
            self.decode_vlen(encoded, repr)
        })
    }

    /// Re-encodes one stored chunk of variable-length elements of `repr`
    /// with `updates` (boxes and their elements in C order) applied,
    /// reading what it needs through `reader`: the new encoded chunk, or
    /// `None` when every element is now the fill value. Rewrites only the
    /// inner chunks it must when [`Self::supports_partial_encode`].
    ///
    /// # Errors
    /// [`CodecError::OutsideChunk`], [`CodecError::WrongSize`] for an
    /// update of the wrong length, a read error, or the error of a codec.
    pub fn encode_partial_vlen(
        &self,
        reader: &dyn BytesRangeReader,
        repr: &ChunkRepr,
        updates: &[(ChunkBox, &VlenChunk)],
    ) -> Result<Option<Vec<u8>>, CodecError> {
        partial::check_boxes(repr, updates.iter().map(|(b, _)| b))?;
        if self.is_bare() {
            return self
                .array_to_bytes
                .encode_partial_vlen(reader, repr, updates);
        }
        partial::encode_partial_vlen_whole(
            reader,
            repr,
            updates,
            |encoded| self.decode_vlen(encoded, repr),
            |decoded| self.encode_vlen(decoded, repr),
        )
    }

    /// Re-encodes one stored chunk of `repr` with `updates` (boxes and their
    /// elements in C order) applied, reading what it needs through `reader`.
    /// Returns the new encoded chunk, or `None` when every element is now
    /// the fill value. When [`Self::supports_partial_encode`] is false the
    /// whole chunk is read, decoded and re-encoded.
    ///
    /// # Errors
    /// [`CodecError::OutsideChunk`], [`CodecError::WrongSize`] for update
    /// data of the wrong length, a read error, or the error of a codec.
    pub fn encode_partial(
        &self,
        reader: &dyn BytesRangeReader,
        repr: &ChunkRepr,
        updates: &[(ChunkBox, &[u8])],
    ) -> Result<Option<Vec<u8>>, CodecError> {
        partial::check_boxes(repr, updates.iter().map(|(b, _)| b))?;
        if self.is_bare() {
            return self.array_to_bytes.encode_partial(reader, repr, updates);
        }
        partial::encode_partial_whole(
            reader,
            repr,
            updates,
            |encoded| self.decode(encoded, repr),
            |decoded| self.encode(decoded, repr),
        )
    }

    /// Decodes one stored chunk to the bytes of a chunk of representation `repr`.
    ///
    /// # Errors
    /// The error of a codec, or [`CodecError::WrongSize`] if the result is not
    /// one chunk of `repr`.
    pub fn decode(&self, encoded: Vec<u8>, repr: &ChunkRepr) -> Result<Vec<u8>, CodecError> {
        let expected = repr.size_bytes()?;
        let reprs = self.reprs(repr)?;
        let last = reprs.last().unwrap_or(repr);
        let mut data = encoded;
        // Only the innermost bytes→bytes step knows a bound on its output:
        // what the array→bytes codec can produce (the decoded size for
        // `bytes`, more for codecs that add headers). Earlier steps get none.
        let innermost_bound = self.array_to_bytes.encoded_size_bound(last);
        for (i, codec) in self.bytes_to_bytes.iter().enumerate().rev() {
            let hint = if i == 0 { innermost_bound } else { None };
            data = codec.decode(data, hint)?;
        }
        data = self.array_to_bytes.decode(data, last)?;
        for (codec, r) in self.array_to_array.iter().zip(&reprs).rev() {
            data = codec.decode(data, r)?;
        }
        if data.len() != expected {
            return Err(CodecError::WrongSize {
                expected,
                actual: data.len(),
            });
        }
        Ok(data)
    }

    /// Encodes one chunk of variable-length elements (C order) of `repr`.
    ///
    /// # Errors
    /// [`CodecError::WrongSize`] if `decoded` is not one chunk of `repr`,
    /// or the error of a codec.
    pub fn encode_vlen(
        &self,
        decoded: &VlenChunk,
        repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        let expected = repr.element_count()?;
        if decoded.len() != expected {
            return Err(CodecError::WrongSize {
                expected,
                actual: decoded.len(),
            });
        }
        let reprs = self.reprs(repr)?;
        let mut data = Data::Vlen(std::borrow::Cow::Borrowed(decoded));
        for (codec, r) in self.array_to_array.iter().zip(&reprs) {
            data = match data {
                Data::Vlen(chunk) if codec.permutes_elements() => {
                    let indices = codec.encode(identity_indices(chunk.len()), &index_repr(r))?;
                    Data::Vlen(std::borrow::Cow::Owned(
                        chunk.gather(bytemuck::cast_slice(&indices), "chain")?,
                    ))
                }
                Data::Vlen(chunk) => Data::Fixed(codec.encode_from_vlen(&chunk, r)?),
                Data::Fixed(bytes) => Data::Fixed(codec.encode(bytes, r)?),
            };
        }
        let last = reprs.last().unwrap_or(repr);
        let mut data = match data {
            Data::Vlen(chunk) => self.array_to_bytes.encode_vlen(&chunk, last)?,
            Data::Fixed(bytes) => self.array_to_bytes.encode(bytes, last)?,
        };
        for codec in &self.bytes_to_bytes {
            data = codec.encode(data)?;
        }
        Ok(data)
    }

    /// Decodes one stored chunk of variable-length elements of `repr`.
    ///
    /// # Errors
    /// The error of a codec, or [`CodecError::WrongSize`] if the result is
    /// not one chunk of `repr`.
    pub fn decode_vlen(&self, encoded: Vec<u8>, repr: &ChunkRepr) -> Result<VlenChunk, CodecError> {
        let reprs = self.reprs(repr)?;
        let mut bytes = encoded;
        for codec in self.bytes_to_bytes.iter().rev() {
            bytes = codec.decode(bytes, None)?;
        }
        let last = reprs.last().unwrap_or(repr);
        let mut data = if last.data_type.is_variable_length() {
            Data::Vlen(std::borrow::Cow::Owned(
                self.array_to_bytes.decode_vlen(bytes, last)?,
            ))
        } else {
            Data::Fixed(self.array_to_bytes.decode(bytes, last)?)
        };
        for (codec, r) in self.array_to_array.iter().zip(&reprs).rev() {
            data = match data {
                Data::Vlen(chunk) => {
                    let indices = codec.decode(identity_indices(chunk.len()), &index_repr(r))?;
                    Data::Vlen(std::borrow::Cow::Owned(
                        chunk.gather(bytemuck::cast_slice(&indices), "chain")?,
                    ))
                }
                Data::Fixed(bytes) if r.data_type.is_variable_length() => {
                    Data::Vlen(std::borrow::Cow::Owned(codec.decode_to_vlen(bytes, r)?))
                }
                Data::Fixed(bytes) => Data::Fixed(codec.decode(bytes, r)?),
            };
        }
        let Data::Vlen(chunk) = data else {
            return Err(CodecError::Incompatible {
                codec: "chain",
                what: format!(
                    "`{}` data: the chain decodes to fixed-size data",
                    repr.data_type
                ),
            });
        };
        let expected = repr.element_count()?;
        if chunk.len() != expected {
            return Err(CodecError::WrongSize {
                expected,
                actual: chunk.len(),
            });
        }
        Ok(chunk.into_owned())
    }
}

/// Data between two codecs of a chain over variable-length elements.
enum Data<'a> {
    Vlen(std::borrow::Cow<'a, VlenChunk>),
    Fixed(Vec<u8>),
}

/// The native bytes of the `u64` indices `0..n`.
fn identity_indices(n: usize) -> Vec<u8> {
    let indices: Vec<u64> = (0..n as u64).collect();
    bytemuck::cast_slice(&indices).to_vec()
}

/// `repr` with `uint64` elements: an element-moving codec applied to the
/// indices of a variable-length chunk moves them as it would the elements.
fn index_repr(repr: &ChunkRepr) -> ChunkRepr {
    ChunkRepr {
        shape: repr.shape.clone(),
        data_type: crate::metadata::DataType::UInt64,
        fill_value: crate::metadata::FillValue::zero(&crate::metadata::DataType::UInt64),
    }
}
