//! NumPy type strings (`"<i4"`, `"|S7"`, `">M8[ns]"`): the one table
//! between them and the model's data types, used by the formats that spell
//! data types as NumPy does (v2, v1, zarr-python 2.x's v3 layout, the
//! drafts' extension types), by the numcodecs filters' `dtype` options and
//! by the CLI's `.npy` export.
//!
//! Spec: v2 "Data type encoding" (which defers to NumPy's type strings:
//! a byte order `<`, `>` or `|`, a kind, and a size in bytes, or for `U` in
//! code points).

use super::{DataType, TimeUnit};

/// The largest element of a string or raw NumPy type, in bytes (64 MiB,
/// as the formats' own string parsers allow).
pub const MAX_ELEMENT_BYTES: usize = 1 << 26;

/// The model's data type of the NumPy kind `kind` (`b`, `i`, `u`, `f`,
/// `c`, `V`, `S`, `U`) with `size` (bytes, or code points for `U`); `None`
/// for any other pair, a size of 0, or one whose byte count overflows.
/// Datetimes (`M8[…]`, `m8[…]`) and objects (`O`) are read by their formats.
/// A string or raw type of more than [`MAX_ELEMENT_BYTES`] is refused: a
/// document of a few bytes must not make its fill value gigabytes long.
#[must_use]
pub fn data_type_of(kind: char, size: usize) -> Option<DataType> {
    Some(match (kind, size) {
        ('b', 1) => DataType::Bool,
        ('i', 1) => DataType::Int8,
        ('i', 2) => DataType::Int16,
        ('i', 4) => DataType::Int32,
        ('i', 8) => DataType::Int64,
        ('u', 1) => DataType::UInt8,
        ('u', 2) => DataType::UInt16,
        ('u', 4) => DataType::UInt32,
        ('u', 8) => DataType::UInt64,
        ('f', 2) => DataType::Float16,
        ('f', 4) => DataType::Float32,
        ('f', 8) => DataType::Float64,
        ('c', 8) => DataType::Complex64,
        ('c', 16) => DataType::Complex128,
        ('V', n) if n > 0 && n <= MAX_ELEMENT_BYTES => DataType::RawBits(n.checked_mul(8)?),
        // v2 "Data type encoding": `S` byte strings, `U` UTF-32 strings of
        // `n` code points (4 bytes each).
        ('S', n) if n > 0 && n <= MAX_ELEMENT_BYTES => DataType::FixedBytes(n),
        ('U', n) if n > 0 && n <= MAX_ELEMENT_BYTES / 4 => DataType::FixedUtf32(n * 4),
        _ => return None,
    })
}

/// Whether NumPy has a fixed-size type string for `data_type` (one
/// [`data_type_of`] reads back): `bool`, the integers, `float16/32/64`,
/// `complex64/128`, raw bytes (`V`), `S` and `U` strings, and the NumPy
/// datetimes. Structures are lists of these, not one string.
#[must_use]
pub fn has_type_string(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Bool
            | DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
            | DataType::Float16
            | DataType::Float32
            | DataType::Float64
            | DataType::Complex64
            | DataType::Complex128
            | DataType::RawBits(_)
            | DataType::FixedBytes(_)
            | DataType::FixedUtf32(_)
            | DataType::NumpyDateTime64 { .. }
            | DataType::NumpyTimeDelta64 { .. }
    )
}

/// The NumPy type string of `data_type` stored in byte order `big_endian`
/// (`|` for types whose units are single bytes): `"<i4"`, `">f8"`, `"|b1"`,
/// `"|S7"`, `"<U5"` (code points), `"<M8[10ms]"`, `"|O"` for the
/// variable-length types, and `"|V<n>"` (raw bytes) for types NumPy has no
/// name for.
#[must_use]
pub fn type_string(data_type: &DataType, big_endian: bool) -> String {
    let order = if data_type.endian_unit() == 1 {
        '|'
    } else if big_endian {
        '>'
    } else {
        '<'
    };
    let (kind, size) = match data_type {
        DataType::Bool => ('b', 1),
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => {
            ('i', data_type.size())
        }
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => {
            ('u', data_type.size())
        }
        DataType::Float16 | DataType::Float32 | DataType::Float64 => ('f', data_type.size()),
        DataType::Complex64 | DataType::Complex128 => ('c', data_type.size()),
        DataType::NumpyDateTime64 { unit, scale_factor }
        | DataType::NumpyTimeDelta64 { unit, scale_factor } => {
            let kind = if matches!(data_type, DataType::NumpyDateTime64 { .. }) {
                'M'
            } else {
                'm'
            };
            return match (unit, scale_factor) {
                (TimeUnit::Generic, 1) => format!("{order}{kind}8"),
                (unit, 1) => format!("{order}{kind}8[{}]", unit.name()),
                (unit, n) => format!("{order}{kind}8[{n}{}]", unit.name()),
            };
        }
        DataType::FixedBytes(n) => ('S', *n),
        DataType::FixedUtf32(n) => ('U', n / 4),
        DataType::String | DataType::Bytes | DataType::VlenArray(_) | DataType::Object => {
            return "|O".to_string();
        }
        _ => ('V', data_type.size()),
    };
    format!("{order}{kind}{size}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_reads_back_what_it_writes() {
        // NumPy's own `dtype.str` for each type, little-endian (from
        // `numpy.dtype(t).newbyteorder("<").str`).
        for text in [
            "|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8",
            "<c8", "<c16", "|V3", "|S7", "<U5",
        ] {
            let mut chars = text[1..].chars();
            let kind = chars.next().unwrap();
            let size = chars.as_str().parse().unwrap();
            let data_type = data_type_of(kind, size).unwrap();
            assert!(has_type_string(&data_type), "{text}");
            assert_eq!(type_string(&data_type, false), text);
        }
        assert_eq!(type_string(&DataType::Float64, true), ">f8");
        assert_eq!(type_string(&DataType::UInt8, true), "|u1");
        assert!(!has_type_string(&DataType::String));
        assert!(!has_type_string(&DataType::BFloat16));
        assert_eq!(data_type_of('i', 3), None);
        assert_eq!(data_type_of('S', 0), None);
        assert_eq!(data_type_of('U', usize::MAX), None);
        assert_eq!(data_type_of('V', usize::MAX), None);
    }
}
