//! `zarrkit get`: print or save a selection of an array, in NumPy's
//! indexing syntax.

use super::node_arg::{is_array, locate_node};
use super::sink::{Sink, is_stdout};
use super::{format_bytes, format_shape, product, warn_stale_consolidated};
use crate::npy;
use crate::values::{self, Scalar};
use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use zarrkit::codec::data::VlenChunk;
use zarrkit::metadata::DataType;
use zarrkit::{Array, Node, Selection, SelectionItem, SelectionMode};

/// Tables of more elements than this are summarised (NumPy's `threshold`).
const SUMMARY_THRESHOLD: u64 = 1000;

/// The elements of one piece of a large read (see [`Values::read_with_progress`]).
const READ_PIECE_ELEMENTS: u64 = 1 << 22;

/// JSON and CSV of more elements than this show a progress bar on a terminal.
const PROGRESS_ELEMENTS: u64 = 1 << 20;

/// Table lines wrap past this many characters (NumPy's `linewidth`).
const LINE_WIDTH: usize = 75;

/// Elements kept at each end of a summarised axis (NumPy's `edgeitems`).
const EDGE_ITEMS: u64 = 3;

/// The text after the options in `--help`.
pub const AFTER_LONG_HELP: &str = "\
SELECTION is NumPy's indexing syntax, what goes between the brackets of \
`a[...]`: integers (`-1` counts from the end), slices (`10:20`, `::-1`, \
`5::2`), `...`, `None` (a new axis), integer lists (`[0, 2, -1]`) and \
boolean masks (`[True, False, True]`), separated by commas; empty or `...` \
selects everything. By default it is NumPy's own (basic and advanced) \
indexing; --oindex reads it as zarr-python's `oindex` (lists per \
dimension, combined as an outer product), --vindex as `vindex` (lists \
broadcast together into points), --blocks as `blocks` (chunk indices and \
step-1 slices of them).

--format:
  table  (default) NumPy's layout: a 1-d result as `[a b c]`, 2-d as rows of \
a grid, more dimensions as 2-d slices each under a header such as \
`[0, :, :]`. Columns are aligned; strings are quoted. A result of more \
than 1000 elements is summarised as NumPy does, showing the first and \
last 3 along each axis with `...` between, and a note on how to print \
everything (--full); for a selection of integers and slices only the \
elements shown are read.
  json   nested lists (a 0-d result is the value itself); NaN and \
infinities as the strings \"NaN\", \"Infinity\", \"-Infinity\" (as Zarr spells \
them in fill values), complex numbers as [re, im], datetimes as ISO 8601 \
strings and `NaT` as \"NaT\", timedeltas as integer counts, byte strings \
as strings when they are UTF-8 and {\"base64\": …} otherwise, raw bits as \
\"0x…\", structs as objects, object-array elements as their JSON.
  csv    at most 2 dimensions: one row per line (a 1-d result is one \
column), values as the table prints them, quoted per RFC 4180 when needed.
  npy    a NumPy .npy file (as `export` writes; strings as `<U<n>`).
  raw    the element bytes, little endian, C order (fixed-size types).
Without --format the format follows --out's extension (.npy, .json, \
.csv, .raw or .bin), else table.

--out FILE writes the result to FILE as `export` writes files (a regular \
file appears complete or not at all; `-` is standard output) and prints \
one line saying what was written. npy and raw are binary: written to a \
terminal they are refused unless `--out -` asks for it.

The whole result is read into memory (bounded by --memory-budget, default \
8 GiB); `export` streams whole arrays of any size. Results of more than \
2^20 elements show a progress bar on stderr when it is a terminal (not \
with --quiet): while they are read (in pieces along the first axis, when \
the selection starts with a slice and has no index arrays, or is --oindex) \
and while JSON or CSV is printed.

Examples:
  zarrkit get data.zarr/temperature '0, 10:20, ::-1'
  zarrkit get data.zarr /temperature '..., -1'
  zarrkit get data.zarr/temperature --oindex '[0, 5], :, [1, 2]'
  zarrkit get data.zarr/temperature --vindex '[0, 1], [2, 3], [4, 5]'
  zarrkit get data.zarr/temperature --blocks '0, 1:3'
  zarrkit get data.zarr/labels --format json | jq .
  zarrkit get data.zarr/temperature '0' --out day0.npy
  zarrkit get data.zarr/temperature '0, :5, :5' --format csv > day0.csv";

