//! The planner: which chunks a region touches and, for each, the box it
//! shares with the region, as a pure function of the chunk grid.
//!
//! [`plan_region`] reads no store and runs no codec: it takes the grid's
//! axes (see [`grid`](super::grid)), the array's shape, the key layout and
//! a region, and returns one [`ChunkPiece`] per chunk, in C order of the
//! grid. The read and write engines (`io.rs`) fetch, decode, encode and copy
//! what it lists.
//!
//! [`GridWalk`] is the one walk over chunk coordinates: every position of
//! a box of the grid, in C order. The planner walks the chunks a region
//! touches with it; [`Array::resize`], [`Array::stored_chunks`] (when the
//! store cannot list) and migration walk the whole grid with it.

use super::grid::{Axis, Spans};
use super::{Array, Region};
use crate::codec::ChunkRepr;
use crate::error::Error;
use crate::format::ChunkLayout;
use crate::store::{StoreError, StoreKey};

/// One chunk of a plan: its key, and where the region and the
/// chunk overlap.
pub(super) struct ChunkPiece {
    pub(super) key: StoreKey,
    /// The overlap's start within the chunk.
    pub(super) in_chunk: Vec<u64>,
    /// The overlap's start within the region.
    pub(super) in_region: Vec<u64>,
    /// The overlap's shape.
    pub(super) shape: Vec<u64>,
    /// Whether the overlap covers every element of the chunk that lies
    /// inside the array, so a write need not read the chunk first.
    pub(super) covers_chunk: bool,
    /// The chunk's representation when chunks differ in shape (a
    /// `rectilinear` grid); `None` when it is the array's `chunk_repr`.
    pub(super) repr: Option<ChunkRepr>,
}

/// Why a region could not be planned.
#[derive(Debug)]
pub(super) enum PlanError {
    /// The plan would need more memory than the budget allows.
    MemoryBudget {
        /// What was being planned, for the error message.
        what: String,
        /// The bytes the plan would need (at least).
        needed: u64,
    },
    /// A chunk key could not be formed.
    Key(StoreError),
}

/// Plans the chunks `region` touches, in C order of the chunk grid, each
/// with the box it shares with the region. `region` must be within
/// `array_shape` (an empty region plans nothing).
///
/// `axes` are the grid's dimensions, `layout` names each chunk, and
/// `varying` is the representation of chunk (0, …, 0) when chunks differ in
/// shape (a `rectilinear` grid), so each piece gets its own; `None` when
/// every chunk has one shape. The plan holds one piece per chunk touched, so
/// it is checked against `budget` bytes before it is built.
pub(super) fn plan_region(
    axes: &[Axis],
    array_shape: &[u64],
    region: &Region,
    layout: &ChunkLayout,
    varying: Option<&ChunkRepr>,
    budget: u64,
) -> Result<Vec<ChunkPiece>, PlanError> {
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
    let piece_bytes = (std::mem::size_of::<ChunkPiece>() + ndim * 3 * 8 + 32) as u64;
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
        }
        let repr = varying.map(|repr| ChunkRepr {
            shape: (0..ndim)
                .map(|d| spans[d][(coords[d] - first[d]) as usize].2)
                .collect(),
            data_type: repr.data_type.clone(),
            fill_value: repr.fill_value.clone(),
        });
        pieces.push(ChunkPiece {
            key: layout.chunk_key(coords).map_err(PlanError::Key)?,
            in_chunk,
            in_region,
            shape,
            covers_chunk,
            repr,
        });
    }
    Ok(pieces)
}

impl Array {
    /// The chunks `region` touches, in C order of the chunk grid, each with
    /// the box it shares with the region (see [`plan_region`]). `region`
    /// must be within the array.
    pub(super) fn plan(&self, region: &Region) -> Result<Vec<ChunkPiece>, Error> {
        let varying = (!self.uniform_chunks).then_some(&self.chunk_repr);
        plan_region(
            &self.axes,
            self.shape(),
            region,
            &self.layout,
            varying,
            self.memory_budget,
        )
        .map_err(|error| match error {
            PlanError::MemoryBudget { what, needed } => Error::MemoryBudget {
                path: self.path.clone(),
                what,
                needed,
                budget: self.memory_budget,
            },
            PlanError::Key(source) => source.into(),
        })
    }
}

