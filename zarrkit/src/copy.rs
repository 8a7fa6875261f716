//! Copying arrays into a new layout: another chunk shape, shard shape,
//! codec chain, data type, fill value or chunk key encoding.
//!
//! [`Layout`] says what changes; [`migrate::plan_with`](crate::migrate::plan_with)
//! with [`PlanOptions::layout`](crate::migrate::PlanOptions::layout) applies
//! it to every array of a hierarchy (an array whose chunks, codecs, data
//! type and fill value stay as they are is still copied byte for byte), and
//! [`migrate::migrate`](crate::migrate::migrate) runs the copy, with the
//! same unfinished-copy marker and resumption. This module holds the parts
//! that are about one array: [`Layout::apply`], the slab plan and the
//! engine that streams an array into its new layout.
//!
//! # Streaming, and how often a source chunk is decoded
//!
//! The destination is written in *write units*: its shards, or its chunks
//! when it is not sharded. Write units are grouped into *slabs*, boxes
//! aligned to the write-unit grid, each read from the source at once
//! (decoding every source chunk it touches, in parallel), converted if the
//! data type changes, and written (its write units encoded in parallel,
//! each covered whole, so nothing is read back; a resumed copy first
//! compares each unit already stored with the slab and skips those that
//! match). One slab buffer serves every slab. [`plan_slabs`] picks the slab
//! shape under a memory budget: along each dimension it extends the slab,
//! while the budget allows, first to cover a whole source chunk, then to
//! the least common multiple of the source chunk and the write unit, where
//! slab and source chunk boundaries meet; then it grows the slab in whole
//! multiples, outermost dimension first, until it holds two write units
//! per thread (enough to keep every thread busy). [`SlabPlan::decodes_per_chunk`]
//! is the bound that results: 1 when every dimension is aligned, at most 2
//! per dimension that is not but where the slab spans a source chunk, and
//! `⌈source / slab⌉ + 1` per dimension where even one source chunk does
//! not fit. Memory in use is about one slab in the source's data type and
//! one in the target's, plus one write unit and its encoding per thread.
//!
//! Variable-length arrays (strings, bytes) are streamed write unit by
//! write unit: each source chunk is decoded once per write unit it meets.

use crate::array::{Array, Region};
use crate::error::Error;
use crate::metadata::json::{extension_from_json, extension_to_json, fill_value_from_json};
use crate::metadata::{
    ArrayMetadata, ChunkGrid, ChunkKeyEncoding, DataType, ExtensionObject, FillValue, JsonMap,
};
use crate::node::NodePath;
use rayon::prelude::*;

/// The name of the sharding codec (v3 "sharding_indexed").
const SHARDING: &str = "sharding_indexed";

/// What to do with a value that does not fit the new data type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Cast {
    /// Refuse it: the copy fails naming the array, the element and the
    /// source chunk. Floats into integers must also be whole numbers;
    /// floats into a narrower float must be within its finite range.
    #[default]
    Strict,
    /// Clamp to the target's range (floats into integers are truncated
    /// toward zero first; NaN becomes 0; into `bool`, non-zero is `true`).
    Clamp,
    /// Wrap around as C and NumPy's `astype` do: integers keep their low
    /// bits, floats into integers are truncated (NaN and infinities become
    /// 0), finite floats out of a narrower float's range become infinities.
    Wrap,
}

impl Cast {
    /// `strict`, `clamp` or `wrap`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Strict => "strict",
            Self::Clamp => "clamp",
            Self::Wrap => "wrap",
        }
    }
}

/// A change of layout applied to every array a copy plans: what
/// [`PlanOptions::layout`](crate::migrate::PlanOptions::layout) takes.
/// [`Layout`] is one; a command line may bring its own, resolving its
/// options against each array.
pub trait Relayout: std::fmt::Debug + Send + Sync {
    /// `planned` (an array's metadata as the target format holds it) in
    /// its new layout.
    ///
    /// # Errors
    /// A message saying what cannot be changed, for the plan's refusal.
    fn relayout(&self, planned: &ArrayMetadata) -> Result<ArrayMetadata, String>;

    /// A stable description of the change, kept in the marker of an
    /// unfinished copy so that only the same copy resumes it.
    fn describe(&self) -> String;

    /// How values that do not fit a new data type are treated.
    fn cast(&self) -> Cast;
}

impl Relayout for Layout {
    fn relayout(&self, planned: &ArrayMetadata) -> Result<ArrayMetadata, String> {
        self.apply(planned)
    }

    fn describe(&self) -> String {
        format!("{self:?}")
    }

    fn cast(&self) -> Cast {
        self.cast
    }
}

/// The shard shape a [`Layout`] asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shards {
    /// Shards of this shape, holding chunks of the layout's chunk shape.
    Shape(Vec<u64>),
    /// No sharding: the chunks are stored one per key.
    None,
}

/// The changes a copy makes to every array; a field left `None` keeps what
/// the array has (as adapted to the target format).
///
/// Chunks and shards: for a sharded array "chunk shape" means the inner
/// chunks and [`Layout::shards`] the shards; `shards: None` keeps the
/// source's sharding (or its absence), `Some(Shards::None)` removes it.
/// [`Layout::codecs`] is the chain each chunk is encoded with (inside the
/// shards, when sharded).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Layout {
    /// The (inner) chunk shape.
    pub chunk_shape: Option<Vec<u64>>,
    /// The shard shape, or no sharding.
    pub shards: Option<Shards>,
    /// The (inner) codec chain.
    pub codecs: Option<Vec<ExtensionObject>>,
    /// The data type; values are converted as [`Layout::cast`] says.
    pub data_type: Option<DataType>,
    /// The fill value as v3 JSON, read in the target's data type. Without
    /// it, the source's fill value is converted (strictly: a fill value
    /// that does not fit the new data type is an error).
    pub fill_value: Option<serde_json::Value>,
    /// The chunk key encoding.
    pub chunk_key_encoding: Option<ChunkKeyEncoding>,
    /// How values that do not fit a new data type are treated.
    pub cast: Cast,
}

