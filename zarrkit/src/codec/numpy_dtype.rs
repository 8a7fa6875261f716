//! NumPy type strings and element arithmetic shared by the numcodecs
//! filters (`delta`, `astype`, `fixedscaleoffset`, `quantize`).
//!
//! numcodecs filters name their types as NumPy type strings (`"<i4"`,
//! `"|u1"`, `">f8"`); the filters here work on decoded chunks in native
//! byte order, so the byte order of a type string only tells the `bytes`
//! codec after them how to serialise (see `format/v2.rs`).

use super::{ChunkRepr, CodecError};
use crate::metadata::{DataType, FillValue, numpy};
use half::f16;

/// A fixed-size numeric NumPy type: the model's data type and its byte order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumpyDtype {
    /// The element type.
    pub data_type: DataType,
    /// Whether the type string says big-endian (`>`).
    pub big_endian: bool,
}

impl NumpyDtype {
    /// Parses a NumPy type string such as `"<i4"`, `"|u1"`, `">f8"`, `"i2"`
    /// or a name such as `"int32"` (little-endian).
    ///
    /// # Errors
    /// [`CodecError::InvalidConfiguration`] naming `codec` and `field`.
    pub fn parse(codec: &str, field: &str, text: &str) -> Result<Self, CodecError> {
        let bad = || CodecError::InvalidConfiguration {
            codec: codec.to_string(),
            reason: format!(
                "`{field}` is `{text}`, expected a fixed-size numeric NumPy type such as \"<i4\""
            ),
        };
        // Names such as `int32` mean the little-endian type.
        if let Some(data_type) = DataType::from_name(text).filter(is_real_number) {
            return Ok(Self {
                data_type,
                big_endian: false,
            });
        }
        let (big_endian, rest) = match text.as_bytes().first() {
            Some(b'<' | b'=') => (false, &text[1..]),
            Some(b'>') => (true, &text[1..]),
            Some(b'|') => (false, &text[1..]),
            _ => (false, text),
        };
        // The kind and size through NumPy's one table (`metadata::numpy`),
        // spelled exactly as it writes them (`i4`, not `i04`); `?` is bool.
        let data_type = if rest == "?" {
            DataType::Bool
        } else {
            let mut chars = rest.chars();
            let kind = chars.next().ok_or_else(bad)?;
            let size = chars.as_str().parse().map_err(|_| bad())?;
            numpy::data_type_of(kind, size)
                .filter(|t| is_real_number(t) && numpy::type_string(t, false)[1..] == *rest)
                .ok_or_else(bad)?
        };
        let big_endian = big_endian && data_type.size() > 1;
        Ok(Self {
            data_type,
            big_endian,
        })
    }

    /// A little-endian type of `data_type`, or `None` if it is not a
    /// fixed-size real numeric type.
    #[must_use]
    pub fn native(data_type: &DataType) -> Option<Self> {
        is_real_number(data_type).then(|| Self {
            data_type: data_type.clone(),
            big_endian: false,
        })
    }

    /// The NumPy type string, as numcodecs writes it (`"<i4"`, `"|u1"`).
    #[must_use]
    pub fn to_type_string(&self) -> String {
        numpy::type_string(&self.data_type, self.big_endian)
    }
}

/// Whether `data_type` is `bool`, an integer or a float: the types the
/// numcodecs filters take.
fn is_real_number(data_type: &DataType) -> bool {
    *data_type == DataType::Bool || is_integer(data_type) || is_float(data_type)
}

/// Whether `data_type` is a floating-point type (`float16/32/64`).
#[must_use]
pub fn is_float(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Float16 | DataType::Float32 | DataType::Float64
    )
}

/// Whether `data_type` is an integer type (signed or unsigned, not bool).
#[must_use]
pub fn is_integer(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
    )
}

/// One element's value: an integer (bool as 0 or 1) or a float.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    /// An integer or bool.
    Int(i128),
    /// A float.
    Float(f64),
}

impl Num {
    /// The value as a float (NumPy's int → float conversion).
    #[must_use]
    pub fn to_f64(self) -> f64 {
        match self {
            Self::Int(v) => v as f64,
            Self::Float(v) => v,
        }
    }
}

