//! Reads and writes of [`Selection`]s: the executor over the pure
//! selection planner of `grid/selection/`.
//!
//! A selection resolves to an outer product of factors and is grouped by
//! chunk: every chunk it touches is one task, fetched and decoded once
//! however many elements fall in it. Tasks run in batches like box reads
//! (one batched store read, decoded in parallel with rayon), so memory in
//! flight is the output plus a batch of chunks. A sharded array groups
//! each chunk's entries again by inner chunk and reads only those inner
//! chunks (`decode_partial` with one box per inner chunk touched); writes
//! go through one snapshot per chunk and retry when it changed.
//!
//! A selection that is a box walked with steps of ±1 takes the region
//! path unchanged, then flips the reversed axes in place.

use super::disjoint::DisjointOut;
use super::io::{SnapshotReader, changed_while_read, on_pool, partial_error};
use super::{Array, Element};
use crate::codec::vlen::VlenChunk;
use crate::codec::{BoxOut, BytesRangeReader, ChunkBox, ChunkData, CodecError};
use crate::error::Error;
use crate::grid::Selection;
use crate::grid::selection::{CellGrid, Entries, Grouped, ResolveError, Resolved, Task};
use crate::store::{ByteRange, ReadRequest, StoreError};
use rayon::prelude::*;
use std::sync::Arc;

/// Reverses `buf` (a C-order buffer of `shape`, `elem` items per element)
/// along each dimension of `axes`, in place.
fn flip_axes<T>(buf: &mut [T], shape: &[u64], axes: &[usize], elem: usize) {
    for &d in axes {
        let n = shape[d] as usize;
        let inner = shape[d + 1..].iter().product::<u64>() as usize * elem;
        let block = n * inner;
        if block == 0 {
            continue;
        }
        for plane in buf.chunks_exact_mut(block) {
            for i in 0..n / 2 {
                let (head, tail) = plane.split_at_mut((n - 1 - i) * inner);
                head[i * inner..(i + 1) * inner].swap_with_slice(&mut tail[..inner]);
            }
        }
    }
}

/// Whether a value of `value_shape` broadcast to `out_shape` is the value
/// itself: the shapes are equal but for leading dimensions of length 1.
fn broadcast_is_identity(value_shape: &[u64], out_shape: &[u64]) -> bool {
    let strip = |shape: &[u64]| {
        shape
            .iter()
            .skip_while(|&&n| n == 1)
            .copied()
            .collect::<Vec<_>>()
    };
    strip(value_shape) == strip(out_shape)
}

/// The element of `value` (of `value_shape`) that each element of an
/// output of `out_shape` takes under NumPy's broadcasting, in C order; or
/// `None` when the shapes do not broadcast.
fn broadcast_sources(value_shape: &[u64], out_shape: &[u64]) -> Option<Vec<u64>> {
    // Leading dimensions of length 1 of the value are dropped, as NumPy's
    // assignment does.
    let extra = value_shape.len().saturating_sub(out_shape.len());
    if value_shape[..extra].iter().any(|&n| n != 1) {
        return None;
    }
    let value_shape = &value_shape[extra..];
    let offset = out_shape.len() - value_shape.len();
    let mut strides = vec![0u64; out_shape.len()];
    let mut stride = 1u64;
    for (d, &n) in value_shape.iter().enumerate().rev() {
        let o = out_shape[offset + d];
        if n != 1 && n != o {
            return None;
        }
        if n != 1 {
            strides[offset + d] = stride;
        }
        stride *= n;
    }
    Some(
        crate::grid::GridWalk::whole(out_shape)
            .map(|index| index.iter().zip(&strides).map(|(i, s)| i * s).sum())
            .collect(),
    )
}

impl Array {
    /// Resolves `selection` against the array.
    fn resolve(&self, selection: &Selection) -> Result<Resolved, Error> {
        selection
            .resolve(self.shape(), &self.axes, self.memory_budget)
            .map_err(|error| match error {
                ResolveError::Selection(source) => Error::Selection {
                    path: self.path.clone(),
                    source,
                },
                ResolveError::MemoryBudget { what, needed } => Error::MemoryBudget {
                    path: self.path.clone(),
                    what,
                    needed,
                    budget: self.memory_budget,
                },
            })
    }

    /// The shape of what `selection` selects, as NumPy gives it.
    ///
    /// # Errors
    /// [`Error::Selection`] if the selection does not fit the array.
    pub fn selection_shape(&self, selection: &Selection) -> Result<Vec<u64>, Error> {
        Ok(self.resolve(selection)?.shape)
    }

    /// The number of elements of `resolved`, checked against the budget at
    /// `per_element` bytes each plus its index lists.
    fn selection_len(&self, resolved: &Resolved, per_element: u64) -> Result<usize, Error> {
        let n = resolved.num_elements();
        let index_bytes: u64 = resolved
            .factors
            .iter()
            .filter(|f| matches!(f.entries, Entries::Points(_)))
            .map(|f| f.len.saturating_mul(8 * (1 + 3 * f.dims.len() as u64)))
            .fold(0, u64::saturating_add);
        self.check_budget(
            n.saturating_mul(per_element).saturating_add(index_bytes),
            || format!("a selection of shape {:?}", resolved.shape),
        )?;
        usize::try_from(n).map_err(|_| Error::TooLarge {
            path: self.path.clone(),
            shape: resolved.shape.clone(),
        })
    }

    fn fixed_only(&self) -> Result<usize, Error> {
        if self.data_type().is_variable_length() {
            return Err(Error::DataTypeMismatch {
                path: self.path.clone(),
                data_type: self.data_type().clone(),
                requested: "fixed-size element bytes (use read_selection_strings)",
            });
        }
        Ok(self.data_type().size())
    }

