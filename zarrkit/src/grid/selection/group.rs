//! Grouping a resolved selection by chunk: each factor's entries sorted
//! (stably) by the chunk they fall in, and within it by *cell* (the inner
//! chunk of a sharded array, else the chunk itself). A task is one chunk:
//! one run of same-chunk groups per factor; its cells are the products of
//! those groups. Every chunk touched is one task, however many entries
//! fall in it.

use super::resolve::{Entries, Factor, Resolved};
use crate::grid::axis::Axis;
use std::ops::Range;

/// The grid the entries are grouped by: the array's chunk grid and, for a
/// sharded array, the inner chunk shape.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CellGrid<'a> {
    /// The chunk grid's dimensions.
    pub(crate) axes: &'a [Axis],
    /// The array's shape.
    pub(crate) shape: &'a [u64],
    /// The inner chunk shape of a sharded array.
    pub(crate) inner: Option<&'a [u64]>,
}

impl CellGrid<'_> {
    /// The chunk holding `x` along dimension `d`, and the cell of `x` in it.
    fn locate(&self, d: usize, x: u64) -> (u64, u64) {
        let (chunk, within) = self.axes[d].locate(x);
        let cell = self.inner.map_or(0, |inner| within / inner[d]);
        (chunk, cell)
    }

    /// The first element of chunk `chunk` along `d`, and how many of its
    /// elements lie inside the array.
    fn chunk_extent(&self, d: usize, chunk: u64) -> (u64, u64) {
        let (start, len) = self.axes[d].span(chunk).unwrap_or((self.shape[d], 0));
        (start, len.min(self.shape[d].saturating_sub(start)))
    }
}

/// A run of a factor's entries in one cell.
#[derive(Clone, Debug)]
struct Group {
    /// Where its entries are in the factor's `order`.
    range: Range<usize>,
    /// Its chunk's coordinates along the factor's dimensions.
    chunk: Vec<u64>,
    /// Its cell's coordinates in the chunk, along the factor's dimensions.
    cell: Vec<u64>,
    /// The smallest and largest chunk-local coordinate of its entries.
    lo: Vec<u64>,
    hi: Vec<u64>,
}

/// One factor's entries grouped by chunk and cell.
#[derive(Clone, Debug)]
struct GroupedFactor {
    /// The entries in group order (`None`: entry order, for a range).
    order: Option<Vec<u64>>,
    groups: Vec<Group>,
    /// Runs of `groups` in one chunk.
    chunk_groups: Vec<Range<usize>>,
}

/// A resolved selection grouped by chunk and cell.
#[derive(Debug)]
pub(crate) struct Grouped<'r> {
    resolved: &'r Resolved,
    grid: CellGrid<'r>,
    factors: Vec<GroupedFactor>,
}

/// One chunk of a grouped selection.
#[derive(Clone, Debug)]
pub(crate) struct Task {
    /// The chunk's grid coordinates.
    pub(crate) chunk_coords: Vec<u64>,
    /// The chunk's first element.
    chunk_start: Vec<u64>,
    /// Per factor, the run of its groups in the chunk.
    parts: Vec<usize>,
}

/// One cell of a task: a group per factor.
pub(crate) type Cell = Vec<usize>;

impl<'r> Grouped<'r> {
    /// Groups `resolved` by `grid`. With `dedupe`, entries of a factor at
    /// the same coordinates keep only the last, as NumPy's assignment
    /// keeps the last value written (the output of the whole selection
    /// is a product, so keeping each factor's last keeps the last element).
    pub(crate) fn new(resolved: &'r Resolved, grid: CellGrid<'r>, dedupe: bool) -> Self {
        let factors = resolved
            .factors
            .iter()
            .map(|factor| group_factor(factor, &grid, dedupe))
            .collect();
        Self {
            resolved,
            grid,
            factors,
        }
    }

