//! `zarrkit import`: a NumPy `.npy` file, or raw bytes, into a new array,
//! streamed in blocks of whole chunks with bounded memory.

use super::create::{Report, Target, array_builder, create_array, describe_array};
use super::export::parse_size;
use super::layout::{DataTypeArg, LayoutArgs, parse_data_type, parse_shape};
use crate::npy;
use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use zarrkit::format::v2::ByteOrder;
use zarrkit::metadata::NodeMetadata;
use zarrkit::{Array, Region};

/// The text after the options in `import --help`.
pub const AFTER_LONG_HELP: &str = "\
Examples:
  zarrkit import temperature.npy data.zarr /temperature --chunks 1,720,1440
  zarrkit import image.npy data.zarr /image --chunks 256,256 --shards 4096,4096
  zarrkit import --format v2 counts.npy old.zarr /counts --compressor zlib:5
  zarrkit import frames.raw data.zarr /frames --dtype '>u2' --shape 100,512,512
  zarrkit import volume.raw data.zarr /volume --dtype float32 --shape 64,64,64 --order F

FILE is a NumPy `.npy` file (format versions 1.0, 2.0 and 3.0; C or \
Fortran order; little- or big-endian; every fixed-size NumPy type: bool, \
integers, floats, complex numbers, `S` and `U` strings, `V` raw bytes, \
datetime64 and timedelta64, and structured types, whose fields may differ \
in byte order), recognised by its magic bytes, or raw bytes, for which \
--dtype and --shape say what they hold (and --byte-order and --order how). \
The new array has the file's shape and data type, stored little-endian \
whatever the file's byte order; STORE, NODE, the parent groups and the \
layout options are as for `zarrkit create` (see its --help).

A file whose size does not match its header (or --dtype and --shape) is \
an error before anything is written. The file is read in blocks of whole \
chunks (shards, when sharded) that follow its order, each at most half of \
--memory-budget (default 1 GiB) unless one chunk is larger, and each block \
is encoded and written in parallel by the library while the next block is \
read, so memory stays bounded however large the file. A progress bar shows on stderr for files over \
64 MiB when stderr is a terminal.

If the import fails, the new array is erased again (with the parent groups \
this run created), so nothing half-imported remains; chunks are written \
atomically, so an import killed part way leaves only whole chunks, in an \
array you can erase or import again with --overwrite. With --overwrite the \
node that was there is erased before the import begins.

--json prints what was written as `create --json` does, plus `file` and \
`bytes` (the data bytes imported).";

/// The byte order of a raw file's numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ByteOrderArg {
    /// Least significant byte first.
    Little,
    /// Most significant byte first.
    Big,
    /// This machine's order.
    Native,
}

/// The element order of a raw file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OrderArg {
    /// Row-major: the last index varies fastest (C, NumPy's default).
    C,
    /// Column-major: the first index varies fastest (Fortran).
    F,
}

/// Arguments of `zarrkit import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The file to import: a `.npy` file, or raw bytes with --dtype and --shape
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// The store: a directory (created if missing), a URL, or a new zip archive
    #[arg(value_name = "STORE")]
    pub store: PathBuf,

    /// The new array's path in the store, such as `/temperature`
    #[arg(value_name = "NODE")]
    pub node: String,

    /// For a raw file: its data type (a v3 name or a NumPy type string;
    /// `>` makes it big-endian)
    #[arg(long, value_name = "TYPE", value_parser = parse_data_type)]
    pub dtype: Option<DataTypeArg>,

    /// For a raw file: its shape, comma-separated
    #[arg(long, value_name = "N,N,…", value_parser = parse_shape)]
    pub shape: Option<::std::vec::Vec<u64>>,

    /// For a raw file: the byte order of its numbers (default: the
    /// --dtype's, else little)
    #[arg(long, value_enum, value_name = "ORDER")]
    pub byte_order: Option<ByteOrderArg>,

    /// For a raw file: its element order
    #[arg(
        long,
        value_enum,
        value_name = "C|F",
        default_value = "c",
        ignore_case = true
    )]
    pub order: OrderArg,

    #[command(flatten)]
    pub layout: LayoutArgs,

    /// Replace a node already at NODE (erasing it and everything below it)
    #[arg(long)]
    pub overwrite: bool,

    /// The most memory one block of the file may take, such as `512MiB`
    /// or `2G` (default 1 GiB; a block is at most half of it)
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub memory_budget: Option<u64>,

    /// Print what was written as JSON (described below)
    #[arg(long)]
    pub json: bool,
}