impl Layout {
    /// Whether the layout changes nothing.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.chunk_shape.is_none()
            && self.shards.is_none()
            && self.codecs.is_none()
            && self.data_type.is_none()
            && self.fill_value.is_none()
            && self.chunk_key_encoding.is_none()
    }

    /// `planned` (an array's metadata as the target format holds it) with
    /// the layout's changes. The error says what does not fit.
    ///
    /// # Errors
    /// A message naming the change that cannot be made: a chunk shape of
    /// the wrong length, a fill value the new data type cannot hold.
    pub fn apply(&self, planned: &ArrayMetadata) -> Result<ArrayMetadata, String> {
        let ndim = planned.shape.len();
        let mut target = planned.clone();
        // The planned layout, split into chunks, shards and inner codecs.
        let sharding = match planned.codecs.as_slice() {
            [only] if only.name == SHARDING => Some(only.configuration_or_empty()),
            _ => None,
        };
        let (mut chunks, mut shards, mut inner) = match &sharding {
            Some(config) => (
                config
                    .get("chunk_shape")
                    .and_then(|v| serde_json::from_value::<Vec<u64>>(v.clone()).ok()),
                planned
                    .chunk_grid
                    .chunk_shape()
                    .map(|s| s.iter().map(|n| n.get()).collect::<Vec<u64>>()),
                config
                    .get("codecs")
                    .and_then(|v| v.as_array().cloned())
                    .and_then(|items| {
                        items
                            .iter()
                            .map(|item| extension_from_json(item, "codecs").ok())
                            .collect::<Option<Vec<_>>>()
                    })
                    .unwrap_or_default(),
            ),
            None => (
                planned
                    .chunk_grid
                    .chunk_shape()
                    .map(|s| s.iter().map(|n| n.get()).collect()),
                None,
                planned.codecs.clone(),
            ),
        };
        let check_len = |what: &str, shape: &[u64]| {
            if shape.len() == ndim {
                Ok(())
            } else {
                Err(format!(
                    "the {what} {shape:?} has {} dimensions, the array {ndim}",
                    shape.len()
                ))
            }
        };
        if let Some(shape) = &self.chunk_shape {
            check_len("chunk shape", shape)?;
            chunks = Some(shape.clone());
        }
        match &self.shards {
            Some(Shards::Shape(shape)) => {
                check_len("shard shape", shape)?;
                shards = Some(shape.clone());
            }
            Some(Shards::None) => shards = None,
            None => {}
        }
        if let Some(codecs) = &self.codecs {
            inner = codecs.clone();
        }
        if let Some(data_type) = &self.data_type
            && *data_type != planned.data_type
        {
            target.data_type = data_type.clone();
            fix_bytes_endian(&mut inner, data_type);
        }
        target.fill_value = match &self.fill_value {
            Some(json) => fill_value_from_json(json, &target.data_type)
                .map_err(|e| format!("the fill value: {e}"))?,
            None if target.data_type == planned.data_type => planned.fill_value.clone(),
            None => {
                let converted = convert(
                    planned.fill_value.as_bytes(),
                    &planned.data_type,
                    &target.data_type,
                    self.cast,
                )
                .map_err(|e| match e {
                    ConvertError::Unsupported => unsupported(&planned.data_type, &target.data_type),
                    ConvertError::OutOfRange { value, .. } => format!(
                        "its fill value {value} does not fit `{}` (give a fill value)",
                        target.data_type
                    ),
                })?;
                FillValue::new(converted)
            }
        };
        if let Some(encoding) = &self.chunk_key_encoding {
            target.chunk_key_encoding = encoding.clone();
        }
        let Some(chunks) = chunks else {
            return Err(format!(
                "its chunk grid `{}` is not regular: give the chunk shape",
                planned.chunk_grid.name()
            ));
        };
        match shards {
            Some(shards) => {
                let mut config = sharding.clone().unwrap_or_else(|| {
                    let mut config = JsonMap::new();
                    let mut bytes = JsonMap::new();
                    bytes.insert("endian".into(), "little".into());
                    config.insert(
                        "index_codecs".into(),
                        serde_json::json!([
                            {"name": "bytes", "configuration": {"endian": "little"}},
                            {"name": "crc32c"}
                        ]),
                    );
                    config.insert("index_location".into(), "end".into());
                    config
                });
                config.insert("chunk_shape".into(), serde_json::json!(chunks));
                config.insert(
                    "codecs".into(),
                    serde_json::Value::Array(inner.iter().map(extension_to_json).collect()),
                );
                target.chunk_grid = ChunkGrid::regular(&shards).map_err(|e| e.to_string())?;
                target.codecs = vec![ExtensionObject::with_configuration(SHARDING, config)];
            }
            None => {
                if self.chunk_shape.is_some() || sharding.is_some() {
                    target.chunk_grid = ChunkGrid::regular(&chunks).map_err(|e| e.to_string())?;
                }
                target.codecs = inner;
            }
        }
        Ok(target)
    }
}

/// `bytes` with an `endian` for types wider than a byte, without one for
/// one-byte types, as v3 core "bytes" asks.
fn fix_bytes_endian(codecs: &mut [ExtensionObject], data_type: &DataType) {
    for codec in codecs.iter_mut().filter(|c| c.name == "bytes") {
        let mut config = codec.configuration_or_empty();
        if data_type.endian_unit() > 1 {
            config.entry("endian").or_insert_with(|| "little".into());
        } else {
            config.remove("endian");
        }
        codec.configuration = Some(config);
    }
}

