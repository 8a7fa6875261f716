//! `zarrkit create` and `zarrkit create-group`: a new array or group, with
//! the parent groups it needs, in a store that may not exist yet.

use super::layout::{DataTypeArg, LayoutArgs, parse_attributes, parse_data_type, parse_shape};
use super::{open_store, open_url, url_of, zip_archive};
use anyhow::{Context, bail};
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zarrkit::format::ZarrFormat;
use zarrkit::metadata::{JsonMap, NodeMetadata};
use zarrkit::store::{FilesystemStore, MemoryStore, Store};
use zarrkit::{Array, ArrayBuilder, Group, NodeKind, NodePath};

/// The text after the options in `create --help`.
pub const AFTER_LONG_HELP: &str = "\
Examples:
  zarrkit create data.zarr /temperature --shape 365,720,1440 --dtype float32 \\
      --chunks 1,720,1440 --dimension-names time,lat,lon --fill-value NaN
  zarrkit create data.zarr /image --shape 4096,4096 --dtype uint16 \\
      --chunks 256,256 --shards 2048,2048 --compressor blosc:lz4:5:bitshuffle
  zarrkit create --format v2 old.zarr /counts --shape 1000 --dtype '<i8' --compressor zlib:5
  zarrkit create data.zarr /labels --shape 100 --dtype string --json
  zarrkit create s3://bucket/data.zarr /a --shape 10,10 --dtype f8 --overwrite

STORE is the store's root: a directory (created if it does not exist), a \
URL, or a new zip archive (`new.zip`: zip archives are written once, \
whole, so create into an archive that does not exist yet). NODE is the \
array's path in it (`/` for the root). Missing parent groups are created, \
as zarr-python does; a parent that is an array is an error.

The data type is a v3 name (`bool`, `int8`…`uint64`, `float16`, \
`float32`, `float64`, `complex64`, `complex128`, `string`, `bytes`, \
`r<bits>`, `bfloat16`, …) or a NumPy type string, the byte order optional \
(`<u2`, `>f8`, `|S10`, `<U5`, `M8[ns]`). A big-endian type (`>f8`) is \
stored big-endian.

Without --format, the format is that of the store's root node, or v3 for \
a new store; a node of another format than the root's is refused. \
Without --overwrite, a node already at NODE is an error and nothing is \
written; the array's document is created only if absent (atomically where \
the store can), so of two runs creating one array exactly one succeeds. \
--overwrite first erases what is at NODE, with everything below it.

--json prints what was written as one object: store, path, node_type \
(`array`), format, created_groups (the parent groups created, root \
first), and metadata: the node's document (for v2 and v1, an object of \
each document under its key: `.zarray` and `.zattrs`; `meta` and `attrs`).

";

/// The text after the options in `create-group --help`.
pub const GROUP_AFTER_LONG_HELP: &str = "\
Examples:
  zarrkit create-group data.zarr /
  zarrkit create-group data.zarr /weather/2024 --attrs '{\"source\": \"ERA5\"}'
  zarrkit create-group --format v2 old.zarr /a --json

STORE and NODE as for `create`: missing parent groups are created, the \
format is the store root's unless --format says otherwise, and a node \
already at NODE is an error unless --overwrite (which erases it with \
everything below it). --json prints store, path, node_type (`group`), \
format, created_groups and metadata as `create --json` does.";

/// Arguments of `zarrkit create`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The store: a directory (created if missing), a URL, or a new zip archive
    #[arg(value_name = "STORE")]
    pub store: PathBuf,

    /// The new array's path in the store, such as `/temperature` (`/` for the root)
    #[arg(value_name = "NODE")]
    pub node: String,

    /// The array's shape, comma-separated (`365,720,1440`; `()` for 0-d)
    #[arg(long, value_name = "N,N,…", value_parser = parse_shape, allow_hyphen_values = true)]
    pub shape: ::std::vec::Vec<u64>,

    /// The data type: a v3 name (`uint16`, `float32`, `string`) or a NumPy
    /// type string (`<u2`, `>f8`, `|S10`, `<U5`, `M8[ns]`)
    #[arg(long, value_name = "TYPE", value_parser = parse_data_type)]
    pub dtype: DataTypeArg,

    #[command(flatten)]
    pub layout: LayoutArgs,

    /// Replace a node already at NODE (erasing it and everything below it)
    #[arg(long)]
    pub overwrite: bool,

    /// Print what was written as JSON (described below)
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `zarrkit create-group`.
#[derive(Debug, Args)]
pub struct CreateGroupArgs {
    /// The store: a directory (created if missing), a URL, or a new zip archive
    #[arg(value_name = "STORE")]
    pub store: PathBuf,

