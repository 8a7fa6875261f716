//! `zarrkit cp` (alias `convert`): copy a node or a whole hierarchy into
//! another store, optionally in another layout (chunks, shards, codecs,
//! data type, fill value, format, chunk key encoding).
//!
//! The planning, streaming, resumption and verification are the library's
//! (`zarrkit::migrate` with a layout, `zarrkit::copy`); the layout options
//! are the ones `create` and `import` take (`layout.rs`), resolved against
//! each source array.

use super::layout::{DataTypeArg, LayoutArgs, Source, parse_data_type};
use super::migrate::{check_not_nested, print_plan};
use super::{format_bytes, locate, open_located, open_url, plural, url_of, zip_archive};
use anyhow::Context;
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zarrkit::copy::{Cast, Relayout};
use zarrkit::format::ZarrFormat;
use zarrkit::metadata::ArrayMetadata;
use zarrkit::migrate::{
    self, Action, MIGRATION_MARKER, MigrateError, MigrationPlan, MigrationReport, PlanOptions,
    Progress,
};
use zarrkit::store::{FilesystemStore, MemoryStore, Store, StorePrefix};

/// Chunks (or write units) above which a progress bar is worth showing.
const PROGRESS_THRESHOLD: u64 = 16;

/// The text after the options in `--help`.
pub const AFTER_LONG_HELP: &str = "\
Examples:
  zarrkit cp data.zarr copy.zarr
  zarrkit cp old-v2.zarr/temperature t.zarr --chunks 256,256 --compressor zstd:3
  zarrkit cp big.zarr/volume resharded.zarr --chunks 32,32,32 --shards 256,256,256
  zarrkit cp counts.zarr/a small.zarr --dtype uint8 --cast clamp
  zarrkit cp data.zarr s3://bucket/data.zarr --verify
  zarrkit cp data.zarr archive.zip
  zarrkit cp data.zarr/a a-v2.zarr --format v2 --chunk-key-encoding v2:/
  zarrkit cp --resume big.zarr resharded.zarr --shards 256,256,256

SRC is STORE[/PATH], found as `info` finds it: the node at PATH (a group with \
everything below it, or one array) becomes the root of DST. DST is a new \
store: a directory that does not exist or is empty, a URL prefix, or a new \
zip archive (`.zip`, written whole at the end). --overwrite replaces a DST \
that exists (after the copy is planned, so a refused copy leaves it alone). \
Neither of SRC's store and DST may lie inside the other.

Every group and array is copied with its attributes. Without layout options \
an array's chunks are copied byte for byte (re-encoded only where the target \
format cannot hold its codecs, as `migrate` does). With them, each array is \
streamed into its new layout: the layout options not given keep the \
source's (its chunk and shard shapes, codecs, fill value, chunk key \
encoding), --format (default v3) chooses the format, and the options apply \
to every array copied.

