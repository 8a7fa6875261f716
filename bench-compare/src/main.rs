//! End-to-end comparison of zarrkit against its peers (issues #2 and #14):
//! zarrs, tensorstore, zarr-python 3.1.6 and zarr-python with the `zarrs`
//! codec pipeline, each in its own child process limited to the same
//! number of threads, on the same arrays in filesystem stores; plus the
//! machine's limits measured on the same chunks. See README.md.

mod imps;
mod limits;
mod s3;
mod selections;
mod workload;

use imps::{ARRAY_PATH, BoxError, Handle, Imp};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;
use workload::{Codecs, HIERARCHY_ARRAYS, Pattern, REGION, REGION_COUNT, Workload};

const USAGE: &str = "\
usage: bench-compare [--quick] [--side N] [--reps N] [--threads N]
                     [--python PATH] [--imps zarrkit,zarrs,...]
                     [--codecs zstd,raw,...] [--workloads write,read_all,...]
                     [--noise BITS] [--no-cold] [--no-limits] [--dir DIR] [--keep]

  --side N     the array is N^3 uint16 (default 256; a multiple of 256
               keeps the shards whole)
  --quick      a smoke run: --side 128 --reps 1
  --reps N     timed repetitions per (implementation, workload), each in
               its own child process; default 3
  --threads N  threads every implementation may use; default 2
  --python P   the Python of the peers' virtualenv; default
               bench-compare/.venv-peers/bin/python (setup-peers.sh makes it);
               without one the Python peers are skipped with a note
  --imps       which implementations: zarrkit, zarrs, tensorstore,
               zarr-python, zarr-python-zarrs (default all)
  --codecs     which chains: zstd, raw, sharded, sharded_blosc, v2_zlib,
               v2_blosc, blosc256, hierarchy (default all)
  --workloads  write, read_all, read_inner, read_regions, create, list
               (default all that apply); reads write the store first if missing
  --noise BITS add BITS (0-16) bits of hash noise to every value (default
               0: the smooth field of earlier runs; 4 or 8 make the codecs work)
  --no-cold    skip the cold-cache reads (skipped anyway when not root)
  --no-limits  skip measuring the machine's limits
  --dir DIR    where the stores go (kept afterwards); default a fresh
               directory under /tmp, removed afterwards unless --keep

Profiling one side by hand:
  bench-compare child IMP WORKLOAD CODECS DIR SIDE [REPS [cold]]
  (IMP: zarrkit|zarrs; WORKLOAD: write|read_all|read_inner|read_regions|
  create|list|verify; DIR: the store, e.g. DIR/zstd-zarrkit.zarr)

Selections (issue #12): bench-compare selections --help
S3 (issue #13): bench-compare s3 --help";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("child") => child(&args[1..]),
        // Issue #12's selections: their own table (src/selections.rs).
        Some("selections") => selections::parent(&args[1..]),
        Some("selections-child") => selections::child(&args[1..]),
        // Issue #13's S3 benchmark: its own table (src/s3.rs).
        Some("s3") => s3::parent(&args[1..]),
        Some("s3-child") => s3::child(&args[1..]),
        _ => parent(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let mut message = e.to_string();
            let mut source = e.source();
            while let Some(s) = source {
                message.push_str(&format!(": {s}"));
                source = s.source();
            }
            eprintln!("bench-compare: {message}");
            ExitCode::FAILURE
        }
    }
}

// ---------------------------------------------------------------- child ---

