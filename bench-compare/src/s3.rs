//! Issue #13's S3 benchmark: whole-array write and read of the `uint16`
//! side³ `zstd` and `sharded` chains in an S3 bucket (SeaweedFS on
//! loopback, as `scripts/servers.sh` starts it), zarrkit against zarrs
//! (`zarrs_object_store`, its async API on tokio), zarr-python 3.1.6 with
//! its `ObjectStore` (obstore) and tensorstore's `s3` kvstore, each
//! repetition in its own child process. See README.md, "S3 (SeaweedFS)".

use crate::imps::{ARRAY_PATH, BoxError};
use crate::workload::{self, Codecs, Pattern};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

const USAGE: &str = "\
usage: bench-compare s3 [--side N] [--reps N] [--threads N] [--python PATH]
                        [--imps zarrkit,zarrs,tensorstore,zarr-python]
                        [--codecs zstd,sharded] [--workloads write,read_all]
                        [--keep]

Needs ZARRKIT_S3_ENDPOINT (a loopback http:// endpoint), AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY and optionally AWS_REGION (default us-east-1) and
ZARRKIT_TEST_BUCKET (default zarrkit), as scripts/servers.sh's
start_servers exports them. The stores go under
s3://BUCKET/bench-compare-s3-PID/ and are removed after each chain unless
--keep.

  --side N     the array is N^3 uint16 (default 256)
  --reps N     timed repetitions, each in its own process (default 3)
  --threads N  threads every implementation may use (default 2)

Child (by hand): bench-compare s3-child IMP WORKLOAD CODECS PREFIX SIDE";

/// The S3 implementations, in table order.
const IMPS: [&str; 4] = ["zarrkit", "zarrs", "tensorstore", "zarr-python"];
const SHORT: [&str; 4] = ["zarrkit", "zarrs", "ts", "zp"];

/// The bucket, endpoint and credentials, from the environment.
#[derive(Clone)]
struct S3 {
    endpoint: String,
    bucket: String,
    region: String,
    key_id: String,
    secret: String,
}

impl S3 {
    fn from_env() -> Result<Self, BoxError> {
        let var = |name: &str| {
            std::env::var(name).map_err(|_| {
                format!("{name} is not set (run scripts/servers.sh's start_servers)\n{USAGE}")
            })
        };
        let endpoint = var("ZARRKIT_S3_ENDPOINT")?;
        let host = endpoint
            .strip_prefix("http://")
            .and_then(|rest| rest.split([':', '/']).next())
            .unwrap_or("");
        if !matches!(host, "127.0.0.1" | "localhost" | "[::1]") {
            return Err(format!("{endpoint}: only a loopback http:// endpoint is measured").into());
        }
        Ok(S3 {
            endpoint,
            bucket: std::env::var("ZARRKIT_TEST_BUCKET").unwrap_or_else(|_| "zarrkit".into()),
            region: std::env::var("AWS_REGION").unwrap_or_else(|_| "us-east-1".into()),
            key_id: var("AWS_ACCESS_KEY_ID")?,
            secret: var("AWS_SECRET_ACCESS_KEY")?,
        })
    }

    /// zarrkit's store at `prefix` of the bucket, every option explicit.
    fn zarrkit(&self, prefix: &str) -> Result<Arc<dyn zarrkit::store::Store>, BoxError> {
        let options = zarrkit::store::StoreOptions::new()
            .with("aws_endpoint", &self.endpoint)
            .with("aws_region", &self.region)
            .with("aws_access_key_id", &self.key_id)
            .with("aws_secret_access_key", &self.secret)
            .with("allow_http", "true");
        Ok(zarrkit::store::open(
            &format!("s3://{}/{prefix}", self.bucket),
            &options,
        )?)
    }

    /// zarrs' async store at `prefix` of the bucket.
    fn zarrs(
        &self,
        prefix: &str,
    ) -> Result<zarrs::storage::AsyncReadableWritableStorage, BoxError> {
        use zarrs_object_store::object_store::{aws::AmazonS3Builder, prefix::PrefixStore};
        let s3 = AmazonS3Builder::new()
            .with_endpoint(&self.endpoint)
            .with_bucket_name(&self.bucket)
            .with_region(&self.region)
            .with_access_key_id(&self.key_id)
            .with_secret_access_key(&self.secret)
            .with_allow_http(true)
            .build()?;
        Ok(Arc::new(zarrs_object_store::AsyncObjectStore::new(
            PrefixStore::new(s3, prefix),
        )))
    }
}

// ---------------------------------------------------------------- child ---

/// `s3-child IMP WORKLOAD CODECS PREFIX SIDE`: one repetition of zarrkit or
/// zarrs; prints `time_s` and `vmhwm_kib` as the filesystem child does.
/// No warm-up pass (the server holds what was just written); reads check
/// One implementation's result in a row: its times and peak memory
/// (KiB), or the first error.
type Cell = Result<(Vec<f64>, u64), String>;

/// every value against the formula after the timing.
pub fn child(args: &[String]) -> Result<(), BoxError> {
    let [imp, workload, _codecs, prefix, side] = args else {
        return Err(format!("s3-child: expected IMP WORKLOAD CODECS PREFIX SIDE\n{USAGE}").into());
    };
    let s3 = S3::from_env()?;
    let side: u64 = side.parse()?;
    let pattern = Pattern::new(side);
    let whole = pattern.whole();
    let write = match workload.as_str() {
        "write" => true,
        "read_all" | "verify" => false,
        _ => return Err(format!("s3-child: unknown workload `{workload}`").into()),
    };
    let (time, data) = match imp.as_str() {
        "zarrkit" => {
            let array = zarrkit::Array::open(s3.zarrkit(prefix)?, ARRAY_PATH)?;
            let region = zarrkit::Region::from_ranges(&whole);
            if write {
                let data = pattern.generate(&whole);
                let start = Instant::now();
                array.write_region(&region, &data)?;
                (start.elapsed().as_secs_f64(), None)
            } else {
                let start = Instant::now();
                let data = array.read_region::<u16>(&region)?;
                (start.elapsed().as_secs_f64(), Some(data))
            }
        }
        "zarrs" => {
            let threads = std::env::var("RAYON_NUM_THREADS")
                .ok()
                .and_then(|t| t.parse().ok())
                .unwrap_or(2);
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(threads)
                .enable_all()
                .build()?;
            let store = s3.zarrs(prefix)?;
            runtime.block_on(async {
                let array = zarrs::array::Array::async_open(store, ARRAY_PATH).await?;
                let subset = zarrs::array::ArraySubset::new_with_ranges(&whole);
                if write {
                    let data = pattern.generate(&whole);
                    let start = Instant::now();
                    array.async_store_array_subset(&subset, &data).await?;
                    Ok::<_, BoxError>((start.elapsed().as_secs_f64(), None))
                } else {
                    let start = Instant::now();
                    let data: Vec<u16> = array.async_retrieve_array_subset(&subset).await?;
                    Ok((start.elapsed().as_secs_f64(), Some(data)))
                }
            })?
        }
        _ => return Err(format!("s3-child: `{imp}` is not a Rust implementation").into()),
    };
    if let Some(data) = data {
        pattern.check(&whole, &data)?;
    }
    if workload != "verify" {
        println!("time_s {time}");
    }
    println!("vmhwm_kib {}", crate::vmhwm_kib()?);
    Ok(())
}

// --------------------------------------------------------------- parent ---

struct Options {
    side: u64,
    reps: usize,
    threads: usize,
    python: PathBuf,
    imps: Vec<usize>,
    codecs: Vec<Codecs>,
    workloads: Vec<&'static str>,
    keep: bool,
}

fn parse(args: &[String]) -> Result<Options, BoxError> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut o = Options {
        side: 256,
        reps: 3,
        threads: 2,
        python: here.join(".venv-peers/bin/python"),
        imps: (0..IMPS.len()).collect(),
        codecs: vec![Codecs::Zstd, Codecs::Sharded],
        workloads: vec!["write", "read_all"],
        keep: false,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = || {
            it.next()
                .ok_or_else(|| format!("{arg} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "--side" => o.side = value()?.parse()?,
            "--reps" => o.reps = value()?.parse()?,
            "--threads" => o.threads = value()?.parse()?,
            "--python" => o.python = PathBuf::from(value()?),
            "--imps" => {
                o.imps = value()?
                    .split(',')
                    .map(|s| {
                        IMPS.iter()
                            .position(|i| *i == s)
                            .ok_or_else(|| format!("unknown implementation `{s}`\n{USAGE}"))
                    })
                    .collect::<Result<_, _>>()?;
                o.imps.sort_unstable();
            }
            "--codecs" => {
                o.codecs = value()?
                    .split(',')
                    .map(|s| match s.parse()? {
                        c @ (Codecs::Zstd | Codecs::Sharded) => Ok(c),
                        _ => Err(format!("s3: only the zstd and sharded chains\n{USAGE}")),
                    })
                    .collect::<Result<_, _>>()?;
            }
            "--workloads" => {
                let wanted: Vec<String> = value()?.split(',').map(String::from).collect();
                if let Some(w) = wanted
                    .iter()
                    .find(|w| !["write", "read_all"].contains(&w.as_str()))
                {
                    return Err(format!("s3: unknown workload `{w}`\n{USAGE}").into());
                }
                o.workloads = ["write", "read_all"]
                    .into_iter()
                    .filter(|w| wanted.iter().any(|x| x == w))
                    .collect();
            }
            "--keep" => o.keep = true,
            "--help" | "-h" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            _ => return Err(format!("unknown argument `{arg}`\n{USAGE}").into()),
        }
    }
    if o.side == 0 || o.reps == 0 || o.threads == 0 {
        return Err("--side, --reps and --threads must be positive".into());
    }
    Ok(o)
}

struct Row {
    codecs: Codecs,
    workload: &'static str,
    /// Per implementation: the times and the largest peak RSS (KiB), or an error.
    cells: Vec<Cell>,
}

/// `bench-compare s3 ...`: the parent.
pub fn parent(args: &[String]) -> Result<(), BoxError> {
    let o = parse(args)?;
    let s3 = S3::from_env()?;
    let exe = std::env::current_exe()?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/s3.py");
    let python_ok = o.python.exists();
    let load_before = loadavg();
    let started = Instant::now();
    let root = format!("bench-compare-s3-{}", std::process::id());
    let side = o.side;
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    if !python_ok {
        notes.push(format!(
            "{}: no such Python; tensorstore and zarr-python skipped",
            o.python.display()
        ));
    }
    let run = |imp: usize,
               workload: &str,
               codecs: Codecs,
               prefix: &str|
     -> Result<(Vec<f64>, u64), String> {
        let mut command = if imp < 2 {
            let mut c = Command::new(&exe);
            c.arg("s3-child");
            c
        } else {
            let mut c = Command::new(&o.python);
            c.arg(&script);
            c
        };
        command
            .arg(IMPS[imp])
            .arg(workload)
            .arg(codecs.name())
            .arg(prefix)
            .arg(side.to_string());
        if imp >= 2 {
            command.arg(o.threads.to_string());
        }
        let threads = o.threads.to_string();
        for var in [
            "RAYON_NUM_THREADS",
            "OMP_NUM_THREADS",
            "NUMEXPR_NUM_THREADS",
            "BLOSC_NTHREADS",
        ] {
            command.env(var, &threads);
        }
        // NumPy's BLAS is no part of any workload, and its idle workers
        // spin on a core after NumPy is imported: one thread each.
        for var in ["OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"] {
            command.env(var, "1");
        }
        // Explicit endpoint and credentials for every client; never the
        // instance metadata service.
        command
            .env("ZARRKIT_S3_ENDPOINT", &s3.endpoint)
            .env("ZARRKIT_TEST_BUCKET", &s3.bucket)
            .env("AWS_REGION", &s3.region)
            .env("AWS_DEFAULT_REGION", &s3.region)
            .env("AWS_ACCESS_KEY_ID", &s3.key_id)
            .env("AWS_SECRET_ACCESS_KEY", &s3.secret)
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env_remove("AWS_PROFILE")
            .env_remove("AWS_SESSION_TOKEN")
            .env(workload::NOISE_VAR, "0");
        let output = command.output().map_err(|e| e.to_string())?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let tail: Vec<&str> = stderr.lines().rev().take(4).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            return Err(format!(
                "exited with {}: {}",
                output.status,
                tail.join(" | ")
            ));
        }
        let mut times = Vec::new();
        let mut peak = None;
        for line in stdout.lines() {
            if let Some(t) = line.strip_prefix("time_s ") {
                times.push(t.parse::<f64>().map_err(|e| e.to_string())?);
            } else if let Some(k) = line.strip_prefix("vmhwm_kib ") {
                peak = Some(k.parse::<u64>().map_err(|e| e.to_string())?);
            }
        }
        Ok((times, peak.ok_or("no vmhwm_kib line")?))
    };
    for &codecs in &o.codecs {
        let (name, document) = codecs.metadata(side).ok_or("no metadata")?;
        let prefix_of = |imp: usize| format!("{root}/{codecs}-{}.zarr", IMPS[imp]);
        let mut chain_rows: Vec<Row> = o
            .workloads
            .iter()
            .map(|&workload| Row {
                codecs,
                workload,
                cells: Vec::new(),
            })
            .collect();
        // Per row, per implementation (in `o.imps` order): the times, the
        // peak memory, or the first error.
        let mut results: Vec<Vec<Cell>> = chain_rows
            .iter()
            .map(|_| o.imps.iter().map(|_| Ok((Vec::new(), 0))).collect())
            .collect();
        let mut ready = vec![true; o.imps.len()];
        for (i, &imp) in o.imps.iter().enumerate() {
            let prefix = prefix_of(imp);
            // The same metadata document for everyone, written by the harness.
            let store = s3.zarrkit(&prefix)?;
            let key = format!("{}/{name}", ARRAY_PATH.trim_start_matches('/'));
            store.set(&zarrkit::store::StoreKey::new(key)?, document.as_bytes())?;
            if imp >= 2 && !python_ok {
                for row in &mut results {
                    row[i] = Err("no Python".into());
                }
                ready[i] = false;
                continue;
            }
            if !o.workloads.contains(&"write") {
                eprintln!("[{codecs}] {}: writing the store (untimed)", IMPS[imp]);
                if let Err(e) = run(imp, "write", codecs, &prefix) {
                    notes.push(format!(
                        "[{codecs}] {} untimed write failed: {e}",
                        IMPS[imp]
                    ));
                }
            }
        }
        // Repetition by repetition, every implementation in turn, in an
        // order rotated each repetition: what the server does after one
        // implementation's writes (or after the previous chain's stores
        // were deleted) falls on everyone alike, not on whoever runs first.
        for rep in 0..o.reps {
            for k in 0..o.imps.len() {
                let i = (k + rep) % o.imps.len();
                let imp = o.imps[i];
                if !ready[i] {
                    continue;
                }
                for (r, row) in chain_rows.iter().enumerate() {
                    if results[r][i].is_err() {
                        continue;
                    }
                    eprintln!(
                        "[{codecs}] {} {} {}/{}",
                        IMPS[imp],
                        row.workload,
                        rep + 1,
                        o.reps
                    );
                    match run(imp, row.workload, codecs, &prefix_of(imp)) {
                        Ok((t, p)) => {
                            if let Ok((times, peak)) = &mut results[r][i] {
                                times.extend(t);
                                *peak = (*peak).max(p);
                            }
                        }
                        Err(e) => results[r][i] = Err(e),
                    }
                }
            }
        }
        for (row, cells) in chain_rows.iter_mut().zip(results) {
            row.cells = cells;
        }
        // Untimed cross-check: each peer reads zarrkit's store and zarrkit
        // each peer's, checking every value against the formula.
        if o.imps.contains(&0) {
            for &peer in o.imps.iter().filter(|&&i| i != 0 && (i < 2 || python_ok)) {
                for (reader, writer) in [(peer, 0), (0, peer)] {
                    let what = match run(reader, "verify", codecs, &prefix_of(writer)) {
                        Ok(_) => "all values equal".to_string(),
                        Err(e) => format!("FAILED: {e}"),
                    };
                    let note = format!(
                        "[{codecs}] cross-check: {} reads the {}-written store: {what}",
                        IMPS[reader], IMPS[writer]
                    );
                    eprintln!("{note}");
                    notes.push(note);
                }
            }
        }
        for &imp in &o.imps {
            let prefix = prefix_of(imp);
            let store = s3.zarrkit(&prefix)?;
            if let Ok(stored) =
                zarrkit::Array::open(Arc::clone(&store), ARRAY_PATH).and_then(|a| a.stored_size())
            {
                notes.push(format!(
                    "[{codecs}] {} store: {} chunk objects, {:.1} KiB",
                    IMPS[imp],
                    stored.chunks,
                    stored.bytes as f64 / 1024.0
                ));
            }
            if !o.keep {
                store.erase_prefix(&zarrkit::store::StorePrefix::root())?;
            }
        }
        rows.extend(chain_rows);
    }
    println!();
    print_table(&rows, &o);
    println!();
    println!(
        "load average (1 5 15 min) before: {load_before}; after: {}; took {:.0} s",
        loadavg(),
        started.elapsed().as_secs_f64()
    );
    if o.keep {
        println!("stores kept under s3://{}/{root}/", s3.bucket);
    }
    println!();
    for note in notes {
        println!("{note}");
    }
    Ok(())
}

fn median(times: &[f64]) -> f64 {
    let mut t = times.to_vec();
    t.sort_by(f64::total_cmp);
    let n = t.len();
    if n % 2 == 1 {
        t[n / 2]
    } else {
        (t[n / 2 - 1] + t[n / 2]) / 2.0
    }
}

fn format_time(seconds: f64) -> String {
    if seconds >= 1.0 {
        format!("{seconds:.2} s")
    } else {
        format!("{:.0} ms", seconds * 1e3)
    }
}

fn print_table(rows: &[Row], o: &Options) {
    let side = o.side;
    let bytes = (side.pow(3) * 2) as f64;
    let imps: Vec<usize> = o.imps.clone();
    println!(
        "S3 (SeaweedFS on loopback), {side}³ uint16 ({:.0} MiB), {} threads per implementation, \
         median (min–max) of {} repetitions, each in its own process; GB/s of decoded bytes at the median",
        bytes / f64::from(1 << 20),
        o.threads,
        o.reps
    );
    println!();
    let names: Vec<&str> = imps.iter().map(|&i| SHORT[i]).collect();
    let peers: Vec<usize> = imps.iter().copied().filter(|&i| i != 0).collect();
    let ratio_names: Vec<String> = peers
        .iter()
        .map(|&i| format!("zarrkit / {}", SHORT[i]))
        .collect();
    println!(
        "| chain | op | {} | {} |",
        names.join(" | "),
        ratio_names.join(" | ")
    );
    println!(
        "|---|---|{}{}",
        "---:|".repeat(names.len()),
        "---:|".repeat(peers.len())
    );
    let medians = |row: &Row| -> Vec<Option<f64>> {
        row.cells
            .iter()
            .map(|c| match c {
                Ok((t, _)) if !t.is_empty() => Some(median(t)),
                _ => None,
            })
            .collect()
    };
    for row in rows {
        let m = medians(row);
        let cells: Vec<String> = row
            .cells
            .iter()
            .zip(&m)
            .map(|(c, m)| match (c, m) {
                (Ok((t, _)), Some(med)) => {
                    let min = t.iter().copied().fold(f64::INFINITY, f64::min);
                    let max = t.iter().copied().fold(0.0, f64::max);
                    let range = if t.len() > 1 {
                        format!(" ({}–{})", format_time(min), format_time(max))
                    } else {
                        String::new()
                    };
                    format!(
                        "{}{range}, {:.2} GB/s",
                        format_time(*med),
                        bytes / med / 1e9
                    )
                }
                _ => "error".into(),
            })
            .collect();
        let zk = imps.iter().position(|&i| i == 0).and_then(|p| m[p]);
        let ratios: Vec<String> = peers
            .iter()
            .map(|&peer| {
                let p = imps.iter().position(|&i| i == peer).unwrap();
                match (zk, m[p]) {
                    (Some(z), Some(x)) if z > x => format!("**{:.2}**", z / x),
                    (Some(z), Some(x)) => format!("{:.2}", z / x),
                    _ => "–".into(),
                }
            })
            .collect();
        println!(
            "| {} | {} | {} | {} |",
            row.codecs.label(),
            if row.workload == "write" {
                "write all"
            } else {
                "read all"
            },
            cells.join(" | "),
            ratios.join(" | ")
        );
    }
    println!();
    println!(
        "Peak memory (max VmHWM of the child processes, MiB; the array is {:.0} MiB):",
        bytes / f64::from(1 << 20)
    );
    println!();
    println!("| chain | op | {} |", names.join(" | "));
    println!("|---|---|{}", "---:|".repeat(names.len()));
    for row in rows {
        let cells: Vec<String> = row
            .cells
            .iter()
            .map(|c| match c {
                Ok((_, k)) => format!("{:.0}", *k as f64 / 1024.0),
                Err(_) => "–".into(),
            })
            .collect();
        println!(
            "| {} | {} | {} |",
            row.codecs.label(),
            if row.workload == "write" {
                "write all"
            } else {
                "read all"
            },
            cells.join(" | ")
        );
    }
    let failures: Vec<String> = rows
        .iter()
        .flat_map(|row| {
            imps.iter().zip(&row.cells).filter_map(move |(&i, c)| {
                c.as_ref()
                    .err()
                    .map(|e| format!("  {} {} {}: {e}", row.codecs, row.workload, IMPS[i]))
            })
        })
        .collect();
    if !failures.is_empty() {
        println!();
        println!("Failures:");
        for f in failures {
            println!("{f}");
        }
    }
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_string())
}