/// How the selection's items combine.
#[derive(Debug, Args)]
#[group(multiple = false)]
pub struct ModeArgs {
    /// Read SELECTION as zarr-python's `oindex`: per dimension an integer,
    /// a slice, an integer list or a mask, combined as an outer product
    #[arg(long)]
    pub oindex: bool,

    /// Read SELECTION as zarr-python's `vindex`: integer lists broadcast
    /// together into points (or one mask of the array's shape)
    #[arg(long)]
    pub vindex: bool,

    /// Read SELECTION as zarr-python's `blocks`: chunk indices and step-1
    /// slices of chunk indices
    #[arg(long)]
    pub blocks: bool,
}

impl ModeArgs {
    /// The selection mode the flags choose.
    pub fn mode(&self) -> SelectionMode {
        if self.oindex {
            SelectionMode::Orthogonal
        } else if self.vindex {
            SelectionMode::Vectorized
        } else if self.blocks {
            SelectionMode::Blocks
        } else {
            SelectionMode::Basic
        }
    }

    /// Parses `text` (`None`: everything) in the chosen mode.
    ///
    /// # Errors
    /// If the text is not a selection.
    pub fn parse(&self, text: Option<&str>) -> anyhow::Result<Selection> {
        let text = text.unwrap_or("");
        Selection::parse_with_mode(self.mode(), text)
            .with_context(|| format!("cannot parse the selection `{text}`"))
    }
}

/// The output formats of `get`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// NumPy's layout, summarised past 1000 elements
    Table,
    /// Nested JSON lists
    Json,
    /// Comma-separated values (at most 2 dimensions)
    Csv,
    /// A NumPy .npy file
    Npy,
    /// Element bytes, little endian, C order
    Raw,
}

/// Arguments of `zarrkit get`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// A store directory, URL or zip archive, or an array inside it such as
    /// `my.zarr/a/b`
    #[arg(value_name = "STORE[/PATH]")]
    pub target: PathBuf,

    /// The array inside the store (`/a/b`), then the selection in NumPy
    /// syntax (`'0, 10:20, ::-1'`; default: everything)
    #[arg(value_name = "NODE] [SELECTION", num_args = 0..=2)]
    pub rest: Vec<String>,

    #[command(flatten)]
    pub mode: ModeArgs,

    /// The output format (default: from --out's extension, else table)
    #[arg(long, short = 'f', value_enum)]
    pub format: Option<Format>,

    /// Shorthand for --format json
    #[arg(long, conflicts_with = "format")]
    pub json: bool,

    /// Write the result to FILE (`-`: standard output) instead of printing it
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Print every element of a table, however many
    #[arg(long)]
    pub full: bool,

    /// The most memory the read may hold, such as `512MiB` or `2G` (default 8 GiB)
    #[arg(long, value_name = "BYTES", value_parser = super::export::parse_size)]
    pub memory_budget: Option<u64>,
}

/// The elements read: fixed-size bytes (native order) or variable-length items.
pub enum Values {
    Fixed(Vec<u8>),
    Vlen(VlenChunk),
}

impl Values {
    /// Reads `selection` of `array`.
    ///
    /// # Errors
    /// As the library's selection reads.
    pub fn read(array: &Array, selection: &Selection) -> anyhow::Result<Self> {
        Ok(if array.data_type().is_variable_length() {
            Self::Vlen(array.read_selection_vlen(selection)?)
        } else {
            Self::Fixed(array.read_selection_bytes(selection)?)
        })
    }

    /// Reads `selection` of `array` (`total` elements) with a progress bar
    /// on a terminal: in pieces along the selection's first item when that
    /// is a slice whose output axis comes first (an orthogonal selection,
    /// or a basic one without index arrays, which could move the axes),
    /// else whole.
    ///
    /// # Errors
    /// As the library's selection reads.
    pub fn read_with_progress(
        array: &Array,
        selection: &Selection,
        total: u64,
    ) -> anyhow::Result<Self> {
        let ordered = match selection.mode() {
            SelectionMode::Orthogonal => true,
            SelectionMode::Basic => !selection.items().iter().any(|item| {
                matches!(
                    item,
                    SelectionItem::Indices { .. } | SelectionItem::Mask { .. }
                )
            }),
            _ => false,
        };
        let Some(bar) =
            super::progress::items(total, PROGRESS_ELEMENTS, "elements read").filter(|_| ordered)
        else {
            return Self::read(array, selection);
        };
        let read = Self::read_pieces(array, selection, total, READ_PIECE_ELEMENTS, |n| {
            bar.inc(n);
        });
        bar.finish_and_clear();
        read
    }