    /// The grid selections are grouped by: chunks, and inner chunks when
    /// the chain reads them in part (a sharded array).
    fn cell_grid(&self) -> CellGrid<'_> {
        CellGrid {
            axes: &self.axes,
            shape: self.shape(),
            inner: self
                .codecs
                .capabilities()
                .partial_decode
                .then(|| self.codecs.inner_chunk_shape())
                .flatten(),
        }
    }

    /// Reads `selection` as element bytes (native byte order) in C order
    /// of its shape ([`Array::selection_shape`]).
    ///
    /// # Errors
    /// As [`Array::read_selection_bytes_into`].
    pub fn read_selection_bytes(&self, selection: &Selection) -> Result<Vec<u8>, Error> {
        let elem = self.fixed_only()?;
        let resolved = self.resolve(selection)?;
        let n = self.selection_len(&resolved, elem as u64)?;
        let mut out = self.zeroed_buffer(n * elem, "the selection's bytes")?;
        self.read_resolved(&resolved, &mut out)?;
        Ok(out)
    }

    /// Reads `selection` into `out` as element bytes (native byte order)
    /// in C order of its shape ([`Array::selection_shape`]). Missing chunks
    /// read as the fill value.
    ///
    /// # Errors
    /// [`Error::Selection`] if the selection does not fit the array,
    /// [`Error::DataTypeMismatch`] for a variable-length array,
    /// [`Error::BufferLength`], [`Error::MemoryBudget`], or a store or
    /// decode error naming the chunk.
    pub fn read_selection_bytes_into(
        &self,
        selection: &Selection,
        out: &mut [u8],
    ) -> Result<(), Error> {
        let elem = self.fixed_only()?;
        let resolved = self.resolve(selection)?;
        let n = self.selection_len(&resolved, 0)?;
        if out.len() != n * elem {
            return Err(Error::BufferLength {
                path: self.path.clone(),
                expected: (n * elem) as u64,
                actual: out.len() as u64,
            });
        }
        self.read_resolved(&resolved, out)
    }

    /// Reads `selection` into a new vector, in C order of its shape
    /// ([`Array::selection_shape`]).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use zarrkit::{Array, Selection, metadata::DataType, store::MemoryStore};
    /// let array = Array::builder(&[4, 5], DataType::Int32, &[2, 2])
    ///     .create(Arc::new(MemoryStore::new()), "/a")?;
    /// let values: Vec<i32> = (0..20).collect();
    /// array.write_region(&zarrkit::Region::whole(&[4, 5]), &values)?;
    /// let selection = Selection::parse("::-2, [0, -1]")?;
    /// assert_eq!(array.selection_shape(&selection)?, [2, 2]);
    /// assert_eq!(array.read_selection::<i32>(&selection)?, [15, 19, 5, 9]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`Array::read_selection_bytes_into`], and
    /// [`Error::DataTypeMismatch`] if `T` does not hold the data type.
    pub fn read_selection<T: Element>(&self, selection: &Selection) -> Result<Vec<T>, Error> {
        self.check_element::<T>()?;
        let elem = self.fixed_only()?;
        let resolved = self.resolve(selection)?;
        let n = self.selection_len(&resolved, elem as u64)?;
        let mut out = crate::store::pages::result_vec(n, T::zero());
        match T::as_bytes_mut(&mut out) {
            Some(bytes) => self.read_resolved(&resolved, bytes)?,
            None => {
                let mut bytes = self.zeroed_buffer(n * elem, "the selection's bytes")?;
                self.read_resolved(&resolved, &mut bytes)?;
                self.elements_from_bytes(&bytes, &mut out)?;
            }
        }
        Ok(out)
    }

    /// Reads `selection` into `out` (C order of its shape, exactly its
    /// elements).
    ///
    /// # Errors
    /// As [`Array::read_selection`], and [`Error::BufferLength`].
    pub fn read_selection_into<T: Element>(
        &self,
        selection: &Selection,
        out: &mut [T],
    ) -> Result<(), Error> {
        self.check_element::<T>()?;
        if let Some(bytes) = T::as_bytes_mut(out) {
            return self.read_selection_bytes_into(selection, bytes);
        }
        let bytes = self.read_selection_bytes(selection)?;
        self.elements_from_bytes(&bytes, out)
    }

    /// Reads `selection` of a variable-length array (`string`, `bytes`):
    /// the elements' bytes in C order of its shape.
    ///
    /// # Errors
    /// [`Error::DataTypeMismatch`] for a fixed-size array, and as
    /// [`Array::read_selection_bytes_into`].
    pub fn read_selection_vlen(&self, selection: &Selection) -> Result<VlenChunk, Error> {
        self.vlen_only("variable-length elements")?;
        let resolved = self.resolve(selection)?;
        let n = self.selection_len(&resolved, std::mem::size_of::<Vec<u8>>() as u64)?;
        if n == 0 {
            return Ok(VlenChunk::default());
        }
        if let Some((region, flip)) = resolved.as_box() {
            let chunk = self.read_vlen(&region)?;
            if flip.is_empty() {
                return Ok(chunk);
            }
            let mut order: Vec<usize> = (0..n).collect();
            flip_axes(&mut order, region.shape(), &flip, 1);
            return Ok(VlenChunk::from_items(
                order.iter().map(|&i| chunk.get(i).unwrap_or_default()),
            ));
        }
        let mut out: Vec<Vec<u8>> = vec![Vec::new(); n];
        let shared = DisjointOut::new(&mut out);
        self.gather_resolved(&resolved, &|cell_data, runs| {
            for &(b, step, o, len) in runs {
                let fill = || self.fill_value().as_bytes().to_vec();
                let item = |j: usize| match cell_data {
                    Some(ChunkData::Vlen(chunk)) => chunk
                        .get(b.wrapping_add_signed(step * j as isize))
                        .unwrap_or_default()
                        .to_vec(),
                    _ => fill(),
                };
                // SAFETY: the runs of a selection read are disjoint (one per
                // output element, module doc of `disjoint`).
                #[allow(unsafe_code)]
                unsafe {
                    shared.with_range(o, len, |dst| {
                        for (j, d) in dst.iter_mut().enumerate() {
                            *d = item(j);
                        }
                    });
                }
            }
        })?;
        Ok(VlenChunk::from_items(out))
    }

    /// Reads `resolved` into `out` (checked to hold its elements).
    fn read_resolved(&self, resolved: &Resolved, out: &mut [u8]) -> Result<(), Error> {
        if resolved.num_elements() == 0 {
            return Ok(());
        }
        let elem = self.data_type().size();
        if let Some((region, flip)) = resolved.as_box() {
            // The region read decides itself whether to enter the pool.
            self.read_region_bytes_into(&region, out)?;
            flip_axes(out, region.shape(), &flip, elem);
            return Ok(());
        }
        if let Some(result) = on_pool(self.store.concurrency(), || {
            self.read_resolved(resolved, out)
        }) {
            return result;
        }
        let fill = self.fill_value();
        let shared = DisjointOut::new(out);
        /// Puts `runs` of `data` (elements of `E` bytes):
        /// a run of one element is one move of `E` bytes.
        fn put<const E: usize>(
            shared: &DisjointOut<'_, u8>,
            data: Option<&ChunkData<'_>>,
            runs: &[Run],
            fill: &crate::metadata::FillValue,
        ) {
            for &(b, step, o, len) in runs {
                // SAFETY: the runs of a selection read are disjoint (one
                // per output element, module doc of `disjoint`).
                #[allow(unsafe_code)]
                unsafe {
                    shared.with_range(o * E, len * E, |dst| match data {
                        Some(ChunkData::Fixed(bytes)) if len == 1 => {
                            dst.copy_from_slice(&bytes[b * E..b * E + E]);
                        }
                        Some(ChunkData::Fixed(bytes)) => copy_run(bytes, b, step, dst, E),
                        _ => fill.fill(dst),
                    });
                }
            }
        }
        self.gather_resolved(resolved, &|cell_data, runs| match elem {
            1 => put::<1>(&shared, cell_data, runs, fill),
            2 => put::<2>(&shared, cell_data, runs, fill),
            4 => put::<4>(&shared, cell_data, runs, fill),
            8 => put::<8>(&shared, cell_data, runs, fill),
            _ => {
                for &(b, step, o, len) in runs {
                    // SAFETY: as in `put`.
                    #[allow(unsafe_code)]
                    unsafe {
                        shared.with_range(o * elem, len * elem, |dst| match cell_data {
                            Some(ChunkData::Fixed(bytes)) => copy_run(bytes, b, step, dst, elem),
                            _ => fill.fill(dst),
                        });
                    }
                }
            }
        })
    }

    /// The read engine of selections: groups `resolved` by chunk, fetches
    /// and decodes each chunk touched once (a batch at a time, decoded in
    /// parallel; a sharded array's inner chunks through partial reads), and
    /// calls `put(data, (buffer offset, buffer step, output offset, len))`
    /// for each strided run of elements (`data` is `None` for a chunk not
    /// stored) from the task that decoded it, so in parallel.
    fn gather_resolved(&self, resolved: &Resolved, put: &Put<'_>) -> Result<(), Error> {
        let grid = self.cell_grid();
        let partial = grid.inner.is_some();
        let grouped = Grouped::new(resolved, grid, false);
        let mut tasks = grouped.tasks().peekable();
        while tasks.peek().is_some() {
            let batch: Vec<Task> = tasks.by_ref().take(self.batch_size()).collect();
            let scatter = |task: &Task, cells: Vec<CellData>| {
                for cell in cells {
                    let data = cell.data.as_deref();
                    put_runs(
                        &grouped,
                        task,
                        &cell.cell,
                        (&cell.start, &cell.shape),
                        data,
                        put,
                    );
                }
            };
            if partial {
                let fixed = !self.data_type().is_variable_length();
                batch.into_par_iter().try_for_each(|task| {
                    if fixed && self.dense_cells(&grouped, &task) {
                        return self.gather_cells(&grouped, &task, put);
                    }
                    let cells = self.read_cells(&grouped, &task)?;
                    scatter(&task, cells);
                    Ok::<_, Error>(())
                })?;
            } else {
                let keys = batch
                    .iter()
                    .map(|task| Ok((self.layout.chunk_key(&task.chunk_coords)?, None)))
                    .collect::<Result<Vec<ReadRequest>, Error>>()?;
                let fetched = self.store.get_partial_values(&keys)?;
                batch.into_par_iter().zip(keys).zip(fetched).try_for_each(
                    |((task, (key, _)), bytes)| {
                        let repr = self.chunk_repr_at(&task.chunk_coords);
                        let data = self.decode_chunk(&key, &repr, bytes)?.map(Arc::new);
                        let cells = grouped
                            .cells(&task)
                            .into_iter()
                            .map(|cell| CellData {
                                cell,
                                start: vec![0; self.ndim()],
                                shape: repr.shape.clone(),
                                data: data.clone(),
                            })
                            .collect();
                        scatter(&task, cells);
                        Ok::<_, Error>(())
                    },
                )?;
            }
        }
        Ok(())
    }

    /// Whether `task`'s cells hold enough entries (on average one in 256
    /// of their elements) that each is read whole, as [`Self::gather_cells`]
    /// does, rather than only its entries' bounding box.
    fn dense_cells(&self, grouped: &Grouped<'_>, task: &Task) -> bool {
        let Some(inner) = grouped.inner_shape() else {
            return false;
        };
        let volume: u64 = inner.iter().product();
        let cells = grouped.cells(task).len() as u64;
        grouped.task_len(task).saturating_mul(256) >= cells.saturating_mul(volume)
    }

    /// Reads each cell (inner chunk) of `task` that the selection touches
    /// whole, straight into this thread's reused buffer (no allocation and
    /// no page faults per inner chunk, no copy of a box), and puts its
    /// elements from there: `gather_resolved` for fixed-size elements.
    fn gather_cells(&self, grouped: &Grouped<'_>, task: &Task, put: &Put<'_>) -> Result<(), Error> {
        thread_local! {
            /// One decoded inner chunk of a sharded array, kept between tasks.
            static CELL: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
        }
        let key = self.layout.chunk_key(&task.chunk_coords)?;
        let repr = self.chunk_repr_at(&task.chunk_coords);
        let inner = grouped.inner_shape().unwrap_or(&repr.shape);
        let elem = repr.data_type.size();
        let cells = grouped.cells(task);
        // Taken, not borrowed: a task stolen by this thread while a decode
        // waits on rayon finds it empty and allocates its own.
        let mut buf = CELL.take();
        let result = (|| 'fresh: loop {
            let seen = self.generation(&key);
            let snapshot = self.store.snapshot(&key)?;
            let reader = RepeatReader {
                reader: &SnapshotReader(&*snapshot),
                first: std::sync::OnceLock::new(),
            };
            for cell in &cells {
                let (start, shape) = grouped.cell_extent(cell, &repr.shape, inner);
                let len = shape.iter().product::<u64>() as usize * elem;
                buf.resize(len, 0);
                let b = ChunkBox::new(start, shape);
                let zeros = vec![0; b.ndim()];
                let out = BoxOut {
                    buf: &mut buf[..len],
                    shape: b.shape(),
                    start: &zeros,
                };
                let stored = match self.codecs.decode_partial_into(&reader, &repr, &b, out) {
                    Ok(stored) => stored,
                    // Replaced on object storage while read: read again.
                    Err(err) if changed_while_read(&err) => continue 'fresh,
                    Err(source) => return Err(partial_error(&key, source, false)),
                };
                let data = ChunkData::Fixed(std::borrow::Cow::Borrowed(&buf[..len]));
                let data = stored.then_some(&data);
                put_runs(grouped, task, cell, (b.start(), b.shape()), data, put);
            }
            // Read unpinned while another thread replaced it: read again
            // (every element is put again).
            if snapshot.version().is_some() || self.generation(&key) == seen {
                return Ok(());
            }
        })();
        CELL.set(buf);
        result
    }

    /// Reads the cells (inner chunks) of `task` that the selection touches,
    /// each its entries' bounding box, through the chain's partial
    /// decoder from one snapshot of the chunk.
    fn read_cells(&self, grouped: &Grouped<'_>, task: &Task) -> Result<Vec<CellData>, Error> {
        let key = self.layout.chunk_key(&task.chunk_coords)?;
        let repr = self.chunk_repr_at(&task.chunk_coords);
        let cells = grouped.cells(task);
        let boxes: Vec<ChunkBox> = cells
            .iter()
            .map(|cell| {
                let (start, shape) = grouped.cell_box(cell);
                ChunkBox::new(start, shape)
            })
            .collect();
        let parts = loop {
            let seen = self.generation(&key);
            let snapshot = self.store.snapshot(&key)?;
            let result = self
                .codecs
                .decode_partial(&SnapshotReader(&*snapshot), &repr, &boxes);
            if snapshot.version().is_none() && self.generation(&key) != seen {
                continue;
            }
            if matches!(&result, Err(err) if changed_while_read(err)) {
                continue;
            }
            break result.map_err(|source| partial_error(&key, source, false))?;
        };
        let mut parts = parts.map(Vec::into_iter);
        Ok(cells
            .into_iter()
            .zip(boxes)
            .map(|(cell, b)| CellData {
                cell,
                start: b.start().to_vec(),
                shape: b.shape().to_vec(),
                data: parts.as_mut().and_then(Iterator::next).map(Arc::new),
            })
            .collect())
    }
}

