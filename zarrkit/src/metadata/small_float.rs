//! Conversions between `f32`/`i8` and the registered sub-16-bit v3 data
//! types (`float8_*`, `float6_*`, `float4_e2m1fn`, `int2`, `int4`, `uint2`,
//! `uint4`).
//!
//! zarrkit holds each of these types as ONE BYTE per element: its bit
//! pattern in the low bits, exactly as the `bytes` codec encodes it
//! (`extensions/data-types/<name>`, "Codec compatibility", "bytes": a 1-byte
//! value, the `"endian"` parameter has no effect, and for the 6-, 4- and
//! 2-bit types the upper bits are ignored). Arrays of these types read and
//! write those bytes as `u8` elements; the functions here turn them into
//! numbers and back.
//!
//! Conversion from `f32` rounds to nearest, ties to even, and follows the
//! `ml_dtypes` 0.6.0 package the specifications point to for overflow:
//! IEEE-like types (`float8_e3m4`, `float8_e4m3`, `float8_e5m2`) overflow to
//! infinity, the `fnuz` types to their only NaN (`0x80`, and negative
//! results that round to zero become `+0`, as they have no `-0`), and the
//! finite-only `float6_*`/`float4_e2m1fn` saturate to their largest
//! magnitude. `float8_e8m0fnu` (powers of two only) rounds halfway cases up
//! in magnitude, maps zero, negatives, infinities and NaN to its NaN
//! (`0xff`) and values below `2^-127` to `2^-127`, as `ml_dtypes` does.

/// Errors converting a number into a small data type.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SmallTypeError {
    /// A NaN converted into a type with no NaN (`float6_*`, `float4_e2m1fn`).
    #[error("NaN is not representable in `{data_type}`")]
    NanNotRepresentable {
        /// The data type's v3 name.
        data_type: &'static str,
    },
    /// An integer outside the range of `int2`/`int4`/`uint2`/`uint4`.
    #[error("{value} is out of range for `{data_type}` ({min}..={max})")]
    OutOfRange {
        /// The data type's v3 name.
        data_type: &'static str,
        /// The value given.
        value: i64,
        /// The smallest value of the type.
        min: i8,
        /// The largest value of the type.
        max: i8,
    },
}

/// How a small float type treats the top of its range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Specials {
    /// IEEE 754-like: infinity is the all-ones exponent with zero mantissa,
    /// NaN the all-ones exponent with any other mantissa.
    Ieee,
    /// `fnuz`: no infinity, no `-0`; `0x80` is the only NaN.
    Fnuz,
    /// `fn` without NaN: every pattern is finite.
    Finite,
}

/// A registered small floating point data type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SmallFloat {
    /// `float8_e3m4`: bias 3, IEEE-like, NaN `0x78`.
    Float8E3M4,
    /// `float8_e4m3`: bias 7, IEEE-like, NaN `0x7c`.
    Float8E4M3,
    /// `float8_e4m3b11fnuz`: bias 11, NaN `0x80`, no infinity or `-0`.
    Float8E4M3B11Fnuz,
    /// `float8_e4m3fnuz`: bias 8, NaN `0x80`, no infinity or `-0`.
    Float8E4M3Fnuz,
    /// `float8_e5m2`: bias 15, IEEE-like, NaN `0x7e`.
    Float8E5M2,
    /// `float8_e5m2fnuz`: bias 16, NaN `0x80`, no infinity or `-0`.
    Float8E5M2Fnuz,
    /// `float8_e8m0fnu`: unsigned powers of two `2^-127..=2^127`, NaN `0xff`.
    Float8E8M0Fnu,
    /// `float6_e2m3fn`: bias 1, finite only, low 6 bits `0bSEEMMM`.
    Float6E2M3Fn,
    /// `float6_e3m2fn`: bias 3, finite only, low 6 bits `0bSEEEMM`.
    Float6E3M2Fn,
    /// `float4_e2m1fn`: bias 1, finite only, low 4 bits `0bSEEM`.
    Float4E2M1Fn,
}

impl SmallFloat {
    /// All the small float types.
    pub const ALL: [Self; 10] = [
        Self::Float8E3M4,
        Self::Float8E4M3,
        Self::Float8E4M3B11Fnuz,
        Self::Float8E4M3Fnuz,
        Self::Float8E5M2,
        Self::Float8E5M2Fnuz,
        Self::Float8E8M0Fnu,
        Self::Float6E2M3Fn,
        Self::Float6E3M2Fn,
        Self::Float4E2M1Fn,
    ];

