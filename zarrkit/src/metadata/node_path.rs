//! Node paths: `/` for the root, `/a/b` below it.

use crate::store::StorePrefix;
use std::fmt;

/// The path of a node in a hierarchy: `/` for the root, `/a/b` below it.
///
/// v3 core, "Node names": names are non-empty, contain no `/`, are not only
/// periods, and do not start with `__`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodePath(String);

/// Errors in a node path.
#[derive(Debug, thiserror::Error)]
#[error("invalid node path `{path}`: {reason}")]
pub struct NodePathError {
    /// The rejected path.
    pub path: String,
    /// Which rule it breaks.
    pub reason: &'static str,
}

impl NodePath {
    /// The root node `/`.
    #[must_use]
    pub fn root() -> Self {
        Self("/".to_string())
    }

    /// Parses a path; the leading `/` is optional and a trailing `/` is
    /// ignored, so `a/b`, `/a/b` and `/a/b/` are the same node.
    ///
    /// # Errors
    /// [`NodePathError`] if a name breaks the v3 node name rules.
    pub fn new(path: &str) -> Result<Self, NodePathError> {
        let trimmed = path.trim_start_matches('/').trim_end_matches('/');
        if trimmed.is_empty() {
            return Ok(Self::root());
        }
        let error = |reason| NodePathError {
            path: path.escape_debug().to_string(),
            reason,
        };
        for name in trimmed.split('/') {
            if name.is_empty() {
                return Err(error("it has an empty name"));
            }
            if name.chars().all(|c| c == '.') {
                return Err(error("a name consists only of periods"));
            }
            if name.starts_with("__") {
                return Err(error("a name starts with the reserved prefix `__`"));
            }
            if name == "zarr.json" {
                return Err(error("a name is `zarr.json`"));
            }
            if name.contains('\\') || name.contains('\0') {
                return Err(error("a name contains a backslash or NUL"));
            }
        }
        Ok(Self(format!("/{trimmed}")))
    }

    /// The path as a string, starting with `/`.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is the root.
    #[must_use]
    pub fn is_root(&self) -> bool {
        self.0 == "/"
    }

    /// The node's name (empty for the root).
    #[must_use]
    pub fn name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or_default()
    }

    /// The parent path, or `None` for the root.
    #[must_use]
    pub fn parent(&self) -> Option<Self> {
        if self.is_root() {
            return None;
        }
        let i = self.0.rfind('/').unwrap_or(0);
        Some(if i == 0 {
            Self::root()
        } else {
            Self(self.0[..i].to_string())
        })
    }

    /// The child `name` of this node.
    ///
    /// # Errors
    /// [`NodePathError`] if `name` is not a valid node name.
    pub fn child(&self, name: &str) -> Result<Self, NodePathError> {
        if name.is_empty() || name.contains('/') {
            return Err(NodePathError {
                path: format!("{}/{}", self.0.trim_end_matches('/'), name.escape_debug()),
                reason: "a child name must be one non-empty name without `/`",
            });
        }
        Self::new(&format!("{}/{name}", self.0.trim_end_matches('/')))
    }

    /// The key prefix of this path in a v3-style layout: `""` for the root,
    /// `a/b/` for `/a/b`.
    #[must_use]
    pub fn to_prefix(&self) -> StorePrefix {
        if self.is_root() {
            return StorePrefix::root();
        }
        // Names were validated in `new`, so the prefix is always valid.
        StorePrefix::new(format!("{}/", &self.0[1..])).unwrap_or_else(|_| StorePrefix::root())
    }
}

impl fmt::Display for NodePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for NodePath {
    type Err = NodePathError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::new(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_normalise_slashes() {
        assert_eq!(NodePath::new("a/b").unwrap().as_str(), "/a/b");
        assert_eq!(NodePath::new("/a/b/").unwrap().as_str(), "/a/b");
        assert!(NodePath::new("").unwrap().is_root());
        assert_eq!(NodePath::new("/a/b").unwrap().to_prefix().as_str(), "a/b/");
        assert_eq!(
            NodePath::new("/a/b").unwrap().parent().unwrap().as_str(),
            "/a"
        );
        assert!(NodePath::new("/a").unwrap().parent().unwrap().is_root());
    }

    #[test]
    fn invalid_names_are_rejected() {
        for bad in ["a//b", "/a/../b", "/.", "/__x", "a/zarr.json", "a\\b"] {
            assert!(NodePath::new(bad).is_err(), "{bad}");
        }
    }
}
