//! `zarrkit export`: an array to a NumPy `.npy` file, attributes to JSON.

use super::sink::{Sink, is_stdout};
use super::{
    Location, format_bytes, format_shape, locate, open_located, product, resolve,
    warn_stale_consolidated,
};
use crate::npy;
use anyhow::{Context, bail};
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};
use zarrkit::array::GridWalk;
use zarrkit::metadata::DataType;
use zarrkit::{Array, Node, NodePath, Region};

/// Arrays larger than this show a progress bar (when stderr is a terminal).
const PROGRESS_THRESHOLD: u64 = 64 << 20;

/// Aim for slabs of about this many bytes, in whole rows of chunks.
const SLAB_TARGET: u64 = 64 << 20;

/// The text after the options in `--help`.
pub const AFTER_LONG_HELP: &str = "\
The `.npy` file (NumPy format version 1.0, or 2.0 for very long headers) \
holds the whole array in C order, little endian, with the NumPy type of the \
data type: bool `|b1`, int8 `|i1`, int16 `<i2`, int32 `<i4`, int64 `<i8`, \
uint8 `|u1` ... uint64 `<u8`, float16 `<f2`, float32 `<f4`, float64 `<f8`, \
complex64 `<c8`, complex128 `<c16`, raw bits `r<N>` `|V<N/8>`, \
datetime64/timedelta64 `<M8[unit]`/`<m8[unit]`, byte strings (v2 `|S<n>`) \
`|S<n>`, UTF-32 strings (v2 `U`) `<U<n>`, and structs (v2 structured \
dtypes) as NumPy structured dtypes with the same field names, order, \
offsets and shapes, every field little endian. Variable-length strings \
become `<U<n>` and variable-length byte strings `|S<n>`, `n` the longest \
element (NumPy drops trailing zero bytes of `S` elements); the file never \
needs pickle to load. Chunks that are not stored read as the fill value. The array is read in slabs of \
about 64 MiB that follow the file's order (whole rows of chunks where they \
fit half of --memory-budget, default 8 GiB), so memory use stays bounded, and \
the file appears only when complete (it is written to a temporary file in the \
same directory, then renamed; on Linux that file has no name until it is \
complete, so an interrupted export leaves nothing behind). That replaces only \
a regular file: a device or FIFO (`-o /dev/stdout`, a named pipe) is written \
directly, `-` writes to standard output (the report line then goes to \
stderr), and a symbolic link is followed to the file it names, which is \
replaced (the link stays); a link to nothing is refused. --out and --attrs \
must name different files. --json reports the files written as JSON \
instead of text (see --json above). A progress bar is shown on stderr for arrays \
over 64 MiB when stderr is a terminal. A `.npy` file over 64 GiB is refused \
unless --force is given: the error says how large it would be.

The attributes file is the node's `attributes` as a pretty-printed JSON \
object. For a group only `--attrs` applies.

Load the result in Python with `numpy.load(\"temperature.npy\")`.

Examples:
  zarrkit export testdata/sample.zarr/weather/temperature --out temperature.npy
  zarrkit export testdata/sample.zarr/labels -o - | python -c 'import numpy, sys; print(numpy.load(sys.stdin.buffer))'
  zarrkit export testdata/sample.zarr /weather/temperature --out temperature.npy
  zarrkit export testdata/sample.zarr weather/elevation -o elevation.npy --attrs elevation.json
  zarrkit export testdata/sample.zarr / --attrs root-attributes.json";

/// Arguments of `zarrkit export`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("output").required(true).multiple(true)))]
pub struct ExportArgs {
    /// A store directory, or a node inside it such as `my.zarr/a/b`; with
    /// NODE, the store's root directory
    #[arg(value_name = "STORE[/PATH]")]
    pub target: PathBuf,

    /// The node inside the store: `/` for the root, or a path such as `/a/b`
    /// (the leading `/` is optional); the first argument is then the store
    /// root itself, as with `--path` in the other commands
    #[arg(value_name = "NODE")]
    pub node: Option<String>,