/// A reader that answers its first request again from memory when it is
/// repeated: a shard's index, read for every inner chunk
/// [`Array::gather_cells`] decodes on its own.
struct RepeatReader<'a> {
    reader: &'a dyn BytesRangeReader,
    /// The first request and its answer.
    first: std::sync::OnceLock<(Vec<ByteRange>, Values)>,
}

/// What a [`BytesRangeReader`] answers.
type Values = Option<Vec<Vec<u8>>>;

impl BytesRangeReader for RepeatReader<'_> {
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>, CodecError> {
        if let Some((first, values)) = self.first.get() {
            if first == ranges {
                return Ok(values.clone());
            }
            return self.reader.read_ranges(ranges);
        }
        let values = self.reader.read_ranges(ranges)?;
        let _ = self.first.set((ranges.to_vec(), values.clone()));
        Ok(values)
    }
}

/// Where a selection read puts a strided run of elements, called from the
/// parallel tasks: the decoded data of their cell (`None` for a chunk not
/// stored) and (offset in it, step in it, offset in the output, length).
type Put<'p> = dyn Fn(Option<&ChunkData<'_>>, &[Run]) + Sync + 'p;

/// A strided run: (offset in the chunk's data, step in it, offset in the
/// output, length), in elements.
type Run = (usize, isize, usize, usize);