--dtype converts the values. By default (--cast strict) a value that does \
not fit the new type (an integer out of range, a float that is not a whole \
number or is NaN into an integer type, a finite float beyond a narrower \
float's range) stops the copy with an error naming the array, the element \
and the source chunk; --cast clamp clamps into the range (NaN becomes 0); \
--cast wrap wraps as NumPy's `astype` does. The source's fill value is \
converted strictly: give --fill-value if it does not fit. Booleans, integers \
and real floats convert.

Memory: the destination is written in write units (shards, or chunks when \
not sharded), grouped into slabs that are read from the source at once. \
Under --memory-budget (default 256M) a slab is extended to cover whole \
source chunks, and to where source chunks and write units line up (their \
least common multiple), so each source chunk is decoded once (then to two \
write units per thread, no further); where the \
budget does not allow that, at most twice per dimension that is not aligned \
(more only if one source chunk does not fit). Memory in use is about one \
slab in the source's and the target's data types, plus one write unit and \
its encoding per thread (--threads).

Interrupted copies: until the copy is finished (and verified, with \
--verify), DST holds `zarrkit-migration-unfinished.json` and zarrkit refuses \
to open it. Each chunk is written whole or not at all, so an interrupted \
copy leaves only valid chunks. Run the same command with --resume to \
continue: chunks already in DST that equal what the source gives are kept, \
the rest written. A DST that holds the marker of another copy (other \
options or format) is refused.

--verify reads DST back after copying and compares every value with SRC \
(converted to the new data type); a difference is an error naming the \
array and chunk.

--json prints a report on stdout (with --dry-run, the plan, as `migrate \
--dry-run --json` does):
  source, destination, format   SRC, DST and the format written
  groups                        groups written
  arrays                        each {path, action (copy, re-encode or
                                rewrite), changes (what the layout changed,
                                or the reason for re-encoding; null for copy)}
  chunks_written, chunks_skipped
                                chunks (write units) written, and kept by
                                --resume
  bytes_read, bytes_written     stored bytes read from SRC and written to DST
                                (for a rewritten array, all it stores)
  verified                      whether --verify compared everything
  chunks_verified               chunk regions compared";

/// `--cast`: what to do with a value that does not fit a new data type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum CastArg {
    /// Stop with an error naming the array, element and source chunk
    #[default]
    Strict,
    /// Clamp into the new type's range (NaN becomes 0)
    Clamp,
    /// Wrap around as NumPy's `astype` does
    Wrap,
}

impl From<CastArg> for Cast {
    fn from(cast: CastArg) -> Self {
        match cast {
            CastArg::Strict => Self::Strict,
            CastArg::Clamp => Self::Clamp,
            CastArg::Wrap => Self::Wrap,
        }
    }
}

/// Arguments of `zarrkit cp`.
#[derive(Debug, Args)]
pub struct CpArgs {
    /// The node to copy: STORE[/PATH] (a group with everything below it,
    /// or an array)
    #[arg(value_name = "SRC")]
    pub src: PathBuf,

    /// The new store: a directory that does not exist or is empty, a URL
    /// prefix, or a new zip archive
    #[arg(value_name = "DST")]
    pub dst: PathBuf,

    /// Convert the values to this data type (v3 names such as `uint8`,
    /// `float32`, or NumPy strings such as `<u2`)
    #[arg(long, value_name = "TYPE", value_parser = parse_data_type)]
    pub dtype: Option<DataTypeArg>,

    /// What a value that does not fit --dtype does
    #[arg(long, value_enum, default_value_t = CastArg::Strict, requires = "dtype")]
    pub cast: CastArg,

    #[command(flatten)]
    pub layout: LayoutArgs,

    /// The memory for one slab of a re-chunked array, in bytes, or with a
    /// suffix K, M, G (powers of 1024)
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub memory_budget: Option<u64>,

    /// Continue an interrupted copy into DST (same SRC and options)
    #[arg(long)]
    pub resume: bool,

    /// Read DST back and compare it with SRC after copying
    #[arg(long)]
    pub verify: bool,

    /// Replace DST if it exists
    #[arg(long, conflicts_with = "resume")]
    pub overwrite: bool,

    /// Print the plan and write nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Print the report (or, with --dry-run, the plan) as JSON
    #[arg(long)]
    pub json: bool,
}

/// Parses `--memory-budget`: bytes, or a number with K, M, G or T
/// (optionally followed by `iB` or `B`), powers of 1024.
///
/// # Errors
/// The message, for anything else or zero.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let digits = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(digits);
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return Err(format!("`{text}` is not a size such as `512M` or `2G`")),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a size such as `512M` or `2G`"))?;
    let bytes = n
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("`{text}` is too large"))?;
    if bytes == 0 {
        return Err("the memory budget must be positive".into());
    }
    Ok(bytes)
}