fn unsupported(from: &DataType, to: &DataType) -> String {
    format!(
        "its data type `{from}` cannot be converted to `{to}` (only booleans, integers and real floats convert)"
    )
}

/// What changed between `before` and `after`, for the plan's reason:
/// `chunk shape [64, 64] → [32, 32]`, `data type int32 → uint8`.
#[must_use]
pub fn changes(before: &ArrayMetadata, after: &ArrayMetadata) -> Vec<String> {
    let mut changes = Vec::new();
    let grid = |m: &ArrayMetadata| {
        m.chunk_grid.chunk_shape().map_or_else(
            || m.chunk_grid.name().to_string(),
            |s| format!("{:?}", s.iter().map(|n| n.get()).collect::<Vec<_>>()),
        )
    };
    if before.chunk_grid != after.chunk_grid {
        changes.push(format!("chunk grid {} → {}", grid(before), grid(after)));
    }
    if before.codecs != after.codecs {
        let names = |m: &ArrayMetadata| {
            m.codecs
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if names(before) == names(after) {
            // The same codecs, configured otherwise: show the configurations.
            let json = |m: &ArrayMetadata| {
                serde_json::Value::Array(m.codecs.iter().map(extension_to_json).collect())
            };
            changes.push(format!("codecs {} → {}", json(before), json(after)));
        } else {
            changes.push(format!("codecs [{}] → [{}]", names(before), names(after)));
        }
    }
    if before.data_type != after.data_type {
        changes.push(format!(
            "data type {} → {}",
            before.data_type, after.data_type
        ));
    }
    if before.fill_value != after.fill_value {
        changes.push("fill value".into());
    }
    changes
}

/// How a copy reads the source and writes the target: the slab shape and
/// the bound on decoding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlabPlan {
    /// The shape of a slab, a whole number of write units in each
    /// dimension (the last slab along a dimension is cut by the array's
    /// edge).
    pub slab_shape: Vec<u64>,
    /// The write unit: a shard, or a chunk when not sharded.
    pub write_unit: Vec<u64>,
    /// At most how many times one source chunk is decoded.
    pub decodes_per_chunk: u64,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Plans the slabs for copying an array of `shape` from chunks of
/// `source_chunk` (`None` for a grid that is not regular) into write units
/// of `write_unit`, with `element_bytes` of memory per element of a slab,
/// under `budget` bytes (see the module documentation), growing a slab
/// that is aligned to `units` write units at most (the copy uses twice its
/// threads). A slab is never smaller than one write unit, whatever the
/// budget.
#[must_use]
pub fn plan_slabs(
    shape: &[u64],
    source_chunk: Option<&[u64]>,
    write_unit: &[u64],
    element_bytes: u64,
    budget: u64,
    units: u64,
) -> SlabPlan {
    let ndim = shape.len();
    let w: Vec<u64> = write_unit.iter().map(|&n| n.max(1)).collect();
    // The whole dimension, in write units.
    let cap: Vec<u64> = (0..ndim)
        .map(|d| shape[d].div_ceil(w[d]).max(1) * w[d])
        .collect();
    let s: Vec<u64> = match source_chunk {
        Some(s) => s.iter().map(|&n| n.max(1)).collect(),
        None => w.clone(),
    };
    let bytes = |slab: &[u64]| {
        slab.iter()
            .try_fold(element_bytes.max(1), |acc, &n| acc.checked_mul(n))
            .unwrap_or(u64::MAX)
    };
    let mut slab = w.clone();
    // Per dimension, from the innermost: cover a source chunk, then reach
    // the least common multiple.
    for step in 0..2 {
        for d in (0..ndim).rev() {
            let wanted = if step == 0 {
                s[d].div_ceil(w[d]) * w[d]
            } else {
                (s[d] / gcd(s[d], w[d])).saturating_mul(w[d])
            };
            let wanted = wanted.min(cap[d]).max(slab[d]);
            let mut probe = slab.clone();
            probe[d] = wanted;
            if bytes(&probe) <= budget {
                slab = probe;
            }
        }
    }
    // Then whole multiples, outermost first, until the slab holds `units`
    // write units (enough to keep the threads busy; more would only cost
    // memory).
    for d in 0..ndim {
        let held: u64 = (0..ndim).map(|d| slab[d] / w[d]).product();
        if held >= units {
            break;
        }
        let room = budget / bytes(&slab).max(1);
        let times = room
            .min(cap[d].div_ceil(slab[d]))
            .min(units.div_ceil(held.max(1)))
            .max(1);
        slab[d] = (slab[d] * times).min(cap[d]);
    }
    let decodes_per_chunk = (0..ndim)
        .map(|d| {
            let aligned = slab[d] >= shape[d] || slab[d].is_multiple_of(s[d]);
            if aligned {
                1
            } else if slab[d] >= s[d] {
                2
            } else {
                s[d].div_ceil(slab[d]) + 1
            }
        })
        .try_fold(1u64, u64::checked_mul)
        .unwrap_or(u64::MAX);
    SlabPlan {
        slab_shape: slab,
        write_unit: w,
        decodes_per_chunk,
    }
}

/// The regions of `step`-shaped boxes tiling `shape` from the origin, cut
/// at its edges, in C order.
fn tiles(shape: &[u64], step: &[u64]) -> Vec<Region> {
    if shape.contains(&0) {
        return Vec::new();
    }
    let counts: Vec<u64> = shape
        .iter()
        .zip(step)
        .map(|(n, s)| n.div_ceil(*s))
        .collect();
    let mut out = Vec::new();
    let mut walk = crate::grid::GridWalk::whole(&counts);
    while let Some(coords) = walk.next_coords() {
        let start: Vec<u64> = coords.iter().zip(step).map(|(c, s)| c * s).collect();
        let extent = start
            .iter()
            .zip(step)
            .zip(shape)
            .map(|((b, s), n)| (*s).min(n - b))
            .collect();
        out.push(Region::new(start, extent));
    }
    out
}

/// The number of write units of `target` (its chunks: shards when sharded).
#[must_use]
pub fn write_units(target: &ArrayMetadata) -> u64 {
    match target.chunk_grid.chunk_shape() {
        Some(chunk) => target
            .shape
            .iter()
            .zip(chunk)
            .try_fold(1u64, |acc, (n, c)| acc.checked_mul(n.div_ceil(c.get())))
            .unwrap_or(u64::MAX),
        None => 0,
    }
}

/// Errors converting values between data types.
#[derive(Clone, Debug, PartialEq)]
pub enum ConvertError {
    /// The pair of data types does not convert.
    Unsupported,
    /// Element `index` holds `value`, which does not fit.
    OutOfRange {
        /// The element's index in the buffer.
        index: usize,
        /// The value, as text.
        value: String,
    },
}

/// One element as a number.
#[derive(Clone, Copy, Debug)]
enum Num {
    Int(i128),
    Float(f64),
}

fn numeric(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Bool
            | DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
            | DataType::Float16
            | DataType::BFloat16
            | DataType::Float32
            | DataType::Float64
    )
}