/// The most runs handed to a [`Put`] at once: a selection of scattered
/// elements is mostly runs of one, so `put` is called per batch rather
/// than per element, with memory bounded however large the chunk.
const RUN_BATCH: usize = 1024;

/// Calls `put(data, runs)` with the strided runs of `cell` of `task` (a
/// box of `shape` at chunk-local `origin`), [`RUN_BATCH`] at a time.
fn put_runs(
    grouped: &Grouped<'_>,
    task: &Task,
    cell: &[usize],
    (origin, shape): (&[u64], &[u64]),
    data: Option<&ChunkData<'_>>,
    put: &Put<'_>,
) {
    let mut runs: Vec<Run> = Vec::with_capacity(RUN_BATCH);
    grouped.for_each_strided_run(task, cell, origin, shape, |b, step, o, len| {
        runs.push((b, step, o, len));
        if runs.len() == RUN_BATCH {
            put(data, &runs);
            runs.clear();
        }
    });
    if !runs.is_empty() {
        put(data, &runs);
    }
}

/// Copies the strided run of `dst.len() / elem` elements of `elem` bytes
/// at element `b` (then every `step` elements) of `src` into `dst`.
fn copy_run(src: &[u8], b: usize, step: isize, dst: &mut [u8], elem: usize) {
    /// The same for a fixed element size `E` (`P` = 2 × `E`), so each
    /// element is one move; a reversed run and a run of every second
    /// element (`::-1`, `::2`, the common strides) check their span once
    /// rather than each element, which lets them vectorize.
    fn typed<const E: usize, const P: usize>(src: &[u8], b: usize, step: isize, dst: &mut [u8]) {
        let (elems, _) = dst.as_chunks_mut::<E>();
        let n = elems.len();
        match step {
            -1 if n > 0 => {
                let (src, _) = src[(b + 1 - n) * E..(b + 1) * E].as_chunks::<E>();
                for (d, s) in elems.iter_mut().zip(src.iter().rev()) {
                    *d = *s;
                }
            }
            2 if n > 0 => {
                let last = (b + 2 * (n - 1)) * E;
                let (pairs, _) = src[b * E..last].as_chunks::<P>();
                for (d, s) in elems[..n - 1].iter_mut().zip(pairs) {
                    d.copy_from_slice(&s[..E]);
                }
                elems[n - 1].copy_from_slice(&src[last..last + E]);
            }
            _ => {
                for (j, d) in elems.iter_mut().enumerate() {
                    let s = b.wrapping_add_signed(step * j as isize) * E;
                    d.copy_from_slice(&src[s..s + E]);
                }
            }
        }
    }
    if step == 1 && dst.len() != elem {
        dst.copy_from_slice(&src[b * elem..b * elem + dst.len()]);
        return;
    }
    match elem {
        1 => typed::<1, 2>(src, b, step, dst),
        2 => typed::<2, 4>(src, b, step, dst),
        4 => typed::<4, 8>(src, b, step, dst),
        8 => typed::<8, 16>(src, b, step, dst),
        16 => typed::<16, 32>(src, b, step, dst),
        _ => {
            for (j, d) in dst.chunks_exact_mut(elem.max(1)).enumerate() {
                let s = b.wrapping_add_signed(step * j as isize) * elem;
                d.copy_from_slice(&src[s..s + elem]);
            }
        }
    }
}

