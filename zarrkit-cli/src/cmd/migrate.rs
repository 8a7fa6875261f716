//! `zarrkit migrate`: copy a whole hierarchy into another Zarr format.

use super::{format_bytes, open_store, open_url, plural, resolve, url_of, zip_archive};
use anyhow::Context;
use clap::Args;
use clap::builder::{PossibleValue, TypedValueParser};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zarrkit::format::ZarrFormat;
use zarrkit::migrate::{
    self, Action, MIGRATION_MARKER, MigrationPlan, Phase, PlanOptions, Progress,
};
use zarrkit::store::{FilesystemStore, MemoryStore, Store};

/// Stored chunks above which a progress bar is worth showing.
const PROGRESS_THRESHOLD: u64 = 64;

/// The text after the options in `--help`.
pub const AFTER_LONG_HELP: &str = "\
Examples:
  zarrkit migrate old-v2.zarr new.zarr
  zarrkit migrate --dry-run old-v2.zarr new.zarr
  zarrkit migrate --to v2 data.zarr data-v2.zarr
  zarrkit migrate --portable old-v2.zarr readable-everywhere.zarr

Every group and array is copied with its attributes and metadata. An \
array's chunks are copied byte for byte under their new keys when the \
target can hold its codecs; otherwise each chunk is decoded and re-encoded \
with codecs the target can hold (the output says which arrays and why). \
Dimension names go to the attribute `_ARRAY_DIMENSIONS` in a format without \
them (v2, the v3 drafts). What the target cannot hold at all is refused \
before anything is written, naming the node and the feature. After copying, \
every array of DST is read back and compared with SRC.

Into v3, a warning on stderr names each array that a common v3 reader \
cannot open: zarr-python 3.1 reads no `struct` (it reads `structured`), \
raw `r*` or small float types; tensorstore reads no `numcodecs.*` or \
`vlen-*` codec and no string, bytes or datetime type. --portable \
re-encodes every array whose codecs are not all core v3 codecs (`bytes`, \
`transpose`, `gzip`, `zstd`, `blosc`, `crc32c`, `sharding_indexed`) with \
`bytes` and the source's compressor if it is one of those, else `zstd` \
(unsharded); it cannot change a data type, so an array whose type a reader \
lacks, or needs another codec (`string` needs `vlen-utf8`), keeps its codecs \
and its warning.

DST must not exist or be an empty directory, and neither of SRC and DST may \
lie inside the other. --dry-run prints the plan (each node's path, kind, \
action, stored chunks and bytes) and writes nothing.

Until the copy is verified, DST holds the file `zarrkit-migration-unfinished.json`, \
and zarrkit refuses to open it (info, tree, export), so an interrupted \
migration is never taken for a complete one. Run the same command again to \
resume: what is already copied and matches SRC is skipped, the rest is \
copied, everything is verified, and the file is removed. Or delete DST to \
start over.

--dry-run --json prints the plan as one object:
  source, destination, to     the paths and the target format
  writes_consolidated         whether DST gets consolidated metadata
  nodes                       each {path, node_type, source_format, action
                              (create, copy or re-encode), reason and codecs
                              (for re-encode, else null), notes (what is
                              adapted), warnings (which common reader
                              cannot open the result), chunks, bytes
                              (stored in SRC)}
  total                       {nodes, groups, arrays, reencoded, chunks, bytes}

--json (without --dry-run) prints, after the copy, {source, destination, \
format, resumed, groups, arrays_copied, arrays_reencoded: [{path, reason}], \
notes: [{path, note}], chunks_written, chunks_skipped (kept by a resume), \
bytes_read, bytes_written, chunks_verified}.";

/// Arguments of `zarrkit migrate`.
#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// The store directory to migrate (its root node's document sits in it)
    #[arg(value_name = "SRC")]
    pub src: PathBuf,

    /// The new store directory: it must not exist, be empty, or hold an
    /// unfinished migration of SRC to resume
    #[arg(value_name = "DST")]
    pub dst: PathBuf,

    /// The target format
    #[arg(
        long,
        value_name = "FORMAT",
        default_value = "v3",
        value_parser = FormatParser
    )]
    pub to: ZarrFormat,

    /// Print the plan and write nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Print the report as JSON (with --dry-run, the plan; described below)
    #[arg(long)]
    pub json: bool,

    /// Into v3, re-encode arrays whose codecs not every current v3 reader
    /// has (`numcodecs.*`, extension codecs) with core codecs only
    #[arg(long)]
    pub portable: bool,
}

