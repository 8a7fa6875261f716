//! `zarrkit diff`: compare two nodes or hierarchies: which nodes exist,
//! their metadata field by field, then their values chunk by chunk.

use super::stats::Numeric;
use super::{locate, open_located, plural};
use anyhow::{Context, bail};
use clap::Args;
use rayon::prelude::*;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zarrkit::array::GridWalk;
use zarrkit::format::{self, ZarrFormat, v3};
use zarrkit::metadata::{ArrayMetadata, NodeMetadata};
use zarrkit::store::Store;
use zarrkit::{Array, Group, NodePath, Region};

/// Regions of A's grid before a progress bar is worth showing.
const PROGRESS_THRESHOLD: u64 = 32;

/// The text after the options in `--help`.
pub const AFTER_LONG_HELP: &str = "\
Examples:
  zarrkit diff a.zarr b.zarr
  zarrkit diff a.zarr/temperature b.zarr/temperature --rtol 1e-6
  zarrkit diff old-v2.zarr migrated-v3.zarr --ignore-format
  zarrkit diff a.zarr b.zarr --node weather --metadata-only --json

A and B are each STORE[/PATH] (as `info` takes it: a directory, URL or zip \
archive, and a node inside it); --node NODE compares the node NODE below \
each of them. Groups are compared with everything below them, node by \
node (matched by their paths relative to A and B); over a store that \
cannot list (plain HTTP), the nodes its consolidated metadata names.

For each node: whether it exists on both sides and is of the same kind, \
then its metadata field by field (format, shape, data_type, chunk_shape \
(the chunk grid), chunk_key_encoding, codecs, fill_value, \
dimension_names, attributes, extra_fields (what the format's document holds \
beyond the model, such as v2 `order`); codecs and fill values in their v3 \
JSON form), printed as `field: A: x / B: y`. Then, unless --metadata-only, the values \
of arrays of the same shape, region by region over A's chunk grid (B read \
in the same regions whatever its own chunking), in parallel: NaN equals \
NaN; with --rtol/--atol floats (and integers) are equal when |a - b| <= \
atol + rtol * |b|, as numpy.isclose has it. Arrays of different numeric \
data types are compared by value; other data types element by element \
(strings and bytes by their bytes). Chunks missing on both sides of arrays \
with the same grid and fill value are not read. For each array the number \
of differing elements is given, and the first --max-diffs of them (in C \
order) with their indices and both values (a complex value as [re, im], \
bytes that are not UTF-8 in hex).

--ignore-format leaves out what differs only because the two sides are in \
different formats (a v2 store and its v3 migration): the `format` and \
`chunk_key_encoding` fields and the format-specific fields (v2 `order`, \
`dimension_separator` and the like). Codecs are still compared.

Exit status: 0 when A and B are the same, 1 when anything differs (or a \
side cannot be read), 2 on a usage error.

--json prints one object: {a: {store, path, format}, b: {...}, same, \
nodes: [{path (relative: `/` for A and B themselves), status (`same`, \
`different`, `only_in_a`, `only_in_b`), kind_a, kind_b, metadata: [{field, \
a, b}], values: null or {compared (false when shapes or data types do not \
allow it, with a reason), reason, elements, differing, first: [{index, a, \
b}]}}], totals: {nodes, different, only_in_a, only_in_b, \
differing_elements}}.";

/// Arguments of `zarrkit diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The first node: a store, or a node inside it such as `a.zarr/x`
    #[arg(value_name = "A")]
    pub a: PathBuf,

    /// The second node, likewise
    #[arg(value_name = "B")]
    pub b: PathBuf,

    /// Compare this node below A and below B (such as `weather/temperature`)
    #[arg(long, value_name = "NODE")]
    pub node: Option<String>,

    /// Compare the nodes and their metadata, not the values
    #[arg(long)]
    pub metadata_only: bool,

    /// Relative tolerance for values: |a - b| <= atol + rtol * |b|
    #[arg(long, value_name = "RTOL", default_value_t = 0.0, value_parser = parse_tolerance)]
    pub rtol: f64,

    /// Absolute tolerance for values
    #[arg(long, value_name = "ATOL", default_value_t = 0.0, value_parser = parse_tolerance)]
    pub atol: f64,

    /// Leave out differences that come only from the formats (the format,
    /// the chunk key encoding, format-specific fields)
    #[arg(long)]
    pub ignore_format: bool,

    /// How many differing elements to show per array
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub max_diffs: usize,

    /// Print JSON (described below)
    #[arg(long)]
    pub json: bool,
    /// The most memory one read or chunk decode may hold, such as `512MiB`
    /// or `2G` (default 8 GiB); larger ones fail with an error naming them
    #[arg(long, value_name = "BYTES", value_parser = super::export::parse_size)]
    pub memory_budget: Option<u64>,
}

/// Parses `--rtol` and `--atol`: a finite number, at least 0.
fn parse_tolerance(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 => Ok(value),
        _ => Err(format!("`{text}` is not a number >= 0")),
    }
}