    /// Reads `selection` (`total` elements, its first item's output axis
    /// first) in pieces of about `piece_elements` along that item, calling
    /// `done` with each piece's number of elements.
    fn read_pieces(
        array: &Array,
        selection: &Selection,
        total: u64,
        piece_elements: u64,
        mut done: impl FnMut(u64),
    ) -> anyhow::Result<Self> {
        let pieces = super::stats::split_selection(array, selection, total, piece_elements);
        let mut whole = if array.data_type().is_variable_length() {
            Self::Vlen(VlenChunk::with_capacity(
                usize::try_from(total).unwrap_or(0),
            ))
        } else {
            Self::Fixed(Vec::new())
        };
        for piece in &pieces {
            match (&mut whole, Self::read(array, piece)?) {
                (Self::Fixed(all), Self::Fixed(part)) => {
                    all.extend_from_slice(&part);
                    done((part.len() / array.data_type().size().max(1)) as u64);
                }
                (Self::Vlen(all), Self::Vlen(part)) => {
                    for item in part.iter() {
                        all.push(item);
                    }
                    done(part.len() as u64);
                }
                _ => unreachable!("one array reads one kind of values"),
            }
        }
        Ok(whole)
    }

    /// Element `i`.
    pub fn get(&self, data_type: &DataType, i: usize) -> Scalar {
        match self {
            Self::Fixed(bytes) => {
                let size = data_type.size();
                values::decode(data_type, &bytes[i * size..(i + 1) * size])
            }
            Self::Vlen(chunk) => values::decode_vlen(data_type, chunk.get(i).unwrap_or_default()),
        }
    }
}

/// Runs `zarrkit get`.
///
/// # Errors
/// If the store or array cannot be opened, the selection does not parse or
/// fit the array, reading fails, or the output cannot be written.
pub fn run(args: &GetArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let Opened {
        path,
        array,
        text,
        selection,
        shape,
    } = open_selection(
        &args.target,
        &args.rest,
        &args.mode,
        args.memory_budget,
        "reads",
    )?;
    let text = text.as_deref();
    let format = if args.json {
        Format::Json
    } else {
        args.format
            .or_else(|| args.out.as_deref().and_then(format_of_extension))
            .unwrap_or(Format::Table)
    };
    let to_stdout = args.out.as_deref().is_none_or(is_stdout);
    if matches!(format, Format::Npy | Format::Raw)
        && args.out.is_none()
        && std::io::stdout().is_terminal()
    {
        bail!(
            "refusing to write {} bytes to a terminal; redirect standard output, or give --out FILE (`--out -` writes to the terminal anyway)",
            if format == Format::Npy { ".npy" } else { "raw" }
        );
    }
    if format == Format::Csv && shape.len() > 2 {
        bail!(
            "csv holds at most 2 dimensions, and the selection has shape {}; select fewer (such as `0, :, :`) or use --format json or npy",
            format_shape(&shape)
        );
    }
    let mut bytes = Vec::new();
    let data_type = array.data_type().clone();
    let n = product(&shape).context("the selection is too large")?;
    {
        let sink: &mut dyn Write = if to_stdout { &mut *out } else { &mut bytes };
        match format {
            Format::Table => {
                let summarise = n > SUMMARY_THRESHOLD && !args.full;
                let kept = kept_indices(&shape, summarise);
                let read = read_kept(&array, &selection, &shape, &kept)?;
                write_table(sink, &shape, &kept, &|i| read.get(&data_type, i))?;
                if summarise {
                    writeln!(
                        sink,
                        "({n} elements of shape {}, summarised; --full prints them all, --format json, csv or npy writes them for programs)",
                        format_shape(&shape)
                    )?;
                }
            }
            Format::Json | Format::Csv => {
                let read = Values::read_with_progress(&array, &selection, n)?;
                // Printing elements one by one is the slow part of a large result.
                let bar = super::progress::items(n, PROGRESS_ELEMENTS, "elements");
                let value = |i: usize| {
                    if let Some(bar) = &bar
                        && i.is_multiple_of(4096)
                    {
                        bar.set_position(i as u64);
                    }
                    read.get(&data_type, i)
                };
                if format == Format::Json {
                    write_json(sink, &shape, &value)?;
                    writeln!(sink)?;
                } else {
                    write_csv(sink, &shape, &value)?;
                }
                if let Some(bar) = bar {
                    bar.finish_and_clear();
                }
            }
            Format::Npy => {
                let read = Values::read_with_progress(&array, &selection, n)?;
                write_npy(sink, &data_type, &shape, read)?;
            }
            Format::Raw => {
                let Values::Fixed(mut raw) = Values::read_with_progress(&array, &selection, n)?
                else {
                    bail!(
                        "`{path}` has variable-length elements (`{data_type}`), which raw bytes cannot hold; use --format json or npy"
                    );
                };
                npy::native_to_little_endian(&mut raw, &data_type);
                sink.write_all(&raw)?;
            }
        }
        sink.flush()?;
    }
    if let Some(dest) = args.out.as_deref().filter(|p| !is_stdout(p)) {
        let mut file = Sink::create(dest)?;
        file.write_all(&bytes)?;
        file.commit()
            .with_context(|| format!("cannot write `{}`", dest.display()))?;
        writeln!(
            out,
            "wrote `{}`: {path}[{}], shape {}, {data_type}, {}, {}",
            dest.display(),
            text.unwrap_or("..."),
            format_shape(&shape),
            format
                .to_possible_value()
                .map_or_else(String::new, |v| v.get_name().to_string()),
            format_bytes(bytes.len() as u64)
        )?;
    }
    Ok(())
}