fn load(data_type: &DataType, b: &[u8]) -> Num {
    macro_rules! int {
        ($t:ty) => {
            Num::Int(i128::from(<$t>::from_ne_bytes(
                b.try_into().unwrap_or_default(),
            )))
        };
    }
    match data_type {
        DataType::Bool => Num::Int(i128::from(b[0] != 0)),
        DataType::Int8 => int!(i8),
        DataType::Int16 => int!(i16),
        DataType::Int32 => int!(i32),
        DataType::Int64 => int!(i64),
        DataType::UInt8 => int!(u8),
        DataType::UInt16 => int!(u16),
        DataType::UInt32 => int!(u32),
        DataType::UInt64 => int!(u64),
        DataType::Float16 => Num::Float(f64::from(half::f16::from_ne_bytes([b[0], b[1]]))),
        DataType::BFloat16 => Num::Float(f64::from(half::bf16::from_ne_bytes([b[0], b[1]]))),
        DataType::Float32 => Num::Float(f64::from(f32::from_ne_bytes(
            b.try_into().unwrap_or_default(),
        ))),
        _ => Num::Float(f64::from_ne_bytes(b.try_into().unwrap_or_default())),
    }
}

/// The integer range of an integer type (bool is 0..=1).
fn int_range(data_type: &DataType) -> Option<(i128, i128)> {
    Some(match data_type {
        DataType::Bool => (0, 1),
        DataType::Int8 => (i8::MIN.into(), i8::MAX.into()),
        DataType::Int16 => (i16::MIN.into(), i16::MAX.into()),
        DataType::Int32 => (i32::MIN.into(), i32::MAX.into()),
        DataType::Int64 => (i64::MIN.into(), i64::MAX.into()),
        DataType::UInt8 => (0, u8::MAX.into()),
        DataType::UInt16 => (0, u16::MAX.into()),
        DataType::UInt32 => (0, u32::MAX.into()),
        DataType::UInt64 => (0, u64::MAX.into()),
        _ => return None,
    })
}

/// The largest finite value of a float type.
fn float_max(data_type: &DataType) -> f64 {
    match data_type {
        DataType::Float16 => f64::from(half::f16::MAX),
        DataType::BFloat16 => f64::from(half::bf16::MAX),
        DataType::Float32 => f64::from(f32::MAX),
        _ => f64::MAX,
    }
}

#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // Wrapping on purpose.
fn store_int(data_type: &DataType, v: i128, out: &mut [u8]) {
    match data_type {
        DataType::Bool => out[0] = u8::from(v != 0),
        DataType::Int8 => out.copy_from_slice(&(v as i8).to_ne_bytes()),
        DataType::Int16 => out.copy_from_slice(&(v as i16).to_ne_bytes()),
        DataType::Int32 => out.copy_from_slice(&(v as i32).to_ne_bytes()),
        DataType::Int64 => out.copy_from_slice(&(v as i64).to_ne_bytes()),
        DataType::UInt8 => out.copy_from_slice(&(v as u8).to_ne_bytes()),
        DataType::UInt16 => out.copy_from_slice(&(v as u16).to_ne_bytes()),
        DataType::UInt32 => out.copy_from_slice(&(v as u32).to_ne_bytes()),
        _ => out.copy_from_slice(&(v as u64).to_ne_bytes()),
    }
}

#[allow(clippy::cast_possible_truncation)] // Rounding to the narrower float on purpose.
fn store_float(data_type: &DataType, v: f64, out: &mut [u8]) {
    match data_type {
        DataType::Float16 => out.copy_from_slice(&half::f16::from_f64(v).to_ne_bytes()),
        DataType::BFloat16 => out.copy_from_slice(&half::bf16::from_f64(v).to_ne_bytes()),
        DataType::Float32 => out.copy_from_slice(&(v as f32).to_ne_bytes()),
        _ => out.copy_from_slice(&v.to_ne_bytes()),
    }
}

fn shown(value: Num) -> String {
    match value {
        Num::Int(v) => v.to_string(),
        Num::Float(v) => v.to_string(),
    }
}

