//! Consolidated metadata: every node document of a hierarchy gathered into
//! one place, so that opening the hierarchy costs one read.
//!
//! - Zarr v2: the key `.zmetadata` next to the root group's `.zgroup`, as
//!   zarr-python 2.x writes it: `{"zarr_consolidated_format": 1, "metadata":
//!   {".zgroup": …, ".zattrs": …, "a/.zarray": …, "a/.zattrs": …}}`, each
//!   value the JSON document stored under that key (relative to the group).
//! - Zarr v3: the field `consolidated_metadata` of the root group's
//!   `zarr.json`, as zarr-python 3.1 writes it: `{"kind": "inline",
//!   "must_understand": false, "metadata": {"a": <a/zarr.json>, "a/b": …}}`,
//!   flat, keyed by the path relative to the group; nested groups' entries
//!   carry an empty `consolidated_metadata` of their own, as zarr-python's do.
//!   zarrkit keeps the field in the group's
//!   [`extra_fields`](crate::metadata::GroupMetadata::extra_fields), so any
//!   rewrite of the root document keeps it.
//! - zarr-python 2.x's experimental v3 (`v3-draft-2019-json`): the key
//!   `meta/root/consolidated/.zmetadata` (in a group `consolidated` created
//!   for it), as zarr-python 2.18's `consolidate_metadata` writes it:
//!   `{"zarr_consolidated_format": 1, "metadata": {"zarr.json": …,
//!   "meta/root.group.json": …, "meta/root/a.array.json": …}}`, keyed by
//!   store key, for the whole store (so only at the root). Implicit groups
//!   have no entry; the view infers them.
//!
//! Consolidated metadata is a cache: [`check`] compares it with the
//! documents it summarises, and [`crate::Group::open_node_checked`] falls
//! back to the real documents, with a warning, when they disagree.

use crate::Error;
use crate::format::{self, ZarrFormat, v2, v3, v3_draft2019};
use crate::metadata::NodePath;
use crate::metadata::{JsonMap, MetadataError, NodeMetadata};
use crate::store::{Store, StoreKey, StorePrefix};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

/// The v2 key of consolidated metadata, next to the group's `.zgroup`.
pub const V2_KEY: &str = ".zmetadata";

/// The v3 group document field holding consolidated metadata.
pub const V3_FIELD: &str = "consolidated_metadata";

/// What [`consolidate`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsolidateReport {
    /// The format of the hierarchy.
    pub format: ZarrFormat,
    /// The key written: `.zmetadata` (v2) or the root `zarr.json` (v3).
    pub key: StoreKey,
    /// How many entries the consolidated metadata holds (v2: documents,
    /// v3: nodes below the root).
    pub entries: usize,
}

/// How consolidated metadata disagrees with a real document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MismatchKind {
    /// A real document that the consolidated metadata lacks.
    Missing,
    /// A consolidated entry with no real document.
    Extra,
    /// A consolidated entry that differs from the real document.
    Differs,
}

/// One disagreement found by [`check`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// What kind of disagreement.
    pub kind: MismatchKind,
    /// The entry's key in the consolidated metadata (v2 `a/.zarray`, v3 `a`).
    pub key: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            MismatchKind::Missing => write!(
                f,
                "`{}` exists but is missing from the consolidated metadata",
                self.key
            ),
            MismatchKind::Extra => write!(
                f,
                "`{}` is in the consolidated metadata but does not exist",
                self.key
            ),
            MismatchKind::Differs => write!(
                f,
                "`{}` in the consolidated metadata differs from the real document",
                self.key
            ),
        }
    }
}

/// Gathers the documents of every node below the group at `path` (the
/// root group of a hierarchy, usually `/`) into consolidated metadata and
/// writes it: `.zmetadata` for v2, the `consolidated_metadata` field of the
/// group's `zarr.json` for v3 (keeping every other field).
///
/// # Errors
/// [`Error::NodeNotFound`] or [`Error::WrongNodeKind`] if `path` is not a
/// group, [`Error::InvalidMetadata`] if its format is neither v2 nor v3,
/// [`Error::Metadata`] naming a document that is not valid JSON, or a store
/// error.
pub fn consolidate(store: &dyn Store, path: &str) -> Result<ConsolidateReport, Error> {
    let path = NodePath::new(path)?;
    let (format, consolidation, root) = open_root(store, &path)?;
    consolidation.write(store, &path, format, root)
}