    /// Write the array's data to this NumPy `.npy` file (arrays only); `-`
    /// for standard output
    #[arg(long, short, value_name = "FILE.npy", group = "output")]
    pub out: Option<PathBuf>,

    /// Write the node's attributes to this JSON file; `-` for standard output
    #[arg(long, value_name = "FILE.json", group = "output")]
    pub attrs: Option<PathBuf>,

    /// Export even when the `.npy` file would be larger than 64 GiB
    #[arg(long)]
    pub force: bool,

    /// The most memory one read may hold, such as `512MiB` or `2G` (default 8 GiB)
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub memory_budget: Option<u64>,

    /// Report the files written as JSON: `{"written": [{"file", "content"
    /// ("array" or "attributes"), "path" (the node), "bytes"}]}`, on
    /// standard error when data goes to standard output
    #[arg(long)]
    pub json: bool,
}

/// Without `--force`, exports larger than this are refused: a shape edited
/// by mistake (or by an attacker) would otherwise fill the disk.
const EXPORT_LIMIT: u64 = 64 << 30;

/// The most chunks one slab touches: the library plans one piece per chunk,
/// so slabs of tiny chunks are bounded by count as well as by bytes.
const SLAB_MAX_CHUNKS: u64 = 1 << 16;

/// Parses a byte count: a number with an optional unit `K`, `M`, `G`, `T`
/// (powers of 1024, with or without `iB`/`B`), such as `512MiB` or `2G`.
///
/// # Errors
/// If the text is not such a count, or it overflows `u64`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a byte count such as `512MiB` or `2G`"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(format!("`{text}` has an unknown unit (use K, M, G or T)")),
    };
    number
        .checked_mul(1u64 << shift)
        .ok_or_else(|| format!("`{text}` is too large"))
}

/// Runs `zarrkit export`, printing one line per file written to `out`.
///
/// # Errors
/// If the store or node cannot be opened, `--out` is given for a group, the
/// data type has no NumPy equivalent, reading fails, or a file cannot be written.
pub fn run(args: &ExportArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let location = locate(&args.target, args.node.as_deref())?;
    let store = open_located(&location)?;
    let Location { node: path, .. } = location;
    warn_stale_consolidated(&store, &path);
    let mut node = Node::open(store, path.as_str())?;
    // With data on standard output, the report goes to stderr.
    let to_stdout = [&args.out, &args.attrs]
        .into_iter()
        .flatten()
        .any(|p| is_stdout(p));
    let mut stderr = std::io::stderr();
    let report: &mut dyn Write = if to_stdout { &mut stderr } else { out };
    let mut files = Vec::new();
    if let Some(npy_path) = &args.out {
        let Node::Array(array) = &mut node else {
            bail!(
                "`{path}` is a group, and only an array can be exported with --out (use --attrs for a group's attributes)"
            );
        };
        if let Some(budget) = args.memory_budget {
            array.set_memory_budget(budget);
        }
        let written = export_npy(array, npy_path, args.force)
            .with_context(|| format!("cannot export `{path}` to `{}`", npy_path.display()))?;
        if args.json {
            files.push(file_json(npy_path, "array", &path, written));
        } else {
            writeln!(
                report,
                "wrote `{}`: {path}, shape {}, {}, {}",
                npy_path.display(),
                format_shape(array.shape()),
                array.data_type(),
                format_bytes(written)
            )?;
        }
    }
    if let Some(attrs_path) = &args.attrs {
        let mut text = serde_json::to_string_pretty(node.attributes())?;
        text.push('\n');
        let mut file = Sink::create(attrs_path)?;
        file.write_all(text.as_bytes())?;
        file.commit()?;
        if args.json {
            files.push(file_json(
                attrs_path,
                "attributes",
                &path,
                text.len() as u64,
            ));
        } else {
            writeln!(
                report,
                "wrote `{}`: attributes of {path}",
                attrs_path.display()
            )?;
        }
    }
    if args.json {
        let printed = serde_json::json!({ "written": files });
        writeln!(report, "{}", serde_json::to_string_pretty(&printed)?)?;
    }
    Ok(())
}

