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

/// The element type of a `.npy` file being read: a NumPy type string's
/// byte order, kind and size, and a datetime's unit.
#[derive(Clone, Debug, PartialEq)]
pub struct NpyType {
    /// The type string as the header gives it (`'<f4'`).
    pub text: String,
    /// Whether multi-byte units are big-endian.
    pub big_endian: bool,
    /// The model's data type of the elements (`DataType::FixedUtf32` for
    /// `U`, a datetime type with its unit for `M8`/`m8`).
    pub data_type: DataType,
}

/// A `.npy` file read whole: its element type, shape and element bytes in
/// C order (a Fortran-order file is transposed), still in the file's byte
/// order.
#[derive(Debug)]
pub struct NpyArray {
    pub dtype: NpyType,
    pub shape: Vec<u64>,
    pub data: Vec<u8>,
}

impl NpyArray {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.data.len() / self.dtype.data_type.size().max(1)
    }

    /// Element `i` in native byte order.
    pub fn element(&self, i: usize) -> Vec<u8> {
        let size = self.dtype.data_type.size();
        let mut bytes = self.data[i * size..(i + 1) * size].to_vec();
        if self.dtype.big_endian != cfg!(target_endian = "big") {
            swap_units(&mut bytes, self.dtype.data_type.endian_unit());
        }
        bytes
    }
}

/// Parses a NumPy type string such as `<i4`, `|b1`, `>U5`, `<M8[10ms]`.
///
/// # Errors
/// If it is not one of the fixed-size types `.npy` files hold (objects
/// need pickle and are refused).
pub fn parse_type(text: &str) -> anyhow::Result<NpyType> {
    let bad = || anyhow::anyhow!("the .npy type `{text}` is not supported");
    let mut chars = text.chars();
    let (big_endian, rest) = match chars.next() {
        Some('<' | '|' | '=') => (
            cfg!(target_endian = "big") && text.starts_with('='),
            chars.as_str(),
        ),
        Some('>') => (true, chars.as_str()),
        _ => (false, text),
    };
    let kind = rest.chars().next().ok_or_else(bad)?;
    let body = &rest[kind.len_utf8()..];
    if kind == 'O' {
        bail!(
            "the .npy file holds Python objects (`{text}`), which need pickle; save it with a fixed-size dtype"
        );
    }
    let data_type = if matches!(kind, 'M' | 'm') {
        let (size, unit) = match body.split_once('[') {
            Some((size, unit)) => (size, unit.strip_suffix(']').ok_or_else(bad)?),
            None => (body, "generic"),
        };
        if size != "8" {
            return Err(bad());
        }
        let digits = unit
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(unit.len());
        let scale_factor = if digits == 0 {
            1
        } else {
            unit[..digits].parse().map_err(|_| bad())?
        };
        let unit = zarrkit::metadata::TimeUnit::from_name(&unit[digits..]).ok_or_else(bad)?;
        if kind == 'M' {
            DataType::NumpyDateTime64 { unit, scale_factor }
        } else {
            DataType::NumpyTimeDelta64 { unit, scale_factor }
        }
    } else {
        let size: usize = body.parse().map_err(|_| bad())?;
        numpy::data_type_of(kind, size).ok_or_else(bad)?
    };
    Ok(NpyType {
        text: text.to_string(),
        big_endian,
        data_type,
    })
}

