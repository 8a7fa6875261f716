//! Selections (issue #12): NumPy-style reads of the `zstd` and `sharded`
//! arrays by every implementation, `bench-compare selections`. See the
//! README's "Selections" section.
//!
//! One common store per chain, written once by zarrkit (untimed) and read
//! by every implementation. The selections' inputs (points, orthogonal
//! indices, the mask's true positions) are generated here from fixed seeds
//! and written next to the stores, so every child reads the same ones; a
//! child builds its selection (and the mask) before the timing and checks
//! every value of its result against the formula after it.

use crate::imps::{ARRAY_PATH, BoxError, Handle, Imp};
use crate::workload::{Codecs, INNER, Pattern};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use zarrkit::{Selection, SelectionItem};

const USAGE: &str = "\
usage: bench-compare selections [--side N] [--reps N] [--threads N]
                     [--python PATH] [--imps zarrkit,zarrs,...]
                     [--codecs zstd,sharded] [--rows strided,plane,...]
                     [--dir DIR] [--keep]

  rows: strided (::2, ::2, ::2), plane (100, ::-1, ::-1), points (10,000
  random points, vindex), oindex (100 x 100 x 100 random indices), mask (a
  1 % boolean mask, vindex); plus zarrkit's reference reads of the chunks
  each row touches (touched_*); default all. Defaults: --side 512,
  --reps 3, --threads 2, --codecs zstd,sharded.

Profiling one side by hand:
  bench-compare selections-child IMP ROW CODECS DIR SIDE [REPS]
  (IMP: zarrkit|zarrs; DIR: the store, e.g. DIR/zstd.zarr, with the
  selection inputs in DIR/..)";

/// How many random points the `points` row reads.
pub const POINTS: usize = 10_000;
/// How many random indices per dimension the `oindex` row selects.
pub const OINDEX: usize = 100;
/// The mask's density: one element in `MASK_EVERY`.
pub const MASK_EVERY: u64 = 100;
/// The plane the `plane` row reads (modulo the side).
pub const PLANE: u64 = 100;
/// How a child's error starts when the peer does not support the row.
const UNSUPPORTED: &str = "unsupported: ";
const SEED: u64 = 0x5E1E_C712;

/// One measured selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Row {
    Strided,
    Plane,
    Points,
    Oindex,
    Mask,
}

impl Row {
    pub const ALL: [Row; 5] = [
        Row::Strided,
        Row::Plane,
        Row::Points,
        Row::Oindex,
        Row::Mask,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Row::Strided => "strided",
            Row::Plane => "plane",
            Row::Points => "points",
            Row::Oindex => "oindex",
            Row::Mask => "mask",
        }
    }

    fn label(self) -> String {
        match self {
            Row::Strided => "`::2, ::2, ::2`".into(),
            Row::Plane => format!("`{PLANE}, ::-1, ::-1`"),
            Row::Points => format!("{POINTS} random points (vindex)"),
            Row::Oindex => format!("{OINDEX}×{OINDEX}×{OINDEX} unsorted indices (oindex)"),
            Row::Mask => "1 % boolean mask (vindex)".into(),
        }
    }
}

impl std::str::FromStr for Row {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| format!("unknown selection row `{s}`"))
    }
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    mix64(*state)
}

fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The selections' inputs, the same for every implementation.
pub struct Inputs {
    /// `POINTS` points, as three coordinate lists (z, y, x).
    pub points: [Vec<u64>; 3],
    /// `OINDEX` distinct indices per dimension, unsorted.
    pub oindex: [Vec<u64>; 3],
    /// The flat C-order positions where the mask is true, ascending.
    pub mask: Vec<u64>,
}

impl Inputs {
    pub fn generate(side: u64) -> Self {
        let mut state = SEED;
        let points = std::array::from_fn(|_| {
            (0..POINTS)
                .map(|_| splitmix64(&mut state) % side)
                .collect::<Vec<u64>>()
        });
        let oindex = std::array::from_fn(|_| {
            // A partial Fisher–Yates shuffle: distinct, in random order.
            let mut all: Vec<u64> = (0..side).collect();
            let n = OINDEX.min(side as usize);
            for i in 0..n {
                let j = i + (splitmix64(&mut state) % (side - i as u64)) as usize;
                all.swap(i, j);
            }
            all.truncate(n);
            all
        });
        let mask = (0..side.pow(3))
            .filter(|&i| mix64(i ^ SEED).is_multiple_of(MASK_EVERY))
            .collect();
        Self {
            points,
            oindex,
            mask,
        }
    }