/// One file `export --json` reports.
fn file_json(file: &Path, content: &str, node: &NodePath, bytes: u64) -> serde_json::Value {
    serde_json::json!({
        "file": file.display().to_string(),
        "content": content,
        "path": node.as_str(),
        "bytes": bytes,
    })
}

/// Refuses an export of `bytes` bytes (at least) over [`EXPORT_LIMIT`] without `--force`.
fn check_export_size(array: &Array, bytes: u64, force: bool) -> anyhow::Result<()> {
    if bytes > EXPORT_LIMIT && !force {
        bail!(
            "`{}` of shape {} would export {}{}, more than the limit of {} without --force; pass --force to export it anyway",
            array.path(),
            format_shape(array.shape()),
            if array.data_type().is_variable_length() {
                "at least "
            } else {
                ""
            },
            format_bytes(bytes),
            format_bytes(EXPORT_LIMIT)
        );
    }
    Ok(())
}

/// Writes `array` as a `.npy` file at `dest`, returning the file's size.
fn export_npy(array: &Array, dest: &Path, force: bool) -> anyhow::Result<u64> {
    if array.data_type().is_variable_length() {
        return export_vlen_npy(array, dest, force);
    }
    let data_type = array.data_type();
    let descr = npy::descr(data_type)?;
    let shape = array.shape();
    let element_size = data_type.size() as u64;
    let data_bytes = product(shape)
        .and_then(|n| n.checked_mul(element_size))
        .with_context(|| format!("an array of shape {} is too large", format_shape(shape)))?;
    check_export_size(array, data_bytes, force)?;
    let header = npy::header(&descr, shape);
    let mut file = Sink::create(dest)?;
    file.write_all(&header)?;
    let progress = super::progress::bytes(data_bytes, PROGRESS_THRESHOLD);
    for region in slabs(
        shape,
        array.chunk_shape(),
        element_size,
        slab_target(array),
        array.memory_budget(),
    ) {
        let mut bytes = array.read_region_bytes(&region)?;
        npy::native_to_little_endian(&mut bytes, data_type);
        file.write_all(&bytes)?;
        if let Some(bar) = &progress {
            bar.inc(bytes.len() as u64);
        }
    }
    file.commit()?;
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    Ok(header.len() as u64 + data_bytes)
}

/// The size assumed for one variable-length element when sizing slabs.
const VLEN_ELEMENT_ESTIMATE: u64 = 64;

/// Writes a variable-length array (`string`, `bytes`) as a fixed-width
/// `.npy`: strings as `<U<n>` and byte strings as `|S<n>`, `n` the longest
/// element (in code points or bytes; at least 1). A first pass over the
/// array finds `n`, the second writes.
fn export_vlen_npy(array: &Array, dest: &Path, force: bool) -> anyhow::Result<u64> {
    let shape = array.shape();
    let strings = match array.data_type() {
        DataType::String => true,
        DataType::Bytes => false,
        other => bail!("data type `{other}` has no NumPy equivalent without pickle"),
    };
    // Every element takes at least one code point (4 bytes) or one byte.
    let least = product(shape)
        .and_then(|n| n.checked_mul(if strings { 4 } else { 1 }))
        .unwrap_or(u64::MAX);
    check_export_size(array, least, force)?;
    let regions = || {
        slabs(
            shape,
            array.chunk_shape(),
            VLEN_ELEMENT_ESTIMATE,
            slab_target(array),
            array.memory_budget(),
        )
    };
    let mut width = 1usize;
    for region in &mut regions() {
        if strings {
            for s in array.read_strings(&region)? {
                width = width.max(s.chars().count());
            }
        } else {
            for b in array.read_byte_strings(&region)? {
                width = width.max(b.len());
            }
        }
    }
    let (descr, element_size) = if strings {
        (format!("'<U{width}'"), width * 4)
    } else {
        (format!("'|S{width}'"), width)
    };
    let data_bytes = product(shape)
        .and_then(|n| n.checked_mul(element_size as u64))
        .with_context(|| format!("an array of shape {} is too large", format_shape(shape)))?;
    let header = npy::header(&descr, shape);
    let mut file = Sink::create(dest)?;
    file.write_all(&header)?;
    let mut element = Vec::with_capacity(element_size);
    for region in &mut regions() {
        if strings {
            for s in array.read_strings(&region)? {
                element.clear();
                for c in s.chars() {
                    element.extend_from_slice(&u32::from(c).to_le_bytes());
                }
                element.resize(element_size, 0);
                file.write_all(&element)?;
            }
        } else {
            for b in array.read_byte_strings(&region)? {
                element.clear();
                element.extend_from_slice(&b);
                element.resize(element_size, 0);
                file.write_all(&element)?;
            }
        }
    }
    file.commit()?;
    Ok(header.len() as u64 + data_bytes)
}