/// One cell of a chunk, read: the chunk-local box its data holds.
struct CellData {
    cell: Vec<usize>,
    start: Vec<u64>,
    shape: Vec<u64>,
    /// `None` when the chunk is not stored.
    data: Option<Arc<ChunkData<'static>>>,
}

impl Array {
    /// Writes `data` (C order, exactly the selection's elements, as
    /// [`Array::selection_shape`] gives them) into `selection`. Where the
    /// selection names an element more than once, the last value wins, as
    /// in NumPy. Chunks the selection covers entirely are encoded without
    /// being read; others are read, updated and rewritten through one
    /// snapshot (a sharded array rewrites only the inner chunks touched),
    /// safely against concurrent writers in this process.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use zarrkit::{Array, Selection, metadata::DataType, store::MemoryStore};
    /// let array = Array::builder(&[6], DataType::UInt8, &[4])
    ///     .create(Arc::new(MemoryStore::new()), "/a")?;
    /// array.write_selection(&Selection::parse("::-2")?, &[1u8, 2, 3])?;
    /// array.write_selection(&Selection::parse("[0, 0]")?, &[7u8, 8])?;
    /// assert_eq!(array.read_selection::<u8>(&Selection::all())?, [8, 3, 0, 2, 0, 1]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Selection`] if the selection does not fit the array,
    /// [`Error::DataTypeMismatch`], [`Error::BufferLength`], or a store or
    /// encode error naming the chunk.
    pub fn write_selection<T: Element>(
        &self,
        selection: &Selection,
        data: &[T],
    ) -> Result<(), Error> {
        self.check_element::<T>()?;
        self.write_selection_bytes(selection, &T::as_bytes(data))
    }

    /// Writes `value` into every element of `selection`.
    ///
    /// # Errors
    /// As [`Array::write_selection`].
    pub fn write_selection_scalar<T: Element>(
        &self,
        selection: &Selection,
        value: T,
    ) -> Result<(), Error> {
        self.write_selection_broadcast(selection, &[value], &[])
    }

    /// Writes `data`, an array of `data_shape` (C order), into `selection`
    /// with NumPy's broadcasting: aligned from the last dimension, each of
    /// `data_shape`'s lengths equals the selection's or is 1.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] when the shapes do not broadcast,
    /// [`Error::BufferLength`] if `data` does not fill `data_shape`, and as
    /// [`Array::write_selection`].
    pub fn write_selection_broadcast<T: Element>(
        &self,
        selection: &Selection,
        data: &[T],
        data_shape: &[u64],
    ) -> Result<(), Error> {
        self.check_element::<T>()?;
        self.write_selection_bytes_broadcast(selection, &T::as_bytes(data), data_shape)
    }

    /// Writes element bytes (native byte order), an array of `data_shape`
    /// in C order, into `selection` with NumPy's broadcasting, as
    /// [`Array::write_selection_broadcast`] does.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use zarrkit::{Array, Selection, metadata::DataType, store::MemoryStore};
    /// let array = Array::builder(&[2, 3], DataType::UInt16, &[2, 2])
    ///     .create(Arc::new(MemoryStore::new()), "/a")?;
    /// let row: Vec<u8> = [1u16, 2, 3].iter().flat_map(|v| v.to_ne_bytes()).collect();
    /// array.write_selection_bytes_broadcast(&Selection::all(), &row, &[3])?;
    /// assert_eq!(array.read_selection::<u16>(&Selection::all())?, [1, 2, 3, 1, 2, 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`Array::write_selection_broadcast`].
    pub fn write_selection_bytes_broadcast(
        &self,
        selection: &Selection,
        data: &[u8],
        data_shape: &[u64],
    ) -> Result<(), Error> {
        let elem = self.fixed_only()?;
        let expected = data_shape
            .iter()
            .try_fold(elem as u64, |a, &n| a.checked_mul(n));
        if expected != Some(data.len() as u64) {
            return Err(Error::BufferLength {
                path: self.path.clone(),
                expected: expected.unwrap_or(u64::MAX),
                actual: data.len() as u64,
            });
        }
        let resolved = self.resolve(selection)?;
        if broadcast_is_identity(data_shape, &resolved.shape) {
            // The value has the selection's shape: written as it is, with
            // no index of sources and no copy.
            self.selection_len(&resolved, 0)?;
            return self.write_resolved(&resolved, &ChunkData::from(data));
        }
        let n = self.selection_len(&resolved, elem as u64)?;
        let mut full = self.zeroed_buffer(n * elem, "the broadcast value")?;
        if data.len() == elem {
            // One element (a scalar): repeated, with no index of sources.
            for dst in full.chunks_exact_mut(elem.max(1)) {
                dst.copy_from_slice(data);
            }
        } else {
            let sources = self.broadcast(data_shape, &resolved.shape)?;
            for (dst, &src) in full.chunks_exact_mut(elem.max(1)).zip(&sources) {
                let src = src as usize * elem;
                dst.copy_from_slice(&data[src..src + elem]);
            }
        }
        self.write_resolved(&resolved, &ChunkData::from(full))
    }

