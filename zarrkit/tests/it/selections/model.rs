//! A plain reference of NumPy's indexing, written for the tests and
//! independent of the library's resolver: each output element's array
//! coordinates, found by walking the output's multi-indices one at a time.

use zarrkit::{Selection, SelectionItem, SelectionMode};

/// What one output axis walks.
enum OutAxis {
    /// A slice or list along array dimension `dim`: its coordinates.
    Dim { dim: usize, coords: Vec<u64> },
    /// A new axis of length 1.
    New,
    /// Axis `j` of the broadcast index arrays.
    Broadcast(usize),
}

/// The output shape and, per output element in C order, its array
/// coordinates; `None` when NumPy (or zarr-python, for the other modes)
/// refuses the selection.
pub fn select(
    selection: &Selection,
    shape: &[u64],
    chunk_edges: &[Vec<u64>],
) -> Option<(Vec<u64>, Vec<Vec<u64>>)> {
    match selection.mode() {
        SelectionMode::Basic => basic(selection.items(), shape),
        SelectionMode::Orthogonal => orthogonal(selection.items(), shape),
        SelectionMode::Vectorized => vectorized(selection.items(), shape),
        SelectionMode::Blocks => blocks(selection.items(), shape, chunk_edges),
    }
}

/// The indices a Python slice walks over a sequence of `len`, by
/// stepping from the clamped start (the definition in Python's
/// documentation of `slice.indices`).
pub fn slice_indices(
    start: Option<i64>,
    stop: Option<i64>,
    step: Option<i64>,
    len: u64,
) -> Option<Vec<u64>> {
    let step = i128::from(step.unwrap_or(1));
    if step == 0 {
        return None;
    }
    let len = i128::from(len);
    let fix = |b: i64| {
        let b = i128::from(b);
        if b < 0 { b + len } else { b }
    };
    let mut out = Vec::new();
    if step > 0 {
        let mut i = start.map_or(0, fix).max(0);
        let stop = stop.map_or(len, fix).min(len);
        while i < stop {
            out.push(i as u64);
            i += step;
        }
    } else {
        let mut i = start.map_or(len - 1, fix).min(len - 1);
        let stop = stop.map_or(-1, fix).max(-1);
        while i > stop {
            out.push(i as u64);
            i += step;
        }
    }
    Some(out)
}

fn index(i: i64, len: u64) -> Option<u64> {
    let len = i128::from(len);
    let i = i128::from(i);
    let i = if i < 0 { i + len } else { i };
    (0..len).contains(&i).then_some(i as u64)
}

fn broadcast_shape(shapes: &[Vec<u64>]) -> Option<Vec<u64>> {
    let ndim = shapes.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = vec![1; ndim];
    for shape in shapes {
        for (k, &n) in shape.iter().rev().enumerate() {
            let o = &mut out[ndim - 1 - k];
            if *o == 1 {
                *o = n;
            } else if n != 1 && n != *o {
                return None;
            }
        }
    }
    Some(out)
}

/// The value of `values` (of `shape`) at broadcast multi-index `at`.
fn at_broadcast(values: &[u64], shape: &[u64], at: &[u64]) -> u64 {
    let offset = at.len() - shape.len();
    let mut flat = 0;
    for (k, &n) in shape.iter().enumerate() {
        let i = if n == 1 { 0 } else { at[offset + k] };
        flat = flat * n + i;
    }
    values[flat as usize]
}

/// Every multi-index of `shape` in C order.
fn multi_indices(shape: &[u64]) -> Vec<Vec<u64>> {
    let mut out = vec![Vec::new()];
    for &n in shape {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                (0..n).map(move |i| {
                    let mut p = prefix.clone();
                    p.push(i);
                    p
                })
            })
            .collect();
    }
    out
}

/// An index array: the dimension, its shape and its normalized values.
type Advanced = (usize, Vec<u64>, Vec<u64>);

fn mask_to_arrays(first: usize, shape: &[u64], values: &[bool]) -> Vec<Advanced> {
    let trues: Vec<Vec<u64>> = multi_indices(shape)
        .into_iter()
        .zip(values)
        .filter(|(_, b)| **b)
        .map(|(i, _)| i)
        .collect();
    (0..shape.len())
        .map(|k| {
            (
                first + k,
                vec![trues.len() as u64],
                trues.iter().map(|t| t[k]).collect(),
            )
        })
        .collect()
}

