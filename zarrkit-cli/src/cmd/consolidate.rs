//! `zarrkit consolidate`: write or check a hierarchy's consolidated metadata.

use super::open_store;
use anyhow::{Context, bail};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use zarrkit::{Group, consolidate};

/// The text after the options in `--help`.
pub const AFTER_LONG_HELP: &str = "\
Examples:
  zarrkit consolidate data.zarr
  zarrkit consolidate --check data.zarr

Consolidated metadata gathers every node document of a hierarchy into one \
place, so that readers open the whole hierarchy with one read: for Zarr v2 \
the key `.zmetadata` next to the root `.zgroup` (as zarr-python 2 writes \
it), for Zarr v3 the field `consolidated_metadata` of the root `zarr.json` \
(as zarr-python 3 writes it; every other field of the document is kept). \
Running it again replaces the consolidated metadata with the current \
documents.

--check writes nothing: it compares the consolidated metadata with the \
documents it summarises and lists every entry that is missing, extra or \
different. Exit status: 0 when they agree (or after writing), 1 on any \
mismatch or error, 2 on a usage error.";

/// Arguments of `zarrkit consolidate`.
#[derive(Debug, Args)]
pub struct ConsolidateArgs {
    /// The store directory (its root group's document sits in it)
    #[arg(value_name = "STORE")]
    pub store: PathBuf,

    /// Compare the consolidated metadata with the real documents instead of
    /// writing it
    #[arg(long)]
    pub check: bool,
}

/// Runs `zarrkit consolidate`.
///
/// # Errors
/// If the store cannot be opened, its root is not a v2 or v3 group, a
/// document is invalid, `--check` finds a mismatch, or writing to `out`
/// fails.
pub fn run(args: &ConsolidateArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let store = open_store(&args.store)?;
    let display = args.store.display();
    if args.check {
        // Without consolidated metadata every document would be reported
        // "missing from the consolidated metadata": say that there is none.
        if let Ok(root) = Group::open(Arc::clone(&store), "/")
            && !root.is_consolidated()
            && root.warnings().is_empty()
        {
            bail!(
                "`{display}` has no consolidated metadata (write it with `zarrkit consolidate \
                 {display}`)"
            );
        }
        let mismatches = consolidate::check(store.as_ref(), "/")
            .with_context(|| format!("cannot check the consolidated metadata of `{display}`"))?;
        if mismatches.is_empty() {
            writeln!(
                out,
                "`{display}`: the consolidated metadata agrees with the documents"
            )?;
            return Ok(());
        }
        for mismatch in &mismatches {
            writeln!(out, "{mismatch}")?;
        }
        out.flush()?;
        bail!(
            "the consolidated metadata of `{display}` disagrees with the documents in {} {}",
            mismatches.len(),
            if mismatches.len() == 1 {
                "place"
            } else {
                "places"
            }
        );
    }
    let report = consolidate::consolidate(store.as_ref(), "/")
        .with_context(|| format!("cannot consolidate the metadata of `{display}`"))?;
    writeln!(
        out,
        "wrote consolidated metadata ({}, {} entries) to `{}` in `{display}`",
        report.format, report.entries, report.key
    )?;
    Ok(())
}
