//! `zarrkit info`: a readable summary of one array or group.

use super::{
    Location, format_bytes, format_shape, locate, open_located, plural, product,
    warn_stale_consolidated,
};
use anyhow::Context;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use zarrkit::format::{self, v3};
use zarrkit::metadata::{ChunkKeyEncoding, NodeMetadata};
use zarrkit::{Array, Group, Node};

/// Width of the label column in the summary.
const LABEL_WIDTH: usize = 20;

/// The text after the options in `--help`.
pub const AFTER_LONG_HELP: &str = "\
Examples:
  zarrkit info testdata/sample.zarr
  zarrkit info testdata/sample.zarr/weather/temperature
  zarrkit info testdata/sample.zarr --path /weather/temperature
  zarrkit info --json testdata/sample.zarr/weather/temperature | jq .document

For an array the summary shows its shape, data type, chunk shape (for a \
sharded array the shard shape and the inner chunk shape), the chunk \
grid and number of chunks (shards), the chunk key encoding, the fill value (as v3 \
JSON), each codec with its configuration, the dimension names, how many \
chunks (shards) are stored and their total size, the decoded size of the whole \
array (for variable-length elements, their number), and the attributes. For a group it shows the attributes and the children \
with their kinds.

--json prints one object:
  path, format, node_type   the node (`/a/b`, `v3`, `array` or `group`)
  summary                   for an array: shape, data_type, chunk_shape (the
                            grid's chunks: shards when sharded),
                            inner_chunk_shape (null unless sharded),
                            chunk_grid_shape, chunks (in the grid),
                            stored_chunks, stored_bytes, decoded_bytes (null
                            for variable-length elements or past 2^64),
                            storage_ratio (decoded_bytes / stored_bytes, as
                            zarr-python's info reports it; null when either
                            is unknown or 0), fill_value (as `fill value`
                            shows it), codecs (names), dimension_names;
                            for a group: children, each {name, node_type},
                            or {name, error} for one that cannot be opened
                            (the exit status is then 1)
  document                  the metadata document in the node's format
                            (`zarr.json` for v3, the `meta/...` document for
                            a v3 draft; for v2 {\".zarray\" or \".zgroup\",
                            \".zattrs\"}, for v1 {\"meta\", \"attrs\"})";

/// Arguments of `zarrkit info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// A store directory, or a node inside it such as `my.zarr/a/b`
    #[arg(value_name = "STORE[/PATH]")]
    pub target: PathBuf,

    /// The node inside the store (`/` for the root, or `/a/b`); the first
    /// argument is then the store root itself
    #[arg(long, value_name = "NODE")]
    pub path: Option<String>,

    /// Print JSON instead of text: `{"path", "format", "node_type", "summary",
    /// "document"}`, the summary's fields described below and the node's
    /// metadata document in its own format
    #[arg(long)]
    pub json: bool,
}

/// Runs `zarrkit info`.
///
/// # Errors
/// If the store or node cannot be opened, or writing to `out` fails.
pub fn run(args: &InfoArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let location = locate(&args.target, args.path.as_deref())?;
    let store = open_located(&location)?;
    let Location { node, .. } = location;
    warn_stale_consolidated(&store, &node);
    let node = Node::open(store, node.as_str())?;
    if args.json {
        return print_json(&node, out);
    }
    print_text(&node, out)
}

fn print_text(node: &Node, out: &mut impl Write) -> anyhow::Result<()> {
    match node {
        Node::Array(array) => print_array(array, out),
        Node::Group(group) => print_group(group, out),
    }
}

fn print_json(node: &Node, out: &mut impl Write) -> anyhow::Result<()> {
    let summary = match node {
        Node::Array(array) => array_summary(array)?,
        Node::Group(group) => group_summary(group)?,
    };
    let printed = serde_json::json!({
        "path": node.path().as_str(),
        "format": node.format().name(),
        "node_type": match node {
            Node::Array(_) => "array",
            Node::Group(_) => "group",
        },
        "summary": summary,
        "document": node_document(node)?,
    });
    writeln!(out, "{}", serde_json::to_string_pretty(&printed)?)?;
    let invalid = printed["summary"]["children"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|child| child.get("error").is_some())
        .count();
    if invalid > 0 {
        anyhow::bail!(
            "`{}` has {} that cannot be opened",
            node.path(),
            plural(invalid as u64, "child", "children")
        );
    }
    Ok(())
}

/// The summary of `--json` for an array (see [`AFTER_LONG_HELP`]).
fn array_summary(array: &Array) -> anyhow::Result<serde_json::Value> {
    let (stored, stored_bytes) = stored_chunks(array)?;
    let decoded = if array.data_type().is_variable_length() {
        None
    } else {
        product(array.shape()).and_then(|n| n.checked_mul(array.data_type().size() as u64))
    };
    #[allow(clippy::cast_precision_loss)] // A ratio for display.
    let ratio = decoded
        .filter(|&d| d > 0 && stored_bytes > 0)
        .map(|d| d as f64 / stored_bytes as f64);
    let grid = array.chunk_grid_shape();
    let fill: serde_json::Value =
        serde_json::from_str(&fill_value_text(array)).unwrap_or(serde_json::Value::Null);
    Ok(serde_json::json!({
        "shape": array.shape(),
        "data_type": array.data_type().to_string(),
        "chunk_shape": array.regular_chunk_shape(),
        "inner_chunk_shape": inner_chunk_shape(array),
        "chunk_grid_shape": grid,
        "chunks": product(&grid),
        "stored_chunks": stored,
        "stored_bytes": stored_bytes,
        "decoded_bytes": decoded,
        "storage_ratio": ratio,
        "fill_value": fill,
        "codecs": array.metadata().codecs.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        "dimension_names": array.metadata().dimension_names,
    }))
}

/// The summary of `--json` for a group: its children and their kinds.
fn group_summary(group: &Group) -> anyhow::Result<serde_json::Value> {
    let children = format::list_children(group.store().as_ref(), group.path(), group.format())?;
    // An invalid child is listed with its error, as the text output marks
    // it; `print_json` then fails after printing.
    let rows: Vec<serde_json::Value> = children
        .iter()
        .map(
            |child| match Node::open(Arc::clone(group.store()), child.as_str()) {
                Ok(Node::Array(_)) => {
                    serde_json::json!({ "name": child.name(), "node_type": "array" })
                }
                Ok(Node::Group(_)) => {
                    serde_json::json!({ "name": child.name(), "node_type": "group" })
                }
                Err(err) => {
                    serde_json::json!({ "name": child.name(), "error": format!("{err:#}") })
                }
            },
        )
        .collect();
    Ok(serde_json::json!({ "children": rows }))
}

/// The node's metadata document in its own format, as the library gives
/// it ([`format::node_document`]).
fn node_document(node: &Node) -> anyhow::Result<serde_json::Value> {
    let metadata = match node {
        Node::Array(array) => NodeMetadata::Array(array.metadata().clone()),
        Node::Group(group) => NodeMetadata::Group(group.metadata().clone()),
    };
    format::node_document(node.format(), &metadata).with_context(|| {
        format!(
            "the metadata cannot be written in its own format (`{}`)",
            node.format()
        )
    })
}

fn line(out: &mut impl Write, label: &str, value: impl std::fmt::Display) -> std::io::Result<()> {
    writeln!(out, "{:<LABEL_WIDTH$}{value}", format!("{label}:"))
}

fn print_array(array: &Array, out: &mut impl Write) -> anyhow::Result<()> {
    let metadata = array.metadata();
    line(out, "path", array.path())?;
    line(out, "format", array.format())?;
    line(out, "node type", "array")?;
    line(out, "shape", format_shape(array.shape()))?;
    line(out, "data type", array.data_type())?;
    // The v2 or v1 document's own words (NumPy type string, order, filters
    // and compressor), which the codec list below spells the v3 way.
    for (label, value) in format::array_display_facts(array.format(), metadata) {
        line(out, &label, value)?;
    }
    // With sharding (v3 sharding_indexed), the grid's chunks are shards and
    // the chunks a reader decodes are the inner chunks: say both, by name.
    let inner = inner_chunk_shape(array);
    let (chunk_label, chunk_noun) = if inner.is_some() {
        ("shard shape", ("shard", "shards"))
    } else {
        ("chunk shape", ("chunk", "chunks"))
    };
    match array.regular_chunk_shape() {
        Some(shape) if array.chunk_grid().name() == "regular" => {
            line(out, chunk_label, format_shape(shape))?;
        }
        // Chunks that differ in shape: the edge lengths as the document
        // spells them (compactly: runs as `[length, count]`).
        _ => {
            let grid = v3::chunk_grid_to_json(array.chunk_grid());
            let mut edges = grid["configuration"]["chunk_shapes"].to_string();
            if let Some((cut, _)) = edges.char_indices().nth(200) {
                edges.truncate(cut);
                edges.push('…');
            }
            line(
                out,
                chunk_label,
                format!("{} {edges}", array.chunk_grid().name()),
            )?;
        }
    }
    if let Some(inner) = &inner {
        line(out, "inner chunk shape", format_shape(inner))?;
    }
    let grid = array.chunk_grid_shape();
    let num_chunks = product(&grid);
    line(
        out,
        "chunk grid",
        format!(
            "{} ({})",
            format_shape(&grid),
            num_chunks.map_or_else(
                || format!("more than 2^64 {}", chunk_noun.1),
                |n| plural(n, chunk_noun.0, chunk_noun.1)
            )
        ),
    )?;
    let mut encoding = describe_encoding(&metadata.chunk_key_encoding);
    if array.format().is_v3_draft() {
        // The drafts' keys differ from the v3 encodings of the same name
        // (`c0/0`, `data/...`): show one.
        let first = array.chunk_key(&vec![0; array.ndim()])?;
        encoding = format!("{encoding}, keys such as `{}`", first.as_str());
    }
    line(out, "chunk key encoding", encoding)?;
    line(out, "fill value", fill_value_text(array))?;
    writeln!(out, "codecs:")?;
    for codec in &metadata.codecs {
        let mut text = format!("  {}", codec.name);
        if let Some(configuration) = codec.configuration.as_ref().filter(|c| !c.is_empty()) {
            text.push(' ');
            text.push_str(&serde_json::to_string(configuration)?);
        }
        if !codec.must_understand {
            text.push_str(" (must_understand: false)");
        }
        writeln!(out, "{text}")?;
    }
    let names = match &metadata.dimension_names {
        None => "(none)".to_string(),
        Some(names) => {
            let names = names
                .iter()
                .map(serde_json::to_string)
                .collect::<Result<Vec<_>, _>>()?;
            format!("[{}]", names.join(", "))
        }
    };
    line(out, "dimension names", names)?;
    let (stored, stored_bytes) = stored_chunks(array)?;
    line(
        out,
        if inner.is_some() {
            "stored shards"
        } else {
            "stored chunks"
        },
        format!(
            "{stored} of {}, {}",
            num_chunks.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string()),
            format_bytes(stored_bytes)
        ),
    )?;
    line(out, "decoded size", decoded_size(array))?;
    print_attributes(array.attributes(), out)
}

/// The inner chunk shape of a sharded array (v3 `sharding_indexed`,
/// whatever array→array codecs come before it), or `None` without
/// sharding: the library's answer ([`zarrkit::codec::CodecChain::sharding`]).
pub(crate) fn inner_chunk_shape(array: &Array) -> Option<Vec<u64>> {
    array
        .codecs()
        .sharding()
        .map(|sharding| sharding.chunk_shape().to_vec())
}

/// The fill value as the node's own document spells it
/// ([`format::fill_value_as_stored`]).
fn fill_value_text(array: &Array) -> String {
    format::fill_value_as_stored(array.format(), array.metadata()).to_string()
}

/// The size of the whole array decoded, or for variable-length elements
/// (whose sizes only the chunks hold) the number of elements.
fn decoded_size(array: &Array) -> String {
    let elements = product(array.shape());
    if array.data_type().is_variable_length() {
        return match elements {
            Some(n) => format!(
                "not known without reading every chunk ({} of variable length)",
                plural(n, "element", "elements")
            ),
            None => "not known without reading every chunk".to_string(),
        };
    }
    elements
        .and_then(|n| n.checked_mul(array.data_type().size() as u64))
        .map_or_else(|| "more than 2^64 bytes".to_string(), format_bytes)
}

fn describe_encoding(encoding: &ChunkKeyEncoding) -> String {
    format!(
        "{} (separator \"{}\")",
        encoding.name(),
        encoding.separator().as_char()
    )
}

/// The number of stored chunks inside the chunk grid and their total size.
fn stored_chunks(array: &Array) -> anyhow::Result<(u64, u64)> {
    let stored = array
        .stored_size()
        .with_context(|| format!("cannot count the stored chunks of `{}`", array.path()))?;
    Ok((stored.chunks, stored.bytes))
}

fn print_attributes(
    attributes: &zarrkit::metadata::JsonMap,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    if attributes.is_empty() {
        line(out, "attributes", "{}")?;
        return Ok(());
    }
    writeln!(out, "attributes:")?;
    for text in serde_json::to_string_pretty(attributes)?.lines() {
        writeln!(out, "  {text}")?;
    }
    Ok(())
}

fn print_group(group: &Group, out: &mut impl Write) -> anyhow::Result<()> {
    line(out, "path", group.path())?;
    line(out, "format", group.format())?;
    line(out, "node type", "group")?;
    let children = format::list_children(group.store().as_ref(), group.path(), group.format())?;
    let mut rows = Vec::new();
    let mut first_error = None;
    for child in &children {
        match Node::open(Arc::clone(group.store()), child.as_str()) {
            Ok(Node::Array(array)) => rows.push((
                child.name().to_string(),
                format!(
                    "array {} {}",
                    format_shape(array.shape()),
                    array.data_type()
                ),
            )),
            Ok(Node::Group(_)) => rows.push((format!("{}/", child.name()), "group".to_string())),
            Err(err) => {
                rows.push((child.name().to_string(), format!("invalid: {err:#}")));
                first_error.get_or_insert(err);
            }
        }
    }
    if rows.is_empty() {
        line(out, "children", "(none)")?;
    } else {
        writeln!(out, "children:")?;
        let width = rows.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
        for (name, kind) in rows {
            writeln!(out, "  {name:<width$}  {kind}")?;
        }
    }
    print_attributes(group.attributes(), out)?;
    match first_error {
        Some(err) => Err(err.into()),
        None => Ok(()),
    }
}
