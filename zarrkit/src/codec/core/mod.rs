//! The codecs of the v3 core specification (`final/v3/codecs/*`: `bytes`,
//! `transpose`, `gzip`, `zstd`, `blosc`, `crc32c`, `sharding_indexed`), and
//! `zarrkit.struct_bytes`, the `bytes` codec for structs whose fields differ
//! in byte order (v2 only).

#[cfg(feature = "blosc")]
#[allow(unsafe_code)]
pub mod blosc;
pub mod bytes;
#[cfg(feature = "crc32c")]
pub mod crc32c;
#[cfg(feature = "gzip")]
pub mod gzip;
pub mod sharding;
pub mod struct_bytes;
pub mod transpose;
#[cfg(feature = "zstd")]
pub mod zstd;
