//! Data written by other implementations: the interop matrix with
//! zarr-python 3.1 and tensorstore, the fixture corpus, and zarr-python's
//! own v2 backward-compatibility data.

mod corpus;
// The interop matrix covers every codec, so it needs every codec feature.
#[cfg(all(
    feature = "gzip",
    feature = "zstd",
    feature = "blosc",
    feature = "crc32c"
))]
mod matrix;
// zarr-python's fixture uses zlib, bz2 and blosc compressors.
#[cfg(all(feature = "blosc", feature = "zlib", feature = "bz2"))]
mod zarr2_fixture;