    /// The v3 data type name, such as `float8_e4m3`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Float8E3M4 => "float8_e3m4",
            Self::Float8E4M3 => "float8_e4m3",
            Self::Float8E4M3B11Fnuz => "float8_e4m3b11fnuz",
            Self::Float8E4M3Fnuz => "float8_e4m3fnuz",
            Self::Float8E5M2 => "float8_e5m2",
            Self::Float8E5M2Fnuz => "float8_e5m2fnuz",
            Self::Float8E8M0Fnu => "float8_e8m0fnu",
            Self::Float6E2M3Fn => "float6_e2m3fn",
            Self::Float6E3M2Fn => "float6_e3m2fn",
            Self::Float4E2M1Fn => "float4_e2m1fn",
        }
    }

    /// The type with v3 name `name`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// (total bits, exponent bits, mantissa bits, bias, specials); e8m0 is
    /// handled separately.
    fn layout(self) -> (u32, u32, u32, i32, Specials) {
        match self {
            Self::Float8E3M4 => (8, 3, 4, 3, Specials::Ieee),
            Self::Float8E4M3 => (8, 4, 3, 7, Specials::Ieee),
            Self::Float8E4M3B11Fnuz => (8, 4, 3, 11, Specials::Fnuz),
            Self::Float8E4M3Fnuz => (8, 4, 3, 8, Specials::Fnuz),
            Self::Float8E5M2 => (8, 5, 2, 15, Specials::Ieee),
            Self::Float8E5M2Fnuz => (8, 5, 2, 16, Specials::Fnuz),
            Self::Float8E8M0Fnu => (8, 8, 0, 127, Specials::Finite),
            Self::Float6E2M3Fn => (6, 2, 3, 1, Specials::Finite),
            Self::Float6E3M2Fn => (6, 3, 2, 3, Specials::Finite),
            Self::Float4E2M1Fn => (4, 2, 1, 1, Specials::Finite),
        }
    }

    /// The bit width of the type (8, 6 or 4); the bits above it in the
    /// in-memory byte are ignored.
    #[must_use]
    pub fn bits(self) -> u32 {
        self.layout().0
    }

    /// The bit pattern the fill value `"NaN"` stands for, or `None` for the
    /// types without NaN (`extensions/data-types/<name>`, "Fill value
    /// representation").
    #[must_use]
    pub fn nan_bits(self) -> Option<u8> {
        match self {
            Self::Float8E3M4 => Some(0x78),
            Self::Float8E4M3 => Some(0x7c),
            Self::Float8E5M2 => Some(0x7e),
            Self::Float8E4M3B11Fnuz | Self::Float8E4M3Fnuz | Self::Float8E5M2Fnuz => Some(0x80),
            Self::Float8E8M0Fnu => Some(0xff),
            Self::Float6E2M3Fn | Self::Float6E3M2Fn | Self::Float4E2M1Fn => None,
        }
    }

    /// Whether the type has infinities (only the IEEE-like float8 types).
    #[must_use]
    pub fn has_infinity(self) -> bool {
        self.layout().4 == Specials::Ieee
    }

    /// The magnitude of the positive pattern `p`, read as a finite number
    /// (ignoring infinities and NaN).
    fn magnitude(self, p: u32) -> f64 {
        let (_, _, m, bias, _) = self.layout();
        let exponent = i32::try_from(p >> m).unwrap_or(i32::MAX);
        let mantissa = f64::from(p & ((1 << m) - 1));
        let scale = f64::from(1u32 << m);
        if exponent == 0 {
            mantissa / scale * 2f64.powi(1 - bias)
        } else {
            (1.0 + mantissa / scale) * 2f64.powi(exponent - bias)
        }
    }

    /// The value of the bit pattern in the low bits of `bits` (the upper
    /// bits of the 6- and 4-bit types are ignored, as the `bytes` codec
    /// specifies). Every value is exact in `f32`.
    #[must_use]
    #[allow(clippy::cast_possible_truncation)] // exact: every value fits f32
    pub fn to_f32(self, bits: u8) -> f32 {
        let (width, e, m, _, specials) = self.layout();
        if self == Self::Float8E8M0Fnu {
            return if bits == 0xff {
                f32::NAN
            } else {
                2f64.powi(i32::from(bits) - 127) as f32
            };
        }
        let p = u32::from(bits) & ((1 << width) - 1);
        let sign_bit = 1 << (width - 1);
        let magnitude_bits = p & (sign_bit - 1);
        let negative = p & sign_bit != 0;
        let value = match specials {
            Specials::Fnuz if p == sign_bit => return f32::NAN,
            Specials::Ieee if magnitude_bits >> m == (1 << e) - 1 => {
                if magnitude_bits & ((1 << m) - 1) == 0 {
                    f64::INFINITY
                } else {
                    f64::NAN
                }
            }
            _ => self.magnitude(magnitude_bits),
        };
        let value = value as f32;
        if negative { -value } else { value }
    }

    /// The bit pattern nearest to `x` (round to nearest, ties to even), in
    /// the low bits of the byte with the upper bits zero; see the module
    /// documentation for overflow, NaN and `float8_e8m0fnu`.
    ///
    /// # Errors
    /// [`SmallTypeError::NanNotRepresentable`] for a NaN into `float6_*` or
    /// `float4_e2m1fn`.
    pub fn from_f32(self, x: f32) -> Result<u8, SmallTypeError> {
        if self == Self::Float8E8M0Fnu {
            return Ok(e8m0_from_f32(x));
        }
        self.from_f64(f64::from(x))
    }

    /// As [`SmallFloat::from_f32`], rounding an `f64` directly (no double
    /// rounding through `f32`), except for `float8_e8m0fnu`, which rounds
    /// through `f32`.
    ///
    /// # Errors
    /// [`SmallTypeError::NanNotRepresentable`] for a NaN into `float6_*` or
    /// `float4_e2m1fn`.
    #[allow(clippy::cast_possible_truncation)] // e8m0 rounds through f32
    pub fn from_f64(self, x: f64) -> Result<u8, SmallTypeError> {
        if self == Self::Float8E8M0Fnu {
            return Ok(e8m0_from_f32(x as f32));
        }
        let (width, _, _, _, specials) = self.layout();
        let sign_bit = 1u32 << (width - 1);
        let sign = if x.is_sign_negative() { sign_bit } else { 0 };
        if x.is_nan() {
            return match (specials, self.nan_bits()) {
                (Specials::Ieee, Some(nan)) => Ok(u8_of(u32::from(nan) | sign)),
                (_, Some(nan)) => Ok(nan),
                _ => Err(SmallTypeError::NanNotRepresentable {
                    data_type: self.name(),
                }),
            };
        }
        let a = x.abs();
        // Candidate magnitudes are the positive patterns 0..=top, where
        // `top` is one past the largest finite pattern: a value that rounds
        // to it overflows.
        let max_finite = match specials {
            Specials::Ieee => (0xff >> (8 - width + 1)) - (1 << self.layout().2),
            Specials::Fnuz | Specials::Finite => sign_bit - 1,
        };
        let top = max_finite + 1;
        let rounded = if a >= self.magnitude(top) {
            top
        } else {
            // Largest pattern with magnitude <= a (patterns are monotone).
            let (mut lo, mut hi) = (0u32, top);
            while hi - lo > 1 {
                let mid = u32::midpoint(lo, hi);
                if self.magnitude(mid) <= a {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            let (below, above) = (self.magnitude(lo), self.magnitude(hi));
            if a - below < above - a || (a - below == above - a && lo % 2 == 0) {
                lo
            } else {
                hi
            }
        };
        Ok(u8_of(match specials {
            // `top` is exactly the infinity pattern.
            Specials::Ieee => rounded | sign,
            Specials::Fnuz if rounded == top => 0x80,
            Specials::Fnuz if rounded == 0 => 0,
            Specials::Fnuz => rounded | sign,
            Specials::Finite => rounded.min(max_finite) | sign,
        }))
    }
}

/// The low byte of a pattern known to fit.
fn u8_of(bits: u32) -> u8 {
    u8::try_from(bits & 0xff).unwrap_or(0)
}

/// `float8_e8m0fnu` from `f32`, as `ml_dtypes` 0.6.0 converts: on the `f32`
/// exponent, rounding a mantissa of one half or more up; `f32` subnormals
/// above `2^-127` become `2^-126`, the others `2^-127`.
fn e8m0_from_f32(x: f32) -> u8 {
    if x.is_nan() || x <= 0.0 || x.is_infinite() {
        return 0xff;
    }
    let bits = x.to_bits();
    let exponent = bits >> 23;
    let mantissa = bits & 0x7f_ffff;
    if exponent == 0 {
        return u8::from(mantissa > 0x40_0000);
    }
    let rounded = exponent + u32::from(mantissa >= 0x40_0000);
    u8::try_from(rounded).unwrap_or(0xff)
}

/// A registered small integer data type, held as one byte per element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SmallInt {
    /// `int2`: `-2..=1`, low 2 bits, two's complement.
    Int2,
    /// `int4`: `-8..=7`, low 4 bits, two's complement.
    Int4,
    /// `uint2`: `0..=3`, low 2 bits.
    UInt2,
    /// `uint4`: `0..=15`, low 4 bits.
    UInt4,
}