/// Runs one (Rust implementation, workload) in this process and prints one
/// `time_s SECONDS` line per repetition, then `vmhwm_kib KIB` (peak RSS).
/// `peers/peer.py` prints the same for the Python peers.
///
/// Reads first do one untimed warm-up pass (unless `cold`: the parent
/// dropped the page cache), so every implementation reads from a warm page
/// cache, and check the last pass's values afterwards.
fn child(args: &[String]) -> Result<(), BoxError> {
    let [imp, workload, codecs, dir, side, rest @ ..] = args else {
        return Err(format!("child: expected IMP WORKLOAD CODECS DIR SIDE [REPS]\n{USAGE}").into());
    };
    let imp: Imp = imp.parse()?;
    let workload: Workload = workload.parse()?;
    let _codecs: Codecs = codecs.parse()?;
    let dir = Path::new(dir);
    let side: u64 = side.parse()?;
    let reps: usize = match rest.first() {
        Some(r) => r.parse()?,
        None => 1,
    };
    let cold = rest.get(1).map(String::as_str) == Some("cold");
    let pattern = Pattern::new(side);
    let whole = pattern.whole();
    let mut times = Vec::with_capacity(reps);
    match workload {
        Workload::Write => {
            let data = pattern.generate(&whole);
            let handle = Handle::open(imp, dir)?;
            for _ in 0..reps {
                let start = Instant::now();
                handle.write(&whole, &data)?;
                times.push(start.elapsed().as_secs_f64());
            }
        }
        Workload::ReadAll | Workload::ReadRegions | Workload::ReadInner => {
            let regions = match workload {
                Workload::ReadAll => vec![whole],
                Workload::ReadInner => workload::inner_blocks(side),
                _ => workload::random_regions(side),
            };
            let handle = Handle::open(imp, dir)?;
            if !cold {
                for region in &regions {
                    drop(std::hint::black_box(handle.read(region)?));
                }
            }
            let mut last = Vec::with_capacity(regions.len());
            for _ in 0..reps {
                last.clear();
                let start = Instant::now();
                for region in &regions {
                    last.push(std::hint::black_box(handle.read(region)?));
                }
                times.push(start.elapsed().as_secs_f64());
            }
            for (region, data) in regions.iter().zip(&last) {
                pattern.check(region, data)?;
            }
        }
        Workload::Create => {
            for _ in 0..reps {
                if dir.exists() {
                    std::fs::remove_dir_all(dir)?;
                }
                let start = Instant::now();
                imps::create_hierarchy(imp, dir)?;
                times.push(start.elapsed().as_secs_f64());
            }
        }
        Workload::List => {
            if !cold {
                imps::list_hierarchy(imp, dir)?;
            }
            for _ in 0..reps {
                let start = Instant::now();
                let n = imps::list_hierarchy(imp, dir)?;
                times.push(start.elapsed().as_secs_f64());
                if n != HIERARCHY_ARRAYS {
                    return Err(format!("listed {n} arrays, expected {HIERARCHY_ARRAYS}").into());
                }
            }
        }
        Workload::Verify => {
            let handle = Handle::open(imp, dir)?;
            pattern.check(&whole, &handle.read(&whole)?)?;
        }
    }
    for t in &times {
        println!("time_s {t}");
    }
    println!("vmhwm_kib {}", vmhwm_kib()?);
    Ok(())
}

/// This process's peak resident set size, from `/proc/self/status`.
fn vmhwm_kib() -> Result<u64, BoxError> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .ok_or("no VmHWM line in /proc/self/status")?;
    let kib = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim();
    Ok(kib.parse()?)
}

// --------------------------------------------------------------- parent ---

struct Options {
    side: u64,
    reps: usize,
    threads: usize,
    python: PathBuf,
    python_given: bool,
    dir: PathBuf,
    remove_dir: bool,
    imps: Vec<Imp>,
    codecs: Vec<Codecs>,
    workloads: Vec<Workload>,
    cold: bool,
    limits: bool,
    noise_bits: u32,
}

fn list<T: std::str::FromStr<Err = String>>(value: &str) -> Result<Vec<T>, BoxError> {
    Ok(value
        .split(',')
        .map(str::parse)
        .collect::<Result<_, String>>()?)
}

