//! `zarrkit tree`: the hierarchy as an indented tree.

use super::{Location, format_shape, locate, open_located, plural};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use zarrkit::{Array, Group, Node, consolidate, format};

/// The text after the options in `--help`.
pub const AFTER_LONG_HELP: &str = "\
Each array is shown with its shape, data type and chunk shape, each group \
with a trailing `/`; siblings are sorted by name, and the last line counts \
the groups and arrays shown, the top group included (as `migrate` counts \
them). Consolidated metadata is used when it agrees with the documents; \
when it is stale, a warning says so and the real documents are shown. A \
store that cannot be listed (HTTP) is shown from its consolidated metadata \
alone.

Examples:
  zarrkit tree testdata/sample.zarr
  zarrkit tree testdata/sample.zarr/weather

Output:
  /
  ├── labels [36, 72] uint8 chunks [18, 36]
  └── weather/
      ├── elevation [36, 72] int16 chunks [18, 36]
      └── temperature [24, 36, 72] float32 chunks [6, 12, 24]

  2 groups, 3 arrays

--json prints {\"tree\": NODE, \"groups\": n, \"arrays\": n}, where NODE is
  {\"name\", \"path\", \"node_type\": \"group\", \"format\", \"children\": [NODE, …]}
  for a group (children sorted by name),
  {\"name\", \"path\", \"node_type\": \"array\", \"format\", \"shape\",
  \"data_type\", \"chunk_shape\" (null for a rectilinear grid),
  \"inner_chunk_shape\" (null unless sharded)} for an array, and
  {\"name\", \"path\", \"error\"} for a node that cannot be opened (the exit
  status is then 1, after the whole tree is printed).";

/// Arguments of `zarrkit tree`.
#[derive(Debug, Args)]
pub struct TreeArgs {
    /// A store directory, or a node inside it to show the tree below
    #[arg(value_name = "STORE[/PATH]")]
    pub target: PathBuf,

    /// The node inside the store to start from (`/` for the root); the first
    /// argument is then the store root itself
    #[arg(long, value_name = "NODE")]
    pub path: Option<String>,

    /// Print the tree as JSON (described below) instead of text
    #[arg(long)]
    pub json: bool,
}

/// Runs `zarrkit tree`.
///
/// # Errors
/// If the store or the top node cannot be opened or listed, if any node in
/// the hierarchy is invalid (after printing the whole tree, with the invalid
/// nodes marked), or if writing to `out` fails.
pub fn run(args: &TreeArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let location = locate(&args.target, args.path.as_deref())?;
    let store = open_located(&location)?;
    let Location { node, .. } = location;
    if args.json {
        return print_json(Node::open(store, node.as_str())?, out);
    }
    match Node::open(store, node.as_str())? {
        Node::Array(array) => {
            writeln!(out, "{}", describe_array(array.path().as_str(), &array))?;
            Ok(())
        }
        Node::Group(mut group) => {
            for warning in group.warnings() {
                eprintln!("warning: {warning}");
            }
            if group.is_consolidated() {
                group = check_consolidated(group)?;
            }
            let top = if group.path().is_root() {
                "/".to_string()
            } else {
                format!("{}/", group.path())
            };
            writeln!(out, "{top}")?;
            let mut walk = Walk::default();
            walk.group(&group, "", out)?;
            writeln!(out)?;
            writeln!(
                out,
                "{}, {}",
                // The top group counts, as in `migrate`'s report.
                plural((walk.groups + 1) as u64, "group", "groups"),
                plural(walk.arrays as u64, "array", "arrays")
            )?;
            match walk.first_error {
                Some(err) => Err(err),
                None => Ok(()),
            }
        }
    }
}

/// `tree --json`: the node and everything below it as one JSON document.
fn print_json(node: Node, out: &mut impl Write) -> anyhow::Result<()> {
    let mut walk = Walk::default();
    let tree = match node {
        Node::Array(array) => {
            walk.arrays += 1;
            array_json(&array)
        }
        Node::Group(mut group) => {
            for warning in group.warnings() {
                eprintln!("warning: {warning}");
            }
            if group.is_consolidated() {
                group = check_consolidated(group)?;
            }
            walk.groups += 1;
            walk.group_json(&group)?
        }
    };
    let printed = serde_json::json!({
        "tree": tree,
        "groups": walk.groups,
        "arrays": walk.arrays,
    });
    writeln!(out, "{}", serde_json::to_string_pretty(&printed)?)?;
    match walk.first_error {
        Some(err) => Err(err),
        None => Ok(()),
    }
}

fn array_json(array: &Array) -> serde_json::Value {
    serde_json::json!({
        "name": array.path().name(),
        "path": array.path().as_str(),
        "node_type": "array",
        "format": array.format().name(),
        "shape": array.shape(),
        "data_type": array.data_type().to_string(),
        "chunk_shape": array.regular_chunk_shape(),
        "inner_chunk_shape": super::info::inner_chunk_shape(array),
    })
}

/// The group itself, or, when its consolidated metadata disagrees with the
/// documents below it (a node added, changed or removed after `zarrkit
/// consolidate`), the group reopened from its real documents, with a
/// warning: the tree shows what the store holds, never a stale summary.
/// A store that cannot list (HTTP) has no other way to find the nodes, so
/// there the consolidated metadata is the tree, unchecked.
fn check_consolidated(group: Group) -> anyhow::Result<Group> {
    if !group.store().capabilities().list {
        return Ok(group);
    }
    let stale = match consolidate::check(group.store().as_ref(), group.path().as_str()) {
        Ok(mismatches) if mismatches.is_empty() => return Ok(group),
        Ok(mismatches) => {
            let shown: Vec<String> = mismatches.iter().take(3).map(ToString::to_string).collect();
            format!(
                "{} {}: {}{}",
                mismatches.len(),
                if mismatches.len() == 1 {
                    "entry"
                } else {
                    "entries"
                },
                shown.join("; "),
                if mismatches.len() > 3 { "; …" } else { "" }
            )
        }
        Err(err) => format!("{err:#}"),
    };
    eprintln!(
        "warning: the consolidated metadata of `{}` is stale ({stale}); showing the real \
         documents (rewrite it with `zarrkit consolidate`)",
        group.path()
    );
    Ok(Group::open_without_consolidated(
        Arc::clone(group.store()),
        group.path().as_str(),
    )?)
}

fn describe_array(name: &str, array: &Array) -> String {
    let grid_chunks = array
        .regular_chunk_shape()
        .map_or_else(|| "rectilinear".to_string(), format_shape);
    let mut text = format!(
        "{name} {} {} {}",
        format_shape(array.shape()),
        array.data_type(),
        // A sharded array's grid holds shards of inner chunks.
        match super::info::inner_chunk_shape(array) {
            Some(inner) => format!("shards {grid_chunks} of chunks {}", format_shape(&inner)),
            None => format!("chunks {grid_chunks}"),
        }
    );
    // The v2 document's own words: NumPy dtype, filters and compressor.
    if let Some(document) = format::v2_array_document(array.format(), array.metadata()) {
        let ids = |value: &serde_json::Value| match value {
            serde_json::Value::Array(items) => items
                .iter()
                .map(|f| f["id"].as_str().unwrap_or("?").to_string())
                .collect::<Vec<_>>()
                .join(","),
            serde_json::Value::Object(codec) => codec
                .get("id")
                .and_then(|id| id.as_str())
                .unwrap_or("?")
                .to_string(),
            _ => "none".to_string(),
        };
        text.push_str(&format!(
            " (v2 dtype {}, filters {}, compressor {})",
            document["dtype"],
            ids(&document["filters"]),
            ids(&document["compressor"])
        ));
    }
    text
}

#[derive(Default)]
struct Walk {
    groups: usize,
    arrays: usize,
    first_error: Option<anyhow::Error>,
}

/// A group's children, each opened or the error of opening it. They are
/// listed and opened here, rather than through `Group::children`, so that
/// one invalid node is marked in the tree instead of hiding all of its
/// siblings. A group with consolidated metadata answers from it, with no
/// reads.
fn children(
    group: &Group,
) -> anyhow::Result<Vec<(zarrkit::NodePath, Result<Node, zarrkit::Error>)>> {
    Ok(if group.is_consolidated() {
        group
            .children()?
            .into_iter()
            .map(|node| (node.path().clone(), Ok(node)))
            .collect()
    } else {
        format::list_children(group.store().as_ref(), group.path(), group.format())?
            .into_iter()
            .map(|child| {
                let node = Node::open(Arc::clone(group.store()), child.as_str());
                (child, node)
            })
            .collect()
    })
}

impl Walk {
    fn group_json(&mut self, group: &Group) -> anyhow::Result<serde_json::Value> {
        let mut rows = Vec::new();
        for (child, node) in children(group)? {
            rows.push(match node {
                Ok(Node::Array(array)) => {
                    self.arrays += 1;
                    array_json(&array)
                }
                Ok(Node::Group(sub)) => {
                    self.groups += 1;
                    self.group_json(&sub)?
                }
                Err(err) => {
                    let value = serde_json::json!({
                        "name": child.name(),
                        "path": child.as_str(),
                        "error": format!("{err:#}"),
                    });
                    self.first_error.get_or_insert(err.into());
                    value
                }
            });
        }
        Ok(serde_json::json!({
            "name": group.path().name(),
            "path": group.path().as_str(),
            "node_type": "group",
            "format": group.format().name(),
            "children": rows,
        }))
    }

    fn group(&mut self, group: &Group, indent: &str, out: &mut impl Write) -> anyhow::Result<()> {
        let children = children(group)?;
        let count = children.len();
        for (i, (child, node)) in children.into_iter().enumerate() {
            let last = i + 1 == count;
            let (branch, next_indent) = if last {
                ("└── ", format!("{indent}    "))
            } else {
                ("├── ", format!("{indent}│   "))
            };
            match node {
                Ok(Node::Array(array)) => {
                    self.arrays += 1;
                    writeln!(
                        out,
                        "{indent}{branch}{}",
                        describe_array(child.name(), &array)
                    )?;
                }
                Ok(Node::Group(sub)) => {
                    self.groups += 1;
                    writeln!(out, "{indent}{branch}{}/", child.name())?;
                    self.group(&sub, &next_indent, out)?;
                }
                Err(err) => {
                    writeln!(out, "{indent}{branch}{} (invalid: {err:#})", child.name())?;
                    self.first_error.get_or_insert(err.into());
                }
            }
        }
        Ok(())
    }
}
