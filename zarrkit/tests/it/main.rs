//! The single integration-test binary: one module per topic.

// The codec tests use every compressor, so they need every codec feature.
#[cfg(all(
    feature = "gzip",
    feature = "zstd",
    feature = "blosc",
    feature = "crc32c"
))]
mod codecs;
mod corpus;
mod formats;
mod regions;
mod stores;