    /// The new group's path in the store, such as `/weather` (`/` for the root)
    #[arg(value_name = "NODE")]
    pub node: String,

    /// The user attributes: a JSON object, or @FILE to read it from a file
    #[arg(long, value_name = "JSON|@FILE", value_parser = parse_attributes)]
    pub attrs: Option<JsonMap>,

    /// The format to write (default: the store root's, or v3)
    #[arg(long, value_name = "FORMAT", value_parser = super::migrate::FormatParser)]
    pub format: Option<ZarrFormat>,

    /// Replace a node already at NODE (erasing it and everything below it)
    #[arg(long)]
    pub overwrite: bool,

    /// Print what was written as JSON (described below)
    #[arg(long)]
    pub json: bool,
}

/// A store opened to create a node in, and what it already holds.
pub struct Target {
    /// The store as given, for messages.
    pub name: String,
    /// The store, when it exists already (a new directory or zip archive is
    /// only created by [`Target::open_for_writing`]).
    existing: Option<Arc<dyn Store>>,
    /// How to open it for writing.
    kind: TargetKind,
    /// The node to create.
    pub path: NodePath,
}

enum TargetKind {
    Directory(PathBuf),
    Url(String),
    Zip(String),
}

impl Target {
    /// Looks at `store` (without creating anything) and checks `node`.
    ///
    /// # Errors
    /// If the node path is invalid, the store is a zip archive that
    /// exists (archives are written once), a path inside one, a file, or
    /// cannot be opened.
    pub fn new(store: &Path, node: &str) -> anyhow::Result<Self> {
        let name = store.display().to_string();
        let path = NodePath::new(node).with_context(|| format!("invalid node path `{node}`"))?;
        if let Some((archive, rest)) = zip_archive(store) {
            if !rest.is_empty() {
                bail!(
                    "`{name}` lies inside the zip archive `{}`: give the archive as STORE and the path as NODE",
                    archive.display()
                );
            }
            if url_of(store).is_none() && store.exists() {
                bail!(
                    "the zip archive `{name}` exists: zip archives are written once, whole; \
                     create into a new archive (or into a directory and zip it afterwards)"
                );
            }
            let location = store
                .to_str()
                .context("a zip archive's path must be UTF-8")?;
            return Ok(Self {
                name,
                existing: None,
                kind: TargetKind::Zip(location.to_string()),
                path,
            });
        }
        if let Some(url) = url_of(store) {
            let opened = open_url(url)?;
            zarrkit::migrate::check_finished(opened.as_ref())
                .with_context(|| format!("cannot open store `{url}`"))?;
            return Ok(Self {
                name,
                existing: Some(opened),
                kind: TargetKind::Url(url.to_string()),
                path,
            });
        }
        let existing = match std::fs::metadata(store) {
            Ok(m) if m.is_dir() => Some(open_store(store)?),
            Ok(_) => bail!("store `{name}` is not a directory"),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).with_context(|| format!("cannot open store `{name}`")),
        };
        Ok(Self {
            name,
            existing,
            kind: TargetKind::Directory(store.to_path_buf()),
            path,
        })
    }

    /// Whether the store is a new zip archive (written whole by
    /// [`Target::finish`]).
    #[must_use]
    pub fn is_zip(&self) -> bool {
        matches!(self.kind, TargetKind::Zip(_))
    }

    /// The format of the store's root node, if it has one.
    ///
    /// # Errors
    /// A store error, or an invalid root document.
    pub fn root_format(&self) -> anyhow::Result<Option<ZarrFormat>> {
        let Some(store) = &self.existing else {
            return Ok(None);
        };
        Ok(zarrkit::node::exists(store.as_ref(), "/")
            .with_context(|| format!("cannot read the root of `{}`", self.name))?
            .map(|(format, _)| format))
    }

    /// Chooses the format: `asked`, or the root's, or v3; refuses a format
    /// other than the root's, and a v1 node anywhere but the root.
    ///
    /// # Errors
    /// If the format does not fit the store or the path.
    pub fn choose_format(&self, asked: Option<ZarrFormat>) -> anyhow::Result<ZarrFormat> {
        let root = self.root_format()?;
        let format = asked.or(root).unwrap_or(ZarrFormat::V3);
        if let Some(root) = root {
            if root != format {
                bail!(
                    "the root of `{}` is {root}: a {format} node inside it would be a second \
                     format in one hierarchy; use --format {root} (or another store)",
                    self.name
                );
            }
        }
        if !format.has_groups() && !self.path.is_root() {
            bail!(
                "{format} has no groups (a {format} store is one array): create the array at `/`, not `{}`",
                self.path
            );
        }
        Ok(format)
    }

    /// Checks that nothing is at the node (unless `overwrite`) and that no
    /// parent is an array; returns the parents to create, root first.
    ///
    /// # Errors
    /// If a node is there without `overwrite`, or a parent is an array.
    pub fn check(&self, overwrite: bool) -> anyhow::Result<(Option<NodeKind>, Vec<NodePath>)> {
        let parents = ancestors(&self.path);
        let Some(store) = &self.existing else {
            return Ok((None, parents));
        };
        let exists = |path: &NodePath| {
            zarrkit::node::exists(store.as_ref(), path.as_str())
                .with_context(|| format!("cannot look for `{path}` in `{}`", self.name))
        };
        let mut missing = Vec::new();
        for parent in parents {
            match exists(&parent)? {
                Some((_, NodeKind::Array)) => bail!(
                    "cannot create `{}` in `{}`: its parent `{parent}` is an array",
                    self.path,
                    self.name
                ),
                Some((_, NodeKind::Group)) => {}
                None => missing.push(parent),
            }
        }
        let found = exists(&self.path)?.map(|(_, kind)| kind);
        if let (Some(kind), false) = (found, overwrite) {
            bail!(
                "{} already exists at `{}` in `{}` (--overwrite replaces it with everything below it)",
                kind_name(kind),
                self.path,
                self.name
            );
        }
        Ok((found, missing))
    }

    /// Opens the store for writing, creating a directory or zip archive.
    ///
    /// # Errors
    /// If it cannot be created.
    pub fn open_for_writing(&self) -> anyhow::Result<Arc<dyn Store>> {
        if let Some(store) = &self.existing {
            return Ok(Arc::clone(store));
        }
        match &self.kind {
            TargetKind::Directory(root) => {
                Ok(Arc::new(FilesystemStore::new(root).with_context(|| {
                    format!("cannot create the store `{}`", root.display())
                })?))
            }
            TargetKind::Zip(location) => {
                zarrkit::store::open_or_create(location, &super::store_options())
                    .with_context(|| format!("cannot create the zip archive `{location}`"))
            }
            TargetKind::Url(url) => open_url(url),
        }
    }

    /// Creates the `parents` as groups of `format` and, with `replace`,
    /// erases what is at the node, in `store`.
    ///
    /// # Errors
    /// A store error, naming the node.
    pub fn prepare(
        &self,
        store: &Arc<dyn Store>,
        format: ZarrFormat,
        parents: &[NodePath],
        replace: bool,
    ) -> anyhow::Result<()> {
        for parent in parents {
            create_group(store, parent, format, JsonMap::new()).with_context(|| {
                format!("cannot create the group `{parent}` in `{}`", self.name)
            })?;
        }
        if replace {
            zarrkit::node::erase(store.as_ref(), self.path.as_str()).with_context(|| {
                format!(
                    "cannot erase `{}` in `{}` to replace it",
                    self.path, self.name
                )
            })?;
        }
        Ok(())
    }

    /// Writes out a zip archive (other stores wrote through).
    ///
    /// # Errors
    /// If the archive cannot be written.
    pub fn finish(&self, store: &Arc<dyn Store>) -> anyhow::Result<()> {
        store
            .finish()
            .with_context(|| format!("cannot finish `{}`", self.name))
    }
}