fn parse_options(args: &[String]) -> Result<Options, BoxError> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut options = Options {
        side: 256,
        reps: 3,
        threads: 2,
        python: here.join(".venv-peers/bin/python"),
        python_given: false,
        dir: PathBuf::new(),
        remove_dir: false,
        imps: Imp::ALL.to_vec(),
        codecs: Codecs::ALL.to_vec(),
        workloads: Workload::TIMED.to_vec(),
        cold: true,
        limits: true,
        noise_bits: 0,
    };
    let mut dir = None;
    let mut keep = false;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| format!("{arg} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "--quick" => {
                options.side = 128;
                options.reps = 1;
            }
            "--side" => options.side = value()?.parse()?,
            "--reps" => options.reps = value()?.parse()?,
            "--threads" => options.threads = value()?.parse()?,
            "--python" => {
                options.python = PathBuf::from(value()?);
                options.python_given = true;
            }
            "--dir" => dir = Some(PathBuf::from(value()?)),
            "--keep" => keep = true,
            "--imps" => options.imps = list(value()?)?,
            "--codecs" => options.codecs = list(value()?)?,
            "--workloads" => {
                options.workloads = list(value()?)?;
                if options.workloads.contains(&Workload::Verify) {
                    return Err("`verify` is not a timed workload".into());
                }
            }
            "--noise" => options.noise_bits = value()?.parse()?,
            "--no-cold" => options.cold = false,
            "--no-limits" => options.limits = false,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            _ => return Err(format!("unknown argument `{arg}`\n{USAGE}").into()),
        }
    }
    if options.reps == 0 || options.threads == 0 || options.side < 32 || options.noise_bits > 16 {
        return Err(
            "--reps and --threads must be at least 1, --side at least 32, --noise at most 16"
                .into(),
        );
    }
    options.remove_dir = dir.is_none() && !keep;
    options.dir = dir.unwrap_or_else(|| {
        std::env::temp_dir().join(format!("bench-compare-{}", std::process::id()))
    });
    Ok(options)
}

/// The measurements of one (codecs, workload, cache) row.
struct Row {
    codecs: Codecs,
    workload: Workload,
    cold: bool,
    /// Per implementation, in `Imp::ALL` order.
    results: Vec<Cell>,
}

enum Cell {
    /// Not run: the implementation was not selected, is not available, or
    /// the workload does not apply to it.
    NotRun,
    Failed(String),
    Measured {
        times: Vec<f64>,
        peak_kib: u64,
    },
}

impl Cell {
    fn median(&self) -> Option<f64> {
        match self {
            Cell::Measured { times, .. } if !times.is_empty() => Some(median(times)),
            _ => None,
        }
    }
}

fn median(times: &[f64]) -> f64 {
    limits::median(times.to_vec())
}

/// Whether the page cache can be dropped (root can write drop_caches).
fn can_drop_caches() -> bool {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/proc/sys/vm/drop_caches")
        .is_ok()
}

/// Flushes dirty pages and drops the page cache, dentries and inodes.
pub fn drop_caches() {
    sync();
    if let Err(e) = std::fs::write("/proc/sys/vm/drop_caches", "3") {
        eprintln!("bench-compare: dropping the page cache failed: {e}");
    }
}