/// Compares the consolidated metadata of the group at `path` with the
/// documents it summarises. An empty list means they agree. A hierarchy
/// without consolidated metadata has every document [`MismatchKind::Missing`].
///
/// # Errors
/// As [`consolidate`], and [`Error::Metadata`] if the consolidated metadata
/// itself is not valid.
pub fn check(store: &dyn Store, path: &str) -> Result<Vec<Mismatch>, Error> {
    let path = NodePath::new(path)?;
    let (format, consolidation, root) = open_root(store, &path)?;
    let real = consolidation.real_entries(store, &path, format)?;
    let consolidated = consolidation.stored_entries(store, &path, format, &root)?;
    let mut mismatches = Vec::new();
    for (key, value) in &real {
        match consolidated.get(key) {
            None => mismatches.push(Mismatch {
                kind: MismatchKind::Missing,
                key: key.clone(),
            }),
            Some(entry) if comparable(entry) != comparable(value) => mismatches.push(Mismatch {
                kind: MismatchKind::Differs,
                key: key.clone(),
            }),
            Some(_) => {}
        }
    }
    for key in consolidated.keys() {
        if !real.contains_key(key) {
            mismatches.push(Mismatch {
                kind: MismatchKind::Extra,
                key: key.clone(),
            });
        }
    }
    mismatches.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(mismatches)
}

// `open_root` only returns groups; this keeps the match total without a panic.
fn unreachable_group(path: &NodePath) -> Result<std::convert::Infallible, Error> {
    Err(Error::WrongNodeKind {
        path: path.clone(),
        expected: crate::NodeKind::Group,
        found: crate::NodeKind::Array,
    })
}

/// The v3 field value for `metadata`.
fn inline_field(metadata: JsonMap) -> Value {
    let mut field = JsonMap::new();
    field.insert("kind".into(), "inline".into());
    field.insert("must_understand".into(), false.into());
    field.insert("metadata".into(), Value::Object(metadata));
    Value::Object(field)
}

/// A document as compared: a group's own `consolidated_metadata` is left
/// out (zarr-python writes an empty one into nested groups' entries, and
/// the root's is the consolidated metadata itself).
fn comparable(value: &Value) -> Value {
    let mut value = value.clone();
    if let Some(doc) = value.as_object_mut() {
        doc.remove(V3_FIELD);
    }
    value
}

/// The group at `path`, its format and how that format keeps consolidated
/// metadata.
fn open_root(
    store: &dyn Store,
    path: &NodePath,
) -> Result<(ZarrFormat, &'static dyn Consolidation, NodeMetadata), Error> {
    match format::read_node(store, path)? {
        None => Err(Error::NodeNotFound { path: path.clone() }),
        Some((_, NodeMetadata::Array(_))) => Err(Error::WrongNodeKind {
            path: path.clone(),
            expected: crate::NodeKind::Group,
            found: crate::NodeKind::Array,
        }),
        Some((format, group)) => match format::version(format).consolidation() {
            Some(consolidation) if consolidation.at(path) => Ok((format, consolidation, group)),
            _ => Err(Error::InvalidMetadata {
                path: path.clone(),
                source: MetadataError::NotRepresentable {
                    format: format.name(),
                    what: "consolidated metadata (only v2, v3 and zarr-python 2.x's v3 \
                           hierarchies have it, the last only at the root)"
                        .into(),
                },
            }),
        },
    }
}

/// Reads a document as JSON, accepting v2's bare `NaN`/`Infinity` tokens.
fn read_json(store: &dyn Store, key: &StoreKey) -> Result<Option<Value>, Error> {
    let Some(bytes) = store.get(key, None)? else {
        return Ok(None);
    };
    let text = v2::quote_non_finite_tokens(&bytes);
    serde_json::from_slice(&text)
        .map(Some)
        .map_err(|e| Error::Metadata {
            key: key.clone(),
            source: MetadataError::Json(e),
        })
}