/// Creates a group, where `Group::create_as` is the library's one way.
fn create_group(
    store: &Arc<dyn Store>,
    path: &NodePath,
    format: ZarrFormat,
    attributes: JsonMap,
) -> Result<Group, zarrkit::Error> {
    Group::create_as(Arc::clone(store), path.as_str(), format, attributes)
}

/// The parents of `path`, root first.
fn ancestors(path: &NodePath) -> Vec<NodePath> {
    let mut parents = Vec::new();
    let mut current = path.clone();
    while let Some(parent) = current.parent() {
        parents.push(parent.clone());
        current = parent;
    }
    parents.reverse();
    parents
}

fn kind_name(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Array => "an array",
        NodeKind::Group => "a group",
    }
}

/// The builder of the array `args` describes, in `format`.
///
/// # Errors
/// If the layout options do not fit the shape and data type.
pub fn array_builder(
    layout: &LayoutArgs,
    format: ZarrFormat,
    shape: &[u64],
    dtype: &DataTypeArg,
) -> anyhow::Result<ArrayBuilder> {
    let resolved = layout.layout(format, shape, &dtype.data_type, dtype.big_endian, None)?;
    Ok(resolved.builder(shape, dtype.data_type.clone()))
}

/// Checks everything about a new array that does not need the store, by
/// creating it in memory: the codecs, the format's limits.
///
/// # Errors
/// The library's error, naming the node.
pub fn check_builder(builder: &ArrayBuilder, path: &NodePath) -> anyhow::Result<()> {
    builder
        .create(Arc::new(MemoryStore::new()), path.as_str())
        .map(drop)
        .with_context(|| format!("cannot create the array `{path}`"))
}