fn parent(args: &[String]) -> Result<(), BoxError> {
    let mut options = parse_options(args)?;
    let exe = std::env::current_exe()?;
    let side = options.side;
    let mut notes = Vec::new();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/peer.py");
    if options.imps.iter().any(|i| i.is_python()) && !options.python.exists() {
        let note = format!(
            "the Python peers were not run: no {} ({}); run ./setup-peers.sh or pass --python",
            options.python.display(),
            if options.python_given {
                "--python"
            } else {
                "the default"
            }
        );
        eprintln!("{note}");
        notes.push(note);
        options.imps.retain(|i| !i.is_python());
    }
    if options.cold && !can_drop_caches() {
        let note = "cold-cache reads skipped: dropping the page cache needs root".to_string();
        eprintln!("{note}");
        notes.push(note);
        options.cold = false;
    }
    eprintln!(
        "array {side}^3 uint16 ({} noise bits); {REGION_COUNT} regions of {REGION}^3; {} reps; {} threads \
         per implementation ({} cores); stores in {}",
        options.noise_bits,
        options.reps,
        options.threads,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        options.dir.display()
    );
    std::fs::create_dir_all(&options.dir)?;
    let load_before = loadavg();
    let started = Instant::now();
    let runner = Runner {
        exe: &exe,
        python: &options.python,
        script: &script,
        side,
        threads: options.threads,
        noise_bits: options.noise_bits,
    };
    let mut rows = Vec::new();
    for &codecs in &options.codecs {
        let store_dir = |imp: Imp| options.dir.join(format!("{codecs}-{imp}.zarr"));
        let imps: Vec<Imp> = options
            .imps
            .iter()
            .copied()
            .filter(|&imp| imp_applies(imp, codecs))
            .collect();
        // The same metadata document in every implementation's store.
        if let Some((name, document)) = codecs.metadata(side) {
            for &imp in &imps {
                let array = store_dir(imp).join(ARRAY_PATH.trim_start_matches('/'));
                if !array.join(name).exists() {
                    std::fs::create_dir_all(&array)?;
                    std::fs::write(array.join(name), &document)?;
                }
            }
        }
        for &workload in &options.workloads {
            if !workload.applies_to(codecs) {
                continue;
            }
            if !matches!(workload, Workload::Write | Workload::Create) {
                let first = if codecs == Codecs::Hierarchy {
                    Workload::Create
                } else {
                    Workload::Write
                };
                for &imp in &imps {
                    if !has_data(&store_dir(imp), codecs) {
                        eprintln!("[{codecs}] {imp}: writing the store first (untimed)");
                        if let Err(e) = runner.run(imp, codecs, first, &store_dir(imp), false) {
                            eprintln!("[{codecs}] {imp}: writing the store FAILED: {e}");
                        }
                        sync();
                    }
                }
            }
            let colds: &[bool] = if options.cold && workload.has_cold() {
                &[false, true]
            } else {
                &[false]
            };
            for &cold in colds {
                let mut results: Vec<Cell> = Imp::ALL
                    .iter()
                    .map(|imp| {
                        if imps.contains(imp) {
                            Cell::Measured {
                                times: Vec::new(),
                                peak_kib: 0,
                            }
                        } else {
                            Cell::NotRun
                        }
                    })
                    .collect();
                for rep in 0..options.reps {
                    // Rotate who goes first, so drift in the machine's load
                    // favours no implementation.
                    for k in 0..Imp::ALL.len() {
                        let i = (k + rep) % Imp::ALL.len();
                        let imp = Imp::ALL[i];
                        let Cell::Measured { times, peak_kib } = &mut results[i] else {
                            continue;
                        };
                        // Start every repetition with no dirty pages (and,
                        // cold, with nothing cached).
                        if cold {
                            drop_caches();
                        } else {
                            sync();
                        }
                        let cache = if cold { " cold" } else { "" };
                        match runner.run(imp, codecs, workload, &store_dir(imp), cold) {
                            Ok((t, peak)) => {
                                eprintln!(
                                    "[{codecs}] {workload}{cache} {imp} rep {}/{}: {:.3} s, peak {:.0} MiB",
                                    rep + 1,
                                    options.reps,
                                    t.iter().sum::<f64>(),
                                    peak as f64 / 1024.0
                                );
                                times.extend(t);
                                *peak_kib = (*peak_kib).max(peak);
                            }
                            Err(e) => {
                                eprintln!("[{codecs}] {workload}{cache} {imp}: FAILED: {e}");
                                results[i] = Cell::Failed(first_line(&e.to_string()));
                            }
                        }
                    }
                }
                rows.push(Row {
                    codecs,
                    workload,
                    cold,
                    results,
                });
            }
            if matches!(workload, Workload::Write | Workload::Create) {
                sync();
                cross_check(&runner, codecs, &imps, &store_dir, &mut notes);
                if workload == Workload::Write {
                    for &imp in &imps {
                        if let Ok(bytes) = dir_size(&store_dir(imp)) {
                            let data = Workload::Write.decoded_bytes(side);
                            notes.push(format!(
                                "[{codecs}] {imp} store: {} on disk for {} of data (ratio {:.1})",
                                format_bytes(bytes),
                                format_bytes(data),
                                data as f64 / bytes.max(1) as f64
                            ));
                        }
                    }
                }
            }
        }
    }
    let runs_took = started.elapsed();
    let mut limits = Vec::new();
    if options.limits {
        eprintln!("measuring the machine's limits");
        let stores: Vec<(String, PathBuf)> = [Codecs::Raw, Codecs::Zstd]
            .into_iter()
            .map(|c| {
                (
                    format!("zarrkit's {} store", c.label()),
                    options.dir.join(format!("{c}-zarrkit.zarr")),
                )
            })
            .filter(|(_, d)| has_data(d, Codecs::Raw))
            .collect();
        let counts: Vec<usize> = if options.threads == 1 {
            vec![1]
        } else {
            vec![1, options.threads]
        };
        limits = limits::measure(
            side,
            options.noise_bits,
            &counts,
            options.reps.max(3),
            &stores,
            options.cold,
        )?;
        if side % 64 == 0 {
            let zlib_stores: Vec<(String, PathBuf)> = options
                .imps
                .iter()
                .map(|imp| {
                    let dir = options.dir.join(format!("{}-{imp}.zarr", Codecs::V2Zlib));
                    (imp.name().to_string(), dir.join("array"))
                })
                .filter(|(_, d)| d.exists())
                .collect();
            limits.extend(limits::zlib_store_limits(
                &zlib_stores,
                &counts,
                options.reps.max(3),
                64 * 64 * 64 * 2,
            )?);
        }
        print_limits(&limits, &counts);
    }
    println!();
    print_table(&rows, &options, &limits);
    println!();
    println!(
        "load average (1 5 15 min) before: {load_before}; after: {}; the implementations' runs took {:.0} s, everything {:.0} s",
        loadavg(),
        runs_took.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    println!();
    for note in &notes {
        println!("{note}");
    }
    if options.remove_dir {
        std::fs::remove_dir_all(&options.dir)?;
    }
    Ok(())
}

/// Whether `imp` runs the `codecs` chain at all: the `zarrs` codec pipeline
/// does nothing for the hierarchy (metadata only), so there it would
/// measure zarr-python twice.
fn imp_applies(imp: Imp, codecs: Codecs) -> bool {
    !(imp == Imp::ZarrPythonZarrs && codecs == Codecs::Hierarchy)
}

/// Whether the store in `dir` holds chunks (or, for the hierarchy, nodes).
fn has_data(dir: &Path, codecs: Codecs) -> bool {
    if codecs == Codecs::Hierarchy {
        return dir.join("a0999").exists();
    }
    std::fs::read_dir(dir.join(ARRAY_PATH.trim_start_matches('/')))
        .map(|d| d.count() > 1)
        .unwrap_or(false)
}

/// Untimed: every peer reads zarrkit's store and zarrkit every peer's,
/// checking every value (for the hierarchy: listing all arrays).
fn cross_check(
    runner: &Runner,
    codecs: Codecs,
    imps: &[Imp],
    store_dir: &dyn Fn(Imp) -> PathBuf,
    notes: &mut Vec<String>,
) {
    if !imps.contains(&Imp::Zarrkit) {
        return;
    }
    let workload = if codecs == Codecs::Hierarchy {
        Workload::List
    } else {
        Workload::Verify
    };
    for &peer in imps.iter().filter(|&&i| i != Imp::Zarrkit) {
        for (reader, writer) in [(peer, Imp::Zarrkit), (Imp::Zarrkit, peer)] {
            let what = if codecs == Codecs::Hierarchy {
                "lists all arrays"
            } else {
                "all values equal"
            };
            let note = match runner.run(reader, codecs, workload, &store_dir(writer), false) {
                Ok(_) => format!(
                    "[{codecs}] cross-check: {reader} reads the {writer}-written store: {what}"
                ),
                Err(e) => format!(
                    "[{codecs}] cross-check: {reader} reads the {writer}-written store: FAILED: {}",
                    first_line(&e.to_string())
                ),
            };
            eprintln!("{note}");
            notes.push(note);
        }
    }
}

struct Runner<'a> {
    exe: &'a Path,
    python: &'a Path,
    script: &'a Path,
    side: u64,
    threads: usize,
    noise_bits: u32,
}

