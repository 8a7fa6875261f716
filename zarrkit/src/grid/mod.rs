//! Geometry of chunk grids, below the codecs: the one box type
//! ([`Region`]), lookups along each dimension of a grid (`axis.rs`), the
//! one walk over grid coordinates ([`GridWalk`]), the pure planner
//! (`plan.rs`: a region → the chunks it touches and the box of each), and
//! selections with NumPy's semantics ([`Selection`], `selection/`: parsed,
//! resolved against a shape, grouped by chunk).
//!
//! It depends only on [`metadata`](crate::metadata) (the chunk grid), so
//! the array engine plans an array's chunks and sharding plans a shard's
//! inner chunks with the same code. Public items are re-exported where
//! callers know them: `zarrkit::array::{Region, GridWalk}`, the selection
//! types at the crate root and in `zarrkit::array`, and
//! `zarrkit::codec::ChunkBox` (the same type as [`Region`]).

pub(crate) mod axis;
pub(crate) mod plan;
mod region;
pub(crate) mod selection;
mod walk;

pub use region::Region;
pub use selection::{Selection, SelectionError, SelectionItem, SelectionMode, Slice};
pub use walk::GridWalk;
