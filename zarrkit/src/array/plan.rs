//! The array's plans: the pure planner of [`grid`](crate::grid) over the
//! array's chunk grid, with each chunk's store key (from the key layout)
//! and, on a `rectilinear` grid, its representation.
//!
//! The read and write engines (`io.rs`) fetch, decode, encode and copy what
//! a plan lists. [`GridWalk`](crate::grid::GridWalk) is the one walk over
//! chunk coordinates: the planner walks the chunks a region touches with
//! it; [`Array::resize`], [`Array::stored_chunks`] (when the store cannot
//! list) and migration walk the whole grid with it.

use super::{Array, Region};
use crate::codec::ChunkRepr;
use crate::error::Error;
use crate::format::ChunkLayout;
use crate::grid::axis::Axis;
use crate::grid::plan::{self, Piece};
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
pub(super) type PlanError = plan::PlanError<StoreError>;

/// Plans the chunks `region` touches with [`plan::plan_region`], in C
/// order of the chunk grid, each with the box it shares with the region
/// and its key from `layout`. `region` must be within `array_shape`.
///
/// `varying` is the representation of chunk (0, …, 0) when chunks differ in
/// shape (a `rectilinear` grid), so each piece gets its own; `None` when
/// every chunk has one shape. The plan is checked against `budget` bytes
/// before it is built.
pub(super) fn plan_chunks(
    axes: &[Axis],
    array_shape: &[u64],
    region: &Region,
    layout: &ChunkLayout,
    varying: Option<&ChunkRepr>,
    budget: u64,
) -> Result<Vec<ChunkPiece>, PlanError> {
    plan::plan_region(
        axes,
        array_shape,
        region,
        budget,
        std::mem::size_of::<ChunkPiece>(),
        |coords, chunk_shape, piece| {
            let Piece {
                in_chunk,
                in_region,
                shape,
                covers_chunk,
            } = piece;
            Ok(ChunkPiece {
                key: layout.chunk_key(coords)?,
                in_chunk,
                in_region,
                shape,
                covers_chunk,
                repr: varying.map(|repr| ChunkRepr {
                    shape: chunk_shape.to_vec(),
                    data_type: repr.data_type.clone(),
                    fill_value: repr.fill_value.clone(),
                }),
            })
        },
    )
}

impl Array {
    /// The chunks `region` touches, in C order of the chunk grid, each with
    /// the box it shares with the region (see [`plan_chunks`]). `region`
    /// must be within the array.
    pub(super) fn plan(&self, region: &Region) -> Result<Vec<ChunkPiece>, Error> {
        let varying = (!self.uniform_chunks).then_some(&self.chunk_repr);
        plan_chunks(
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
            PlanError::Piece(source) => source.into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{self, ZarrFormat};
    use crate::metadata::{ChunkGrid, ChunkKeyEncoding};
    use crate::node::NodePath;

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
        plan_chunks(&Axis::of(grid), shape, region, &layout(), None, u64::MAX)
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
        ChunkGrid::regular(chunk_shape).unwrap()
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
        let pieces = plan_chunks(
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
        let uniform = plan_chunks(&axes, &[26, 38], &region, &layout(), None, u64::MAX).unwrap();
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
}
