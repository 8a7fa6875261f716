//! `zarrkit`: inspect Zarr hierarchies and export their arrays.
//!
//! Argument parsing and glue only; everything Zarr is in the `zarrkit`
//! library. Each subcommand lives in `cmd/<name>.rs` with
//! `pub fn run(args, out: &mut impl Write)`.
//!
//! Exit codes: 0 on success, 1 on an error (printed as `error: ...` on
//! stderr), 2 on a usage error (clap's default).

mod cmd;
mod npy;
mod prefetched;

use clap::{CommandFactory, Parser, Subcommand};
use std::io::{BufWriter, Write};
use std::process::ExitCode;

const LONG_ABOUT: &str = "\
Inspect Zarr hierarchies on the filesystem and in object storage in every Zarr \
format, export their arrays, and migrate them between formats: Zarr v3 (3.0, \
3.1), v2, v1, the v3 drafts of 2022-05-25 (`v3-draft-2022`), 2019-06-19 \
(`v3-draft-2019`) and early 2019 (`v3-draft-2019a`), and zarr-python 2.x's \
experimental v3 layout (`v3-draft-2019-json`, `meta/root/….json`).

A store is a directory, a URL or a zip archive holding a Zarr hierarchy: its root node's document \
(`zarr.json`; for v2, `.zgroup` or `.zarray`; for v1, `meta`; for the v3 drafts, \
the entry point `zarr.json`) sits directly in it. Nodes inside the store are named by paths \
such as `/weather/temperature` (`/` is the root).

URLs: `s3://bucket/prefix`, `gs://bucket/prefix`, `az://container/prefix` \
(also `azure://`, `abfs://`), `http://` and `https://` (read-only). Credentials, \
endpoints and regions come from the environment variables the cloud tools use \
(`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ENDPOINT_URL`, \
`GOOGLE_SERVICE_ACCOUNT`, `AZURE_STORAGE_ACCOUNT_NAME`, …) and from \
`--storage-option KEY=VALUE`; `--anonymous` reads public buckets without \
credentials.

Zip archives (`data.zip`, `image.ozx`, `zip://…`, or one inside a URL: \
`s3://bucket/image.ome.zip`) are stores whose root is the archive's root: \
`data.zip/a/b` is node `/a/b`. Every command reads them; `migrate SRC out.zip` \
writes a new one.";

const AFTER_LONG_HELP: &str = "\
Examples:
  zarrkit tree testdata/sample.zarr
  zarrkit info testdata/sample.zarr/weather/temperature
  zarrkit info --json testdata/sample.zarr/weather
  zarrkit tree --json testdata/sample.zarr
  zarrkit export testdata/sample.zarr /weather/temperature --out temperature.npy
  zarrkit migrate --dry-run old-v2.zarr new.zarr
  zarrkit consolidate --check --json testdata/sample.zarr
  zarrkit tree --anonymous s3://bucket/data.zarr
  zarrkit info --storage-option aws_endpoint=http://127.0.0.1:8333 s3://bucket/data.zarr/a
  zarrkit migrate --to v3 old-v2.zarr s3://bucket/new.zarr
  zarrkit cp big.zarr/volume resharded.zarr --chunks 32,32,32 --shards 256,256,256
  zarrkit create data.zarr /image --shape 4096,4096 --dtype uint16 --chunks 256,256
  zarrkit import volume.npy data.zarr /volume --chunks 64,64,64 --shards 256,256,256

Exit codes: 0 success, 1 error (the message on stderr names the path), 2 usage error.";

/// The command line.
#[derive(Debug, Parser)]
#[command(
    name = "zarrkit",
    version,
    about = "Inspect Zarr hierarchies and export their arrays",
    long_about = LONG_ABOUT,
    after_long_help = AFTER_LONG_HELP,
    propagate_version = true
)]
struct Cli {
    /// Follow symbolic links that lead outside the store's root directory
    /// (by default a key reached through one is refused, and listings skip it)
    #[arg(long, global = true)]
    follow_links_outside_root: bool,

    /// Open remote stores without credentials (unsigned requests), as
    /// public buckets allow
    #[arg(long, global = true)]
    anonymous: bool,

    /// An option of remote stores, KEY=VALUE (repeatable): the object_store
    /// keys such as `aws_endpoint`, `aws_region`, `allow_http`, `timeout`,
    /// and zarrkit's `concurrency` (requests in flight, default 64),
    /// `max_retries` and `retry_timeout` (seconds)
    #[arg(long = "storage-option", global = true, value_name = "KEY=VALUE", value_parser = parse_storage_option)]
    storage_options: Vec<(String, String)>,

    /// Print no progress bars and no notes on stderr (errors and warnings
    /// still print)
    #[arg(long, short = 'q', global = true)]
    quiet: bool,