    /// Writes variable-length elements, an array of `data_shape` in C
    /// order, into `selection` of a `string` or `bytes` array with NumPy's
    /// broadcasting, as [`Array::write_selection_broadcast`] does.
    ///
    /// # Errors
    /// As [`Array::write_selection_vlen`], and [`Error::InvalidInput`] when
    /// the shapes do not broadcast.
    pub fn write_selection_vlen_broadcast(
        &self,
        selection: &Selection,
        data: &VlenChunk,
        data_shape: &[u64],
    ) -> Result<(), Error> {
        self.vlen_only("variable-length elements")?;
        let expected = data_shape.iter().try_fold(1u64, |a, &n| a.checked_mul(n));
        if expected != Some(data.len() as u64) {
            return Err(Error::BufferLength {
                path: self.path.clone(),
                expected: expected.unwrap_or(u64::MAX),
                actual: data.len() as u64,
            });
        }
        self.check_utf8(data)?;
        let resolved = self.resolve(selection)?;
        if broadcast_is_identity(data_shape, &resolved.shape) {
            self.selection_len(&resolved, 0)?;
            return self.write_resolved(&resolved, &ChunkData::from(data));
        }
        self.selection_len(&resolved, std::mem::size_of::<Vec<u8>>() as u64)?;
        let sources = self.broadcast(data_shape, &resolved.shape)?;
        let full = VlenChunk::from_items(
            sources
                .iter()
                .map(|&src| data.get(src as usize).unwrap_or_default()),
        );
        self.write_resolved(&resolved, &ChunkData::from(&full))
    }

    /// The source element of each output element when a value of
    /// `value_shape` is broadcast to `out_shape`.
    fn broadcast(&self, value_shape: &[u64], out_shape: &[u64]) -> Result<Vec<u64>, Error> {
        broadcast_sources(value_shape, out_shape).ok_or_else(|| Error::InvalidInput {
            path: self.path.clone(),
            reason: format!(
                "a value of shape {value_shape:?} cannot be broadcast to the selection's shape {out_shape:?}"
            ),
        })
    }

    /// Writes element bytes (native byte order, C order, exactly the
    /// selection's elements) into `selection`; see
    /// [`Array::write_selection`].
    ///
    /// # Errors
    /// As [`Array::write_selection`].
    pub fn write_selection_bytes(&self, selection: &Selection, data: &[u8]) -> Result<(), Error> {
        let elem = self.fixed_only()?;
        let resolved = self.resolve(selection)?;
        let n = self.selection_len(&resolved, 0)?;
        if data.len() != n * elem {
            return Err(Error::BufferLength {
                path: self.path.clone(),
                expected: (n * elem) as u64,
                actual: data.len() as u64,
            });
        }
        self.write_resolved(&resolved, &ChunkData::from(data))
    }

    /// Writes variable-length elements (C order, exactly the selection's
    /// elements) into `selection` of a `string` or `bytes` array; see
    /// [`Array::write_selection`].
    ///
    /// # Errors
    /// [`Error::DataTypeMismatch`] for a fixed-size array,
    /// [`Error::InvalidInput`] for a `string` element that is not UTF-8,
    /// and as [`Array::write_selection`].
    pub fn write_selection_vlen(
        &self,
        selection: &Selection,
        data: &VlenChunk,
    ) -> Result<(), Error> {
        self.vlen_only("variable-length elements")?;
        let resolved = self.resolve(selection)?;
        let n = self.selection_len(&resolved, 0)?;
        if data.len() != n {
            return Err(Error::BufferLength {
                path: self.path.clone(),
                expected: n as u64,
                actual: data.len() as u64,
            });
        }
        self.check_utf8(data)?;
        self.write_resolved(&resolved, &ChunkData::from(data))
    }

    /// The write engine of selections: `data` holds the selection's
    /// elements in C order of its shape.
    ///
    /// A box goes through `write_region_bytes` (whose engine settles the
    /// store before it returns); other selections store each chunk at once.
    fn write_resolved(&self, resolved: &Resolved, data: &ChunkData<'_>) -> Result<(), Error> {
        if resolved.num_elements() == 0 {
            return Ok(());
        }
        if let Some(result) = on_pool(self.store.concurrency(), || {
            self.write_resolved(resolved, data)
        }) {
            return result;
        }
        self.chunk_len(&self.chunk_repr)?;
        if let Some((region, flip)) = resolved.as_box() {
            return match data {
                ChunkData::Fixed(bytes) if flip.is_empty() => {
                    self.write_region_bytes(&region, bytes)
                }
                ChunkData::Fixed(bytes) => {
                    let mut flipped = bytes.to_vec();
                    flip_axes(&mut flipped, region.shape(), &flip, self.data_type().size());
                    self.write_region_bytes(&region, &flipped)
                }
                ChunkData::Vlen(chunk) => {
                    let mut order: Vec<usize> = (0..chunk.len()).collect();
                    flip_axes(&mut order, region.shape(), &flip, 1);
                    let chunk = VlenChunk::from_items(
                        order.iter().map(|&i| chunk.get(i).unwrap_or_default()),
                    );
                    self.write_vlen(&region, &chunk)
                }
            };
        }
        let grid = self.cell_grid();
        let partial = grid.inner.is_some() && self.codecs.capabilities().partial_encode;
        let grouped = Grouped::new(resolved, grid, true);
        let mut tasks = grouped.tasks().peekable();
        while tasks.peek().is_some() {
            let batch: Vec<Task> = tasks.by_ref().take(self.batch_size()).collect();
            batch.par_iter().try_for_each(|task| {
                // A shard the selection covers is encoded whole, unread.
                if partial && !grouped.covers_chunk(task) {
                    self.write_cells(&grouped, task, data)
                } else {
                    self.write_task(&grouped, task, data)
                }
            })?;
        }
        Ok(())
    }

