//! Resolving a selection against an array's shape with NumPy's rules:
//! the output shape and the factors whose outer product is the selection.

use super::{Selection, SelectionError, SelectionItem, SelectionMode, Slice};
use crate::grid::axis::Axis;
use crate::grid::region::Region;
use rayon::prelude::*;
use std::ops::Range;

/// The coordinates a factor lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Entries {
    /// `start + i × step` for each entry `i` (an integer, a slice): one
    /// dimension. Never materialized, so a slice of a huge dimension costs
    /// nothing until its entries are grouped.
    Range {
        /// The first coordinate.
        start: u64,
        /// The step, never zero.
        step: i64,
    },
    /// Explicit coordinates, `dims.len()` per entry, entry after entry.
    Points(Vec<u64>),
}

/// One factor of a resolved selection: entries along some of the array's
/// dimensions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Factor {
    /// The array's dimensions the factor covers, in increasing order.
    pub(crate) dims: Vec<usize>,
    /// The number of entries.
    pub(crate) len: u64,
    /// The coordinates.
    pub(crate) entries: Entries,
    /// The output offset (in elements) of entry 1 relative to entry 0:
    /// entry `i` adds `i × out_stride` to an output element's offset.
    pub(crate) out_stride: u64,
}

impl Factor {
    /// The coordinate of entry `i` along the factor's `k`-th dimension.
    pub(crate) fn coord(&self, i: u64, k: usize) -> u64 {
        match &self.entries {
            Entries::Range { start, step } => {
                start.wrapping_add_signed(step.wrapping_mul(i as i64))
            }
            Entries::Points(coords) => coords[i as usize * self.dims.len() + k],
        }
    }

    /// Whether the factor is a range with a step of ±1 (or one entry).
    fn unit_range(&self) -> Option<(u64, i64)> {
        match self.entries {
            Entries::Range { start, step } if step.unsigned_abs() == 1 || self.len <= 1 => {
                Some((start, step))
            }
            _ => None,
        }
    }
}

/// A selection resolved against an array's shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// The output's shape, as NumPy gives it.
    pub(crate) shape: Vec<u64>,
    /// The factors, covering each of the array's dimensions once, ordered
    /// by their last dimension.
    pub(crate) factors: Vec<Factor>,
}

/// Why a selection could not be resolved.
#[derive(Debug)]
pub(crate) enum ResolveError {
    /// The selection does not fit the array.
    Selection(SelectionError),
    /// Its index lists would need more memory than the budget allows.
    MemoryBudget {
        /// What was being resolved, for the message.
        what: String,
        /// The bytes needed.
        needed: u64,
    },
}

impl From<SelectionError> for ResolveError {
    fn from(error: SelectionError) -> Self {
        Self::Selection(error)
    }
}

impl Resolved {
    /// The number of output elements (checked not to overflow when resolved).
    pub(crate) fn num_elements(&self) -> u64 {
        self.shape.iter().product()
    }

    /// When the selection is a box walked with steps of ±1 (no index
    /// arrays): the box, and the array dimensions walked backwards. The
    /// output is then the box in C order (dropped dimensions and new axes
    /// have length 1), flipped along those dimensions.
    pub(crate) fn as_box(&self) -> Option<(Region, Vec<usize>)> {
        let ndim = self.factors.iter().map(|f| f.dims.len()).sum();
        let mut start = vec![0; ndim];
        let mut shape = vec![0; ndim];
        let mut flip = Vec::new();
        for factor in &self.factors {
            let (first, step) = factor.unit_range()?;
            let d = factor.dims[0];
            if step < 0 && factor.len > 1 {
                start[d] = first + 1 - factor.len;
                flip.push(d);
            } else {
                start[d] = first;
            }
            shape[d] = factor.len;
        }
        Some((Region::new(start, shape), flip))
    }
}