/// Creates the array of `builder` at the target's node: checks, parents,
/// replacement, the conditional create. Returns the array and the parent
/// groups created.
///
/// # Errors
/// As [`Target::check`], or a store error.
pub fn create_array(
    target: &Target,
    builder: &ArrayBuilder,
    format: ZarrFormat,
    overwrite: bool,
) -> anyhow::Result<(Array, Vec<NodePath>, Arc<dyn Store>)> {
    check_builder(builder, &target.path)?;
    let (found, parents) = target.check(overwrite)?;
    let store = target.open_for_writing()?;
    target.prepare(&store, format, &parents, found.is_some())?;
    let array = builder
        .clone()
        .overwrite(false)
        .create(Arc::clone(&store), target.path.as_str())
        .with_context(|| {
            format!(
                "cannot create the array `{}` in `{}`",
                target.path, target.name
            )
        })?;
    Ok((array, parents, store))
}

/// What a run created, as `--json` prints it (see [`AFTER_LONG_HELP`])
/// or as lines.
pub struct Report<'a> {
    /// Where.
    pub target: &'a Target,
    /// In which format.
    pub format: ZarrFormat,
    /// The parent groups created, root first.
    pub parents: &'a [NodePath],
}

impl<'a> Report<'a> {
    /// What was created at `target`'s node in `format`, with `parents`.
    #[must_use]
    pub fn new(target: &'a Target, format: ZarrFormat, parents: &'a [NodePath]) -> Self {
        Self {
            target,
            format,
            parents,
        }
    }

    /// Prints the JSON object of the node's `metadata`, with the `extra` members after the others,
    /// or a line per parent group created and then `line`.
    ///
    /// # Errors
    /// If the document cannot be written in the format, or writing to
    /// `out` fails.
    pub fn print(
        &self,
        out: &mut impl Write,
        json: bool,
        metadata: &NodeMetadata,
        extra: &[(&str, serde_json::Value)],
        line: &str,
    ) -> anyhow::Result<()> {
        let target = self.target;
        if json {
            let document = zarrkit::format::node_document(self.format, metadata)
                .with_context(|| format!("cannot show the document of `{}`", target.path))?;
            let mut json = serde_json::json!({
                "store": target.name,
                "path": target.path.as_str(),
                "node_type": match metadata {
                    NodeMetadata::Array(_) => "array",
                    NodeMetadata::Group(_) => "group",
                },
                "format": self.format.name(),
                "created_groups": self.parents.iter().map(NodePath::as_str).collect::<Vec<_>>(),
                "metadata": document,
            });
            if let Some(object) = json.as_object_mut() {
                for (key, value) in extra {
                    object.insert((*key).to_string(), value.clone());
                }
            }
            writeln!(out, "{}", serde_json::to_string_pretty(&json)?)?;
            return Ok(());
        }
        for parent in self.parents {
            writeln!(out, "created group `{parent}` in `{}`", target.name)?;
        }
        writeln!(out, "{line}")?;
        Ok(())
    }
}