/// One side of the comparison.
struct Side {
    display: String,
    store: Arc<dyn Store>,
    node: NodePath,
    format: ZarrFormat,
    /// Every node below, by relative path (`/` for the node itself).
    nodes: BTreeMap<String, NodeMetadata>,
}

impl Side {
    fn open(target: &Path, below: Option<&str>) -> anyhow::Result<Self> {
        let location = locate(target, None)?;
        let store = open_located(&location)?;
        let mut node = location.node;
        if let Some(below) = below {
            let joined = format!(
                "{}/{}",
                node.as_str().trim_end_matches('/'),
                below.trim_start_matches('/')
            );
            node = NodePath::new(&joined)?;
        }
        let display = target.display().to_string();
        let (format, metadata) = format::read_node(store.as_ref(), &node)
            .with_context(|| format!("cannot read `{display}`"))?
            .with_context(|| format!("no array or group at `{node}` in `{display}`"))?;
        let mut nodes = BTreeMap::new();
        if store.capabilities().list || matches!(metadata, NodeMetadata::Array(_)) {
            collect(store.as_ref(), &node, &node, format, metadata, &mut nodes)
                .with_context(|| format!("cannot read the hierarchy of `{display}`"))?;
        } else {
            // Over plain HTTP the nodes below a group are known only from
            // consolidated metadata; each is read from its own document.
            let group = Group::open(Arc::clone(&store), node.as_str())?;
            if !group.is_consolidated() {
                bail!(
                    "`{display}` cannot list the nodes below `{node}` and has no consolidated \
                     metadata naming them"
                );
            }
            nodes.insert("/".to_string(), metadata);
            for below in group.walk()? {
                let path = below.path();
                let metadata = format::read_node_as(store.as_ref(), path, format)?
                    .with_context(|| {
                        format!("`{path}` is in the consolidated metadata of `{display}` but does not exist")
                    })?;
                nodes.insert(relative(&node, path), metadata);
            }
        }
        Ok(Self {
            display,
            store,
            node,
            format,
            nodes,
        })
    }

    /// The absolute path of the node at `relative`.
    fn path(&self, relative: &str) -> anyhow::Result<NodePath> {
        if relative == "/" {
            return Ok(self.node.clone());
        }
        Ok(NodePath::new(&format!(
            "{}{relative}",
            self.node.as_str().trim_end_matches('/')
        ))?)
    }
}

/// The path of `path` relative to `top` (`/` for `top` itself).
fn relative(top: &NodePath, path: &NodePath) -> String {
    let relative = path
        .as_str()
        .strip_prefix(top.as_str().trim_end_matches('/'))
        .unwrap_or("/");
    if relative.is_empty() {
        "/".to_string()
    } else {
        relative.to_string()
    }
}

/// Records `metadata` at `path` and every node below it, by their paths
/// relative to `top`.
fn collect(
    store: &dyn Store,
    top: &NodePath,
    path: &NodePath,
    format: ZarrFormat,
    metadata: NodeMetadata,
    out: &mut BTreeMap<String, NodeMetadata>,
) -> Result<(), zarrkit::Error> {
    let is_group = matches!(metadata, NodeMetadata::Group(_));
    out.insert(relative(top, path), metadata);
    if is_group {
        for child in format::list_children(store, path, format)? {
            if let Some(metadata) = format::read_node_as(store, &child, format)? {
                collect(store, top, &child, format, metadata, out)?;
            }
        }
    }
    Ok(())
}