fn basic(items: &[SelectionItem], shape: &[u64]) -> Option<(Vec<u64>, Vec<Vec<u64>>)> {
    let ndim = shape.len();
    let consumed: usize = items
        .iter()
        .map(|i| match i {
            SelectionItem::Ellipsis | SelectionItem::NewAxis => 0,
            SelectionItem::Mask { shape, .. } => shape.len(),
            _ => 1,
        })
        .sum();
    let ellipses = items
        .iter()
        .filter(|i| **i == SelectionItem::Ellipsis)
        .count();
    if consumed > ndim || ellipses > 1 {
        return None;
    }
    let fancy = items.iter().any(|i| {
        matches!(
            i,
            SelectionItem::Indices { .. } | SelectionItem::Mask { .. }
        )
    });
    // Expand: a list of (item position, what) with every dimension named.
    let mut expanded: Vec<(usize, SelectionItem, usize)> = Vec::new();
    let mut dim = 0;
    for (p, item) in items.iter().enumerate() {
        match item {
            SelectionItem::Ellipsis => {
                for _ in 0..ndim - consumed {
                    expanded.push((p, SelectionItem::full(), dim));
                    dim += 1;
                }
            }
            SelectionItem::NewAxis => expanded.push((p, item.clone(), dim)),
            SelectionItem::Mask { shape, .. } => {
                expanded.push((p, item.clone(), dim));
                dim += shape.len();
            }
            _ => {
                expanded.push((p, item.clone(), dim));
                dim += 1;
            }
        }
    }
    if ellipses == 0 {
        while dim < ndim {
            expanded.push((items.len(), SelectionItem::full(), dim));
            dim += 1;
        }
    }
    let mut fixed = vec![0u64; ndim];
    let mut axes: Vec<(usize, OutAxis)> = Vec::new();
    let mut advanced: Vec<(usize, Advanced)> = Vec::new();
    for (p, item, d) in expanded {
        match item {
            SelectionItem::Index(i) if fancy => {
                advanced.push((p, (d, vec![], vec![index(i, shape[d])?])));
            }
            SelectionItem::Index(i) => fixed[d] = index(i, shape[d])?,
            SelectionItem::Slice(s) => axes.push((
                p,
                OutAxis::Dim {
                    dim: d,
                    coords: slice_indices(s.start, s.stop, s.step, shape[d])?,
                },
            )),
            SelectionItem::NewAxis => axes.push((p, OutAxis::New)),
            SelectionItem::Indices { shape: s, values } => {
                if s.iter().product::<u64>() != values.len() as u64 {
                    return None;
                }
                let v = values
                    .iter()
                    .map(|&i| index(i, shape[d]))
                    .collect::<Option<Vec<_>>>()?;
                advanced.push((p, (d, s, v)));
            }
            SelectionItem::Mask { shape: s, values } => {
                if s.as_slice() != &shape[d..d + s.len()]
                    || s.iter().product::<u64>() != values.len() as u64
                {
                    return None;
                }
                for a in mask_to_arrays(d, &s, &values) {
                    advanced.push((p, a));
                }
            }
            SelectionItem::Ellipsis => unreachable!(),
        }
    }
    let mut out_axes: Vec<OutAxis> = Vec::new();
    let mut b_shape = Vec::new();
    if !advanced.is_empty() {
        b_shape = broadcast_shape(
            &advanced
                .iter()
                .map(|(_, a)| a.1.clone())
                .collect::<Vec<_>>(),
        )?;
        let positions: Vec<usize> = advanced.iter().map(|(p, _)| *p).collect();
        let adjacent = positions.windows(2).all(|w| w[1] <= w[0] + 1);
        let first = positions[0];
        let b_axes = (0..b_shape.len()).map(OutAxis::Broadcast);
        if adjacent {
            let mut inserted = false;
            let mut b_axes = Some(b_axes);
            for (p, axis) in axes {
                if !inserted && p > first {
                    out_axes.extend(b_axes.take().unwrap());
                    inserted = true;
                }
                out_axes.push(axis);
            }
            if let Some(rest) = b_axes {
                out_axes.extend(rest);
            }
        } else {
            out_axes.extend(b_axes);
            out_axes.extend(axes.into_iter().map(|(_, a)| a));
        }
    } else {
        out_axes.extend(axes.into_iter().map(|(_, a)| a));
    }
    let out_shape: Vec<u64> = out_axes
        .iter()
        .map(|a| match a {
            OutAxis::Dim { coords, .. } => coords.len() as u64,
            OutAxis::New => 1,
            OutAxis::Broadcast(j) => b_shape[*j],
        })
        .collect();
    let mut coords_out = Vec::new();
    for at in multi_indices(&out_shape) {
        let mut coords = fixed.clone();
        let b_at: Vec<u64> = out_axes
            .iter()
            .zip(&at)
            .filter_map(|(a, &i)| matches!(a, OutAxis::Broadcast(_)).then_some(i))
            .collect();
        for (a, &i) in out_axes.iter().zip(&at) {
            if let OutAxis::Dim { dim, coords: c } = a {
                coords[*dim] = c[i as usize];
            }
        }
        for (_, (d, s, v)) in &advanced {
            coords[*d] = at_broadcast(v, s, &b_at);
        }
        coords_out.push(coords);
    }
    Some((out_shape, coords_out))
}

