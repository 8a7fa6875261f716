//! The planner: which chunks of a grid a region touches and, for each, the
//! box it shares with the region, as a pure function of the grid.
//!
//! [`plan_region`] reads no store, runs no codec and names no key: it takes
//! the grid's axes, the shape of what the grid covers, and a region, and
//! hands each chunk touched (its grid coordinates, its edge lengths and a
//! [`Piece`]) to the caller, in C order of the grid. The array engine
//! (`array/plan.rs`) adds each chunk's store key and representation;
//! sharding plans a box of a shard over its inner chunks with it.

use super::GridWalk;
use super::axis::{Axis, Spans};
use super::region::Region;

/// Where a region and one chunk overlap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    /// The overlap's start within the chunk.
    pub(crate) in_chunk: Vec<u64>,
    /// The overlap's start within the region.
    pub(crate) in_region: Vec<u64>,
    /// The overlap's shape.
    pub(crate) shape: Vec<u64>,
    /// Whether the overlap covers every element of the chunk that lies
    /// inside the array, so a write need not read the chunk first.
    pub(crate) covers_chunk: bool,
}

/// Why a region could not be planned.
#[derive(Debug)]
pub(crate) enum PlanError<E> {
    /// The plan would need more memory than the budget allows.
    MemoryBudget {
        /// What was being planned, for the error message.
        what: String,
        /// The bytes the plan would need (at least).
        needed: u64,
    },
    /// The caller's function refused a piece.
    Piece(E),
}