fn kind(metadata: &NodeMetadata) -> &'static str {
    match metadata {
        NodeMetadata::Array(_) => "array",
        NodeMetadata::Group(_) => "group",
    }
}

/// The fields of an array's metadata compared, in v3 JSON forms.
fn array_fields(metadata: &ArrayMetadata, ignore_format: bool) -> Vec<(&'static str, Value)> {
    let mut fields = vec![
        ("shape", json!(metadata.shape)),
        ("data_type", json!(metadata.data_type.to_string())),
        ("chunk_shape", v3::chunk_grid_to_json(&metadata.chunk_grid)),
        (
            "codecs",
            Value::Array(metadata.codecs.iter().map(v3::extension_to_json).collect()),
        ),
        (
            "fill_value",
            v3::fill_value_to_json(&metadata.fill_value, &metadata.data_type),
        ),
        ("dimension_names", json!(metadata.dimension_names)),
        ("attributes", Value::Object(metadata.attributes.clone())),
    ];
    if !metadata.storage_transformers.is_empty() {
        fields.push((
            "storage_transformers",
            Value::Array(
                metadata
                    .storage_transformers
                    .iter()
                    .map(v3::extension_to_json)
                    .collect(),
            ),
        ));
    }
    if !ignore_format {
        fields.push((
            "chunk_key_encoding",
            v3::chunk_key_encoding_to_json(&metadata.chunk_key_encoding),
        ));
        fields.push(("extra_fields", Value::Object(metadata.extra_fields.clone())));
    }
    fields
}

/// The metadata fields that differ, as `{field, a, b}`.
fn metadata_differences(
    a: (&NodeMetadata, ZarrFormat),
    b: (&NodeMetadata, ZarrFormat),
    ignore_format: bool,
) -> Vec<Value> {
    let mut differences = Vec::new();
    if !ignore_format && a.1 != b.1 {
        differences.push(json!({"field": "format", "a": a.1.name(), "b": b.1.name()}));
    }
    let (fields_a, fields_b) = match (a.0, b.0) {
        (NodeMetadata::Array(x), NodeMetadata::Array(y)) => (
            array_fields(x, ignore_format),
            array_fields(y, ignore_format),
        ),
        (NodeMetadata::Group(x), NodeMetadata::Group(y)) => (
            vec![("attributes", Value::Object(x.attributes.clone()))],
            vec![("attributes", Value::Object(y.attributes.clone()))],
        ),
        _ => return differences,
    };
    for ((field, x), (_, y)) in fields_a.into_iter().zip(fields_b) {
        // `extra_fields` absent on one side and empty on the other is no difference.
        if x != y {
            differences.push(json!({"field": field, "a": x, "b": y}));
        }
    }
    differences
}

/// How two elements are compared.
#[derive(Clone, Copy)]
enum Compare {
    /// Both numeric: by value, with tolerances.
    Numbers(Numeric, Numeric),
    /// The same fixed-size type: by bytes.
    Bytes(usize),
    /// The same variable-length type: element by element.
    Vlen,
}

/// Whether two numbers are equal under the tolerances (NaN equals NaN).
fn close(x: f64, y: f64, rtol: f64, atol: f64) -> bool {
    if x.is_nan() || y.is_nan() {
        return x.is_nan() && y.is_nan();
    }
    x == y || (x - y).abs() <= atol + rtol * y.abs()
}

/// One element of a numeric type for display and JSON.
fn number_json(numeric: Numeric, element: &[u8]) -> Value {
    let part = |bytes: &[u8]| {
        if numeric.is_integer() {
            let i = numeric.part_int(bytes);
            i64::try_from(i)
                .map(Value::from)
                .or_else(|_| u64::try_from(i).map(Value::from))
                .unwrap_or(Value::Null)
        } else {
            let x = numeric.part_value(bytes);
            if x.is_finite() {
                json!(x)
            } else {
                json!(x.to_string())
            }
        }
    };
    if numeric.complex {
        let n = numeric.part_size();
        json!([part(&element[..n]), part(&element[n..])])
    } else {
        part(element)
    }
}

