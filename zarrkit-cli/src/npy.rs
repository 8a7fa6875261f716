//! The NumPy `.npy` file format: the header, and element bytes in the
//! little-endian order the header declares.
//!
//! Format: <https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html>.
//! A file is the magic `\x93NUMPY`, a major and minor version, the header
//! length (u16 little endian in version 1.0, u32 in 2.0), and the header: a
//! Python dict literal padded with spaces and ending in `\n`, so that the
//! data after it starts at a multiple of 64 bytes.

use anyhow::bail;
use zarrkit::format::v2::ByteOrder;
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

/// A parsed `.npy` header: what the data after it holds.
#[derive(Clone, Debug)]
pub struct Header {
    /// The element type.
    pub data_type: DataType,
    /// The byte order of the elements' numbers (per unit for a structure
    /// whose fields differ).
    pub byte_order: ByteOrder,
    /// Whether the elements are in Fortran (column-major) order.
    pub fortran_order: bool,
    /// The array's shape.
    pub shape: Vec<u64>,
    /// Where the data starts: the length of the magic, version, length
    /// and header.
    pub data_offset: u64,
}

/// The most header bytes read: NumPy itself refuses headers over 10 000
/// bytes unless told otherwise (`max_header_size`); this allows for very
/// many dimensions and fields while bounding what a bad file can ask for.
const MAX_HEADER_LEN: usize = 1 << 20;

/// Whether `prefix` (the first bytes of a file) is NumPy's magic.
pub fn is_npy(prefix: &[u8]) -> bool {
    prefix.starts_with(b"\x93NUMPY")
}