/// Every position of a box of a grid, in C order (the last dimension
/// fastest): the one walk over chunk coordinates, which the planner,
/// [`Array::resize`] and [`Array::stored_chunks`] share.
///
/// [`GridWalk::next_coords`] lends each position without allocating; as an
/// [`Iterator`] it yields owned coordinates. A box with an empty dimension
/// has no positions; a 0-d box has one, `[]`. Positions are produced one at
/// a time, so a walk over a grid of 10^15 chunks holds no list of them.
///
/// ```
/// use zarrkit::array::GridWalk;
/// let all: Vec<Vec<u64>> = GridWalk::whole(&[2, 2]).collect();
/// assert_eq!(all, [[0, 0], [0, 1], [1, 0], [1, 1]]);
/// let mut walk = GridWalk::new(&[3, 5], &[2, 1]);
/// assert_eq!(walk.next_coords(), Some(&[3, 5][..]));
/// assert_eq!(walk.next_coords(), Some(&[4, 5][..]));
/// assert_eq!(walk.next_coords(), None);
/// ```
#[derive(Clone, Debug)]
pub struct GridWalk {
    start: Vec<u64>,
    /// The end of the box along each dimension (exclusive).
    end: Vec<u64>,
    /// The position last lent.
    coords: Vec<u64>,
    state: WalkState,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WalkState {
    /// Nothing lent yet.
    Fresh,
    /// `coords` was lent last.
    Walking,
    /// Every position was lent.
    Done,
}

impl GridWalk {
    /// The positions from `start` on, `shape[d]` of them along dimension
    /// `d`. Ends past `u64::MAX` are cut there.
    ///
    /// # Panics
    /// If `start` and `shape` differ in length.
    #[must_use]
    pub fn new(start: &[u64], shape: &[u64]) -> Self {
        assert_eq!(
            start.len(),
            shape.len(),
            "a grid walk's start and shape differ in length"
        );
        Self {
            start: start.to_vec(),
            end: start
                .iter()
                .zip(shape)
                .map(|(&s, &n)| s.saturating_add(n))
                .collect(),
            coords: start.to_vec(),
            state: WalkState::Fresh,
        }
    }

    /// Every position of a grid of `grid_shape` (such as
    /// [`Array::chunk_grid_shape`]).
    #[must_use]
    pub fn whole(grid_shape: &[u64]) -> Self {
        Self::new(&vec![0; grid_shape.len()], grid_shape)
    }

    /// The next position, or `None` when the walk is done.
    pub fn next_coords(&mut self) -> Option<&[u64]> {
        match self.state {
            WalkState::Done => return None,
            WalkState::Fresh => {
                if self.start.iter().zip(&self.end).any(|(s, e)| s >= e) {
                    self.state = WalkState::Done;
                    return None;
                }
                self.state = WalkState::Walking;
                return Some(&self.coords);
            }
            WalkState::Walking => {}
        }
        // Next position in C order; done when every dimension wraps.
        for d in (0..self.coords.len()).rev() {
            self.coords[d] += 1;
            if self.coords[d] < self.end[d] {
                return Some(&self.coords);
            }
            self.coords[d] = self.start[d];
        }
        self.state = WalkState::Done;
        None
    }
}

impl Iterator for GridWalk {
    type Item = Vec<u64>;

