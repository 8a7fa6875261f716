//! Formats: documents ↔ the model, each format's round trips and interop
//! (v1, v2, the v3 drafts), the storage protocol, consolidated metadata.

#[cfg(feature = "zstd")]
mod consolidated;
mod display;
mod documents;
// The draft round trips use gzip, zstd and blosc.
#[cfg(all(feature = "gzip", feature = "zstd", feature = "blosc"))]
mod drafts;
// The protocol tests write v1 arrays with its default blosc compression.
#[cfg(feature = "blosc")]
mod protocol;
// The v1 matrix covers every v1 compression.
#[cfg(all(feature = "blosc", feature = "zlib", feature = "bz2", feature = "lzma"))]
mod v1;
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
