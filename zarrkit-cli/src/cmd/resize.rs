//! `zarrkit resize`: change an array's shape.

use super::attrs::consolidated_note;
use super::format_shape;
use super::node_arg::{is_array, locate_node, refresh_consolidated};
use anyhow::{Context, bail};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use zarrkit::codec::data::VlenChunk;
use zarrkit::{Array, Node, Selection, SelectionItem};

/// The text after the options in `--help`.
pub const AFTER_LONG_HELP: &str = "\
Rewrites the array's metadata document with the new shape (same number of \
dimensions) and erases the stored chunks that lie wholly outside it, \
through the library's `Array::resize`. Growing reads the new elements as \
the fill value. Chunks that the new edge cuts keep their elements past the \
edge, as zarr-python (2 and 3) and tensorstore keep them: shrinking and \
then growing again shows the old values there. --clear-cut resets those \
elements to the fill value before shrinking, so that they do not come \
back. A `rectilinear` grid grows only within its declared edge lengths \
(an integer dimension grows freely).

When the hierarchy has consolidated metadata, it is rewritten with the \
new shape.

--json prints {\"path\", \"old_shape\", \"new_shape\", \"stored_chunks_before\", \
\"stored_chunks_after\", \"consolidated_updated\": [groups]}.

Examples:
  zarrkit resize data.zarr/temperature --shape 730,720,1440
  zarrkit resize data.zarr /temperature --shape '[365, 720, 1440]' --json
  zarrkit resize data.zarr/labels --shape 100 --clear-cut";

/// Arguments of `zarrkit resize`.
#[derive(Debug, Args)]
pub struct ResizeArgs {
    /// A store, or an array inside it such as `my.zarr/a/b`
    #[arg(value_name = "STORE[/PATH]")]
    pub target: PathBuf,

    /// The array inside the store (`/a/b`); the first argument is then the
    /// store root
    #[arg(value_name = "NODE")]
    pub node: Option<String>,

    /// The new shape: lengths separated by commas or `x` (`100,200`,
    /// `100x200`, `[100, 200]`)
    #[arg(long, value_name = "SHAPE", value_parser = parse_shape_arg)]
    pub shape: ShapeArg,

    /// Reset the elements past the new edge in chunks it cuts to the fill value
    #[arg(long)]
    pub clear_cut: bool,

    /// Print the old and new shapes as JSON (described below)
    #[arg(long)]
    pub json: bool,
}

/// A shape given on the command line.
#[derive(Clone, Debug)]
pub struct ShapeArg(pub Vec<u64>);

fn parse_shape_arg(text: &str) -> Result<ShapeArg, String> {
    parse_shape(text).map(ShapeArg)
}

/// Parses `100,200`, `100x200` or `[100, 200]` (`[]` for a 0-d array).
///
/// # Errors
/// If a length is not a non-negative integer.
pub fn parse_shape(text: &str) -> Result<Vec<u64>, String> {
    let inner = text
        .trim()
        .trim_start_matches(['[', '('])
        .trim_end_matches([']', ')']);
    if inner.trim().is_empty() {
        return Ok(Vec::new());
    }
    inner
        .split([',', 'x'])
        .map(str::trim)
        .map(|s| {
            s.replace('_', "")
                .parse()
                .map_err(|_| format!("`{s}` in `{text}` is not a length"))
        })
        .collect()
}

/// Runs `zarrkit resize`.
///
/// # Errors
/// If the store or array cannot be opened, the shape has the wrong number
/// of dimensions or does not fit the grid, or writing fails.
pub fn run(args: &ResizeArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let extra: Vec<String> = args.node.iter().cloned().collect();
    let target = locate_node(&args.target, &extra, 0, is_array)?;
    let path = target.node;
    let mut array = match Node::open(target.store.clone(), path.as_str())? {
        Node::Array(array) => array,
        Node::Group(_) => bail!("`{path}` is a group; only an array can be resized"),
    };
    let new_shape = &args.shape.0;
    let old = array.shape().to_vec();
    if new_shape.len() != old.len() {
        bail!(
            "`{path}` has {} dimensions (shape {}), and --shape {} has {}; resize keeps the number of dimensions",
            old.len(),
            format_shape(&old),
            format_shape(new_shape),
            new_shape.len()
        );
    }
    let before = array.stored_size().map(|s| s.chunks).ok();
    if args.clear_cut {
        clear_cut(&array, new_shape)
            .with_context(|| format!("cannot reset the elements past the new edge of `{path}`"))?;
    }
    array
        .resize(new_shape)
        .with_context(|| format!("cannot resize `{path}` to {}", format_shape(new_shape)))?;
    let after = array.stored_size().map(|s| s.chunks).ok();
    let updated = refresh_consolidated(&target.store, &path)?.updated;
    if args.json {
        let report = serde_json::json!({
            "path": path.as_str(),
            "old_shape": old,
            "new_shape": new_shape,
            "stored_chunks_before": before,
            "stored_chunks_after": after,
            "consolidated_updated": updated,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        let erased = match (before, after) {
            (Some(b), Some(a)) if b > a => format!(
                "; erased {}",
                super::plural(b - a, "chunk outside it", "chunks outside it")
            ),
            _ => String::new(),
        };
        writeln!(
            out,
            "resized `{path}` from {} to {}{erased}{}",
            format_shape(&old),
            format_shape(new_shape),
            consolidated_note(&updated)
        )?;
    }
    Ok(())
}

/// Writes the fill value into the elements past `new_shape` that lie in
/// chunks the new edge cuts (along each dimension that shrinks, from the
/// new length to the end of its chunk), before the array shrinks.
fn clear_cut(array: &Array, new_shape: &[u64]) -> anyhow::Result<()> {
    let old = array.shape();
    for d in 0..old.len() {
        if new_shape[d] >= old[d] {
            continue;
        }
        // The end of the chunk the new edge falls in, along `d`.
        let edge = new_shape[d];
        let end = (0..array.chunk_grid_shape()[d])
            .map(|c| {
                let mut coords = vec![0; old.len()];
                coords[d] = c;
                let region = array.chunk_region(&coords);
                (region.start()[d], region.start()[d] + region.shape()[d])
            })
            .find(|&(start, stop)| start < edge && edge < stop)
            .map(|(_, stop)| stop.min(old[d]));
        let Some(end) = end else { continue };
        let items: Vec<SelectionItem> = (0..old.len())
            .map(|k| {
                let to = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
                if k == d {
                    SelectionItem::slice(Some(to(edge)), Some(to(end)), None)
                } else {
                    SelectionItem::full()
                }
            })
            .collect();
        let selection = Selection::new(items);
        let fill = array.fill_value().as_bytes().to_vec();
        if array.data_type().is_variable_length() {
            array.write_selection_vlen_broadcast(
                &selection,
                &VlenChunk::from_items([fill.as_slice()]),
                &[],
            )?;
        } else {
            array.write_selection_bytes_broadcast(&selection, &fill, &[])?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_parse_in_every_spelling() {
        assert_eq!(parse_shape("10,20"), Ok(vec![10, 20]));
        assert_eq!(parse_shape("10x20"), Ok(vec![10, 20]));
        assert_eq!(parse_shape("[10, 20]"), Ok(vec![10, 20]));
        assert_eq!(parse_shape("7"), Ok(vec![7]));
        assert_eq!(parse_shape("[]"), Ok(vec![]));
        assert!(parse_shape("10,-2").is_err());
        assert!(parse_shape("3,x").is_err());
    }
}
