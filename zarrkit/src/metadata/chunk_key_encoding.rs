//! Chunk key encodings: how chunk grid coordinates become store keys.
//!
//! Spec: `final/v3/chunk-key-encodings/default` and `.../v2`.

use std::fmt::Write as _;

/// The character between chunk coordinates in a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Separator {
    /// `/`: one directory level per dimension.
    Slash,
    /// `.`: all coordinates in one key segment.
    Dot,
}

impl Separator {
    /// The separator character.
    #[must_use]
    pub fn as_char(self) -> char {
        match self {
            Self::Slash => '/',
            Self::Dot => '.',
        }
    }

    /// The separator for `"/"` or `"."`.
    #[must_use]
    pub fn from_str_opt(s: &str) -> Option<Self> {
        match s {
            "/" => Some(Self::Slash),
            "." => Some(Self::Dot),
            _ => None,
        }
    }
}

/// A chunk key encoding: chunk coordinates to the part of the key after the
/// node's prefix.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChunkKeyEncoding {
    /// v3 `default`: `c` followed by each coordinate after the separator
    /// (`c/1/0`); a 0-d array's one chunk is `c`.
    Default {
        /// The separator, `/` unless the metadata says otherwise.
        separator: Separator,
    },
    /// v3 `v2`: the coordinates joined by the separator (`1.0`); a 0-d
    /// array's one chunk is `0`.
    V2 {
        /// The separator, `.` unless the metadata says otherwise.
        separator: Separator,
    },
}

impl ChunkKeyEncoding {
    /// The key suffix of the chunk at `chunk_coords`.
    #[must_use]
    pub fn encode(&self, chunk_coords: &[u64]) -> String {
        // v3 core, "Chunk key encoding": a 0-d array has one chunk whose key
        // is `c` in the default encoding, while the v2 encoding calls it `0`.
        // Both come from this one function.
        let (mut out, separator) = match self {
            Self::Default { separator } => (String::from("c"), *separator),
            Self::V2 { separator } => {
                if chunk_coords.is_empty() {
                    return "0".to_string();
                }
                (String::new(), *separator)
            }
        };
        for (i, c) in chunk_coords.iter().enumerate() {
            if i > 0 || matches!(self, Self::Default { .. }) {
                out.push(separator.as_char());
            }
            let _ = write!(out, "{c}");
        }
        out
    }

    /// The chunk coordinates of a key suffix produced by [`Self::encode`]
    /// for an array of `ndim` dimensions, or `None` if it is not one.
    #[must_use]
    pub fn decode(&self, suffix: &str, ndim: usize) -> Option<Vec<u64>> {
        let (rest, separator) = match self {
            Self::Default { separator } => {
                let rest = suffix.strip_prefix('c')?;
                if ndim == 0 {
                    return rest.is_empty().then(Vec::new);
                }
                (rest.strip_prefix(separator.as_char())?, *separator)
            }
            Self::V2 { separator } => {
                if ndim == 0 {
                    return (suffix == "0").then(Vec::new);
                }
                (suffix, *separator)
            }
        };
        let coords: Option<Vec<u64>> = rest
            .split(separator.as_char())
            .map(|p| {
                // Only canonical decimal numbers, so that decode(encode(x)) == x
                // and each chunk has exactly one key.
                if p.is_empty()
                    || (p.len() > 1 && p.starts_with('0'))
                    || !p.bytes().all(|b| b.is_ascii_digit())
                {
                    None
                } else {
                    p.parse().ok()
                }
            })
            .collect();
        coords.filter(|c| c.len() == ndim)
    }

    /// The spec name of this encoding.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::Default { .. } => "default",
            Self::V2 { .. } => "v2",
        }
    }

    /// The separator of this encoding.
    #[must_use]
    pub fn separator(&self) -> Separator {
        match self {
            Self::Default { separator } | Self::V2 { separator } => *separator,
        }
    }
}

impl Default for ChunkKeyEncoding {
    fn default() -> Self {
        Self::Default {
            separator: Separator::Slash,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn default_encoding_uses_c_for_zero_dimensional_arrays() {
        let encoding = ChunkKeyEncoding::Default {
            separator: Separator::Slash,
        };
        assert_eq!(encoding.encode(&[]), "c");
        assert_eq!(
            ChunkKeyEncoding::V2 {
                separator: Separator::Dot
            }
            .encode(&[]),
            "0"
        );
    }

    #[test]
    fn encodings_follow_the_spec_examples() {
        let slash = ChunkKeyEncoding::Default {
            separator: Separator::Slash,
        };
        let dot = ChunkKeyEncoding::Default {
            separator: Separator::Dot,
        };
        let v2dot = ChunkKeyEncoding::V2 {
            separator: Separator::Dot,
        };
        let v2slash = ChunkKeyEncoding::V2 {
            separator: Separator::Slash,
        };
        assert_eq!(slash.encode(&[1, 23, 45]), "c/1/23/45");
        assert_eq!(dot.encode(&[1, 23, 45]), "c.1.23.45");
        assert_eq!(v2dot.encode(&[1, 23, 45]), "1.23.45");
        assert_eq!(v2slash.encode(&[1, 23, 45]), "1/23/45");
    }

    #[test]
    fn non_canonical_keys_do_not_decode() {
        let slash = ChunkKeyEncoding::Default {
            separator: Separator::Slash,
        };
        assert_eq!(slash.decode("c/01/2", 2), None);
        assert_eq!(slash.decode("c/1/2", 3), None);
        assert_eq!(slash.decode("c/1/+2", 2), None);
        assert_eq!(slash.decode("d/1/2", 2), None);
        assert_eq!(slash.decode("c/10/0", 2), Some(vec![10, 0]));
    }

    proptest! {
        #[test]
        fn chunk_keys_round_trip(coords in prop::collection::vec(any::<u64>(), 0..6), v2 in any::<bool>(), slash in any::<bool>()) {
            let separator = if slash { Separator::Slash } else { Separator::Dot };
            let encoding = if v2 { ChunkKeyEncoding::V2 { separator } } else { ChunkKeyEncoding::Default { separator } };
            let key = encoding.encode(&coords);
            prop_assert_eq!(encoding.decode(&key, coords.len()), Some(coords));
        }
    }
}
