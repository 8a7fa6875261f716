//! Data types of array elements.
//!
//! Spec: `final/v3/data-types` (the core types and `r*` raw bits). Later
//! formats and extensions add variants. Every variant but `string` and
//! `bytes` has a fixed element size in bytes; those two are variable-length
//! and are read and written through the string API (`Array::read_strings`
//! and friends), never as fixed-size element bytes.

use super::small_float::{SmallFloat, SmallInt};
use std::fmt;

/// The data type of an array's elements.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DataType {
    /// `bool`: one byte, 0 or 1.
    Bool,
    /// `int8`.
    Int8,
    /// `int16`.
    Int16,
    /// `int32`.
    Int32,
    /// `int64`.
    Int64,
    /// `uint8`.
    UInt8,
    /// `uint16`.
    UInt16,
    /// `uint32`.
    UInt32,
    /// `uint64`.
    UInt64,
    /// `float16`: IEEE 754 half precision.
    Float16,
    /// `float32`.
    Float32,
    /// `float64`.
    Float64,
    /// `complex64`: two `float32`, real then imaginary.
    Complex64,
    /// `complex128`: two `float64`, real then imaginary.
    Complex128,
    /// `r<bits>`: raw bits, a multiple of 8 (v3 core, "Data types": `r8`, `r16`, ...).
    RawBits(usize),
    /// `bfloat16` (registered extension): a `float32` truncated to its high
    /// 16 bits (1 sign, 8 exponent, 7 mantissa bits). Rust element: `half::bf16`.
    BFloat16,
    /// `complex_bfloat16` (registered extension): two `bfloat16`, real then
    /// imaginary. Rust element: `Complex<half::bf16>`.
    ComplexBFloat16,
    /// `complex_float16` (registered extension): two `float16`, real then
    /// imaginary. Rust element: `Complex<half::f16>`.
    ComplexFloat16,
    /// `numpy.datetime64` (registered extension): a signed 64-bit count of
    /// `unit` × `scale_factor` since the Unix epoch; `i64::MIN` is `NaT`
    /// ("Not a Time"). Rust element: `i64`.
    NumpyDateTime64 {
        /// The unit of the count.
        unit: TimeUnit,
        /// How many `unit`s one step of the count is, in `1..=2^31-1`.
        scale_factor: u32,
    },
    /// `numpy.timedelta64` (registered extension): a signed 64-bit duration
    /// in `unit` × `scale_factor`; `i64::MIN` is `NaT`. Rust element: `i64`.
    NumpyTimeDelta64 {
        /// The unit of the count.
        unit: TimeUnit,
        /// How many `unit`s one step of the count is, in `1..=2^31-1`.
        scale_factor: u32,
    },
    /// A registered small float type (`float8_*`, `float6_*`,
    /// `float4_e2m1fn`): one byte per element holding its bit pattern in
    /// the low bits, as the `bytes` codec encodes it. Rust element: `u8`
    /// (the bit pattern); convert with [`SmallFloat::to_f32`] and
    /// [`SmallFloat::from_f32`].
    SmallFloat(SmallFloat),
    /// A registered small integer type (`int2`, `int4`, `uint2`, `uint4`):
    /// one byte per element, the value in the low bits. Rust element: `u8`
    /// (the raw byte); convert with [`SmallInt::to_i8`] and
    /// [`SmallInt::from_i64`].
    SmallInt(SmallInt),
    /// A registered complex small float type (`complex_float8_e4m3`, ...,
    /// `complex_float4_e2m1fn`): two bytes per element, the real then the
    /// imaginary part's bit pattern. Rust element: `Complex<u8>`.
    ComplexSmallFloat(SmallFloat),
    /// A fixed-length byte string of this many bytes, padded with zero
    /// bytes (NumPy `|S<n>`; zarr-python 3.1 names it
    /// `null_terminated_bytes` in v3). Read with `Array::read_byte_strings`.
    FixedBytes(usize),
    /// `fixed_length_utf32` (registered extension): a string of at most
    /// `length_bytes / 4` code points, each a 4-byte UTF-32 code unit,
    /// padded with U+0000 (NumPy `<U<n>`/`>U<n>`). The field is
    /// `length_bytes`. Read with `Array::read_strings`.
    FixedUtf32(usize),
    /// `struct` (registered extension; `structured` is its legacy
    /// spelling): a fixed-size record of named fields, packed in order
    /// without padding. Read records as raw bytes, or one field with
    /// `Array::read_field`.
    Struct(Vec<StructField>),
    /// `string` (registered extension): variable-length UTF-8 strings.
    /// Read with `Array::read_strings`.
    String,
    /// `bytes` (registered extension): variable-length byte strings. Read
    /// with `Array::read_byte_strings`.
    Bytes,
    /// A v2 object array (`|O`) with the `vlen-array` object codec: each
    /// element a one-dimensional array of the inner (fixed-size numeric)
    /// type, held as its native-endian bytes. Read with `Array::read_vlen`.
    /// No v3 data type holds it.
    VlenArray(Box<DataType>),
    /// A v2 object array (`|O`) with the `json2` or `msgpack2` object codec:
    /// each element any JSON value, held as its compact JSON text. Read
    /// with `Array::read_vlen`. No v3 data type holds it.
    Object,
}