/// The name of a v2 node document in `.zmetadata`: its key relative to the
/// consolidated group, `<dir><document>` where `dir` is the node's path
/// relative to the group with a trailing `/` (empty for the group itself),
/// as zarr-python 2.x names them (`a/.zarray`).
fn v2_entry_name(dir: &str, document: &str) -> String {
    format!("{dir}{document}")
}

/// The name, in a v3 group's `consolidated_metadata`, of the entry `entry`
/// of its child group `group`'s own: the path relative to the group
/// (`a` and `b` give `a/b`).
fn v3_entry_name(group: &str, entry: &str) -> String {
    format!("{group}/{entry}")
}

/// `key` relative to `prefix` (a v2 entry name when `prefix` is the
/// consolidated group's).
fn relative_key(prefix: &StorePrefix, key: &StoreKey) -> String {
    key.as_str()
        .strip_prefix(prefix.as_str())
        .unwrap_or(key.as_str())
        .to_string()
}

/// The key of `node` relative to `root`, without a leading `/` (empty for
/// the root itself).
fn relative(root: &NodePath, node: &NodePath) -> String {
    let root = root.as_str().trim_end_matches('/');
    node.as_str()
        .strip_prefix(root)
        .unwrap_or(node.as_str())
        .trim_start_matches('/')
        .to_string()
}

/// Visits the group at `root` and every node below it in `format`, each
/// with its path relative to `root`; `visit` says whether the node is a
/// group whose children to visit too.
fn walk(
    store: &dyn Store,
    root: &NodePath,
    format: ZarrFormat,
    mut visit: impl FnMut(&NodePath, String) -> Result<bool, Error>,
) -> Result<(), Error> {
    let mut pending = vec![root.clone()];
    while let Some(node) = pending.pop() {
        if visit(&node, relative(root, &node))? {
            pending.extend(format::list_children(store, &node, format)?);
        }
    }
    Ok(())
}

/// Writes `entries` as a v2-style `.zmetadata` document under `key`:
/// `{"metadata": {…}, "zarr_consolidated_format": 1}`, as zarr-python 2.x
/// writes it.
fn write_v2_document(
    store: &dyn Store,
    key: StoreKey,
    format: ZarrFormat,
    entries: BTreeMap<String, Value>,
) -> Result<ConsolidateReport, Error> {
    let count = entries.len();
    let mut doc = JsonMap::new();
    doc.insert(
        "metadata".into(),
        Value::Object(entries.into_iter().collect()),
    );
    doc.insert("zarr_consolidated_format".into(), 1.into());
    store.set(&key, &v2::to_bytes(&Value::Object(doc)))?;
    Ok(ConsolidateReport {
        format,
        key,
        entries: count,
    })
}

/// The consolidated entries stored in a v2-style `.zmetadata` document under
/// `key` (empty when there is none).
fn stored_v2_entries(store: &dyn Store, key: StoreKey) -> Result<JsonMap, Error> {
    Ok(match store.get(&key, None)? {
        None => JsonMap::new(),
        Some(bytes) => v2_entries(&bytes).map_err(|source| Error::Metadata { key, source })?,
    })
}

/// The entries of a v2 `.zmetadata` document.
fn v2_entries(bytes: &[u8]) -> Result<JsonMap, MetadataError> {
    let text = v2::quote_non_finite_tokens(bytes);
    let doc: Value = serde_json::from_slice(&text).map_err(MetadataError::Json)?;
    let doc = doc.as_object().ok_or(MetadataError::NotAnObject)?;
    match doc.get("zarr_consolidated_format") {
        Some(Value::Number(n)) if n.as_u64() == Some(1) => {}
        other => {
            return Err(MetadataError::InvalidField {
                field: "zarr_consolidated_format".into(),
                expected: "1".into(),
                found: other.map_or_else(|| "nothing".into(), ToString::to_string),
            });
        }
    }
    match doc.get("metadata") {
        Some(Value::Object(entries)) => Ok(entries.clone()),
        other => Err(MetadataError::InvalidField {
            field: "metadata".into(),
            expected: "an object".into(),
            found: other.map_or_else(|| "nothing".into(), ToString::to_string),
        }),
    }
}