    /// Threads for decoding, encoding and copying (default: one per CPU core)
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Summarise an array or a group: shape, data type, chunks, codecs, attributes
    #[command(
        long_about = format!("Summarise an array or a group.\n\n{}", cmd::LOCATE_HELP),
        after_long_help = cmd::info::AFTER_LONG_HELP
    )]
    Info(cmd::info::InfoArgs),
    /// Show the hierarchy as a tree, with each array's shape, data type and chunks
    #[command(
        long_about = format!(
            "Show the hierarchy, or the part of it below a node, as a tree.\n\n{}",
            cmd::LOCATE_HELP
        ),
        after_long_help = cmd::tree::AFTER_LONG_HELP
    )]
    Tree(cmd::tree::TreeArgs),
    /// Export an array to a NumPy `.npy` file and/or a node's attributes to JSON
    #[command(
        long_about = "Export an array to a NumPy `.npy` file, and/or a node's attributes to a JSON file.",
        after_long_help = cmd::export::AFTER_LONG_HELP
    )]
    Export(cmd::export::ExportArgs),
    /// Copy a whole hierarchy into another Zarr format (default v3), verifying it
    #[command(
        long_about = "Copy a whole hierarchy into another Zarr format (default final v3): every group \
                      and array with its attributes and metadata, then read every array back and \
                      compare it with the source.",
        after_long_help = cmd::migrate::AFTER_LONG_HELP
    )]
    Migrate(cmd::migrate::MigrateArgs),
    /// Copy a node or a hierarchy into another store, optionally re-chunked, re-encoded or converted
    #[command(
        visible_alias = "convert",
        long_about = "Copy a node (an array, or a group with everything below it) or a whole \
                      hierarchy into another store (a directory, a URL or a zip archive), in any \
                      format zarrkit writes (default v3), optionally with another chunk shape, \
                      shard shape, codecs, data type, fill value or chunk key encoding. Streams \
                      chunk by chunk in bounded memory, in parallel; resumable with --resume; \
                      --verify compares the copy with the source.",
        after_long_help = cmd::cp::AFTER_LONG_HELP
    )]
    Cp(Box<cmd::cp::CpArgs>),
    /// Write a hierarchy's consolidated metadata, or check it with --check
    #[command(
        long_about = "Write a hierarchy's consolidated metadata (v2 `.zmetadata`, v3 \
                      `consolidated_metadata`), or with --check compare it with the documents.",
        after_long_help = cmd::consolidate::AFTER_LONG_HELP
    )]
    Consolidate(cmd::consolidate::ConsolidateArgs),
    /// Create an array (and the parent groups it needs), in a new or existing store
    #[command(
        long_about = format!(
            "Create an empty array, and the parent groups it needs, in a new or existing store.\n\n{}",
            cmd::layout::LAYOUT_HELP
        ),
        after_long_help = cmd::create::AFTER_LONG_HELP
    )]
    Create(Box<cmd::create::CreateArgs>),
    /// Create a group (and the parent groups it needs), in a new or existing store
    #[command(
        name = "create-group",
        long_about = "Create a group, and the parent groups it needs, in a new or existing store.",
        after_long_help = cmd::create::GROUP_AFTER_LONG_HELP
    )]
    CreateGroup(cmd::create::CreateGroupArgs),
    /// Import a NumPy `.npy` file or raw bytes into a new array, streamed
    #[command(
        long_about = format!(
            "Import a NumPy `.npy` file, or a file of raw bytes, into a new array, streamed in \
             blocks of whole chunks with bounded memory.\n\n{}",
            cmd::layout::LAYOUT_HELP
        ),
        after_long_help = cmd::import::AFTER_LONG_HELP
    )]
    Import(Box<cmd::import::ImportArgs>),
}

/// Parses `KEY=VALUE` of `--storage-option`.
fn parse_storage_option(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_string(), value.to_string()))
        }
        _ => Err(format!("`{text}` is not KEY=VALUE")),
    }
}

fn main() -> ExitCode {
    // Usage errors print clap's message and exit with 2.
    let cli = Cli::parse();
    // What clap cannot check is still a usage error (exit code 2).
    let usage = match &cli.command {
        Command::Export(args) => cmd::export::check_usage(args),
        Command::Migrate(args) => cmd::migrate::check_usage(args),
        Command::Import(args) => cmd::import::check_usage(args),
        _ => Ok(()),
    };
    if let Err(message) = usage {
        Cli::command()
            .error(clap::error::ErrorKind::ArgumentConflict, message)
            .exit();
    }
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    cmd::follow_links_outside_root(cli.follow_links_outside_root);
    cmd::progress::set_quiet(cli.quiet);
    if let Some(threads) = cli.threads {
        // The library's parallel work runs on rayon's global pool.
        if let Err(err) = rayon::ThreadPoolBuilder::new()
            .num_threads(usize::from(threads))
            .build_global()
        {
            eprintln!("error: cannot start {threads} threads: {err}");
            return ExitCode::FAILURE;
        }
    }
    let mut options = zarrkit::store::StoreOptions::new().anonymous(cli.anonymous);
    for (key, value) in &cli.storage_options {
        options.set(key, value.clone());
    }
    cmd::set_store_options(options);
    let result = match cli.command {
        Command::Info(args) => cmd::info::run(&args, &mut out),
        Command::Tree(args) => cmd::tree::run(&args, &mut out),
        Command::Export(args) => cmd::export::run(&args, &mut out),
        Command::Migrate(args) => cmd::migrate::run(&args, &mut out),
        Command::Consolidate(args) => cmd::consolidate::run(&args, &mut out),
        Command::Cp(args) => cmd::cp::run(&args, &mut out),
        Command::Create(args) => cmd::create::run(&args, &mut out),
        Command::CreateGroup(args) => cmd::create::run_group(&args, &mut out),
        Command::Import(args) => cmd::import::run(&args, &mut out),
    }
    .and_then(|()| Ok(out.flush()?));
    // Show what was printed first, then what listings skipped, so that an
    // error message comes last.
    let _ = out.flush();
    for warning in cmd::skipped_link_warnings() {
        eprintln!("warning: {warning}");
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // `zarrkit tree ... | head` closes the pipe early; that is not a failure.
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) if cmd::is_usage_error(&err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
        Err(err) => {
            eprintln!("error: {err:#}");
            if cmd::is_link_outside_root(&err) {
                eprintln!(
                    "hint: --follow-links-outside-root follows links out of the store root; use it only for stores you trust"
                );
            }
            ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