/// The layout options of the command line, resolved against each array.
#[derive(Debug)]
struct CliRelayout {
    layout: LayoutArgs,
    data_type: Option<DataTypeArg>,
    cast: Cast,
    format: ZarrFormat,
}

impl Relayout for CliRelayout {
    fn relayout(&self, planned: &ArrayMetadata) -> Result<ArrayMetadata, String> {
        // The data type first (the library converts the fill value and
        // fixes the `bytes` codec), then the options, with the result as
        // the source whose layout fills in what is not given.
        let base = match &self.data_type {
            Some(arg) => {
                let mut change = zarrkit::copy::Layout::default();
                change.data_type = Some(arg.data_type.clone());
                change.cast = self.cast;
                // A new fill value is given in the new type: convert the
                // old one only when none is given.
                if let Some(text) = &self.layout.fill_value {
                    change.fill_value = Some(
                        super::layout::parse_fill_value(text, &arg.data_type)
                            .map(|fill| {
                                zarrkit::metadata::json::fill_value_to_json(&fill, &arg.data_type)
                            })
                            .map_err(|e| format!("{e:#}"))?,
                    );
                }
                change.apply(planned)?
            }
            None => planned.clone(),
        };
        let big_endian = self.data_type.as_ref().is_some_and(|d| d.big_endian);
        let layout = self
            .layout
            .layout(
                self.format,
                &base.shape,
                &base.data_type,
                big_endian,
                Some(Source {
                    metadata: &base,
                    format: self.format,
                }),
            )
            .map_err(|e| format!("{e:#}"))?;
        let mut metadata = layout
            .builder(&base.shape, base.data_type.clone())
            .build_metadata(&zarrkit::NodePath::root())
            .map_err(|e| describe(&e))?;
        metadata.storage_transformers = base.storage_transformers;
        metadata.extra_fields = base.extra_fields;
        Ok(metadata)
    }

    fn describe(&self) -> String {
        format!(
            "{:?}; data type {:?}; cast {}",
            self.layout,
            self.data_type.as_ref().map(|d| d.data_type.name()),
            self.cast.name()
        )
    }

    fn cast(&self) -> Cast {
        self.cast
    }
}

/// An error with its causes, on one line.
fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// Whether any option changes the arrays' layout (beyond the format).
fn changes_layout(args: &CpArgs) -> bool {
    let l = &args.layout;
    args.dtype.is_some()
        || l.chunks.is_some()
        || l.shards.is_some()
        || l.codecs.is_some()
        || l.compressor.is_some()
        || l.fill_value.is_some()
        || l.dimension_names.is_some()
        || l.attrs.is_some()
        || l.chunk_key_encoding.is_some()
}

/// What DST holds before the copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Destination {
    /// Nothing (or an empty directory or prefix).
    Empty,
    /// An unfinished copy, marked.
    Unfinished,
    /// Something else.
    Occupied,
}