/// A slice of a dimension of `len`, normalized as NumPy's
/// `PySlice_AdjustIndices`: the first index, the step and the count.
pub(crate) fn normalize_slice(
    slice: &Slice,
    len: u64,
    dim: usize,
) -> Result<(u64, i64, u64), SelectionError> {
    let step = slice.step.unwrap_or(1);
    if step == 0 {
        return Err(SelectionError::ZeroStep { dim });
    }
    let n = i128::from(len);
    let adjust = |bound: Option<i64>, default: i128, low: i128, high: i128| match bound {
        None => default,
        Some(b) => {
            let b = i128::from(b);
            let b = if b < 0 { b + n } else { b };
            b.clamp(low, high)
        }
    };
    let step128 = i128::from(step);
    let (start, stop) = if step > 0 {
        (adjust(slice.start, 0, 0, n), adjust(slice.stop, n, 0, n))
    } else {
        (
            adjust(slice.start, n - 1, -1, n - 1),
            adjust(slice.stop, -1, -1, n - 1),
        )
    };
    let count = if step > 0 {
        if stop > start {
            (stop - start + step128 - 1) / step128
        } else {
            0
        }
    } else if stop < start {
        (start - stop - 1) / (-step128) + 1
    } else {
        0
    };
    // With no elements the start is unused; keep it inside u64.
    let first = if count == 0 { 0 } else { start as u64 };
    Ok((first, step, count as u64))
}

/// `index` (negative from the end) in a dimension of `len`.
fn normalize_index(index: i64, len: u64, dim: usize) -> Result<u64, SelectionError> {
    let i = i128::from(index);
    let i = if i < 0 { i + i128::from(len) } else { i };
    if i < 0 || i >= i128::from(len) {
        return Err(SelectionError::OutOfBounds { index, dim, len });
    }
    Ok(i as u64)
}

/// The broadcast of `shapes` (NumPy's rule: aligned from the right, each
/// dimension equal or 1).
fn broadcast(shapes: &[Vec<u64>]) -> Result<Vec<u64>, SelectionError> {
    let ndim = shapes.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = vec![1u64; ndim];
    for shape in shapes {
        for (o, &n) in out[ndim - shape.len()..].iter_mut().zip(shape) {
            if *o == 1 {
                *o = n;
            } else if n != 1 && n != *o {
                return Err(SelectionError::Broadcast {
                    shapes: shapes.to_vec(),
                });
            }
        }
    }
    Ok(out)
}

/// An index array after checks: its shape and normalized values, for one
/// array dimension.
struct IndexArray {
    dim: usize,
    shape: Vec<u64>,
    values: Vec<u64>,
}

/// What one item of a basic selection gives.
enum Part {
    /// A factor with an output axis of `len` (a slice) or none (an
    /// integer, `axis: false`).
    Basic { factor: Factor, axis: bool },
    /// A new axis of length 1.
    NewAxis,
    /// Index arrays (one per dimension the item covers).
    Advanced(Vec<IndexArray>),
}

fn check_len(shape: &[u64], len: usize) -> Result<(), SelectionError> {
    let n = shape.iter().try_fold(1u64, |acc, &n| acc.checked_mul(n));
    if n != Some(len as u64) {
        return Err(SelectionError::ArrayLength {
            shape: shape.to_vec(),
            len,
        });
    }
    Ok(())
}

fn range_factor(dim: usize, start: u64, step: i64, len: u64) -> Factor {
    Factor {
        dims: vec![dim],
        len,
        entries: Entries::Range { start, step },
        out_stride: 0,
    }
}

fn slice_factor(slice: &Slice, len: u64, dim: usize) -> Result<Factor, SelectionError> {
    let (start, step, count) = normalize_slice(slice, len, dim)?;
    Ok(range_factor(dim, start, step, count))
}

fn indices(
    dim: usize,
    shape: &[u64],
    values: &[i64],
    len: u64,
) -> Result<IndexArray, SelectionError> {
    check_len(shape, values.len())?;
    Ok(IndexArray {
        dim,
        shape: shape.to_vec(),
        values: values
            .iter()
            .map(|&v| normalize_index(v, len, dim))
            .collect::<Result<_, _>>()?,
    })
}