    /// The chunks touched, in no particular order, one at a time.
    pub(crate) fn tasks(&self) -> impl Iterator<Item = Task> + '_ {
        let lens: Vec<u64> = self
            .factors
            .iter()
            .map(|f| f.chunk_groups.len() as u64)
            .collect();
        crate::grid::GridWalk::new(&vec![0; lens.len()], &lens).map(move |parts| {
            let ndim = self.grid.shape.len();
            let mut chunk_coords = vec![0; ndim];
            let mut chunk_start = vec![0; ndim];
            for ((factor, grouped), &part) in
                self.resolved.factors.iter().zip(&self.factors).zip(&parts)
            {
                let group = &grouped.groups[grouped.chunk_groups[part as usize].start];
                for (k, &d) in factor.dims.iter().enumerate() {
                    chunk_coords[d] = group.chunk[k];
                    chunk_start[d] = self.grid.chunk_extent(d, group.chunk[k]).0;
                }
            }
            Task {
                chunk_coords,
                chunk_start,
                parts: parts.iter().map(|&p| p as usize).collect(),
            }
        })
    }

    /// The cells of `task`.
    pub(crate) fn cells(&self, task: &Task) -> Vec<Cell> {
        let ranges: Vec<&Range<usize>> = self
            .factors
            .iter()
            .zip(&task.parts)
            .map(|(f, &p)| &f.chunk_groups[p])
            .collect();
        let start: Vec<u64> = ranges.iter().map(|r| r.start as u64).collect();
        let lens: Vec<u64> = ranges.iter().map(|r| r.len() as u64).collect();
        crate::grid::GridWalk::new(&start, &lens)
            .map(|c| c.into_iter().map(|g| g as usize).collect())
            .collect()
    }

    /// The number of entries of `task`.
    pub(crate) fn task_len(&self, task: &Task) -> u64 {
        self.factors
            .iter()
            .zip(&task.parts)
            .map(|(f, &p)| {
                f.groups[f.chunk_groups[p].clone()]
                    .iter()
                    .map(|g| g.range.len() as u64)
                    .sum::<u64>()
            })
            .product()
    }

    /// Whether `task`'s entries (deduplicated) are every element of its
    /// chunk inside the array.
    pub(crate) fn covers_chunk(&self, task: &Task) -> bool {
        let volume: u64 = (0..self.grid.shape.len())
            .map(|d| self.grid.chunk_extent(d, task.chunk_coords[d]).1)
            .product();
        self.task_len(task) == volume
    }

    /// The chunk-local bounding box of `cell`'s entries: its start and shape.
    pub(crate) fn cell_box(&self, cell: &[usize]) -> (Vec<u64>, Vec<u64>) {
        let ndim = self.grid.shape.len();
        let mut start = vec![0; ndim];
        let mut shape = vec![1; ndim];
        for ((factor, grouped), &g) in self.resolved.factors.iter().zip(&self.factors).zip(cell) {
            let group = &grouped.groups[g];
            for (k, &d) in factor.dims.iter().enumerate() {
                start[d] = group.lo[k];
                shape[d] = group.hi[k] - group.lo[k] + 1;
            }
        }
        (start, shape)
    }

    /// The inner chunk shape cells are grouped by (a sharded array).
    pub(crate) fn inner_shape(&self) -> Option<&[u64]> {
        self.grid.inner
    }

    /// The chunk-local extent of `cell` in a chunk of `chunk_shape` with
    /// cells of `inner` (the whole inner chunk, not only its entries'
    /// bounding box): its start and shape.
    pub(crate) fn cell_extent(
        &self,
        cell: &[usize],
        chunk_shape: &[u64],
        inner: &[u64],
    ) -> (Vec<u64>, Vec<u64>) {
        let ndim = self.grid.shape.len();
        let mut start = vec![0; ndim];
        let mut shape = chunk_shape.to_vec();
        for ((factor, grouped), &g) in self.resolved.factors.iter().zip(&self.factors).zip(cell) {
            let group = &grouped.groups[g];
            for (k, &d) in factor.dims.iter().enumerate() {
                start[d] = group.cell[k] * inner[d];
                shape[d] = inner[d].min(chunk_shape[d].saturating_sub(start[d]));
            }
        }
        (start, shape)
    }

    /// Whether `cell`'s entries (deduplicated) are every element of its
    /// cell inside the array (then its bounding box is that extent).
    pub(crate) fn covers_cell(&self, task: &Task, cell: &[usize]) -> bool {
        let Some(inner) = self.grid.inner else {
            return self.covers_chunk(task);
        };
        let mut volume = 1u64;
        let mut count = 1u64;
        for ((factor, grouped), &g) in self.resolved.factors.iter().zip(&self.factors).zip(cell) {
            let group = &grouped.groups[g];
            count *= group.range.len() as u64;
            for (k, &d) in factor.dims.iter().enumerate() {
                let (_, extent) = self.grid.chunk_extent(d, task.chunk_coords[d]);
                let first = group.cell[k] * inner[d];
                volume *= inner[d].min(extent.saturating_sub(first));
            }
        }
        count == volume
    }

    /// Calls `f(buf, out, len)` for each run of `cell`'s entries: `len`
    /// elements at offset `buf` of a C-order buffer of `buf_shape` whose
    /// element 0 is chunk-local `origin`, and at offset `out` of the
    /// output, both contiguous.
    pub(crate) fn for_each_run(
        &self,
        task: &Task,
        cell: &[usize],
        origin: &[u64],
        buf_shape: &[u64],
        mut f: impl FnMut(usize, usize, usize),
    ) {
        self.runs(task, cell, origin, buf_shape, false, |b, _, o, len| {
            f(b, o, len);
        });
    }

    /// Calls `f(buf, step, out, len)` for each strided run of `cell`'s
    /// entries: `len` elements at offsets `buf + j × step` (`j < len`) of
    /// the buffer as in [`Grouped::for_each_run`], and contiguous at
    /// offset `out` of the output. A strided read's runs are whole rows
    /// of its innermost dimension rather than single elements.
    pub(crate) fn for_each_strided_run(
        &self,
        task: &Task,
        cell: &[usize],
        origin: &[u64],
        buf_shape: &[u64],
        f: impl FnMut(usize, isize, usize, usize),
    ) {
        self.runs(task, cell, origin, buf_shape, true, f);
    }

    /// The runs of `cell`'s entries; a run's buffer offsets step by one
    /// element, or (`strided`) by any constant.
    fn runs(
        &self,
        task: &Task,
        cell: &[usize],
        origin: &[u64],
        buf_shape: &[u64],
        strided: bool,
        mut f: impl FnMut(usize, isize, usize, usize),
    ) {
        let ndim = buf_shape.len();
        let mut strides = vec![1u64; ndim];
        for d in (0..ndim.saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * buf_shape[d + 1];
        }
        // Each factor's entries as (buffer offset, output offset).
        let offsets: Vec<Vec<(u64, u64)>> = self
            .resolved
            .factors
            .iter()
            .zip(&self.factors)
            .zip(cell)
            .map(|((factor, grouped), &g)| {
                grouped.groups[g]
                    .range
                    .clone()
                    .map(|i| grouped.order.as_ref().map_or(i as u64, |o| o[i]))
                    .map(|e| {
                        let buf = factor
                            .dims
                            .iter()
                            .enumerate()
                            .map(|(k, &d)| {
                                (factor.coord(e, k) - task.chunk_start[d] - origin[d]) * strides[d]
                            })
                            .sum();
                        (buf, e * factor.out_stride)
                    })
                    .collect()
            })
            .collect();
        let Some((last, outer)) = offsets.split_last() else {
            f(0, 1, 0, 1);
            return;
        };
        // The innermost factor's runs: consecutive entries that step by
        // one element in the output and by one element (or, `strided`, by
        // the run's first step) in the buffer.
        let mut runs: Vec<(u64, i64, u64, usize)> = Vec::new();
        for &(b, o) in last {
            match runs.last_mut() {
                Some((rb, step, ro, len)) if *ro + *len as u64 == o => {
                    let next = rb.wrapping_add_signed(*step * *len as i64);
                    if *len == 1 && (strided || b == *rb + 1) {
                        *step = b.wrapping_sub(*rb) as i64;
                        *len += 1;
                    } else if b == next {
                        *len += 1;
                    } else {
                        runs.push((b, 1, o, 1));
                    }
                }
                _ => runs.push((b, 1, o, 1)),
            }
        }
        let lens: Vec<u64> = outer.iter().map(|o| o.len() as u64).collect();
        let mut walk = crate::grid::GridWalk::new(&vec![0; lens.len()], &lens);
        while let Some(index) = walk.next_coords() {
            let (mut b0, mut o0) = (0u64, 0u64);
            for (offsets, &i) in outer.iter().zip(index) {
                b0 += offsets[i as usize].0;
                o0 += offsets[i as usize].1;
            }
            for &(b, step, o, len) in &runs {
                f((b0 + b) as usize, step as isize, (o0 + o) as usize, len);
            }
        }
    }
}