    fn write(&self, dir: &Path) -> Result<(), BoxError> {
        let mut points = Vec::new();
        for list in &self.points {
            points.extend_from_slice(list);
        }
        write_u64(&dir.join("sel-points.bin"), &points)?;
        let oindex: Vec<u64> = self.oindex.iter().flatten().copied().collect();
        write_u64(&dir.join("sel-oindex.bin"), &oindex)?;
        write_u64(&dir.join("sel-mask.bin"), &self.mask)
    }

    fn read(dir: &Path) -> Result<Self, BoxError> {
        let points = read_u64(&dir.join("sel-points.bin"))?;
        let oindex = read_u64(&dir.join("sel-oindex.bin"))?;
        let split = |v: &[u64], n: usize| -> [Vec<u64>; 3] {
            std::array::from_fn(|d| v[d * n..(d + 1) * n].to_vec())
        };
        Ok(Self {
            points: split(&points, points.len() / 3),
            oindex: split(&oindex, oindex.len() / 3),
            mask: read_u64(&dir.join("sel-mask.bin"))?,
        })
    }
}

fn write_u64(path: &Path, values: &[u64]) -> Result<(), BoxError> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    Ok(std::fs::write(path, bytes)?)
}

fn read_u64(path: &Path) -> Result<Vec<u64>, BoxError> {
    let bytes = std::fs::read(path)?;
    Ok(bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect())
}

/// The expected values of a row, in C order of the result.
fn expected(row: Row, side: u64, inputs: &Inputs, pattern: &Pattern) -> Vec<u16> {
    match row {
        Row::Strided => {
            let n = side.div_ceil(2);
            let mut out = Vec::with_capacity((n * n * n) as usize);
            for z in 0..n {
                for y in 0..n {
                    for x in 0..n {
                        out.push(pattern.value(2 * z, 2 * y, 2 * x));
                    }
                }
            }
            out
        }
        Row::Plane => {
            let z = PLANE % side;
            let mut out = Vec::with_capacity((side * side) as usize);
            for y in (0..side).rev() {
                for x in (0..side).rev() {
                    out.push(pattern.value(z, y, x));
                }
            }
            out
        }
        Row::Points => (0..inputs.points[0].len())
            .map(|i| {
                pattern.value(
                    inputs.points[0][i],
                    inputs.points[1][i],
                    inputs.points[2][i],
                )
            })
            .collect(),
        Row::Oindex => {
            let [a, b, c] = &inputs.oindex;
            let mut out = Vec::with_capacity(a.len() * b.len() * c.len());
            for &z in a {
                for &y in b {
                    for &x in c {
                        out.push(pattern.value(z, y, x));
                    }
                }
            }
            out
        }
        Row::Mask => inputs
            .mask
            .iter()
            .map(|&i| pattern.value(i / (side * side), i / side % side, i % side))
            .collect(),
    }
}

fn to_i64(v: &[u64]) -> Vec<i64> {
    v.iter().map(|&x| x as i64).collect()
}

/// What a child runs: a row, or zarrkit's read of the chunks a row touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Job {
    Row(Row),
    Touched(Row),
}

impl Job {
    fn parse(s: &str) -> Result<Self, BoxError> {
        Ok(match s.strip_prefix("touched_") {
            Some(r) => Job::Touched(r.parse()?),
            None => Job::Row(s.parse()?),
        })
    }
    fn name(self) -> String {
        match self {
            Job::Row(r) => r.name().into(),
            Job::Touched(r) => format!("touched_{}", r.name()),
        }
    }
}

// ---------------------------------------------------------------- child ---

