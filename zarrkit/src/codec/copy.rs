//! Copying boxes of elements between C-order buffers of different shapes,
//! for the array layer (regions ↔ chunks) and for codecs that decode parts
//! of chunks.

/// A box copy between two C-order element buffers.
///
/// Copies the box of `shape` elements at `src_start` in a buffer of
/// `src_shape` to `dst_start` in a buffer of `dst_shape`, each element
/// `elem` bytes. Trailing dimensions that the box spans fully in both
/// buffers are merged, so the inner loop is one `copy_from_slice` per
/// contiguous run.
///
/// The caller guarantees the box lies within both buffers (the planner
/// checks regions against the array shape before any copy).
pub(crate) struct BoxCopy<'a> {
    pub src_shape: &'a [u64],
    pub src_start: &'a [u64],
    pub dst_shape: &'a [u64],
    pub dst_start: &'a [u64],
    pub shape: &'a [u64],
    pub elem: usize,
}

/// The byte range of a C-order buffer of `dst_shape` elements of `elem`
/// bytes that a box of `shape` at `dst_start` fills, when its elements are
/// contiguous there (leading dimensions of length 1, then dimensions that
/// each span the buffer entirely), so a chunk of the box's shape can be
/// decoded straight into it. `None` otherwise or on overflow.
pub(crate) fn contiguous_range(
    dst_shape: &[u64],
    dst_start: &[u64],
    shape: &[u64],
    elem: usize,
) -> Option<std::ops::Range<usize>> {
    let first_long = shape.iter().position(|&n| n != 1).unwrap_or(shape.len());
    if (first_long + 1..shape.len()).any(|d| shape[d] != dst_shape[d]) {
        return None;
    }
    let mut offset = 0u64;
    for d in 0..shape.len() {
        offset = offset
            .checked_mul(dst_shape[d])?
            .checked_add(dst_start[d])?;
    }
    let len = shape
        .iter()
        .try_fold(1u64, |acc, &n| acc.checked_mul(n))?
        .checked_mul(elem as u64)?;
    let start = usize::try_from(offset).ok()?.checked_mul(elem)?;
    Some(start..start.checked_add(usize::try_from(len).ok()?)?)
}

/// Splits `out` into one mutable slice per range, so parallel tasks can
/// each own one: `ranges` must be sorted and disjoint and lie within `out`,
/// else `None`.
pub(crate) fn split_ranges(
    out: &mut [u8],
    ranges: impl IntoIterator<Item = std::ops::Range<usize>>,
) -> Option<Vec<&mut [u8]>> {
    let mut slices = Vec::new();
    let mut rest = out;
    let mut consumed = 0;
    for range in ranges {
        let skip = range.start.checked_sub(consumed)?;
        if range.end < range.start || skip.checked_add(range.len())? > rest.len() {
            return None;
        }
        let tail = std::mem::take(&mut rest);
        let (_, tail) = tail.split_at_mut(skip);
        let (slice, tail) = tail.split_at_mut(range.len());
        slices.push(slice);
        rest = tail;
        consumed = range.end;
    }
    Some(slices)
}

