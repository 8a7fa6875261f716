//! The single integration-test binary: one module per topic (`support`
//! holds the helpers they share).

mod architecture;
mod arrays;
mod codecs;
// Crash, fault and many-writer tests (#17) use zstd chunks and crc32c
// checksums.
#[cfg(all(feature = "zstd", feature = "crc32c"))]
mod crash;
mod data_types;
#[cfg(all(feature = "zstd", feature = "crc32c"))]
mod faults;
mod formats;
// Creating many nodes at once.
mod hierarchy;
mod interop;
#[cfg(all(feature = "zstd", feature = "crc32c"))]
mod many_writers;
// Huge hierarchies, grids and documents: bounded work and memory.
mod limits;
// The migration tests use gzip, zstd and crc32c chains.
#[cfg(all(feature = "gzip", feature = "zstd", feature = "crc32c"))]
mod migrate;
mod regressions;
// Keys, paths, archives and links that could reach outside a store root.
mod security;
mod selections;
// Remote stores against the test servers (scripts/servers.sh).
#[cfg(feature = "s3")]
mod remote;
// zarr-python's sharding index is checksummed with crc32c.
#[cfg(all(feature = "s3", feature = "http", feature = "zstd", feature = "crc32c"))]
mod remote_interop;
// Sharded arrays here use zstd inner chunks and a crc32c index.
#[cfg(all(feature = "zstd", feature = "crc32c"))]
mod sharding;
mod stores;
mod support;
// The zipped hierarchies hold sharded arrays with zstd inner chunks and a
// crc32c index.
#[cfg(all(feature = "zip", feature = "zstd", feature = "crc32c"))]
mod zip_stores;
