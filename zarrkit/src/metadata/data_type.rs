//! Data types of array elements.
//!
//! Spec: `final/v3/data-types` (the core types and `r*` raw bits). Later
//! formats and extensions add variants; every variant has a fixed element
//! size in bytes.

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
            Self::Bool | Self::Int8 | Self::UInt8 => 1,
            Self::Int16 | Self::UInt16 | Self::Float16 | Self::BFloat16 => 2,
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
        }
    }

    /// The v3 name, such as `float32`, `r24` or `numpy.datetime64` (the
    /// configuration of the `numpy.*` types is not part of the name).
    #[must_use]
    pub fn name(&self) -> String {
        match self {
            Self::RawBits(bits) => format!("r{bits}"),
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
                if bits == 0 || bits % 8 != 0 {
                    return None;
                }
                Self::RawBits(bits)
            }
        })
    }

    /// The size of the unit that byte order applies to: the element size for
    /// numbers, the component size for complex numbers, and 1 for types that
    /// have no byte order (`bool`, 8-bit types and `r*`).
    #[must_use]
    pub fn endian_unit(&self) -> usize {
        match self {
            Self::Complex64 => 4,
            Self::Complex128 => 8,
            Self::ComplexBFloat16 | Self::ComplexFloat16 => 2,
            Self::RawBits(_) | Self::Bool => 1,
            other => other.size(),
        }
    }

    /// Whether the data type is a registered v3 extension rather than a core
    /// type (`bfloat16`, `complex_bfloat16`, `complex_float16`,
    /// `numpy.datetime64`, `numpy.timedelta64`): formats other than final v3
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
        )
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
    fn time_units_are_case_sensitive_and_accept_mu() {
        assert_eq!(TimeUnit::from_name("M"), Some(TimeUnit::Month));
        assert_eq!(TimeUnit::from_name("m"), Some(TimeUnit::Minute));
        assert_eq!(TimeUnit::from_name("\u{3bc}s"), Some(TimeUnit::Microsecond));
        assert_eq!(TimeUnit::Microsecond.name(), "us");
        assert_eq!(TimeUnit::from_name("sec"), None);
        assert_eq!(TimeUnit::from_name("S"), None);
    }
}