impl SmallInt {
    /// All the small integer types.
    pub const ALL: [Self; 4] = [Self::Int2, Self::Int4, Self::UInt2, Self::UInt4];

    /// The v3 data type name, such as `int4`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Int2 => "int2",
            Self::Int4 => "int4",
            Self::UInt2 => "uint2",
            Self::UInt4 => "uint4",
        }
    }

    /// The type with v3 name `name`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The bit width (2 or 4).
    #[must_use]
    pub fn bits(self) -> u32 {
        match self {
            Self::Int2 | Self::UInt2 => 2,
            Self::Int4 | Self::UInt4 => 4,
        }
    }

    /// Whether the type is signed.
    #[must_use]
    pub fn is_signed(self) -> bool {
        matches!(self, Self::Int2 | Self::Int4)
    }

    /// The smallest and largest value.
    #[must_use]
    pub fn range(self) -> (i8, i8) {
        match self {
            Self::Int2 => (-2, 1),
            Self::Int4 => (-8, 7),
            Self::UInt2 => (0, 3),
            Self::UInt4 => (0, 15),
        }
    }

    /// The value in the low bits of `bits`; the upper bits are ignored
    /// (extensions/data-types/int4, "bytes": "the upper `IIII` bits are
    /// ignored").
    #[must_use]
    pub fn to_i8(self, bits: u8) -> i8 {
        let shift = 8 - self.bits();
        let low = bits << shift;
        if self.is_signed() {
            i8::from_ne_bytes([low]) >> shift
        } else {
            i8::try_from(low >> shift).unwrap_or(i8::MAX)
        }
    }

    /// The byte for `value`: its low bits, with the upper bits copies of
    /// the sign bit for signed types and zero for unsigned ones (a
    /// consistent value, as the `bytes` codec recommends).
    ///
    /// # Errors
    /// [`SmallTypeError::OutOfRange`] naming the value and type if `value`
    /// is outside [`SmallInt::range`].
    pub fn from_i64(self, value: i64) -> Result<u8, SmallTypeError> {
        let (min, max) = self.range();
        if !(i64::from(min)..=i64::from(max)).contains(&value) {
            return Err(SmallTypeError::OutOfRange {
                data_type: self.name(),
                value,
                min,
                max,
            });
        }
        let [byte] = i8::try_from(value).unwrap_or(0).to_ne_bytes();
        Ok(byte)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// testdata/small_float/reference.txt, generated by generate.py there
    /// from ml_dtypes 0.6.0.
    const REFERENCE: &str = include_str!("../../../testdata/small_float/reference.txt");

    fn hex(s: &str) -> u32 {
        u32::from_str_radix(s, 16).unwrap()
    }

    #[test]
    fn every_bit_pattern_decodes_as_ml_dtypes_does() {
        let mut seen = 0;
        for line in REFERENCE.lines().filter(|l| !l.starts_with('#')) {
            let mut words = line.split(' ');
            let t = SmallFloat::from_name(words.next().unwrap()).unwrap();
            if words.next() != Some("decode") {
                continue;
            }
            for (pattern, expected) in words.enumerate() {
                let got = t.to_f32(u8::try_from(pattern).unwrap());
                let expected = f32::from_bits(hex(expected));
                if expected.is_nan() {
                    assert!(got.is_nan(), "{} {pattern:#x}: {got}", t.name());
                } else {
                    assert_eq!(
                        got.to_bits(),
                        expected.to_bits(),
                        "{} {pattern:#x}",
                        t.name()
                    );
                }
                seen += 1;
            }
        }
        assert_eq!(seen, 7 * 256 + 2 * 64 + 16);
    }

    #[test]
    fn f32_inputs_round_saturate_and_overflow_as_ml_dtypes_does() {
        let mut seen = 0;
        for line in REFERENCE.lines().filter(|l| !l.starts_with('#')) {
            let mut words = line.split(' ');
            let t = SmallFloat::from_name(words.next().unwrap()).unwrap();
            if words.next() != Some("encode") {
                continue;
            }
            for pair in words {
                let (x, expected) = pair.split_once(':').unwrap();
                let x = f32::from_bits(hex(x));
                let got = t.from_f32(x).unwrap();
                assert_eq!(
                    u32::from(got),
                    hex(expected),
                    "{} from {x:e} ({pair})",
                    t.name()
                );
                seen += 1;
            }
        }
        assert!(seen > 10_000, "{seen}");
    }

    #[test]
    fn ties_round_to_even_and_overflow_follows_the_type() {
        // float8_e4m3: 1.0 is 0x38, the next value 1.125 is 0x39; 1.0625 is
        // halfway and goes to the even 0x38, 1.1875 (between 0x39 and
        // 0x3a) to 0x3a.
        let t = SmallFloat::Float8E4M3;
        assert_eq!(t.from_f32(1.0625).unwrap(), 0x38);
        assert_eq!(t.from_f32(1.1875).unwrap(), 0x3a);
        assert_eq!(t.from_f32(1e6).unwrap(), 0x78);
        assert_eq!(t.from_f32(f32::NEG_INFINITY).unwrap(), 0xf8);
        assert_eq!(SmallFloat::Float8E4M3Fnuz.from_f32(1e6).unwrap(), 0x80);
        assert_eq!(SmallFloat::Float8E4M3Fnuz.from_f32(-0.0).unwrap(), 0);
        assert_eq!(SmallFloat::Float4E2M1Fn.from_f32(-100.0).unwrap(), 0xf);
        assert_eq!(
            SmallFloat::Float6E3M2Fn.from_f32(f32::NAN),
            Err(SmallTypeError::NanNotRepresentable {
                data_type: "float6_e3m2fn"
            })
        );
        // Upper bits of the 4-bit pattern are ignored: 0xf2 is 0x2 (1.0).
        assert_eq!(SmallFloat::Float4E2M1Fn.to_f32(0xf2), 1.0);
        assert_eq!(SmallFloat::Float8E8M0Fnu.to_f32(0x7f), 1.0);
        assert!(SmallFloat::Float8E8M0Fnu.to_f32(0xff).is_nan());
    }

    #[test]
    fn small_ints_ignore_upper_bits_and_refuse_out_of_range_values() {
        assert_eq!(SmallInt::Int4.to_i8(0x0f), -1);
        assert_eq!(SmallInt::Int4.to_i8(0xf7), 7);
        assert_eq!(SmallInt::Int4.to_i8(0x08), -8);
        assert_eq!(SmallInt::UInt4.to_i8(0xff), 15);
        assert_eq!(SmallInt::Int2.to_i8(0x02), -2);
        assert_eq!(SmallInt::Int2.to_i8(0xfd), 1);
        assert_eq!(SmallInt::UInt2.to_i8(0xfe), 2);
        assert_eq!(SmallInt::Int4.from_i64(-1).unwrap(), 0xff);
        assert_eq!(SmallInt::UInt4.from_i64(15).unwrap(), 0x0f);
        for (t, bad) in [
            (SmallInt::Int4, 8),
            (SmallInt::Int4, -9),
            (SmallInt::UInt4, 16),
            (SmallInt::UInt2, -1),
            (SmallInt::Int2, 2),
        ] {
            let err = t.from_i64(bad).unwrap_err().to_string();
            assert!(
                err.contains(t.name()) && err.contains(&bad.to_string()),
                "{err}"
            );
        }
        for t in SmallInt::ALL {
            let (min, max) = t.range();
            for v in min..=max {
                assert_eq!(
                    t.to_i8(t.from_i64(i64::from(v)).unwrap()),
                    v,
                    "{}",
                    t.name()
                );
            }
        }
    }
}
