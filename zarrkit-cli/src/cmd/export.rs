//! `zarrkit export`: an array to a NumPy `.npy` file, attributes to JSON.

use super::{format_bytes, format_shape, open_store, product};
use crate::npy;
use anyhow::{Context, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
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
needs pickle to load. Chunks that are not stored read as the fill value. The array is read in slabs of whole \
rows of chunks along the first dimension, so memory use stays bounded, and \
the file appears only when complete (it is written to a temporary file in the \
same directory, then renamed). A progress bar is shown on stderr for arrays \
over 64 MiB when stderr is a terminal.

The attributes file is the node's `attributes` as a pretty-printed JSON \
object. For a group only `--attrs` applies.

Load the result in Python with `numpy.load(\"temperature.npy\")`.

Examples:
  zarrkit export testdata/sample.zarr /weather/temperature --out temperature.npy
  zarrkit export testdata/sample.zarr weather/elevation -o elevation.npy --attrs elevation.json
  zarrkit export testdata/sample.zarr / --attrs root-attributes.json";

/// Arguments of `zarrkit export`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("output").required(true).multiple(true)))]
pub struct ExportArgs {
    /// The store's root directory (the one holding the root `zarr.json`)
    #[arg(value_name = "STORE")]
    pub store: PathBuf,

    /// The node: `/` for the root, or a path such as `/a/b` (the leading `/` is optional)
    #[arg(value_name = "NODE")]
    pub node: String,

    /// Write the array's data to this NumPy `.npy` file (arrays only)
    #[arg(long, short, value_name = "FILE.npy", group = "output")]
    pub out: Option<PathBuf>,

    /// Write the node's attributes to this JSON file
    #[arg(long, value_name = "FILE.json", group = "output")]
    pub attrs: Option<PathBuf>,
}

/// Runs `zarrkit export`, printing one line per file written to `out`.
///
/// # Errors
/// If the store or node cannot be opened, `--out` is given for a group, the
/// data type has no NumPy equivalent, reading fails, or a file cannot be written.
pub fn run(args: &ExportArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let path = NodePath::new(&args.node)?;
    let store = open_store(&args.store)?;
    let node = Node::open(store, path.as_str())?;
    if let Some(npy_path) = &args.out {
        let Node::Array(array) = &node else {
            bail!(
                "`{path}` is a group, and only an array can be exported with --out (use --attrs for a group's attributes)"
            );
        };
        let written = export_npy(array, npy_path)
            .with_context(|| format!("cannot export `{path}` to `{}`", npy_path.display()))?;
        writeln!(
            out,
            "wrote `{}`: {path}, shape {}, {}, {}",
            npy_path.display(),
            format_shape(array.shape()),
            array.data_type(),
            format_bytes(written)
        )?;
    }
    if let Some(attrs_path) = &args.attrs {
        let mut text = serde_json::to_string_pretty(node.attributes())?;
        text.push('\n');
        let mut file = AtomicFile::create(attrs_path)?;
        file.write_all(text.as_bytes())?;
        file.commit()?;
        writeln!(
            out,
            "wrote `{}`: attributes of {path}",
            attrs_path.display()
        )?;
    }
    Ok(())
}

/// Writes `array` as a `.npy` file at `dest`, returning the file's size.
fn export_npy(array: &Array, dest: &Path) -> anyhow::Result<u64> {
    if array.data_type().is_variable_length() {
        return export_vlen_npy(array, dest);
    }
    let data_type = array.data_type();
    let descr = npy::descr(data_type)?;
    let shape = array.shape();
    let element_size = data_type.size() as u64;
    let data_bytes = product(shape)
        .and_then(|n| n.checked_mul(element_size))
        .with_context(|| format!("an array of shape {} is too large", format_shape(shape)))?;
    let header = npy::header(&descr, shape);
    let mut file = AtomicFile::create(dest)?;
    file.write_all(&header)?;
    let progress = progress_bar(data_bytes);
    for region in slabs(shape, array.chunk_shape(), element_size, SLAB_TARGET) {
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
fn export_vlen_npy(array: &Array, dest: &Path) -> anyhow::Result<u64> {
    let shape = array.shape();
    let strings = match array.data_type() {
        DataType::String => true,
        DataType::Bytes => false,
        other => bail!("data type `{other}` has no NumPy equivalent without pickle"),
    };
    let regions = slabs(
        shape,
        array.chunk_shape(),
        VLEN_ELEMENT_ESTIMATE,
        SLAB_TARGET,
    );
    let mut width = 1usize;
    for region in &regions {
        if strings {
            for s in array.read_strings(region)? {
                width = width.max(s.chars().count());
            }
        } else {
            for b in array.read_byte_strings(region)? {
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
    let mut file = AtomicFile::create(dest)?;
    file.write_all(&header)?;
    let mut element = Vec::with_capacity(element_size);
    for region in &regions {
        if strings {
            for s in array.read_strings(region)? {
                element.clear();
                for c in s.chars() {
                    element.extend_from_slice(&u32::from(c).to_le_bytes());
                }
                element.resize(element_size, 0);
                file.write_all(&element)?;
            }
        } else {
            for b in array.read_byte_strings(region)? {
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

fn progress_bar(total: u64) -> Option<ProgressBar> {
    if total <= PROGRESS_THRESHOLD || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template(
        "{wide_bar} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta}",
    ) {
        bar.set_style(style);
    }
    Some(bar)
}

/// The regions to read, in file order: slabs of whole rows of chunks along
/// the first dimension, several rows of chunks at a time when they are
/// smaller than `target` bytes.
fn slabs(shape: &[u64], chunk_shape: &[u64], element_size: u64, target: u64) -> Vec<Region> {
    let Some((&rows, rest)) = shape.split_first() else {
        // A 0-d array is one element.
        return vec![Region::whole(shape)];
    };
    if shape.contains(&0) {
        return Vec::new();
    }
    let chunk_rows = chunk_shape.first().copied().unwrap_or(1).max(1);
    let chunk_row_bytes = product(rest)
        .and_then(|n| n.checked_mul(chunk_rows))
        .and_then(|n| n.checked_mul(element_size))
        .unwrap_or(u64::MAX);
    let rows_per_slab = chunk_rows.saturating_mul((target / chunk_row_bytes.max(1)).max(1));
    let mut regions = Vec::new();
    let mut start = 0;
    while start < rows {
        let n = rows_per_slab.min(rows - start);
        let mut region_start = vec![0; shape.len()];
        region_start[0] = start;
        let mut region_shape = shape.to_vec();
        region_shape[0] = n;
        regions.push(Region::new(region_start, region_shape));
        start += n;
    }
    regions
}

/// A file written under a temporary name in the destination's directory and
/// renamed over the destination on [`AtomicFile::commit`], so readers never
/// see a partial file; dropped uncommitted, the temporary file is removed.
struct AtomicFile {
    temp: PathBuf,
    dest: PathBuf,
    file: Option<BufWriter<File>>,
}

impl AtomicFile {
    fn create(dest: &Path) -> anyhow::Result<Self> {
        if dest.is_dir() {
            bail!("`{}` is a directory", dest.display());
        }
        let name = dest
            .file_name()
            .with_context(|| format!("`{}` does not name a file", dest.display()))?;
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        for attempt in 0u32.. {
            let mut temp_name = std::ffi::OsString::from(".");
            temp_name.push(name);
            temp_name.push(format!(".{}.{attempt}.tmp", std::process::id()));
            let temp = dir.join(temp_name);
            match OpenOptions::new().write(true).create_new(true).open(&temp) {
                Ok(file) => {
                    return Ok(Self {
                        temp,
                        dest: dest.to_path_buf(),
                        file: Some(BufWriter::with_capacity(1 << 20, file)),
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {}
                Err(e) => {
                    return Err(e).with_context(|| {
                        format!("cannot create a temporary file in `{}`", dir.display())
                    });
                }
            }
        }
        bail!("cannot create a temporary file in `{}`", dir.display())
    }

    fn write_all(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        let file = self.file.as_mut().context("the file is already closed")?;
        file.write_all(bytes)
            .with_context(|| format!("cannot write `{}`", self.temp.display()))
    }

    fn commit(mut self) -> anyhow::Result<()> {
        let file = self.file.take().context("the file is already closed")?;
        let file = file
            .into_inner()
            .map_err(std::io::IntoInnerError::into_error)
            .with_context(|| format!("cannot write `{}`", self.temp.display()))?;
        file.sync_all()
            .with_context(|| format!("cannot write `{}`", self.temp.display()))?;
        drop(file);
        std::fs::rename(&self.temp, &self.dest).with_context(|| {
            format!("cannot move the finished file to `{}`", self.dest.display())
        })?;
        // Committed: nothing left for `drop` to remove.
        self.temp = PathBuf::new();
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.temp.as_os_str().is_empty() {
            drop(self.file.take());
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slabs_are_whole_rows_of_chunks_that_tile_the_array() {
        // Rows of chunks of 3 x 10 x 4 bytes = 120 bytes; 250 bytes fit two of them.
        let regions = slabs(&[11, 10], &[3, 5], 4, 250);
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
        let regions = slabs(&[7, 1000], &[2, 1000], 8, 100);
        let rows: Vec<u64> = regions.iter().map(|r| r.shape()[0]).collect();
        assert_eq!(rows, [2, 2, 2, 1]);
    }

    #[test]
    fn zero_dimensional_and_empty_arrays_have_one_and_no_slabs() {
        assert_eq!(slabs(&[], &[], 4, 100), [Region::whole(&[])]);
        assert!(slabs(&[0, 5], &[2, 2], 4, 100).is_empty());
        assert!(slabs(&[5, 0], &[2, 2], 4, 100).is_empty());
    }

    #[test]
    fn an_uncommitted_file_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("x.npy");
        let mut file = AtomicFile::create(&dest).unwrap();
        file.write_all(b"partial").unwrap();
        drop(file);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

        let mut file = AtomicFile::create(&dest).unwrap();
        file.write_all(b"complete").unwrap();
        file.commit().unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"complete");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
