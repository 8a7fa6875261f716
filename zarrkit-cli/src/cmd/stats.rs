//! `zarrkit stats`: count, extremes, mean, standard deviation, NaNs and a
//! histogram of an array or a selection of it, computed chunk by chunk in
//! parallel, with the array's storage figures.

use super::{Location, format_bytes, format_shape, locate, open_located, product};
use anyhow::Context;
use clap::Args;
use rayon::prelude::*;
use serde_json::{Value, json};
use std::io::Write;
use std::path::PathBuf;
use zarrkit::array::GridWalk;
use zarrkit::metadata::{DataType, SmallFloat, SmallInt};
use zarrkit::{Array, Region, Selection, SelectionItem, SelectionMode, Slice};

/// Chunks (or selection pieces) before a progress bar is worth showing.
const PROGRESS_THRESHOLD: u64 = 32;

/// The most bytes one piece of a selection holds (a selection is read in
/// pieces along its first dimension when that is a slice).
const PIECE_BYTES: u64 = 64 << 20;

/// Elements per parallel task within one piece of bytes.
const TASK_ELEMENTS: usize = 1 << 16;

/// The text after the options in `--help`.
pub const AFTER_LONG_HELP: &str = "\
Examples:
  zarrkit stats data.zarr /temperature
  zarrkit stats data.zarr /temperature '0, :, 100:200' --bins 20
  zarrkit stats data.zarr /temperature --range 250,320 --json
  zarrkit stats s3://bucket/data.zarr /a '::10, ::10'

SELECTION is in NumPy syntax (`0, 10:20, ::-1`, `..., 3`, `[1, 5, 7]`, \
masks), as `get` takes it; the statistics are over the selected elements. \
Without one they are over the whole array, read chunk by chunk in parallel \
(--threads) with one chunk per thread in memory; a selection is read in \
pieces of at most 64 MiB (or half of --memory-budget) along its first \
dimension when that is a slice, else whole (up to --memory-budget).

Missing chunks read as the fill value and count as data, as zarr-python \
reads them. NaN elements are counted apart (`nan_count`) and left out of \
min, max, mean, std and the histogram (NumPy's nanmin, nanmax, nanmean, \
nanstd). std is the population standard deviation (ddof = 0), computed \
stably (two passes within a chunk, chunks merged with Chan's formula). \
`fill_value_count` counts elements equal to the fill value (NaN fill: the \
NaNs). Data types: integers, floats and bool (as 0/1) as they are; \
datetime64/timedelta64 as their integer counts with NaT counted as NaN; \
complex types by their modulus |z| (so min is the smallest modulus); other \
types (strings, bytes, structures, raw bits) report the count only.

The histogram has --bins equal bins (default 10) over --range, or over \
min..max in a second pass, as numpy.histogram bins them (the last bin \
includes its right edge; values outside the range are not counted). With \
infinite values and no --range there is no histogram.

The storage figures are the array's, whatever the selection: chunks in the \
grid, stored chunks, stored bytes, decoded bytes and their ratio.

