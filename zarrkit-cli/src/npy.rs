//! The NumPy `.npy` file format: the header, and element bytes in the
//! little-endian order the header declares.
//!
//! Format: <https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html>.
//! A file is the magic `\x93NUMPY`, a major and minor version, the header
//! length (u16 little endian in version 1.0, u32 in 2.0), and the header: a
//! Python dict literal padded with spaces and ending in `\n`, so that the
//! data after it starts at a multiple of 64 bytes.

use anyhow::bail;
use zarrkit::metadata::{DataType, numpy};

/// The alignment of the data that NumPy itself writes.
const ALIGNMENT: usize = 64;

/// The NumPy `descr` of `data_type` as a Python literal for the header: a
/// quoted type string, little endian (`<`) where byte order applies and
/// `|` where it does not (`'<f4'`, `'|S5'`, `'<U3'`), or for a struct a
/// list of `(name, type)` and `(name, type, shape)` tuples, packed as the
/// struct is.
///
/// # Errors
/// If the data type has no fixed-size NumPy equivalent.
pub fn descr(data_type: &DataType) -> anyhow::Result<String> {
    Ok(match data_type {
        DataType::Struct(fields) => {
            let items: Vec<String> = fields
                .iter()
                .map(|field| {
                    let inner = descr(&field.data_type)?;
                    let name = python_str(&field.name);
                    Ok(match field.shape.as_slice() {
                        [] => format!("({name}, {inner})"),
                        shape => format!("({name}, {inner}, {})", python_tuple(shape)),
                    })
                })
                .collect::<anyhow::Result<_>>()?;
            format!("[{}]", items.join(", "))
        }
        other => format!("'{}'", type_string(other)?),
    })
}

/// The NumPy type string of a non-struct data type, little-endian, from
/// the library's one NumPy table (`zarrkit::metadata::numpy`); an error for
/// the types a `.npy` file cannot hold.
fn type_string(data_type: &DataType) -> anyhow::Result<String> {
    if !numpy::has_type_string(data_type) {
        bail!("data type `{data_type}` has no NumPy equivalent");
    }
    Ok(numpy::type_string(data_type, false))
}

/// A Python string literal: single-quoted, with quotes, backslashes and
/// non-printable or non-ASCII characters escaped (the header is ASCII).
fn python_str(text: &str) -> String {
    let mut out = String::from("'");
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            ' '..='~' => out.push(c),
            c if u32::from(c) <= 0xffff => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push_str(&format!("\\U{:08x}", u32::from(c))),
        }
    }
    out.push('\'');
    out
}

/// A Python tuple literal of integers.
fn python_tuple(items: &[u64]) -> String {
    match items {
        [] => "()".to_string(),
        [n] => format!("({n},)"),
        dims => format!(
            "({})",
            dims.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The complete header (magic, version, length and dict) for an array of
/// `shape` with `descr` (a Python literal, see [`descr`]) in C order.
pub fn header(descr: &str, shape: &[u64]) -> Vec<u8> {
    let shape = python_tuple(shape);
    let dict = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape}, }}");
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

/// Converts elements of `data_type` in native order to little endian in
/// place (each number, each component, each struct field).
pub fn native_to_little_endian(bytes: &mut [u8], data_type: &DataType) {
    if cfg!(target_endian = "big") {
        if let DataType::Struct(_) = data_type {
            let size = data_type.size().max(1);
            let units = data_type.endian_units();
            for record in bytes.chunks_exact_mut(size) {
                for &(offset, unit) in &units {
                    record[offset..offset + unit].reverse();
                }
            }
        } else {
            swap_units(bytes, data_type.endian_unit());
        }
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
        let h = header("'<f4'", &[3, 4]);
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
        assert!(dict_of(&header("'|u1'", &[5])).contains("'shape': (5,), "));
        assert!(dict_of(&header("'|b1'", &[])).contains("'shape': (), "));
    }

    #[test]
    fn very_long_headers_use_version_two() {
        let shape = vec![1u64; 30_000];
        let h = header("'<i2'", &shape);
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
        assert_eq!(descr(&DataType::Complex128).unwrap(), "'<c16'");
        assert_eq!(descr(&DataType::RawBits(24)).unwrap(), "'|V3'");
        assert_eq!(descr(&DataType::Int8).unwrap(), "'|i1'");
        assert_eq!(descr(&DataType::Float16).unwrap(), "'<f2'");
        assert_eq!(descr(&DataType::FixedBytes(5)).unwrap(), "'|S5'");
        assert_eq!(descr(&DataType::FixedUtf32(12)).unwrap(), "'<U3'");
        assert!(descr(&DataType::String).is_err());
    }

    #[test]
    fn struct_descr_is_a_list_of_field_tuples() {
        use zarrkit::metadata::StructField;
        let inner = DataType::Struct(vec![StructField::new("x", DataType::UInt16)]);
        let data_type = DataType::Struct(vec![
            StructField::new("a'\\b", DataType::Int32),
            StructField {
                name: "d\u{e9}".into(),
                data_type: DataType::Int16,
                shape: vec![2, 3],
            },
            StructField {
                name: "v".into(),
                data_type: DataType::Float64,
                shape: vec![4],
            },
            StructField::new("e", inner),
        ]);
        assert_eq!(
            descr(&data_type).unwrap(),
            "[('a\\'\\\\b', '<i4'), ('d\\u00e9', '<i2', (2, 3)), ('v', '<f8', (4,)), ('e', [('x', '<u2')])]"
        );
    }
}