/// Reads and parses the header at the start of `reader`: versions 1.0
/// (u16 length), 2.0 (u32 length) and 3.0 (u32 length, UTF-8 header), the
/// dict's `descr` (a type string or a structured list), `fortran_order`
/// and `shape`.
///
/// # Errors
/// If the file is not a `.npy` file, its header is malformed, or its type
/// is one zarrkit does not hold (objects `|O` need pickle).
pub fn read_header(reader: &mut impl std::io::Read) -> anyhow::Result<Header> {
    let mut preamble = [0u8; 8];
    reader
        .read_exact(&mut preamble)
        .map_err(|_| anyhow::anyhow!("too short for a .npy file"))?;
    if !is_npy(&preamble) {
        bail!("not a .npy file (no `\\x93NUMPY` magic)");
    }
    let (major, minor) = (preamble[6], preamble[7]);
    let (len, prefix) = match major {
        1 => {
            let mut len = [0u8; 2];
            reader.read_exact(&mut len)?;
            (usize::from(u16::from_le_bytes(len)), 10)
        }
        2 | 3 => {
            let mut len = [0u8; 4];
            reader.read_exact(&mut len)?;
            (usize::try_from(u32::from_le_bytes(len))?, 12)
        }
        _ => bail!("unsupported .npy format version {major}.{minor} (1.0, 2.0 and 3.0 are read)"),
    };
    if len > MAX_HEADER_LEN {
        bail!("the .npy header is {len} bytes long, more than the {MAX_HEADER_LEN} accepted");
    }
    let mut text = vec![0u8; len];
    reader
        .read_exact(&mut text)
        .map_err(|_| anyhow::anyhow!("the .npy header is cut short"))?;
    // Versions 1.0 and 2.0 are latin-1; 3.0 is UTF-8.
    let text: String = if major == 3 {
        String::from_utf8(text).map_err(|_| anyhow::anyhow!("the .npy 3.0 header is not UTF-8"))?
    } else {
        text.iter().map(|&b| char::from(b)).collect()
    };
    let dict = python_literal::parse(&text)
        .map_err(|e| anyhow::anyhow!("the .npy header `{}` is malformed: {e}", text.trim_end()))?;
    let field = |name: &str| {
        dict.get(name)
            .ok_or_else(|| anyhow::anyhow!("the .npy header has no `{name}`"))
    };
    let descr = field("descr")?;
    let (data_type, byte_order) = zarrkit::format::v2::numpy_dtype_from_json(descr)
        .map_err(|e| anyhow::anyhow!("the .npy data type {descr}: {e}"))?;
    let fortran_order = field("fortran_order")?
        .as_bool()
        .ok_or_else(|| anyhow::anyhow!("the .npy header's `fortran_order` is not True or False"))?;
    let shape = field("shape")?
        .as_array()
        .and_then(|dims| {
            dims.iter()
                .map(serde_json::Value::as_u64)
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| anyhow::anyhow!("the .npy header's `shape` is not a tuple of lengths"))?;
    Ok(Header {
        data_type,
        byte_order,
        fortran_order,
        shape,
        data_offset: (prefix + len) as u64,
    })
}

/// Converts elements of `data_type` stored in `order` to native byte order
/// in place.
pub fn to_native(bytes: &mut [u8], data_type: &DataType, order: &ByteOrder) {
    let native_big = cfg!(target_endian = "big");
    match order {
        ByteOrder::NotRelevant => {}
        ByteOrder::Little | ByteOrder::Big => {
            if matches!(order, ByteOrder::Big) != native_big {
                if let DataType::Struct(_) = data_type {
                    swap_struct_units(bytes, data_type, |_| true);
                } else {
                    swap_units(bytes, data_type.endian_unit());
                }
            }
        }
        ByteOrder::PerUnit(_) => {
            swap_struct_units(bytes, data_type, |i| order.is_big(i) != native_big)
        }
    }
}

/// Reverses the units of each record that `swap(unit index)` selects.
fn swap_struct_units(bytes: &mut [u8], data_type: &DataType, swap: impl Fn(usize) -> bool) {
    let size = data_type.size().max(1);
    let units: Vec<(usize, usize)> = data_type
        .endian_units()
        .into_iter()
        .enumerate()
        .filter(|&(i, _)| swap(i))
        .map(|(_, unit)| unit)
        .collect();
    for record in bytes.chunks_exact_mut(size) {
        for &(offset, unit) in &units {
            record[offset..offset + unit].reverse();
        }
    }
}

/// A parser of the Python literals in `.npy` headers: dicts, tuples,
/// lists, strings, integers, `True`, `False` and `None`, as JSON values
/// (tuples become lists).
mod python_literal {
    use serde_json::{Map, Value};

    /// Parses the header's dict.
    pub fn parse(text: &str) -> Result<Map<String, Value>, String> {
        let mut parser = Parser {
            chars: text.chars().collect(),
            at: 0,
            depth: 0,
        };
        let value = parser.value()?;
        parser.skip_space();
        if parser.at != parser.chars.len() {
            return Err(format!("unexpected text at character {}", parser.at));
        }
        match value {
            Value::Object(map) => Ok(map),
            _ => Err("not a dict".into()),
        }
    }

    struct Parser {
        chars: Vec<char>,
        at: usize,
        depth: usize,
    }

    impl Parser {
        fn skip_space(&mut self) {
            while self.chars.get(self.at).is_some_and(|c| c.is_whitespace()) {
                self.at += 1;
            }
        }

        fn peek(&mut self) -> Option<char> {
            self.skip_space();
            self.chars.get(self.at).copied()
        }

        fn expect(&mut self, c: char) -> Result<(), String> {
            if self.peek() == Some(c) {
                self.at += 1;
                Ok(())
            } else {
                Err(format!("expected `{c}` at character {}", self.at))
            }
        }

        fn value(&mut self) -> Result<Value, String> {
            self.depth += 1;
            if self.depth > 64 {
                return Err("nested too deeply".into());
            }
            let value = match self.peek() {
                Some('{') => self.dict(),
                Some('(') => self.sequence(')'),
                Some('[') => self.sequence(']'),
                Some(quote @ ('\'' | '"')) => self.string(quote).map(Value::String),
                Some(c) if c.is_ascii_digit() || c == '-' || c == '+' => self.integer(),
                Some(c) if c.is_ascii_alphabetic() => self.word(),
                _ => Err(format!("unexpected end or character at {}", self.at)),
            };
            self.depth -= 1;
            value
        }

        fn dict(&mut self) -> Result<Value, String> {
            self.expect('{')?;
            let mut map = Map::new();
            loop {
                if self.peek() == Some('}') {
                    self.at += 1;
                    return Ok(Value::Object(map));
                }
                let key = match self.value()? {
                    Value::String(key) => key,
                    other => return Err(format!("a dict key is not a string: {other}")),
                };
                self.expect(':')?;
                let value = self.value()?;
                map.insert(key, value);
                if self.peek() == Some(',') {
                    self.at += 1;
                } else {
                    self.expect('}')?;
                    return Ok(Value::Object(map));
                }
            }
        }

        fn sequence(&mut self, close: char) -> Result<Value, String> {
            self.at += 1;
            let mut items = Vec::new();
            loop {
                if self.peek() == Some(close) {
                    self.at += 1;
                    return Ok(Value::Array(items));
                }
                items.push(self.value()?);
                if self.peek() == Some(',') {
                    self.at += 1;
                } else {
                    self.expect(close)?;
                    return Ok(Value::Array(items));
                }
            }
        }

        fn string(&mut self, quote: char) -> Result<String, String> {
            self.at += 1;
            let mut out = String::new();
            loop {
                let c = *self.chars.get(self.at).ok_or("unterminated string")?;
                self.at += 1;
                match c {
                    c if c == quote => return Ok(out),
                    '\\' => {
                        let e = *self.chars.get(self.at).ok_or("unterminated string")?;
                        self.at += 1;
                        let hex = |parser: &mut Self, n: usize| -> Result<char, String> {
                            let digits: String =
                                parser.chars.iter().skip(parser.at).take(n).collect();
                            parser.at += n;
                            u32::from_str_radix(&digits, 16)
                                .ok()
                                .and_then(char::from_u32)
                                .ok_or_else(|| format!("bad escape `\\{e}{digits}`"))
                        };
                        out.push(match e {
                            'n' => '\n',
                            't' => '\t',
                            'r' => '\r',
                            '0' => '\0',
                            'x' => hex(self, 2)?,
                            'u' => hex(self, 4)?,
                            'U' => hex(self, 8)?,
                            other => other,
                        });
                    }
                    c => out.push(c),
                }
            }
        }

        fn integer(&mut self) -> Result<Value, String> {
            let start = self.at;
            if matches!(self.chars.get(self.at), Some('-' | '+')) {
                self.at += 1;
            }
            while self.chars.get(self.at).is_some_and(char::is_ascii_digit) {
                self.at += 1;
            }
            let digits: String = self.chars[start..self.at].iter().collect();
            // Python 2's long integers: `(3L, 4L)`.
            if matches!(self.chars.get(self.at), Some('L' | 'l')) {
                self.at += 1;
            }
            digits
                .trim_start_matches('+')
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| format!("`{digits}` is not an integer"))
        }

        fn word(&mut self) -> Result<Value, String> {
            let start = self.at;
            while self
                .chars
                .get(self.at)
                .is_some_and(|c| c.is_ascii_alphanumeric())
            {
                self.at += 1;
            }
            let word: String = self.chars[start..self.at].iter().collect();
            match word.as_str() {
                "True" => Ok(Value::Bool(true)),
                "False" => Ok(Value::Bool(false)),
                "None" => Ok(Value::Null),
                // A bytes or unicode literal's prefix: `b'x'`, `u'x'`.
                "b" | "u" if matches!(self.chars.get(self.at), Some('\'' | '"')) => {
                    let quote = self.chars[self.at];
                    self.string(quote).map(Value::String)
                }
                _ => Err(format!("unexpected `{word}`")),
            }
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

    fn npy(major: u8, dict: &str) -> Vec<u8> {
        let mut out = b"\x93NUMPY".to_vec();
        out.extend_from_slice(&[major, 0]);
        if major == 1 {
            out.extend_from_slice(&u16::try_from(dict.len()).unwrap().to_le_bytes());
        } else {
            out.extend_from_slice(&u32::try_from(dict.len()).unwrap().to_le_bytes());
        }
        out.extend_from_slice(dict.as_bytes());
        out
    }

    #[test]
    fn headers_of_every_version_parse() {
        let dict = "{'descr': '>u2', 'fortran_order': True, 'shape': (3, 4), }\n";
        for major in [1, 2, 3] {
            let bytes = npy(major, dict);
            let header = read_header(&mut bytes.as_slice()).unwrap();
            assert_eq!(header.data_type, DataType::UInt16);
            assert_eq!(header.byte_order, ByteOrder::Big);
            assert!(header.fortran_order);
            assert_eq!(header.shape, [3, 4]);
            assert_eq!(header.data_offset, bytes.len() as u64);
        }
        let header = read_header(&mut header("'<f4'", &[]).as_slice()).unwrap();
        assert!(header.shape.is_empty() && !header.fortran_order);
        let h = read_header(
            &mut npy(1, "{'descr':'|S3','fortran_order':False,'shape':(5L,)}").as_slice(),
        )
        .unwrap();
        assert_eq!((h.data_type, h.shape), (DataType::FixedBytes(3), vec![5]));
    }

    #[test]
    fn structured_headers_keep_field_byte_orders() {
        let dict = "{'descr': [('a', '<i4'), ('b', '>i2', (2,))], 'fortran_order': False, 'shape': (2,), }";
        let h = read_header(&mut npy(1, dict).as_slice()).unwrap();
        assert_eq!(h.data_type.size(), 8);
        assert_eq!(h.byte_order, ByteOrder::PerUnit(vec![false, true, true]));
        let mut record = [1, 0, 0, 0, 0, 2, 0, 3];
        to_native(&mut record, &h.data_type, &h.byte_order);
        if cfg!(target_endian = "little") {
            assert_eq!(record, [1, 0, 0, 0, 2, 0, 3, 0]);
        }
    }

    #[test]
    fn malformed_headers_are_errors() {
        let err = |bytes: &[u8]| read_header(&mut &bytes[..]).unwrap_err().to_string();
        assert!(err(b"PK\x03\x04....").contains("not a .npy file"));
        assert!(err(&npy(4, "{}")).contains("version 4.0"));
        assert!(err(&npy(1, "{'descr': '<f4', 'shape': (3,)}")).contains("fortran_order"));
        assert!(
            err(&npy(
                1,
                "{'descr': '|O', 'fortran_order': False, 'shape': (3,)}"
            ))
            .contains("|O")
        );
        assert!(
            err(&npy(
                1,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (-3,)}"
            ))
            .contains("shape")
        );
        assert!(err(&npy(1, "{'descr': '<f4'")).contains("malformed"));
        let mut short = npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}");
        short.truncate(20);
        assert!(err(&short).contains("cut short"));
    }

    #[test]
    fn big_endian_numbers_become_native() {
        let mut bytes = 0x0102u16.to_be_bytes().to_vec();
        to_native(&mut bytes, &DataType::UInt16, &ByteOrder::Big);
        assert_eq!(u16::from_ne_bytes([bytes[0], bytes[1]]), 0x0102);
        let mut bytes = 1.5f32.to_le_bytes().to_vec();
        to_native(&mut bytes, &DataType::Float32, &ByteOrder::Little);
        assert_eq!(f32::from_ne_bytes(bytes.try_into().unwrap()), 1.5);
    }
}