/// A one-line summary of an array.
pub fn describe_array(array: &Array) -> String {
    let mut text = format!(
        "shape {}, data type {}, chunks {}",
        super::format_shape(array.shape()),
        array.data_type(),
        super::format_shape(array.chunk_shape()),
    );
    if let Some(inner) = array.inner_chunk_shape() {
        text.push_str(&format!(" (inner chunks {})", super::format_shape(&inner)));
    }
    let codecs: Vec<String> = array
        .metadata()
        .codecs
        .iter()
        .map(|c| c.name.clone())
        .collect();
    text.push_str(&format!(", codecs [{}]", codecs.join(", ")));
    text
}

/// Runs `zarrkit create`.
///
/// # Errors
/// If the options do not fit together, a node is already there (without
/// --overwrite), a parent is an array, or writing fails.
pub fn run(args: &CreateArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let target = Target::new(&args.store, &args.node)?;
    let format = target.choose_format(args.layout.format)?;
    let builder = array_builder(&args.layout, format, &args.shape, &args.dtype)?;
    let (array, parents, store) = create_array(&target, &builder, format, args.overwrite)?;
    target.finish(&store)?;
    let line = format!(
        "created array `{}` in `{}` ({format}): {}",
        target.path,
        target.name,
        describe_array(&array)
    );
    let metadata = NodeMetadata::Array(array.metadata().clone());
    Report::new(&target, format, &parents).print(out, args.json, &metadata, &[], &line)
}

/// Runs `zarrkit create-group`.
///
/// # Errors
/// If a node is already there (without --overwrite), a parent is an
/// array, the format has no groups, or writing fails.
pub fn run_group(args: &CreateGroupArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let target = Target::new(&args.store, &args.node)?;
    let format = target.choose_format(args.format)?;
    if !format.has_groups() {
        bail!("{format} has no groups (a {format} store is one array)");
    }
    let (found, parents) = target.check(args.overwrite)?;
    let store = target.open_for_writing()?;
    target.prepare(&store, format, &parents, found.is_some())?;
    let attributes = args.attrs.clone().unwrap_or_default();
    let group = create_group(&store, &target.path, format, attributes).with_context(|| {
        format!(
            "cannot create the group `{}` in `{}`",
            target.path, target.name
        )
    })?;
    target.finish(&store)?;
    let line = format!(
        "created group `{}` in `{}` ({format})",
        target.path, target.name
    );
    let metadata = NodeMetadata::Group(group.metadata().clone());
    Report::new(&target, format, &parents).print(out, args.json, &metadata, &[], &line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ancestors_run_from_the_root_down() {
        let path = NodePath::new("/a/b/c").unwrap();
        let names: Vec<String> = ancestors(&path).iter().map(ToString::to_string).collect();
        assert_eq!(names, ["/", "/a", "/a/b"]);
        assert!(ancestors(&NodePath::root()).is_empty());
    }

    #[test]
    fn a_zip_archive_that_exists_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let zip = dir.path().join("x.zip");
        std::fs::write(&zip, b"PK").unwrap();
        let err = Target::new(&zip, "/a").err().unwrap().to_string();
        assert!(err.contains("written once"), "{err}");
        let err = Target::new(&zip.join("inner"), "/a")
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("lies inside the zip archive"), "{err}");
        let err = Target::new(dir.path(), "a//b").err().unwrap().to_string();
        assert!(err.contains("invalid node path `a//b`"), "{err}");
    }
}