/// The index arrays of a mask over the dimensions from `first`: the
/// coordinates of its `true` positions in C order, one 1-d array per
/// dimension.
fn mask_indices(
    first: usize,
    shape: &[u64],
    values: &[bool],
    array_shape: &[u64],
) -> Result<Vec<IndexArray>, SelectionError> {
    check_len(shape, values.len())?;
    let expected = &array_shape[first..first + shape.len()];
    if shape != expected {
        return Err(SelectionError::MaskShape {
            first,
            expected: expected.to_vec(),
            got: shape.to_vec(),
        });
    }
    let m = shape.len();
    if m == 0 || values.is_empty() {
        // A 0-d mask indexes no dimension; an empty one selects nothing.
        return Ok((0..m)
            .map(|k| IndexArray {
                dim: first + k,
                shape: vec![0],
                values: Vec::new(),
            })
            .collect());
    }
    // The mask in rows of its last dimension (a 1-d mask in rows of a
    // fixed length), in pieces of whole rows that are counted, then
    // scanned into their part of the index arrays, in parallel.
    let (row, lead) = match shape.last() {
        Some(&last) if m > 1 => (last as usize, m - 1),
        _ => (values.len().clamp(1, 1 << 16), 0),
    };
    let rows = values.len().div_ceil(row);
    let piece_rows = ((1 << 20) / row.max(1)).max(1);
    let pieces: Vec<Range<usize>> = (0..rows)
        .step_by(piece_rows)
        .map(|r| r..(r + piece_rows).min(rows))
        .collect();
    let flat = |r: &Range<usize>| {
        &values[(r.start * row).min(values.len())..(r.end * row).min(values.len())]
    };
    let counts: Vec<usize> = pieces
        .par_iter()
        .map(|r| {
            flat(r)
                .chunks(64)
                .map(|block| bits(block).count_ones() as usize)
                .sum()
        })
        .collect();
    let count: usize = counts.iter().sum();
    let mut arrays: Vec<IndexArray> = (0..m)
        .map(|k| IndexArray {
            dim: first + k,
            shape: vec![count as u64],
            values: vec![0; count],
        })
        .collect();
    // Each piece's part of every index array.
    let mut parts: Vec<Vec<&mut [u64]>> = pieces.iter().map(|_| Vec::with_capacity(m)).collect();
    for array in &mut arrays {
        let mut rest = array.values.as_mut_slice();
        for (part, &n) in parts.iter_mut().zip(&counts) {
            let (mine, tail) = rest.split_at_mut(n);
            part.push(mine);
            rest = tail;
        }
    }
    pieces.par_iter().zip(parts).for_each(|(range, mut part)| {
        // The coordinates of the piece's first row along the leading
        // dimensions, then counted up row by row (no division per
        // element).
        let mut index = vec![0u64; lead];
        let mut r = range.start as u64;
        for k in (0..lead).rev() {
            index[k] = r % shape[k];
            r /= shape[k];
        }
        let mut n = 0;
        for row_index in range.clone() {
            let start = row_index * row;
            let line = &values[start.min(values.len())..(start + row).min(values.len())];
            // A 1-d mask's rows are pieces of its only dimension.
            let base = if lead == 0 { start as u64 } else { 0 };
            for (block, bools) in line.chunks(64).enumerate() {
                let mut set = bits(bools);
                while set != 0 {
                    let x = base + (block * 64) as u64 + u64::from(set.trailing_zeros());
                    set &= set - 1;
                    for (k, &i) in index.iter().enumerate() {
                        part[k][n] = i;
                    }
                    part[lead][n] = x;
                    n += 1;
                }
            }
            for k in (0..lead).rev() {
                index[k] += 1;
                if index[k] < shape[k] {
                    break;
                }
                index[k] = 0;
            }
        }
    });
    Ok(arrays)
}