/// The entries of a v3 `consolidated_metadata` field, flattened: entries
/// of nested groups' own consolidated metadata are added under their paths.
fn v3_entries(field: &Value) -> Result<JsonMap, MetadataError> {
    Ok(v3_entry_refs(field)?
        .into_iter()
        .map(|(key, doc)| (key, doc.clone()))
        .collect())
}

/// The entries of v3 `consolidated_metadata` (nested ones flattened), in
/// document order, borrowed: a view of 100,000 nodes is read without a
/// second copy of every document.
fn v3_entry_refs(field: &Value) -> Result<Vec<(String, &Value)>, MetadataError> {
    let invalid = |expected: &str, found: &Value| MetadataError::InvalidField {
        field: V3_FIELD.into(),
        expected: expected.into(),
        found: found.to_string(),
    };
    let fields = field
        .as_object()
        .ok_or_else(|| invalid("an object", field))?;
    match fields.get("kind") {
        Some(Value::String(kind)) if kind == "inline" => {}
        _ => return Err(invalid("`\"kind\": \"inline\"`", field)),
    }
    let entries = match fields.get("metadata") {
        Some(Value::Object(entries)) => entries,
        _ => return Err(invalid("a `metadata` object", field)),
    };
    let mut out: Vec<(String, &Value)> = Vec::with_capacity(entries.len());
    let mut position: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (key, doc) in entries {
        if let Some(nested) = doc.get(V3_FIELD).filter(|v| !v.is_null()) {
            for (sub, subdoc) in v3_entry_refs(nested)? {
                let name = v3_entry_name(key, &sub);
                // A nested entry fills in only what the outer ones lack.
                if !position.contains_key(&name) {
                    position.insert(name.clone(), out.len());
                    out.push((name, subdoc));
                }
            }
        }
        // An outer entry replaces a nested one of the same name, in place.
        match position.get(key) {
            Some(&i) => out[i].1 = doc,
            None => {
                position.insert(key.clone(), out.len());
                out.push((key.clone(), doc));
            }
        }
    }
    Ok(out)
}

/// A parsed consolidated view: every node below a group, by absolute path.
#[derive(Debug, Default)]
pub(crate) struct View {
    pub(crate) format: Option<ZarrFormat>,
    pub(crate) nodes: BTreeMap<NodePath, NodeMetadata>,
    /// Each parent's children, sorted by name, indexed at the first
    /// [`View::children`]: scanning every node for each group's children
    /// made walking a view of N groups O(N²).
    children: std::sync::OnceLock<std::collections::HashMap<NodePath, Vec<NodePath>>>,
}

impl View {
    /// The children of `parent` in the view, sorted by name.
    pub(crate) fn children(&self, parent: &NodePath) -> Vec<(&NodePath, &NodeMetadata)> {
        let index = self.children.get_or_init(|| {
            let mut index: std::collections::HashMap<NodePath, Vec<NodePath>> =
                std::collections::HashMap::new();
            for path in self.nodes.keys() {
                if let Some(parent) = path.parent() {
                    index.entry(parent).or_default().push(path.clone());
                }
            }
            index
        });
        index
            .get(parent)
            .into_iter()
            .flatten()
            .filter_map(|path| self.nodes.get_key_value(path))
            .collect()
    }
}

/// Strips the field that only consolidated views carry, for comparing.
pub(crate) fn without_consolidated(metadata: &NodeMetadata) -> NodeMetadata {
    strip_consolidated(metadata.clone())
}

/// [`without_consolidated`] on a node the caller owns: no copy.
fn strip_consolidated(mut metadata: NodeMetadata) -> NodeMetadata {
    if let NodeMetadata::Group(group) = &mut metadata {
        group.extra_fields.remove(V3_FIELD);
    }
    metadata
}

/// Loads the consolidated view of the group at `path` whose metadata is
/// `group`. `Ok(None)`: there is none. `Err(warning)`: there is one, but it
/// is invalid or disagrees with the group's own document.
pub(crate) fn load_view(
    store: &dyn Store,
    path: &NodePath,
    format: ZarrFormat,
    group: &NodeMetadata,
) -> Result<Option<View>, String> {
    let Some(consolidation) = format::version(format)
        .consolidation()
        .filter(|consolidation| consolidation.at(path))
    else {
        return Ok(None);
    };
    Ok(consolidation
        .view_nodes(store, path, group)?
        .map(|nodes| View {
            format: Some(format),
            nodes,
            children: std::sync::OnceLock::new(),
        }))
}