/// `selections-child IMP ROW CODECS DIR SIDE [REPS]`: one untimed warm-up
/// pass, REPS timed ones, a check of the last result, then the same
/// `time_s` / `vmhwm_kib` lines as the other children.
pub fn child(args: &[String]) -> Result<(), BoxError> {
    let [imp, job, codecs, dir, side, rest @ ..] = args else {
        return Err(
            format!("selections-child: expected IMP ROW CODECS DIR SIDE [REPS]\n{USAGE}").into(),
        );
    };
    let imp: Imp = imp.parse()?;
    let job = Job::parse(job)?;
    let codecs: Codecs = codecs.parse()?;
    let dir = Path::new(dir);
    let side: u64 = side.parse()?;
    let reps: usize = rest.first().map_or(Ok(1), |r| r.parse())?;
    let inputs = Inputs::read(dir.parent().ok_or("the store has no parent directory")?)?;
    let pattern = Pattern::new(side);
    let handle = Handle::open(imp, dir)?;
    let mut times = Vec::with_capacity(reps);
    match job {
        Job::Row(row) => {
            let run: Box<dyn Fn() -> Result<Vec<u16>, BoxError>> = match &handle {
                Handle::Zarrkit(array) => {
                    let selection = zarrkit_selection(row, side, &inputs);
                    Box::new(move || Ok(array.read_selection::<u16>(&selection)?))
                }
                Handle::Zarrs(array) => {
                    let mask = if row == Row::Mask {
                        let mut mask = vec![false; side.pow(3) as usize];
                        for &i in &inputs.mask {
                            mask[i as usize] = true;
                        }
                        mask
                    } else {
                        Vec::new()
                    };
                    let chunk = codecs.chunk(side);
                    let inputs = &inputs;
                    Box::new(move || zarrs_read(array, row, side, chunk, inputs, &mask))
                }
            };
            drop(std::hint::black_box(run()?));
            let mut last = Vec::new();
            for _ in 0..reps {
                drop(last);
                let start = Instant::now();
                last = std::hint::black_box(run()?);
                times.push(start.elapsed().as_secs_f64());
            }
            let want = expected(row, side, &inputs, &pattern);
            if last.len() != want.len() {
                return Err(
                    format!("{row:?}: {} values, expected {}", last.len(), want.len()).into(),
                );
            }
            if let Some(i) = (0..want.len()).find(|&i| last[i] != want[i]) {
                return Err(
                    format!("{row:?}: value {i} is {}, expected {}", last[i], want[i]).into(),
                );
            }
        }
        Job::Touched(row) => {
            let Handle::Zarrkit(array) = &handle else {
                return Err("touched_* rows are zarrkit's only".into());
            };
            let edge = if matches!(codecs, Codecs::Sharded | Codecs::ShardedBlosc) {
                INNER
            } else {
                codecs.chunk(side)
            };
            let regions = touched(row, side, edge, &inputs);
            let per_dim = side.div_ceil(edge);
            let whole = regions.len() as u64 == per_dim.pow(3);
            eprintln!(
                "{}: {} of {} chunks",
                job.name(),
                regions.len(),
                per_dim.pow(3)
            );
            let run = || -> Result<usize, BoxError> {
                if whole {
                    let r = array.read_region::<u16>(&zarrkit::Region::whole(&[side; 3]))?;
                    Ok(std::hint::black_box(r).len())
                } else {
                    regions
                        .par_iter()
                        .map(|r| {
                            let v = array.read_region::<u16>(&zarrkit::Region::from_ranges(r))?;
                            Ok(std::hint::black_box(v).len())
                        })
                        .sum()
                }
            };
            run()?;
            for _ in 0..reps {
                let start = Instant::now();
                run()?;
                times.push(start.elapsed().as_secs_f64());
            }
        }
    }
    for t in &times {
        println!("time_s {t}");
    }
    println!("vmhwm_kib {}", crate::vmhwm_kib()?);
    Ok(())
}