--json prints one object: {path, data_type, shape, selection (the text or \
null), count (elements selected), values_of (\"value\", \"modulus\" for \
complex types, or null when only counted), nan_count, fill_value_count, \
min, max, mean, std (null when there is no value), histogram (null or \
{bins, range: [lo, hi], edges, counts}), storage: {chunks, stored_chunks, \
stored_bytes, decoded_bytes (null for variable-length types), \
compression_ratio (decoded / stored, null when either is 0 or unknown)}}.";

/// Arguments of `zarrkit stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// The store: a directory, URL or zip archive holding the hierarchy
    #[arg(value_name = "STORE")]
    pub store: PathBuf,

    /// The array inside the store: `/` for a root array, or `/a/b`
    #[arg(value_name = "NODE")]
    pub node: String,

    /// A selection in NumPy syntax, such as `0, 10:20, ::2`
    #[arg(value_name = "SELECTION", allow_hyphen_values = true)]
    pub selection: Option<String>,

    /// How the selection's items combine: `basic` (NumPy's `arr[...]`),
    /// `orthogonal` (zarr-python's `oindex`) or `vectorized` (`vindex`)
    #[arg(long, value_name = "MODE", default_value = "basic", value_parser = ["basic", "orthogonal", "vectorized"])]
    pub mode: String,

    /// The number of histogram bins (0: no histogram; at most 1000000)
    #[arg(long, value_name = "N", default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub bins: u32,

    /// The histogram's range `LO,HI` (default: the values' min..max, found in
    /// a first pass)
    #[arg(long, value_name = "LO,HI", value_parser = parse_range, allow_hyphen_values = true)]
    pub range: Option<(f64, f64)>,

    /// Print JSON (described below)
    #[arg(long)]
    pub json: bool,
    /// The most memory one read or chunk decode may hold, such as `512MiB`
    /// or `2G` (default 8 GiB); larger ones fail with an error naming them
    #[arg(long, value_name = "BYTES", value_parser = super::export::parse_size)]
    pub memory_budget: Option<u64>,
}

/// Parses `LO,HI` of `--range`.
fn parse_range(text: &str) -> Result<(f64, f64), String> {
    let (lo, hi) = text
        .split_once(',')
        .ok_or_else(|| format!("`{text}` is not LO,HI"))?;
    let parse = |s: &str| {
        s.trim()
            .parse::<f64>()
            .map_err(|_| format!("`{s}` is not a number"))
    };
    let (lo, hi) = (parse(lo)?, parse(hi)?);
    if !(lo.is_finite() && hi.is_finite() && lo < hi) {
        return Err(format!("the range `{text}` must be finite with LO < HI"));
    }
    Ok((lo, hi))
}

/// How the elements of a data type become numbers.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Number {
    Bool,
    Int {
        size: usize,
        signed: bool,
    },
    /// `numpy.datetime64` / `timedelta64`: `i64`, with `i64::MIN` as NaT.
    Time,
    Float16,
    BFloat16,
    Float32,
    Float64,
    Small(SmallFloat),
    SmallInt(SmallInt),
}

/// How the elements of an array read as numbers: one part, or two (real
/// and imaginary) for complex types.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Numeric {
    pub part: Number,
    pub complex: bool,
}

impl Numeric {
    /// The numeric reading of `data_type`, or `None` for types that are not
    /// numbers (strings, bytes, structures, raw bits).
    pub fn of(data_type: &DataType) -> Option<Self> {
        let real = |part| {
            Some(Self {
                part,
                complex: false,
            })
        };
        let complex = |part| {
            Some(Self {
                part,
                complex: true,
            })
        };
        match data_type {
            DataType::Bool => real(Number::Bool),
            DataType::Int8 => real(Number::Int {
                size: 1,
                signed: true,
            }),
            DataType::Int16 => real(Number::Int {
                size: 2,
                signed: true,
            }),
            DataType::Int32 => real(Number::Int {
                size: 4,
                signed: true,
            }),
            DataType::Int64 => real(Number::Int {
                size: 8,
                signed: true,
            }),
            DataType::UInt8 => real(Number::Int {
                size: 1,
                signed: false,
            }),
            DataType::UInt16 => real(Number::Int {
                size: 2,
                signed: false,
            }),
            DataType::UInt32 => real(Number::Int {
                size: 4,
                signed: false,
            }),
            DataType::UInt64 => real(Number::Int {
                size: 8,
                signed: false,
            }),
            DataType::NumpyDateTime64 { .. } | DataType::NumpyTimeDelta64 { .. } => {
                real(Number::Time)
            }
            DataType::Float16 => real(Number::Float16),
            DataType::BFloat16 => real(Number::BFloat16),
            DataType::Float32 => real(Number::Float32),
            DataType::Float64 => real(Number::Float64),
            DataType::SmallFloat(f) => real(Number::Small(*f)),
            DataType::SmallInt(i) => real(Number::SmallInt(*i)),
            DataType::Complex64 => complex(Number::Float32),
            DataType::Complex128 => complex(Number::Float64),
            DataType::ComplexFloat16 => complex(Number::Float16),
            DataType::ComplexBFloat16 => complex(Number::BFloat16),
            DataType::ComplexSmallFloat(f) => complex(Number::Small(*f)),
            _ => None,
        }
    }

    /// The size in bytes of one part.
    pub fn part_size(self) -> usize {
        match self.part {
            Number::Bool | Number::Small(_) | Number::SmallInt(_) => 1,
            Number::Int { size, .. } => size,
            Number::Float16 | Number::BFloat16 => 2,
            Number::Float32 => 4,
            Number::Float64 | Number::Time => 8,
        }
    }