/// An array opened for `get` or `set`, and its selection.
pub struct Opened {
    pub path: zarrkit::NodePath,
    pub array: Array,
    /// The selection as given (trimmed), `None` for everything.
    pub text: Option<String>,
    pub selection: Selection,
    /// The selection's shape (so it fits the array).
    pub shape: Vec<u64>,
}

/// Opens the array that `target` and `rest` name (see
/// [`locate_node`]) with `memory_budget`, warning about stale consolidated
/// metadata, and parses and checks the selection after it.
///
/// # Errors
/// If the store or array cannot be opened, it is a group (the message
/// says the command `verb` arrays), or the selection does not parse or fit.
pub fn open_selection(
    target: &Path,
    rest: &[String],
    mode: &ModeArgs,
    memory_budget: Option<u64>,
    verb: &str,
) -> anyhow::Result<Opened> {
    let target = locate_node(target, rest, 1, is_array)?;
    warn_stale_consolidated(&target.store, &target.node);
    let path = target.node;
    let mut array = match Node::open(target.store, path.as_str())? {
        Node::Array(array) => array,
        Node::Group(_) => bail!("`{path}` is a group; this command {verb} arrays"),
    };
    if let Some(budget) = memory_budget {
        array.set_memory_budget(budget);
    }
    let text = target.rest.first().map(|s| s.trim().to_string());
    let selection = mode.parse(text.as_deref())?;
    let shape = array.selection_shape(&selection)?;
    Ok(Opened {
        path,
        array,
        text,
        selection,
        shape,
    })
}

/// The format an output file's extension names.
fn format_of_extension(path: &Path) -> Option<Format> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "npy" => Format::Npy,
        "json" => Format::Json,
        "csv" => Format::Csv,
        "raw" | "bin" => Format::Raw,
        "txt" => Format::Table,
        _ => return None,
    })
}

/// The indices shown along each axis: all of them, or when summarising the
/// first and last [`EDGE_ITEMS`] of each axis longer than twice that.
fn kept_indices(shape: &[u64], summarise: bool) -> Vec<Vec<u64>> {
    // With many dimensions, 6 per axis would still be too many to print.
    let edge = if summarise && shape.iter().filter(|&&n| n > 2).count() > 6 {
        1
    } else {
        EDGE_ITEMS
    };
    shape
        .iter()
        .map(|&n| {
            if summarise && n > 2 * edge {
                (0..edge).chain(n - edge..n).collect()
            } else {
                (0..n).collect()
            }
        })
        .collect()
}