/// The chunks (of edge `edge`: the decoded unit) a row's selection touches.
fn touched(row: Row, side: u64, edge: u64, inputs: &Inputs) -> Vec<[std::ops::Range<u64>; 3]> {
    let n = side.div_ceil(edge);
    let mut set = std::collections::BTreeSet::new();
    match row {
        Row::Strided | Row::Mask => {
            // Every chunk (each holds even coordinates, and 1 % of 64³ or
            // 32³ elements).
            for c in 0..n.pow(3) {
                set.insert([c / (n * n), c / n % n, c % n]);
            }
        }
        Row::Plane => {
            for y in 0..n {
                for x in 0..n {
                    set.insert([(PLANE % side) / edge, y, x]);
                }
            }
        }
        Row::Points => {
            for i in 0..inputs.points[0].len() {
                set.insert(std::array::from_fn(|d| inputs.points[d][i] / edge));
            }
        }
        Row::Oindex => {
            let per: [std::collections::BTreeSet<u64>; 3] =
                std::array::from_fn(|d| inputs.oindex[d].iter().map(|&i| i / edge).collect());
            for &a in &per[0] {
                for &b in &per[1] {
                    for &c in &per[2] {
                        set.insert([a, b, c]);
                    }
                }
            }
        }
    }
    set.into_iter()
        .map(|c: [u64; 3]| std::array::from_fn(|d| c[d] * edge..((c[d] + 1) * edge).min(side)))
        .collect()
}

fn zarrkit_selection(row: Row, side: u64, inputs: &Inputs) -> Selection {
    match row {
        Row::Strided => Selection::new(vec![SelectionItem::slice(None, None, Some(2)); 3]),
        Row::Plane => Selection::new(vec![
            SelectionItem::Index((PLANE % side) as i64),
            SelectionItem::slice(None, None, Some(-1)),
            SelectionItem::slice(None, None, Some(-1)),
        ]),
        Row::Points => Selection::vectorized(
            inputs
                .points
                .iter()
                .map(|v| SelectionItem::indices(to_i64(v)))
                .collect(),
        ),
        Row::Oindex => Selection::orthogonal(
            inputs
                .oindex
                .iter()
                .map(|v| SelectionItem::indices(to_i64(v)))
                .collect(),
        ),
        Row::Mask => {
            let mut values = vec![false; side.pow(3) as usize];
            for &i in &inputs.mask {
                values[i as usize] = true;
            }
            Selection::vectorized(vec![SelectionItem::Mask {
                shape: vec![side; 3],
                values,
            }])
        }
    }
}

type ZarrsArray = zarrs::array::Array<zarrs::filesystem::FilesystemStore>;

/// zarrs' best read of a row: a box read where the selection is a box (the
/// plane, then reversed; the strided read: the whole array, then
/// subsampled), else the points grouped by chunk and read with one partial
/// decoder per chunk (`partial_decode` of a `Vec<ArrayIndices>`), chunks in
/// parallel on rayon's pool.
fn zarrs_read(
    array: &ZarrsArray,
    row: Row,
    side: u64,
    chunk: u64,
    inputs: &Inputs,
    mask: &[bool],
) -> Result<Vec<u16>, BoxError> {
    match row {
        Row::Strided => {
            let all = array.retrieve_array_subset::<Vec<u16>>(&[0..side, 0..side, 0..side])?;
            let s = side as usize;
            let mut out = Vec::with_capacity(s.div_ceil(2).pow(3));
            for z in (0..s).step_by(2) {
                for y in (0..s).step_by(2) {
                    let row = &all[(z * s + y) * s..(z * s + y + 1) * s];
                    out.extend(row.iter().step_by(2));
                }
            }
            Ok(out)
        }
        Row::Plane => {
            let z = PLANE % side;
            let mut out = array.retrieve_array_subset::<Vec<u16>>(&[z..z + 1, 0..side, 0..side])?;
            // Both remaining axes reversed: the whole plane reversed.
            out.reverse();
            Ok(out)
        }
        Row::Points => {
            let [z, y, x] = &inputs.points;
            zarrs_points(array, chunk, z.len(), |i| [z[i], y[i], x[i]])
        }
        Row::Oindex => {
            let [a, b, c] = &inputs.oindex;
            let (nb, nc) = (b.len(), c.len());
            zarrs_points(array, chunk, a.len() * nb * nc, |i| {
                [a[i / (nb * nc)], b[i / nc % nb], c[i % nc]]
            })
        }
        Row::Mask => {
            let s = side as usize;
            let flat: Vec<usize> = mask
                .iter()
                .enumerate()
                .filter_map(|(i, &m)| m.then_some(i))
                .collect();
            zarrs_points(array, chunk, flat.len(), |i| {
                let f = flat[i];
                [(f / (s * s)) as u64, (f / s % s) as u64, (f % s) as u64]
            })
        }
    }
}