/// The bytes to aim for per slab: [`SLAB_TARGET`], or less under a smaller memory budget.
pub(crate) fn slab_target(array: &Array) -> u64 {
    SLAB_TARGET.min(array.memory_budget() / 2).max(1)
}

/// The regions to read, in file order: slabs that are contiguous in the
/// file (C order), each about `target` bytes and touching at most
/// [`SLAB_MAX_CHUNKS`] chunks. Slabs of whole rows of chunks (along the
/// first dimension whose chunks are longer than 1) are preferred, so each
/// chunk is read once, even past `target` while they fit half the memory
/// `budget`; past that, slabs cut through chunks (a sharded array then reads
/// only the inner chunks each slab needs).
///
/// The slabs are produced one at a time: an array of 10^15 elements has
/// as many slabs as it has, and listing them first would exhaust memory.
pub(crate) fn slabs(
    shape: &[u64],
    chunk_shape: &[u64],
    element_size: u64,
    target: u64,
    budget: u64,
) -> Slabs {
    let ndim = shape.len();
    let chunk = |d: usize| chunk_shape.get(d).copied().unwrap_or(1).max(1);
    let mut block = shape.to_vec();
    if !shape.contains(&0) {
        // From the last dimension inward: take whole dimensions while they
        // fit, then as many rows as fit along the first one that does not.
        let mut inner_bytes = element_size.max(1);
        let mut inner_chunks = 1u64;
        for d in (0..ndim).rev() {
            let len = shape[d];
            let bytes = inner_bytes.saturating_mul(len);
            let chunks = inner_chunks.saturating_mul(len.div_ceil(chunk(d)));
            if bytes <= target && chunks <= SLAB_MAX_CHUNKS {
                inner_bytes = bytes;
                inner_chunks = chunks;
                continue;
            }
            let by_bytes = target / inner_bytes;
            let by_chunks = (SLAB_MAX_CHUNKS / inner_chunks).saturating_mul(chunk(d));
            let mut rows = by_bytes.min(by_chunks);
            if rows >= chunk(d) {
                rows -= rows % chunk(d);
            }
            block[d] = rows.clamp(1, len);
            for b in &mut block[..d] {
                *b = 1;
            }
            let cuts_chunks = !block[d].is_multiple_of(chunk(d)) && block[d] != len
                || (0..d).any(|outer| chunk(outer) > 1);
            if cuts_chunks {
                // The smallest slab of whole chunks: one row of chunks
                // along the first dimension whose chunks are longer than 1.
                let first = (0..ndim).find(|&d| chunk(d) > 1).unwrap_or(0);
                let rows = chunk(first).min(shape[first]);
                let trailing = &shape[first + 1..];
                let bytes = trailing
                    .iter()
                    .try_fold(rows.saturating_mul(element_size), |acc, &n| {
                        acc.checked_mul(n)
                    });
                let chunks = trailing
                    .iter()
                    .zip(first + 1..)
                    .try_fold(1u64, |acc, (&n, d)| acc.checked_mul(n.div_ceil(chunk(d))));
                let fits = bytes.is_some_and(|b| b <= budget / 2)
                    && chunks.is_some_and(|c| c <= SLAB_MAX_CHUNKS);
                if fits {
                    block = shape.to_vec();
                    block[..first].fill(1);
                    block[first] = rows;
                }
            }
            break;
        }
    }
    // The grid of slabs: `block` along each dimension, the last one cut at
    // the array's edge. An empty array has no slabs (its `block` is its
    // shape, with a zero).
    let grid: Vec<u64> = shape
        .iter()
        .zip(&block)
        .map(|(&n, &b)| if b == 0 { 0 } else { n.div_ceil(b) })
        .collect();
    Slabs {
        shape: shape.to_vec(),
        block,
        walk: GridWalk::whole(&grid),
    }
}