/// What DST holds, without creating anything.
fn destination_state(dst: &Path) -> anyhow::Result<Destination> {
    if let Some((archive, rest)) = zip_archive(dst) {
        if !rest.is_empty() {
            anyhow::bail!(
                "the destination `{}` lies inside the zip archive `{}`: copy into the archive itself",
                dst.display(),
                archive.display()
            );
        }
        // A zip archive is written once, whole: never resumed.
        let exists = match url_of(dst) {
            Some(_) => false,
            None => dst.exists(),
        };
        return Ok(if exists {
            Destination::Occupied
        } else {
            Destination::Empty
        });
    }
    if let Some(url) = url_of(dst) {
        let store = open_url(url)?;
        if zarrkit::migrate::check_finished(store.as_ref()).is_err() {
            return Ok(Destination::Unfinished);
        }
        let listed = store
            .list_dir(&StorePrefix::root())
            .with_context(|| format!("cannot list the destination `{url}`"))?;
        return Ok(if listed.keys.is_empty() && listed.prefixes.is_empty() {
            Destination::Empty
        } else {
            Destination::Occupied
        });
    }
    match std::fs::read_dir(dst) {
        Ok(mut entries) => Ok(if dst.join(MIGRATION_MARKER).is_file() {
            Destination::Unfinished
        } else if entries.next().is_some() {
            Destination::Occupied
        } else {
            Destination::Empty
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Destination::Empty),
        Err(e) if dst.is_file() => Err(e).with_context(|| {
            format!(
                "the destination `{}` is a file, not a directory",
                dst.display()
            )
        }),
        Err(e) => Err(e).with_context(|| format!("cannot read `{}`", dst.display())),
    }
}

/// Deletes what DST holds (`--overwrite`).
fn clear_destination(dst: &Path) -> anyhow::Result<()> {
    if zip_archive(dst).is_some() {
        if url_of(dst).is_none() && dst.exists() {
            std::fs::remove_file(dst)
                .with_context(|| format!("cannot replace `{}`", dst.display()))?;
        }
        return Ok(());
    }
    if let Some(url) = url_of(dst) {
        return open_url(url)?
            .erase_prefix(&StorePrefix::root())
            .with_context(|| format!("cannot replace `{url}`"));
    }
    if dst.is_dir() {
        std::fs::remove_dir_all(dst)
            .with_context(|| format!("cannot replace `{}`", dst.display()))?;
    } else if dst.exists() {
        std::fs::remove_file(dst).with_context(|| format!("cannot replace `{}`", dst.display()))?;
    }
    Ok(())
}

/// Opens (creating) the destination store.
fn open_destination(dst: &Path) -> anyhow::Result<Arc<dyn Store>> {
    if zip_archive(dst).is_some() {
        let location = dst.to_str().context("a zip archive's path must be UTF-8")?;
        return zarrkit::store::open_or_create(location, &super::store_options())
            .with_context(|| format!("cannot create the zip archive `{location}`"));
    }
    if let Some(url) = url_of(dst) {
        return open_url(url);
    }
    Ok(Arc::new(FilesystemStore::new(dst).with_context(|| {
        format!("cannot create `{}`", dst.display())
    })?))
}

/// Runs `zarrkit cp`.
///
/// # Errors
/// If SRC cannot be opened, DST exists without --overwrite, a node cannot
/// be copied as asked, a value does not fit, writing fails, verification
/// fails, or writing to `out` fails.
pub fn run(args: &CpArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let location = locate(&args.src, None)?;
    let src = open_located(&location)?;
    check_not_nested(&location.root, &args.dst, "copy")?;
    let state = destination_state(&args.dst)?;
    let dst_zip = zip_archive(&args.dst).is_some();
    match state {
        Destination::Unfinished if !args.resume && !args.overwrite => anyhow::bail!(
            "the destination `{}` holds an unfinished copy (marked by `{MIGRATION_MARKER}`): \
             --resume continues it, --overwrite starts over",
            args.dst.display()
        ),
        Destination::Occupied if !args.overwrite => anyhow::bail!(
            "the destination `{}` exists and is not empty (--overwrite replaces it)",
            args.dst.display()
        ),
        _ => {}
    }
    let resuming = state == Destination::Unfinished && args.resume;
    let format = args.layout.format.unwrap_or(ZarrFormat::V3);
    let mut command = format!(
        "zarrkit cp --resume {} {}",
        args.src.display(),
        args.dst.display()
    );
    if changes_layout(args) || args.layout.format.is_some() {
        command.push_str(" (with the same options)");
    }
    let mut options = PlanOptions::default()
        .root(location.node.clone())
        .verify(args.verify)
        .command(command);
    if let Some(budget) = args.memory_budget {
        options = options.memory_budget(budget);
    }
    if changes_layout(args) {
        options = options.layout(Arc::new(CliRelayout {
            layout: args.layout.clone(),
            data_type: args.dtype.clone(),
            cast: args.cast.into(),
            format,
        }));
    }
    let make_plan = |dst: Arc<dyn Store>| {
        migrate::plan_with(Arc::clone(&src), dst, format, &options).with_context(|| {
            format!(
                "cannot copy `{}` to {format} in `{}`",
                args.src.display(),
                args.dst.display()
            )
        })
    };
    // Plan against an empty store first: a refused copy (and a dry run)
    // touches nothing, not even an existing DST that --overwrite would
    // replace.
    let plan = make_plan(Arc::new(MemoryStore::new()))?;
    if args.dry_run {
        if args.json {
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&plan.to_json(
                    &args.src.display().to_string(),
                    Some(&args.dst.display().to_string()),
                ))?
            )?;
        } else {
            print_plan(&plan, &args.src, &args.dst, "copy", out)?;
            writeln!(out, "dry run: nothing written")?;
        }
        return Ok(());
    }
    if args.overwrite && state != Destination::Empty {
        clear_destination(&args.dst)?;
    }
    if resuming && url_of(&args.dst).is_none() && !dst_zip {
        // A resumed copy owns the destination: the temporary files of the
        // interrupted run's unfinished writes can go.
        let dst = FilesystemStore::open_existing(&args.dst)
            .with_context(|| format!("cannot open `{}`", args.dst.display()))?;
        dst.remove_leftover_files()
            .with_context(|| format!("cannot clean up the unfinished `{}`", args.dst.display()))?;
    }
    let dst = open_destination(&args.dst)?;
    let plan = make_plan(Arc::clone(&dst))?;
    if !args.json {
        for node in plan.nodes() {
            for warning in &node.warnings {
                eprintln!("warning: {}: {warning}", node.path);
            }
        }
    }
    if resuming && !args.json {
        writeln!(
            out,
            "resuming the unfinished copy in `{}`",
            args.dst.display()
        )?;
    }
    let report = copy_with_progress(&plan, args)?;
    dst.finish()
        .with_context(|| format!("cannot finish `{}`", args.dst.display()))?;
    if args.json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&report_json(&plan, &report, args))?
        )?;
        return Ok(());
    }
    print_report(&plan, &report, args, out)
}

