//! `zarrkit consolidate`: write or check a hierarchy's consolidated metadata.

use super::{Location, locate, open_located, plural, zip_archive};
use anyhow::{Context, bail};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use zarrkit::consolidate::{self, MismatchKind};
use zarrkit::store::Store;
use zarrkit::{Group, NodePath};

/// The text after the options in `--help`.
pub const AFTER_LONG_HELP: &str = "\
Examples:
  zarrkit consolidate data.zarr
  zarrkit consolidate --check data.zarr
  zarrkit consolidate --check --json data.zarr/group

Consolidated metadata gathers every node document of a hierarchy into one \
place, so that readers open the whole hierarchy with one read: for Zarr v2 \
the key `.zmetadata` next to the root `.zgroup` (as zarr-python 2 writes \
it), for Zarr v3 the field `consolidated_metadata` of the root `zarr.json` \
(as zarr-python 3 writes it; every other field of the document is kept). \
Running it again replaces the consolidated metadata with the current \
documents.

--check writes nothing: it compares the consolidated metadata with the \
documents it summarises and lists every entry that is missing, extra or \
different; a group without consolidated metadata is reported as such. \
Exit status: 0 when they agree (or after writing), 1 on any mismatch, \
missing consolidated metadata or error, 2 on a usage error.

--check --json prints {\"store\", \"path\" (the group), \"consolidated\" \
(whether it has consolidated metadata), \"agrees\", \"mismatches\": [{\"kind\": \
\"missing\" | \"extra\" | \"differs\", \"key\"}]}, with the same exit status. \
Without --check, --json prints what was written: {\"store\", \"path\", \"format\", \
\"key\" (the document holding it), \"entries\" (the nodes it covers)}.";

/// Arguments of `zarrkit consolidate`.
#[derive(Debug, Args)]
pub struct ConsolidateArgs {
    /// A store directory, or a group inside it such as `my.zarr/a` (its
    /// consolidated metadata covers the nodes below it)
    #[arg(value_name = "STORE[/PATH]")]
    pub target: PathBuf,

    /// The group inside the store (`/` for the root, or `/a/b`); the first
    /// argument is then the store root itself
    #[arg(long, value_name = "NODE")]
    pub path: Option<String>,

    /// Compare the consolidated metadata with the real documents instead of
    /// writing it
    #[arg(long)]
    pub check: bool,

    /// Print the result as JSON (described below)
    #[arg(long)]
    pub json: bool,
}

/// Runs `zarrkit consolidate`.
///
/// # Errors
/// If the store cannot be opened, the node is not a v2 or v3 group, a
/// document is invalid, `--check` finds a mismatch or no consolidated
/// metadata, or writing to `out` fails.
pub fn run(args: &ConsolidateArgs, out: &mut impl Write) -> anyhow::Result<()> {
    // `locate` finds the store above a path that does not exist (and the
    // node is then missing); a consolidation target must exist.
    if args.path.is_none()
        && super::url_of(&args.target).is_none()
        && zip_archive(&args.target).is_none()
        && !args.target.exists()
    {
        bail!("`{}` does not exist", args.target.display());
    }
    let location = locate(&args.target, args.path.as_deref())?;
    let store = open_located(&location)?;
    let Location { root, node, .. } = location;
    let display = args.target.display();
    if args.check {
        return check(&store, &node, &display.to_string(), args.json, out);
    }
    let report = consolidate::consolidate(store.as_ref(), node.as_str())
        .with_context(|| format!("cannot consolidate the metadata of `{display}`"))?;
    if args.json {
        let printed = serde_json::json!({
            "store": root.display().to_string(),
            "path": node.as_str(),
            "format": report.format.to_string(),
            "key": report.key.to_string(),
            "entries": report.entries,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&printed)?)?;
        return Ok(());
    }
    writeln!(
        out,
        "wrote consolidated metadata ({}, {}) to `{}` in `{}`",
        report.format,
        plural(report.entries as u64, "entry", "entries"),
        report.key,
        root.display()
    )?;
    Ok(())
}

/// `consolidate --check`: compares and reports, as text or JSON.
fn check(
    store: &Arc<dyn Store>,
    node: &NodePath,
    display: &str,
    json: bool,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    // Without consolidated metadata every document would be reported
    // "missing from the consolidated metadata": say that there is none.
    let none = Group::open(Arc::clone(store), node.as_str())
        .is_ok_and(|group| !group.is_consolidated() && group.warnings().is_empty());
    let mismatches = if none {
        Vec::new()
    } else {
        consolidate::check(store.as_ref(), node.as_str())
            .with_context(|| format!("cannot check the consolidated metadata of `{display}`"))?
    };
    if json {
        let printed = serde_json::json!({
            "store": display,
            "path": node.as_str(),
            "consolidated": !none,
            "agrees": !none && mismatches.is_empty(),
            "mismatches": mismatches.iter().map(|m| serde_json::json!({
                "kind": match m.kind {
                    MismatchKind::Missing => "missing",
                    MismatchKind::Extra => "extra",
                    MismatchKind::Differs => "differs",
                },
                "key": m.key,
            })).collect::<Vec<_>>(),
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&printed)?)?;
    }
    if none {
        bail!(
            "`{display}` has no consolidated metadata (write it with `zarrkit consolidate \
             {display}`)"
        );
    }
    if mismatches.is_empty() {
        if !json {
            writeln!(
                out,
                "`{display}`: the consolidated metadata agrees with the documents"
            )?;
        }
        return Ok(());
    }
    if !json {
        for mismatch in &mismatches {
            writeln!(out, "{mismatch}")?;
        }
    }
    out.flush()?;
    bail!(
        "the consolidated metadata of `{display}` disagrees with the documents in {}",
        plural(mismatches.len() as u64, "place", "places")
    );
}
