//! numcodecs' codecs, byte-compatible with numcodecs 0.16: the compressors
//! (`zlib`, `bz2`, `lzma`, `lz4`), the array filters (`delta`,
//! `fixedscaleoffset`, `quantize`, `astype`, `packbits`, `categorize`, and
//! `bitround`, which lives with the v3 extension in
//! [`ext::bitround`](crate::codec::ext::bitround)) and the byte filters
//! (`shuffle`, the checksums). v3 names them `numcodecs.<id>`, v2 by `id`.

pub mod astype;
pub use crate::codec::ext::bitround::numcodecs_bitround as bitround;
#[cfg(feature = "bz2")]
pub mod bz2;
pub mod categorize;
pub mod checksums;
pub mod delta;
pub mod fixedscaleoffset;
#[cfg(feature = "lz4")]
pub mod lz4;
#[cfg(feature = "lzma")]
pub mod lzma;
pub mod packbits;
pub mod quantize;
pub mod shuffle;
#[cfg(feature = "zlib")]
pub mod zlib;