/// The length of a 0-d mask's index array: 1 if it is `true`, else 0.
fn zero_d_mask(values: &[bool]) -> Result<u64, SelectionError> {
    check_len(&[], values.len())?;
    Ok(u64::from(values[0]))
}

/// The `true` positions of up to 64 booleans as bits (bit `i`: `bools[i]`).
fn bits(bools: &[bool]) -> u64 {
    bools
        .iter()
        .enumerate()
        .fold(0u64, |bits, (i, &b)| bits | (u64::from(b) << i))
}

/// The point factor of `arrays` broadcast together, and with `lone`, the
/// shapes of index arrays along no array dimension (a 0-d mask's `[1]` or
/// `[0]`), which only add to the broadcast shape.
fn point_factor(
    arrays: &[IndexArray],
    lone: &[Vec<u64>],
    budget: u64,
) -> Result<(Factor, Vec<u64>), ResolveError> {
    let shapes: Vec<Vec<u64>> = arrays
        .iter()
        .map(|a| a.shape.clone())
        .chain(lone.iter().cloned())
        .collect();
    let b = broadcast(&shapes)?;
    let n = b
        .iter()
        .try_fold(1u64, |acc, &n| acc.checked_mul(n))
        .ok_or_else(|| SelectionError::TooLarge { shape: b.clone() })?;
    let k = arrays.len() as u64;
    let needed = n.saturating_mul(k).saturating_mul(8);
    if needed > budget {
        return Err(ResolveError::MemoryBudget {
            what: format!("the {n} points of a selection"),
            needed,
        });
    }
    let mut coords = vec![0u64; (n * k) as usize];
    if arrays.iter().all(|a| a.shape == b) {
        // Nothing to broadcast (a mask's arrays, equal lists): interleave.
        for (j, array) in arrays.iter().enumerate() {
            for (point, &value) in coords.chunks_exact_mut(arrays.len()).zip(&array.values) {
                point[j] = value;
            }
        }
    } else {
        broadcast_into(arrays, &b, &mut coords);
    }
    let factor = Factor {
        dims: arrays.iter().map(|a| a.dim).collect(),
        len: n,
        entries: Entries::Points(coords),
        out_stride: 0,
    };
    Ok((factor, b))
}

/// Writes the coordinates of `arrays` broadcast to shape `b` into
/// `coords`, point after point.
fn broadcast_into(arrays: &[IndexArray], b: &[u64], coords: &mut [u64]) {
    let k = arrays.len() as u64;
    let n = coords.len() as u64 / k.max(1);
    for (j, array) in arrays.iter().enumerate() {
        // The array's strides within the broadcast shape: 0 where it has
        // length 1 (or no dimension).
        let offset = b.len() - array.shape.len();
        let mut strides = vec![0u64; b.len()];
        let mut stride = 1u64;
        for (d, &len) in array.shape.iter().enumerate().rev() {
            if len != 1 {
                strides[offset + d] = stride;
            }
            stride *= len;
        }
        let mut index = vec![0u64; b.len()];
        let mut src = 0u64;
        for i in 0..n {
            coords[(i * k) as usize + j] = array.values[src as usize];
            // Next index of the broadcast shape in C order.
            for d in (0..b.len()).rev() {
                index[d] += 1;
                src += strides[d];
                if index[d] < b[d] {
                    break;
                }
                src -= strides[d] * index[d];
                index[d] = 0;
            }
        }
    }
}

/// A 1-d list factor of dimension `dim`.
fn list_factor(dim: usize, values: Vec<u64>) -> Factor {
    Factor {
        dims: vec![dim],
        len: values.len() as u64,
        entries: Entries::Points(values),
        out_stride: 0,
    }
}

