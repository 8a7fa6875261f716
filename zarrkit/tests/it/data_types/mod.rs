//! Data types: the small and extension v3 types, strings, byte strings and
//! structs in v2 and v3, and v2 object arrays.

mod extension;
// The object arrays here use zstd, zlib, blosc and msgpack.
#[cfg(all(
    feature = "zstd",
    feature = "zlib",
    feature = "blosc",
    feature = "msgpack"
))]
mod objects;
mod small;
#[cfg(feature = "zstd")]
mod strings;
// The v2 string cases use blosc, zlib and zstd compressors.
#[cfg(all(feature = "blosc", feature = "zlib", feature = "zstd"))]
mod strings_v2;
// The interop and sharded string cases use zstd, gzip, blosc and crc32c.
#[cfg(all(
    feature = "gzip",
    feature = "zstd",
    feature = "blosc",
    feature = "crc32c"
))]
mod strings_v3;