/// The default `--memory-budget`.
const DEFAULT_BUDGET: u64 = 1 << 30;

/// Files above this size get a progress bar.
const PROGRESS_THRESHOLD: u64 = 64 << 20;

/// What the file holds and where.
struct Source {
    file: File,
    data_type: DataTypeArg,
    byte_order: ByteOrder,
    fortran_order: bool,
    shape: Vec<u64>,
    data_offset: u64,
    data_bytes: u64,
}

/// What clap cannot check, as a usage error's message.
///
/// # Errors
/// The message, if the arguments do not go together.
pub fn check_usage(args: &ImportArgs) -> Result<(), String> {
    if args.dtype.is_some() != args.shape.is_some() {
        return Err("a raw file needs both --dtype and --shape".into());
    }
    Ok(())
}

/// Opens the file and reads what it holds, checking its size.
fn open_source(args: &ImportArgs) -> anyhow::Result<Source> {
    let name = args.file.display();
    let mut file = File::open(&args.file).with_context(|| format!("cannot open `{name}`"))?;
    let file_len = file
        .metadata()
        .with_context(|| format!("cannot read `{name}`"))?
        .len();
    let mut magic = [0u8; 6];
    let is_npy = file.read_exact(&mut magic).is_ok() && npy::is_npy(&magic);
    let (data_type, byte_order, fortran_order, shape, data_offset) = if is_npy {
        if args.dtype.is_some() || args.shape.is_some() {
            bail!(
                "`{name}` is a .npy file: its header gives the data type and shape \
                 (--dtype and --shape are for raw files)"
            );
        }
        let mut file = File::open(&args.file).with_context(|| format!("cannot open `{name}`"))?;
        let header =
            npy::read_header(&mut file).with_context(|| format!("cannot import `{name}`"))?;
        let data_type = DataTypeArg {
            data_type: header.data_type,
            big_endian: false,
        };
        (
            data_type,
            header.byte_order,
            header.fortran_order,
            header.shape,
            header.data_offset,
        )
    } else {
        let (Some(dtype), Some(shape)) = (&args.dtype, &args.shape) else {
            bail!(
                "`{name}` is not a .npy file (no NumPy magic bytes): give --dtype and --shape \
                 to import it as raw bytes"
            );
        };
        if dtype.data_type.is_variable_length() {
            bail!(
                "a raw file cannot hold `{}` elements (they have no fixed size)",
                dtype.data_type
            );
        }
        let big = match args.byte_order {
            Some(ByteOrderArg::Big) => true,
            Some(ByteOrderArg::Little) => false,
            Some(ByteOrderArg::Native) => cfg!(target_endian = "big"),
            None => dtype.big_endian,
        };
        let order = if dtype.data_type.endian_units().is_empty() {
            ByteOrder::NotRelevant
        } else if big {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        };
        let data_type = DataTypeArg {
            data_type: dtype.data_type.clone(),
            big_endian: false,
        };
        (
            data_type,
            order,
            args.order == OrderArg::F,
            shape.clone(),
            0,
        )
    };
    let element = data_type.data_type.size() as u64;
    let expected = super::product(&shape)
        .and_then(|n| n.checked_mul(element))
        .with_context(|| format!("the shape {shape:?} is too large"))?;
    let actual = file_len.saturating_sub(data_offset);
    if file_len < data_offset || actual != expected {
        bail!(
            "`{name}` holds {actual} bytes of data, but {} elements of `{}` ({element} bytes each) \
             make {expected}: the file does not match {}",
            super::format_shape(&shape),
            data_type.data_type,
            if is_npy {
                "its header"
            } else {
                "--dtype and --shape"
            }
        );
    }
    Ok(Source {
        file,
        data_type,
        byte_order,
        fortran_order,
        shape,
        data_offset,
        data_bytes: expected,
    })
}

