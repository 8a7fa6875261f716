//! Lookups along each dimension of a chunk grid: which chunk holds an
//! index, and where a chunk starts and how long it is.
//!
//! A `regular` grid (and a `rectilinear` dimension given as one integer) is
//! a division; explicit `rectilinear` edge lengths are a binary search over
//! the runs' cumulative starts (`extensions/chunk-grids/rectilinear`,
//! "Indexing": the chunk of `idx` is the first whose cumulative end exceeds
//! it). Runs are never expanded, so a trillion declared chunks cost one run.

use crate::metadata::{ChunkEdgeLengths, ChunkGrid};

/// One dimension of a chunk grid, ready for lookups.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Axis {
    /// Chunks of one length.
    Regular(u64),
    /// Runs of chunks of equal length, in order, with where each starts.
    Runs(Vec<AxisRun>),
}

/// A run of `count` chunks of `length`, the first being chunk `first_chunk`
/// and starting at element `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AxisRun {
    start: u64,
    first_chunk: u64,
    length: u64,
    count: u64,
}

/// The chunks a range of one dimension touches: for each, its index along
/// the dimension, its first element and its edge length.
pub(crate) type Spans = Vec<(u64, u64, u64)>;

impl Axis {
    /// The axes of `grid`. Sums saturate: metadata validation has already
    /// refused edge lengths whose sum overflows.
    pub(crate) fn of(grid: &ChunkGrid) -> Vec<Self> {
        match grid {
            ChunkGrid::Regular { chunk_shape } => {
                chunk_shape.iter().map(|c| Self::Regular(c.get())).collect()
            }
            ChunkGrid::Rectilinear { chunk_shapes } => chunk_shapes
                .iter()
                .map(|edges| match edges {
                    ChunkEdgeLengths::Regular(step) => Self::Regular(step.get()),
                    ChunkEdgeLengths::Runs(runs) => {
                        let mut start = 0u64;
                        let mut first_chunk = 0u64;
                        Self::Runs(
                            runs.iter()
                                .map(|run| {
                                    let axis_run = AxisRun {
                                        start,
                                        first_chunk,
                                        length: run.length.get(),
                                        count: run.count.get(),
                                    };
                                    start = start.saturating_add(
                                        run.length.get().saturating_mul(run.count.get()),
                                    );
                                    first_chunk = first_chunk.saturating_add(run.count.get());
                                    axis_run
                                })
                                .collect(),
                        )
                    }
                })
                .collect(),
        }
    }

    /// Whether every chunk along the dimension has one length.
    pub(crate) fn is_regular(&self) -> bool {
        matches!(self, Self::Regular(_))
    }

    /// The edge length of chunk 0 (1 for a dimension with no chunks, which
    /// only a zero-length dimension has).
    pub(crate) fn first_length(&self) -> u64 {
        match self {
            Self::Regular(c) => *c,
            Self::Runs(runs) => runs.first().map_or(1, |r| r.length),
        }
    }

    /// The chunk holding element `index` and the offset of `index` in it.
    /// `index` must lie within the chunks' extent (true for indices inside
    /// a validated array); past it, the last chunk is extended.
    pub(crate) fn locate(&self, index: u64) -> (u64, u64) {
        match self {
            Self::Regular(c) => (index / c, index % c),
            Self::Runs(runs) => {
                let i = runs.partition_point(|r| r.start <= index).saturating_sub(1);
                let Some(run) = runs.get(i) else {
                    return (0, index);
                };
                let within = index - run.start.min(index);
                let k = (within / run.length).min(run.count.saturating_sub(1));
                (run.first_chunk + k, within - k * run.length)
            }
        }
    }

    /// The first element and edge length of chunk `chunk`, or `None` past
    /// the last declared chunk.
    pub(crate) fn span(&self, chunk: u64) -> Option<(u64, u64)> {
        match self {
            Self::Regular(c) => Some((chunk.saturating_mul(*c), *c)),
            Self::Runs(runs) => {
                let i = runs
                    .partition_point(|r| r.first_chunk <= chunk)
                    .checked_sub(1)?;
                let run = runs[i];
                let k = chunk - run.first_chunk;
                (k < run.count).then(|| (run.start + k * run.length, run.length))
            }
        }
    }