/// The iterator of [`slabs`].
pub(crate) struct Slabs {
    shape: Vec<u64>,
    /// The shape of a slab away from the array's edges.
    block: Vec<u64>,
    /// The positions in the grid of slabs, in C order (file order).
    walk: GridWalk,
}

impl Iterator for Slabs {
    type Item = Region;

    fn next(&mut self) -> Option<Region> {
        let slab = self.walk.next_coords()?;
        let (start, region_shape) = slab
            .iter()
            .zip(&self.block)
            .zip(&self.shape)
            .map(|((&i, &b), &n)| {
                // `i < n.div_ceil(b)`, so `i * b < n`.
                let start = i * b;
                (start, b.min(n - start))
            })
            .unzip();
        Some(Region::new(start, region_shape))
    }
}

/// Checks the arguments clap cannot: `--out` and `--attrs` must not name
/// the same file (`-o x.npy --attrs x.npy` would write one over the other),
/// also through `..` or a symbolic link, nor both standard output.
///
/// # Errors
/// The usage error's message.
pub fn check_usage(args: &ExportArgs) -> Result<(), String> {
    let (Some(npy), Some(attrs)) = (&args.out, &args.attrs) else {
        return Ok(());
    };
    let same = if is_stdout(npy) || is_stdout(attrs) {
        is_stdout(npy) && is_stdout(attrs)
    } else {
        npy == attrs || matches!((resolve(npy), resolve(attrs)), (Ok(a), Ok(b)) if a == b)
    };
    if same {
        return Err(format!(
            "--out and --attrs name the same file `{}`; give each its own",
            npy.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUDGET: u64 = 1 << 30;

    #[test]
    fn slabs_are_whole_rows_of_chunks_that_tile_the_array() {
        // Rows of chunks of 3 x 10 x 4 bytes = 120 bytes; 250 bytes fit two of them.
        let regions: Vec<Region> = slabs(&[11, 10], &[3, 5], 4, 250, BUDGET).collect();
        let starts: Vec<u64> = regions.iter().map(|r| r.start()[0]).collect();
        let rows: Vec<u64> = regions.iter().map(|r| r.shape()[0]).collect();
        assert_eq!(starts, [0, 6]);
        assert_eq!(rows, [6, 5]);
        assert!(
            regions
                .iter()
                .all(|r| r.start()[1] == 0 && r.shape()[1] == 10)
        );
    }

    #[test]
    fn a_chunk_row_larger_than_the_target_is_one_slab() {
        let regions: Vec<Region> = slabs(&[7, 1000], &[2, 1000], 8, 100, BUDGET).collect();
        let rows: Vec<u64> = regions.iter().map(|r| r.shape()[0]).collect();
        assert_eq!(rows, [2, 2, 2, 1]);
    }

    #[test]
    fn zero_dimensional_and_empty_arrays_have_one_and_no_slabs() {
        assert_eq!(
            slabs(&[], &[], 4, 100, BUDGET).collect::<Vec<_>>(),
            [Region::whole(&[])]
        );
        assert_eq!(slabs(&[0, 5], &[2, 2], 4, 100, BUDGET).count(), 0);
        assert_eq!(slabs(&[5, 0], &[2, 2], 4, 100, BUDGET).count(), 0);
    }

    /// Checks that `regions` tile `shape` in C order, each one contiguous
    /// in the file and starting where the previous one ended.
    fn assert_tiles_in_file_order(shape: &[u64], regions: &[Region]) {
        let mut offset = 0u64;
        for region in regions {
            let flat = shape
                .iter()
                .zip(region.start())
                .fold(0u64, |acc, (&n, &start)| acc * n + start);
            assert_eq!(flat, offset, "{region} does not continue the file");
            // Contiguous: after the first dimension longer than 1, every
            // dimension is whole.
            let first = region.shape().iter().position(|&n| n != 1).unwrap_or(0);
            assert_eq!(
                region.shape()[first + 1..],
                shape[first + 1..],
                "{region} is not contiguous"
            );
            offset += region.shape().iter().product::<u64>();
        }
        assert_eq!(offset, shape.iter().product::<u64>());
    }

    #[test]
    fn slabs_cut_through_rows_of_chunks_larger_than_the_budget() {
        // A row of chunks is 3 x 7 x 10 bytes = 210 bytes, more than half
        // the budget of 300: slabs of 20 bytes (two rows of the second
        // dimension) cut through chunks, and still tile the file.
        let regions: Vec<Region> = slabs(&[5, 7, 10], &[3, 4, 10], 1, 20, 300).collect();
        assert_eq!(regions[0].shape(), [1, 2, 10]);
        assert_eq!(regions.len(), 5 * 4);
        assert_tiles_in_file_order(&[5, 7, 10], &regions);
        // Within the budget, a row of chunks stays whole.
        let regions: Vec<Region> = slabs(&[5, 7, 10], &[3, 4, 10], 1, 20, 1000).collect();
        assert_eq!(regions[0].shape(), [3, 7, 10]);
        assert_tiles_in_file_order(&[5, 7, 10], &regions);
    }

    #[test]
    fn slabs_of_tiny_chunks_are_bounded_by_their_chunk_count() {
        let regions: Vec<Region> = slabs(&[1 << 20], &[1], 1, 64 << 20, BUDGET).collect();
        assert!(regions.iter().all(|r| r.shape()[0] == SLAB_MAX_CHUNKS));
        assert_tiles_in_file_order(&[1 << 20], &regions);
    }

    #[test]
    fn slabs_of_a_petabyte_array_come_one_at_a_time() {
        // Listing the slabs of 10^15 one-byte chunks first aborted the
        // process (issue #10); the iterator yields them lazily.
        let shape = [1_000_000_000_000_000u64];
        let mut regions = slabs(&shape, &[1], 1, 64 << 20, BUDGET);
        assert_eq!(
            regions.next().unwrap(),
            Region::new(vec![0], vec![SLAB_MAX_CHUNKS])
        );
        let tenth = regions.nth(8).unwrap();
        assert_eq!(tenth.start(), [9 * SLAB_MAX_CHUNKS]);
        // The 2-d case of the issue: rows of 10^12 one-byte chunks.
        let shape = [1000, 1_000_000_000_000u64];
        let mut regions = slabs(&shape, &[1, 1], 1, 64 << 20, BUDGET);
        assert_eq!(regions.next().unwrap().shape(), [1, SLAB_MAX_CHUNKS]);
    }

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("1024"), Ok(1024));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("3 kb"), Ok(3 << 10));
        assert!(parse_size("1.5G").is_err());
        assert!(parse_size("G").is_err());
        assert!(parse_size("99999999999T").is_err());
    }
}