impl Selection {
    /// Resolves the selection against an array of `shape` whose chunk grid
    /// has `axes` (for block selections), holding index lists within
    /// `budget` bytes.
    pub(crate) fn resolve(
        &self,
        shape: &[u64],
        axes: &[Axis],
        budget: u64,
    ) -> Result<Resolved, ResolveError> {
        // Each factor with the output axes it owns (in output order) and
        // the position of its last one (`None`: no output axis).
        let (mut factors, out_shape, axis_of): (Vec<Factor>, Vec<u64>, Vec<Option<usize>>) =
            match self.mode() {
                SelectionMode::Basic => self.resolve_basic(shape, budget)?,
                SelectionMode::Orthogonal => self.resolve_orthogonal(shape)?,
                SelectionMode::Vectorized => self.resolve_vectorized(shape, budget)?,
                SelectionMode::Blocks => self.resolve_blocks(shape, axes)?,
            };
        out_shape
            .iter()
            .try_fold(1u64, |acc, &n| acc.checked_mul(n))
            .ok_or_else(|| SelectionError::TooLarge {
                shape: out_shape.clone(),
            })?;
        let mut strides = vec![1u64; out_shape.len()];
        for d in (0..out_shape.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * out_shape[d + 1];
        }
        for (factor, axis) in factors.iter_mut().zip(axis_of) {
            factor.out_stride = axis.map_or(0, |a| strides[a]);
        }
        factors.sort_by_key(|f| f.dims.last().copied());
        Ok(Resolved {
            shape: out_shape,
            factors,
        })
    }

    /// Counts the dimensions the items index and checks for one ellipsis:
    /// the number of whole dimensions an ellipsis (or the end) stands for.
    fn expand(&self, ndim: usize, mask_dims: bool) -> Result<usize, SelectionError> {
        let mut given = 0;
        let mut ellipses = 0;
        for item in self.items() {
            match item {
                SelectionItem::Ellipsis => ellipses += 1,
                SelectionItem::NewAxis => {}
                SelectionItem::Mask { shape, .. } if mask_dims => given += shape.len(),
                _ => given += 1,
            }
        }
        if ellipses > 1 {
            return Err(SelectionError::MultipleEllipsis);
        }
        if given > ndim {
            return Err(SelectionError::TooManyIndices { given, ndim });
        }
        Ok(ndim - given)
    }

