//! Store keys and prefixes, validated so that no key can escape a store root.

use super::StoreError;
use std::fmt;

/// A key in a [`Store`](super::Store): `/`-separated segments such as
/// `foo/bar/zarr.json`.
///
/// Keys are validated on construction, so a backend can map them onto a
/// filesystem or URL without re-checking: no key is empty, starts or ends
/// with `/`, has an empty, `.` or `..` segment, or contains a backslash or
/// NUL. v3 core, "Stores": keys are Unicode strings of `/`-separated segments.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StoreKey(String);

/// A key prefix: empty (the root) or `/`-separated segments ending in `/`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StorePrefix(String);

fn invalid(key: &str, reason: &'static str) -> StoreError {
    StoreError::InvalidKey {
        key: key.escape_debug().to_string(),
        reason,
    }
}

/// Checks the segments of a key (or of a prefix without its trailing `/`).
fn validate_segments(full: &str, body: &str) -> Result<(), StoreError> {
    if body.starts_with('/') {
        return Err(invalid(full, "it is an absolute path"));
    }
    for segment in body.split('/') {
        if segment.is_empty() {
            return Err(invalid(full, "it has an empty segment"));
        }
        if segment == "." || segment == ".." {
            return Err(invalid(full, "it has a `.` or `..` segment"));
        }
    }
    if body.contains('\\') {
        return Err(invalid(full, "it contains a backslash"));
    }
    if body.contains('\0') {
        return Err(invalid(full, "it contains a NUL character"));
    }
    if cfg!(windows) && body.contains(':') {
        return Err(invalid(full, "it contains a colon"));
    }
    Ok(())
}

impl StoreKey {
    /// Validates `key`.
    ///
    /// # Errors
    /// [`StoreError::InvalidKey`] naming the rule the key breaks.
    pub fn new(key: impl Into<String>) -> Result<Self, StoreError> {
        let key = key.into();
        if key.is_empty() {
            return Err(invalid(&key, "it is empty"));
        }
        validate_segments(&key, &key)?;
        Ok(Self(key))
    }

    /// The key as a string.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The prefix of this key's parent "directory" (root for a top-level key).
    #[must_use]
    pub fn parent(&self) -> StorePrefix {
        match self.0.rfind('/') {
            Some(i) => StorePrefix(self.0[..=i].to_string()),
            None => StorePrefix::root(),
        }
    }

    /// The last segment of the key.
    #[must_use]
    pub fn name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or(&self.0)
    }

    /// Whether this key starts with `prefix`.
    #[must_use]
    pub fn has_prefix(&self, prefix: &StorePrefix) -> bool {
        self.0.starts_with(prefix.as_str())
    }
}

impl StorePrefix {
    /// The empty prefix, under which every key lies.
    #[must_use]
    pub fn root() -> Self {
        Self(String::new())
    }

    /// Validates `prefix`: empty, or segments ending in `/`.
    ///
    /// # Errors
    /// [`StoreError::InvalidKey`] naming the rule the prefix breaks.
    pub fn new(prefix: impl Into<String>) -> Result<Self, StoreError> {
        let prefix = prefix.into();
        if prefix.is_empty() {
            return Ok(Self(prefix));
        }
        let Some(body) = prefix.strip_suffix('/') else {
            return Err(invalid(&prefix, "a prefix must end with `/`"));
        };
        validate_segments(&prefix, body)?;
        Ok(Self(prefix))
    }

    /// The prefix as a string (empty for the root).
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is the root prefix.
    #[must_use]
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// The key `name` directly under this prefix (`name` may contain `/`).
    ///
    /// # Errors
    /// [`StoreError::InvalidKey`] if the result is not a valid key.
    pub fn key(&self, name: &str) -> Result<StoreKey, StoreError> {
        StoreKey::new(format!("{}{name}", self.0))
    }

    /// The prefix `name/` directly under this prefix.
    ///
    /// # Errors
    /// [`StoreError::InvalidKey`] if the result is not a valid prefix.
    pub fn child(&self, name: &str) -> Result<StorePrefix, StoreError> {
        StorePrefix::new(format!("{}{name}/", self.0))
    }
}

impl fmt::Display for StoreKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for StorePrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for StoreKey {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

// A key compares, hashes and orders exactly as its string does, so maps keyed
// by `StoreKey` can be searched by `&str` (the memory store scans a prefix range).
impl std::borrow::Borrow<str> for StoreKey {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl TryFrom<&str> for StoreKey {
    type Error = StoreError;
    fn try_from(value: &str) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_that_could_escape_the_root_are_rejected() {
        for (bad, why) in [
            ("", "empty"),
            ("../etc/passwd", "`..`"),
            ("a/../../b", "`..`"),
            ("a/./b", "`.`"),
            ("/etc/passwd", "absolute"),
            ("a//b", "empty segment"),
            ("a/", "empty segment"),
            ("a\\..\\b", "backslash"),
            ("a\0b", "NUL"),
        ] {
            let err = StoreKey::new(bad).unwrap_err();
            assert!(
                matches!(err, StoreError::InvalidKey { .. }),
                "{bad:?} ({why}) gave {err:?}"
            );
        }
    }

    #[test]
    fn invalid_key_message_names_the_key_and_the_rule() {
        let err = StoreKey::new("a/../b").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid store key `a/../b`: it has a `.` or `..` segment"
        );
    }

    #[test]
    fn prefixes_must_end_with_a_slash() {
        assert!(StorePrefix::new("a/b").is_err());
        assert!(StorePrefix::new("a//").is_err());
        assert!(StorePrefix::new("../").is_err());
        assert_eq!(StorePrefix::new("a/b/").unwrap().as_str(), "a/b/");
        assert!(StorePrefix::new("").unwrap().is_root());
    }

    #[test]
    fn parent_and_name_split_at_the_last_slash() {
        let key = StoreKey::new("a/b/zarr.json").unwrap();
        assert_eq!(key.parent().as_str(), "a/b/");
        assert_eq!(key.name(), "zarr.json");
        assert!(StoreKey::new("zarr.json").unwrap().parent().is_root());
    }

    #[test]
    fn byte_range_bounds() {
        use crate::store::ByteRange;
        assert_eq!(ByteRange::new(2, 3).bounds(10), Some((2, 5)));
        assert_eq!(ByteRange::new(8, 3).bounds(10), None);
        assert_eq!(ByteRange::Suffix(4).bounds(10), Some((6, 10)));
        assert_eq!(ByteRange::Suffix(40).bounds(10), Some((0, 10)));
        assert_eq!(
            ByteRange::FromStart {
                offset: 11,
                length: None
            }
            .bounds(10),
            None
        );
        assert_eq!(ByteRange::new(u64::MAX, 2).bounds(10), None);
    }
}