/// The node at `rel` below `path`, for a view.
fn view_path(path: &NodePath, rel: &str) -> Result<NodePath, String> {
    NodePath::new(&format!("{}/{rel}", path.as_str().trim_end_matches('/')))
        .map_err(|e| format!("consolidated metadata of `{path}` has an invalid key: {e}"))
}

/// How one format keeps consolidated metadata, which
/// [`Version::consolidation`](super::Version::consolidation) gives for the
/// formats that have it (v2, v3, zarr-python 2.x's experimental v3).
pub(crate) trait Consolidation: Sync {
    /// Whether the group at `path` can have consolidated metadata (every
    /// group, unless the format says otherwise).
    fn at(&self, _path: &NodePath) -> bool {
        true
    }

    /// Gathers and writes the consolidated metadata of the group at `path`,
    /// whose metadata is `root`.
    fn write(
        &self,
        store: &dyn Store,
        path: &NodePath,
        format: ZarrFormat,
        root: NodeMetadata,
    ) -> Result<ConsolidateReport, Error>;

    /// The real documents that consolidated metadata of the group at `path`
    /// summarises, keyed as it keys them.
    fn real_entries(
        &self,
        store: &dyn Store,
        path: &NodePath,
        format: ZarrFormat,
    ) -> Result<BTreeMap<String, Value>, Error>;

    /// The entries of the stored consolidated metadata of the group at
    /// `path`, whose metadata is `root` (empty when there is none).
    fn stored_entries(
        &self,
        store: &dyn Store,
        path: &NodePath,
        format: ZarrFormat,
        root: &NodeMetadata,
    ) -> Result<JsonMap, Error>;

    /// The nodes of the consolidated view of the group at `path`, whose
    /// metadata is `group`, by absolute path. `Ok(None)`: there is none.
    /// `Err(warning)`: there is one, but it is invalid or disagrees with the
    /// group's own document.
    fn view_nodes(
        &self,
        store: &dyn Store,
        path: &NodePath,
        group: &NodeMetadata,
    ) -> Result<Option<BTreeMap<NodePath, NodeMetadata>>, String>;
}

/// v2: `.zmetadata` beside the group's `.zgroup`.
pub(crate) struct V2Consolidation;

impl Consolidation for V2Consolidation {
    fn write(
        &self,
        store: &dyn Store,
        path: &NodePath,
        format: ZarrFormat,
        _root: NodeMetadata,
    ) -> Result<ConsolidateReport, Error> {
        let entries = self.real_entries(store, path, format)?;
        write_v2_document(store, v2::node_key(path, V2_KEY)?, format, entries)
    }

    /// The documents of the group and of every node below it.
    fn real_entries(
        &self,
        store: &dyn Store,
        path: &NodePath,
        format: ZarrFormat,
    ) -> Result<BTreeMap<String, Value>, Error> {
        let mut out = BTreeMap::new();
        let root_prefix = format::node_prefix(format, path);
        walk(store, path, format, |node, _| {
            let (mut is_group, mut is_array) = (false, false);
            for name in [v2::ARRAY_KEY, v2::GROUP_KEY, v2::ATTRIBUTES_KEY] {
                let key = v2::node_key(node, name)?;
                if let Some(doc) = read_json(store, &key)? {
                    is_group |= name == v2::GROUP_KEY;
                    is_array |= name == v2::ARRAY_KEY;
                    out.insert(relative_key(&root_prefix, &key), doc);
                }
            }
            // zarr-python 2: a node with both documents is the array.
            Ok(is_group && !is_array)
        })?;
        Ok(out)
    }

    fn stored_entries(
        &self,
        store: &dyn Store,
        path: &NodePath,
        _format: ZarrFormat,
        _root: &NodeMetadata,
    ) -> Result<JsonMap, Error> {
        stored_v2_entries(store, v2::node_key(path, V2_KEY)?)
    }