/// Plans the chunks `region` touches, in C order of the chunk grid, each
/// with the box it shares with the region. `region` must be within
/// `array_shape` (an empty region plans nothing).
///
/// `axes` are the grid's dimensions. For each chunk touched, `make` gets
/// its grid coordinates, its edge lengths (lent, not allocated per chunk)
/// and the [`Piece`], and returns what the plan holds for it. The plan
/// holds one entry per chunk touched, so it is checked against `budget`
/// bytes (at `entry_bytes` each, plus the piece's own vectors) before it
/// is built.
pub(crate) fn plan_region<T, E>(
    axes: &[Axis],
    array_shape: &[u64],
    region: &Region,
    budget: u64,
    entry_bytes: usize,
    mut make: impl FnMut(&[u64], &[u64], Piece) -> Result<T, E>,
) -> Result<Vec<T>, PlanError<E>> {
    let ndim = array_shape.len();
    // The plan holds one piece per chunk touched: a region of a few
    // bytes per chunk (chunks of one element) needs far more memory for
    // its plan than for its data, so the plan has a budget too.
    let counts: Vec<u64> = (0..ndim)
        .map(|d| {
            let start = region.start()[d];
            match region.shape()[d] {
                0 => 0,
                len => axes[d].span_count(start, start + len),
            }
        })
        .collect();
    let piece_bytes = (entry_bytes + ndim * 3 * 8 + 32) as u64;
    let planned = counts
        .iter()
        .try_fold(1u64, |acc, &n| acc.checked_mul(n))
        .and_then(|n| n.checked_mul(piece_bytes))
        .unwrap_or(u64::MAX);
    if planned > budget {
        return Err(PlanError::MemoryBudget {
            what: format!(
                "planning a region of shape {:?} ({})",
                region.shape(),
                counts
                    .iter()
                    .try_fold(1u64, |acc, &n| acc.checked_mul(n))
                    .map_or_else(
                        || "more than 2^64 chunks".to_string(),
                        |n| format!("{n} chunk{}", if n == 1 { "" } else { "s" })
                    )
            ),
            needed: planned,
        });
    }
    // Per dimension, the chunks the region touches: a division for a
    // regular dimension, a binary search for an irregular one, once per
    // dimension rather than once per chunk.
    let spans: Vec<Spans> = (0..ndim)
        .map(|d| {
            let start = region.start()[d];
            match region.shape()[d] {
                0 => Vec::new(),
                len => axes[d].spans(start, start + len),
            }
        })
        .collect();
    // The box of the grid the region touches: from each dimension's first
    // chunk, as many chunks as its spans hold.
    let first: Vec<u64> = spans
        .iter()
        .map(|s| s.first().map_or(0, |&(index, _, _)| index))
        .collect();
    let lens: Vec<u64> = spans.iter().map(|s| s.len() as u64).collect();
    let mut walk = GridWalk::new(&first, &lens);
    let mut chunk_shape = vec![0u64; ndim];
    let mut pieces = Vec::new();
    while let Some(coords) = walk.next_coords() {
        let mut in_chunk = Vec::with_capacity(ndim);
        let mut in_region = Vec::with_capacity(ndim);
        let mut shape = Vec::with_capacity(ndim);
        let mut covers_chunk = true;
        for d in 0..ndim {
            let (_, chunk_start, chunk_len) = spans[d][(coords[d] - first[d]) as usize];
            let chunk_end = (chunk_start + chunk_len).min(array_shape[d]);
            let start = chunk_start.max(region.start()[d]);
            let end = chunk_end.min(region.start()[d] + region.shape()[d]);
            in_chunk.push(start - chunk_start);
            in_region.push(start - region.start()[d]);
            shape.push(end - start);
            covers_chunk &= start == chunk_start && end == chunk_end;
            chunk_shape[d] = chunk_len;
        }
        let piece = Piece {
            in_chunk,
            in_region,
            shape,
            covers_chunk,
        };
        pieces.push(make(coords, &chunk_shape, piece).map_err(PlanError::Piece)?);
    }
    Ok(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::ChunkGrid;
    use std::convert::Infallible;

    fn regular(chunk_shape: &[u64]) -> ChunkGrid {
        ChunkGrid::regular(chunk_shape).unwrap()
    }

    /// The plan of `region`, each piece with its chunk's coordinates.
    fn plan(
        axes: &[Axis],
        shape: &[u64],
        region: &Region,
        budget: u64,
    ) -> Result<Vec<(Vec<u64>, Piece)>, PlanError<()>> {
        plan_region(axes, shape, region, budget, 64, |coords, _, piece| {
            Ok((coords.to_vec(), piece))
        })
    }

    #[test]
    fn a_plan_over_the_budget_is_refused_before_it_is_built() {
        let axes = Axis::of(&regular(&[1, 1]));
        let region = Region::whole(&[1000, 1000]);
        let error = plan(&axes, &[1000, 1000], &region, 1 << 20).err().unwrap();
        let PlanError::MemoryBudget { what, needed } = error else {
            panic!("expected a budget error, got {error:?}");
        };
        assert_eq!(
            what,
            "planning a region of shape [1000, 1000] (1000000 chunks)"
        );
        assert!(needed > 1 << 20);
        let huge = Region::whole(&[u64::MAX, u64::MAX]);
        let error = plan(&axes, &[u64::MAX; 2], &huge, u64::MAX - 1)
            .err()
            .unwrap();
        assert!(
            matches!(&error, PlanError::MemoryBudget { what, needed: u64::MAX }
                if what.contains("more than 2^64 chunks")),
            "{error:?}"
        );
    }

    #[test]
    fn pieces_carry_their_chunk_coordinates_and_edge_lengths() {
        let grid = ChunkGrid::rectilinear(&[vec![16, 10], vec![24, 14]]).unwrap();
        let region = Region::new(vec![10, 20], vec![10, 10]);
        let mut edges = Vec::new();
        let pieces = plan_region(
            &Axis::of(&grid),
            &[26, 38],
            &region,
            u64::MAX,
            64,
            |coords, chunk_shape, _| {
                edges.push(chunk_shape.to_vec());
                Ok::<_, Infallible>(coords.to_vec())
            },
        )
        .unwrap();
        assert_eq!(pieces, [[0, 0], [0, 1], [1, 0], [1, 1]]);
        assert_eq!(edges, [[16, 24], [16, 14], [10, 24], [10, 14]]);
    }

    proptest::proptest! {
        /// The pieces tile the region exactly once (STYLE.md, "Tests").
        #[test]
        fn pieces_tile_the_region_exactly_once(
            dims in proptest::collection::vec((1u64..20, 1u64..6, 0u64..20, 0u64..20), 0..4),
        ) {
            let shape: Vec<u64> = dims.iter().map(|d| d.0).collect();
            let chunks: Vec<u64> = dims.iter().map(|d| d.1).collect();
            let start: Vec<u64> = dims.iter().map(|d| d.2 % (d.0 + 1)).collect();
            let len: Vec<u64> = dims
                .iter()
                .zip(&start)
                .map(|(d, &s)| d.3 % (d.0 - s + 1))
                .collect();
            let region = Region::new(start, len.clone());
            let axes = Axis::of(&regular(&chunks));
            let pieces = plan(&axes, &shape, &region, u64::MAX).unwrap();
            let n: u64 = len.iter().product();
            let mut seen = vec![0u8; n as usize];
            for (_, p) in &pieces {
                for offset in GridWalk::new(&p.in_region, &p.shape) {
                    let flat = offset
                        .iter()
                        .zip(&len)
                        .fold(0u64, |acc, (&o, &l)| acc * l + o);
                    seen[flat as usize] += 1;
                }
            }
            proptest::prop_assert!(seen.iter().all(|&s| s == 1));
        }
    }
}