    /// The size in bytes of one element.
    pub fn size(self) -> usize {
        self.part_size() * if self.complex { 2 } else { 1 }
    }

    /// Whether the parts are integers (compared and shown exactly).
    pub fn is_integer(self) -> bool {
        matches!(
            self.part,
            Number::Bool | Number::Int { .. } | Number::Time | Number::SmallInt(_)
        )
    }

    /// One part (native byte order) as a number; NaT is NaN.
    pub fn part_value(self, bytes: &[u8]) -> f64 {
        match self.part {
            Number::Bool => f64::from(bytes[0] != 0),
            Number::Int { .. } | Number::Time => {
                let value = self.part_int(bytes);
                if matches!(self.part, Number::Time) && value == i128::from(i64::MIN) {
                    return f64::NAN;
                }
                #[allow(clippy::cast_precision_loss)] // As NumPy's float64 conversion.
                let value = value as f64;
                value
            }
            Number::Float16 => f16_to_f64(u16::from_ne_bytes([bytes[0], bytes[1]])),
            Number::BFloat16 => f64::from(f32::from_bits(
                u32::from(u16::from_ne_bytes([bytes[0], bytes[1]])) << 16,
            )),
            Number::Float32 => f64::from(f32::from_ne_bytes(
                bytes[..4].try_into().unwrap_or_default(),
            )),
            Number::Float64 => f64::from_ne_bytes(bytes[..8].try_into().unwrap_or_default()),
            Number::Small(f) => f64::from(f.to_f32(bytes[0])),
            Number::SmallInt(i) => f64::from(i.to_i8(bytes[0])),
        }
    }

    /// One integer part exactly (for bool and integer types).
    pub fn part_int(self, bytes: &[u8]) -> i128 {
        match self.part {
            Number::Bool => i128::from(bytes[0] != 0),
            Number::SmallInt(i) => i128::from(i.to_i8(bytes[0])),
            Number::Int { size, signed } => {
                let mut buf = [0u8; 8];
                let negative = signed && {
                    let top = if cfg!(target_endian = "little") {
                        bytes[size - 1]
                    } else {
                        bytes[0]
                    };
                    top & 0x80 != 0
                };
                let fill = if negative { 0xff } else { 0 };
                buf.fill(fill);
                if cfg!(target_endian = "little") {
                    buf[..size].copy_from_slice(&bytes[..size]);
                } else {
                    buf[8 - size..].copy_from_slice(&bytes[..size]);
                }
                if signed {
                    i128::from(i64::from_ne_bytes(buf))
                } else {
                    i128::from(u64::from_ne_bytes(buf))
                }
            }
            Number::Time => i128::from(i64::from_ne_bytes(
                bytes[..8].try_into().unwrap_or_default(),
            )),
            _ => 0,
        }
    }

    /// The element's value for statistics: the number, or a complex
    /// element's modulus.
    pub fn value(self, element: &[u8]) -> f64 {
        if self.complex {
            let n = self.part_size();
            let (re, im) = (
                self.part_value(&element[..n]),
                self.part_value(&element[n..]),
            );
            re.hypot(im)
        } else {
            self.part_value(element)
        }
    }
}

/// An IEEE 754 half-precision number.
fn f16_to_f64(bits: u16) -> f64 {
    let sign = if bits & 0x8000 == 0 { 1.0 } else { -1.0 };
    let exponent = i32::from((bits >> 10) & 0x1f);
    let fraction = f64::from(bits & 0x3ff);
    match exponent {
        0 => sign * fraction * 2f64.powi(-24),
        31 if fraction == 0.0 => sign * f64::INFINITY,
        31 => f64::NAN,
        _ => sign * (1.0 + fraction / 1024.0) * 2f64.powi(exponent - 15),
    }
}

/// Moments and counts of some elements, merged across pieces.
#[derive(Clone, Copy, Debug)]
struct Moments {
    /// Elements seen, NaN included.
    count: u64,
    nan: u64,
    fill: u64,
    /// Of the values that are not NaN: their number, mean, sum of squared
    /// deviations from the mean, extremes.
    n: u64,
    mean: f64,
    m2: f64,
    min: f64,
    max: f64,
    /// Exact extremes of integer types.
    imin: i128,
    imax: i128,
}