/// Bytes for display: a string when they are UTF-8, else hex.
fn bytes_json(bytes: &[u8]) -> Value {
    match std::str::from_utf8(bytes) {
        Ok(text) => json!(text),
        Err(_) => json!(bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()),
    }
}

/// What one region's comparison found.
#[derive(Default)]
struct Found {
    differing: u64,
    first: Vec<Value>,
}

/// The index in the array of element `i` (C order) of `region`.
fn index_of(region: &Region, mut i: u64) -> Vec<u64> {
    let mut index = vec![0; region.shape().len()];
    for d in (0..index.len()).rev() {
        let n = region.shape()[d].max(1);
        index[d] = region.start()[d] + i % n;
        i /= n;
    }
    index
}

struct ValueOptions {
    rtol: f64,
    atol: f64,
    max_diffs: usize,
}

/// Part `p` of a complex element (0 real, 1 imaginary), or the element.
fn part_of(n: Numeric, element: &[u8], p: usize) -> &[u8] {
    if n.complex {
        &element[p * n.part_size()..(p + 1) * n.part_size()]
    } else {
        element
    }
}

/// Compares the values of two arrays of the same shape over `region`.
fn compare_region(
    a: &Array,
    b: &Array,
    compare: Compare,
    region: &Region,
    options: &ValueOptions,
) -> Result<Found, zarrkit::Error> {
    let mut found = Found::default();
    let mut record = |i: usize, va: Value, vb: Value| {
        found.differing += 1;
        if found.first.len() < options.max_diffs {
            found
                .first
                .push(json!({"index": index_of(region, i as u64), "a": va, "b": vb}));
        }
    };
    match compare {
        Compare::Vlen => {
            let (x, y) = (a.read_vlen(region)?, b.read_vlen(region)?);
            for (i, (ex, ey)) in x.iter().zip(y.iter()).enumerate() {
                if ex != ey {
                    record(i, bytes_json(ex), bytes_json(ey));
                }
            }
        }
        Compare::Bytes(size) => {
            let (x, y) = (a.read_region_bytes(region)?, b.read_region_bytes(region)?);
            for (i, (ex, ey)) in x.chunks_exact(size).zip(y.chunks_exact(size)).enumerate() {
                if ex != ey {
                    record(i, bytes_json(ex), bytes_json(ey));
                }
            }
        }
        Compare::Numbers(na, nb) => {
            let (x, y) = (a.read_region_bytes(region)?, b.read_region_bytes(region)?);
            let exact_ints =
                na.is_integer() && nb.is_integer() && options.rtol == 0.0 && options.atol == 0.0;
            let parts = if na.complex || nb.complex { 2 } else { 1 };
            for (i, (ex, ey)) in x
                .chunks_exact(na.size())
                .zip(y.chunks_exact(nb.size()))
                .enumerate()
            {
                let same = (0..parts).all(|p| {
                    // A real element against a complex one: its imaginary part is 0.
                    let (px, py) = (part_of(na, ex, p), part_of(nb, ey, p));
                    let real_x = !na.complex && p == 1;
                    let real_y = !nb.complex && p == 1;
                    if exact_ints {
                        na.part_int(px) == nb.part_int(py)
                    } else {
                        let vx = if real_x { 0.0 } else { na.part_value(px) };
                        let vy = if real_y { 0.0 } else { nb.part_value(py) };
                        close(vx, vy, options.rtol, options.atol)
                    }
                });
                if !same {
                    record(i, number_json(na, ex), number_json(nb, ey));
                }
            }
        }
    }
    Ok(found)
}