fn orthogonal(items: &[SelectionItem], shape: &[u64]) -> Option<(Vec<u64>, Vec<Vec<u64>>)> {
    let ndim = shape.len();
    let given = items
        .iter()
        .filter(|i| **i != SelectionItem::Ellipsis)
        .count();
    if given > ndim
        || items
            .iter()
            .filter(|i| **i == SelectionItem::Ellipsis)
            .count()
            > 1
    {
        return None;
    }
    let mut per_dim: Vec<(Vec<u64>, bool)> = Vec::new();
    for item in items {
        let d = per_dim.len();
        match item {
            SelectionItem::Ellipsis => {
                for &n in &shape[d..d + ndim - given] {
                    per_dim.push(((0..n).collect(), true));
                }
            }
            SelectionItem::Index(i) => per_dim.push((vec![index(*i, shape[d])?], false)),
            SelectionItem::Slice(s) => {
                per_dim.push((slice_indices(s.start, s.stop, s.step, shape[d])?, true));
            }
            SelectionItem::Indices { shape: s, values } if s.len() == 1 => per_dim.push((
                values
                    .iter()
                    .map(|&i| index(i, shape[d]))
                    .collect::<Option<_>>()?,
                true,
            )),
            SelectionItem::Mask { shape: s, values } if s.len() == 1 && s[0] == shape[d] => {
                per_dim.push((
                    (0..shape[d]).filter(|&i| values[i as usize]).collect(),
                    true,
                ));
            }
            _ => return None,
        }
    }
    while per_dim.len() < ndim {
        per_dim.push(((0..shape[per_dim.len()]).collect(), true));
    }
    let full_shape: Vec<u64> = per_dim.iter().map(|(c, _)| c.len() as u64).collect();
    let out_shape = per_dim
        .iter()
        .filter(|(_, keep)| *keep)
        .map(|(c, _)| c.len() as u64)
        .collect();
    let coords = multi_indices(&full_shape)
        .into_iter()
        .map(|at| {
            at.iter()
                .zip(&per_dim)
                .map(|(&i, (c, _))| c[i as usize])
                .collect()
        })
        .collect();
    Some((out_shape, coords))
}

fn vectorized(items: &[SelectionItem], shape: &[u64]) -> Option<(Vec<u64>, Vec<Vec<u64>>)> {
    let ndim = shape.len();
    let arrays: Vec<Advanced> = match items {
        [SelectionItem::Mask { shape: s, values }] if ndim > 0 => {
            if s.as_slice() != shape {
                return None;
            }
            mask_to_arrays(0, s, values)
        }
        _ => {
            if items.len() != ndim {
                return None;
            }
            items
                .iter()
                .enumerate()
                .map(|(d, item)| match item {
                    SelectionItem::Index(i) => Some((d, vec![], vec![index(*i, shape[d])?])),
                    SelectionItem::Indices { shape: s, values } => Some((
                        d,
                        s.clone(),
                        values
                            .iter()
                            .map(|&i| index(i, shape[d]))
                            .collect::<Option<_>>()?,
                    )),
                    _ => None,
                })
                .collect::<Option<_>>()?
        }
    };
    let b = broadcast_shape(&arrays.iter().map(|a| a.1.clone()).collect::<Vec<_>>())?;
    let coords = multi_indices(&b)
        .into_iter()
        .map(|at| {
            arrays
                .iter()
                .map(|(_, s, v)| at_broadcast(v, s, &at))
                .collect()
        })
        .collect();
    Some((b, coords))
}

fn blocks(
    items: &[SelectionItem],
    shape: &[u64],
    chunk_edges: &[Vec<u64>],
) -> Option<(Vec<u64>, Vec<Vec<u64>>)> {
    // Chunk boundaries per dimension, cut at the array's end.
    let starts: Vec<Vec<u64>> = chunk_edges
        .iter()
        .zip(shape)
        .map(|(edges, &n)| {
            let mut s = vec![0];
            for e in edges {
                let next = s.last().unwrap() + e;
                if *s.last().unwrap() >= n {
                    break;
                }
                s.push(next.min(n));
            }
            s
        })
        .collect();
    let mut ranges = Vec::new();
    let given = items
        .iter()
        .filter(|i| **i != SelectionItem::Ellipsis)
        .count();
    if given > shape.len() {
        return None;
    }
    for item in items {
        let d = ranges.len();
        let chunks = || (starts[d].len() - 1) as u64;
        match item {
            SelectionItem::Ellipsis => {
                for &n in &shape[d..d + shape.len() - given] {
                    ranges.push((0, n));
                }
            }
            SelectionItem::Index(i) => {
                let c = index(*i, chunks())? as usize;
                ranges.push((starts[d][c], starts[d][c + 1]));
            }
            SelectionItem::Slice(s) if s.step.unwrap_or(1) == 1 => {
                let c = slice_indices(s.start, s.stop, None, chunks())?;
                ranges.push(match (c.first(), c.last()) {
                    (Some(&a), Some(&b)) => (starts[d][a as usize], starts[d][b as usize + 1]),
                    _ => (0, 0),
                });
            }
            _ => return None,
        }
    }
    while ranges.len() < shape.len() {
        ranges.push((0, shape[ranges.len()]));
    }
    let out_shape: Vec<u64> = ranges.iter().map(|(a, b)| b - a).collect();
    let coords = multi_indices(&out_shape)
        .into_iter()
        .map(|at| at.iter().zip(&ranges).map(|(i, (a, _))| a + i).collect())
        .collect();
    Some((out_shape, coords))
}