/// The elements at the `kept` indices (an outer product, in C order),
/// read alone when the selection is integers and slices only (composed
/// into one orthogonal selection of those indices), else picked from the
/// whole result.
fn read_kept(
    array: &Array,
    selection: &Selection,
    shape: &[u64],
    kept: &[Vec<u64>],
) -> anyhow::Result<Values> {
    let everything = kept.iter().zip(shape).all(|(k, &n)| k.len() as u64 == n);
    if !everything && let Some(composed) = compose(array.shape(), selection, shape, kept) {
        return Values::read(array, &composed);
    }
    let all = Values::read(array, selection)?;
    if everything {
        return Ok(all);
    }
    let picked = outer_offsets(shape, kept);
    Ok(match all {
        Values::Fixed(bytes) => {
            let size = array.data_type().size();
            let mut out = Vec::with_capacity(picked.len() * size);
            for i in picked {
                out.extend_from_slice(&bytes[i * size..(i + 1) * size]);
            }
            Values::Fixed(out)
        }
        Values::Vlen(chunk) => Values::Vlen(VlenChunk::from_items(
            picked.iter().map(|&i| chunk.get(i).unwrap_or_default()),
        )),
    })
}

/// The C-order offsets in an array of `shape` of the outer product of `kept`.
fn outer_offsets(shape: &[u64], kept: &[Vec<u64>]) -> Vec<usize> {
    let mut offsets = vec![0usize];
    for (d, k) in kept.iter().enumerate() {
        let n = shape[d] as usize;
        offsets = offsets
            .iter()
            .flat_map(|&o| k.iter().map(move |&i| o * n + i as usize))
            .collect();
    }
    offsets
}

/// NumPy's slice normalisation: the first index, the step and the length.
fn normalize(slice: &zarrkit::Slice, n: u64) -> Option<(i128, i128, u64)> {
    let n = i128::from(n);
    let step = i128::from(slice.step.unwrap_or(1));
    if step == 0 {
        return None;
    }
    let bound = |v: Option<i64>, default: i128, lo: i128, hi: i128| match v {
        None => default,
        Some(v) => {
            let v = i128::from(v);
            let v = if v < 0 { v + n } else { v };
            v.clamp(lo, hi)
        }
    };
    let (start, len) = if step > 0 {
        let start = bound(slice.start, 0, 0, n);
        let stop = bound(slice.stop, n, 0, n);
        (start, (stop - start + step - 1).div_euclid(step).max(0))
    } else {
        let start = bound(slice.start, n - 1, -1, n - 1);
        let stop = bound(slice.stop, -1, -1, n - 1);
        (start, (start - stop - step - 1).div_euclid(-step).max(0))
    };
    Some((start, step, u64::try_from(len).ok()?))
}

/// For a selection of integers, slices, `...` and new axes (basic or
/// orthogonal), the orthogonal selection of the array's elements at the
/// `kept` indices of its result; `None` for any other selection.
fn compose(
    array_shape: &[u64],
    selection: &Selection,
    shape: &[u64],
    kept: &[Vec<u64>],
) -> Option<Selection> {
    if !matches!(
        selection.mode(),
        SelectionMode::Basic | SelectionMode::Orthogonal
    ) {
        return None;
    }
    let items = selection.items();
    let used = items
        .iter()
        .filter(|i| matches!(i, SelectionItem::Index(_) | SelectionItem::Slice(_)))
        .count();
    if used > array_shape.len()
        || !items.iter().all(|i| {
            matches!(
                i,
                SelectionItem::Index(_)
                    | SelectionItem::Slice(_)
                    | SelectionItem::Ellipsis
                    | SelectionItem::NewAxis
            )
        })
    {
        return None;
    }
    let mut expanded = Vec::new();
    let mut ellipsis = false;
    for item in items {
        if matches!(item, SelectionItem::Ellipsis) {
            if ellipsis {
                return None;
            }
            ellipsis = true;
            expanded.extend(std::iter::repeat_n(
                SelectionItem::full(),
                array_shape.len() - used,
            ));
        } else {
            expanded.push(item.clone());
        }
    }
    if !ellipsis {
        expanded.extend(std::iter::repeat_n(
            SelectionItem::full(),
            array_shape.len() - used,
        ));
    }
    let mut dim = 0;
    let mut axis = 0;
    let mut out = Vec::new();
    for item in &expanded {
        match item {
            SelectionItem::Index(i) => {
                out.push(SelectionItem::Index(*i));
                dim += 1;
            }
            SelectionItem::Slice(slice) => {
                let (start, step, len) = normalize(slice, array_shape[dim])?;
                if shape.get(axis) != Some(&len) {
                    return None;
                }
                let coords = kept[axis]
                    .iter()
                    .map(|&k| i64::try_from(start + step * i128::from(k)).ok())
                    .collect::<Option<Vec<i64>>>()?;
                out.push(SelectionItem::indices(coords));
                dim += 1;
                axis += 1;
            }
            SelectionItem::NewAxis => {
                if shape.get(axis) != Some(&1) {
                    return None;
                }
                axis += 1;
            }
            _ => return None,
        }
    }
    (axis == shape.len()).then(|| Selection::orthogonal(out))
}