    fn view_nodes(
        &self,
        store: &dyn Store,
        path: &NodePath,
        group: &NodeMetadata,
    ) -> Result<Option<BTreeMap<NodePath, NodeMetadata>>, String> {
        let key = v2::node_key(path, V2_KEY)
            .map_err(|e| format!("cannot form the key of `{path}`'s `{V2_KEY}`: {e}"))?;
        let bytes = match store.get(&key, None) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(None),
            Err(e) => return Err(format!("cannot read `{key}`: {e}")),
        };
        let entries = v2_entries(&bytes).map_err(|e| format!("`{key}` is invalid: {e}"))?;
        let mut nodes = BTreeMap::new();
        for (entry, doc) in &entries {
            let (rel, is_array) = if let Some(rel) = entry.strip_suffix(v2::ARRAY_KEY) {
                (rel, true)
            } else if let Some(rel) = entry.strip_suffix(v2::GROUP_KEY) {
                if entries.contains_key(&v2_entry_name(rel, v2::ARRAY_KEY)) {
                    continue;
                }
                (rel, false)
            } else {
                continue;
            };
            let attributes_entry = v2_entry_name(rel, v2::ATTRIBUTES_KEY);
            let attributes = match entries.get(&attributes_entry) {
                None => None,
                Some(attrs) => Some(
                    v2::parse_attributes(&serde_json::to_vec(attrs).unwrap_or_default()).map_err(
                        |e| format!("`{key}` entry `{attributes_entry}` is invalid: {e}"),
                    )?,
                ),
            };
            let doc_bytes = serde_json::to_vec(doc).unwrap_or_default();
            let metadata = if is_array {
                v2::parse_array(&doc_bytes, attributes).map(NodeMetadata::Array)
            } else {
                v2::parse_group(&doc_bytes, attributes).map(NodeMetadata::Group)
            }
            .map_err(|e| format!("`{key}` entry `{entry}` is invalid: {e}"))?;
            let rel = rel.trim_end_matches('/');
            if rel.is_empty() {
                // The group's own document was just read: they must agree.
                if without_consolidated(&metadata) != without_consolidated(group) {
                    return Err(format!(
                        "`{key}` disagrees with the documents of `{path}` itself; \
                         reading the real documents"
                    ));
                }
                continue;
            }
            nodes.insert(view_path(path, rel)?, metadata);
        }
        Ok(Some(nodes))
    }
}

/// v3: the `consolidated_metadata` field of the group's `zarr.json`.
pub(crate) struct V3Consolidation;

impl Consolidation for V3Consolidation {
    fn write(
        &self,
        store: &dyn Store,
        path: &NodePath,
        format: ZarrFormat,
        root: NodeMetadata,
    ) -> Result<ConsolidateReport, Error> {
        let entries = self.real_entries(store, path, format)?;
        let count = entries.len();
        let NodeMetadata::Group(mut group) = root else {
            match unreachable_group(path)? {}
        };
        group
            .extra_fields
            .insert(V3_FIELD.into(), inline_field(entries.into_iter().collect()));
        format::write_node(store, path, format, &NodeMetadata::Group(group))?;
        Ok(ConsolidateReport {
            format,
            key: format::metadata_key(format, path)?,
            entries: count,
        })
    }

    /// The documents of every node below the group, by relative path.
    fn real_entries(
        &self,
        store: &dyn Store,
        path: &NodePath,
        format: ZarrFormat,
    ) -> Result<BTreeMap<String, Value>, Error> {
        let mut out = BTreeMap::new();
        walk(store, path, format, |node, rel| {
            let key = format::metadata_key(format, node)?;
            let Some(mut doc) = read_json(store, &key)? else {
                return Ok(false);
            };
            let is_group = doc.get("node_type").and_then(Value::as_str) == Some("group");
            if !rel.is_empty() {
                if let Some(fields) = doc.as_object_mut() {
                    if is_group {
                        fields.insert(V3_FIELD.into(), inline_field(JsonMap::new()));
                    } else {
                        fields.remove(V3_FIELD);
                    }
                }
                out.insert(rel, doc);
            }
            Ok(is_group)
        })?;
        Ok(out)
    }