impl Moments {
    const EMPTY: Self = Self {
        count: 0,
        nan: 0,
        fill: 0,
        n: 0,
        mean: 0.0,
        m2: 0.0,
        min: f64::INFINITY,
        max: f64::NEG_INFINITY,
        imin: i128::MAX,
        imax: i128::MIN,
    };

    /// The moments of `bytes` (whole elements): two passes, the mean first.
    fn of(numeric: Numeric, fill: &[u8], bytes: &[u8]) -> Self {
        let size = numeric.size();
        let fill_value = numeric.value(fill);
        let mut m = Self::EMPTY;
        let mut sum = 0.0;
        for element in bytes.chunks_exact(size) {
            m.count += 1;
            let x = numeric.value(element);
            if x == fill_value || (x.is_nan() && fill_value.is_nan()) {
                m.fill += 1;
            }
            if x.is_nan() {
                m.nan += 1;
                continue;
            }
            m.n += 1;
            sum += x;
            m.min = m.min.min(x);
            m.max = m.max.max(x);
            if numeric.is_integer() && !numeric.complex {
                let i = numeric.part_int(element);
                m.imin = m.imin.min(i);
                m.imax = m.imax.max(i);
            }
        }
        if m.n == 0 {
            return m;
        }
        #[allow(clippy::cast_precision_loss)]
        let n = m.n as f64;
        m.mean = sum / n;
        let mut m2 = 0.0;
        let mut correction = 0.0;
        for element in bytes.chunks_exact(size) {
            let x = numeric.value(element);
            if !x.is_nan() {
                let d = x - m.mean;
                m2 += d * d;
                correction += d;
            }
        }
        // The corrected two-pass formula: the mean's rounding error cancels.
        m.m2 = m2 - correction * correction / n;
        m
    }

    /// Chan et al.'s parallel merge of two sets of moments.
    fn merge(a: Self, b: Self) -> Self {
        let n = a.n + b.n;
        let (mean, m2) = if a.n == 0 {
            (b.mean, b.m2)
        } else if b.n == 0 {
            (a.mean, a.m2)
        } else {
            #[allow(clippy::cast_precision_loss)]
            let (na, nb, nn) = (a.n as f64, b.n as f64, n as f64);
            let delta = b.mean - a.mean;
            (
                a.mean + delta * nb / nn,
                a.m2 + b.m2 + delta * delta * na * nb / nn,
            )
        };
        Self {
            count: a.count + b.count,
            nan: a.nan + b.nan,
            fill: a.fill + b.fill,
            n,
            mean,
            m2,
            min: a.min.min(b.min),
            max: a.max.max(b.max),
            imin: a.imin.min(b.imin),
            imax: a.imax.max(b.imax),
        }
    }
}

/// numpy.histogram's bins: `bins` equal bins over `lo..=hi`.
struct Histogram {
    lo: f64,
    hi: f64,
    edges: Vec<f64>,
}

impl Histogram {
    fn new(bins: usize, lo: f64, hi: f64) -> Self {
        // numpy: a range of one value becomes `lo - 0.5 .. hi + 0.5`.
        let (lo, hi) = if lo == hi {
            (lo - 0.5, hi + 0.5)
        } else {
            (lo, hi)
        };
        // np.linspace(lo, hi, bins + 1): `i * step + lo`, the last one `hi`.
        #[allow(clippy::cast_precision_loss)]
        let step = (hi - lo) / bins as f64;
        #[allow(clippy::cast_precision_loss)]
        let mut edges: Vec<f64> = (0..=bins).map(|i| i as f64 * step + lo).collect();
        edges[bins] = hi;
        Self { lo, hi, edges }
    }

    fn bins(&self) -> usize {
        self.edges.len() - 1
    }