/// Reads `n` points (`point(i)` is the i-th) with zarrs: grouped by chunk,
/// one `partial_decode` of the chunk's point list per chunk.
fn zarrs_points(
    array: &ZarrsArray,
    chunk: u64,
    n: usize,
    point: impl Fn(usize) -> [u64; 3],
) -> Result<Vec<u16>, BoxError> {
    // Per chunk: the points' positions in the output, their chunk-local indices.
    type Group = (Vec<usize>, Vec<Vec<u64>>);
    let mut groups: BTreeMap<[u64; 3], Group> = BTreeMap::new();
    for i in 0..n {
        let p = point(i);
        let key = p.map(|c| c / chunk);
        let group = groups.entry(key).or_default();
        group.0.push(i);
        group.1.push(p.iter().map(|c| c % chunk).collect());
    }
    let groups: Vec<_> = groups.into_iter().collect();
    let options = zarrs::array::CodecOptions::default();
    let decoded: Vec<Vec<u8>> = groups
        .par_iter()
        .map(|(key, (_, indices))| -> Result<Vec<u8>, BoxError> {
            let decoder = array.partial_decoder(key)?;
            let bytes = decoder.partial_decode(indices, &options)?;
            Ok(bytes.into_fixed()?.into_owned())
        })
        .collect::<Result<_, _>>()?;
    let mut out = vec![0u16; n];
    for ((_, (positions, _)), bytes) in groups.iter().zip(&decoded) {
        for (&p, v) in positions.iter().zip(bytes.chunks_exact(2)) {
            out[p] = u16::from_le_bytes([v[0], v[1]]);
        }
    }
    Ok(out)
}

// --------------------------------------------------------------- parent ---

struct Cell {
    times: Vec<f64>,
    peak_kib: u64,
    error: Option<String>,
}