    #[allow(clippy::type_complexity)]
    fn resolve_basic(
        &self,
        shape: &[u64],
        budget: u64,
    ) -> Result<(Vec<Factor>, Vec<u64>, Vec<Option<usize>>), ResolveError> {
        let rest = self.expand(shape.len(), true)?;
        let advanced = self.items().iter().any(|item| {
            matches!(
                item,
                SelectionItem::Indices { .. } | SelectionItem::Mask { .. }
            )
        });
        // Each item's parts, with the item's position.
        let mut parts: Vec<(usize, Part)> = Vec::new();
        let mut dim = 0;
        let fulls = |parts: &mut Vec<(usize, Part)>, dim: &mut usize, position: usize| {
            for _ in 0..rest {
                parts.push((
                    position,
                    Part::Basic {
                        factor: range_factor(*dim, 0, 1, shape[*dim]),
                        axis: true,
                    },
                ));
                *dim += 1;
            }
        };
        let mut saw_ellipsis = false;
        let mut lone = Vec::new();
        for (position, item) in self.items().iter().enumerate() {
            let part = match item {
                SelectionItem::Ellipsis => {
                    fulls(&mut parts, &mut dim, position);
                    saw_ellipsis = true;
                    continue;
                }
                SelectionItem::NewAxis => Part::NewAxis,
                SelectionItem::Index(i) if advanced => Part::Advanced(vec![IndexArray {
                    dim,
                    shape: Vec::new(),
                    values: vec![normalize_index(*i, shape[dim], dim)?],
                }]),
                SelectionItem::Index(i) => Part::Basic {
                    factor: range_factor(dim, normalize_index(*i, shape[dim], dim)?, 1, 1),
                    axis: false,
                },
                SelectionItem::Slice(s) => Part::Basic {
                    factor: slice_factor(s, shape[dim], dim)?,
                    axis: true,
                },
                SelectionItem::Indices { shape: s, values } => {
                    Part::Advanced(vec![indices(dim, s, values, shape[dim])?])
                }
                SelectionItem::Mask { shape: s, values } if s.is_empty() => {
                    // NumPy: a 0-d mask (`True`, `np.array(False)`) indexes
                    // no dimension; it is an index array of length 1 or 0
                    // along a new axis, broadcast with the others.
                    lone.push(vec![zero_d_mask(values)?]);
                    parts.push((position, Part::Advanced(Vec::new())));
                    continue;
                }
                SelectionItem::Mask { shape: s, values } => {
                    let arrays = mask_indices(dim, s, values, shape)?;
                    dim += s.len();
                    parts.push((position, Part::Advanced(arrays)));
                    continue;
                }
            };
            if !matches!(part, Part::NewAxis) {
                dim += 1;
            }
            parts.push((position, part));
        }
        if !saw_ellipsis {
            fulls(&mut parts, &mut dim, self.items().len());
        }
        // NumPy: the broadcast dimensions replace the index arrays in place
        // when the index arrays (and integers beside them) are adjacent
        // items; any other item between them (a slice, a new axis, even an
        // ellipsis standing for no dimension) puts them first.
        let positions: Vec<usize> = parts
            .iter()
            .filter(|(_, p)| matches!(p, Part::Advanced(_)))
            .map(|(position, _)| *position)
            .collect();
        let adjacent = positions.windows(2).all(|w| w[1] - w[0] <= 1);
        let mut factors = Vec::new();
        let mut axis_of = Vec::new();
        let mut out_shape = Vec::new();
        let mut arrays = Vec::new();
        let mut point_at = None;
        for (_, part) in parts {
            match part {
                Part::Basic { factor, axis } => {
                    if axis {
                        out_shape.push(factor.len);
                        axis_of.push(Some(out_shape.len() - 1));
                    } else {
                        axis_of.push(None);
                    }
                    factors.push(factor);
                }
                Part::NewAxis => out_shape.push(1),
                Part::Advanced(a) => {
                    if point_at.is_none() {
                        point_at = Some(if adjacent { out_shape.len() } else { 0 });
                    }
                    arrays.extend(a);
                }
            }
        }
        if let Some(at) = point_at {
            let (factor, b) = point_factor(&arrays, &lone, budget)?;
            for a in axis_of.iter_mut().flatten() {
                if *a >= at {
                    *a += b.len();
                }
            }
            out_shape.splice(at..at, b.iter().copied());
            axis_of.push((!b.is_empty()).then(|| at + b.len() - 1));
            factors.push(factor);
        }
        Ok((factors, out_shape, axis_of))
    }