    /// Counts `bytes`' values into bins, as numpy.histogram does for equal
    /// bins: the index from the scaled value, corrected against the edges.
    fn count(&self, numeric: Numeric, bytes: &[u8]) -> Vec<u64> {
        let bins = self.bins();
        let mut counts = vec![0u64; bins];
        #[allow(clippy::cast_precision_loss)]
        let numerator = bins as f64;
        let denominator = self.hi - self.lo;
        for element in bytes.chunks_exact(numeric.size()) {
            let x = numeric.value(element);
            if !(x >= self.lo && x <= self.hi) {
                continue;
            }
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let mut i = (((x - self.lo) / denominator * numerator) as usize).min(bins - 1);
            if x < self.edges[i] {
                i -= 1;
            } else if i + 1 < bins && x >= self.edges[i + 1] {
                i += 1;
            }
            counts[i] += 1;
        }
        counts
    }
}

/// Where the elements come from: the whole array chunk by chunk, or a
/// selection in pieces.
enum Source {
    Chunks(Vec<Region>),
    Pieces(Vec<Selection>),
}

impl Source {
    fn len(&self) -> usize {
        match self {
            Self::Chunks(regions) => regions.len(),
            Self::Pieces(pieces) => pieces.len(),
        }
    }

    /// Reads every piece of elements and folds `f` of each with `merge`,
    /// in parallel, with a progress bar named `what`.
    fn fold<T: Send + Sync + Clone>(
        &self,
        array: &Array,
        what: &str,
        empty: &T,
        f: impl Fn(&[u8]) -> T + Sync,
        merge: impl Fn(T, T) -> T + Sync,
    ) -> anyhow::Result<T> {
        let bar = super::progress::items(self.len() as u64, PROGRESS_THRESHOLD, what);
        let task = array.data_type().size() * TASK_ELEMENTS;
        let over = |bytes: &[u8]| {
            bytes
                .par_chunks(task)
                .map(&f)
                .reduce(|| empty.clone(), &merge)
        };
        let result = match self {
            Self::Chunks(regions) => super::on_io_pool(array.store().as_ref(), || {
                regions
                    .par_iter()
                    .map(|region| {
                        let bytes = array.read_region_bytes(region)?;
                        if let Some(bar) = &bar {
                            bar.inc(1);
                        }
                        Ok(f(&bytes))
                    })
                    .try_reduce(|| empty.clone(), |a, b| Ok(merge(a, b)))
            }),
            Self::Pieces(pieces) => {
                let mut acc = empty.clone();
                for piece in pieces {
                    let bytes = array.read_selection_bytes(piece)?;
                    acc = merge(acc, over(&bytes));
                    if let Some(bar) = &bar {
                        bar.inc(1);
                    }
                }
                Ok(acc)
            }
        };
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        result.map_err(|err: zarrkit::Error| anyhow::Error::from(err))
    }
}

/// The selection split along its first item, when that is a slice of a
/// basic or orthogonal selection, into pieces of about `max_elements`
/// elements; otherwise the selection whole.
pub(crate) fn split_selection(
    array: &Array,
    selection: &Selection,
    total: u64,
    max_elements: u64,
) -> Vec<Selection> {
    let whole = vec![selection.clone()];
    let (Some(SelectionItem::Slice(slice)), Some(&len)) =
        (selection.items().first(), array.shape().first())
    else {
        return whole;
    };
    if !matches!(
        selection.mode(),
        SelectionMode::Basic | SelectionMode::Orthogonal
    ) || total <= max_elements
    {
        return whole;
    }
    let Some((start, step, count)) = resolve_slice(slice, len) else {
        return whole;
    };
    if count == 0 {
        return whole;
    }
    let per_row = total / count;
    let rows = (max_elements / per_row.max(1)).max(1);
    let mut pieces = Vec::new();
    let mut first = 0;
    while first < count {
        let last = (first + rows).min(count);
        let begin = start + i64::try_from(first).unwrap_or(i64::MAX) * step;
        let end = start + i64::try_from(last).unwrap_or(i64::MAX) * step;
        // A negative stop would count from the end: past index 0 it is `None`.
        let stop = (end >= 0).then_some(end);
        let mut items = selection.items().to_vec();
        items[0] = SelectionItem::Slice(Slice::new(Some(begin), stop, Some(step)));
        pieces.push(Selection::with_mode(selection.mode(), items));
        first = last;
    }
    pieces
}

