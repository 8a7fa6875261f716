//! The single integration-test binary: one module per topic.

mod architecture;
// The codec tests use every compressor, so they need every codec feature.
#[cfg(all(
    feature = "gzip",
    feature = "zstd",
    feature = "blosc",
    feature = "crc32c"
))]
mod codecs;
// The hierarchies here use the default zstd codec.
mod codecs_ext2;
#[cfg(feature = "zstd")]
mod consolidated;
mod corpus;
mod ext_codecs;
// The draft round trips use gzip, zstd and blosc.
#[cfg(all(feature = "gzip", feature = "zstd", feature = "blosc"))]
mod drafts;
mod ext_dtypes;
mod formats;
// The interop matrix covers every codec, so it needs every codec feature.
#[cfg(all(
    feature = "gzip",
    feature = "zstd",
    feature = "blosc",
    feature = "crc32c"
))]
mod interop;
// The migration tests use gzip, zstd and crc32c chains.
#[cfg(all(feature = "gzip", feature = "zstd", feature = "crc32c"))]
mod migrate;
// The protocol tests write v1 arrays with its default blosc compression.
#[cfg(feature = "blosc")]
mod protocol;
// The rectilinear tests shard with zstd inner chunks.
#[cfg(feature = "zstd")]
mod rectilinear;
mod regions;
mod regressions;
// Sharded arrays here use zstd inner chunks and a crc32c index.
#[cfg(all(feature = "zstd", feature = "crc32c"))]
mod sharding;
mod small_dtypes;
mod stores;
#[cfg(feature = "zstd")]
mod strings;
mod support;
// The object arrays here use zstd, zlib, blosc and msgpack.
#[cfg(all(
    feature = "zstd",
    feature = "zlib",
    feature = "blosc",
    feature = "msgpack"
))]
mod v2_objects;
// The interop and sharded string cases use zstd, gzip, blosc and crc32c.
#[cfg(all(
    feature = "gzip",
    feature = "zstd",
    feature = "blosc",
    feature = "crc32c"
))]
mod v3_strings;
// The v2 matrix covers every numcodecs compressor.
#[cfg(all(
    feature = "gzip",
    feature = "zstd",
    feature = "blosc",
    feature = "zlib",
    feature = "bz2",
    feature = "lzma",
    feature = "lz4"
))]
mod v2;
// The v2 string cases use blosc, zlib and zstd compressors.
#[cfg(all(feature = "blosc", feature = "zlib", feature = "zstd"))]
mod v2_strings;
// The v2 filter cases use zlib as the compressor.
#[cfg(feature = "zlib")]
mod v2_filters;
// The v1 matrix covers every v1 compression.
#[cfg(all(feature = "blosc", feature = "zlib", feature = "bz2", feature = "lzma"))]
mod v1;
// zarr-python's fixture uses zlib, bz2 and blosc compressors.
#[cfg(all(feature = "blosc", feature = "zlib", feature = "bz2"))]
mod zarr2_fixture;
