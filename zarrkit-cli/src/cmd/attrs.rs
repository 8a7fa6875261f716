//! `zarrkit attrs get|set|del`: a node's user attributes.

use super::node_arg::{exists, locate_node, refresh_consolidated};
use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use serde_json::{Map, Value};
use std::io::Write;
use std::path::PathBuf;
use zarrkit::Node;

/// The text after the options in `--help`.
pub const AFTER_LONG_HELP: &str = "\
Attributes are read and written through the node's own document in its \
format: v3 `zarr.json` (`attributes`), v2 `.zattrs`, v1 `attrs`, the v3 \
drafts' documents; every other field of the document is kept, and the \
document is replaced in one atomic write. When the hierarchy has \
consolidated metadata (v2 `.zmetadata`, v3 `consolidated_metadata`), it \
is rewritten to match (zarr-python leaves it stale until \
`consolidate_metadata` runs again).

  attrs get STORE[/PATH] [KEY]         all attributes as a JSON object, or one \
key's value as JSON (an error naming the key when it is absent)
  attrs set STORE[/PATH] KEY VALUE     set one key; VALUE is JSON (`3`, \
`[1, 2]`, `{\"a\": 1}`, `\"text\"`, `true`, `null`), and a bare word that is \
not valid JSON is taken as a string (`m/s` is the string \"m/s\"; write \
`'\"true\"'` for the string `true`)
  attrs set STORE[/PATH] --json OBJECT merge the keys of a JSON object into the \
attributes (--replace: make it the attributes, dropping the others)
  attrs del STORE[/PATH] KEY           remove one key (an error naming it when absent)

Examples:
  zarrkit attrs get data.zarr/temperature
  zarrkit attrs get data.zarr/temperature units
  zarrkit attrs set data.zarr/temperature units K
  zarrkit attrs set data.zarr /temperature valid_range '[0, 400]'
  zarrkit attrs set data.zarr/temperature --json '{\"units\": \"K\", \"scale\": 0.01}'
  zarrkit attrs del data.zarr/temperature scale";

/// Arguments of `zarrkit attrs`.
#[derive(Debug, Args)]
pub struct AttrsArgs {
    #[command(subcommand)]
    pub action: Action,
}

/// What `attrs` does.
#[derive(Debug, Subcommand)]
pub enum Action {
    /// Print all attributes as JSON, or one key's value
    Get {
        /// A store, or a node inside it such as `my.zarr/a/b`
        #[arg(value_name = "STORE[/PATH]")]
        target: PathBuf,
        /// The node (`/a/b`, when the first argument is the store root),
        /// then the key
        #[arg(value_name = "NODE] [KEY", num_args = 0..=2)]
        rest: Vec<String>,
    },
    /// Set one key to a JSON value, or merge a JSON object with --json
    Set {
        /// A store, or a node inside it such as `my.zarr/a/b`
        #[arg(value_name = "STORE[/PATH]")]
        target: PathBuf,
        /// The node (`/a/b`, when the first argument is the store root),
        /// then the key and its value
        #[arg(value_name = "NODE] [KEY] [VALUE", num_args = 0..=3)]
        rest: Vec<String>,
        /// A JSON object whose keys are set (merged into the attributes)
        #[arg(long, value_name = "OBJECT")]
        json: Option<String>,
        /// With --json, replace all attributes with the object
        #[arg(long, requires = "json")]
        replace: bool,
    },
    /// Remove one key
    Del {
        /// A store, or a node inside it such as `my.zarr/a/b`
        #[arg(value_name = "STORE[/PATH]")]
        target: PathBuf,
        /// The node (`/a/b`, when the first argument is the store root),
        /// then the key
        #[arg(value_name = "NODE] [KEY", num_args = 1..=2)]
        rest: Vec<String>,
    },
}

/// Runs `zarrkit attrs`.
///
/// # Errors
/// If the store or node cannot be opened, a key is absent, a value is
/// invalid, or the document cannot be written.
pub fn run(args: &AttrsArgs, out: &mut impl Write) -> anyhow::Result<()> {
    match &args.action {
        Action::Get { target, rest } => {
            let target = locate_node(target, rest, 1, exists)?;
            let node = Node::open(target.store, target.node.as_str())?;
            let attributes = node.attributes();
            let printed = match target.rest.first() {
                None => Value::Object(attributes.clone()),
                Some(key) => attributes
                    .get(key)
                    .cloned()
                    .with_context(|| format!("`{}` has no attribute `{key}`", target.node))?,
            };
            writeln!(out, "{}", serde_json::to_string_pretty(&printed)?)?;
        }
        Action::Set {
            target,
            rest,
            json,
            replace,
        } => {
            let wanted = if json.is_some() { 0 } else { 2 };
            let target = locate_node(target, rest, wanted, exists)?;
            let mut node = Node::open(target.store.clone(), target.node.as_str())?;
            let mut attributes = node.attributes().clone();
            let changed = match (json, target.rest.as_slice()) {
                (Some(text), []) => {
                    let Value::Object(object) = serde_json::from_str::<Value>(text)
                        .with_context(|| format!("--json `{text}` is not valid JSON"))?
                    else {
                        bail!("--json `{text}` is not a JSON object");
                    };
                    if *replace {
                        attributes = Map::new();
                    }
                    let keys = object.len();
                    attributes.extend(object);
                    keys
                }
                (Some(_), _) => bail!("give either --json OBJECT or KEY VALUE, not both"),
                (None, [key, value]) => {
                    attributes.insert(key.clone(), parse_value(value));
                    1
                }
                (None, _) => bail!("`attrs set` takes KEY VALUE, or --json OBJECT"),
            };
            set_attributes(&mut node, attributes)?;
            let consolidated = refresh_consolidated(&target.store, &target.node)?;
            writeln!(
                out,
                "{} {} of `{}`{}",
                if *replace {
                    "replaced the attributes with"
                } else {
                    "set"
                },
                super::plural(changed as u64, "attribute", "attributes"),
                target.node,
                consolidated_note(&consolidated.updated)
            )?;
        }
        Action::Del { target, rest } => {
            let target = locate_node(target, rest, 1, exists)?;
            let [key] = target.rest.as_slice() else {
                bail!("`attrs del` takes one KEY");
            };
            let mut node = Node::open(target.store.clone(), target.node.as_str())?;
            let mut attributes = node.attributes().clone();
            if attributes.shift_remove(key).is_none() {
                bail!("`{}` has no attribute `{key}`", target.node);
            }
            set_attributes(&mut node, attributes)?;
            let consolidated = refresh_consolidated(&target.store, &target.node)?;
            writeln!(
                out,
                "removed the attribute `{key}` of `{}`{}",
                target.node,
                consolidated_note(&consolidated.updated)
            )?;
        }
    }
    Ok(())
}

/// A VALUE argument: JSON, or when it is not valid JSON, the text as a string.
fn parse_value(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

/// Writes the node's attributes through its format's document.
fn set_attributes(node: &mut Node, attributes: Map<String, Value>) -> anyhow::Result<()> {
    let path = node.path().clone();
    match node {
        Node::Array(array) => array.set_attributes(attributes),
        Node::Group(group) => group.set_attributes(attributes),
    }
    .with_context(|| format!("cannot write the attributes of `{path}`"))
}

/// `; updated the consolidated metadata of `/`` when some was rewritten.
pub fn consolidated_note(updated: &[String]) -> String {
    if updated.is_empty() {
        return String::new();
    }
    let groups: Vec<String> = updated.iter().map(|g| format!("`{g}`")).collect();
    format!(
        "; updated the consolidated metadata of {}",
        groups.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_json_or_else_strings() {
        assert_eq!(parse_value("3"), Value::from(3));
        assert_eq!(parse_value("[1, 2]"), serde_json::json!([1, 2]));
        assert_eq!(parse_value("m/s"), Value::from("m/s"));
        assert_eq!(parse_value("\"true\""), Value::from("true"));
        assert_eq!(parse_value("true"), Value::from(true));
    }
}