/// Parses `--to`, and gives clap the values to list in `--help`.
#[derive(Clone, Copy, Debug)]
pub struct FormatParser;

impl TypedValueParser for FormatParser {
    type Value = ZarrFormat;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<ZarrFormat, clap::Error> {
        let name = value.to_string_lossy();
        parse_format(&name).map_err(|message| {
            clap::Error::raw(clap::error::ErrorKind::InvalidValue, format!("{message}\n"))
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(format_values().into_iter()))
    }
}

/// The formats `--to` takes, in the library's probe order.
const FORMATS: &[ZarrFormat] = ZarrFormat::ALL;

/// The values of `--to`, each with what it is, for `--help`.
fn format_values() -> Vec<PossibleValue> {
    FORMATS
        .iter()
        .map(|format| PossibleValue::new(format.name()).help(format.description()))
        .collect()
}

fn parse_format(name: &str) -> Result<ZarrFormat, String> {
    FORMATS
        .iter()
        .copied()
        .find(|f| f.name() == name)
        .ok_or_else(|| {
            let names: Vec<&str> = FORMATS.iter().map(|f| f.name()).collect();
            format!("unknown format `{name}`; one of: {}", names.join(", "))
        })
}

/// Runs `zarrkit migrate`.
///
/// # Errors
/// If SRC cannot be opened, DST is not empty, a node cannot be migrated, a
/// chunk cannot be copied, verification fails, or writing to `out` fails.
pub fn run(args: &MigrateArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let src = open_store(&args.src)?;
    check_not_nested(&args.src, &args.dst, "migrate")?;
    let resuming = check_destination(&args.dst)?;
    check_usage(args).map_err(anyhow::Error::msg)?;
    let options = PlanOptions::default().portable(args.portable);
    let make_plan = |dst: Arc<dyn Store>| {
        migrate::plan_with(Arc::clone(&src), dst, args.to, &options).with_context(|| {
            format!(
                "cannot migrate `{}` to {} in `{}`",
                args.src.display(),
                args.to,
                args.dst.display()
            )
        })
    };
    // A zip destination is written whole when the migration ends
    // (`Store::finish`); a URL or directory as the migration goes.
    let dst_zip = zip_archive(&args.dst).is_some();
    let dst_url = url_of(&args.dst).or_else(|| dst_zip.then(|| args.dst.to_str()).flatten());
    let open_dst = || -> anyhow::Result<Arc<dyn Store>> {
        if dst_zip {
            let location = dst_url.context("a zip archive's path must be UTF-8")?;
            let options = super::store_options();
            return zarrkit::store::open_or_create(location, &options)
                .with_context(|| format!("cannot create the zip archive `{location}`"));
        }
        if let Some(url) = dst_url {
            return open_url(url);
        }
        Ok(Arc::new(FilesystemStore::new(&args.dst).with_context(
            || format!("cannot open `{}`", args.dst.display()),
        )?))
    };
    if resuming && !args.dry_run && dst_url.is_none() {
        // A resumed migration owns the destination: the temporary files of
        // the interrupted run's unfinished writes can go.
        let dst = FilesystemStore::open_existing(&args.dst)
            .with_context(|| format!("cannot open `{}`", args.dst.display()))?;
        let removed = dst
            .remove_leftover_files()
            .with_context(|| format!("cannot clean up the unfinished `{}`", args.dst.display()))?;
        if removed > 0 {
            writeln!(
                out,
                "removed {} that the interrupted run left in `{}`",
                plural(removed, "temporary file", "temporary files"),
                args.dst.display()
            )?;
        }
    }
    // A new zip archive is planned like a new directory: nothing is
    // created before the plan is accepted (and nothing by a dry run).
    let (plan, dst_store) = if (dst_url.is_some() && !dst_zip) || args.dst.exists() {
        let dst = open_dst()?;
        (make_plan(Arc::clone(&dst))?, Some(dst))
    } else {
        // Plan against an empty store first, so a refused migration (and a
        // dry run) does not even create the directory.
        let plan = make_plan(Arc::new(MemoryStore::new()))?;
        if args.dry_run {
            (plan, None)
        } else {
            let dst = open_dst()?;
            (make_plan(Arc::clone(&dst))?, Some(dst))
        }
    };
    if args.json && args.dry_run {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&plan.to_json(
                &args.src.display().to_string(),
                Some(&args.dst.display().to_string()),
            ))?
        )?;
        return Ok(());
    }
    // What a common reader cannot open, on stderr, before anything is written.
    for node in plan.nodes() {
        for warning in &node.warnings {
            eprintln!("warning: {}: {warning}", node.path);
        }
    }
    if resuming && !args.json {
        writeln!(
            out,
            "resuming the unfinished migration in `{}` (marked by `{MIGRATION_MARKER}`)",
            args.dst.display()
        )?;
    }
    if args.dry_run {
        print_plan(&plan, &args.src, &args.dst, "migrate", out)?;
        writeln!(out, "dry run: nothing written")?;
        return Ok(());
    }
    let bar = super::progress::items(plan.total_chunks(), PROGRESS_THRESHOLD, "chunks");
    let mut on_progress = |p: Progress| show_progress(bar.as_ref(), &p);
    let result = migrate::migrate(&plan, &mut on_progress);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let report = result.with_context(|| {
        let marker = args.dst.join(MIGRATION_MARKER);
        let left = if marker.is_file() {
            format!(
                "; `{}` is left unfinished, marked by `{}`: run the same command again to resume, \
                 or delete `{}` to start over",
                args.dst.display(),
                marker.display(),
                args.dst.display()
            )
        } else {
            String::new()
        };
        format!(
            "migrating `{}` to {} in `{}` failed{left}",
            args.src.display(),
            args.to,
            args.dst.display()
        )
    })?;
    if let Some(dst) = &dst_store {
        // A zip archive is written now, whole (other stores wrote through).
        dst.finish()
            .with_context(|| format!("cannot finish `{}`", args.dst.display()))?;
    }
    if args.json {
        let printed = report.to_json(
            &plan,
            &args.src.display().to_string(),
            &args.dst.display().to_string(),
            resuming,
        );
        writeln!(out, "{}", serde_json::to_string_pretty(&printed)?)?;
        return Ok(());
    }
    for node in plan.nodes() {
        for note in &node.notes {
            writeln!(out, "{}: {note}", node.path)?;
        }
    }
    for (path, reason) in &report.arrays_reencoded {
        writeln!(out, "{path}: re-encoded: {reason}")?;
    }
    writeln!(
        out,
        "migrated `{}` to {} in `{}`: {}, {} ({} copied byte for byte, {} re-encoded), \
         {}, {} read, {} written; verification passed ({})",
        args.src.display(),
        plan.to(),
        args.dst.display(),
        plural(report.groups, "group", "groups"),
        plural(
            report.arrays_copied + report.arrays_reencoded.len() as u64,
            "array",
            "arrays"
        ),
        report.arrays_copied,
        report.arrays_reencoded.len(),
        plural(report.chunks, "chunk", "chunks"),
        format_bytes(report.bytes_read),
        format_bytes(report.bytes_written),
        plural(report.chunks_verified, "chunk region", "chunk regions"),
    )?;
    if report.chunks_skipped > 0 {
        writeln!(
            out,
            "resumed: {} already copied and matching the source kept",
            plural(report.chunks_skipped, "chunk", "chunks")
        )?;
    }
    Ok(())
}