/// Runs the copy with a progress bar, and adds to a failure what is left
/// and how to resume.
fn copy_with_progress(plan: &MigrationPlan, args: &CpArgs) -> anyhow::Result<MigrationReport> {
    let bar = super::progress::items(plan.total_work(), PROGRESS_THRESHOLD, "chunks");
    let mut on_progress = |p: Progress| super::migrate::show_progress(bar.as_ref(), &p);
    // The library's three steps, so that a test can damage the copy
    // before verification (`--verify` must catch it).
    let mut result = migrate::copy(plan, &mut on_progress);
    if let (Ok(_), Ok(path)) = (&result, std::env::var(DAMAGE_HOOK)) {
        damage(plan.destination(), &path);
    }
    if let Ok(report) = &mut result
        && plan.verifies()
    {
        match migrate::verify(plan, &mut on_progress) {
            Ok(n) => report.chunks_verified = n,
            Err(error) => result = Err(error),
        }
    }
    let result = result.and_then(|report| migrate::finish(plan).map(|()| report));
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    result.map_err(|error| {
        let hint = match &error {
            MigrateError::Copy(error)
                if matches!(**error, zarrkit::copy::CopyError::OutOfRange { .. }) =>
            {
                " (--cast clamp or --cast wrap converts such values, --fill-value sets a fill value)"
            }
            _ => "",
        };
        let left = if zip_archive(&args.dst).is_some() {
            String::new()
        } else {
            format!(
                "; `{}` is left unfinished (every chunk in it is whole): run the same command \
                 with --resume to continue, or --overwrite to start over",
                args.dst.display()
            )
        };
        anyhow::Error::new(error).context(format!(
            "copying `{}` to `{}` failed{hint}{left}",
            args.src.display(),
            args.dst.display()
        ))
    })
}