/// Runs `zarrkit import`.
///
/// # Errors
/// If the file cannot be read or does not match its header, the options
/// do not fit, a node is there (without --overwrite), or writing fails
/// (the new array is then erased again).
pub fn run(args: &ImportArgs, out: &mut impl Write) -> anyhow::Result<()> {
    check_usage(args).map_err(anyhow::Error::msg)?;
    let source = open_source(args)?;
    let target = Target::new(&args.store, &args.node)?;
    let format = target.choose_format(args.layout.format)?;
    let builder = array_builder(&args.layout, format, &source.shape, &source.data_type)?;
    let (array, parents, store) = create_array(&target, &builder, format, args.overwrite)?;
    // The budget bounds the blocks read from the file; the library's own
    // check of what a write plans keeps its default, which a block of
    // whole chunks within the budget never nears.
    let budget = args.memory_budget.unwrap_or(DEFAULT_BUDGET);
    if let Err(err) = copy_blocks(&source, &array, budget / 2) {
        // Erase what this run created: the topmost new parent group, or
        // the array (chunks are written whole, so nothing is half-written).
        // A new zip archive is written only by `finish`: nothing to erase.
        let created = parents.first().unwrap_or(&target.path);
        let note = if target.is_zip() {
            "the zip archive was not written".to_string()
        } else {
            match zarrkit::node::erase(store.as_ref(), created.as_str()) {
                Ok(_) => format!("`{created}` was erased again"),
                Err(e) => format!("erasing `{created}` again failed too ({e}): erase it by hand"),
            }
        };
        return Err(err.context(format!(
            "importing `{}` into `{}` in `{}` failed; {note}",
            args.file.display(),
            target.path,
            target.name
        )));
    }
    target.finish(&store)?;
    let line = format!(
        "imported `{}` ({}) into array `{}` in `{}` ({format}): {}",
        args.file.display(),
        super::format_bytes(source.data_bytes),
        target.path,
        target.name,
        describe_array(&array)
    );
    let metadata = NodeMetadata::Array(array.metadata().clone());
    let extra = [
        ("file", args.file.display().to_string().into()),
        ("bytes", source.data_bytes.into()),
    ];
    Report::new(&target, format, &parents).print(out, args.json, &metadata, &extra, &line)
}

