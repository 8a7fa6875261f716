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
}

impl DataType {
    /// The size of one element in bytes.
    #[must_use]
    pub fn size(&self) -> usize {
        match self {
            Self::Bool | Self::Int8 | Self::UInt8 => 1,
            Self::Int16 | Self::UInt16 | Self::Float16 => 2,
            Self::Int32 | Self::UInt32 | Self::Float32 => 4,
            Self::Int64 | Self::UInt64 | Self::Float64 | Self::Complex64 => 8,
            Self::Complex128 => 16,
            Self::RawBits(bits) => bits / 8,
        }
    }

    /// The v3 name, such as `float32` or `r24`.
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
        }
    }

    /// The data type with v3 name `name`, or `None` if there is none.
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
            "complex64" => Self::Complex64,
            "complex128" => Self::Complex128,
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
            Self::RawBits(_) | Self::Bool => 1,
            other => other.size(),
        }
    }

    /// Whether the data type is a floating point type (including complex).
    #[must_use]
    pub fn is_float(&self) -> bool {
        matches!(
            self,
            Self::Float16 | Self::Float32 | Self::Float64 | Self::Complex64 | Self::Complex128
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
}
