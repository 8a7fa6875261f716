//! Registered v3 extension codecs (`zarr-extensions/codecs/*`): `bitround`
//! (with numcodecs' float-only flavour), `packbits`, `reshape`,
//! `scale_offset`, `cast_value`, `conditional`, `n5_default`, `zfp`, and
//! `vlen-utf8`/`vlen-bytes` with the variable-length chunks they serialise.

pub mod bitround;
pub mod cast_value;
pub mod conditional;
pub mod n5_default;
pub mod packbits;
pub mod reshape;
pub mod scale_offset;
pub mod vlen;
#[cfg(feature = "zfp")]
#[allow(unsafe_code)]
pub mod zfp;