/// One field of a [`DataType::Struct`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StructField {
    /// The field's name, unique within its struct.
    pub name: String,
    /// The field's element type (fixed-size).
    pub data_type: DataType,
    /// The shape of a sub-array field (NumPy `[name, typestr, shape]`);
    /// empty for a scalar field. Final v3 `struct` has scalar fields only.
    pub shape: Vec<u64>,
}

impl StructField {
    /// A scalar field.
    #[must_use]
    pub fn new(name: impl Into<String>, data_type: DataType) -> Self {
        Self {
            name: name.into(),
            data_type,
            shape: Vec::new(),
        }
    }

    /// The number of elements of the field's type in one record (1 for a
    /// scalar field).
    #[must_use]
    pub fn count(&self) -> usize {
        self.shape
            .iter()
            .try_fold(1usize, |acc, &n| acc.checked_mul(usize::try_from(n).ok()?))
            .unwrap_or(0)
    }

    /// The field's size in bytes within a record.
    #[must_use]
    pub fn size(&self) -> usize {
        self.data_type.size().saturating_mul(self.count())
    }
}

/// The `unit` of `numpy.datetime64` and `numpy.timedelta64`
/// (extensions/data-types/numpy.datetime64, "Configuration").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TimeUnit {
    /// `Y`: years.
    Year,
    /// `M`: months.
    Month,
    /// `W`: weeks.
    Week,
    /// `D`: days.
    Day,
    /// `h`: hours.
    Hour,
    /// `m`: minutes.
    Minute,
    /// `s`: seconds.
    Second,
    /// `ms`: milliseconds.
    Millisecond,
    /// `us` (also read as `μs`): microseconds.
    Microsecond,
    /// `ns`: nanoseconds.
    Nanosecond,
    /// `ps`: picoseconds.
    Picosecond,
    /// `fs`: femtoseconds.
    Femtosecond,
    /// `as`: attoseconds.
    Attosecond,
    /// `generic`: NumPy's unit-less time.
    Generic,
}

impl TimeUnit {
    /// The unit's identifier as written: `s`, `us` (never `μs`), `generic`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Year => "Y",
            Self::Month => "M",
            Self::Week => "W",
            Self::Day => "D",
            Self::Hour => "h",
            Self::Minute => "m",
            Self::Second => "s",
            Self::Millisecond => "ms",
            Self::Microsecond => "us",
            Self::Nanosecond => "ns",
            Self::Picosecond => "ps",
            Self::Femtosecond => "fs",
            Self::Attosecond => "as",
            Self::Generic => "generic",
        }
    }

    /// The unit with identifier `name` (case-sensitive: `M` is months, `m`
    /// minutes); `μs` and `us` are both microseconds.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "Y" => Self::Year,
            "M" => Self::Month,
            "W" => Self::Week,
            "D" => Self::Day,
            "h" => Self::Hour,
            "m" => Self::Minute,
            "s" => Self::Second,
            "ms" => Self::Millisecond,
            "us" | "\u{3bc}s" => Self::Microsecond,
            "ns" => Self::Nanosecond,
            "ps" => Self::Picosecond,
            "fs" => Self::Femtosecond,
            "as" => Self::Attosecond,
            "generic" => Self::Generic,
            _ => return None,
        })
    }
}

