//! Helpers several test modules share.

// Some users are compiled only with certain codec features.
#![allow(dead_code)]

use std::path::PathBuf;
use zarrkit::metadata::DataType;

/// The Python with zarr-python 2.18 (`ZARRKIT_PYTHON_ZARR2`), or `None`
/// after saying on stderr what to set. With `ZARRKIT_REQUIRE_INTEROP=1` a
/// missing Python fails the test instead (CI must not skip).
pub fn zarr2_python() -> Option<PathBuf> {
    if let Some(python) = std::env::var_os("ZARRKIT_PYTHON_ZARR2").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(python));
    }
    assert!(
        std::env::var("ZARRKIT_REQUIRE_INTEROP").as_deref() != Ok("1"),
        "ZARRKIT_REQUIRE_INTEROP=1 but ZARRKIT_PYTHON_ZARR2 is unset (scripts/test.sh sets it)"
    );
    eprintln!(
        "skipping: set ZARRKIT_PYTHON_ZARR2 to a Python with zarr 2.18 \
         (scripts/requirements-zarr2.txt)"
    );
    None
}

/// Native-endian elements (a whole number of them) to little-endian, in
/// place: each endian unit of `data_type` reversed on big-endian machines.
pub fn to_little_endian(bytes: &mut [u8], data_type: &DataType) {
    if cfg!(target_endian = "big") {
        let size = data_type.size();
        for element in bytes.chunks_exact_mut(size) {
            for (offset, unit) in data_type.endian_units() {
                element[offset..offset + unit].reverse();
            }
        }
    }
}

/// An error and its sources, `: `-separated, as the CLI prints them.
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}