/// Converts one element; `Err(())` when it does not fit under `cast`.
#[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
fn convert_one(value: Num, to: &DataType, cast: Cast, out: &mut [u8]) -> Result<(), ()> {
    if let Some((min, max)) = int_range(to) {
        let v = match (value, cast) {
            (Num::Int(v), Cast::Strict) if (min..=max).contains(&v) => v,
            (Num::Int(_), Cast::Strict) => return Err(()),
            (Num::Int(v), Cast::Clamp) if *to == DataType::Bool => i128::from(v != 0),
            (Num::Int(v), Cast::Clamp) => v.clamp(min, max),
            (Num::Int(v), Cast::Wrap) => v,
            (Num::Float(f), Cast::Strict) => {
                if !f.is_finite() || f.fract() != 0.0 || f < min as f64 || f > max as f64 {
                    return Err(());
                }
                f as i128
            }
            (Num::Float(f), Cast::Clamp) if *to == DataType::Bool => i128::from(f != 0.0),
            // `as` saturates and maps NaN to 0.
            (Num::Float(f), Cast::Clamp) => (f.trunc() as i128).clamp(min, max),
            (Num::Float(f), Cast::Wrap) if *to == DataType::Bool => i128::from(f != 0.0),
            (Num::Float(f), Cast::Wrap) => {
                if f.is_finite() {
                    f.trunc() as i128
                } else {
                    0
                }
            }
        };
        store_int(to, v, out);
        return Ok(());
    }
    let max = float_max(to);
    let f = match value {
        Num::Int(v) => v as f64,
        Num::Float(f) => f,
    };
    let f = if f.is_finite() && f.abs() > max {
        match cast {
            Cast::Strict => return Err(()),
            Cast::Clamp => max.copysign(f),
            Cast::Wrap => f,
        }
    } else {
        f
    };
    store_float(to, f, out);
    Ok(())
}

/// Converts `data` (elements of `from`, native byte order) to `to` under
/// `cast`.
///
/// # Errors
/// [`ConvertError::Unsupported`] unless both types are booleans,
/// integers or real floats; [`ConvertError::OutOfRange`] naming the first
/// element that does not fit.
pub fn convert(
    data: &[u8],
    from: &DataType,
    to: &DataType,
    cast: Cast,
) -> Result<Vec<u8>, ConvertError> {
    if from == to {
        return Ok(data.to_vec());
    }
    if !numeric(from) || !numeric(to) {
        return Err(ConvertError::Unsupported);
    }
    let (a, b) = (from.size(), to.size());
    let n = data.len() / a;
    let mut out = vec![0u8; n * b];
    const BLOCK: usize = 1 << 16;
    let result = out
        .par_chunks_mut(BLOCK * b)
        .zip(data.par_chunks(BLOCK * a))
        .enumerate()
        .try_for_each(|(block, (out, data))| {
            for (i, (o, e)) in out
                .chunks_exact_mut(b)
                .zip(data.chunks_exact(a))
                .enumerate()
            {
                let value = load(from, e);
                if convert_one(value, to, cast, o).is_err() {
                    return Err(ConvertError::OutOfRange {
                        index: block * BLOCK + i,
                        value: shown(value),
                    });
                }
            }
            Ok(())
        });
    // `try_for_each` may stop at any failing block: report the first.
    match result {
        Ok(()) => Ok(out),
        Err(_) => {
            for (i, e) in data.chunks_exact(a).enumerate() {
                let value = load(from, e);
                if convert_one(value, to, cast, &mut vec![0; b]).is_err() {
                    return Err(ConvertError::OutOfRange {
                        index: i,
                        value: shown(value),
                    });
                }
            }
            Err(ConvertError::Unsupported)
        }
    }
}

/// Errors of copying one array into its new layout.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CopyError {
    /// Reading or writing failed.
    #[error(transparent)]
    Zarr(#[from] Error),

    /// A value of the source does not fit the target's data type.
    #[error(
        "array `{path}`: the value {value} at {coords:?} (source chunk {chunk_coords:?}) does not fit `{data_type}`"
    )]
    OutOfRange {
        /// The array.
        path: NodePath,
        /// The element's coordinates.
        coords: Vec<u64>,
        /// The source chunk holding it.
        chunk_coords: Vec<u64>,
        /// The value.
        value: String,
        /// The target data type.
        data_type: DataType,
    },

    /// The data types do not convert.
    #[error("array `{path}`: {what}")]
    Unsupported {
        /// The array.
        path: NodePath,
        /// What.
        what: String,
    },

    /// The target reads back differently.
    #[error(
        "verification failed: array `{path}` reads back differently from the source in chunk {chunk_coords:?} (elements {region})"
    )]
    Mismatch {
        /// The array.
        path: NodePath,
        /// The target's chunk (write unit) that differs.
        chunk_coords: Vec<u64>,
        /// Its region.
        region: String,
    },
}

/// What copying one array did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CopyStats {
    /// Write units written (those equal to the fill value everywhere are
    /// written as nothing, as the array's `write_empty_chunks` says).
    pub written: u64,
    /// Write units a resumed copy found already written and equal to what
    /// the source gives, so left alone.
    pub skipped: u64,
}