/// Copies the file into the array, block by block (see [`Plan`]): one
/// thread reads the next block from the file (and puts it in native byte
/// order and C order) while the library encodes and writes the current one
/// in parallel. The two blocks in memory are each at most `target_bytes`.
fn copy_blocks(source: &Source, array: &Array, target_bytes: u64) -> anyhow::Result<()> {
    let shape = &source.shape;
    if shape.contains(&0) {
        return Ok(());
    }
    let element = source.data_type.data_type.size();
    let chunk_shape = array.chunk_shape().to_vec();
    let bar = super::progress::bytes(source.data_bytes, PROGRESS_THRESHOLD);
    // In Fortran order the axes run the other way: plan on the reversed
    // shape, so that blocks follow the file.
    let rev = |v: &[u64]| -> Vec<u64> {
        if source.fortran_order {
            v.iter().rev().copied().collect()
        } else {
            v.to_vec()
        }
    };
    let file_shape = rev(shape);
    let plan = Plan::new(
        &file_shape,
        &rev(&chunk_shape),
        element as u64,
        target_bytes,
    );
    let read = |origin: &[u64], size: &[u64]| -> anyhow::Result<(Region, Vec<u8>)> {
        let n_bytes = super::product(size)
            .and_then(|n| n.checked_mul(element as u64))
            .and_then(|n| usize::try_from(n).ok())
            .context("a block does not fit in memory")?;
        let mut buffer = vec![0; n_bytes];
        read_block(
            source,
            &file_shape,
            origin,
            size,
            plan.axis,
            element,
            &mut buffer,
        )?;
        npy::to_native(&mut buffer, &source.data_type.data_type, &source.byte_order);
        Ok(if source.fortran_order {
            (
                Region::new(rev(origin), rev(size)),
                transpose_reversed(&buffer, size, element),
            )
        } else {
            (Region::new(origin.to_vec(), size.to_vec()), buffer)
        })
    };
    std::thread::scope(|scope| -> anyhow::Result<()> {
        // A rendezvous channel: the reader waits with its block until the
        // writer takes it, so at most two blocks are in memory.
        let (sender, receiver) = std::sync::mpsc::sync_channel(0);
        let blocks = plan.blocks();
        scope.spawn(move || {
            for (origin, size) in blocks {
                let block = read(&origin, &size);
                let failed = block.is_err();
                // The writer stopped (it failed): stop reading.
                if sender.send(block).is_err() || failed {
                    return;
                }
            }
        });
        for block in receiver {
            let (region, buffer) = block?;
            array
                .write_region_bytes(&region, &buffer)
                .with_context(|| format!("cannot write the block at {:?}", region.start()))?;
            if let Some(bar) = &bar {
                bar.inc(buffer.len() as u64);
            }
        }
        Ok(())
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(())
}

/// Reads the block at `origin` of `size` (in the file's axis order) from a
/// file in C order over `shape`: one contiguous read per index of the axes
/// before `axis`.
fn read_block(
    source: &Source,
    shape: &[u64],
    origin: &[u64],
    size: &[u64],
    axis: usize,
    element: usize,
    buffer: &mut [u8],
) -> anyhow::Result<()> {
    let ndim = shape.len();
    if ndim == 0 {
        source
            .file
            .read_exact_at(buffer, source.data_offset)
            .context("cannot read the one element")?;
        return Ok(());
    }
    // Elements per step along each axis (C order strides).
    let mut strides = vec![1u64; ndim];
    for d in (0..ndim.saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    let run = usize::try_from(size[axis..].iter().product::<u64>())? * element;
    let mut index = vec![0u64; axis];
    let mut at = 0;
    loop {
        let mut offset = origin[axis] * strides[axis];
        for d in 0..axis {
            offset += (origin[d] + index[d]) * strides[d];
        }
        let file_offset = source.data_offset + offset * element as u64;
        source
            .file
            .read_exact_at(&mut buffer[at..at + run], file_offset)
            .with_context(|| format!("cannot read at byte {file_offset}"))?;
        at += run;
        // The next index of the axes before `axis`, last fastest.
        let mut d = axis;
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            index[d] += 1;
            if index[d] < size[d] {
                break;
            }
            index[d] = 0;
        }
    }
}

/// A C-order buffer over `reversed` (a block's shape with its axes
/// reversed, as read from a Fortran-order file) rearranged into C order
/// over the block's own shape.
fn transpose_reversed(buffer: &[u8], reversed: &[u64], element: usize) -> Vec<u8> {
    let shape: Vec<usize> = reversed.iter().rev().map(|&n| n as usize).collect();
    let ndim = shape.len();
    let mut out = vec![0u8; buffer.len()];
    if ndim == 0 {
        out.copy_from_slice(buffer);
        return out;
    }
    // Strides in the source (Fortran order over `shape`): first axis fastest.
    let mut strides = vec![1usize; ndim];
    for d in 1..ndim {
        strides[d] = strides[d - 1] * shape[d - 1];
    }
    let mut index = vec![0usize; ndim];
    for target in out.chunks_exact_mut(element) {
        let from: usize = index.iter().zip(&strides).map(|(i, s)| i * s).sum();
        target.copy_from_slice(&buffer[from * element..(from + 1) * element]);
        for d in (0..ndim).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

/// The blocks an import reads and writes, over the file's axis order: one
/// chunk along each axis before `axis`, `per_block` chunks along `axis`,
/// and the whole length of the axes after it. `axis` is the first one at
/// which such a block fits `target` bytes, so blocks are as large as the
/// budget allows while every chunk is written once, whole (a chunk larger
/// than the budget is still one block).
struct Plan {
    shape: Vec<u64>,
    chunks: Vec<u64>,
    axis: usize,
    per_block: u64,
}

impl Plan {
    fn new(shape: &[u64], chunks: &[u64], element: u64, target: u64) -> Self {
        let ndim = shape.len();
        let bytes = |axis: usize, n: u64| -> u64 {
            let before: u64 = chunks[..axis]
                .iter()
                .zip(shape)
                .map(|(&c, &s)| c.min(s))
                .product();
            let after: u64 = shape[axis + 1..].iter().product();
            before
                .saturating_mul(n.saturating_mul(chunks[axis]).min(shape[axis]))
                .saturating_mul(after)
                .saturating_mul(element)
        };
        if ndim == 0 {
            return Self {
                shape: Vec::new(),
                chunks: Vec::new(),
                axis: 0,
                per_block: 1,
            };
        }
        let axis = (0..ndim)
            .find(|&axis| bytes(axis, 1) <= target)
            .unwrap_or(ndim - 1);
        let grid = shape[axis].div_ceil(chunks[axis]);
        let mut per_block = 1;
        while per_block < grid && bytes(axis, per_block + 1) <= target {
            per_block += 1;
        }
        Self {
            shape: shape.to_vec(),
            chunks: chunks.to_vec(),
            axis,
            per_block,
        }
    }

    /// Every block's origin and size, in file order.
    fn blocks(&self) -> impl Iterator<Item = (Vec<u64>, Vec<u64>)> + '_ {
        let ndim = self.shape.len();
        let axis = self.axis;
        // Steps along the axes up to `axis`; the axes after it are whole.
        let step = move |d: usize| {
            if d < axis {
                self.chunks[d]
            } else {
                self.chunks[d].saturating_mul(self.per_block)
            }
        };
        let counts: Vec<u64> = (0..ndim.min(axis + 1))
            .map(|d| self.shape[d].div_ceil(step(d)))
            .collect();
        let total: u64 = counts.iter().product();
        (0..total).map(move |mut i| {
            let mut origin = vec![0u64; ndim];
            let mut size = self.shape.clone();
            for d in (0..counts.len()).rev() {
                let k = i % counts[d];
                i /= counts[d];
                origin[d] = k * step(d);
                size[d] = step(d).min(self.shape[d] - origin[d]);
            }
            (origin, size)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_whole_chunk_rows_within_the_target() {
        // 100×60 of 4-byte elements in 10×20 chunks: a row of chunks is
        // 10×60×4 = 2400 bytes; 5000 bytes hold two rows.
        let plan = Plan::new(&[100, 60], &[10, 20], 4, 5000);
        assert_eq!((plan.axis, plan.per_block), (0, 2));
        let blocks: Vec<_> = plan.blocks().collect();
        assert_eq!(blocks.len(), 5);
        assert_eq!(blocks[1], (vec![20, 0], vec![20, 60]));
        // Under 2400 bytes, blocks split the second axis at chunk edges.
        let plan = Plan::new(&[100, 60], &[10, 20], 4, 1000);
        assert_eq!((plan.axis, plan.per_block), (1, 1));
        let blocks: Vec<_> = plan.blocks().collect();
        assert_eq!(blocks.len(), 30);
        assert_eq!(blocks[4], (vec![10, 20], vec![10, 20]));
        // Edges are clipped to the shape.
        let plan = Plan::new(&[25, 7], &[10, 5], 1, 1 << 20);
        let blocks: Vec<_> = plan.blocks().collect();
        assert_eq!(blocks, [(vec![0, 0], vec![25, 7])]);
        let plan = Plan::new(&[25, 7], &[10, 5], 1, 10);
        let blocks: Vec<_> = plan.blocks().collect();
        assert_eq!(blocks.len(), 6);
        assert_eq!(blocks[5], (vec![20, 5], vec![5, 2]));
        // A 0-d array is one block.
        let plan = Plan::new(&[], &[], 8, 1);
        assert_eq!(plan.blocks().collect::<Vec<_>>(), [(vec![], vec![])]);
    }

    #[test]
    fn fortran_blocks_transpose_into_c_order() {
        // A 2×3 block read from a Fortran file is C order over (3, 2).
        let f: Vec<u8> = vec![0, 3, 1, 4, 2, 5];
        assert_eq!(transpose_reversed(&f, &[3, 2], 1), [0, 1, 2, 3, 4, 5]);
        let f16: Vec<u8> = [0u16, 3, 1, 4, 2, 5]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let c = transpose_reversed(&f16, &[3, 2], 2);
        let values: Vec<u16> = c
            .chunks(2)
            .map(|b| u16::from_ne_bytes([b[0], b[1]]))
            .collect();
        assert_eq!(values, [0, 1, 2, 3, 4, 5]);
    }
}
