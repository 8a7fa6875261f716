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
mod values;

use clap::{CommandFactory, Parser, Subcommand};
use std::io::{BufWriter, Write};
use std::process::ExitCode;

const LONG_ABOUT: &str = "\
Inspect Zarr hierarchies on the filesystem and in object storage in every Zarr \
format, export their arrays, check them for damage, compare them, summarise \
their values, and migrate them between formats: Zarr v3 (3.0, \
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
  zarrkit check --json testdata/sample.zarr
  zarrkit diff old.zarr new.zarr --rtol 1e-6
  zarrkit stats testdata/sample.zarr /weather/temperature '0, :, 10:20' --bins 20
  zarrkit get testdata/sample.zarr/weather/temperature '0, :3, ::-1'
  zarrkit set data.zarr/temperature '0, :, :' --value nan
  zarrkit attrs set data.zarr/temperature units K
  zarrkit rm --dry-run data.zarr/old
  zarrkit resize data.zarr/temperature --shape 730,720,1440
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
    /// (by default a key reached through one is refused, listings skip it,
    /// and a STORE/PATH argument through one out of its hierarchy is refused)
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
    /// List a group's children (or an array) with shape, data type, stored chunks and bytes
    #[command(
        long_about = format!(
            "List the children of a group with their kind, shape, data type, stored chunks and \
             stored bytes (or, on an array, the array itself); with --keys, every key under a \
             prefix with its size.\n\n{}",
            cmd::LOCATE_HELP
        ),
        after_long_help = cmd::ls::AFTER_LONG_HELP
    )]
    Ls(cmd::ls::LsArgs),
    /// Time reading a whole array (and with --write, writing a copy): GB/s, chunks/s, peak memory
    #[command(
        long_about = "Time a whole read of an array, in parallel and in slabs under a memory \
                      budget, and with --write a whole write of a scratch copy, and print the \
                      throughput (GB/s of decoded bytes, chunks/s, stored bytes/s), the wall \
                      time and the peak memory.",
        after_long_help = cmd::bench::AFTER_LONG_HELP
    )]
    Bench(cmd::bench::BenchArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    #[command(
        long_about = "Print a completion script for a shell, generated from the command line's \
                      own definitions, so it covers every subcommand and option.",
        after_long_help = cmd::completions::COMPLETIONS_AFTER_LONG_HELP
    )]
    Completions(cmd::completions::CompletionsArgs),
    /// Print the man page (roff), or write one page per subcommand with --out-dir
    #[command(
        long_about = "Print the man page of zarrkit (roff, for `man -l -`), generated from the \
                      command line's own definitions, or with --out-dir write one page per \
                      command: zarrkit.1, zarrkit-ls.1, ….",
        after_long_help = cmd::completions::MAN_AFTER_LONG_HELP
    )]
    Man(cmd::completions::ManArgs),
    /// Validate a hierarchy: its documents, every stored chunk, stray keys, consolidated metadata
    #[command(
        long_about = format!(
            "Validate a hierarchy, or the part of it below a node: every metadata document \
             against its format's rules, every stored chunk decoded (checksums verified), keys \
             that belong to no node or lie outside an array's grid, stale consolidated metadata \
             and arrays with more chunks than their grid. Exit status 1 when anything is wrong.\n\n{}",
            cmd::LOCATE_HELP
        ),
        after_long_help = cmd::check::AFTER_LONG_HELP
    )]
    Check(cmd::check::CheckArgs),
    /// Compare two nodes or hierarchies: nodes, metadata field by field, then values
    #[command(
        long_about = "Compare two nodes or hierarchies: which nodes exist on each side, their \
                      metadata field by field, then the values of arrays chunk by chunk (NaN-aware, \
                      with tolerances), with the first differing elements. Exit status 1 when \
                      anything differs.",
        after_long_help = cmd::diff::AFTER_LONG_HELP
    )]
    Diff(cmd::diff::DiffArgs),
    /// Statistics of an array or a selection: count, min, max, mean, std, NaNs, histogram
    #[command(
        long_about = "Statistics of an array, or of a selection of it in NumPy syntax: count, \
                      min, max, mean, standard deviation, NaN and fill-value counts and a \
                      histogram, computed chunk by chunk in parallel; with the array's stored \
                      chunks, stored and decoded bytes and compression ratio.",
        after_long_help = cmd::stats::AFTER_LONG_HELP
    )]
    Stats(cmd::stats::StatsArgs),
    /// Print or save a selection of an array, in NumPy's indexing syntax
    #[command(
        long_about = format!(
            "Print a selection of an array (`'0, 10:20, ::-1'`, `'..., -1'`) as a table, or \
             write it as JSON, CSV, a NumPy .npy file or raw bytes.\n\n{}",
            cmd::node_arg::NODE_ARG_HELP
        ),
        after_long_help = cmd::get::AFTER_LONG_HELP
    )]
    Get(cmd::get::GetArgs),
    /// Write a selection of an array from a .npy file or one value
    #[command(
        long_about = format!(
            "Write a selection of an array (`'0, 10:20, ::-1'`) from a NumPy .npy file \
             (broadcast to the selection, converted with range checks) or one value \
             written into every selected element.\n\n{}",
            cmd::node_arg::NODE_ARG_HELP
        ),
        after_long_help = cmd::set::AFTER_LONG_HELP
    )]
    Set(cmd::set::SetArgs),
    /// Print, set or remove a node's attributes
    #[command(
        long_about = format!(
            "Print a node's attributes as JSON, set keys, or remove one, in the node's own \
             format.\n\n{}",
            cmd::node_arg::NODE_ARG_HELP
        ),
        after_long_help = cmd::attrs::AFTER_LONG_HELP
    )]
    Attrs(cmd::attrs::AttrsArgs),
    /// Remove a node and everything below it (--dry-run lists it)
    #[command(
        long_about = format!(
            "Remove an array or a group with everything below it: documents, chunks and \
             child nodes.\n\n{}",
            cmd::node_arg::NODE_ARG_HELP
        ),
        after_long_help = cmd::rm::AFTER_LONG_HELP
    )]
    Rm(cmd::rm::RmArgs),
    /// Change an array's shape
    #[command(
        long_about = format!(
            "Change an array's shape, erasing the chunks outside the new shape.\n\n{}",
            cmd::node_arg::NODE_ARG_HELP
        ),
        after_long_help = cmd::resize::AFTER_LONG_HELP
    )]
    Resize(cmd::resize::ResizeArgs),
}