pub fn parent(args: &[String]) -> Result<(), BoxError> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut side = 512u64;
    let mut reps = 3usize;
    let mut threads = 2usize;
    let mut python = here.join(".venv-peers/bin/python");
    let mut imps = Imp::ALL.to_vec();
    let mut codecs = vec![Codecs::Zstd, Codecs::Sharded];
    let mut rows = Row::ALL.to_vec();
    let mut dir = None;
    let mut keep = false;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = || {
            it.next()
                .ok_or_else(|| format!("{arg} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "--side" => side = value()?.parse()?,
            "--reps" => reps = value()?.parse()?,
            "--threads" => threads = value()?.parse()?,
            "--python" => python = PathBuf::from(value()?),
            "--imps" => imps = crate::list(value()?)?,
            "--codecs" => codecs = crate::list(value()?)?,
            "--rows" => rows = crate::list(value()?)?,
            "--dir" => dir = Some(PathBuf::from(value()?)),
            "--keep" => keep = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            _ => return Err(format!("unknown argument `{arg}`\n{USAGE}").into()),
        }
    }
    if let Some(c) = codecs
        .iter()
        .find(|c| !matches!(c, Codecs::Zstd | Codecs::Sharded))
    {
        return Err(format!("selections run on zstd and sharded only, not {c}").into());
    }
    let mut notes = Vec::new();
    if imps.iter().any(|i| i.is_python()) && !python.exists() {
        notes.push(format!(
            "the Python peers were not run: no {}; run ./setup-peers.sh or pass --python",
            python.display()
        ));
        imps.retain(|i| !i.is_python());
    }
    let remove = dir.is_none() && !keep;
    let dir = dir.unwrap_or_else(|| {
        std::env::temp_dir().join(format!("bench-compare-sel-{}", std::process::id()))
    });
    std::fs::create_dir_all(&dir)?;
    let exe = std::env::current_exe()?;
    let script = here.join("peers/selections.py");
    eprintln!("generating the selections' inputs");
    let inputs = Inputs::generate(side);
    inputs.write(&dir)?;
    let load_before = crate::loadavg();
    let started = Instant::now();
    let run = |imp: Imp,
               job: &str,
               codecs: Codecs,
               store: &Path,
               n: usize|
     -> Result<(Vec<f64>, u64), BoxError> {
        let mut command = if imp.is_python() {
            let mut c = Command::new(&python);
            c.arg(&script);
            c
        } else {
            let mut c = Command::new(&exe);
            c.arg(if job == "write" {
                "child"
            } else {
                "selections-child"
            });
            c
        };
        command
            .arg(imp.name())
            .arg(job)
            .arg(codecs.name())
            .arg(store)
            .arg(side.to_string())
            .arg(n.to_string());
        if imp.is_python() {
            command.arg(threads.to_string());
        }
        for var in [
            "RAYON_NUM_THREADS",
            "OMP_NUM_THREADS",
            "NUMEXPR_NUM_THREADS",
            "BLOSC_NTHREADS",
        ] {
            command.env(var, threads.to_string());
        }
        // NumPy's BLAS is no part of any workload, and its idle workers
        // spin on a core after NumPy is imported: one thread each.
        for var in ["OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"] {
            command.env(var, "1");
        }
        let output = command.output()?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let tail: Vec<&str> = stderr.lines().rev().take(4).collect();
            return Err(format!(
                "{imp} {job} exited with {}: {}",
                output.status,
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            )
            .into());
        }
        let mut times = Vec::new();
        let mut peak = 0;
        for line in stdout.lines() {
            if let Some(t) = line.strip_prefix("time_s ") {
                times.push(t.parse()?);
            } else if let Some(k) = line.strip_prefix("vmhwm_kib ") {
                peak = k.parse()?;
            } else if let Some(why) = line.strip_prefix("unsupported ") {
                return Err(format!("{UNSUPPORTED}{why}").into());
            }
        }
        Ok((times, peak))
    };
    // (codecs, job) -> per implementation.
    let mut table: Vec<(Codecs, Job, Vec<Option<Cell>>)> = Vec::new();
    for &c in &codecs {
        let store = dir.join(format!("{c}.zarr"));
        if !store.join("array/zarr.json").exists() {
            let (name, document) = c.metadata(side).ok_or("no metadata")?;
            let array = store.join(ARRAY_PATH.trim_start_matches('/'));
            std::fs::create_dir_all(&array)?;
            std::fs::write(array.join(name), document)?;
            eprintln!("[{c}] zarrkit writes the common store (untimed)");
            run(Imp::Zarrkit, "write", c, &store, 1)?;
            crate::sync();
        }
        for &row in &rows {
            for job in [Job::Row(row), Job::Touched(row)] {
                let job_imps: Vec<Imp> = match job {
                    Job::Row(_) => imps.clone(),
                    Job::Touched(_) => vec![Imp::Zarrkit],
                };
                let mut cells: Vec<Option<Cell>> = Imp::ALL.iter().map(|_| None).collect();
                for rep in 0..reps {
                    // Rotate who goes first, so drift favours nobody.
                    for k in 0..job_imps.len() {
                        let imp = job_imps[(k + rep) % job_imps.len()];
                        let slot = Imp::ALL.iter().position(|&i| i == imp).unwrap();
                        let cell = cells[slot].get_or_insert(Cell {
                            times: Vec::new(),
                            peak_kib: 0,
                            error: None,
                        });
                        if cell.error.is_some() {
                            continue;
                        }
                        match run(imp, &job.name(), c, &store, 1) {
                            Ok((t, peak)) => {
                                cell.times.extend(t);
                                cell.peak_kib = cell.peak_kib.max(peak);
                            }
                            Err(e) => {
                                eprintln!("[{c}] {} {imp}: FAILED: {e}", job.name());
                                cell.error = Some(crate::first_line(&e.to_string()));
                            }
                        }
                    }
                }
                let summary: Vec<String> = Imp::ALL
                    .iter()
                    .zip(&cells)
                    .filter_map(|(imp, c)| {
                        let c = c.as_ref()?;
                        Some(match &c.error {
                            Some(_) => format!("{imp} error"),
                            None => {
                                format!("{imp} {}", crate::format_time(crate::median(&c.times)))
                            }
                        })
                    })
                    .collect();
                eprintln!("[{c}] {}: {}", job.name(), summary.join(", "));
                table.push((c, job, cells));
            }
        }
    }
    let took = started.elapsed().as_secs_f64();
    print_table(side, reps, threads, &table);
    println!();
    println!(
        "load average (1 5 15 min) before: {load_before}; after: {}; {took:.0} s",
        crate::loadavg()
    );
    for note in notes {
        println!("{note}");
    }
    if remove {
        std::fs::remove_dir_all(&dir)?;
    }
    Ok(())
}