    /// `base` (a box of `shape` at chunk-local `start`) with `cell`'s
    /// elements taken from `data`.
    #[allow(clippy::too_many_arguments)]
    fn scatter_cell(
        &self,
        grouped: &Grouped<'_>,
        task: &Task,
        cell: &[usize],
        start: &[u64],
        shape: &[u64],
        base: ChunkData<'static>,
        data: &ChunkData<'_>,
    ) -> Result<ChunkData<'static>, CodecError> {
        match (base, data) {
            (ChunkData::Fixed(base), ChunkData::Fixed(values)) => {
                let elem = self.data_type().size();
                let mut base = base.into_owned();
                grouped.for_each_run(task, cell, start, shape, |b, o, len| {
                    base[b * elem..(b + len) * elem]
                        .copy_from_slice(&values[o * elem..(o + len) * elem]);
                });
                Ok(base.into())
            }
            (ChunkData::Vlen(base), ChunkData::Vlen(values)) => {
                let mut from = vec![usize::MAX; base.len()];
                grouped.for_each_run(task, cell, start, shape, |b, o, len| {
                    for j in 0..len {
                        from[b + j] = o + j;
                    }
                });
                Ok(
                    VlenChunk::from_items(from.iter().enumerate().map(|(i, &o)| {
                        if o == usize::MAX {
                            base.get(i).unwrap_or_default()
                        } else {
                            values.get(o).unwrap_or_default()
                        }
                    }))
                    .into(),
                )
            }
            (base, _) => base.into_fixed("array").map(ChunkData::from),
        }
    }

    /// Writes the elements of one task into its whole chunk: built from the
    /// fill value when the task covers the chunk, else read through a
    /// snapshot, updated and stored unless it changed meanwhile.
    fn write_task(
        &self,
        grouped: &Grouped<'_>,
        task: &Task,
        data: &ChunkData<'_>,
    ) -> Result<(), Error> {
        let key = self.layout.chunk_key(&task.chunk_coords)?;
        let repr = self.chunk_repr_at(&task.chunk_coords);
        let cells = grouped.cells(task);
        let zeros = vec![0; self.ndim()];
        let encode_error = |source| Error::Encode {
            key: key.clone(),
            source,
        };
        let build = |old: Option<ChunkData<'static>>| -> Result<Option<Vec<u8>>, Error> {
            let mut chunk = match old {
                Some(old) => old,
                None => ChunkData::fill(&repr, &repr.shape).map_err(encode_error)?,
            };
            for cell in &cells {
                chunk = self
                    .scatter_cell(grouped, task, cell, &zeros, &repr.shape, chunk, data)
                    .map_err(encode_error)?;
            }
            if !self.write_empty_chunks && chunk.is_fill(&repr) {
                return Ok(None);
            }
            self.codecs
                .encode(chunk, &repr)
                .map(Some)
                .map_err(encode_error)
        };
        if grouped.covers_chunk(task) {
            let value = build(None)?;
            return self.commit(&key, value.as_deref(), None).map(|_| ());
        }
        loop {
            let seen = self.generation(&key);
            let snapshot = self.store.snapshot(&key)?;
            let old = match snapshot.read(&[None]) {
                Ok(old) => old.and_then(|mut v| v.pop()),
                Err(StoreError::Changed { .. }) => continue,
                Err(err) => return Err(err.into()),
            };
            let version = snapshot.version();
            drop(snapshot);
            let result = self.decode_chunk(&key, &repr, old).and_then(&build);
            match result {
                Ok(value) => {
                    if self.commit_if_unchanged(&key, value.as_deref(), seen, version.as_ref())? {
                        return Ok(());
                    }
                }
                // A chunk replaced while it was read (unpinned) is read again.
                Err(_) if version.is_none() && self.generation(&key) != seen => {}
                Err(err) => return Err(err),
            }
        }
    }

    /// Writes the elements of one task into the inner chunks it touches,
    /// through the chain's partial encoder: each touched cell's box is
    /// read (unless the selection covers the cell), updated and re-encoded
    /// from one snapshot of the chunk, and stored unless it changed.
    fn write_cells(
        &self,
        grouped: &Grouped<'_>,
        task: &Task,
        data: &ChunkData<'_>,
    ) -> Result<(), Error> {
        let key = self.layout.chunk_key(&task.chunk_coords)?;
        let repr = self.chunk_repr_at(&task.chunk_coords);
        let cells = grouped.cells(task);
        let boxes: Vec<(ChunkBox, bool)> = cells
            .iter()
            .map(|cell| {
                let (start, shape) = grouped.cell_box(cell);
                (ChunkBox::new(start, shape), grouped.covers_cell(task, cell))
            })
            .collect();
        let read: Vec<ChunkBox> = boxes
            .iter()
            .filter(|(_, covered)| !covered)
            .map(|(b, _)| b.clone())
            .collect();
        let encode_error = |source| Error::Encode {
            key: key.clone(),
            source,
        };
        loop {
            let seen = self.generation(&key);
            let snapshot = self.store.snapshot(&key)?;
            let reader = SnapshotReader(&*snapshot);
            let result = (|| -> Result<Option<Vec<u8>>, CodecError> {
                let old = if read.is_empty() {
                    None
                } else {
                    self.codecs.decode_partial(&reader, &repr, &read)?
                };
                let mut old = old.map(Vec::into_iter);
                let mut updates = Vec::with_capacity(cells.len());
                for (cell, (b, covered)) in cells.iter().zip(&boxes) {
                    let base = match (covered, old.as_mut()) {
                        (false, Some(parts)) => parts.next(),
                        _ => None,
                    };
                    let base = match base {
                        Some(base) => base,
                        None => ChunkData::fill(&repr, b.shape())?,
                    };
                    let updated =
                        self.scatter_cell(grouped, task, cell, b.start(), b.shape(), base, data)?;
                    updates.push((b.clone(), updated));
                }
                self.codecs.encode_partial(&reader, &repr, &updates)
            })();
            let version = snapshot.version();
            drop(snapshot);
            let value = match result {
                Ok(value) => value,
                // Read unpinned while another thread replaced it, or
                // replaced on object storage while read: read again.
                Err(_) if version.is_none() && self.generation(&key) != seen => continue,
                Err(err) if changed_while_read(&err) => continue,
                Err(source) => return Err(partial_error(&key, source, true)),
            };
            let value = match value {
                None if self.write_empty_chunks => {
                    let fill = ChunkData::fill(&repr, &repr.shape).map_err(encode_error)?;
                    Some(self.codecs.encode(fill, &repr).map_err(encode_error)?)
                }
                value => value,
            };
            if self.commit_if_unchanged(&key, value.as_deref(), seen, version.as_ref())? {
                return Ok(());
            }
        }
    }
}

impl Array {
    /// Reads `selection` as strings; the data types and conversions are
    /// [`Array::read_strings`]'.
    ///
    /// # Errors
    /// As [`Array::read_strings`], and [`Error::Selection`].
    pub fn read_selection_strings(&self, selection: &Selection) -> Result<Vec<String>, Error> {
        self.strings_from(
            || self.read_selection_vlen(selection),
            || self.read_selection_bytes(selection),
        )
    }

