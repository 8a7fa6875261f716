//! Data written by other implementations: the interop matrix with
//! zarr-python 3.1 and tensorstore, the fixture corpus, zarr-python's
//! own v2 backward-compatibility data, and selections against
//! zarr-python and NumPy.

mod corpus;
// The interop matrix covers every codec, so it needs every codec feature.
#[cfg(all(
    feature = "gzip",
    feature = "zstd",
    feature = "blosc",
    feature = "crc32c"
))]
mod matrix;
// zarr-python compresses with zstd by default.
#[cfg(feature = "zstd")]
mod selections;
// zarr-python's fixture uses zlib, bz2 and blosc compressors.
#[cfg(all(feature = "blosc", feature = "zlib", feature = "bz2"))]
mod zarr2_fixture;