/// Reads the native-order element at the start of `bytes` (which holds at
/// least `data_type.size()` bytes).
#[must_use]
pub fn load(data_type: &DataType, bytes: &[u8]) -> Num {
    fn arr<const N: usize>(bytes: &[u8]) -> [u8; N] {
        let mut out = [0; N];
        out.copy_from_slice(&bytes[..N]);
        out
    }
    match data_type {
        DataType::Bool => Num::Int(i128::from(bytes[0] != 0)),
        DataType::Int8 => Num::Int(i128::from(i8::from_ne_bytes(arr(bytes)))),
        DataType::Int16 => Num::Int(i128::from(i16::from_ne_bytes(arr(bytes)))),
        DataType::Int32 => Num::Int(i128::from(i32::from_ne_bytes(arr(bytes)))),
        DataType::Int64 => Num::Int(i128::from(i64::from_ne_bytes(arr(bytes)))),
        DataType::UInt8 => Num::Int(i128::from(bytes[0])),
        DataType::UInt16 => Num::Int(i128::from(u16::from_ne_bytes(arr(bytes)))),
        DataType::UInt32 => Num::Int(i128::from(u32::from_ne_bytes(arr(bytes)))),
        DataType::UInt64 => Num::Int(i128::from(u64::from_ne_bytes(arr(bytes)))),
        DataType::Float16 => Num::Float(f16::from_ne_bytes(arr(bytes)).to_f64()),
        DataType::Float32 => Num::Float(f64::from(f32::from_ne_bytes(arr(bytes)))),
        DataType::Float64 => Num::Float(f64::from_ne_bytes(arr(bytes))),
        // Callers check the types first; other types read as zero.
        _ => Num::Int(0),
    }
}

/// Rounds `v` to the precision of the float type `data_type` (the result
/// of one IEEE operation in that type, computed in `f64`, rounds the same).
#[must_use]
pub fn round_to(data_type: &DataType, v: f64) -> f64 {
    match data_type {
        DataType::Float16 => f16::from_f64(v).to_f64(),
        DataType::Float32 => f64::from(v as f32),
        _ => v,
    }
}

/// Writes `value` into `out` (at least `data_type.size()` bytes) with
/// NumPy's `astype` casting: integers wrap, floats truncate toward zero
/// when cast to integers (out-of-range floats saturate, where NumPy's
/// result is platform-dependent), bool is `value != 0`.
pub fn store(data_type: &DataType, value: Num, out: &mut [u8]) {
    let int = |value: Num| match value {
        Num::Int(v) => v,
        Num::Float(v) => v as i128,
    };
    match data_type {
        DataType::Bool => {
            out[0] = u8::from(match value {
                Num::Int(v) => v != 0,
                Num::Float(v) => v != 0.0,
            });
        }
        DataType::Int8 => out[..1].copy_from_slice(&(int(value) as i8).to_ne_bytes()),
        DataType::Int16 => out[..2].copy_from_slice(&(int(value) as i16).to_ne_bytes()),
        DataType::Int32 => out[..4].copy_from_slice(&(int(value) as i32).to_ne_bytes()),
        DataType::Int64 => out[..8].copy_from_slice(&(int(value) as i64).to_ne_bytes()),
        DataType::UInt8 => out[0] = int(value) as u8,
        DataType::UInt16 => out[..2].copy_from_slice(&(int(value) as u16).to_ne_bytes()),
        DataType::UInt32 => out[..4].copy_from_slice(&(int(value) as u32).to_ne_bytes()),
        DataType::UInt64 => out[..8].copy_from_slice(&(int(value) as u64).to_ne_bytes()),
        DataType::Float16 => {
            let v = match value {
                Num::Int(v) => f16::from_f32(v as f32),
                Num::Float(v) => f16::from_f64(v),
            };
            out[..2].copy_from_slice(&v.to_ne_bytes());
        }
        DataType::Float32 => {
            let v = match value {
                Num::Int(v) => v as f32,
                Num::Float(v) => v as f32,
            };
            out[..4].copy_from_slice(&v.to_ne_bytes());
        }
        DataType::Float64 => {
            out[..8].copy_from_slice(&value.to_f64().to_ne_bytes());
        }
        _ => {}
    }
}

/// Wraps an integer to the width and signedness of the integer type `data_type`.
#[must_use]
pub fn wrap(data_type: &DataType, v: i128) -> i128 {
    match data_type {
        DataType::Int8 => i128::from(v as i8),
        DataType::Int16 => i128::from(v as i16),
        DataType::Int32 => i128::from(v as i32),
        DataType::Int64 => i128::from(v as i64),
        DataType::UInt8 => i128::from(v as u8),
        DataType::UInt16 => i128::from(v as u16),
        DataType::UInt32 => i128::from(v as u32),
        DataType::UInt64 => i128::from(v as u64),
        _ => v,
    }
}

/// Checks that a chunk of `decoded` elements has the element type `expected`.
///
/// # Errors
/// [`CodecError::Incompatible`] naming the codec and both types.
pub fn check_type(
    codec: &'static str,
    decoded: &DataType,
    expected: &NumpyDtype,
) -> Result<(), CodecError> {
    if *decoded == expected.data_type {
        Ok(())
    } else {
        Err(CodecError::Incompatible {
            codec,
            what: format!(
                "arrays of {} with `dtype` {}",
                decoded.name(),
                expected.to_type_string()
            ),
        })
    }
}