/// NumPy's `slice.indices(len)`: the first index, the step and the number
/// of elements; `None` for a zero step.
fn resolve_slice(slice: &Slice, len: u64) -> Option<(i64, i64, u64)> {
    let len = i64::try_from(len).ok()?;
    let step = slice.step.unwrap_or(1);
    if step == 0 {
        return None;
    }
    let clamp = |i: i64, lo: i64, hi: i64| {
        let i = if i < 0 { i + len } else { i };
        i.clamp(lo, hi)
    };
    let (start, stop) = if step > 0 {
        (
            slice.start.map_or(0, |i| clamp(i, 0, len)),
            slice.stop.map_or(len, |i| clamp(i, 0, len)),
        )
    } else {
        (
            slice.start.map_or(len - 1, |i| clamp(i, -1, len - 1)),
            slice.stop.map_or(-1, |i| {
                if i < 0 && i + len < 0 {
                    -1
                } else {
                    clamp(i, -1, len - 1)
                }
            }),
        )
    };
    let count = if step > 0 {
        if stop > start {
            (stop - start + step - 1) / step
        } else {
            0
        }
    } else if start > stop {
        (start - stop + (-step) - 1) / (-step)
    } else {
        0
    };
    Some((start, step, u64::try_from(count).ok()?))
}

/// A number for JSON: an integer when it is one, else a float, or null.
fn number(value: f64, integer: bool) -> Value {
    if !value.is_finite() {
        return if value.is_nan() {
            Value::Null
        } else {
            json!(value.to_string())
        };
    }
    if integer {
        #[allow(clippy::cast_possible_truncation)]
        return json!(value as i64);
    }
    json!(value)
}

/// An exact integer for JSON.
fn integer(value: i128) -> Value {
    i64::try_from(value)
        .map(Value::from)
        .or_else(|_| u64::try_from(value).map(Value::from))
        .unwrap_or(Value::Null)
}