/// Groups one factor's entries by chunk and cell.
fn group_factor(factor: &Factor, grid: &CellGrid<'_>, dedupe: bool) -> GroupedFactor {
    let k = factor.dims.len();
    let width = 2 * k;
    // The key of entry `e`: its chunk along each dimension, then its cell.
    let key_into = |e: u64, key: &mut [u64]| {
        for (j, &d) in factor.dims.iter().enumerate() {
            let (chunk, cell) = grid.locate(d, factor.coord(e, j));
            key[j] = chunk;
            key[k + j] = cell;
        }
    };
    if let Entries::Points(coords) = &factor.entries
        && let Some(keys) = Keys::new(factor, grid)
    {
        return keys.group(coords, dedupe);
    }
    // Ranges are monotone, so their groups are runs in entry order; a
    // list of points is sorted (stably) by key (here only where the keys
    // of [`Keys`] would not fit in a `u64`).
    let (order, keys): (Option<Vec<u64>>, Vec<u64>) = match &factor.entries {
        Entries::Range { .. } => (None, Vec::new()),
        Entries::Points(coords) => {
            let order = entry_order(coords, k, factor.len, dedupe);
            let mut keys = vec![0u64; order.len() * width];
            for (key, &e) in keys.chunks_exact_mut(width.max(1)).zip(&order) {
                key_into(e, &mut key[..width]);
            }
            let key = |i: usize| &keys[i * width..(i + 1) * width];
            let mut index: Vec<usize> = (0..order.len()).collect();
            index.sort_by(|&a, &b| key(a).cmp(key(b)));
            let sorted_keys: Vec<u64> =
                index.iter().flat_map(|&i| key(i).iter().copied()).collect();
            let order = index.iter().map(|&i| order[i]).collect();
            (Some(order), sorted_keys)
        }
    };
    let entry = |i: usize| order.as_ref().map_or(i as u64, |o| o[i]);
    let mut groups: Vec<Group> = Vec::new();
    let mut this = vec![0u64; width];
    let mut local = vec![0u64; k];
    let count = order.as_ref().map_or(factor.len as usize, Vec::len);
    for i in 0..count {
        let e = entry(i);
        if keys.is_empty() {
            key_into(e, &mut this);
        } else {
            this.copy_from_slice(&keys[i * width..(i + 1) * width]);
        }
        for (j, &d) in factor.dims.iter().enumerate() {
            local[j] = factor.coord(e, j) - grid.chunk_extent(d, this[j]).0;
        }
        let current = groups
            .last_mut()
            .filter(|g| g.chunk[..] == this[..k] && g.cell[..] == this[k..]);
        if let Some(group) = current {
            group.range.end = i + 1;
            for ((lo, hi), &x) in group.lo.iter_mut().zip(&mut group.hi).zip(&local) {
                *lo = (*lo).min(x);
                *hi = (*hi).max(x);
            }
        } else {
            groups.push(Group {
                range: i..i + 1,
                chunk: this[..k].to_vec(),
                cell: this[k..].to_vec(),
                lo: local.clone(),
                hi: local.clone(),
            });
        }
    }
    let mut chunk_groups: Vec<Range<usize>> = Vec::new();
    for (i, group) in groups.iter().enumerate() {
        match chunk_groups.last_mut() {
            Some(run) if groups[run.start].chunk == group.chunk => run.end = i + 1,
            _ => chunk_groups.push(i..i + 1),
        }
    }
    GroupedFactor {
        order,
        groups,
        chunk_groups,
    }
}

