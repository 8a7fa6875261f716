//! The codec chain: resolved and validated once, then applied to every chunk.

use super::{
    ArrayToArrayCodec, ArrayToBytesCodec, BoxOut, BytesRangeReader, BytesSink, BytesToBytesCodec,
    ChunkBox, ChunkData, ChunkRepr, Codec, CodecCapabilities, CodecError, codec_from_metadata,
    partial,
};
use crate::metadata::ExtensionObject;
use crate::store::buffers::BUFFERS;
use std::borrow::Cow;
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
    /// The representations each array→array codec receives for chunks of
    /// `decoded_repr`, then the one the array→bytes codec receives:
    /// prepared once, so the common chunk shape clones none per chunk.
    prepared: Vec<ChunkRepr>,
    /// What the chain can do, from its array→bytes codec when that codec
    /// is the whole chain.
    capabilities: CodecCapabilities,
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
        let prepared = reprs(&array_to_array, repr)?;
        let bare = array_to_array.is_empty() && bytes_to_bytes.is_empty();
        let inner = array_to_bytes.capabilities();
        let capabilities = CodecCapabilities {
            decodes_in_place: array_to_array.is_empty() && inner.decodes_in_place,
            partial_decode: bare && inner.partial_decode,
            partial_encode: bare && inner.partial_encode,
            nests_chunks: array_to_array.is_empty() && inner.nests_chunks,
            decodes_ranges: array_to_array.is_empty()
                && inner.decodes_in_place
                && matches!(bytes_to_bytes.as_slice(), [codec] if codec.decodes_ranges()),
        };
        Ok(Self {
            array_to_array,
            array_to_bytes,
            bytes_to_bytes,
            decoded_repr: repr.clone(),
            prepared,
            capabilities,
        })
    }

    /// The chain as metadata, each codec in its canonical form.
    #[must_use]
    pub fn metadata(&self) -> Vec<ExtensionObject> {
        self.array_to_array
            .iter()
            .zip(&self.prepared)
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

    /// What the chain can do: partial decoding and encoding when its
    /// array→bytes codec is the whole chain and can (`sharding_indexed`,
    /// or `bytes` with no compression after it), decoding in place when
    /// no array→array codec comes first and the array→bytes codec can,
    /// and whether it nests chunks (a sharded array).
    #[must_use]
    pub fn capabilities(&self) -> CodecCapabilities {
        self.capabilities
    }

    /// The chain's `sharding_indexed` codec (its inner chunk shape, codecs
    /// and index location) when that is the chain's array→bytes codec,
    /// whatever array→array codecs come before it; else `None`.
    #[must_use]
    pub fn sharding(&self) -> Option<&super::sharding::ShardingCodec> {
        self.array_to_bytes.as_sharding()
    }

    /// The shape of the inner chunks when the chain nests chunks (its
    /// first codec is `sharding_indexed`), else `None`.
    #[must_use]
    pub fn inner_chunk_shape(&self) -> Option<&[u64]> {
        self.capabilities
            .nests_chunks
            .then(|| self.sharding().map(|s| s.chunk_shape()))
            .flatten()
    }

    /// The representations each array→array codec receives, then the one
    /// the array→bytes codec receives, for chunks of `repr`: the prepared
    /// ones for the chain's own chunk representation, computed for others
    /// (a rectilinear grid's chunks).
    fn reprs<'a>(&'a self, repr: &ChunkRepr) -> Result<Cow<'a, [ChunkRepr]>, CodecError> {
        if *repr == self.decoded_repr {
            Ok(Cow::Borrowed(&self.prepared))
        } else {
            reprs(&self.array_to_array, repr).map(Cow::Owned)
        }
    }

    /// Encodes one decoded chunk of representation `repr`: fixed-size
    /// bytes, or variable-length elements for `string` and its kin.
    ///
    /// # Errors
    /// [`CodecError::WrongSize`] if `decoded` is not one chunk of `repr`, or
    /// the error of a codec.
    pub fn encode<'a>(
        &self,
        decoded: impl Into<ChunkData<'a>>,
        repr: &ChunkRepr,
    ) -> Result<Vec<u8>, CodecError> {
        let decoded = decoded.into();
        decoded.check(repr)?;
        let reprs = self.reprs(repr)?;
        let mut data = decoded;
        for (codec, r) in self.array_to_array.iter().zip(reprs.iter()) {
            data = match data {
                ChunkData::Vlen(chunk) if codec.permutes_elements() => {
                    let indices = codec.encode(identity_indices(chunk.len()), &index_repr(r))?;
                    gather(&chunk, indices)?
                }
                data => codec.encode(data, r)?,
            };
        }
        let last = reprs.last().unwrap_or(repr);
        let mut bytes = self.array_to_bytes.encode(data, last)?;
        for codec in &self.bytes_to_bytes {
            bytes = codec.encode(bytes)?;
        }
        Ok(bytes)
    }

    /// Decodes one stored chunk to a chunk of representation `repr`.
    ///
    /// # Errors
    /// The error of a codec, or [`CodecError::WrongSize`] if the result is not
    /// one chunk of `repr`.
    pub fn decode(
        &self,
        encoded: Vec<u8>,
        repr: &ChunkRepr,
    ) -> Result<ChunkData<'static>, CodecError> {
        let reprs = self.reprs(repr)?;
        let last = reprs.last().unwrap_or(repr);
        let mut bytes = encoded;
        // The innermost bytes→bytes step's output is bounded by what the
        // array→bytes codec can produce (the decoded size for `bytes`, more
        // for codecs that add headers), and each step further out by that
        // plus the slack an encoder may add: no step can be made to
        // allocate much more than the chunk (a decompression bomb).
        let innermost_bound = self.array_to_bytes.encoded_size_bound(last);
        for (i, codec) in self.bytes_to_bytes.iter().enumerate().rev() {
            bytes = codec.decode(bytes, outer_bound(innermost_bound, i))?;
        }
        let mut data = self.array_to_bytes.decode(bytes, last)?;
        for (codec, r) in self.array_to_array.iter().zip(reprs.iter()).rev() {
            data = match data {
                ChunkData::Vlen(chunk) if codec.permutes_elements() => {
                    let indices = codec.decode(identity_indices(chunk.len()), &index_repr(r))?;
                    gather(&chunk, indices)?
                }
                data => codec.decode(data, r)?,
            };
        }
        if data.is_vlen() != repr.data_type.is_variable_length() {
            return Err(CodecError::Incompatible {
                codec: "chain",
                what: format!(
                    "`{}` data: the chain decodes to {} data",
                    repr.data_type,
                    if data.is_vlen() {
                        "variable-length"
                    } else {
                        "fixed-size"
                    }
                ),
            });
        }
        data.check(repr)?;
        Ok(data)
    }

    /// Decodes one stored chunk of fixed-size elements into `out`, which
    /// must be exactly one chunk of `repr`. When the chain has no
    /// array→array codecs and its array→bytes codec works in place
    /// (`bytes`), the innermost bytes→bytes codec writes straight into
    /// `out`: no intermediate buffer.
    ///
    /// # Errors
    /// As [`Self::decode`].
    pub fn decode_into(
        &self,
        encoded: Vec<u8>,
        repr: &ChunkRepr,
        out: &mut [u8],
    ) -> Result<(), CodecError> {
        self.decode_into_spent(encoded, repr, out).map(drop)
    }

    /// [`Self::decode_into`], giving back the stored value's buffer when
    /// the chain only read it (the innermost compressor decoding straight
    /// into `out`, or no compressor), for the caller to reuse
    /// ([`BUFFERS`](crate::store::buffers::BUFFERS)): a compressed chunk
    /// of noisy data is hundreds of KiB, whose fresh pages faulted in on
    /// every read.
    pub(crate) fn decode_into_spent(
        &self,
        encoded: Vec<u8>,
        repr: &ChunkRepr,
        out: &mut [u8],
    ) -> Result<Option<Vec<u8>>, CodecError> {
        let expected = repr.size_bytes()?;
        if out.len() != expected {
            return Err(CodecError::WrongSize {
                expected,
                actual: out.len(),
            });
        }
        if !self.capabilities.decodes_in_place {
            if self.is_bare() {
                // The array→bytes codec is the whole chain (as
                // `sharding_indexed` usually is): it may decode straight
                // into `out`.
                return self
                    .array_to_bytes
                    .decode_into(encoded, repr, out)
                    .map(|()| None);
            }
            let decoded = self.decode(encoded, repr)?;
            out.copy_from_slice(decoded.as_fixed("chain")?);
            return Ok(None);
        }
        let mut data = encoded;
        match self.bytes_to_bytes.split_first() {
            Some((innermost, outer)) => {
                for (i, codec) in outer.iter().enumerate().rev() {
                    data = codec.decode(data, outer_bound(Some(expected), i + 1))?;
                }
                innermost.decode_into(&data, out)?;
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
        self.array_to_bytes.decode_in_place(out, repr)?;
        Ok(Some(data))
    }

    /// Decodes one whole stored chunk of fixed-size elements of `repr` into
    /// the box of `out` it fills (at `out.start`, of `repr.shape`), where
    /// its elements are not contiguous in the caller's buffer: one copy of
    /// each element. A chain that is its array→bytes codec alone lets that
    /// codec place the elements (a shard copies each inner chunk straight
    /// into `out`, never holding the whole shard decoded).
    ///
    /// # Errors
    /// [`CodecError::OutsideChunk`] if the box does not fit in `out`,
    /// [`CodecError::WrongSize`] if `out`'s buffer does not hold its shape,
    /// or as [`Self::decode`].
    pub fn decode_into_box(
        &self,
        encoded: Vec<u8>,
        repr: &ChunkRepr,
        out: BoxOut<'_>,
    ) -> Result<(), CodecError> {
        out.check(&repr.shape, repr.data_type.size())?;
        if self.is_bare() {
            return self.array_to_bytes.decode_into_box(encoded, repr, out);
        }
        let decoded = self.decode(encoded, repr)?;
        partial::copy_chunk_into(decoded.as_fixed("chain")?, repr, out)
    }

    /// Encodes the fixed-size chunk of `repr` at `src_start` in `src`, a
    /// C-order buffer of `src_shape` elements, without first gathering it
    /// into a chunk buffer of its own when the chain is its array→bytes
    /// codec alone and that codec can ([`ArrayToBytesCodec::encode_from`]).
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
        self.encode_gathered(src, src_shape, src_start, repr, false)
            .map(Option::unwrap_or_default)
    }

    /// [`Self::encode_from`], appending the encoded value to `sink` in
    /// parts as they are ready, for a chain that can: a bare
    /// `sharding_indexed` with its index at the end, which appends each
    /// inner chunk once it and those before it are encoded, and the index
    /// last. `Ok(false)`, with nothing appended, for any other chain.
    ///
    /// # Errors
    /// As [`Self::encode`], and [`CodecError::Store`] when the sink fails.
    pub(crate) fn encode_from_streamed(
        &self,
        src: &[u8],
        src_shape: &[u64],
        src_start: &[u64],
        repr: &ChunkRepr,
        sink: &mut dyn BytesSink,
    ) -> Result<bool, CodecError> {
        match self.sharding() {
            Some(sharding) if self.is_bare() => {
                sharding.encode_shard_from_streamed(src, src_shape, src_start, repr, sink)
            }
            _ => Ok(false),
        }
    }

    /// Whether [`Self::encode_from_streamed`] can stream chunks of this
    /// chain (nothing is encoded to tell).
    pub(crate) fn encodes_streamed(&self) -> bool {
        self.is_bare()
            && self
                .sharding()
                .is_some_and(super::sharding::ShardingCodec::streams)
    }

    /// [`Self::encode_from`] for a chain that is not its array→bytes codec
    /// alone, or `None`, with nothing encoded, when `skip_fill` and every
    /// element of the chunk equals the fill value (a shard does not store
    /// such inner chunks). `Some` whenever `skip_fill` is false.
    ///
    /// `bytes` leaving the elements as they are, then one bytes→bytes
    /// codec that compresses from a borrowed slice (zstd, blosc): a chunk
    /// that is one contiguous run of `src` (it spans the region's trailing
    /// dimensions) is compressed straight from `src`, with no chunk-sized
    /// buffer, whose fresh pages cost a 32 MiB blosc write more than
    /// compressing on two threads saves; any other chunk is gathered into
    /// a buffer the store's pool keeps ([`BUFFERS`]), which the next chunk
    /// this thread encodes reuses while it is still in the cache. A fresh
    /// zeroed buffer per chunk was cleared before each gather and, in a
    /// process's first write, faulted in page by page.
    ///
    /// # Errors
    /// As [`Self::encode`].
    pub(crate) fn encode_gathered(
        &self,
        src: &[u8],
        src_shape: &[u64],
        src_start: &[u64],
        repr: &ChunkRepr,
        skip_fill: bool,
    ) -> Result<Option<Vec<u8>>, CodecError> {
        let size = repr.size_bytes()?;
        let gather = super::copy::BoxCopy {
            src_shape,
            src_start,
            dst_shape: &repr.shape,
            dst_start: &vec![0; repr.shape.len()],
            shape: &repr.shape,
            elem: repr.data_type.size(),
        };
        let codec = match self.bytes_to_bytes.as_slice() {
            [codec]
                if self.capabilities.decodes_ranges && self.array_to_bytes.encodes_as_is(repr) =>
            {
                codec
            }
            _ => return self.encode_gathered_owned(src, size, &gather, repr, skip_fill),
        };
        let encode = |chunk: &[u8]| match skip_fill && repr.fill_value.equals_all(chunk) {
            true => Ok(None),
            false => codec.encode_slice(chunk).map(Some),
        };
        if let Some(range) =
            super::copy::contiguous_range(src_shape, src_start, &repr.shape, repr.data_type.size())
            && range.len() == size
            && let Some(chunk) = src.get(range)
        {
            return encode(chunk);
        }
        let Some(mut chunk) = BUFFERS.buffer(size) else {
            return Err(CodecError::TooLarge {
                shape: repr.shape.clone(),
            });
        };
        gather.run(src, &mut chunk);
        let encoded = encode(&chunk);
        BUFFERS.give(std::iter::once(chunk));
        encoded
    }

    /// [`Self::encode_gathered`] through a chunk buffer of its own, which
    /// the chain's codecs take over.
    fn encode_gathered_owned(
        &self,
        src: &[u8],
        size: usize,
        gather: &super::copy::BoxCopy<'_>,
        repr: &ChunkRepr,
        skip_fill: bool,
    ) -> Result<Option<Vec<u8>>, CodecError> {
        let mut chunk = vec![0u8; size];
        gather.run(src, &mut chunk);
        if skip_fill && repr.fill_value.equals_all(&chunk) {
            return Ok(None);
        }
        self.encode(chunk, repr).map(Some)
    }

    /// Whether [`Self::decode_into_box`] copies the chunk's inner chunks
    /// straight into place (a bare `sharding_indexed`), so a whole chunk
    /// is never decoded into a buffer of its own, and each chunk decodes
    /// its inner chunks in parallel.
    pub(crate) fn places_inner_chunks(&self) -> bool {
        self.is_bare() && self.capabilities.nests_chunks
    }

    /// Whether [`Self::decode`] of a whole chunk gives back the stored
    /// bytes themselves, reordered in place at most: a chain of a bare
    /// `bytes` codec (no compression, no filters). A reader can then copy
    /// elements straight from the stored value, with no decode buffer.
    pub(crate) fn decodes_stored_bytes(&self) -> bool {
        self.is_bare() && self.capabilities.decodes_in_place && !self.capabilities.nests_chunks
    }

    /// The threads each of `chunks` chunks decoded or encoded at once on
    /// the current rayon pool may use inside its codecs
    /// ([`threads::with_chunk_threads`](super::threads::with_chunk_threads)):
    /// the pool's threads shared out when there are fewer chunks than
    /// threads, so one large blosc chunk is coded on all of them; 1 for a
    /// chain that nests chunks, which already codes its inner chunks in
    /// parallel on the pool.
    #[must_use]
    pub fn threads_per_chunk(&self, chunks: usize) -> usize {
        if self.sharding().is_some() {
            1
        } else {
            super::threads::per_chunk_threads(chunks)
        }
    }

    /// Whether the array→bytes codec is the whole chain, so partial reads
    /// and writes can go straight to it.
    fn is_bare(&self) -> bool {
        self.array_to_array.is_empty() && self.bytes_to_bytes.is_empty()
    }

    /// Decodes `boxes` of one stored chunk of `repr`, reading it through
    /// `reader`: the elements of each box in C order, or `Ok(None)` when
    /// the chunk is not stored. Reads only what it needs when the chain's
    /// [`CodecCapabilities::partial_decode`] says so (a sharded array reads
    /// the index and the inner chunks the boxes touch); otherwise the
    /// whole chunk is read.
    ///
    /// # Errors
    /// [`CodecError::OutsideChunk`] for a box outside the chunk, a read
    /// error, or the error of a codec.
    pub fn decode_partial(
        &self,
        reader: &dyn BytesRangeReader,
        repr: &ChunkRepr,
        boxes: &[ChunkBox],
    ) -> Result<Option<Vec<ChunkData<'static>>>, CodecError> {
        partial::check_boxes(repr, boxes)?;
        if self.is_bare() {
            return self.array_to_bytes.decode_partial(reader, repr, boxes);
        }
        if self.capabilities.decodes_ranges {
            return self.decode_ranges(reader, repr, boxes);
        }
        partial::decode_partial_whole(reader, repr, boxes, |encoded| self.decode(encoded, repr))
    }

    /// [`Self::decode_partial`] for a chain that decodes byte ranges
    /// ([`CodecCapabilities::decodes_ranges`]): reads the whole value, has
    /// its one bytes→bytes codec decode the element runs of the boxes (a
    /// blosc chunk: only the blocks they touch; a zstd chunk: only the
    /// blocks up to the last run's end), and puts each box's
    /// elements in native byte order.
    fn decode_ranges(
        &self,
        reader: &dyn BytesRangeReader,
        repr: &ChunkRepr,
        boxes: &[ChunkBox],
    ) -> Result<Option<Vec<ChunkData<'static>>>, CodecError> {
        let [codec] = self.bytes_to_bytes.as_slice() else {
            return partial::decode_partial_whole(reader, repr, boxes, |encoded| {
                self.decode(encoded, repr)
            });
        };
        let size = repr.size_bytes()?;
        let (ranges, sizes) = partial::box_ranges(repr, boxes)?;
        let Some(encoded) = partial::read_whole(reader)? else {
            return Ok(None);
        };
        let mut decoded = codec.decode_ranges(encoded, size, &ranges)?;
        let total: usize = sizes.iter().sum();
        if decoded.len() != total {
            return Err(CodecError::WrongSize {
                expected: total,
                actual: decoded.len(),
            });
        }
        let mut parts = Vec::with_capacity(boxes.len());
        // Split off the boxes from the back, so that each split moves only
        // the box split off.
        for (b, &n) in boxes.iter().zip(&sizes).rev() {
            let mut part = if decoded.len() == n {
                std::mem::take(&mut decoded)
            } else {
                decoded.split_off(decoded.len() - n)
            };
            let box_repr = ChunkRepr {
                shape: b.shape().to_vec(),
                ..repr.clone()
            };
            self.array_to_bytes.decode_in_place(&mut part, &box_repr)?;
            parts.push(ChunkData::from(part));
        }
        parts.reverse();
        Ok(Some(parts))
    }

    /// Decodes box `b` of one stored chunk of `repr` of fixed-size
    /// elements straight into `out` (a C-order buffer, and where the box
    /// goes in it): one copy of each element, where
    /// [`Self::decode_partial`] and a copy into the caller's buffer would
    /// make two (a sharded array decodes each inner chunk it needs and
    /// copies it into `out`). Returns `false`, writing nothing, when the
    /// chunk is not stored. Reads as little as [`Self::decode_partial`].
    ///
    /// # Errors
    /// [`CodecError::OutsideChunk`] for a box outside the chunk or one that
    /// does not fit in `out`, [`CodecError::WrongSize`] if `out`'s buffer
    /// does not hold its shape, a read error, or the error of a codec.
    pub fn decode_partial_into(
        &self,
        reader: &dyn BytesRangeReader,
        repr: &ChunkRepr,
        b: &ChunkBox,
        out: BoxOut<'_>,
    ) -> Result<bool, CodecError> {
        partial::check_boxes(repr, std::slice::from_ref(b))?;
        out.check(b.shape(), repr.data_type.size())?;
        if self.is_bare() {
            return self
                .array_to_bytes
                .decode_partial_into(reader, repr, b, out);
        }
        let part = self.decode_partial(reader, repr, std::slice::from_ref(b))?;
        partial::copy_part_into(part, repr, b, out)
    }

    /// Re-encodes one stored chunk of `repr` with `updates` (boxes and their
    /// elements in C order) applied, reading what it needs through `reader`.
    /// Returns the new encoded chunk, or `None` when every element is now
    /// the fill value. Rewrites only the inner chunks it must when the
    /// chain's [`CodecCapabilities::partial_encode`] says so; otherwise the
    /// whole chunk is read, decoded and re-encoded.
    ///
    /// # Errors
    /// [`CodecError::OutsideChunk`], [`CodecError::WrongSize`] for update
    /// data of the wrong length, a read error, or the error of a codec.
    pub fn encode_partial(
        &self,
        reader: &dyn BytesRangeReader,
        repr: &ChunkRepr,
        updates: &[(ChunkBox, ChunkData<'_>)],
    ) -> Result<Option<Vec<u8>>, CodecError> {
        partial::check_updates(repr, updates)?;
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
}

/// The representations each of `array_to_array` receives for chunks of
/// `repr`, then the one the array→bytes codec after them receives.
fn reprs(
    array_to_array: &[Arc<dyn ArrayToArrayCodec>],
    repr: &ChunkRepr,
) -> Result<Vec<ChunkRepr>, CodecError> {
    let mut reprs = Vec::with_capacity(array_to_array.len() + 1);
    reprs.push(repr.clone());
    for codec in array_to_array {
        let next = codec.encoded_repr(reprs.last().unwrap_or(repr))?;
        reprs.push(next);
    }
    Ok(reprs)
}

/// The native bytes of the `u64` indices `0..n`.
fn identity_indices(n: usize) -> ChunkData<'static> {
    let indices: Vec<u64> = (0..n as u64).collect();
    bytemuck::cast_slice::<u64, u8>(&indices).to_vec().into()
}

/// The elements of `chunk` at the `u64` indices an element-moving codec
/// produced from [`identity_indices`]: the one place such a codec applies
/// to variable-length data.
fn gather(
    chunk: &super::vlen::VlenChunk,
    indices: ChunkData<'_>,
) -> Result<ChunkData<'static>, CodecError> {
    let bytes = indices.as_fixed("chain")?;
    let indices: Vec<u64> = bytes
        .chunks_exact(8)
        .map(|b| u64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
        .collect();
    Ok(chunk.gather(&indices, "chain")?.into())
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

/// A bound on the output of the bytes→bytes step `steps` places out from
/// the innermost one, whose output is at most `innermost` bytes: each step
/// out adds what an encoder may add to incompressible input (headers,
/// checksums, stored blocks), generously: a sixteenth plus 4 KiB, where
/// zstd, gzip, bz2, lzma, lz4 and blosc add well under 1% plus a few dozen
/// bytes.
pub(crate) fn outer_bound(innermost: Option<usize>, steps: usize) -> Option<usize> {
    let mut bound = innermost?;
    for _ in 0..steps {
        bound = bound.checked_add(bound / 16)?.checked_add(4096)?;
    }
    Some(bound)
}