impl BoxCopy<'_> {
    /// Runs the copy.
    pub(crate) fn run(&self, src: &[u8], dst: &mut [u8]) {
        self.for_each_run(|s, d, len| dst[d..d + len].copy_from_slice(&src[s..s + len]));
    }

    /// Calls `f(src_offset, dst_offset, len)` (in bytes) for each contiguous run.
    pub(crate) fn for_each_run(&self, mut f: impl FnMut(usize, usize, usize)) {
        let ndim = self.shape.len();
        if self.shape.contains(&0) {
            return;
        }
        // Element strides of both buffers.
        let strides = |shape: &[u64]| {
            let mut s = vec![0usize; ndim];
            let mut acc = 1usize;
            for d in (0..ndim).rev() {
                s[d] = acc;
                acc = acc.saturating_mul(shape[d] as usize);
            }
            s
        };
        let src_strides = strides(self.src_shape);
        let dst_strides = strides(self.dst_shape);

        // Merge trailing dimensions that are full in both buffers: the run
        // covers them entirely. `inner` is the first dimension of the run.
        let mut inner = ndim;
        let mut run_elems = 1usize;
        while inner > 0 {
            let d = inner - 1;
            run_elems *= self.shape[d] as usize;
            inner = d;
            let full = self.shape[d] == self.src_shape[d] && self.shape[d] == self.dst_shape[d];
            if !full {
                break;
            }
        }
        let run_bytes = run_elems * self.elem;
        let offset = |start: &[u64], strides: &[usize]| -> usize {
            start
                .iter()
                .zip(strides)
                .map(|(&s, &st)| s as usize * st)
                .sum::<usize>()
        };
        let src_base = offset(self.src_start, &src_strides) * self.elem;
        let dst_base = offset(self.dst_start, &dst_strides) * self.elem;
        if inner == 0 {
            f(src_base, dst_base, run_bytes);
            return;
        }
        // Odometer over the outer dimensions 0..inner.
        let mut index = vec![0u64; inner];
        let (mut s, mut d) = (src_base, dst_base);
        loop {
            f(s, d, run_bytes);
            let mut dim = inner;
            loop {
                if dim == 0 {
                    return;
                }
                dim -= 1;
                index[dim] += 1;
                s += src_strides[dim] * self.elem;
                d += dst_strides[dim] * self.elem;
                if index[dim] < self.shape[dim] {
                    break;
                }
                s -= src_strides[dim] * self.elem * self.shape[dim] as usize;
                d -= dst_strides[dim] * self.elem * self.shape[dim] as usize;
                index[dim] = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reference: element by element with explicit index arithmetic.
    fn naive(c: &BoxCopy<'_>, src: &[u8], dst: &mut [u8]) {
        let n: u64 = c.shape.iter().product();
        let ndim = c.shape.len();
        for flat in 0..n {
            let mut rem = flat;
            let mut idx = vec![0u64; ndim];
            for d in (0..ndim).rev() {
                idx[d] = rem % c.shape[d];
                rem /= c.shape[d];
            }
            let lin = |shape: &[u64], start: &[u64]| {
                (0..ndim).fold(0u64, |acc, d| acc * shape[d] + start[d] + idx[d]) as usize
            };
            let s = lin(c.src_shape, c.src_start) * c.elem;
            let t = lin(c.dst_shape, c.dst_start) * c.elem;
            dst[t..t + c.elem].copy_from_slice(&src[s..s + c.elem]);
        }
    }

    /// Source shape, source start, destination shape, destination start,
    /// box shape, element size.
    type Case = (Vec<u64>, Vec<u64>, Vec<u64>, Vec<u64>, Vec<u64>, usize);

    fn case() -> impl Strategy<Value = Case> {
        (
            0usize..4,
            prop_oneof![Just(1usize), Just(2), Just(3), Just(8)],
        )
            .prop_flat_map(|(ndim, elem)| {
                (
                    prop::collection::vec((1u64..6, 1u64..6, 0u64..6), ndim),
                    prop::collection::vec(0u64..100, ndim * 2),
                )
                    .prop_map(move |(dims, r)| {
                        let mut ss = vec![];
                        let mut ds = vec![];
                        let mut st = vec![];
                        let mut dt = vec![];
                        let mut sh = vec![];
                        for (d, (a, b, c)) in dims.iter().enumerate() {
                            let shape = (*c).min(*a).min(*b);
                            sh.push(shape);
                            ss.push(*a);
                            ds.push(*b);
                            st.push(r[2 * d] % (a - shape + 1));
                            dt.push(r[2 * d + 1] % (b - shape + 1));
                        }
                        (ss, st, ds, dt, sh, elem)
                    })
            })
    }

    proptest! {
        #[test]
        fn box_copy_matches_element_by_element_copy((ss, st, ds, dt, sh, elem) in case()) {
            let c = BoxCopy { src_shape: &ss, src_start: &st, dst_shape: &ds, dst_start: &dt, shape: &sh, elem };
            let src: Vec<u8> = (0..ss.iter().product::<u64>() as usize * elem).map(|i| (i * 7 % 251) as u8).collect();
            let len = ds.iter().product::<u64>() as usize * elem;
            let mut fast = vec![0u8; len];
            let mut slow = vec![0u8; len];
            c.run(&src, &mut fast);
            naive(&c, &src, &mut slow);
            prop_assert_eq!(fast, slow);
        }
    }
}