/// The entries of a list of `len` points of `k` coordinates in entry
/// order, or with `dedupe` only the last of equal points.
fn entry_order(coords: &[u64], k: usize, len: u64, dedupe: bool) -> Vec<u64> {
    let mut order: Vec<u64> = (0..len).collect();
    if dedupe {
        let point = |e: u64| &coords[e as usize * k..(e as usize + 1) * k];
        order.sort_by(|&a, &b| point(a).cmp(point(b)));
        // Of equal points (sorted stably, so in entry order), the last.
        let mut kept: Vec<u64> = Vec::with_capacity(order.len());
        for &e in &order {
            match kept.last_mut() {
                Some(last) if point(*last) == point(e) => *last = e,
                _ => kept.push(e),
            }
        }
        kept.sort_unstable();
        order = kept;
    }
    order
}

/// A point factor's entries keyed by one `u64`: the chunk (in C order of
/// the factor's chunk coordinates), then the cell in it, so that sorting
/// by key groups the entries. Each dimension's part of the key, and the
/// chunk-local coordinate, come from a table where the dimension is short
/// beside the number of points (no division per point), else from the
/// grid.
struct Keys<'a> {
    factor: &'a Factor,
    grid: &'a CellGrid<'a>,
    /// Per factor dimension: chunks, and cells per chunk.
    chunks: Vec<u64>,
    cells: Vec<u64>,
    /// Per factor dimension: the key's stride for its chunk and its cell.
    chunk_stride: Vec<u64>,
    cell_stride: Vec<u64>,
    /// Per factor dimension, where short: `(key part, chunk-local
    /// coordinate)` of each coordinate.
    tables: Vec<Option<Vec<(u64, u64)>>>,
    /// Cells per chunk, over all the factor's dimensions.
    cells_per_chunk: u64,
    /// The number of keys.
    space: u64,
}

