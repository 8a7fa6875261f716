//! numcodecs' object codecs for v2 `|O` arrays (array→bytes, each element
//! a value of its own): `json2`, `msgpack2`, `vlen-array`, and `pickle`
//! (recognised, never run).

pub mod json2;
#[cfg(feature = "msgpack")]
pub mod msgpack2;
pub mod pickle;
pub mod vlen_array;