    /// Reads `selection` as byte strings; the data types and conversions
    /// are [`Array::read_byte_strings`]'.
    ///
    /// # Errors
    /// As [`Array::read_byte_strings`], and [`Error::Selection`].
    pub fn read_selection_byte_strings(
        &self,
        selection: &Selection,
    ) -> Result<Vec<Vec<u8>>, Error> {
        self.byte_strings_from(
            || self.read_selection_vlen(selection),
            || self.read_selection_bytes(selection),
        )
    }

    /// Writes strings (C order, exactly the selection's elements) into
    /// `selection`; the data types and conversions are
    /// [`Array::write_strings`]'.
    ///
    /// # Errors
    /// As [`Array::write_strings`], and [`Error::Selection`].
    pub fn write_selection_strings<S: AsRef<str>>(
        &self,
        selection: &Selection,
        data: &[S],
    ) -> Result<(), Error> {
        match self.strings_data(data)? {
            ChunkData::Vlen(chunk) => self.write_selection_vlen(selection, &chunk),
            ChunkData::Fixed(bytes) => self.write_selection_bytes(selection, &bytes),
        }
    }
}

#[cfg(feature = "ndarray")]
impl Array {
    /// Reads `selection` as an `ndarray` array of its shape.
    ///
    /// # Errors
    /// As [`Array::read_selection`].
    pub fn read_selection_ndarray<T: Element>(
        &self,
        selection: &Selection,
    ) -> Result<ndarray::ArrayD<T>, Error> {
        let shape = self.selection_shape(selection)?;
        let data = self.read_selection::<T>(selection)?;
        let dims: Vec<usize> = shape.iter().map(|&n| n as usize).collect();
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&dims), data).map_err(|_| Error::TooLarge {
            path: self.path.clone(),
            shape,
        })
    }

    /// Writes an `ndarray` view into `selection`, broadcast to the
    /// selection's shape as NumPy does.
    ///
    /// # Errors
    /// As [`Array::write_selection_broadcast`].
    pub fn write_selection_ndarray<T: Element>(
        &self,
        selection: &Selection,
        data: ndarray::ArrayViewD<'_, T>,
    ) -> Result<(), Error> {
        let shape: Vec<u64> = data.shape().iter().map(|&n| n as u64).collect();
        let standard = data.as_standard_layout();
        match standard.as_slice() {
            Some(slice) => self.write_selection_broadcast(selection, slice, &shape),
            None => self.write_selection_broadcast(
                selection,
                &standard.iter().copied().collect::<Vec<_>>(),
                &shape,
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An array write, of a region or a selection, returns once the
    /// filesystem store has removed the values it replaced (on its I/O
    /// threads; each removal made 50 ms slow here).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_write_returns_with_the_values_it_replaced_removed() {
        use crate::Region;
        use crate::metadata::DataType;
        use crate::store::{FilesystemStore, REMOVAL_DELAY_MS};
        use std::sync::atomic::Ordering;
        REMOVAL_DELAY_MS.store(50, Ordering::Relaxed);
        let dir = tempfile::tempdir().unwrap();
        let files = || {
            let mut n = 0;
            let mut dirs = vec![dir.path().join("a/c")];
            while let Some(d) = dirs.pop() {
                for entry in std::fs::read_dir(d).unwrap() {
                    let entry = entry.unwrap();
                    if entry.file_type().unwrap().is_dir() {
                        dirs.push(entry.path());
                    } else {
                        n += 1;
                    }
                }
            }
            n
        };
        let store = std::sync::Arc::new(FilesystemStore::new(dir.path()).unwrap());
        let shape = [32u64, 32, 16];
        let whole = Region::whole(&shape);
        let array = Array::builder(&shape, DataType::UInt16, &[16, 16, 16])
            .create(store, "/a")
            .unwrap();
        let data: Vec<u16> = (0..32 * 32 * 16).map(|i| i as u16).collect();
        for round in 0..3u16 {
            let data: Vec<u16> = data.iter().map(|v| v.wrapping_add(round)).collect();
            array.write_region(&whole, &data).unwrap();
            assert_eq!(files(), 4, "round {round}");
            let rows = Selection::parse("0:16, :, :").unwrap();
            array.write_selection(&rows, &data[..16 * 32 * 16]).unwrap();
            assert_eq!(files(), 4, "round {round}, selection");
            assert_eq!(array.read_region::<u16>(&whole).unwrap(), data);
        }
        REMOVAL_DELAY_MS.store(0, Ordering::Relaxed);
    }

    #[test]
    fn flipping_reverses_each_axis_in_place() {
        let mut buf: Vec<u32> = (0..6).collect();
        flip_axes(&mut buf, &[2, 3], &[1], 1);
        assert_eq!(buf, [2, 1, 0, 5, 4, 3]);
        flip_axes(&mut buf, &[2, 3], &[0], 1);
        assert_eq!(buf, [5, 4, 3, 2, 1, 0]);
    }

    #[test]
    fn broadcasting_follows_numpy() {
        assert_eq!(broadcast_sources(&[], &[2, 2]).unwrap(), [0, 0, 0, 0]);
        assert_eq!(broadcast_sources(&[2], &[2, 2]).unwrap(), [0, 1, 0, 1]);
        assert_eq!(broadcast_sources(&[2, 1], &[2, 2]).unwrap(), [0, 0, 1, 1]);
        assert_eq!(
            broadcast_sources(&[1, 1, 2], &[2, 2]).unwrap(),
            [0, 1, 0, 1]
        );
        assert!(broadcast_sources(&[3], &[2, 2]).is_none());
        assert!(broadcast_is_identity(&[2, 3], &[2, 3]));
        assert!(broadcast_is_identity(&[1, 1, 2, 3], &[2, 3]));
        assert!(broadcast_is_identity(&[2, 3], &[1, 2, 3]));
        assert!(broadcast_is_identity(&[], &[1, 1]));
        assert!(!broadcast_is_identity(&[3], &[3, 1]));
        assert!(!broadcast_is_identity(&[2, 1], &[2, 2]));
        assert!(broadcast_sources(&[2, 2, 2], &[2, 2]).is_none());
    }
}
