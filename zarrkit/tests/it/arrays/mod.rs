//! Arrays through the `Array` API: regions (planning, fill values,
//! read-modify-write, resize), the rectilinear chunk grid, and the chunks
//! in the store.

// The rectilinear tests shard with zstd inner chunks.
#[cfg(all(feature = "zlib", feature = "gzip"))]
mod local_reads;
#[cfg(feature = "zstd")]
mod rectilinear;
mod regions;
mod stored;