    /// The number of chunks that start inside a dimension of `len` elements.
    pub(crate) fn num_chunks(&self, len: u64) -> u64 {
        match self {
            Self::Regular(c) => len.div_ceil(*c),
            _ if len == 0 => 0,
            Self::Runs(_) => self.locate(len - 1).0 + 1,
        }
    }

    /// The number of chunks that `start..end` (non-empty) touches: the
    /// length of [`Axis::spans`], found without building it.
    pub(crate) fn span_count(&self, start: u64, end: u64) -> u64 {
        self.locate(end - 1).0 - self.locate(start).0 + 1
    }

    /// The chunks that `start..end` (non-empty) touches, in order.
    pub(crate) fn spans(&self, start: u64, end: u64) -> Spans {
        let (first, _) = self.locate(start);
        let (last, _) = self.locate(end - 1);
        match self {
            Self::Regular(c) => (first..=last).map(|i| (i, i * c, *c)).collect(),
            Self::Runs(_) => (first..=last)
                .map_while(|i| self.span(i).map(|(s, n)| (i, s, n)))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readme_axes() -> Vec<Axis> {
        // rectilinear README, "Indexing": edge lengths [[16, 10], [24, 14]].
        Axis::of(&ChunkGrid::rectilinear(&[vec![16, 10], vec![24, 14]]).unwrap())
    }

    #[test]
    fn locate_resolves_the_readme_example() {
        let axes = readme_axes();
        // "the array index (20, 15) resolves to the chunk grid index (1, 0)
        // and the chunk index (4, 15)".
        assert_eq!(axes[0].locate(20), (1, 4));
        assert_eq!(axes[1].locate(15), (0, 15));
        assert_eq!(axes[0].locate(15), (0, 15));
        assert_eq!(axes[0].locate(16), (1, 0));
        assert_eq!(axes[1].locate(37), (1, 13));
    }

    #[test]
    fn runs_locate_within_and_across_runs() {
        // [1, 1, 1, 3, 5, 5]: runs (1×3), (3×1), (5×2); starts 0 1 2 3 6 11.
        let grid = ChunkGrid::rectilinear(&[vec![1, 1, 1, 3, 5, 5]]).unwrap();
        let axis = &Axis::of(&grid)[0];
        let expected = [
            (0, 0),
            (1, 0),
            (2, 0),
            (3, 0),
            (3, 1),
            (3, 2),
            (4, 0),
            (4, 4),
            (4, 4),
            (4, 4),
            (4, 4),
            (5, 0),
        ];
        let got: Vec<(u64, u64)> = [0, 1, 2, 3, 4, 5, 6, 10, 10, 10, 10, 11]
            .iter()
            .map(|&i| axis.locate(i))
            .collect();
        assert_eq!(got, expected);
        assert_eq!(axis.span(3), Some((3, 3)));
        assert_eq!(axis.span(5), Some((11, 5)));
        assert_eq!(axis.span(6), None);
        assert_eq!(axis.num_chunks(0), 0);
        assert_eq!(axis.num_chunks(11), 5);
        assert_eq!(axis.num_chunks(12), 6);
        assert_eq!(axis.spans(2, 7), vec![(2, 2, 1), (3, 3, 3), (4, 6, 5)]);
    }

    #[test]
    fn huge_runs_are_never_expanded() {
        let edges = ChunkEdgeLengths::from_runs([crate::metadata::EdgeRun {
            length: std::num::NonZeroU64::new(2).unwrap(),
            count: std::num::NonZeroU64::new(1 << 60).unwrap(),
        }])
        .unwrap();
        let axis = &Axis::of(&ChunkGrid::Rectilinear {
            chunk_shapes: vec![edges],
        })[0];
        assert_eq!(axis.locate((1 << 61) - 1), ((1 << 60) - 1, 1));
        assert_eq!(axis.num_chunks(1 << 61), 1 << 60);
        assert_eq!(axis.span(1 << 60), None);
    }

    #[test]
    fn regular_axis_divides() {
        let axis = Axis::Regular(4);
        assert_eq!(axis.locate(9), (2, 1));
        assert_eq!(axis.num_chunks(9), 3);
        assert_eq!(axis.spans(3, 9), vec![(0, 0, 4), (1, 4, 4), (2, 8, 4)]);
    }
}