/// Copies every element of `source` into `target` (same shape, any chunk
/// grid, codecs, data type and fill value), slab by slab as [`plan_slabs`]
/// plans under `budget` bytes. With `resume`, write units already stored
/// and equal to what the source gives are left alone. `progress` gets the
/// write units done after each slab.
///
/// # Errors
/// [`CopyError::OutOfRange`] naming the first element that does not fit,
/// or a read, decode, encode or write error naming the key. What was
/// written before stays, whole chunk by whole chunk.
pub fn copy_array(
    source: &Array,
    target: &Array,
    cast: Cast,
    budget: u64,
    resume: bool,
    progress: &mut dyn FnMut(u64),
) -> Result<CopyStats, CopyError> {
    let mut stats = CopyStats::default();
    for_each_slab(source, target, cast, budget, &mut |slab, units, data| {
        if let (Some(data), false) = (data, resume) {
            // The whole slab in one write: the engine encodes its write
            // units in parallel, each straight from the slab.
            target.write_region_bytes(slab, data)?;
            stats.written += units.len() as u64;
            progress(units.len() as u64);
            return Ok(());
        }
        let outcome: Vec<Result<bool, Error>> = units
            .par_iter()
            .map(|(coords, unit)| {
                let Some(data) = data else {
                    // Variable-length: unit by unit.
                    let values = source.read_vlen(unit)?;
                    if resume
                        && target.store().size(&target.chunk_key(coords)?)?.is_some()
                        && matches!(target.read_vlen(unit), Ok(v) if v == values)
                    {
                        return Ok(false);
                    }
                    target.write_vlen(unit, &values)?;
                    return Ok(true);
                };
                let part = extract(data, slab, unit, target.data_type().size());
                if resume {
                    let stored = target.store().size(&target.chunk_key(coords)?)?.is_some();
                    let same = if stored {
                        matches!(target.read_region_bytes(unit), Ok(d) if d == part)
                    } else {
                        target.fill_value().equals_all(&part)
                    };
                    if same {
                        return Ok(false);
                    }
                }
                target.write_region_bytes(unit, &part)?;
                Ok(true)
            })
            .collect();
        for result in outcome {
            if result? {
                stats.written += 1;
            } else {
                stats.skipped += 1;
            }
        }
        progress(units.len() as u64);
        Ok(())
    })?;
    Ok(stats)
}

