//! zarrkit reads and writes Zarr: chunked, compressed N-dimensional arrays.
//!
//! # Quick start
//!
//! ```
//! use std::sync::Arc;
//! use zarrkit::{Array, Region, metadata::DataType, store::MemoryStore};
//!
//! let store = Arc::new(MemoryStore::new());
//! let array = Array::builder(&[4, 6], DataType::Float32, &[2, 3])
//!     .dimension_names(["y", "x"])
//!     .create(store.clone(), "/temperature")?;
//! let values: Vec<f32> = (0..24).map(|i| i as f32).collect();
//! array.write_region(&Region::whole(array.shape()), &values)?;
//!
//! let array = Array::open(store, "/temperature")?;
//! let middle: Vec<f32> = array.read_region(&Region::new(vec![1, 2], vec![2, 2]))?;
//! assert_eq!(middle, [8.0, 9.0, 14.0, 15.0]);
//! # Ok::<(), zarrkit::Error>(())
//! ```
//!
//! # Layers
//!
//! Each layer imports only the layers before it in this list (a test,
//! `tests/it/architecture.rs`, fails on an import against it):
//!
//! - [`store`]: bytes under keys, knowing nothing about Zarr.
//! - [`metadata`]: the one internal, v3-shaped model of arrays and groups,
//!   [`NodePath`], and the v3 JSON forms of extension objects and fill
//!   values ([`metadata::json`]), which codecs and formats share.
//! - `grid/`: geometry of chunk grids: the one box type ([`Region`], also
//!   [`codec::ChunkBox`]), the one walk over grid coordinates
//!   ([`array::GridWalk`]) and the pure planner (a region → the chunks it
//!   touches and the box of each, with no store keys), shared by the array
//!   engine and sharding; and [`Selection`]s with NumPy's semantics (parsed,
//!   resolved against a shape, grouped by chunk), which the array engine
//!   reads and writes ([`Array::read_selection`]).
//! - [`codec`]: array→array, array→bytes and bytes→bytes codecs by family
//!   ([`codec::core`], [`codec::ext`], [`codec::numcodecs`],
//!   [`codec::object`]) and the chain, all over one chunk-data type
//!   ([`codec::ChunkData`]: fixed-size bytes or variable-length elements).
//! - [`Error`]: the library's error, wrapping the store, model and codec
//!   errors.
//! - [`format`](mod@format): each Zarr format's documents and key layouts ↔
//!   the model, one module per version ([`format::v3`], [`format::v2`],
//!   [`format::v1`], and the v3 drafts under `format/v3_draft/`, public as
//!   [`format::v3_draft2022`], [`format::v3_draft2019`] and
//!   [`format::draft_dtypes`]), all of the same shape and chosen in one
//!   place, including consolidated metadata ([`format::consolidate`],
//!   re-exported as [`consolidate`]); the only module that knows which
//!   format a node is in.
//! - [`node`]: opening, listing and erasing any node.
//! - [`array`](mod@array), [`group`], [`migrate`]: regions, planned
//!   parallel reads and writes (one engine for every data type), the
//!   hierarchy, and migration between formats. Every read and write is
//!   planned by the pure planner of `grid/` (`array/plan.rs` adds each
//!   chunk's key), whose grid walk `resize`, listing and migration share; an array's chunks in the store
//!   are [`Array::stored_chunks`], found with its key layout,
//!   [`Array::key_layout`].

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod array;
pub mod codec;
pub mod copy;
mod error;
pub mod format;
mod grid;
pub mod group;
pub mod metadata;
pub mod migrate;
pub mod node;
pub mod store;

/// Consolidated metadata, kept at the crate root for existing callers; it
/// lives in [`format::consolidate`] because each format stores it its own way.
pub use format::consolidate;

// The README's quick start runs as a doctest.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub use array::{
    Array, ArrayBuilder, DEFAULT_IN_FLIGHT_BYTES, DEFAULT_MEMORY_BUDGET, Element, Region,
    Selection, SelectionError, SelectionItem, SelectionMode, Slice,
};
pub use error::{Error, HierarchyProblem, NodeKind};
pub use group::{Group, NewNode, Node, create_hierarchy};
pub use node::NodePath;