impl<'a> Keys<'a> {
    /// The keys of `factor` on `grid`, or `None` if they do not fit in a
    /// `u64`.
    fn new(factor: &'a Factor, grid: &'a CellGrid<'a>) -> Option<Self> {
        let k = factor.dims.len();
        let mut chunks = Vec::with_capacity(k);
        let mut cells = Vec::with_capacity(k);
        for &d in &factor.dims {
            let axis = &grid.axes[d];
            let n = axis.num_chunks(grid.shape[d]).max(1);
            chunks.push(n);
            cells.push(match grid.inner {
                Some(inner) => {
                    let longest = if axis.is_regular() {
                        axis.first_length()
                    } else {
                        (0..n).filter_map(|c| axis.span(c)).map(|(_, l)| l).max()?
                    };
                    longest.div_ceil(inner[d].max(1)).max(1)
                }
                None => 1,
            });
        }
        let cells_per_chunk = cells.iter().try_fold(1u64, |a, &n| a.checked_mul(n))?;
        let space = chunks
            .iter()
            .try_fold(cells_per_chunk, |a, &n| a.checked_mul(n))?;
        let mut chunk_stride = vec![cells_per_chunk; k];
        let mut cell_stride = vec![1; k];
        for j in (0..k.saturating_sub(1)).rev() {
            chunk_stride[j] = chunk_stride[j + 1] * chunks[j + 1];
            cell_stride[j] = cell_stride[j + 1] * cells[j + 1];
        }
        let mut keys = Self {
            factor,
            grid,
            chunks,
            cells,
            chunk_stride,
            cell_stride,
            tables: vec![None; k],
            cells_per_chunk,
            space,
        };
        // A table costs its dimension's length; the points cost at least
        // their number.
        let limit = factor.len.saturating_mul(4).saturating_add(1 << 16);
        for (j, &d) in factor.dims.iter().enumerate() {
            if grid.shape[d] <= limit {
                let table = (0..grid.shape[d]).map(|x| keys.compute(j, x)).collect();
                keys.tables[j] = Some(table);
            }
        }
        Some(keys)
    }

