//! The one walk over chunk coordinates: every position of a box of a grid,
//! in C order.

/// Every position of a box of a grid, in C order (the last dimension
/// fastest): the one walk over chunk coordinates, which the planner,
/// `Array::resize`, `Array::stored_chunks` and sharding share.
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
    /// `Array::chunk_grid_shape`).
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
}
