//! Regions: boxes of elements, in an array or within one chunk (the one
//! box type: [`ChunkBox`](crate::codec::ChunkBox) is the same type).

use std::fmt;

/// A box of elements: a start and a shape per dimension, read and written
/// in C order.
///
/// Selections that are not boxes (strided, orthogonal, points) are planned
/// to be added as further selection types that plan into the same
/// per-chunk pieces, so the read and write paths do not change.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Region {
    start: Vec<u64>,
    shape: Vec<u64>,
}

impl Region {
    /// The region of `shape` elements starting at `start`.
    ///
    /// # Panics
    /// If `start` and `shape` differ in length (a caller's mistake).
    #[must_use]
    pub fn new(start: Vec<u64>, shape: Vec<u64>) -> Self {
        assert_eq!(
            start.len(),
            shape.len(),
            "start and shape must have the same length"
        );
        Self { start, shape }
    }

    /// The region `[start, end)` per dimension; `end` below `start` is an empty range.
    #[must_use]
    pub fn from_ranges(ranges: &[std::ops::Range<u64>]) -> Self {
        Self {
            start: ranges.iter().map(|r| r.start).collect(),
            shape: ranges
                .iter()
                .map(|r| r.end.saturating_sub(r.start))
                .collect(),
        }
    }

    /// The whole of an array of `shape`.
    #[must_use]
    pub fn whole(shape: &[u64]) -> Self {
        Self {
            start: vec![0; shape.len()],
            shape: shape.to_vec(),
        }
    }

    /// The first element of the region.
    #[must_use]
    pub fn start(&self) -> &[u64] {
        &self.start
    }

    /// The shape of the region.
    #[must_use]
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// The number of dimensions.
    #[must_use]
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// The end (exclusive) in each dimension, or `None` on overflow.
    #[must_use]
    pub fn end(&self) -> Option<Vec<u64>> {
        self.start
            .iter()
            .zip(&self.shape)
            .map(|(s, n)| s.checked_add(*n))
            .collect()
    }

    /// The number of elements, or `None` on overflow.
    #[must_use]
    pub fn num_elements(&self) -> Option<u64> {
        self.shape
            .iter()
            .try_fold(1u64, |acc, &n| acc.checked_mul(n))
    }

    /// Whether the region has no elements.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.shape.contains(&0)
    }

    /// Whether the region lies within an array of `shape`.
    #[must_use]
    pub fn is_within(&self, shape: &[u64]) -> bool {
        self.ndim() == shape.len()
            && self
                .end()
                .is_some_and(|end| end.iter().zip(shape).all(|(e, s)| e <= s))
    }

    /// The intersection with `other`, or `None` when they do not overlap.
    #[must_use]
    pub fn intersect(&self, other: &Region) -> Option<Region> {
        self.intersect_box(&other.start, &other.shape)
    }

    /// The intersection with the box of `shape` at `start`, or `None` when
    /// they do not overlap.
    pub(crate) fn intersect_box(&self, start: &[u64], shape: &[u64]) -> Option<Region> {
        let mut out = Region {
            start: Vec::with_capacity(self.ndim()),
            shape: Vec::with_capacity(self.ndim()),
        };
        for d in 0..self.ndim() {
            let s = self.start[d].max(start[d]);
            let e = (self.start[d].saturating_add(self.shape[d]))
                .min(start[d].saturating_add(shape[d]));
            if e <= s {
                return None;
            }
            out.start.push(s);
            out.shape.push(e - s);
        }
        Some(out)
    }
}

impl fmt::Display for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, (s, n)) in self.start.iter().zip(&self.shape).enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{s}..{}", s.saturating_add(*n))?;
        }
        f.write_str("]")
    }
}
