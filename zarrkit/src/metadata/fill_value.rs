//! Fill values as the bytes of one element.

use super::DataType;

/// The fill value of an array: the bytes of one element in the in-memory
/// representation (native byte order for numbers; the raw bytes for `r*`).
///
/// Keeping the bytes rather than a number means any bit pattern survives,
/// including NaN payloads written as `"0x7fc00001"`: v3 core, "Fill value"
/// permits hex bit patterns for floating point types.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FillValue(Vec<u8>);

impl FillValue {
    /// A fill value from the bytes of one element.
    #[must_use]
    pub fn new(bytes: Vec<u8>) -> Self {
        Self(bytes)
    }

    /// The all-zero element of `data_type`: zero, `false`, or zero bits.
    #[must_use]
    pub fn zero(data_type: &DataType) -> Self {
        Self(vec![0; data_type.size()])
    }

    /// The element's bytes.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Whether every element of `chunk` (a whole number of elements) equals
    /// this fill value, bit for bit.
    #[must_use]
    pub fn equals_all(&self, chunk: &[u8]) -> bool {
        let n = self.0.len();
        if n == 0 || !chunk.len().is_multiple_of(n) {
            return false;
        }
        if self.0.iter().all(|&b| b == self.0[0]) {
            // Every byte the same (zero is the common case): a flat scan the
            // compiler vectorises.
            let b = self.0[0];
            return chunk.iter().all(|&x| x == b);
        }
        chunk
            .chunks_exact(n)
            .all(|element| element == self.0.as_slice())
    }

    /// Fills `out` (a whole number of elements) with this value.
    pub fn fill(&self, out: &mut [u8]) {
        let n = self.0.len();
        if n == 0 {
            return;
        }
        if self.0.iter().all(|&b| b == self.0[0]) {
            out.fill(self.0[0]);
        } else {
            for element in out.chunks_exact_mut(n) {
                element.copy_from_slice(&self.0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equals_all_compares_whole_elements() {
        let fill = FillValue::new(1.5f32.to_ne_bytes().to_vec());
        let mut chunk = vec![0u8; 16];
        fill.fill(&mut chunk);
        assert!(fill.equals_all(&chunk));
        chunk[5] ^= 1;
        assert!(!fill.equals_all(&chunk));
        assert!(FillValue::zero(&DataType::UInt16).equals_all(&[0, 0, 0, 0]));
        assert!(!FillValue::zero(&DataType::UInt16).equals_all(&[0, 0, 0, 1]));
    }
}