/// Reads a `.npy` file's bytes (NumPy format versions 1.0, 2.0 and 3.0).
///
/// # Errors
/// If the bytes are not a `.npy` file, its dtype is structured or an
/// object, or the data is shorter than the header says.
pub fn read(bytes: &[u8]) -> anyhow::Result<NpyArray> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        bail!("not a NumPy .npy file (no `\\x93NUMPY` magic)");
    }
    let (len, start) = match bytes[6] {
        1 => (usize::from(u16::from_le_bytes([bytes[8], bytes[9]])), 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => bail!("unsupported .npy format version {v}"),
    };
    let header = bytes
        .get(start..start + len)
        .and_then(|h| std::str::from_utf8(h).ok())
        .ok_or_else(|| anyhow::anyhow!("the .npy header is truncated or not text"))?;
    let field = |name: &str| -> anyhow::Result<&str> {
        let at = header
            .find(&format!("'{name}'"))
            .ok_or_else(|| anyhow::anyhow!("the .npy header has no `{name}`"))?;
        let rest = header[at + name.len() + 2..].trim_start();
        Ok(rest.strip_prefix(':').unwrap_or(rest).trim_start())
    };
    let descr = field("descr")?;
    let quote = descr.chars().next().filter(|c| matches!(c, '\'' | '"'));
    let Some(quote) = quote else {
        bail!(
            "the .npy file has a structured dtype, which `zarrkit set` does not read; save one field at a time"
        );
    };
    let type_text = descr[1..].split(quote).next().unwrap_or_default();
    let dtype = parse_type(type_text)?;
    let fortran = field("fortran_order")?.starts_with("True");
    let shape_text = field("shape")?;
    let shape_text = shape_text
        .strip_prefix('(')
        .and_then(|s| s.split(')').next())
        .ok_or_else(|| anyhow::anyhow!("the .npy header's shape is not a tuple"))?;
    let shape: Vec<u64> = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_end_matches('L').parse())
        .collect::<Result<_, _>>()
        .map_err(|_| anyhow::anyhow!("the .npy header's shape `({shape_text})` is not integers"))?;
    let size = dtype.data_type.size() as u64;
    let n = shape
        .iter()
        .try_fold(size, |a, &d| a.checked_mul(d))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| anyhow::anyhow!("the .npy shape {shape:?} is too large"))?;
    let data = &bytes[start + len..];
    if data.len() < n {
        bail!(
            "the .npy file is truncated: its shape {shape:?} needs {n} bytes of data, it has {}",
            data.len()
        );
    }
    let mut data = data[..n].to_vec();
    if fortran && shape.len() > 1 {
        data = fortran_to_c(&data, &shape, size as usize);
    }
    Ok(NpyArray { dtype, shape, data })
}

/// Reorders Fortran-order (first index fastest) element bytes into C order.
fn fortran_to_c(data: &[u8], shape: &[u64], size: usize) -> Vec<u8> {
    let mut out = vec![0; data.len()];
    let n = data.len() / size.max(1);
    // Fortran strides, in elements.
    let mut strides = vec![1usize; shape.len()];
    for d in 1..shape.len() {
        strides[d] = strides[d - 1] * shape[d - 1] as usize;
    }
    let mut index = vec![0u64; shape.len()];
    for i in 0..n {
        let src: usize = index
            .iter()
            .zip(&strides)
            .map(|(&x, &s)| x as usize * s)
            .sum();
        out[i * size..(i + 1) * size].copy_from_slice(&data[src * size..(src + 1) * size]);
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
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
    fn files_read_back_in_c_order_from_either_order() {
        let mut file = header("'>i2'", &[2, 3]);
        // Fortran order: columns first; big-endian 1..=6 laid out as [[1, 3, 5], [2, 4, 6]].
        let at = file.windows(5).position(|w| w == b"False").unwrap();
        file[at..at + 5].copy_from_slice(b"True ");
        for v in [1i16, 2, 3, 4, 5, 6] {
            file.extend_from_slice(&v.to_be_bytes());
        }
        let array = read(&file).unwrap();
        assert_eq!(array.shape, [2, 3]);
        assert_eq!(array.dtype.data_type, DataType::Int16);
        let values: Vec<i16> = (0..6)
            .map(|i| i16::from_ne_bytes(array.element(i).try_into().unwrap()))
            .collect();
        assert_eq!(values, [1, 3, 5, 2, 4, 6]);
        assert!(
            read(&file[..file.len() - 1])
                .unwrap_err()
                .to_string()
                .contains("truncated")
        );
        assert_eq!(
            parse_type("<M8[10ms]").unwrap().data_type,
            DataType::NumpyDateTime64 {
                unit: zarrkit::metadata::TimeUnit::Millisecond,
                scale_factor: 10
            }
        );
        assert!(parse_type("|O").is_err());
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