impl DataType {
    /// The size of one element in bytes.
    #[must_use]
    pub fn size(&self) -> usize {
        match self {
            Self::Bool | Self::Int8 | Self::UInt8 | Self::SmallFloat(_) | Self::SmallInt(_) => 1,
            Self::Int16
            | Self::UInt16
            | Self::Float16
            | Self::BFloat16
            | Self::ComplexSmallFloat(_) => 2,
            Self::Int32
            | Self::UInt32
            | Self::Float32
            | Self::ComplexBFloat16
            | Self::ComplexFloat16 => 4,
            Self::Int64
            | Self::UInt64
            | Self::Float64
            | Self::Complex64
            | Self::NumpyDateTime64 { .. }
            | Self::NumpyTimeDelta64 { .. } => 8,
            Self::Complex128 => 16,
            Self::RawBits(bits) => bits / 8,
            Self::FixedBytes(n) | Self::FixedUtf32(n) => *n,
            Self::Struct(fields) => fields
                .iter()
                .fold(0usize, |acc, f| acc.saturating_add(f.size())),
            Self::String | Self::Bytes | Self::VlenArray(_) | Self::Object => 0,
        }
    }

    /// Whether elements have no fixed size (`string`, `bytes`): such arrays
    /// are read and written through the string API, and
    /// [`DataType::size`] is 0 for them.
    #[must_use]
    pub fn is_variable_length(&self) -> bool {
        matches!(
            self,
            Self::String | Self::Bytes | Self::VlenArray(_) | Self::Object
        )
    }

    /// The byte ranges within one element that byte order applies to, as
    /// `(offset, unit)` pairs: one per multi-byte number (each component of
    /// a complex number, each code unit of a UTF-32 string, each field of a
    /// struct). Empty when byte order does not matter.
    #[must_use]
    pub fn endian_units(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        self.push_endian_units(0, &mut out);
        out
    }

    fn push_endian_units(&self, base: usize, out: &mut Vec<(usize, usize)>) {
        match self {
            Self::Struct(fields) => {
                let mut offset = base;
                for field in fields {
                    let size = field.data_type.size();
                    for i in 0..field.count() {
                        field.data_type.push_endian_units(offset + i * size, out);
                    }
                    offset += field.size();
                }
            }
            other => {
                let unit = other.endian_unit();
                if unit > 1 {
                    let n = other.size() / unit;
                    out.extend((0..n).map(|i| (base + i * unit, unit)));
                }
            }
        }
    }

    /// The v3 name, such as `float32`, `r24` or `numpy.datetime64` (the
    /// configuration of the `numpy.*` types is not part of the name; the
    /// v2-only object types are named `object` and `vlen_array<inner>`).
    #[must_use]
    pub fn name(&self) -> String {
        match self {
            Self::RawBits(bits) => format!("r{bits}"),
            Self::VlenArray(inner) => format!("vlen_array<{inner}>"),
            other => other.static_name().to_string(),
        }
    }