    fn next(&mut self) -> Option<Vec<u64>> {
        self.next_coords().map(<[u64]>::to_vec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{self, ZarrFormat};
    use crate::metadata::{ChunkGrid, ChunkKeyEncoding};
    use crate::node::NodePath;
    use std::num::NonZeroU64;

    fn layout() -> ChunkLayout {
        format::chunk_layout(
            ZarrFormat::V3,
            &NodePath::new("/a").unwrap(),
            &ChunkKeyEncoding::default(),
        )
    }

    /// A piece as (key, in_chunk, in_region, shape, covers_chunk).
    type Row = (String, Vec<u64>, Vec<u64>, Vec<u64>, bool);

    /// The plan of `region`, as [`Row`]s.
    fn plan(grid: &ChunkGrid, shape: &[u64], region: &Region) -> Vec<Row> {
        plan_region(&Axis::of(grid), shape, region, &layout(), None, u64::MAX)
            .unwrap()
            .into_iter()
            .map(|p| {
                (
                    p.key.as_str().to_string(),
                    p.in_chunk,
                    p.in_region,
                    p.shape,
                    p.covers_chunk,
                )
            })
            .collect()
    }

    fn regular(chunk_shape: &[u64]) -> ChunkGrid {
        ChunkGrid::Regular {
            chunk_shape: chunk_shape
                .iter()
                .map(|&n| NonZeroU64::new(n).unwrap())
                .collect(),
        }
    }

    #[test]
    fn grid_iteration_visits_every_position_in_c_order() {
        let all: Vec<Vec<u64>> = GridWalk::whole(&[2, 3]).collect();
        assert_eq!(
            all,
            [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]].map(Vec::from)
        );
        assert_eq!(
            GridWalk::whole(&[]).collect::<Vec<_>>(),
            [Vec::<u64>::new()]
        );
        assert_eq!(GridWalk::whole(&[3, 0]).count(), 0);
    }

    #[test]
    fn a_walk_covers_a_box_away_from_the_origin() {
        let all: Vec<Vec<u64>> = GridWalk::new(&[5, 7, 1], &[2, 1, 2]).collect();
        assert_eq!(
            all,
            [[5, 7, 1], [5, 7, 2], [6, 7, 1], [6, 7, 2]].map(Vec::from)
        );
        assert_eq!(GridWalk::new(&[4], &[0]).count(), 0);
        let mut walk = GridWalk::new(&[u64::MAX - 1], &[5]);
        assert_eq!(walk.next_coords(), Some(&[u64::MAX - 1][..]));
        assert_eq!(walk.next_coords(), None);
        assert_eq!(walk.next_coords(), None);
    }

    #[test]
    fn edge_chunks_are_cut_at_the_array_edge() {
        // 10 × 7 in chunks of 4 × 4: the last chunks hold 2 rows, 3 columns.
        let pieces = plan(
            &regular(&[4, 4]),
            &[10, 7],
            &Region::new(vec![3, 3], vec![7, 4]),
        );
        let expected = [
            ("a/c/0/0", [3, 3], [0, 0], [1, 1], false),
            ("a/c/0/1", [3, 0], [0, 1], [1, 3], false),
            ("a/c/1/0", [0, 3], [1, 0], [4, 1], false),
            ("a/c/1/1", [0, 0], [1, 1], [4, 3], true),
            ("a/c/2/0", [0, 3], [5, 0], [2, 1], false),
            ("a/c/2/1", [0, 0], [5, 1], [2, 3], true),
        ]
        .map(|(k, c, r, s, covers)| (k.to_string(), c.to_vec(), r.to_vec(), s.to_vec(), covers));
        assert_eq!(pieces, expected);
    }

    #[test]
    fn rectilinear_chunks_each_get_their_shape() {
        // Edge lengths [[16, 10], [24, 14]] (rectilinear README, "Indexing").
        let grid = ChunkGrid::rectilinear(&[vec![16, 10], vec![24, 14]]).unwrap();
        let axes = Axis::of(&grid);
        let template = ChunkRepr {
            shape: vec![16, 24],
            data_type: crate::metadata::DataType::UInt8,
            fill_value: crate::metadata::FillValue::new(vec![0u8]),
        };
        let region = Region::new(vec![10, 20], vec![10, 10]);
        let pieces = plan_region(
            &axes,
            &[26, 38],
            &region,
            &layout(),
            Some(&template),
            u64::MAX,
        )
        .unwrap();
        let keys: Vec<&str> = pieces.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(keys, ["a/c/0/0", "a/c/0/1", "a/c/1/0", "a/c/1/1"]);
        let in_chunk: Vec<&[u64]> = pieces.iter().map(|p| p.in_chunk.as_slice()).collect();
        assert_eq!(in_chunk, [&[10, 20], &[10, 0], &[0, 20], &[0, 0]]);
        let shapes: Vec<&[u64]> = pieces.iter().map(|p| p.shape.as_slice()).collect();
        assert_eq!(shapes, [&[6, 4], &[6, 6], &[4, 4], &[4, 6]]);
        let chunk_shapes: Vec<&[u64]> = pieces
            .iter()
            .map(|p| p.repr.as_ref().unwrap().shape.as_slice())
            .collect();
        assert_eq!(chunk_shapes, [&[16, 24], &[16, 14], &[10, 24], &[10, 14]]);
        // Without a template, pieces carry no representation of their own.
        let uniform = plan_region(&axes, &[26, 38], &region, &layout(), None, u64::MAX).unwrap();
        assert!(uniform.iter().all(|p| p.repr.is_none()));
    }

    #[test]
    fn a_zero_dimensional_array_has_one_piece() {
        let pieces = plan(&regular(&[]), &[], &Region::whole(&[]));
        assert_eq!(pieces, [("a/c".to_string(), vec![], vec![], vec![], true)]);
    }

    #[test]
    fn empty_dimensions_plan_nothing() {
        assert!(plan(&regular(&[4, 4]), &[0, 8], &Region::whole(&[0, 8])).is_empty());
        assert!(
            plan(
                &regular(&[4, 4]),
                &[8, 8],
                &Region::new(vec![8, 0], vec![0, 8])
            )
            .is_empty()
        );
    }

    #[test]
    fn a_plan_over_the_budget_is_refused_before_it_is_built() {
        let axes = Axis::of(&regular(&[1, 1]));
        let region = Region::whole(&[1000, 1000]);
        let error = plan_region(&axes, &[1000, 1000], &region, &layout(), None, 1 << 20)
            .err()
            .unwrap();
        let PlanError::MemoryBudget { what, needed } = error else {
            panic!("expected a budget error, got {error:?}");
        };
        assert_eq!(
            what,
            "planning a region of shape [1000, 1000] (1000000 chunks)"
        );
        assert!(needed > 1 << 20);
        let huge = Region::whole(&[u64::MAX, u64::MAX]);
        let error = plan_region(&axes, &[u64::MAX; 2], &huge, &layout(), None, u64::MAX - 1)
            .err()
            .unwrap();
        assert!(
            matches!(&error, PlanError::MemoryBudget { what, needed: u64::MAX }
                if what.contains("more than 2^64 chunks")),
            "{error:?}"
        );
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
            let pieces = plan_region(&axes, &shape, &region, &layout(), None, u64::MAX).unwrap();
            let n: u64 = len.iter().product();
            let mut seen = vec![0u8; n as usize];
            for p in &pieces {
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