/// Which cells are not the selection itself, as the table's footnotes say.
fn marker(imp: Imp, row: Row) -> &'static str {
    match (imp, row) {
        (Imp::Zarrs, Row::Strided) => " ᵃ",
        (Imp::Zarrs, Row::Plane) => " ᵇ",
        (Imp::ZarrPython | Imp::ZarrPythonZarrs, Row::Plane) => " ᶜ",
        _ => "",
    }
}

fn print_table(side: u64, reps: usize, threads: usize, table: &[(Codecs, Job, Vec<Option<Cell>>)]) {
    println!(
        "{side}³ uint16, one zarrkit-written store per chain read by all; {threads} threads each; \
         median of {reps} repetitions (each its own process, after a warm-up pass); peak = max VmHWM; \
         ratio = zarrkit / best peer"
    );
    println!();
    let names: Vec<&str> = Imp::ALL.iter().map(|i| i.short()).collect();
    println!(
        "| chain | selection | {} | zarrkit / best | best peer | zarrkit: the chunks it touches |",
        names.join(" | ")
    );
    println!("|---|---|{}---:|---|---:|", "---:|".repeat(names.len()));
    let cell_median = |c: &Option<Cell>| {
        c.as_ref()
            .filter(|c| c.error.is_none() && !c.times.is_empty())
            .map(|c| crate::median(&c.times))
    };
    let mut peaks = Vec::new();
    for (codecs, job, cells) in table {
        let Job::Row(row) = job else { continue };
        let touched = table
            .iter()
            .find(|(c, j, _)| c == codecs && *j == Job::Touched(*row))
            .and_then(|(_, _, cells)| cell_median(&cells[0]));
        let text: Vec<String> = Imp::ALL
            .iter()
            .zip(cells)
            .map(|(&imp, c)| match c {
                None => "n/a".into(),
                Some(Cell { error: Some(e), .. }) if e.starts_with(UNSUPPORTED) => {
                    "unsupported".into()
                }
                Some(c) if c.error.is_some() => "error".into(),
                Some(c) => format!(
                    "{}{}",
                    crate::format_time(crate::median(&c.times)),
                    marker(imp, *row)
                ),
            })
            .collect();
        let best = Imp::ALL
            .iter()
            .zip(cells)
            .skip(1)
            .filter_map(|(imp, c)| cell_median(c).map(|m| (*imp, m)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let (ratio, best_name) = match (cell_median(&cells[0]), best) {
            (Some(z), Some((imp, b))) if z > b => (format!("**{:.2}**", z / b), imp.name()),
            (Some(z), Some((imp, b))) => (format!("{:.2}", z / b), imp.name()),
            _ => ("–".into(), "–"),
        };
        println!(
            "| {} | {} | {} | {ratio} | {best_name} | {} |",
            codecs.label(),
            row.label(),
            text.join(" | "),
            touched.map_or("–".into(), crate::format_time)
        );
        let peak: Vec<String> = cells
            .iter()
            .map(|c| match c {
                Some(c) if c.error.is_none() => format!("{:.0}", c.peak_kib as f64 / 1024.0),
                Some(_) => "–".into(),
                None => "n/a".into(),
            })
            .collect();
        peaks.push(format!(
            "| {} | {} | {} |",
            codecs.label(),
            row.label(),
            peak.join(" | ")
        ));
    }
    println!();
    println!("Peak memory (MiB):");
    println!();
    println!("| chain | selection | {} |", names.join(" | "));
    println!("|---|---|{}", "---:|".repeat(names.len()));
    for p in peaks {
        println!("{p}");
    }
    let notes: Vec<String> = table
        .iter()
        .flat_map(|(c, j, cells)| {
            Imp::ALL.iter().zip(cells).filter_map(move |(imp, cell)| {
                let e = cell.as_ref()?.error.as_ref()?;
                Some(format!("  {c} {} {imp}: {e}", j.name()))
            })
        })
        .collect();
    if !notes.is_empty() {
        println!();
        println!("Unsupported and failed cells:");
        for f in notes {
            println!("{f}");
        }
    }
}