/// Whether an element prints left-aligned (text) rather than right-aligned.
fn is_text(value: &Scalar) -> bool {
    matches!(value, Scalar::Str(_) | Scalar::Bytes(_) | Scalar::Json(_))
}

/// Writes the table: `kept` are the indices shown along each axis of
/// `shape`, `value(i)` the `i`-th element of their outer product.
fn write_table(
    out: &mut dyn Write,
    shape: &[u64],
    kept: &[Vec<u64>],
    value: &dyn Fn(usize) -> Scalar,
) -> anyhow::Result<()> {
    let count: usize = kept.iter().map(Vec::len).product();
    let scalars: Vec<Scalar> = (0..count).map(value).collect();
    // Text is padded only where it lines up in columns (2 dimensions or more).
    let mut cells: Vec<(String, bool)> = scalars
        .iter()
        .map(|v| (values::to_table_text(v), is_text(v) && shape.len() > 1))
        .collect();
    let is_text_1d: Vec<bool> = scalars
        .iter()
        .map(|v| shape.len() == 1 && is_text(v))
        .collect();
    // Floats line up on their decimal points, as NumPy prints them
    // (`[0.   0.25 10.5 ]`); `nan` and `inf` align right.
    let floats = !scalars.is_empty()
        && scalars.iter().all(|v| matches!(v, Scalar::Float(..)))
        && cells.iter().all(|(t, _)| !t.contains('e'));
    if floats {
        let split = |t: &str| t.split_once('.').map(|(a, b)| (a.len(), b.len()));
        let left = cells
            .iter()
            .filter_map(|(t, _)| split(t))
            .map(|(a, _)| a)
            .max();
        let right = cells
            .iter()
            .filter_map(|(t, _)| split(t))
            .map(|(_, b)| b)
            .max();
        if let (Some(left), Some(right)) = (left, right) {
            for (text, _) in &mut cells {
                if let Some((int, frac)) = text.split_once('.') {
                    *text = format!("{int:>left$}.{frac:<right$}");
                }
            }
        }
    }
    let width = cells
        .iter()
        .map(|(t, _)| t.chars().count())
        .max()
        .unwrap_or(0);
    let cell = |i: usize| {
        let (text, left) = &cells[i];
        if *left {
            format!("{text:<width$}")
        } else if is_text_1d[i] {
            text.clone()
        } else {
            format!("{text:>width$}")
        }
    };
    // One line of the last axis: `[a b ... y z]`.
    let line = |base: usize| -> String {
        let Some(last) = kept.last() else {
            return String::new();
        };
        let mut parts = Vec::new();
        for (j, &k) in last.iter().enumerate() {
            if j > 0 && k != last[j - 1] + 1 {
                parts.push("...".to_string());
            }
            parts.push(cell(base + j));
        }
        // Wrapped at NumPy's line width, continuation lines indented past
        // the brackets that open the row.
        let depth = shape.len().min(2);
        let mut text = String::from("[");
        let mut width = depth;
        for (j, part) in parts.iter().enumerate() {
            let len = part.chars().count();
            if j > 0 {
                // NumPy keeps room for the closing bracket.
                if width + 1 + len >= LINE_WIDTH {
                    text.truncate(text.trim_end().len());
                    text.push('\n');
                    text.push_str(&" ".repeat(depth));
                    width = depth;
                } else {
                    text.push(' ');
                    width += 1;
                }
            }
            text.push_str(part);
            width += len;
        }
        format!("{}]", text.trim_end())
    };
    if count == 0 && !shape.is_empty() {
        // NumPy prints an empty array as `[]` whatever its shape.
        writeln!(out, "[]")?;
        return Ok(());
    }
    match shape.len() {
        0 => writeln!(out, "{}", cells.first().map_or("", |(t, _)| t.as_str()))?,
        1 => writeln!(out, "{}", line(0))?,
        ndim => {
            let rows = &kept[ndim - 2];
            let row_len = kept[ndim - 1].len();
            let plane = rows.len() * row_len;
            let outer = &kept[..ndim - 2];
            let planes: usize = outer.iter().map(Vec::len).product();
            let mut previous: Option<Vec<u64>> = None;
            for p in 0..planes {
                // The plane's indices along the outer axes.
                let mut index = Vec::with_capacity(outer.len());
                let mut rest = p;
                for k in outer.iter().rev() {
                    index.push(k[rest % k.len()]);
                    rest /= k.len();
                }
                index.reverse();
                if ndim > 2 {
                    let skipped = previous.as_ref().is_some_and(|prev: &Vec<u64>| {
                        index
                            .iter()
                            .zip(prev)
                            .any(|(&now, &before)| now > before + 1)
                    });
                    if skipped {
                        writeln!(out, "...\n")?;
                    }
                    let header: Vec<String> = index
                        .iter()
                        .map(u64::to_string)
                        .chain([":".to_string(), ":".to_string()])
                        .collect();
                    writeln!(out, "[{}]", header.join(", "))?;
                }
                for (r, &row) in rows.iter().enumerate() {
                    if r > 0 && row != rows[r - 1] + 1 {
                        writeln!(out, " ...")?;
                    }
                    let open = if r == 0 { "[" } else { " " };
                    let close = if r + 1 == rows.len() { "]" } else { "" };
                    writeln!(out, "{open}{}{close}", line(p * plane + r * row_len))?;
                }
                if ndim > 2 && p + 1 < planes {
                    writeln!(out)?;
                }
                previous = Some(index);
            }
        }
    }
    Ok(())
}