/// Runs `zarrkit stats`.
///
/// # Errors
/// If the store or array cannot be opened, the selection is invalid,
/// reading fails, or writing to `out` fails.
pub fn run(args: &StatsArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let location = locate(&args.store, Some(&args.node))?;
    let store = open_located(&location)?;
    let Location { node, .. } = location;
    let mut array =
        Array::open(store, node.as_str()).with_context(|| format!("cannot open array `{node}`"))?;
    if let Some(budget) = args.memory_budget {
        array.set_memory_budget(budget);
    }
    let numeric = Numeric::of(array.data_type());

    let (count, source) = match &args.selection {
        Some(text) => {
            let mode = match args.mode.as_str() {
                "orthogonal" => SelectionMode::Orthogonal,
                "vectorized" => SelectionMode::Vectorized,
                _ => SelectionMode::Basic,
            };
            let selection = Selection::parse_with_mode(mode, text)
                .map_err(|err| anyhow::anyhow!("invalid selection `{text}`: {err}"))?;
            let shape = array.selection_shape(&selection)?;
            let count = product(&shape).context("the selection has too many elements")?;
            let piece = PIECE_BYTES.min(array.memory_budget() / 2).max(1);
            let max_elements = piece / array.data_type().size().max(1) as u64;
            (
                count,
                Source::Pieces(split_selection(&array, &selection, count, max_elements)),
            )
        }
        None => {
            let count = product(array.shape()).context("the array has too many elements")?;
            let regions = GridWalk::whole(&array.chunk_grid_shape())
                .map(|coords| array.chunk_region(&coords))
                .filter(|region| !region.is_empty())
                .collect();
            (count, Source::Chunks(regions))
        }
    };

    let fill = array.fill_value().as_bytes().to_vec();
    let moments = match numeric {
        Some(numeric) if count > 0 => Some(source.fold(
            &array,
            "chunks",
            &Moments::EMPTY,
            |bytes| Moments::of(numeric, &fill, bytes),
            Moments::merge,
        )?),
        // No element: nothing counted, no value.
        Some(_) => Some(Moments::EMPTY),
        None => None,
    };
    let histogram = match (numeric, &moments) {
        (Some(numeric), Some(m)) if args.bins > 0 && m.n > 0 => {
            let range = args
                .range
                .or_else(|| (m.min.is_finite() && m.max.is_finite()).then_some((m.min, m.max)));
            match range {
                Some((lo, hi)) => {
                    let histogram = Histogram::new(args.bins as usize, lo, hi);
                    let counts = source.fold(
                        &array,
                        "chunks (histogram)",
                        &vec![0u64; args.bins as usize],
                        |bytes| histogram.count(numeric, bytes),
                        |a, b| a.iter().zip(&b).map(|(x, y)| x + y).collect(),
                    )?;
                    Some((histogram, counts))
                }
                None => None,
            }
        }
        _ => None,
    };

    // The array's storage, whatever the selection.
    let stored = array.stored_size()?;
    let chunks = product(&array.chunk_grid_shape());
    let decoded_bytes = (!array.data_type().is_variable_length())
        .then(|| product(array.shape())?.checked_mul(array.data_type().size() as u64))
        .flatten();
    #[allow(clippy::cast_precision_loss)]
    let ratio = decoded_bytes
        .filter(|&d| d > 0 && stored.bytes > 0)
        .map(|d| d as f64 / stored.bytes as f64);

    let integer_type = numeric.is_some_and(|n| n.is_integer() && !n.complex);
    let has_values = moments.is_some_and(|m| m.n > 0);
    let extreme = |f: f64, i: i128| {
        if !has_values {
            Value::Null
        } else if integer_type {
            integer(i)
        } else {
            number(f, false)
        }
    };
    #[allow(clippy::cast_precision_loss)]
    let std = moments.map(|m| (m.m2.max(0.0) / m.n as f64).sqrt());
    let printed = json!({
        "path": array.path().as_str(),
        "data_type": array.data_type().to_string(),
        "shape": array.shape(),
        "selection": args.selection,
        "count": count,
        "values_of": numeric.map(|n| if n.complex { "modulus" } else { "value" }),
        "nan_count": moments.map(|m| m.nan),
        "fill_value_count": moments.map(|m| m.fill),
        "min": moments.map_or(Value::Null, |m| extreme(m.min, m.imin)),
        "max": moments.map_or(Value::Null, |m| extreme(m.max, m.imax)),
        "mean": if has_values { moments.map_or(Value::Null, |m| number(m.mean, false)) } else { Value::Null },
        "std": if has_values { std.map_or(Value::Null, |s| number(s, false)) } else { Value::Null },
        "histogram": histogram.as_ref().map(|(h, counts)| json!({
            "bins": h.bins(),
            "range": [h.lo, h.hi],
            "edges": h.edges,
            "counts": counts,
        })),
        "storage": {
            "chunks": chunks,
            "stored_chunks": stored.chunks,
            "stored_bytes": stored.bytes,
            "decoded_bytes": decoded_bytes,
            "compression_ratio": ratio,
        },
    });
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&printed)?)?;
        return Ok(());
    }
    print_text(&printed, &array, out)
}