impl Runner<'_> {
    /// Runs one child (one repetition); returns its times and peak RSS in KiB.
    fn run(
        &self,
        imp: Imp,
        codecs: Codecs,
        workload: Workload,
        dir: &Path,
        cold: bool,
    ) -> Result<(Vec<f64>, u64), BoxError> {
        let mut command = if imp.is_python() {
            let mut c = Command::new(self.python);
            c.arg(self.script);
            c
        } else {
            let mut c = Command::new(self.exe);
            c.arg("child");
            c
        };
        command
            .arg(imp.name())
            .arg(workload.name())
            .arg(codecs.name())
            .arg(dir)
            .arg(self.side.to_string())
            .arg("1");
        if imp.is_python() {
            command.arg(self.threads.to_string());
        }
        if cold {
            command.arg("cold");
        }
        // Every implementation gets the same thread budget: rayon's pool
        // (zarrkit, zarrs, the zarrs pipeline), OpenMP and BLAS pools
        // numpy may start, c-blosc; peer.py sets the Python peers' own
        // options from its THREADS argument.
        let threads = self.threads.to_string();
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
        command.env(workload::NOISE_VAR, self.noise_bits.to_string());
        let output = command.output()?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let tail: Vec<&str> = stderr.lines().rev().take(6).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            return Err(format!(
                "child {imp} {workload} exited with {}: {}",
                output.status,
                tail.join(" | ")
            )
            .into());
        }
        let mut times = Vec::new();
        let mut peak = None;
        for line in stdout.lines() {
            if let Some(t) = line.strip_prefix("time_s ") {
                times.push(t.parse()?);
            } else if let Some(k) = line.strip_prefix("vmhwm_kib ") {
                peak = Some(k.parse()?);
            }
        }
        Ok((times, peak.ok_or("child printed no vmhwm_kib line")?))
    }
}