/// Writes nested JSON lists of `shape`.
fn write_json(
    out: &mut dyn Write,
    shape: &[u64],
    value: &dyn Fn(usize) -> Scalar,
) -> anyhow::Result<()> {
    fn level(
        out: &mut dyn Write,
        shape: &[u64],
        base: &mut usize,
        value: &dyn Fn(usize) -> Scalar,
    ) -> anyhow::Result<()> {
        let Some((&n, rest)) = shape.split_first() else {
            serde_json::to_writer(&mut *out, &values::to_json(&value(*base)))?;
            *base += 1;
            return Ok(());
        };
        out.write_all(b"[")?;
        for i in 0..n {
            if i > 0 {
                out.write_all(b", ")?;
            }
            level(out, rest, base, value)?;
        }
        out.write_all(b"]")?;
        Ok(())
    }
    let mut base = 0;
    level(out, shape, &mut base, value)
}

/// One CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// Writes at most 2 dimensions as CSV.
fn write_csv(
    out: &mut dyn Write,
    shape: &[u64],
    value: &dyn Fn(usize) -> Scalar,
) -> anyhow::Result<()> {
    let (rows, cols) = match shape {
        [] => (1, 1),
        [n] => (*n, 1),
        [r, c] => (*r, *c),
        _ => bail!("csv holds at most 2 dimensions"),
    };
    let mut i = 0usize;
    for _ in 0..rows {
        let fields: Vec<String> = (0..cols)
            .map(|_| {
                let text = values::to_text(&value(i), false);
                i += 1;
                csv_field(&text)
            })
            .collect();
        writeln!(out, "{}", fields.join(","))?;
    }
    Ok(())
}