/// Reads `source` and `target` back slab by slab and compares them (the
/// source converted to the target's data type); `progress` gets the write
/// units compared after each slab.
///
/// # Errors
/// [`CopyError::Mismatch`] naming the first write unit that differs, or a
/// read or decode error.
pub fn verify_array(
    source: &Array,
    target: &Array,
    cast: Cast,
    budget: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<(), CopyError> {
    let mismatch = |coords: &[u64]| CopyError::Mismatch {
        path: target.path().clone(),
        chunk_coords: coords.to_vec(),
        region: region_text(&target.chunk_region(coords)),
    };
    for_each_slab(source, target, cast, budget, &mut |slab, units, data| {
        match data {
            Some(data) => {
                if target.read_region_bytes(slab)? != data {
                    let size = target.data_type().size();
                    for (coords, unit) in units {
                        let part = extract(data, slab, unit, size);
                        if target.read_region_bytes(unit)? != part {
                            return Err(mismatch(coords));
                        }
                    }
                }
            }
            None => {
                for (coords, unit) in units {
                    if source.read_vlen(unit)? != target.read_vlen(unit)? {
                        return Err(mismatch(coords));
                    }
                }
            }
        }
        progress(units.len() as u64);
        Ok(())
    })
}

pub(crate) fn region_text(region: &Region) -> String {
    let parts: Vec<String> = region
        .start()
        .iter()
        .zip(region.shape())
        .map(|(s, n)| format!("{s}..{}", s + n))
        .collect();
    format!("[{}]", parts.join(", "))
}

/// The work of one slab: its region, its write units (coordinates in the
/// target's grid and region), and for a fixed-size type its elements in
/// the target's data type (`None` for variable-length types, which are
/// read unit by unit).
type SlabWork<'a> =
    dyn FnMut(&Region, &[(Vec<u64>, Region)], Option<&[u8]>) -> Result<(), CopyError> + 'a;

/// Walks the slabs of copying `source` into `target`.
fn for_each_slab(
    source: &Array,
    target: &Array,
    cast: Cast,
    budget: u64,
    work: &mut SlabWork<'_>,
) -> Result<(), CopyError> {
    let path = target.path().clone();
    let vlen = source.data_type().is_variable_length() || target.data_type().is_variable_length();
    if vlen && source.data_type() != target.data_type() {
        return Err(CopyError::Unsupported {
            path,
            what: unsupported(source.data_type(), target.data_type()),
        });
    }
    let same_type = source.data_type() == target.data_type();
    // Each slab, and for a grid that is not regular the one chunk it is.
    let slabs: Vec<(Region, Option<Vec<u64>>)> = match target.regular_chunk_shape() {
        Some(unit) => {
            // One buffer when the data type stays, one per type otherwise.
            let element_bytes = if vlen {
                0
            } else if same_type {
                source.data_type().size() as u64
            } else {
                (source.data_type().size() + target.data_type().size()) as u64
            };
            let plan = plan_slabs(
                target.shape(),
                source.regular_chunk_shape(),
                unit,
                element_bytes,
                if vlen { 0 } else { budget },
                (2 * rayon::current_num_threads() as u64).max(4),
            );
            tiles(target.shape(), &plan.slab_shape)
                .into_iter()
                .map(|slab| (slab, None))
                .collect()
        }
        // A grid that is not regular: one chunk per slab.
        None => {
            let grid = target.chunk_grid_shape();
            let mut walk = crate::grid::GridWalk::whole(&grid);
            let mut out = Vec::new();
            while let Some(coords) = walk.next_coords() {
                out.push((target.chunk_region(coords), Some(coords.to_vec())));
            }
            out
        }
    };
    let mut buffer = Vec::new();
    for (slab, coords) in &slabs {
        let units = match coords {
            Some(coords) => vec![(coords.clone(), slab.clone())],
            None => units_in(target, slab),
        };
        if vlen {
            work(slab, &units, None)?;
            continue;
        }
        // One buffer for every slab: its pages are touched once.
        let n = slab
            .num_elements()
            .and_then(|n| usize::try_from(n).ok())
            .and_then(|n| n.checked_mul(source.data_type().size()))
            .ok_or_else(|| Error::TooLarge {
                path: source.path().clone(),
                shape: slab.shape().to_vec(),
            })?;
        if buffer.len() < n {
            // Zeroed by the allocator, page by page as the parallel reads
            // first touch it, not here on one thread.
            buffer = vec![0; n];
        }
        let data = &mut buffer[..n];
        source.read_region_bytes_into(slab, data)?;
        if same_type {
            work(slab, &units, Some(data))?;
            continue;
        }
        let data = convert(data, source.data_type(), target.data_type(), cast).map_err(
            |error| match error {
                ConvertError::Unsupported => CopyError::Unsupported {
                    path: path.clone(),
                    what: unsupported(source.data_type(), target.data_type()),
                },
                ConvertError::OutOfRange { index, value } => {
                    let coords = unravel(index as u64, slab);
                    let chunk_coords = source
                        .regular_chunk_shape()
                        .map(|c| coords.iter().zip(c).map(|(x, c)| x / c).collect())
                        .unwrap_or_default();
                    CopyError::OutOfRange {
                        path: path.clone(),
                        coords,
                        chunk_coords,
                        value,
                        data_type: target.data_type().clone(),
                    }
                }
            },
        )?;
        work(slab, &units, Some(&data))?;
    }
    Ok(())
}

/// The coordinates, in `slab`'s array, of element `index` of the slab (C order).
fn unravel(mut index: u64, slab: &Region) -> Vec<u64> {
    let mut coords = vec![0; slab.ndim()];
    for d in (0..slab.ndim()).rev() {
        let n = slab.shape()[d].max(1);
        coords[d] = slab.start()[d] + index % n;
        index /= n;
    }
    coords
}

/// The chunks of `target` (a regular grid) inside `slab`, which is
/// aligned to the grid.
fn units_in(target: &Array, slab: &Region) -> Vec<(Vec<u64>, Region)> {
    let Some(unit) = target.regular_chunk_shape() else {
        return Vec::new();
    };
    let first: Vec<u64> = slab.start().iter().zip(unit).map(|(s, u)| s / u).collect();
    let counts: Vec<u64> = slab
        .shape()
        .iter()
        .zip(unit)
        .map(|(n, u)| n.div_ceil(*u))
        .collect();
    let mut walk = crate::grid::GridWalk::whole(&counts);
    let mut out = Vec::new();
    while let Some(offset) = walk.next_coords() {
        let coords: Vec<u64> = first.iter().zip(offset).map(|(a, b)| a + b).collect();
        let region = target.chunk_region(&coords);
        out.push((coords, region));
    }
    out
}

/// The elements of `part` (inside `whole`) out of `data`, which holds
/// `whole`'s elements of `size` bytes in C order.
fn extract(data: &[u8], whole: &Region, part: &Region, size: usize) -> Vec<u8> {
    let ndim = whole.ndim();
    if whole == part {
        return data.to_vec();
    }
    let n: usize = part.shape().iter().map(|&n| n as usize).product();
    let mut out = Vec::with_capacity(n * size);
    if n == 0 {
        return out;
    }
    if ndim == 0 {
        return data.to_vec();
    }
    // Strides of `whole`, in elements.
    let mut strides = vec![1usize; ndim];
    for d in (0..ndim - 1).rev() {
        strides[d] = strides[d + 1] * whole.shape()[d + 1] as usize;
    }
    let row = part.shape()[ndim - 1] as usize * size;
    let rows: Vec<u64> = part.shape()[..ndim - 1].to_vec();
    let mut walk = crate::grid::GridWalk::whole(&rows);
    let offset = |coords: &[u64]| {
        (0..ndim)
            .map(|d| {
                let c = if d < ndim - 1 { coords[d] } else { 0 };
                (part.start()[d] - whole.start()[d] + c) as usize * strides[d]
            })
            .sum::<usize>()
    };
    if ndim == 1 {
        let at = offset(&[]) * size;
        out.extend_from_slice(&data[at..at + row]);
        return out;
    }
    while let Some(coords) = walk.next_coords() {
        let at = offset(coords) * size;
        out.extend_from_slice(&data[at..at + row]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{MemoryStore, Store};
    use std::sync::Arc;

    #[test]
    fn slabs_align_to_source_chunks_and_write_units_when_the_budget_allows() {
        // 64³ chunks into 256³ shards: one shard is a multiple of a chunk.
        let plan = plan_slabs(&[512; 3], Some(&[64; 3]), &[256; 3], 4, 1 << 30, u64::MAX);
        assert_eq!(plan.decodes_per_chunk, 1);
        assert!(plan.slab_shape.iter().product::<u64>() * 4 <= 1 << 30);
        assert!(plan.slab_shape.iter().all(|n| n % 256 == 0));
        // 100 into 64: the lcm 1600 covers the whole 1000-long dimension.
        let plan = plan_slabs(&[1000], Some(&[100]), &[64], 1, 1 << 20, u64::MAX);
        assert_eq!(plan.slab_shape, [1024]);
        assert_eq!(plan.decodes_per_chunk, 1);
        // A tight budget: a slab of 128 (covers a 100-chunk, not aligned).
        let plan = plan_slabs(
            &[1000, 1000],
            Some(&[100, 100]),
            &[64, 64],
            1,
            128 * 64,
            u64::MAX,
        );
        assert_eq!(plan.slab_shape, [64, 128]);
        assert_eq!(plan.decodes_per_chunk, 2 * 3);
        // Below one write unit, the slab is one write unit.
        let plan = plan_slabs(&[10, 10], Some(&[5, 5]), &[4, 4], 8, 1, u64::MAX);
        assert_eq!(plan.slab_shape, [4, 4]);
        assert_eq!(plan.decodes_per_chunk, 3 * 3);
        // Growth stops at enough write units: 4 shards of 256³, not 8.
        let plan = plan_slabs(&[512; 3], Some(&[64; 3]), &[256; 3], 2, 1 << 30, 4);
        assert_eq!(plan.slab_shape, [512, 512, 256]);
        assert_eq!(plan.decodes_per_chunk, 1);
    }

    #[test]
    fn conversion_is_strict_by_default_and_clamps_or_wraps_on_request() {
        let data: Vec<u8> = [1i32, 300, -5]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let error = convert(&data, &DataType::Int32, &DataType::UInt8, Cast::Strict).unwrap_err();
        assert_eq!(
            error,
            ConvertError::OutOfRange {
                index: 1,
                value: "300".into()
            }
        );
        assert_eq!(
            convert(&data, &DataType::Int32, &DataType::UInt8, Cast::Clamp).unwrap(),
            [1, 255, 0]
        );
        assert_eq!(
            convert(&data, &DataType::Int32, &DataType::UInt8, Cast::Wrap).unwrap(),
            [1, 44, 251]
        );
        let floats: Vec<u8> = [1.0f64, 2.5, f64::NAN]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let error =
            convert(&floats, &DataType::Float64, &DataType::Int16, Cast::Strict).unwrap_err();
        assert!(matches!(error, ConvertError::OutOfRange { index: 1, .. }));
        let clamped = convert(&floats, &DataType::Float64, &DataType::Int16, Cast::Clamp).unwrap();
        let values: Vec<i16> = clamped
            .chunks(2)
            .map(|b| i16::from_ne_bytes([b[0], b[1]]))
            .collect();
        assert_eq!(values, [1, 2, 0]);
        let big = 1e300f64.to_ne_bytes();
        assert!(convert(&big, &DataType::Float64, &DataType::Float32, Cast::Strict).is_err());
        let clamped = convert(&big, &DataType::Float64, &DataType::Float32, Cast::Clamp).unwrap();
        assert_eq!(f32::from_ne_bytes(clamped.try_into().unwrap()), f32::MAX);
        assert_eq!(
            convert(&[1], &DataType::Bool, &DataType::Float32, Cast::Strict).unwrap(),
            1.0f32.to_ne_bytes()
        );
        assert_eq!(
            convert(&[0; 4], &DataType::Int32, &DataType::String, Cast::Strict),
            Err(ConvertError::Unsupported)
        );
    }

    #[test]
    fn extract_takes_a_box_out_of_a_slab() {
        let whole = Region::new(vec![2, 0], vec![3, 4]);
        let data: Vec<u8> = (0..12).collect();
        let part = Region::new(vec![3, 1], vec![2, 2]);
        assert_eq!(extract(&data, &whole, &part, 1), [5, 6, 9, 10]);
    }

    #[test]
    fn an_array_is_rechunked_resharded_and_converted_with_every_value_kept() {
        let src: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let shape = [37u64, 23];
        let source = Array::builder(&shape, DataType::Int32, &[10, 7])
            .create(src.clone(), "/a")
            .unwrap();
        let values: Vec<i32> = (0..37 * 23).map(|i| (i * 7) % 251).collect();
        source
            .write_region(&Region::whole(&shape), &values)
            .unwrap();

        let layout = Layout {
            chunk_shape: Some(vec![4, 4]),
            shards: Some(Shards::Shape(vec![8, 12])),
            data_type: Some(DataType::UInt8),
            ..Layout::default()
        };
        let metadata = layout.apply(source.metadata()).unwrap();
        assert_eq!(metadata.codecs[0].name, SHARDING);
        let dst: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let target = Array::from_metadata(
            dst.clone(),
            NodePath::new("/b").unwrap(),
            crate::format::ZarrFormat::V3,
            metadata,
        )
        .unwrap();
        // A budget of one write unit: source chunks are decoded more than once.
        let mut done = 0;
        let stats =
            copy_array(&source, &target, Cast::Strict, 1, false, &mut |n| done += n).unwrap();
        assert_eq!(done, 5 * 2);
        assert_eq!(stats.written, 10);
        let read: Vec<u8> = target.read_region(&Region::whole(&shape)).unwrap();
        let expected: Vec<u8> = values.iter().map(|&v| u8::try_from(v).unwrap()).collect();
        assert_eq!(read, expected);
        verify_array(&source, &target, Cast::Strict, 1 << 20, &mut |_| {}).unwrap();

        // Resuming finds everything written.
        let stats = copy_array(&source, &target, Cast::Strict, 1 << 20, true, &mut |_| {}).unwrap();
        assert_eq!(
            stats,
            CopyStats {
                written: 0,
                skipped: 10
            }
        );

        // A damaged unit is found by verification, and rewritten on resume.
        target
            .write_region(&Region::new(vec![8, 12], vec![1, 1]), &[99u8])
            .unwrap();
        let error = verify_array(&source, &target, Cast::Strict, 1 << 20, &mut |_| {}).unwrap_err();
        assert!(
            matches!(&error, CopyError::Mismatch { chunk_coords, .. } if chunk_coords == &[1, 1]),
            "{error}"
        );
        let stats = copy_array(&source, &target, Cast::Strict, 1 << 20, true, &mut |_| {}).unwrap();
        assert_eq!(
            stats,
            CopyStats {
                written: 1,
                skipped: 9
            }
        );
    }

    #[test]
    fn a_value_that_does_not_fit_names_the_element_and_the_source_chunk() {
        let src: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let source = Array::builder(&[20], DataType::Int16, &[8])
            .create(src, "/x")
            .unwrap();
        let mut values = vec![1i16; 20];
        values[13] = -1;
        source.write_region(&Region::whole(&[20]), &values).unwrap();
        let layout = Layout {
            data_type: Some(DataType::UInt16),
            ..Layout::default()
        };
        let target = Array::from_metadata(
            Arc::new(MemoryStore::new()),
            NodePath::new("/x").unwrap(),
            crate::format::ZarrFormat::V3,
            layout.apply(source.metadata()).unwrap(),
        )
        .unwrap();
        let error =
            copy_array(&source, &target, Cast::Strict, 1 << 20, false, &mut |_| {}).unwrap_err();
        assert_eq!(
            error.to_string(),
            "array `/x`: the value -1 at [13] (source chunk [1]) does not fit `uint16`"
        );
    }
}