/// Shows a copy's progress (its phase, node and chunks) on `bar`, if any:
/// the callback of `migrate` and `cp`.
pub(super) fn show_progress(bar: Option<&indicatif::ProgressBar>, p: &Progress) {
    if let Some(bar) = bar {
        bar.set_message(format!(
            "{} {}",
            match p.phase {
                Phase::Copy => "copying",
                Phase::Verify => "verifying",
            },
            p.path
        ));
        bar.set_length(p.chunks_total.max(p.chunks_done));
        bar.set_position(p.chunks_done);
    }
}

/// What clap cannot check, as a usage error's message: `--portable`
/// chooses codecs every v3 reader has, so it goes with `--to v3` only.
///
/// # Errors
/// The message, if the arguments do not go together.
pub fn check_usage(args: &MigrateArgs) -> Result<(), String> {
    if args.portable && !args.to.is_v3() {
        return Err(format!(
            "--portable applies to v3 only (it chooses codecs every v3 reader has), not `--to {}`",
            args.to
        ));
    }
    Ok(())
}

/// Refuses a destination inside the source or a source inside the
/// destination, compared after resolving `..` and symbolic links: the
/// migration would copy its own output (`migrate a.zarr a.zarr/sub` wrote
/// a copy into the source), or write over what it reads.
pub(super) fn check_not_nested(src: &Path, dst: &Path, verb: &str) -> anyhow::Result<()> {
    let (src_full, dst_full) = match (url_of(src), url_of(dst)) {
        (None, None) => (resolve(src)?, resolve(dst)?),
        // `Path::starts_with` compares whole names, as URL prefixes must be.
        (Some(src), Some(dst)) => (PathBuf::from(src), PathBuf::from(dst)),
        // A local directory and a URL: never one inside the other.
        _ => return Ok(()),
    };
    if dst_full.starts_with(&src_full) {
        anyhow::bail!(
            "the destination `{}` is inside the source `{}`: {verb} into a directory outside it",
            dst.display(),
            src.display()
        );
    }
    if src_full.starts_with(&dst_full) {
        anyhow::bail!(
            "the source `{}` is inside the destination `{}`: {verb} into a directory outside it",
            src.display(),
            dst.display()
        );
    }
    Ok(())
}

