//! Arrays through the `Array` API: regions (planning, fill values,
//! read-modify-write, resize) and the rectilinear chunk grid.

// The rectilinear tests shard with zstd inner chunks.
#[cfg(feature = "zstd")]
mod rectilinear;
mod regions;