/// Compares the values of the arrays at `pa` in A and `pb` in B.
fn compare_values(a: &Array, b: &Array, options: &ValueOptions) -> anyhow::Result<Value> {
    let not_compared = |reason: String| json!({"compared": false, "reason": reason, "elements": null, "differing": null, "first": []});
    if a.shape() != b.shape() {
        return Ok(not_compared(format!(
            "the shapes differ ({:?} and {:?})",
            a.shape(),
            b.shape()
        )));
    }
    let compare = match (Numeric::of(a.data_type()), Numeric::of(b.data_type())) {
        (Some(x), Some(y)) => Compare::Numbers(x, y),
        _ if a.data_type() != b.data_type() => {
            return Ok(not_compared(format!(
                "the data types `{}` and `{}` cannot be compared",
                a.data_type(),
                b.data_type()
            )));
        }
        _ if a.data_type().is_variable_length() => Compare::Vlen,
        _ => Compare::Bytes(a.data_type().size()),
    };
    // Chunks stored on neither side hold the fill value on both when the
    // grids and fill values agree: not read.
    let skip: Option<HashSet<Vec<u64>>> = if a.metadata().chunk_grid == b.metadata().chunk_grid
        && a.fill_value() == b.fill_value()
        && a.data_type() == b.data_type()
    {
        let mut stored: HashSet<Vec<u64>> = a
            .stored_chunks()?
            .into_iter()
            .map(|c| c.chunk_coords)
            .collect();
        stored.extend(b.stored_chunks()?.into_iter().map(|c| c.chunk_coords));
        Some(stored)
    } else {
        None
    };
    let regions: Vec<Region> = GridWalk::whole(&a.chunk_grid_shape())
        .filter(|coords| skip.as_ref().is_none_or(|stored| stored.contains(coords)))
        .map(|coords| a.chunk_region(&coords))
        .filter(|region| !region.is_empty())
        .collect();
    let bar = super::progress::items(regions.len() as u64, PROGRESS_THRESHOLD, "chunks");
    // Remote on either side: as many regions in flight as requests.
    let remote = if a.store().concurrency() >= b.store().concurrency() {
        a.store()
    } else {
        b.store()
    };
    let found: Vec<Found> = super::on_io_pool(remote.as_ref(), || {
        regions
            .par_iter()
            .map(|region| {
                let found = compare_region(a, b, compare, region, options);
                if let Some(bar) = &bar {
                    bar.inc(1);
                }
                found
            })
            .collect::<Result<_, _>>()
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let mut differing = 0u64;
    let mut first = Vec::new();
    for f in found {
        differing += f.differing;
        first.extend(f.first);
    }
    // Each region keeps its first differences in C order, so the first of
    // all in C order are among them.
    first.sort_by_key(|d| {
        d["index"]
            .as_array()
            .map(|index| index.iter().filter_map(Value::as_u64).collect::<Vec<_>>())
    });
    first.truncate(options.max_diffs);
    Ok(json!({
        "compared": true,
        "reason": null,
        "elements": super::product(a.shape()),
        "differing": differing,
        "first": first,
    }))
}

/// Runs `zarrkit diff`.
///
/// # Errors
/// If a side cannot be opened or read, if A and B differ, or if writing to
/// `out` fails.
pub fn run(args: &DiffArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let a = Side::open(&args.a, args.node.as_deref())?;
    let b = Side::open(&args.b, args.node.as_deref())?;
    let options = ValueOptions {
        rtol: args.rtol,
        atol: args.atol,
        max_diffs: args.max_diffs,
    };
    let mut paths: Vec<&String> = a.nodes.keys().chain(b.nodes.keys()).collect();
    paths.sort();
    paths.dedup();
    let mut nodes = Vec::new();
    let (mut different, mut only_a, mut only_b, mut differing_elements) = (0u64, 0u64, 0u64, 0u64);
    for path in paths {
        let (ma, mb) = (a.nodes.get(path), b.nodes.get(path));
        let (ma, mb) = match (ma, mb) {
            (Some(ma), Some(mb)) => (ma, mb),
            (Some(_), None) | (None, Some(_)) => {
                let in_a = ma.is_some();
                if in_a {
                    only_a += 1;
                } else {
                    only_b += 1;
                }
                nodes.push(json!({
                    "path": path,
                    "status": if in_a { "only_in_a" } else { "only_in_b" },
                    "kind_a": ma.map(kind),
                    "kind_b": mb.map(kind),
                    "metadata": [],
                    "values": null,
                }));
                continue;
            }
            (None, None) => continue,
        };
        let mut metadata = Vec::new();
        if kind(ma) != kind(mb) {
            metadata.push(json!({"field": "node_type", "a": kind(ma), "b": kind(mb)}));
        }
        metadata.extend(metadata_differences(
            (ma, a.format),
            (mb, b.format),
            args.ignore_format,
        ));
        let values = match (ma, mb) {
            (NodeMetadata::Array(x), NodeMetadata::Array(y)) if !args.metadata_only => {
                let open = |side: &Side, m: &ArrayMetadata| -> anyhow::Result<Array> {
                    let node = side.path(path)?;
                    let mut array = Array::from_metadata(
                        Arc::clone(&side.store),
                        node.clone(),
                        side.format,
                        m.clone(),
                    )
                    .with_context(|| format!("cannot open array `{node}` of `{}`", side.display))?;
                    if let Some(budget) = args.memory_budget {
                        array.set_memory_budget(budget);
                    }
                    Ok(array)
                };
                let (xa, ya) = (open(&a, x)?, open(&b, y)?);
                Some(
                    compare_values(&xa, &ya, &options)
                        .with_context(|| format!("cannot compare the values of `{path}`"))?,
                )
            }
            _ => None,
        };
        let values_differ = values.as_ref().is_some_and(|v| {
            v["compared"] == false || v["differing"].as_u64().is_some_and(|n| n > 0)
        });
        differing_elements += values
            .as_ref()
            .and_then(|v| v["differing"].as_u64())
            .unwrap_or(0);
        let same = metadata.is_empty() && !values_differ;
        if !same {
            different += 1;
        }
        nodes.push(json!({
            "path": path,
            "status": if same { "same" } else { "different" },
            "kind_a": kind(ma),
            "kind_b": kind(mb),
            "metadata": metadata,
            "values": values,
        }));
    }
    let same = different == 0 && only_a == 0 && only_b == 0;
    let side =
        |s: &Side| json!({"store": s.display, "path": s.node.as_str(), "format": s.format.name()});
    if args.json {
        let printed = json!({
            "a": side(&a),
            "b": side(&b),
            "same": same,
            "nodes": nodes,
            "totals": {
                "nodes": nodes.len(),
                "different": different,
                "only_in_a": only_a,
                "only_in_b": only_b,
                "differing_elements": differing_elements,
            },
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&printed)?)?;
    } else {
        print_text(&a, &b, &nodes, out)?;
        if same {
            writeln!(
                out,
                "same: {} compared, no difference",
                plural(nodes.len() as u64, "node", "nodes")
            )?;
        }
    }
    out.flush()?;
    if !same {
        bail!(
            "`{}` and `{}` differ: {} of {} differ, {} only in A, {} only in B",
            a.display,
            b.display,
            different,
            plural(nodes.len() as u64, "node", "nodes"),
            only_a,
            only_b
        );
    }
    Ok(())
}

/// A JSON value as text: strings without quotes.
fn show(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn print_text(a: &Side, b: &Side, nodes: &[Value], out: &mut impl Write) -> anyhow::Result<()> {
    writeln!(
        out,
        "A: `{}` ({})\nB: `{}` ({})",
        a.display,
        a.format.name(),
        b.display,
        b.format.name()
    )?;
    for node in nodes {
        let path = show(&node["path"]);
        match node["status"].as_str() {
            Some("only_in_a") => writeln!(out, "{path}: only in A ({})", show(&node["kind_a"]))?,
            Some("only_in_b") => writeln!(out, "{path}: only in B ({})", show(&node["kind_b"]))?,
            Some("different") => {
                writeln!(out, "{path}: differs")?;
                for field in node["metadata"].as_array().into_iter().flatten() {
                    writeln!(
                        out,
                        "  {}: A: {} / B: {}",
                        show(&field["field"]),
                        show(&field["a"]),
                        show(&field["b"])
                    )?;
                }
                let values = &node["values"];
                if values["compared"] == false {
                    writeln!(out, "  values not compared: {}", show(&values["reason"]))?;
                } else if let Some(n) = values["differing"].as_u64().filter(|&n| n > 0) {
                    writeln!(
                        out,
                        "  values: {n} of {} elements differ",
                        show(&values["elements"])
                    )?;
                    for d in values["first"].as_array().into_iter().flatten() {
                        writeln!(
                            out,
                            "    {}: A: {} / B: {}",
                            show(&d["index"]),
                            show(&d["a"]),
                            show(&d["b"])
                        )?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}