fn print_text(p: &Value, array: &Array, out: &mut impl Write) -> anyhow::Result<()> {
    let show = |v: &Value| match v {
        Value::Null => "-".to_string(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    writeln!(
        out,
        "array `{}`: {} {}",
        array.path(),
        format_shape(array.shape()),
        array.data_type()
    )?;
    if let Some(selection) = p["selection"].as_str() {
        writeln!(out, "selection:        [{selection}]")?;
    }
    writeln!(out, "count:            {}", p["count"])?;
    if p["values_of"].is_null() {
        writeln!(
            out,
            "(no statistics of values for data type `{}`: count only)",
            array.data_type()
        )?;
    } else {
        if p["values_of"] == "modulus" {
            writeln!(out, "(complex values: statistics of the modulus |z|)")?;
        }
        writeln!(out, "nan count:        {}", show(&p["nan_count"]))?;
        writeln!(out, "fill-value count: {}", show(&p["fill_value_count"]))?;
        writeln!(out, "min:              {}", show(&p["min"]))?;
        writeln!(out, "max:              {}", show(&p["max"]))?;
        writeln!(out, "mean:             {}", show(&p["mean"]))?;
        writeln!(out, "std:              {}", show(&p["std"]))?;
    }
    if let Some(h) = p["histogram"].as_object() {
        let counts: Vec<u64> = h["counts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_u64)
            .collect();
        let edges: Vec<f64> = h["edges"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_f64)
            .collect();
        let most = counts.iter().copied().max().unwrap_or(0).max(1);
        writeln!(out, "histogram ({} bins):", counts.len())?;
        for (i, &n) in counts.iter().enumerate() {
            let close = if i + 1 == counts.len() { "]" } else { ")" };
            #[allow(clippy::cast_possible_truncation)]
            let bar = "#".repeat((n * 40 / most) as usize);
            writeln!(
                out,
                "  [{:>12.6}, {:>12.6}{close} {n:>10} {bar}",
                edges[i],
                edges[i + 1]
            )?;
        }
    }
    let s = &p["storage"];
    writeln!(
        out,
        "stored chunks:    {} of {}",
        s["stored_chunks"],
        show(&s["chunks"])
    )?;
    writeln!(
        out,
        "stored bytes:     {}",
        format_bytes(s["stored_bytes"].as_u64().unwrap_or(0))
    )?;
    if let Some(decoded) = s["decoded_bytes"].as_u64() {
        writeln!(out, "decoded bytes:    {}", format_bytes(decoded))?;
    }
    if let Some(ratio) = s["compression_ratio"].as_f64() {
        writeln!(out, "ratio:            {ratio:.2}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_resolve_as_numpy_does() {
        let s = |a, b, c| Slice::new(a, b, c);
        assert_eq!(resolve_slice(&s(None, None, None), 10), Some((0, 1, 10)));
        assert_eq!(resolve_slice(&s(Some(-3), None, None), 10), Some((7, 1, 3)));
        assert_eq!(
            resolve_slice(&s(None, None, Some(-1)), 10),
            Some((9, -1, 10))
        );
        assert_eq!(
            resolve_slice(&s(Some(8), Some(2), Some(-3)), 10),
            Some((8, -3, 2))
        );
        assert_eq!(
            resolve_slice(&s(Some(2), Some(100), Some(4)), 10),
            Some((2, 4, 2))
        );
        assert_eq!(resolve_slice(&s(None, None, Some(0)), 10), None);
    }

    #[test]
    fn a_selection_split_along_its_first_slice_reads_the_same_elements() {
        use std::sync::Arc;
        use zarrkit::store::MemoryStore;
        let array = Array::builder(&[10, 3], DataType::Int32, &[4, 2])
            .create(Arc::new(MemoryStore::new()), "/a")
            .unwrap();
        let values: Vec<i32> = (0..30).collect();
        array
            .write_region(&Region::whole(array.shape()), &values)
            .unwrap();
        for text in ["8:1:-2, :", "::3, 1:", ":, 0", "-1::-1", "2:, [0, 2]"] {
            let selection = Selection::parse(text).unwrap();
            let whole: Vec<i32> = array.read_selection(&selection).unwrap();
            let total = whole.len() as u64;
            let pieces = split_selection(&array, &selection, total, 2);
            assert!(pieces.len() > 1, "{text}: not split");
            let mut joined = Vec::new();
            for piece in &pieces {
                joined.extend(array.read_selection::<i32>(piece).unwrap());
            }
            assert_eq!(joined, whole, "{text}");
        }
        // Not a leading slice: read whole.
        let selection = Selection::parse("[1, 2], :").unwrap();
        assert_eq!(split_selection(&array, &selection, 6, 2).len(), 1);
    }

    #[test]
    fn moments_merge_like_one_pass() {
        let numeric = Numeric::of(&DataType::Float64).unwrap();
        let values: Vec<f64> = (0..100).map(|i| f64::from(i) * 0.37 + 1e6).collect();
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let whole = Moments::of(numeric, &0f64.to_ne_bytes(), &bytes);
        let (a, b) = bytes.split_at(8 * 37);
        let merged = Moments::merge(
            Moments::of(numeric, &0f64.to_ne_bytes(), a),
            Moments::of(numeric, &0f64.to_ne_bytes(), b),
        );
        assert!((whole.mean - merged.mean).abs() < 1e-9);
        assert!((whole.m2 - merged.m2).abs() / whole.m2 < 1e-12);
        assert_eq!(merged.n, 100);
    }

    #[test]
    fn half_precision_decodes() {
        assert_eq!(f16_to_f64(0x3c00), 1.0);
        assert_eq!(f16_to_f64(0xc000), -2.0);
        assert_eq!(f16_to_f64(0x0001), 2f64.powi(-24));
        assert!(f16_to_f64(0x7e00).is_nan());
    }
}