/// Writes a `.npy` file: fixed-size types as `export` writes them,
/// `string` as `<U<n>` and `bytes` as `|S<n>` of the longest element.
fn write_npy(
    out: &mut dyn Write,
    data_type: &DataType,
    shape: &[u64],
    read: Values,
) -> anyhow::Result<()> {
    match read {
        Values::Fixed(mut bytes) => {
            let descr = npy::descr(data_type)?;
            out.write_all(&npy::header(&descr, shape))?;
            npy::native_to_little_endian(&mut bytes, data_type);
            out.write_all(&bytes)?;
        }
        Values::Vlen(chunk) => {
            let strings = match data_type {
                DataType::String => true,
                DataType::Bytes => false,
                other => bail!(
                    "data type `{other}` has no NumPy equivalent without pickle; use --format json"
                ),
            };
            let width = chunk
                .iter()
                .map(|b| {
                    if strings {
                        String::from_utf8_lossy(b).chars().count()
                    } else {
                        b.len()
                    }
                })
                .max()
                .unwrap_or(0)
                .max(1);
            let (descr, size) = if strings {
                (format!("'<U{width}'"), width * 4)
            } else {
                (format!("'|S{width}'"), width)
            };
            out.write_all(&npy::header(&descr, shape))?;
            let mut element = Vec::with_capacity(size);
            for item in chunk.iter() {
                element.clear();
                if strings {
                    for c in String::from_utf8_lossy(item).chars() {
                        element.extend_from_slice(&u32::from(c).to_le_bytes());
                    }
                } else {
                    element.extend_from_slice(item);
                }
                element.resize(size, 0);
                out.write_all(&element)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_in_pieces_equal_the_whole_read() {
        use std::sync::Arc;
        use zarrkit::metadata::DataType;
        use zarrkit::store::MemoryStore;
        let array = Array::builder(&[9, 4, 3], DataType::Int16, &[2, 3, 2])
            .create(Arc::new(MemoryStore::new()), "/a")
            .unwrap();
        let values: Vec<i16> = (0..108).collect();
        array
            .write_region(&zarrkit::Region::whole(&[9, 4, 3]), &values)
            .unwrap();
        for selection in [
            Selection::parse("::-1, 1:, ::2").unwrap(),
            Selection::parse("7:0:-3, 2").unwrap(),
            Selection::parse_orthogonal("1:8:2, [3, 0], [2, 2, 1]").unwrap(),
        ] {
            let shape = array.selection_shape(&selection).unwrap();
            let total: u64 = shape.iter().product();
            let Values::Fixed(whole) = Values::read(&array, &selection).unwrap() else {
                panic!("int16 reads fixed-size values");
            };
            let mut sizes = Vec::new();
            // Pieces of about 5 elements: several per selection.
            let Values::Fixed(pieces) =
                Values::read_pieces(&array, &selection, total, 5, |n| sizes.push(n)).unwrap()
            else {
                panic!("int16 reads fixed-size values");
            };
            assert!(sizes.len() > 1, "{selection:?}: {sizes:?}");
            assert_eq!(sizes.iter().sum::<u64>(), total);
            assert_eq!(pieces, whole, "{selection:?}");
        }
    }

    fn table(shape: &[u64], summarise: bool) -> String {
        let kept = kept_indices(shape, summarise);
        let offsets = outer_offsets(shape, &kept);
        let mut out = Vec::new();
        write_table(&mut out, shape, &kept, &|i| Scalar::Int(offsets[i] as i128)).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn tables_follow_numpys_layout() {
        assert_eq!(table(&[3], false), "[0 1 2]\n");
        assert_eq!(table(&[0, 3], false), "[]\n");
        assert_eq!(table(&[], false), "0\n");
        // Wrapped at 75 characters, as NumPy wraps `np.arange(40)`.
        assert_eq!(
            table(&[40], false),
            "[ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\n 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39]\n"
        );
        let wide = table(&[2, 20], false);
        assert!(wide.starts_with("[[ 0  1  2"), "{wide}");
        assert_eq!(table(&[2, 3], false), "[[0 1 2]\n [3 4 5]]\n");
        assert_eq!(
            table(&[2, 1, 2], false),
            "[0, :, :]\n[[0 1]]\n\n[1, :, :]\n[[2 3]]\n"
        );
        assert_eq!(
            table(&[2000], true),
            "[   0    1    2 ... 1997 1998 1999]\n"
        );
        let big = table(&[40, 40], true);
        assert!(
            big.starts_with("[[   0    1    2 ...   37   38   39]\n"),
            "{big}"
        );
        assert!(
            big.contains("\n ...\n [1480 1481 1482 ... 1517 1518 1519]"),
            "{big}"
        );
    }

    #[test]
    fn slices_normalize_as_numpy() {
        let s = |a, b, c| zarrkit::Slice::new(a, b, c);
        assert_eq!(normalize(&s(None, None, Some(-1)), 5), Some((4, -1, 5)));
        assert_eq!(normalize(&s(Some(-2), None, None), 5), Some((3, 1, 2)));
        assert_eq!(
            normalize(&s(Some(8), Some(1), Some(-3)), 10),
            Some((8, -3, 3))
        );
        assert_eq!(normalize(&s(Some(1), Some(1), None), 10), Some((1, 1, 0)));
        assert_eq!(
            normalize(&s(None, Some(-100), Some(-1)), 10),
            Some((9, -1, 10))
        );
    }

    #[test]
    fn csv_fields_are_quoted_when_needed() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }
}