/// For `get` and `set`, puts a space before each argument that starts with
/// `-` and then a digit, `:` or `.`, and before the argument after
/// `--value`, so that clap takes a selection such as `-1` or `-3:, ::-1`
/// and a value such as `--value -5` or `--value -inf` for values rather
/// than options (the selection and value parsers skip the space). No option
/// of the commands starts that way.
fn protect_negative_values(
    args: impl IntoIterator<Item = std::ffi::OsString>,
) -> Vec<std::ffi::OsString> {
    let args: Vec<std::ffi::OsString> = args.into_iter().collect();
    let command = args
        .iter()
        .skip(1)
        .find(|a| !a.to_string_lossy().starts_with('-'))
        .map(|a| a.to_string_lossy().into_owned());
    if !matches!(command.as_deref(), Some("get" | "set")) {
        return args;
    }
    let mut after_value = false;
    args.into_iter()
        .map(|arg| {
            let text = arg.to_string_lossy();
            let mut chars = text.chars();
            let negative = chars.next() == Some('-')
                && chars
                    .next()
                    .is_some_and(|c| c.is_ascii_digit() || matches!(c, ':' | '.'));
            // `--value -inf`: the value of --value is never an option.
            let protect = negative || (after_value && text.starts_with('-'));
            after_value = text == "--value";
            if protect {
                let mut spaced = std::ffi::OsString::from(" ");
                spaced.push(&arg);
                spaced
            } else {
                arg
            }
        })
        .collect()
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
    let cli = Cli::parse_from(protect_negative_values(std::env::args_os()));
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
        Command::Ls(args) => cmd::ls::run(&args, &mut out),
        Command::Bench(args) => cmd::bench::run(&args, &mut out),
        Command::Completions(args) => cmd::completions::run(&args, Cli::command(), &mut out),
        Command::Man(args) => cmd::completions::run_man(&args, Cli::command(), &mut out),
        Command::Check(args) => cmd::check::run(&args, &mut out),
        Command::Diff(args) => cmd::diff::run(&args, &mut out),
        Command::Stats(args) => cmd::stats::run(&args, &mut out),
        Command::Get(args) => cmd::get::run(&args, &mut out),
        Command::Set(args) => cmd::set::run(&args, &mut out),
        Command::Attrs(args) => cmd::attrs::run(&args, &mut out),
        Command::Rm(args) => cmd::rm::run(&args, &mut out),
        Command::Resize(args) => cmd::resize::run(&args, &mut out),
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
