//! The NumPy `.npy` file format: the header, and element bytes in the
//! little-endian order the header declares.
//!
//! Format: <https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html>.
//! A file is the magic `\x93NUMPY`, a major and minor version, the header
//! length (u16 little endian in version 1.0, u32 in 2.0), and the header: a
//! Python dict literal padded with spaces and ending in `\n`, so that the
//! data after it starts at a multiple of 64 bytes.

use anyhow::bail;
use zarrkit::metadata::DataType;

/// The alignment of the data that NumPy itself writes.
const ALIGNMENT: usize = 64;

/// The NumPy type string (`descr`) of `data_type`, always little endian
/// (`<`) where byte order applies and `|` where it does not.
///
/// # Errors
/// If the data type has no NumPy equivalent.
pub fn descr(data_type: &DataType) -> anyhow::Result<String> {
    Ok(match data_type {
        DataType::Bool => "|b1".to_string(),
        DataType::Int8 => "|i1".to_string(),
        DataType::Int16 => "<i2".to_string(),
        DataType::Int32 => "<i4".to_string(),
        DataType::Int64 => "<i8".to_string(),
        DataType::UInt8 => "|u1".to_string(),
        DataType::UInt16 => "<u2".to_string(),
        DataType::UInt32 => "<u4".to_string(),
        DataType::UInt64 => "<u8".to_string(),
        DataType::Float16 => "<f2".to_string(),
        DataType::Float32 => "<f4".to_string(),
        DataType::Float64 => "<f8".to_string(),
        DataType::Complex64 => "<c8".to_string(),
        DataType::Complex128 => "<c16".to_string(),
        DataType::RawBits(bits) => format!("|V{}", bits / 8),
        other => bail!("data type `{other}` has no NumPy equivalent"),
    })
}

/// The complete header (magic, version, length and dict) for an array of
/// `shape` with type string `descr` in C order.
pub fn header(descr: &str, shape: &[u64]) -> Vec<u8> {
    let shape = match shape {
        [] => "()".to_string(),
        [n] => format!("({n},)"),
        dims => format!(
            "({})",
            dims.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Version 1.0 stores the header length in a u16; longer headers (arrays
    // of very many dimensions) need version 2.0 and its u32.
    let padded_len = |preamble: usize| {
        // The dict, the padding and the closing newline, ending on the alignment.
        (preamble + dict.len() + 1).div_ceil(ALIGNMENT) * ALIGNMENT - preamble
    };
    let mut out = Vec::new();
    out.extend_from_slice(b"\x93NUMPY");
    let header_len = match u16::try_from(padded_len(10)) {
        Ok(len) => {
            out.extend_from_slice(&[1, 0]);
            out.extend_from_slice(&len.to_le_bytes());
            usize::from(len)
        }
        Err(_) => {
            let len = padded_len(12);
            out.extend_from_slice(&[2, 0]);
            out.extend_from_slice(&u32::try_from(len).unwrap_or(u32::MAX).to_le_bytes());
            len
        }
    };
    let total = out.len() + header_len;
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out
}

/// Converts element bytes in native order to little endian in place, where
/// `endian_unit` is the size of the unit byte order applies to.
pub fn native_to_little_endian(bytes: &mut [u8], endian_unit: usize) {
    if cfg!(target_endian = "big") {
        swap_units(bytes, endian_unit);
    }
}

/// Reverses the bytes of every `unit`-byte unit.
fn swap_units(bytes: &mut [u8], unit: usize) {
    if unit > 1 {
        for element in bytes.chunks_exact_mut(unit) {
            element.reverse();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dict_of(header: &[u8]) -> &str {
        std::str::from_utf8(&header[10..]).unwrap()
    }

    #[test]
    fn header_is_padded_to_64_bytes_and_ends_in_newline() {
        let h = header("<f4", &[3, 4]);
        assert_eq!(h.len() % 64, 0);
        assert_eq!(&h[..8], b"\x93NUMPY\x01\x00");
        assert_eq!(usize::from(u16::from_le_bytes([h[8], h[9]])), h.len() - 10);
        assert!(
            dict_of(&h).starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }")
        );
        assert!(dict_of(&h).ends_with(" \n"));
    }

    #[test]
    fn one_and_zero_dimensional_shapes_are_python_tuples() {
        assert!(dict_of(&header("|u1", &[5])).contains("'shape': (5,), "));
        assert!(dict_of(&header("|b1", &[])).contains("'shape': (), "));
    }

    #[test]
    fn very_long_headers_use_version_two() {
        let shape = vec![1u64; 30_000];
        let h = header("<i2", &shape);
        assert_eq!(&h[6..8], &[2, 0]);
        let len = u32::from_le_bytes([h[8], h[9], h[10], h[11]]) as usize;
        assert_eq!(len, h.len() - 12);
        assert_eq!(h.len() % 64, 0);
    }

    #[test]
    fn swapping_reverses_each_unit() {
        let mut bytes = [1, 2, 3, 4, 5, 6, 7, 8];
        swap_units(&mut bytes, 4);
        assert_eq!(bytes, [4, 3, 2, 1, 8, 7, 6, 5]);
        swap_units(&mut bytes, 1);
        assert_eq!(bytes, [4, 3, 2, 1, 8, 7, 6, 5]);
    }

    #[test]
    fn descr_matches_numpy_type_strings() {
        assert_eq!(descr(&DataType::Complex128).unwrap(), "<c16");
        assert_eq!(descr(&DataType::RawBits(24)).unwrap(), "|V3");
        assert_eq!(descr(&DataType::Int8).unwrap(), "|i1");
        assert_eq!(descr(&DataType::Float16).unwrap(), "<f2");
    }
}