    fn static_name(&self) -> &'static str {
        match self {
            Self::Bool => "bool",
            Self::Int8 => "int8",
            Self::Int16 => "int16",
            Self::Int32 => "int32",
            Self::Int64 => "int64",
            Self::UInt8 => "uint8",
            Self::UInt16 => "uint16",
            Self::UInt32 => "uint32",
            Self::UInt64 => "uint64",
            Self::Float16 => "float16",
            Self::Float32 => "float32",
            Self::Float64 => "float64",
            Self::Complex64 => "complex64",
            Self::Complex128 => "complex128",
            Self::RawBits(_) => "r*",
            Self::BFloat16 => "bfloat16",
            Self::ComplexBFloat16 => "complex_bfloat16",
            Self::ComplexFloat16 => "complex_float16",
            Self::NumpyDateTime64 { .. } => "numpy.datetime64",
            Self::NumpyTimeDelta64 { .. } => "numpy.timedelta64",
            Self::SmallFloat(t) => t.name(),
            Self::SmallInt(t) => t.name(),
            Self::ComplexSmallFloat(t) => complex_small_float_name(*t),
            Self::FixedBytes(_) => "null_terminated_bytes",
            Self::FixedUtf32(_) => "fixed_length_utf32",
            Self::Struct(_) => "struct",
            Self::String => "string",
            Self::Bytes => "bytes",
            Self::VlenArray(_) => "vlen_array",
            Self::Object => "object",
        }
    }

    /// The data type with v3 name `name`, or `None` if there is none.
    ///
    /// The registered extensions `complex_float32` and `complex_float64`
    /// are defined as aliases of the core `complex64` and `complex128`
    /// (extensions/data-types/complex_float32), so they read as
    /// [`DataType::Complex64`] and [`DataType::Complex128`] (and are written
    /// back under the core name). `numpy.datetime64` and `numpy.timedelta64`
    /// need a configuration, so they are not found by name alone.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "bool" => Self::Bool,
            "int8" => Self::Int8,
            "int16" => Self::Int16,
            "int32" => Self::Int32,
            "int64" => Self::Int64,
            "uint8" => Self::UInt8,
            "uint16" => Self::UInt16,
            "uint32" => Self::UInt32,
            "uint64" => Self::UInt64,
            "float16" => Self::Float16,
            "float32" => Self::Float32,
            "float64" => Self::Float64,
            "complex64" | "complex_float32" => Self::Complex64,
            "complex128" | "complex_float64" => Self::Complex128,
            "bfloat16" => Self::BFloat16,
            "complex_bfloat16" => Self::ComplexBFloat16,
            "complex_float16" => Self::ComplexFloat16,
            _ if SmallFloat::from_name(name).is_some() => {
                Self::SmallFloat(SmallFloat::from_name(name)?)
            }
            _ if SmallInt::from_name(name).is_some() => Self::SmallInt(SmallInt::from_name(name)?),
            "string" => Self::String,
            "bytes" => Self::Bytes,
            _ if name.starts_with("complex_float") => Self::ComplexSmallFloat(
                SmallFloat::ALL
                    .into_iter()
                    .find(|&t| complex_small_float_name(t) == name)?,
            ),
            _ => {
                // v3 core, "Data types": `r*` where * is a positive multiple of 8.
                let digits = name.strip_prefix('r')?;
                if digits.is_empty()
                    || digits.starts_with('0')
                    || !digits.bytes().all(|b| b.is_ascii_digit())
                {
                    return None;
                }
                let bits: usize = digits.parse().ok()?;
                if bits == 0 || !bits.is_multiple_of(8) {
                    return None;
                }
                Self::RawBits(bits)
            }
        })
    }

    /// The size of the unit that byte order applies to: the element size for
    /// numbers, the component size for complex numbers, 4 for UTF-32
    /// strings, the largest field unit for structs (see
    /// [`DataType::endian_units`] for the exact layout), and 1 for types
    /// that have no byte order (`bool`, 8-bit types, byte strings and `r*`).
    #[must_use]
    pub fn endian_unit(&self) -> usize {
        match self {
            Self::Complex64 => 4,
            Self::Complex128 => 8,
            Self::ComplexBFloat16 | Self::ComplexFloat16 => 2,
            Self::RawBits(_) | Self::Bool | Self::FixedBytes(_) | Self::ComplexSmallFloat(_) => 1,
            Self::FixedUtf32(_) => 4,
            Self::Struct(_) => self
                .endian_units()
                .iter()
                .map(|&(_, unit)| unit)
                .max()
                .unwrap_or(1),
            Self::String | Self::Bytes | Self::VlenArray(_) | Self::Object => 1,
            other => other.size(),
        }
    }

    /// Whether the data type is a registered v3 extension rather than a core
    /// type (`bfloat16`, `complex_bfloat16`, `complex_float16`,
    /// `numpy.datetime64`, `numpy.timedelta64`, the small float and integer
    /// types): formats other than final v3
    /// refuse these (v2 maps only the `numpy.*` ones, to `M8`/`m8`).
    #[must_use]
    pub fn is_extension(&self) -> bool {
        matches!(
            self,
            Self::BFloat16
                | Self::ComplexBFloat16
                | Self::ComplexFloat16
                | Self::NumpyDateTime64 { .. }
                | Self::NumpyTimeDelta64 { .. }
                | Self::SmallFloat(_)
                | Self::SmallInt(_)
                | Self::ComplexSmallFloat(_)
                | Self::FixedBytes(_)
                | Self::FixedUtf32(_)
                | Self::Struct(_)
                | Self::String
                | Self::Bytes
                | Self::VlenArray(_)
                | Self::Object
        )
    }

    /// Whether the data type is a floating point type (including complex).
    #[must_use]
    pub fn is_float(&self) -> bool {
        matches!(
            self,
            Self::Float16
                | Self::Float32
                | Self::Float64
                | Self::Complex64
                | Self::Complex128
                | Self::BFloat16
                | Self::ComplexBFloat16
                | Self::ComplexFloat16
                | Self::SmallFloat(_)
                | Self::ComplexSmallFloat(_)
        )
    }
}