    /// The key part and chunk-local coordinate of coordinate `x` along
    /// the factor's `j`-th dimension, from the grid.
    fn compute(&self, j: usize, x: u64) -> (u64, u64) {
        let d = self.factor.dims[j];
        let (chunk, within) = self.grid.axes[d].locate(x);
        let cell = self.grid.inner.map_or(0, |inner| within / inner[d].max(1));
        (
            chunk * self.chunk_stride[j] + cell * self.cell_stride[j],
            within,
        )
    }

    /// The key part and chunk-local coordinate of coordinate `x` along
    /// the factor's `j`-th dimension.
    fn part(&self, j: usize, x: u64) -> (u64, u64) {
        match &self.tables[j] {
            Some(table) => table[x as usize],
            None => self.compute(j, x),
        }
    }

    /// The key of the point `point`.
    fn key(&self, point: &[u64]) -> u64 {
        point
            .iter()
            .enumerate()
            .map(|(j, &x)| self.part(j, x).0)
            .sum()
    }

    /// The chunk and cell coordinates of `key`, along the factor's dimensions.
    fn decode(&self, key: u64) -> (Vec<u64>, Vec<u64>) {
        let k = self.chunks.len();
        let (mut chunk_rest, mut cell_rest) =
            (key / self.cells_per_chunk, key % self.cells_per_chunk);
        let mut chunk = vec![0; k];
        let mut cell = vec![0; k];
        for j in (0..k).rev() {
            chunk[j] = chunk_rest % self.chunks[j];
            chunk_rest /= self.chunks[j];
            cell[j] = cell_rest % self.cells[j];
            cell_rest /= self.cells[j];
        }
        (chunk, cell)
    }

    /// The factor's entries grouped: sorted by key, stably (a counting
    /// sort where the keys are few beside the points).
    fn group(&self, coords: &[u64], dedupe: bool) -> GroupedFactor {
        let k = self.factor.dims.len();
        let point = |e: u64| &coords[e as usize * k..(e as usize + 1) * k];
        let entries = entry_order(coords, k, self.factor.len, dedupe);
        let keys: Vec<u64> = entries.iter().map(|&e| self.key(point(e))).collect();
        let order: Vec<u64> = if self.space <= entries.len() as u64 + (1 << 16) {
            let mut next = vec![0usize; self.space as usize + 1];
            for &key in &keys {
                next[key as usize + 1] += 1;
            }
            for i in 1..next.len() {
                next[i] += next[i - 1];
            }
            let mut order = vec![0u64; entries.len()];
            for (&key, &e) in keys.iter().zip(&entries) {
                order[next[key as usize]] = e;
                next[key as usize] += 1;
            }
            order
        } else {
            let mut pairs: Vec<(u64, u64)> =
                keys.iter().copied().zip(entries.iter().copied()).collect();
            pairs.sort_unstable();
            pairs.into_iter().map(|(_, e)| e).collect()
        };
        drop(keys);
        let mut groups: Vec<Group> = Vec::new();
        let mut chunk_groups: Vec<Range<usize>> = Vec::new();
        let mut current = None;
        let mut local = vec![0u64; k];
        for (i, &e) in order.iter().enumerate() {
            let mut key = 0;
            for (j, &x) in point(e).iter().enumerate() {
                let (part, within) = self.part(j, x);
                key += part;
                local[j] = within;
            }
            if current == Some(key) {
                let group = groups.last_mut().expect("a group is open");
                group.range.end = i + 1;
                for ((lo, hi), &x) in group.lo.iter_mut().zip(&mut group.hi).zip(&local) {
                    *lo = (*lo).min(x);
                    *hi = (*hi).max(x);
                }
                continue;
            }
            let chunk = key / self.cells_per_chunk;
            match chunk_groups.last_mut() {
                Some(run) if current.map(|c| c / self.cells_per_chunk) == Some(chunk) => {
                    run.end = groups.len() + 1;
                }
                _ => chunk_groups.push(groups.len()..groups.len() + 1),
            }
            current = Some(key);
            let (chunk, cell) = self.decode(key);
            groups.push(Group {
                range: i..i + 1,
                chunk,
                cell,
                lo: local.clone(),
                hi: local.clone(),
            });
        }
        GroupedFactor {
            order: Some(order),
            groups,
            chunk_groups,
        }
    }
}