    #[allow(clippy::type_complexity)]
    fn resolve_orthogonal(
        &self,
        shape: &[u64],
    ) -> Result<(Vec<Factor>, Vec<u64>, Vec<Option<usize>>), ResolveError> {
        let rest = self.expand(shape.len(), false)?;
        let mut factors = Vec::new();
        let mut axes = Vec::new();
        let mut dim = 0;
        let not_in_mode = |what, item| SelectionError::NotInMode {
            mode: SelectionMode::Orthogonal,
            what,
            item,
        };
        let mut saw_ellipsis = false;
        for (position, item) in self.items().iter().enumerate() {
            let (factor, axis) = match item {
                SelectionItem::Ellipsis => {
                    for _ in 0..rest {
                        factors.push(range_factor(dim, 0, 1, shape[dim]));
                        axes.push(true);
                        dim += 1;
                    }
                    saw_ellipsis = true;
                    continue;
                }
                SelectionItem::NewAxis => return Err(not_in_mode("a new axis", position).into()),
                SelectionItem::Index(i) => (
                    range_factor(dim, normalize_index(*i, shape[dim], dim)?, 1, 1),
                    false,
                ),
                SelectionItem::Slice(s) => (slice_factor(s, shape[dim], dim)?, true),
                SelectionItem::Indices { shape: s, values } => {
                    if s.len() != 1 {
                        return Err(not_in_mode(
                            "an index array of more than 1 dimension",
                            position,
                        )
                        .into());
                    }
                    (
                        list_factor(dim, indices(dim, s, values, shape[dim])?.values),
                        true,
                    )
                }
                SelectionItem::Mask { shape: s, values } => {
                    if s.len() != 1 {
                        return Err(not_in_mode("a mask of more than 1 dimension", position).into());
                    }
                    let mut arrays = mask_indices(dim, s, values, shape)?;
                    (list_factor(dim, arrays.remove(0).values), true)
                }
            };
            factors.push(factor);
            axes.push(axis);
            dim += 1;
        }
        if !saw_ellipsis {
            while dim < shape.len() {
                factors.push(range_factor(dim, 0, 1, shape[dim]));
                axes.push(true);
                dim += 1;
            }
        }
        let mut out_shape = Vec::new();
        let axis_of = factors
            .iter()
            .zip(axes)
            .map(|(f, axis)| {
                axis.then(|| {
                    out_shape.push(f.len);
                    out_shape.len() - 1
                })
            })
            .collect();
        Ok((factors, out_shape, axis_of))
    }

    #[allow(clippy::type_complexity)]
    fn resolve_vectorized(
        &self,
        shape: &[u64],
        budget: u64,
    ) -> Result<(Vec<Factor>, Vec<u64>, Vec<Option<usize>>), ResolveError> {
        let ndim = shape.len();
        let mut arrays = Vec::new();
        let mut lone = Vec::new();
        if let [SelectionItem::Mask { shape: s, values }] = self.items() {
            if s.is_empty() && ndim == 0 {
                // A 0-d array's 0-d mask: one point or none, as NumPy.
                lone.push(vec![zero_d_mask(values)?]);
            } else if s.len() == ndim {
                arrays = mask_indices(0, s, values, shape)?;
            } else {
                return Err(SelectionError::MaskShape {
                    first: 0,
                    expected: shape.to_vec(),
                    got: s.clone(),
                }
                .into());
            }
        } else {
            for (position, item) in self.items().iter().enumerate() {
                let dim = arrays.len();
                if dim >= ndim {
                    return Err(SelectionError::TooManyIndices {
                        given: self.items().len(),
                        ndim,
                    }
                    .into());
                }
                arrays.push(match item {
                    SelectionItem::Index(i) => IndexArray {
                        dim,
                        shape: Vec::new(),
                        values: vec![normalize_index(*i, shape[dim], dim)?],
                    },
                    SelectionItem::Indices { shape: s, values } => {
                        indices(dim, s, values, shape[dim])?
                    }
                    other => {
                        return Err(SelectionError::NotInMode {
                            mode: SelectionMode::Vectorized,
                            what: match other {
                                SelectionItem::Slice(_) => "a slice",
                                SelectionItem::Ellipsis => "an ellipsis",
                                SelectionItem::NewAxis => "a new axis",
                                _ => "a mask beside other items",
                            },
                            item: position,
                        }
                        .into());
                    }
                });
            }
            if arrays.len() != ndim {
                return Err(SelectionError::TooFewIndices {
                    given: arrays.len(),
                    ndim,
                }
                .into());
            }
        }
        let (factor, b) = point_factor(&arrays, &lone, budget)?;
        let axis = (!b.is_empty()).then(|| b.len() - 1);
        Ok((vec![factor], b, vec![axis]))
    }