/// The machine's load averages, so a reader can judge how quiet it was.
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_string())
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").chars().take(300).collect()
}

/// Flushes dirty pages, so one workload's writeback does not slow the next.
fn sync() {
    let _ = Command::new("sync").status();
}

fn dir_size(dir: &Path) -> std::io::Result<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let meta = entry.metadata()?;
        total += if meta.is_dir() {
            dir_size(&entry.path())?
        } else {
            meta.len()
        };
    }
    Ok(total)
}

fn op_label(workload: Workload) -> String {
    match workload {
        Workload::Write => "write all".into(),
        Workload::ReadAll => "read all".into(),
        Workload::ReadRegions => format!("read {REGION_COUNT} × {REGION}³ regions"),
        Workload::ReadInner => format!("read each {}³ inner chunk", workload::INNER),
        Workload::Create => format!("create group + {HIERARCHY_ARRAYS} arrays"),
        Workload::List => "open, list, open every array".into(),
        Workload::Verify => "verify".into(),
    }
}

fn print_limits(limits: &[limits::Limit], counts: &[usize]) {
    println!();
    println!(
        "Machine limits (same chunks, same run, best of 3 or more passes; GB/s of decoded bytes, file bytes for file reads):"
    );
    println!();
    let header: Vec<String> = counts
        .iter()
        .map(|n| format!("{n} thread{}", if *n == 1 { "" } else { "s" }))
        .collect();
    println!("| limit | {} |", header.join(" | "));
    println!("|---|{}", "---:|".repeat(counts.len()));
    for l in limits {
        let cells: Vec<String> = l
            .gbps
            .iter()
            .map(|g| {
                if *g < 0.1 {
                    format!("{g:.4}")
                } else {
                    format!("{g:.2}")
                }
            })
            .collect();
        println!("| {} | {} |", l.name, cells.join(" | "));
    }
}

