//! `zarrkit bench`: time a whole read of an array (and with `--write` a
//! whole write of a scratch copy) and report the throughput and the peak
//! memory.

use super::export::{parse_size, slab_target, slabs};
use super::ls::human;
use super::{
    Location, format_shape, locate, open_located, open_url, plural, product, url_of,
    warn_stale_consolidated,
};
use anyhow::{Context, bail};
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use zarrkit::metadata::NodeMetadata;
use zarrkit::store::{FilesystemStore, Store, StorePrefix};
use zarrkit::{Array, Node, Region, format};

/// Runs larger than this (decoded bytes) show a progress bar on a terminal.
const PROGRESS_THRESHOLD: u64 = 256 << 20;

/// The element size assumed for variable-length elements when sizing slabs.
const VLEN_ELEMENT_ESTIMATE: u64 = 64;

/// The text after the options in `--help`.
pub const AFTER_LONG_HELP: &str = "\
The read decodes every chunk of the array into memory, in slabs of about \
64 MiB (whole rows of chunks where they fit half of --memory-budget, \
default 8 GiB, as `export` reads), with the library's parallel read engine \
(--threads); nothing is written. Chunks that are not stored are filled in \
without a read. --write then writes the same data, slab by slab, to a copy \
of the array with the same metadata in a scratch store: a new directory in \
the system's temporary directory, or under --scratch (a directory or a URL \
such as `s3://bucket/tmp`), deleted afterwards, also when the run fails; \
only the writes are timed. Each of --reps runs is timed on its own, and the \
median, the fastest and the slowest are reported.