    #[allow(clippy::type_complexity)]
    fn resolve_blocks(
        &self,
        shape: &[u64],
        axes: &[Axis],
    ) -> Result<(Vec<Factor>, Vec<u64>, Vec<Option<usize>>), ResolveError> {
        let rest = self.expand(shape.len(), false)?;
        let mut chunk_ranges: Vec<(u64, u64)> = Vec::new();
        for (position, item) in self.items().iter().enumerate() {
            let dim = chunk_ranges.len();
            match item {
                SelectionItem::Ellipsis => {
                    for d in dim..dim + rest {
                        chunk_ranges.push((0, axes[d].num_chunks(shape[d])));
                    }
                }
                SelectionItem::Index(i) => {
                    let chunks = axes[dim].num_chunks(shape[dim]);
                    let c = normalize_index(*i, chunks, dim)?;
                    chunk_ranges.push((c, c + 1));
                }
                SelectionItem::Slice(s) => {
                    let chunks = axes[dim].num_chunks(shape[dim]);
                    if let Some(step) = s.step.filter(|&s| s != 1) {
                        return Err(SelectionError::BlockStep { step, dim }.into());
                    }
                    let (start, _, count) = normalize_slice(s, chunks, dim)?;
                    chunk_ranges.push((start, start + count));
                }
                _ => {
                    return Err(SelectionError::NotInMode {
                        mode: SelectionMode::Blocks,
                        what: "index arrays, masks or new axes",
                        item: position,
                    }
                    .into());
                }
            }
        }
        for d in chunk_ranges.len()..shape.len() {
            chunk_ranges.push((0, axes[d].num_chunks(shape[d])));
        }
        let mut factors = Vec::new();
        let mut out_shape = Vec::new();
        for (d, &(first, end)) in chunk_ranges.iter().enumerate() {
            let (start, stop) = if end > first {
                let start = axes[d].span(first).map_or(shape[d], |(s, _)| s);
                let stop = axes[d]
                    .span(end - 1)
                    .map_or(shape[d], |(s, n)| s.saturating_add(n))
                    .min(shape[d]);
                (start.min(shape[d]), stop)
            } else {
                (0, 0)
            };
            factors.push(range_factor(d, start, 1, stop.saturating_sub(start)));
            out_shape.push(stop.saturating_sub(start));
        }
        let axis_of = (0..shape.len()).map(Some).collect();
        Ok((factors, out_shape, axis_of))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(text: &str, len: u64) -> Vec<u64> {
        let selection = Selection::parse(text).unwrap();
        let SelectionItem::Slice(s) = &selection.items()[0] else {
            panic!()
        };
        let (start, step, count) = normalize_slice(s, len, 0).unwrap();
        (0..count)
            .map(|i| start.wrapping_add_signed(step * i as i64))
            .collect()
    }

    #[test]
    fn slices_follow_numpy_clamping() {
        // Expected values from NumPy 2 on `np.arange(10)`.
        assert_eq!(slice("-1:-11:-1", 10), [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
        assert_eq!(slice("8:100:-1", 10), Vec::<u64>::new());
        assert_eq!(slice("100::-3", 10), [9, 6, 3, 0]);
        assert_eq!(slice("-100:5", 10), [0, 1, 2, 3, 4]);
        assert_eq!(slice("5:-100:-1", 10), [5, 4, 3, 2, 1, 0]);
        assert_eq!(slice("::-1", 0), Vec::<u64>::new());
        assert_eq!(
            slice(&format!("{}::{}", i64::MIN, i64::MIN), 10),
            Vec::<u64>::new()
        );
        assert_eq!(slice(&format!("{}::{}", i64::MAX, i64::MIN), 10), [9]);
        assert_eq!(slice(&format!("::{}", i64::MAX), 10), [0]);
    }

    #[test]
    fn a_box_with_unit_steps_is_recognized() {
        let resolved = Selection::parse("1:3, 4:1:-1, 2")
            .unwrap()
            .resolve(&[5, 6, 7], &[], u64::MAX)
            .unwrap();
        assert_eq!(resolved.shape, [2, 3]);
        let (region, flip) = resolved.as_box().unwrap();
        assert_eq!(region, Region::new(vec![1, 2, 2], vec![2, 3, 1]));
        assert_eq!(flip, [1]);
    }
}