/// Checks that `data` holds `count` elements of `size` bytes.
///
/// # Errors
/// [`CodecError::WrongSize`] otherwise.
pub fn check_len(data: &[u8], count: usize, size: usize) -> Result<(), CodecError> {
    let expected = count.checked_mul(size).ok_or(CodecError::WrongSize {
        expected: usize::MAX,
        actual: data.len(),
    })?;
    if data.len() == expected {
        Ok(())
    } else {
        Err(CodecError::WrongSize {
            expected,
            actual: data.len(),
        })
    }
}

/// Maps each element of `input` (type `from`) through `f` to a new buffer
/// of type `to`.
pub fn map_elements(
    input: &[u8],
    from: &DataType,
    to: &DataType,
    mut f: impl FnMut(Num) -> Num,
) -> Vec<u8> {
    let (from_size, to_size) = (from.size(), to.size());
    let count = input.len() / from_size.max(1);
    let mut out = vec![0u8; count * to_size];
    for (src, dst) in input
        .chunks_exact(from_size.max(1))
        .zip(out.chunks_exact_mut(to_size.max(1)))
    {
        store(to, f(load(from, src)), dst);
    }
    out
}

/// Which way a dtype-changing filter runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// From `dtype` to `astype`.
    Encode,
    /// From `astype` back to `dtype`.
    Decode,
}

/// The shared body of numcodecs' dtype-changing filters (`astype`,
/// `fixedscaleoffset`, `quantize`): checks that chunks of `decoded_repr`
/// hold `dtype` elements and that `data` holds as many elements of the
/// input type, then maps each element with `f`, from `dtype` to `astype`
/// when encoding and back when decoding.
///
/// # Errors
/// [`CodecError::Incompatible`] for another data type, or
/// [`CodecError::WrongSize`] when `data` has the wrong length.
pub fn convert_chunk(
    codec: &'static str,
    data: &[u8],
    decoded_repr: &ChunkRepr,
    (dtype, astype): (&NumpyDtype, &NumpyDtype),
    direction: Direction,
    f: impl FnMut(Num) -> Num,
) -> Result<Vec<u8>, CodecError> {
    check_type(codec, &decoded_repr.data_type, dtype)?;
    let (from, to) = match direction {
        Direction::Encode => (&dtype.data_type, &astype.data_type),
        Direction::Decode => (&astype.data_type, &dtype.data_type),
    };
    check_len(
        data,
        decoded_repr.size_bytes()? / dtype.data_type.size(),
        from.size(),
    )?;
    Ok(map_elements(data, from, to, f))
}

/// The representation `decoded` takes when its elements become `data_type`
/// (the fill value becomes zero, which the chain does not read back).
#[must_use]
pub fn repr_as(decoded: &ChunkRepr, data_type: DataType) -> ChunkRepr {
    ChunkRepr {
        shape: decoded.shape.clone(),
        fill_value: FillValue::zero(&data_type),
        data_type,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_strings_parse_and_print_as_numcodecs_writes_them() {
        for (text, data_type, big, printed) in [
            ("<i4", DataType::Int32, false, "<i4"),
            (">f8", DataType::Float64, true, ">f8"),
            ("|u1", DataType::UInt8, false, "|u1"),
            (">u1", DataType::UInt8, false, "|u1"),
            ("int16", DataType::Int16, false, "<i2"),
            ("f2", DataType::Float16, false, "<f2"),
            ("|b1", DataType::Bool, false, "|b1"),
        ] {
            let dtype = NumpyDtype::parse("c", "dtype", text).unwrap();
            assert_eq!(
                (dtype.data_type.clone(), dtype.big_endian),
                (data_type, big),
                "{text}"
            );
            assert_eq!(dtype.to_type_string(), printed);
        }
        for text in ["", "<", "<i3", "|O", "<U4", "<c8", "int", "<M8[s]"] {
            let err = NumpyDtype::parse("numcodecs.delta", "dtype", text).unwrap_err();
            assert!(err.to_string().contains("`numcodecs.delta`"), "{err}");
        }
    }

    #[test]
    fn casts_follow_numpy_astype() {
        let mut out = [0u8; 8];
        store(&DataType::UInt8, Num::Int(300), &mut out);
        assert_eq!(out[0], 44);
        store(&DataType::Int16, Num::Float(-2.9), &mut out);
        assert_eq!(i16::from_ne_bytes([out[0], out[1]]), -2);
        store(&DataType::Float32, Num::Float(0.1), &mut out);
        assert_eq!(
            load(&DataType::Float32, &out),
            Num::Float(f64::from(0.1f32))
        );
        assert_eq!(wrap(&DataType::Int8, 200), -56);
        assert_eq!(
            round_to(&DataType::Float16, 1.0 / 3.0),
            f16::from_f64(1.0 / 3.0).to_f64()
        );
    }
}
