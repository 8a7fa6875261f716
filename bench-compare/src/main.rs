//! End-to-end comparison of zarrkit against zarrs (issue #2).
//!
//! `bench-compare [--quick] [--reps N] [--dir DIR] [--codecs zstd,raw]
//! [--workloads write,read_all,read_regions]` runs every (implementation,
//! workload) repetition in a child process (this binary, re-invoked as
//! `bench-compare child IMP WORKLOAD CODECS DIR SIDE`) and prints a table of
//! median times, throughput, peak memory and the zarrkit/zarrs ratio.
//! See README.md.

mod imps;
mod workload;

use imps::{BoxError, Handle, Imp};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;
use workload::{
    Codecs, INNER, Pattern, REGION, REGION_COUNT, SHARD, Workload, inner_blocks, random_regions,
};

const USAGE: &str = "\
usage: bench-compare [--quick] [--reps N] [--dir DIR] [--keep]
                     [--codecs zstd,raw,sharded]
                     [--workloads write,read_all,read_inner,read_regions]

  --quick      a 128^3 array instead of 512^3 (a smoke run)
  --reps N     timed repetitions per (implementation, workload); default 5
  --dir DIR    where the stores go (kept afterwards); default a fresh
               directory under /tmp, removed afterwards unless --keep
  --codecs     which codec chains: zstd (bytes + zstd level 0), raw (bytes),
               sharded (256^3 shards of 32^3 bytes + zstd inner chunks)
  --workloads  which workloads; read workloads write the store first if missing

