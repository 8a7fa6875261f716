//! Arrays through the `Array` API: regions (planning, fill values,
//! read-modify-write, resize), the rectilinear chunk grid, and the chunks
//! in the store.

// The rectilinear tests shard with zstd inner chunks.
#[cfg(feature = "zstd")]
mod rectilinear;
mod regions;
mod stored;