/// Refuses a destination that exists and is not an empty directory, before
/// a store is opened on it, unless it holds the marker of an unfinished
/// migration: returns whether it does (the migration then resumes).
fn check_destination(dst: &Path) -> anyhow::Result<bool> {
    if let Some((archive, rest)) = zip_archive(dst) {
        // A zip archive is written once, whole: it cannot be added to or
        // resumed.
        if !rest.is_empty() {
            anyhow::bail!(
                "the destination `{}` lies inside the zip archive `{}`: migrate into the archive itself",
                dst.display(),
                archive.display()
            );
        }
        if url_of(dst).is_none() && dst.exists() {
            anyhow::bail!(
                "the destination zip archive `{}` exists (migrate into a new archive)",
                dst.display()
            );
        }
        return Ok(false);
    }
    if let Some(url) = url_of(dst) {
        let store = open_url(url)?;
        if zarrkit::migrate::check_finished(store.as_ref()).is_err() {
            return Ok(true);
        }
        let listed = store
            .list_dir(&zarrkit::store::StorePrefix::root())
            .with_context(|| format!("cannot list the destination `{url}`"))?;
        if !listed.keys.is_empty() || !listed.prefixes.is_empty() {
            anyhow::bail!(
                "the destination `{url}` is not empty (migrate into a new or empty prefix)"
            );
        }
        return Ok(false);
    }
    match std::fs::read_dir(dst) {
        Ok(mut entries) => {
            if dst.join(MIGRATION_MARKER).is_file() {
                return Ok(true);
            }
            if entries.next().is_some() {
                anyhow::bail!(
                    "the destination `{}` is not empty (migrate into a new or empty directory)",
                    dst.display()
                );
            }
            Ok(false)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e)
            .with_context(|| format!("the destination `{}` is not a directory", dst.display())),
    }
}

pub(super) fn print_plan(
    plan: &MigrationPlan,
    src: &Path,
    dst: &Path,
    verb: &str,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    writeln!(
        out,
        "plan: {verb} `{}` to {} in `{}`",
        src.display(),
        plan.to(),
        dst.display()
    )?;
    let width = plan
        .nodes()
        .iter()
        .map(|n| n.path.as_str().len())
        .max()
        .unwrap_or(1);
    for node in plan.nodes() {
        let kind = match node.kind {
            zarrkit::NodeKind::Array => "array",
            zarrkit::NodeKind::Group => "group",
        };
        let mut line = format!(
            "{:<width$}  {kind}  {:<9}  from {}",
            node.path.as_str(),
            node.action.name(),
            node.source_format
        );
        if node.kind == zarrkit::NodeKind::Array {
            line.push_str(&format!(
                ", {}, {}",
                plural(node.chunks, "chunk", "chunks"),
                format_bytes(node.bytes)
            ));
        }
        writeln!(out, "{line}")?;
        if let Action::ReEncode { reason, codecs } = &node.action {
            writeln!(
                out,
                "{:width$}    re-encode with [{}]: {reason}",
                "",
                codecs.join(", ")
            )?;
        }
        if let Action::Rewrite { changes } = &node.action {
            writeln!(
                out,
                "{:width$}    rewrite into {}: {}",
                "",
                plural(node.write_units, "write unit", "write units"),
                changes.join(", ")
            )?;
        }
        for note in &node.notes {
            writeln!(out, "{:width$}    note: {note}", "")?;
        }
    }
    let (arrays, reencoded) = plan.count_arrays();
    writeln!(
        out,
        "total: {}, {} ({} copied byte for byte, {reencoded} re-encoded), {}, {}",
        plural(plan.nodes().len() as u64, "node", "nodes"),
        plural(arrays as u64, "array", "arrays"),
        arrays - reencoded,
        plural(plan.total_chunks(), "chunk", "chunks"),
        format_bytes(plan.total_bytes())
    )?;
    Ok(())
}
