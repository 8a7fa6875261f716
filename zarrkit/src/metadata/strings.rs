//! Conversions between Rust strings and the fixed-length string elements
//! (`fixed_length_utf32`, NumPy `U`; `null_terminated_bytes`, NumPy `S`).

/// Encodes `s` as one `fixed_length_utf32` element of `length_bytes`:
/// native-endian UTF-32 code units, padded with U+0000
/// (extensions/data-types/fixed_length_utf32, "Bytes codec encoding").
/// `None` if `s` has more than `length_bytes / 4` code points.
#[must_use]
pub fn encode_utf32(s: &str, length_bytes: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(length_bytes);
    for c in s.chars() {
        if out.len() + 4 > length_bytes {
            return None;
        }
        out.extend_from_slice(&u32::from(c).to_ne_bytes());
    }
    out.resize(length_bytes, 0);
    Some(out)
}

/// Decodes one `fixed_length_utf32` element (native-endian code units),
/// dropping the trailing U+0000 padding ("JSON scalar encoding": trailing
/// padding code points are removed; NumPy does the same).
///
/// # Errors
/// A description of the first code unit that is not a Unicode scalar value,
/// or of a length that is not a multiple of 4.
pub fn decode_utf32(bytes: &[u8]) -> Result<String, String> {
    if !bytes.len().is_multiple_of(4) {
        return Err(format!(
            "{} bytes is not a whole number of UTF-32 code units",
            bytes.len()
        ));
    }
    let mut units: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    while units.last() == Some(&0) {
        units.pop();
    }
    units
        .into_iter()
        .map(|u| {
            char::from_u32(u)
                .ok_or_else(|| format!("code unit 0x{u:08x} is not a Unicode scalar value"))
        })
        .collect()
}

/// The content of one zero-padded byte-string element (NumPy `S`): the
/// bytes up to the trailing zero bytes, as NumPy returns them.
#[must_use]
pub fn trim_nul(bytes: &[u8]) -> &[u8] {
    let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    &bytes[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf32_pads_and_trims_like_numpy() {
        let e = encode_utf32("Hé😀", 16).unwrap();
        assert_eq!(e.len(), 16);
        assert_eq!(&e[8..12], &0x1F600u32.to_ne_bytes());
        assert_eq!(&e[12..], &[0; 4]);
        assert_eq!(decode_utf32(&e).unwrap(), "Hé😀");
        assert_eq!(encode_utf32("abcde", 16), None);
        assert_eq!(encode_utf32("", 4).unwrap(), [0; 4]);
        assert!(
            decode_utf32(&0xD800u32.to_ne_bytes())
                .unwrap_err()
                .contains("0x0000d800")
        );
        assert!(decode_utf32(&[0, 0, 0]).is_err());
        // Interior U+0000 survives; only trailing padding goes.
        let mut with_nul = encode_utf32("a", 8).unwrap();
        with_nul.extend(encode_utf32("b", 4).unwrap());
        assert_eq!(decode_utf32(&with_nul).unwrap(), "a\0b");
    }

    #[test]
    fn byte_strings_lose_trailing_zeros_only() {
        assert_eq!(trim_nul(b"ab\0c\0\0"), b"ab\0c");
        assert_eq!(trim_nul(b"\0\0"), b"");
    }
}