Reported: the wall time; GB/s of decoded bytes (10^9 bytes per second; \
the array's size in memory); chunks/s (stored chunks read, or chunks \
written; shards, for a sharded array); stored bytes/s (what the store \
delivered or took); and the peak memory of the process (its resident set \
high-water mark, VmHWM in /proc/self/status on Linux, reset before each run \
where the system allows). The rates use the median time.

The numbers include the store's I/O: a local store read a second time is \
usually served from the operating system's page cache (a warm run) and \
measures decoding; for a cold run, drop the cache first (`sync; echo 3 | \
sudo tee /proc/sys/vm/drop_caches`) or use --reps and compare the first \
run with the rest. Remote stores add the network; raise the requests in \
flight with `--storage-option concurrency=N`.

Examples:
  zarrkit bench testdata/sample.zarr/weather/temperature
  zarrkit bench --reps 5 --write data.zarr /big
  zarrkit bench --threads 4 --memory-budget 1G data.zarr/big
  zarrkit bench --write --scratch s3://bucket/tmp s3://bucket/data.zarr/big
  zarrkit bench --json data.zarr/big | jq .read.decoded_gb_per_s

--json prints {\"path\", \"store\", \"format\", \"shape\", \"data_type\", \
\"chunk_shape\", \"threads\", \"reps\", \"decoded_bytes\" (null for \
variable-length elements), \"stored_chunks\", \"stored_bytes\", \"read\": RUN, \
\"write\": RUN or null}, where RUN is {\"decoded_bytes\" (read or written \
per run), \"chunks\" (stored chunks read, or chunks written), \"stored_bytes\" \
(read, or written), \"seconds\" (one per run), \"median_seconds\", \
\"min_seconds\", \"max_seconds\", \"decoded_gb_per_s\", \"chunks_per_s\", \
\"stored_bytes_per_s\" (null when the time is 0), \"peak_memory_bytes\" (the \
highest of the runs; null where unknown)}; a write RUN also has \"scratch\", \
where the copy was written.";

/// Arguments of `zarrkit bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// A store directory or URL, or an array inside it such as
    /// `my.zarr/a/b`; with NODE, the store's root
    #[arg(value_name = "STORE[/PATH]")]
    pub target: PathBuf,

    /// The array inside the store (`/a/b`); the first argument is then the
    /// store root itself
    #[arg(value_name = "NODE")]
    pub node: Option<String>,

    /// Also time writing the array to a scratch copy (deleted afterwards)
    #[arg(long)]
    pub write: bool,

    /// Where --write puts its scratch copy: a directory or a URL, inside
    /// which a new, uniquely named store is made and then deleted (default:
    /// the system's temporary directory)
    #[arg(long, value_name = "DIR|URL", requires = "write")]
    pub scratch: Option<PathBuf>,

    /// Runs of each measurement, reported as their median and spread
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub reps: u32,

    /// The most memory one read or write may hold, such as `512MiB` or `2G`
    /// (default 8 GiB)
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub memory_budget: Option<u64>,

    /// Print JSON (described below) instead of text
    #[arg(long)]
    pub json: bool,
}

/// One timed run.
struct Run {
    seconds: f64,
    decoded_bytes: u64,
    peak_memory: Option<u64>,
}

/// The runs of one measurement and what each moved.
struct Measurement {
    runs: Vec<Run>,
    chunks: u64,
    stored_bytes: u64,
    scratch: Option<String>,
}

impl Measurement {
    fn seconds(&self) -> Vec<f64> {
        self.runs.iter().map(|r| r.seconds).collect()
    }

    fn median(&self) -> f64 {
        let mut seconds = self.seconds();
        seconds.sort_by(f64::total_cmp);
        let n = seconds.len();
        if n == 0 {
            0.0
        } else if n % 2 == 1 {
            seconds[n / 2]
        } else {
            f64::midpoint(seconds[n / 2 - 1], seconds[n / 2])
        }
    }

    fn min(&self) -> f64 {
        self.seconds().into_iter().fold(f64::INFINITY, f64::min)
    }

    fn max(&self) -> f64 {
        self.seconds().into_iter().fold(0.0, f64::max)
    }

    fn decoded_bytes(&self) -> u64 {
        self.runs.first().map_or(0, |r| r.decoded_bytes)
    }

    fn peak_memory(&self) -> Option<u64> {
        self.runs.iter().filter_map(|r| r.peak_memory).max()
    }

    /// `amount` per second of the median time, `None` when it is 0.
    #[allow(clippy::cast_precision_loss)] // Rates for display.
    fn rate(&self, amount: u64) -> Option<f64> {
        let median = self.median();
        (median > 0.0).then(|| amount as f64 / median)
    }

    fn to_json(&self) -> serde_json::Value {
        let mut value = serde_json::json!({
            "decoded_bytes": self.decoded_bytes(),
            "chunks": self.chunks,
            "stored_bytes": self.stored_bytes,
            "seconds": self.seconds(),
            "median_seconds": self.median(),
            "min_seconds": self.min(),
            "max_seconds": self.max(),
            "decoded_gb_per_s": self.rate(self.decoded_bytes()).map(|r| r / 1e9),
            "chunks_per_s": self.rate(self.chunks),
            "stored_bytes_per_s": self.rate(self.stored_bytes),
            "peak_memory_bytes": self.peak_memory(),
        });
        if let Some(scratch) = &self.scratch {
            value["scratch"] = scratch.clone().into();
        }
        value
    }

    fn print(&self, label: &str, out: &mut impl Write) -> anyhow::Result<()> {
        let rate = |amount: u64, scale: f64, unit: &str| {
            self.rate(amount).map_or_else(
                || "-".to_string(),
                |r| {
                    let r = r / scale;
                    // Three significant decimals for small rates, none for large.
                    let decimals = if r >= 100.0 { 0 } else { 3 };
                    format!("{r:.decimals$} {unit}")
                },
            )
        };
        let spread = if self.runs.len() > 1 {
            format!(
                " median of {} (min {:.4} s, max {:.4} s)",
                self.runs.len(),
                self.min(),
                self.max()
            )
        } else {
            String::new()
        };
        writeln!(out, "{label}:")?;
        writeln!(out, "  wall time       {:.4} s{spread}", self.median())?;
        writeln!(
            out,
            "  decoded         {}, {}",
            human(self.decoded_bytes()),
            rate(self.decoded_bytes(), 1e9, "GB/s")
        )?;
        writeln!(
            out,
            "  chunks          {}, {}",
            self.chunks,
            rate(self.chunks, 1.0, "chunks/s")
        )?;
        writeln!(
            out,
            "  stored          {}, {}",
            human(self.stored_bytes),
            rate(self.stored_bytes, 1e6, "MB/s")
        )?;
        writeln!(
            out,
            "  peak memory     {}",
            self.peak_memory()
                .map_or_else(|| "unknown".to_string(), human)
        )?;
        if let Some(scratch) = &self.scratch {
            writeln!(out, "  scratch copy    {scratch} (deleted)")?;
        }
        Ok(())
    }
}

/// Runs `zarrkit bench`.
///
/// # Errors
/// If the store or the array cannot be opened, the node is a group, a read
/// or a write fails, the scratch store cannot be made, or writing to `out`
/// fails.
pub fn run(args: &BenchArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let location = locate(&args.target, args.node.as_deref())?;
    let store = open_located(&location)?;
    let Location {
        node: path, root, ..
    } = location;
    warn_stale_consolidated(&store, &path);
    let Node::Array(mut array) = Node::open(Arc::clone(&store), path.as_str())? else {
        bail!("`{path}` is a group; bench times reading an array");
    };
    if let Some(budget) = args.memory_budget {
        array.set_memory_budget(budget);
    }
    // What a read fetches: the stored chunks (not timed).
    let stored = array
        .stored_size()
        .with_context(|| format!("cannot count the stored chunks of `{path}`"))?;
    let (stored_chunks, stored_bytes) = (stored.chunks, stored.bytes);
    let decoded = if array.data_type().is_variable_length() {
        None
    } else {
        product(array.shape()).and_then(|n| n.checked_mul(array.data_type().size() as u64))
    };

    let mut read = Measurement {
        runs: Vec::new(),
        chunks: stored_chunks,
        stored_bytes,
        scratch: None,
    };
    for rep in 0..args.reps {
        let label = format!("read {}/{}", rep + 1, args.reps);
        read.runs.push(time_read(&array, decoded, &label)?);
    }
    let write = if args.write {
        Some(time_writes(&array, args, decoded)?)
    } else {
        None
    };

    if args.json {
        let printed = serde_json::json!({
            "path": path.as_str(),
            "store": root.display().to_string(),
            "format": array.format().name(),
            "shape": array.shape(),
            "data_type": array.data_type().to_string(),
            "chunk_shape": array.regular_chunk_shape(),
            "threads": rayon::current_num_threads(),
            "reps": args.reps,
            "decoded_bytes": decoded,
            "stored_chunks": stored_chunks,
            "stored_bytes": stored_bytes,
            "read": read.to_json(),
            "write": write.as_ref().map(Measurement::to_json),
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&printed)?)?;
        return Ok(());
    }
    writeln!(
        out,
        "{path} in `{}`: {} {}, {}, {} stored ({}), {} threads, {}",
        root.display(),
        format_shape(array.shape()),
        array.data_type(),
        array.regular_chunk_shape().map_or_else(
            || "rectilinear chunks".to_string(),
            |c| format!("chunks {}", format_shape(c))
        ),
        plural(stored_chunks, "chunk", "chunks"),
        human(stored_bytes),
        rayon::current_num_threads(),
        plural(u64::from(args.reps), "run", "runs"),
    )?;
    read.print("read", out)?;
    if let Some(write) = &write {
        write.print("write", out)?;
    }
    Ok(())
}

/// The regions a whole pass reads or writes, as `export` reads them.
fn regions(array: &Array) -> impl Iterator<Item = Region> {
    let element_size = if array.data_type().is_variable_length() {
        VLEN_ELEMENT_ESTIMATE
    } else {
        array.data_type().size() as u64
    };
    slabs(
        array.shape(),
        array.chunk_shape(),
        element_size,
        slab_target(array),
        array.memory_budget(),
    )
}

/// A slab's data, decoded: fixed-size bytes, or variable-length elements.
enum Slab {
    Fixed(Vec<u8>),
    Vlen(zarrkit::codec::vlen::VlenChunk),
}

impl Slab {
    fn read(array: &Array, region: &Region) -> anyhow::Result<Self> {
        let context = || format!("cannot read `{}`", array.path());
        Ok(if array.data_type().is_variable_length() {
            Self::Vlen(array.read_vlen(region).with_context(context)?)
        } else {
            Self::Fixed(array.read_region_bytes(region).with_context(context)?)
        })
    }

    fn len(&self) -> u64 {
        match self {
            Self::Fixed(bytes) => bytes.len() as u64,
            Self::Vlen(chunk) => chunk.data_len() as u64,
        }
    }

    fn write(&self, array: &Array, region: &Region) -> anyhow::Result<()> {
        match self {
            Self::Fixed(bytes) => array.write_region_bytes(region, bytes),
            Self::Vlen(chunk) => array.write_vlen(region, chunk),
        }
        .with_context(|| format!("cannot write the scratch copy of `{}`", array.path()))
    }
}

/// One timed read of the whole array.
fn time_read(array: &Array, decoded: Option<u64>, label: &str) -> anyhow::Result<Run> {
    let progress = decoded.and_then(|total| super::progress::bytes(total, PROGRESS_THRESHOLD));
    if let Some(bar) = &progress {
        bar.set_message(label.to_string());
    }
    reset_peak_memory();
    let start = Instant::now();
    let mut bytes = 0u64;
    for region in regions(array) {
        let slab = Slab::read(array, &region)?;
        bytes += slab.len();
        if let Some(bar) = &progress {
            bar.inc(slab.len());
        }
        drop(slab);
    }
    let seconds = start.elapsed().as_secs_f64();
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    Ok(Run {
        seconds,
        decoded_bytes: bytes,
        peak_memory: peak_memory(),
    })
}

/// `--reps` timed writes of the whole array to a scratch copy, each into
/// a new scratch store that is deleted afterwards.
fn time_writes(
    array: &Array,
    args: &BenchArgs,
    decoded: Option<u64>,
) -> anyhow::Result<Measurement> {
    let mut measurement = Measurement {
        runs: Vec::new(),
        chunks: 0,
        stored_bytes: 0,
        scratch: None,
    };
    for rep in 0..args.reps {
        let scratch = Scratch::create(args.scratch.as_deref())?;
        let label = format!("write {}/{}", rep + 1, args.reps);
        let run = time_write(array, &scratch, args.memory_budget, decoded, &label)?;
        // What the copy holds (not timed).
        let copy = Array::open(Arc::clone(&scratch.store), array.path().as_str())?;
        let written = copy.stored_size()?;
        measurement.chunks = written.chunks;
        measurement.stored_bytes = written.bytes;
        measurement.scratch = Some(scratch.location.clone());
        measurement.runs.push(run);
        scratch.delete()?;
    }
    Ok(measurement)
}

/// One timed write of the whole array to a copy in `scratch`: the source is
/// read slab by slab (not timed) and each slab written (timed).
fn time_write(
    array: &Array,
    scratch: &Scratch,
    memory_budget: Option<u64>,
    decoded: Option<u64>,
    label: &str,
) -> anyhow::Result<Run> {
    let metadata = array.metadata().clone();
    format::write_node(
        scratch.store.as_ref(),
        array.path(),
        array.format(),
        &NodeMetadata::Array(metadata.clone()),
    )
    .with_context(|| format!("cannot create the scratch copy in `{}`", scratch.location))?;
    let mut copy = Array::from_metadata(
        Arc::clone(&scratch.store),
        array.path().clone(),
        array.format(),
        metadata,
    )?;
    copy.set_write_empty_chunks(array.write_empty_chunks());
    if let Some(budget) = memory_budget {
        copy.set_memory_budget(budget);
    }
    let progress = decoded.and_then(|total| super::progress::bytes(total, PROGRESS_THRESHOLD));
    if let Some(bar) = &progress {
        bar.set_message(label.to_string());
    }
    reset_peak_memory();
    let mut seconds = 0.0;
    let mut bytes = 0u64;
    for region in regions(array) {
        let slab = Slab::read(array, &region)?;
        let start = Instant::now();
        slab.write(&copy, &region)?;
        seconds += start.elapsed().as_secs_f64();
        bytes += slab.len();
        if let Some(bar) = &progress {
            bar.inc(slab.len());
        }
    }
    let start = Instant::now();
    scratch.store.finish()?;
    seconds += start.elapsed().as_secs_f64();
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    Ok(Run {
        seconds,
        decoded_bytes: bytes,
        peak_memory: peak_memory(),
    })
}

/// A scratch store for `--write`, deleted when dropped (also when the run
/// fails part way).
struct Scratch {
    store: Arc<dyn Store>,
    /// Where it is, for messages.
    location: String,
    /// The directory to remove, for a local scratch store.
    dir: Option<PathBuf>,
    deleted: bool,
}

impl Scratch {
    /// A new, uniquely named store inside `base` (a directory or a URL), or
    /// in the system's temporary directory.
    fn create(base: Option<&Path>) -> anyhow::Result<Self> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let name = format!("zarrkit-bench-{}-{nanos}", std::process::id());
        if let Some(url) = base.and_then(url_of) {
            let location = format!("{}/{name}", url.trim_end_matches('/'));
            let store = open_url(&location)?;
            if !store.capabilities().write {
                bail!("the scratch store `{location}` cannot be written");
            }
            return Ok(Self {
                store,
                location,
                dir: None,
                deleted: false,
            });
        }
        let base = base.map_or_else(std::env::temp_dir, Path::to_path_buf);
        if !base.is_dir() {
            bail!("the scratch directory `{}` does not exist", base.display());
        }
        let dir = base.join(name);
        std::fs::create_dir(&dir)
            .with_context(|| format!("cannot create the scratch store `{}`", dir.display()))?;
        let scratch =
            Self {
                store: Arc::new(FilesystemStore::open_existing(&dir).with_context(|| {
                    format!("cannot open the scratch store `{}`", dir.display())
                })?),
                location: dir.display().to_string(),
                dir: Some(dir),
                deleted: false,
            };
        Ok(scratch)
    }

    /// Deletes the store and everything in it.
    fn delete(mut self) -> anyhow::Result<()> {
        self.deleted = true;
        self.remove()
    }

    fn remove(&self) -> anyhow::Result<()> {
        match &self.dir {
            Some(dir) => std::fs::remove_dir_all(dir)
                .with_context(|| format!("cannot delete the scratch store `{}`", dir.display())),
            None => self
                .store
                .erase_prefix(&StorePrefix::root())
                .with_context(|| format!("cannot delete the scratch store `{}`", self.location)),
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !self.deleted
            && let Err(err) = self.remove()
        {
            eprintln!("warning: {err:#}");
        }
    }
}

/// Resets the process's resident-set high-water mark (Linux: `5` written
/// to `/proc/self/clear_refs`), so each run reports its own peak. Where the
/// system does not allow it, the peak is the process's so far.
fn reset_peak_memory() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The process's peak resident set (`VmHWM` in `/proc/self/status`), or
/// `None` where the system does not say.
fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}