/// Test only: the array of DST this names gets its first element's first
/// byte flipped after copying, before verification.
const DAMAGE_HOOK: &str = "ZARRKIT_TEST_DAMAGE_BEFORE_VERIFY";

fn damage(dst: &Arc<dyn Store>, path: &str) {
    let Ok(array) = zarrkit::Array::open(Arc::clone(dst), path) else {
        return;
    };
    let first = zarrkit::Region::new(vec![0; array.ndim()], vec![1; array.ndim()]);
    if let Ok(mut bytes) = array.read_region_bytes(&first) {
        bytes[0] ^= 1;
        let _ = array.write_region_bytes(&first, &bytes);
    }
}

fn action_changes(action: &Action) -> Option<String> {
    match action {
        Action::ReEncode { reason, .. } => Some(reason.clone()),
        Action::Rewrite { changes } => Some(changes.join(", ")),
        _ => None,
    }
}

fn print_report(
    plan: &MigrationPlan,
    report: &MigrationReport,
    args: &CpArgs,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    for node in plan.nodes() {
        for note in &node.notes {
            writeln!(out, "{}: {note}", node.target_path)?;
        }
    }
    for (path, reason) in &report.arrays_reencoded {
        writeln!(out, "{path}: re-encoded: {reason}")?;
    }
    for (path, changes) in &report.arrays_rewritten {
        writeln!(out, "{path}: rewritten: {changes}")?;
    }
    let (arrays, _) = plan.count_arrays();
    let verified = if plan.verifies() {
        format!(
            "; verification passed ({})",
            plural(report.chunks_verified, "chunk region", "chunk regions")
        )
    } else {
        String::new()
    };
    writeln!(
        out,
        "copied `{}` to {} in `{}`: {}, {} ({} copied byte for byte, {} re-encoded, {} rewritten), \
         {} written, {} read, {} written{verified}",
        args.src.display(),
        plan.to(),
        args.dst.display(),
        plural(report.groups, "group", "groups"),
        plural(arrays as u64, "array", "arrays"),
        report.arrays_copied,
        report.arrays_reencoded.len(),
        report.arrays_rewritten.len(),
        plural(report.chunks, "chunk", "chunks"),
        format_bytes(report.bytes_read),
        format_bytes(report.bytes_written),
    )?;
    if report.chunks_skipped > 0 {
        writeln!(
            out,
            "resumed: {} already written and matching the source kept",
            plural(report.chunks_skipped, "chunk", "chunks")
        )?;
    }
    Ok(())
}

/// The report `--json` prints (see [`AFTER_LONG_HELP`]).
fn report_json(plan: &MigrationPlan, report: &MigrationReport, args: &CpArgs) -> serde_json::Value {
    let arrays: Vec<serde_json::Value> = plan
        .nodes()
        .iter()
        .filter(|n| n.kind == zarrkit::NodeKind::Array)
        .map(|node| {
            serde_json::json!({
                "path": node.target_path.as_str(),
                "source_path": node.path.as_str(),
                "action": node.action.name(),
                "changes": action_changes(&node.action),
            })
        })
        .collect();
    serde_json::json!({
        "source": args.src.display().to_string(),
        "destination": args.dst.display().to_string(),
        "format": plan.to().name(),
        "groups": report.groups,
        "arrays": arrays,
        "chunks_written": report.chunks,
        "chunks_skipped": report.chunks_skipped,
        "bytes_read": report.bytes_read,
        "bytes_written": report.bytes_written,
        "verified": plan.verifies(),
        "chunks_verified": report.chunks_verified,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_binary_suffixes() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("512M").unwrap(), 512 << 20);
        assert_eq!(parse_size("2GiB").unwrap(), 2 << 30);
        assert_eq!(parse_size("1k").unwrap(), 1024);
        assert!(parse_size("0").is_err());
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("M").is_err());
    }
}
