//! The `Element` trait: Rust types that array elements read into and write from.

use crate::metadata::DataType;
use half::{bf16, f16};
use num_complex::Complex;
use std::borrow::Cow;

/// A Rust type that holds one element of some data type.
///
/// Reads and writes check [`Element::is_compatible`] first: asking for
/// `f32` from an `int32` array is an error, never a reinterpretation.
pub trait Element: Copy + Send + Sync + 'static {
    /// The type's name in messages, such as `f32`.
    const NAME: &'static str;

    /// The value whose bytes are all zero.
    fn zero() -> Self;

    /// Whether this type holds elements of `data_type`.
    fn is_compatible(data_type: &DataType) -> bool;

    /// The native-endian bytes of `elements`.
    fn as_bytes(elements: &[Self]) -> Cow<'_, [u8]>;

    /// The elements as a mutable byte slice, when any bytes make valid
    /// elements (every type but `bool`).
    fn as_bytes_mut(elements: &mut [Self]) -> Option<&mut [u8]>;

    /// Converts native-endian bytes into `out` (one element per
    /// `size_of::<Self>()` bytes).
    ///
    /// # Errors
    /// A description of the first invalid value (a `bool` other than 0 or 1).
    fn from_bytes(bytes: &[u8], out: &mut [Self]) -> Result<(), String>;
}

macro_rules! pod_element {
    ($t:ty, $name:literal, $($dt:pat_param)|+) => {
        impl Element for $t {
            const NAME: &'static str = $name;
            fn zero() -> Self {
                <Self as bytemuck::Zeroable>::zeroed()
            }
            fn is_compatible(data_type: &DataType) -> bool {
                matches!(data_type, $($dt)|+)
            }
            fn as_bytes(elements: &[Self]) -> Cow<'_, [u8]> {
                Cow::Borrowed(bytemuck::cast_slice(elements))
            }
            fn as_bytes_mut(elements: &mut [Self]) -> Option<&mut [u8]> {
                Some(bytemuck::cast_slice_mut(elements))
            }
            fn from_bytes(bytes: &[u8], out: &mut [Self]) -> Result<(), String> {
                bytemuck::cast_slice_mut::<Self, u8>(out).copy_from_slice(bytes);
                Ok(())
            }
        }
    };
}

pod_element!(i8, "i8", DataType::Int8);
pod_element!(i16, "i16", DataType::Int16);
pod_element!(i32, "i32", DataType::Int32);
// `numpy.datetime64`/`numpy.timedelta64` elements are their raw counts of
// `unit` × `scale_factor` (`i64::MIN` is NaT), as NumPy stores them.
pod_element!(
    i64,
    "i64",
    DataType::Int64 | DataType::NumpyDateTime64 { .. } | DataType::NumpyTimeDelta64 { .. }
);
// The small float and integer types are held as one byte per element: `u8`
// reads and writes that byte (convert with `SmallFloat`/`SmallInt`).
pod_element!(
    u8,
    "u8",
    DataType::UInt8 | DataType::RawBits(8) | DataType::SmallFloat(_) | DataType::SmallInt(_)
);
pod_element!(u16, "u16", DataType::UInt16);
pod_element!(u32, "u32", DataType::UInt32);
pod_element!(u64, "u64", DataType::UInt64);
pod_element!(f16, "f16", DataType::Float16);
pod_element!(f32, "f32", DataType::Float32);
pod_element!(f64, "f64", DataType::Float64);
pod_element!(Complex<f32>, "Complex<f32>", DataType::Complex64);
pod_element!(Complex<f64>, "Complex<f64>", DataType::Complex128);
pod_element!(bf16, "bf16", DataType::BFloat16);
pod_element!(Complex<f16>, "Complex<f16>", DataType::ComplexFloat16);
pod_element!(Complex<bf16>, "Complex<bf16>", DataType::ComplexBFloat16);
// The complex small float types are held as the two bit patterns (real,
// imaginary); convert each with `SmallFloat`.
pod_element!(Complex<u8>, "Complex<u8>", DataType::ComplexSmallFloat(_));

impl Element for bool {
    const NAME: &'static str = "bool";
    fn zero() -> Self {
        false
    }
    fn is_compatible(data_type: &DataType) -> bool {
        matches!(data_type, DataType::Bool)
    }
    fn as_bytes(elements: &[Self]) -> Cow<'_, [u8]> {
        Cow::Owned(elements.iter().map(|&b| u8::from(b)).collect())
    }
    fn as_bytes_mut(_: &mut [Self]) -> Option<&mut [u8]> {
        None
    }
    fn from_bytes(bytes: &[u8], out: &mut [Self]) -> Result<(), String> {
        // v3 core, "Data types": `bool` is one byte, 0 for false and 1 for true.
        for (o, &b) in out.iter_mut().zip(bytes) {
            *o = match b {
                0 => false,
                1 => true,
                other => return Err(format!("byte `{other}` is neither 0 nor 1")),
            };
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bool_rejects_bytes_other_than_zero_and_one() {
        let mut out = [false; 3];
        bool::from_bytes(&[0, 1, 0], &mut out).unwrap();
        assert_eq!(out, [false, true, false]);
        assert!(
            bool::from_bytes(&[0, 2, 0], &mut out)
                .unwrap_err()
                .contains("`2`")
        );
    }

    #[test]
    fn compatibility_is_exact() {
        assert!(f32::is_compatible(&DataType::Float32));
        assert!(!f32::is_compatible(&DataType::Int32));
        assert!(!i64::is_compatible(&DataType::UInt64));
        assert!(u8::is_compatible(&DataType::RawBits(8)));
        assert!(!u8::is_compatible(&DataType::RawBits(16)));
    }
}
