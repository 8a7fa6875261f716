//! Extension objects: `{"name": ..., "configuration": {...}, "must_understand": ...}`.

use super::JsonMap;

/// An extension point's value: a name, an optional configuration, and
/// whether an implementation that does not know it must refuse the node.
///
/// v3 core, "Extension definition": the short-hand form `"name"` is the same
/// as `{"name": "name"}`, and `must_understand` defaults to `true`.
#[derive(Clone, Debug, PartialEq)]
pub struct ExtensionObject {
    /// The registered name, such as `gzip`.
    pub name: String,
    /// The `configuration` object, if present.
    pub configuration: Option<JsonMap>,
    /// `false` only when the document says `"must_understand": false`.
    pub must_understand: bool,
}

impl ExtensionObject {
    /// An extension with a name and no configuration.
    #[must_use]
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            configuration: None,
            must_understand: true,
        }
    }

    /// An extension with a name and a configuration object.
    #[must_use]
    pub fn with_configuration(name: impl Into<String>, configuration: JsonMap) -> Self {
        Self {
            name: name.into(),
            configuration: Some(configuration),
            must_understand: true,
        }
    }

    /// The configuration, or an empty object when there is none.
    #[must_use]
    pub fn configuration_or_empty(&self) -> JsonMap {
        self.configuration.clone().unwrap_or_default()
    }
}