/// The name of the complex type over `t`: `complex_` followed by its name.
fn complex_small_float_name(t: SmallFloat) -> &'static str {
    match t {
        SmallFloat::Float8E3M4 => "complex_float8_e3m4",
        SmallFloat::Float8E4M3 => "complex_float8_e4m3",
        SmallFloat::Float8E4M3B11Fnuz => "complex_float8_e4m3b11fnuz",
        SmallFloat::Float8E4M3Fnuz => "complex_float8_e4m3fnuz",
        SmallFloat::Float8E5M2 => "complex_float8_e5m2",
        SmallFloat::Float8E5M2Fnuz => "complex_float8_e5m2fnuz",
        SmallFloat::Float8E8M0Fnu => "complex_float8_e8m0fnu",
        SmallFloat::Float6E2M3Fn => "complex_float6_e2m3fn",
        SmallFloat::Float6E3M2Fn => "complex_float6_e3m2fn",
        SmallFloat::Float4E2M1Fn => "complex_float4_e2m1fn",
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_sizes_match_the_spec() {
        for (name, size) in [
            ("bool", 1),
            ("int8", 1),
            ("int16", 2),
            ("int32", 4),
            ("int64", 8),
            ("uint8", 1),
            ("uint16", 2),
            ("uint32", 4),
            ("uint64", 8),
            ("float16", 2),
            ("float32", 4),
            ("float64", 8),
            ("complex64", 8),
            ("complex128", 16),
            ("r8", 1),
            ("r24", 3),
            ("r128", 16),
            ("bfloat16", 2),
            ("complex_bfloat16", 4),
            ("complex_float16", 4),
            ("float8_e4m3", 1),
            ("float8_e8m0fnu", 1),
            ("float4_e2m1fn", 1),
            ("int4", 1),
            ("uint2", 1),
            ("complex_float8_e4m3", 2),
            ("complex_float4_e2m1fn", 2),
            ("string", 0),
            ("bytes", 0),
        ] {
            let dt = DataType::from_name(name).unwrap();
            assert_eq!(dt.name(), name);
            assert_eq!(dt.size(), size, "{name}");
        }
    }

    #[test]
    fn raw_types_must_be_positive_multiples_of_eight() {
        for bad in ["r0", "r7", "r", "r08", "r-8", "r+8", "float", "Float32"] {
            assert_eq!(DataType::from_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn complex_aliases_read_as_the_core_types() {
        assert_eq!(
            DataType::from_name("complex_float32"),
            Some(DataType::Complex64)
        );
        assert_eq!(
            DataType::from_name("complex_float64"),
            Some(DataType::Complex128)
        );
        assert_eq!(DataType::from_name("numpy.datetime64"), None);
    }

    #[test]
    fn extension_types_swap_per_component_or_per_integer() {
        assert_eq!(DataType::BFloat16.endian_unit(), 2);
        assert_eq!(DataType::ComplexBFloat16.endian_unit(), 2);
        assert_eq!(DataType::ComplexFloat16.endian_unit(), 2);
        let dt = DataType::NumpyDateTime64 {
            unit: TimeUnit::Second,
            scale_factor: 1,
        };
        assert_eq!((dt.size(), dt.endian_unit()), (8, 8));
        assert_eq!(dt.name(), "numpy.datetime64");
    }

    #[test]
    fn struct_endian_units_follow_packed_fields() {
        let dt = DataType::Struct(vec![
            StructField::new("a", DataType::UInt8),
            StructField::new("b", DataType::Int32),
            StructField {
                name: "c".into(),
                data_type: DataType::Complex64,
                shape: vec![2],
            },
            StructField::new("d", DataType::FixedUtf32(8)),
        ]);
        assert_eq!(dt.size(), 1 + 4 + 16 + 8);
        assert_eq!(
            dt.endian_units(),
            [(1, 4), (5, 4), (9, 4), (13, 4), (17, 4), (21, 4), (25, 4)]
        );
        assert_eq!(dt.endian_unit(), 4);
        assert!(DataType::FixedBytes(3).endian_units().is_empty());
        assert!(DataType::String.is_variable_length());
        assert!(!DataType::FixedUtf32(4).is_variable_length());
    }

    #[test]
    fn time_units_are_case_sensitive_and_accept_mu() {
        assert_eq!(TimeUnit::from_name("M"), Some(TimeUnit::Month));
        assert_eq!(TimeUnit::from_name("m"), Some(TimeUnit::Minute));
        assert_eq!(TimeUnit::from_name("\u{3bc}s"), Some(TimeUnit::Microsecond));
        assert_eq!(TimeUnit::Microsecond.name(), "us");
        assert_eq!(TimeUnit::from_name("sec"), None);
        assert_eq!(TimeUnit::from_name("S"), None);
    }
}