Profiling one child by hand:
  bench-compare child IMP WORKLOAD CODECS DIR SIDE [REPS]
  (IMP: zarrkit|zarrs; WORKLOAD: write|read_all|read_inner|read_regions|verify)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = if args.first().map(String::as_str) == Some("child") {
        child(&args[1..])
    } else {
        parent(&args)
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

/// Runs one (implementation, workload) in this process and prints one
/// `time_s SECONDS` line per repetition, then `vmhwm_kib KIB` (peak RSS).
///
/// Reads first do one untimed warm-up pass, so both implementations read
/// from a warm page cache, and check the last pass's values afterwards.
fn child(args: &[String]) -> Result<(), BoxError> {
    let [imp, workload, codecs, dir, side, rest @ ..] = args else {
        return Err(format!("child: expected IMP WORKLOAD CODECS DIR SIDE [REPS]\n{USAGE}").into());
    };
    let imp: Imp = imp.parse()?;
    let workload: Workload = workload.parse()?;
    let codecs: Codecs = codecs.parse()?;
    let dir = Path::new(dir);
    let side: u64 = side.parse()?;
    let reps: usize = match rest.first() {
        Some(r) => r.parse()?,
        None => 1,
    };
    let pattern = Pattern::new(side);
    let whole = pattern.whole();
    let mut times = Vec::with_capacity(reps);
    match workload {
        Workload::Write => {
            let data = pattern.generate(&whole);
            let handle = Handle::open_or_create(imp, dir, side, codecs)?;
            for _ in 0..reps {
                let start = Instant::now();
                handle.write(&whole, &data)?;
                times.push(start.elapsed().as_secs_f64());
            }
        }
        Workload::ReadAll => {
            let handle = Handle::open(imp, dir)?;
            drop(std::hint::black_box(handle.read(&whole)?));
            let mut last = Vec::new();
            for _ in 0..reps {
                drop(last);
                let start = Instant::now();
                last = std::hint::black_box(handle.read(&whole)?);
                times.push(start.elapsed().as_secs_f64());
            }
            pattern.check(&whole, &last)?;
        }
        Workload::ReadRegions | Workload::ReadInner => {
            let regions = if workload == Workload::ReadInner {
                inner_blocks(side)
            } else {
                random_regions(side)
            };
            let handle = Handle::open(imp, dir)?;
            for region in &regions {
                drop(std::hint::black_box(handle.read(region)?));
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
    dir: PathBuf,
    remove_dir: bool,
    codecs: Vec<Codecs>,
    workloads: Vec<Workload>,
}

fn parse_options(args: &[String]) -> Result<Options, BoxError> {
    let mut side = 512;
    let mut reps = 5;
    let mut dir = None;
    let mut keep = false;
    let mut codecs = Codecs::ALL.to_vec();
    let mut workloads = Workload::TIMED.to_vec();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| format!("{arg} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "--quick" => side = 128,
            "--reps" => reps = value()?.parse()?,
            "--dir" => dir = Some(PathBuf::from(value()?)),
            "--keep" => keep = true,
            "--codecs" => {
                codecs = value()?
                    .split(',')
                    .map(str::parse)
                    .collect::<Result<_, _>>()?;
            }
            "--workloads" => {
                workloads = value()?
                    .split(',')
                    .map(str::parse)
                    .collect::<Result<_, _>>()?;
                if workloads.contains(&Workload::Verify) {
                    return Err("`verify` is not a timed workload".into());
                }
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            _ => return Err(format!("unknown argument `{arg}`\n{USAGE}").into()),
        }
    }
    if reps == 0 {
        return Err("--reps must be at least 1".into());
    }
    let remove_dir = dir.is_none() && !keep;
    let dir = dir.unwrap_or_else(|| {
        std::env::temp_dir().join(format!("bench-compare-{}", std::process::id()))
    });
    Ok(Options {
        side,
        reps,
        dir,
        remove_dir,
        codecs,
        workloads,
    })
}

/// The medians and peaks of one (workload, codecs) row.
struct Row {
    workload: Workload,
    codecs: Codecs,
    /// Per implementation (in `Imp::ALL` order): times, or the error.
    results: [Result<Measured, String>; 2],
}

struct Measured {
    times: Vec<f64>,
    peak_kib: u64,
}

impl Measured {
    fn median(&self) -> f64 {
        let mut t = self.times.clone();
        t.sort_by(f64::total_cmp);
        let n = t.len();
        if n % 2 == 1 {
            t[n / 2]
        } else {
            (t[n / 2 - 1] + t[n / 2]) / 2.0
        }
    }
}

fn parent(args: &[String]) -> Result<(), BoxError> {
    let options = parse_options(args)?;
    let exe = std::env::current_exe()?;
    let side = options.side;
    eprintln!(
        "array {side}^3 uint16, chunks 64^3; {REGION_COUNT} regions of {REGION}^3; \
         {} reps; {} threads; stores in {}",
        options.reps,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        options.dir.display()
    );
    std::fs::create_dir_all(&options.dir)?;
    let load_before = loadavg();
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for &codecs in &options.codecs {
        let store_dir = |imp: Imp| options.dir.join(format!("{codecs}-{imp}.zarr"));
        let runner = Runner {
            exe: &exe,
            side,
            codecs,
        };
        for &workload in &options.workloads {
            if !workload.applies_to(codecs) {
                continue;
            }
            if workload != Workload::Write {
                for imp in Imp::ALL {
                    if !store_dir(imp).join("array").exists() {
                        eprintln!("[{codecs}] {imp}: writing the store first (untimed)");
                        if let Err(e) = runner.run(imp, Workload::Write, &store_dir(imp)) {
                            eprintln!("[{codecs}] {imp}: writing the store FAILED: {e}");
                        }
                        sync();
                    }
                }
            }
            let mut results: [Result<Measured, String>; 2] = std::array::from_fn(|_| {
                Ok(Measured {
                    times: Vec::new(),
                    peak_kib: 0,
                })
            });
            for rep in 0..options.reps {
                // Alternate who goes first, so drift in the machine's load
                // does not favour one implementation.
                let order = if rep % 2 == 0 { [0, 1] } else { [1, 0] };
                for i in order {
                    let imp = Imp::ALL[i];
                    let Ok(measured) = &mut results[i] else {
                        continue;
                    };
                    // Start every repetition with no dirty pages, so one
                    // write's writeback never lands in the next one's time.
                    sync();
                    match runner.run(imp, workload, &store_dir(imp)) {
                        Ok((times, peak_kib)) => {
                            eprintln!(
                                "[{codecs}] {workload:<12} {imp:<7} rep {}/{}: {:.3} s, peak {:.0} MiB",
                                rep + 1,
                                options.reps,
                                times.iter().sum::<f64>(),
                                peak_kib as f64 / 1024.0
                            );
                            measured.times.extend(times);
                            measured.peak_kib = measured.peak_kib.max(peak_kib);
                        }
                        Err(e) => {
                            eprintln!("[{codecs}] {workload} {imp}: FAILED: {e}");
                            results[i] = Err(first_line(&e.to_string()));
                        }
                    }
                }
            }
            rows.push(Row {
                workload,
                codecs,
                results,
            });
            if workload == Workload::Write {
                // Settle writeback before anything reads, then cross-check:
                // each implementation reads the other's store (untimed).
                sync();
                for (reader, writer) in [(Imp::Zarrkit, Imp::Zarrs), (Imp::Zarrs, Imp::Zarrkit)] {
                    let note = match runner.run(reader, Workload::Verify, &store_dir(writer)) {
                        Ok(_) => format!(
                            "[{codecs}] cross-check: {reader} reads the {writer}-written store: all values equal"
                        ),
                        Err(e) => format!(
                            "[{codecs}] cross-check: {reader} reads the {writer}-written store: FAILED: {}",
                            first_line(&e.to_string())
                        ),
                    };
                    eprintln!("{note}");
                    notes.push(note);
                }
                for imp in Imp::ALL {
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
    println!();
    print_table(&rows, side, options.reps);
    println!();
    println!(
        "load average (1 5 15 min) before: {load_before}; after: {}",
        loadavg()
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

struct Runner<'a> {
    exe: &'a Path,
    side: u64,
    codecs: Codecs,
}

impl Runner<'_> {
    /// Runs one child; returns its times and peak RSS in KiB.
    fn run(&self, imp: Imp, workload: Workload, dir: &Path) -> Result<(Vec<f64>, u64), BoxError> {
        let output = Command::new(self.exe)
            .arg("child")
            .arg(imp.name())
            .arg(workload.name())
            .arg(self.codecs.name())
            .arg(dir)
            .arg(self.side.to_string())
            .output()?;
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
    s.lines().next().unwrap_or("").chars().take(200).collect()
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

fn print_table(rows: &[Row], side: u64, reps: usize) {
    println!(
        "{side}^3 uint16, 64^3 chunks, median of {reps}; GB/s = decoded bytes / median time (GB = 1e9 B); \
         peak = max RSS of the child process"
    );
    println!();
    println!(
        "| workload | zarrkit median | zarrs median | zarrkit GB/s | zarrs GB/s | zarrkit peak RSS | zarrs peak RSS | ratio zarrkit/zarrs |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for row in rows {
        let label = match row.workload {
            Workload::Write => "write all".to_string(),
            Workload::ReadAll => "read all".to_string(),
            Workload::ReadRegions => format!("read {REGION_COUNT} × {REGION}³ regions"),
            Workload::ReadInner => format!("read each {INNER}³ inner chunk"),
            Workload::Verify => "verify".to_string(),
        };
        let label = match row.codecs {
            Codecs::Zstd => format!("{label} (zstd)"),
            Codecs::Raw => format!("{label} (raw)"),
            Codecs::Sharded => format!("{label} (sharded {SHARD}³/{INNER}³ zstd)"),
        };
        let bytes = row.workload.decoded_bytes(side) as f64;
        let cell = |r: &Result<Measured, String>, f: &dyn Fn(&Measured) -> String| match r {
            Ok(m) if !m.times.is_empty() => f(m),
            Ok(_) => "–".to_string(),
            Err(_) => "error".to_string(),
        };
        let time = |m: &Measured| format_time(m.median());
        let rate = |m: &Measured| format!("{:.2}", bytes / m.median() / 1e9);
        let peak = |m: &Measured| format!("{:.0} MiB", m.peak_kib as f64 / 1024.0);
        let ratio = match (&row.results[0], &row.results[1]) {
            (Ok(a), Ok(b)) if !a.times.is_empty() && !b.times.is_empty() => {
                format!("{:.2}", a.median() / b.median())
            }
            _ => "–".to_string(),
        };
        println!(
            "| {label} | {} | {} | {} | {} | {} | {} | {ratio} |",
            cell(&row.results[0], &time),
            cell(&row.results[1], &time),
            cell(&row.results[0], &rate),
            cell(&row.results[1], &rate),
            cell(&row.results[0], &peak),
            cell(&row.results[1], &peak),
        );
    }
    for row in rows {
        for (imp, result) in Imp::ALL.iter().zip(&row.results) {
            if let Err(e) = result {
                println!("  {} {} {imp}: {e}", row.workload, row.codecs);
            }
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
        format!("{seconds:.3} s")
    } else {
        format!("{:.1} ms", seconds * 1e3)
    }
}