fn print_table(rows: &[Row], options: &Options, limits: &[limits::Limit]) {
    let side = options.side;
    println!(
        "{side}³ uint16 ({}{}), {} threads per implementation, median (min–max) of {} repetitions, \
         each in its own process; ratio = zarrkit median / best peer median (lower is better; bold where zarrkit trails)",
        format_bytes(side.pow(3) * 2),
        if options.noise_bits > 0 {
            format!(", {} bits of noise", options.noise_bits)
        } else {
            String::new()
        },
        options.threads,
        options.reps
    );
    println!();
    let names: Vec<&str> = Imp::ALL.iter().map(|i| i.short()).collect();
    println!(
        "| chain | op | cache | {} | zarrkit / best | best peer | zarrkit GB/s (% of limit) |",
        names.join(" | ")
    );
    println!("|---|---|---|{}---:|---|---:|", "---:|".repeat(names.len()));
    for row in rows {
        let cells: Vec<String> = row
            .results
            .iter()
            .map(|c| match c {
                Cell::NotRun => "n/a".to_string(),
                Cell::Failed(_) => "error".to_string(),
                Cell::Measured { times, .. } if times.is_empty() => "–".to_string(),
                Cell::Measured { times, .. } => {
                    let min = times.iter().copied().fold(f64::INFINITY, f64::min);
                    let max = times.iter().copied().fold(0.0, f64::max);
                    if times.len() == 1 {
                        format_time(median(times))
                    } else {
                        format!(
                            "{} ({}–{})",
                            format_time(median(times)),
                            format_time(min),
                            format_time(max)
                        )
                    }
                }
            })
            .collect();
        let best = Imp::ALL
            .iter()
            .zip(&row.results)
            .skip(1)
            .filter_map(|(imp, c)| c.median().map(|m| (*imp, m)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let zarrkit = row.results[0].median();
        let (ratio, best_name) = match (zarrkit, best) {
            (Some(z), Some((imp, b))) if z > b => {
                (format!("**{:.2}**", z / b), imp.name().to_string())
            }
            (Some(z), Some((imp, b))) => (format!("{:.2}", z / b), imp.name().to_string()),
            _ => ("–".into(), "–".into()),
        };
        let bytes = row.workload.decoded_bytes(side) as f64;
        let rate = match zarrkit {
            Some(z) if bytes > 0.0 => {
                let gbps = bytes / z / 1e9;
                let limit = match row.workload {
                    Workload::Write => Some(true),
                    Workload::ReadAll if !row.cold => Some(false),
                    _ => None,
                }
                .and_then(|encode| {
                    limits
                        .iter()
                        .find(|l| l.chain == Some((row.codecs.name(), encode)))
                })
                .and_then(|l| l.gbps.last());
                match limit {
                    Some(l) => format!("{gbps:.2} ({:.0} %)", gbps / l * 100.0),
                    None => format!("{gbps:.2}"),
                }
            }
            _ => "–".into(),
        };
        println!(
            "| {} | {} | {} | {} | {ratio} | {best_name} | {rate} |",
            row.codecs.label(),
            op_label(row.workload),
            if row.cold { "cold" } else { "warm" },
            cells.join(" | ")
        );
    }
    println!();
    println!(
        "Peak memory (max VmHWM of the child processes, MiB; the array is {}; \
         the Python peers' include the interpreter and its libraries, about 50–90 MiB):",
        format_bytes(side.pow(3) * 2)
    );
    println!();
    println!("| chain | op | cache | {} |", names.join(" | "));
    println!("|---|---|---|{}", "---:|".repeat(names.len()));
    for row in rows {
        let cells: Vec<String> = row
            .results
            .iter()
            .map(|c| match c {
                Cell::Measured { times, peak_kib } if !times.is_empty() => {
                    format!("{:.0}", *peak_kib as f64 / 1024.0)
                }
                Cell::NotRun => "n/a".into(),
                _ => "–".into(),
            })
            .collect();
        println!(
            "| {} | {} | {} | {} |",
            row.codecs.label(),
            op_label(row.workload),
            if row.cold { "cold" } else { "warm" },
            cells.join(" | ")
        );
    }
    let mut failures = Vec::new();
    for row in rows {
        for (imp, cell) in Imp::ALL.iter().zip(&row.results) {
            if let Cell::Failed(e) = cell {
                failures.push(format!(
                    "  {} {} {}{imp}: {e}",
                    row.codecs,
                    row.workload,
                    if row.cold { "cold " } else { "" }
                ));
            }
        }
    }
    if !failures.is_empty() {
        println!();
        println!("Failures:");
        for f in failures {
            println!("{f}");
        }
    }
}

fn format_bytes(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}

fn format_time(seconds: f64) -> String {
    if seconds >= 1.0 {
        format!("{seconds:.2} s")
    } else if seconds >= 0.01 {
        format!("{:.0} ms", seconds * 1e3)
    } else {
        format!("{:.1} ms", seconds * 1e3)
    }
}