    fn stored_entries(
        &self,
        _store: &dyn Store,
        path: &NodePath,
        format: ZarrFormat,
        root: &NodeMetadata,
    ) -> Result<JsonMap, Error> {
        let NodeMetadata::Group(group) = root else {
            match unreachable_group(path)? {}
        };
        Ok(match group.extra_fields.get(V3_FIELD) {
            None => JsonMap::new(),
            Some(field) => {
                let key = format::metadata_key(format, path)?;
                v3_entries(field).map_err(|source| Error::Metadata { key, source })?
            }
        })
    }

    fn view_nodes(
        &self,
        _store: &dyn Store,
        path: &NodePath,
        group: &NodeMetadata,
    ) -> Result<Option<BTreeMap<NodePath, NodeMetadata>>, String> {
        let NodeMetadata::Group(group) = group else {
            return Ok(None);
        };
        let Some(field) = group.extra_fields.get(V3_FIELD) else {
            return Ok(None);
        };
        let entries = v3_entry_refs(field)
            .map_err(|e| format!("the consolidated metadata of `{path}` is invalid: {e}"))?;
        if entries.is_empty() {
            // zarr-python's empty marker on nested groups: no view.
            return Ok(None);
        }
        let mut nodes = BTreeMap::new();
        for (rel, doc) in &entries {
            let metadata = v3::node_from_json(doc).map_err(|e| {
                format!("consolidated metadata of `{path}`, entry `{rel}`, is invalid: {e}")
            })?;
            nodes.insert(view_path(path, rel)?, strip_consolidated(metadata));
        }
        Ok(Some(nodes))
    }
}

/// zarr-python 2.x's experimental v3: `.zmetadata` in a group
/// `consolidated` of its own, for the whole store, so only at the root.
pub(crate) struct ZarrPythonConsolidation;

impl Consolidation for ZarrPythonConsolidation {
    fn at(&self, path: &NodePath) -> bool {
        path.is_root()
    }

    /// Creates the group `consolidated` first as zarr-python does (its
    /// document is then among the entries).
    fn write(
        &self,
        store: &dyn Store,
        path: &NodePath,
        format: ZarrFormat,
        _root: NodeMetadata,
    ) -> Result<ConsolidateReport, Error> {
        let holder = NodePath::new(v3_draft2019::CONSOLIDATED_GROUP)?;
        if format::read_node_as(store, &holder, format)?.is_none() {
            format::write_node(
                store,
                &holder,
                format,
                &NodeMetadata::Group(crate::metadata::GroupMetadata::default()),
            )?;
        }
        let entries = self.real_entries(store, path, format)?;
        write_v2_document(store, v3_draft2019::consolidated_key()?, format, entries)
    }

    fn real_entries(
        &self,
        store: &dyn Store,
        _path: &NodePath,
        _format: ZarrFormat,
    ) -> Result<BTreeMap<String, Value>, Error> {
        v3_draft2019::consolidated_documents(store)
    }

    fn stored_entries(
        &self,
        store: &dyn Store,
        _path: &NodePath,
        _format: ZarrFormat,
        _root: &NodeMetadata,
    ) -> Result<JsonMap, Error> {
        stored_v2_entries(store, v3_draft2019::consolidated_key()?)
    }

    fn view_nodes(
        &self,
        store: &dyn Store,
        path: &NodePath,
        group: &NodeMetadata,
    ) -> Result<Option<BTreeMap<NodePath, NodeMetadata>>, String> {
        let key = v3_draft2019::CONSOLIDATED_KEY;
        let bytes = match v3_draft2019::consolidated_key().map(|k| store.get(&k, None)) {
            Ok(Ok(Some(bytes))) => bytes,
            Ok(Ok(None)) => return Ok(None),
            Ok(Err(e)) => return Err(format!("cannot read `{key}`: {e}")),
            Err(e) => return Err(format!("cannot form the key `{key}`: {e}")),
        };
        let entries = v2_entries(&bytes).map_err(|e| format!("`{key}` is invalid: {e}"))?;
        let mut nodes = v3_draft2019::nodes_from_consolidated(&entries)
            .map_err(|e| format!("`{key}` is invalid: {e}"))?;
        match nodes.remove(path) {
            // The root's own document was just read: they must agree.
            Some(root) if root != *group => {
                return Err(format!(
                    "`{key}` disagrees with the documents of `{path}` itself; \
                     reading the real documents"
                ));
            }
            _ => {}
        }
        Ok(Some(nodes))
    }
}
