//! The options that lay out a new array, shared by the commands that write
//! one (`create`, `import`, `cp`): chunk and shard shapes, codecs or a
//! compressor, fill value, dimension names, attributes, format and chunk
//! key encoding.
//!
//! Every option is optional. [`LayoutArgs::layout`] fills in what is not
//! given, from a source array when there is one (so `cp` keeps the
//! source's), otherwise with zarr-python 3.1's defaults for a new array.

use anyhow::{Context, bail};
use clap::Args;
use serde_json::Value;
use zarrkit::ArrayBuilder;
use zarrkit::codec::{Codec, codec_from_metadata, registry};
use zarrkit::format::ZarrFormat;
use zarrkit::metadata::{
    ArrayMetadata, ChunkGrid, ChunkKeyEncoding, DataType, ExtensionObject, FillValue, JsonMap,
    Separator,
};

/// The text on the layout options for `--help` (after a command's own).
pub const LAYOUT_HELP: &str = "\
Layout options (all optional):
  --chunks 64,64,64      the chunk shape (with --shards, of the inner chunks);
                         default: zarr-python 3.1's automatic chunks
  --shards 256,256,256   store the chunks in shards of this shape (v3
                         `sharding_indexed`; each chunk dimension must divide
                         the shard's); `none` for no sharding
  --compressor NAME[:…]  zstd[:LEVEL], gzip[:LEVEL], zlib[:LEVEL], bz2[:LEVEL],
                         lzma[:PRESET], lz4[:ACCELERATION],
                         blosc[:CNAME[:CLEVEL[:SHUFFLE]]] (CNAME lz4, lz4hc,
                         blosclz, zstd, zlib; SHUFFLE noshuffle, shuffle,
                         bitshuffle), or none; default zstd level 0, as
                         zarr-python 3.1 (v2: the same zstd as `compressor`)
  --codecs JSON|@FILE    the whole v3 codec list instead (with --shards, the
                         inner chunks' list), e.g. '[{\"name\":\"bytes\"},\"crc32c\"]'
  --fill-value V         a number, true/false, NaN, Infinity, -Infinity, NaT,
                         a string, or any JSON fill value of the data type
  --dimension-names y,x  one name per dimension (an empty name: unnamed)
  --attrs JSON|@FILE     the user attributes, a JSON object
  --format FORMAT        v3, v2, v1 or a v3 draft (create and import: the
                         store root's by default, else v3)
  --chunk-key-encoding E default or v2, optionally with the separator:
                         default:/ (the v3 default), default:., v2:. (the v2
                         default), v2:/";

/// The compressor names `--compressor` takes, for messages.
const COMPRESSORS: &[&str] = &[
    "zstd", "gzip", "zlib", "bz2", "lzma", "lz4", "blosc", "none",
];

/// The array layout options (see [`LAYOUT_HELP`]); `#[command(flatten)]`
/// them into a command's arguments.
#[derive(Clone, Debug, Default, Args)]
pub struct LayoutArgs {
    /// The chunk shape (with --shards, the shape of the inner chunks);
    /// default: zarr-python 3.1's automatic chunk shape
    #[arg(long, value_name = "N,N,…", value_parser = parse_chunk_shape)]
    pub chunks: Option<::std::vec::Vec<u64>>,

    /// Store the chunks in shards of this shape (v3 `sharding_indexed`; each
    /// chunk dimension must divide the shard's), or `none`
    #[arg(long, value_name = "N,N,…|none", value_parser = parse_shards)]
    pub shards: Option<Shards>,

    /// The v3 codec list as JSON, or @FILE to read it from a file (with
    /// --shards, the inner chunks' codecs)
    #[arg(long, value_name = "JSON|@FILE", value_parser = parse_codecs, conflicts_with = "compressor")]
    pub codecs: Option<::std::vec::Vec<ExtensionObject>>,

    /// The compressor: zstd[:LEVEL], gzip[:LEVEL], zlib[:LEVEL],
    /// bz2[:LEVEL], lzma[:PRESET], lz4[:ACCELERATION],
    /// blosc[:CNAME[:CLEVEL[:SHUFFLE]]] or none (default zstd, level 0)
    #[arg(long, value_name = "NAME[:LEVEL]", value_parser = parse_compressor)]
    pub compressor: Option<Compressor>,

    /// The fill value: a number, true/false, NaN, Infinity, NaT, a string,
    /// or a JSON fill value of the data type
    #[arg(long, value_name = "V", allow_hyphen_values = true)]
    pub fill_value: Option<String>,

    /// The names of the dimensions, comma-separated (an empty name leaves
    /// a dimension unnamed)
    #[arg(long, value_name = "NAME,NAME,…", value_parser = parse_dimension_names)]
    pub dimension_names: Option<::std::vec::Vec<Option<String>>>,

    /// The user attributes: a JSON object, or @FILE to read it from a file
    #[arg(long, value_name = "JSON|@FILE", value_parser = parse_attributes)]
    pub attrs: Option<JsonMap>,

    /// The format to write
    #[arg(long, value_name = "FORMAT", value_parser = super::migrate::FormatParser)]
    pub format: Option<ZarrFormat>,

    /// The chunk key encoding, `default` or `v2`, optionally with the
    /// separator: `default:/`, `default:.`, `v2:.`, `v2:/`
    #[arg(long, value_name = "ENCODING[:SEP]", value_parser = parse_chunk_key_encoding)]
    pub chunk_key_encoding: Option<ChunkKeyEncoding>,
}

/// `--shards`: a shard shape, or `none` (no sharding, for `cp` from a
/// sharded source).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shards {
    /// No sharding.
    None,
    /// Shards of this shape.
    Shape(Vec<u64>),
}

/// A compressor named by `--compressor`, as the bytes→bytes codecs it
/// stands for (none for `none`), before the data type is known.
#[derive(Clone, Debug, PartialEq)]
pub struct Compressor {
    /// The spelling given, for messages.
    pub spelling: String,
    codec: Option<CompressorCodec>,
}

#[derive(Clone, Debug, PartialEq)]
enum CompressorCodec {
    /// A codec whose configuration is complete.
    Fixed(ExtensionObject),
    /// `blosc`, whose `typesize` (and default `shuffle`) follow the data
    /// type.
    Blosc {
        cname: String,
        clevel: u8,
        shuffle: Option<String>,
    },
}

impl Compressor {
    /// The compressor's v3 codecs for elements of `data_type`.
    #[must_use]
    pub fn codecs(&self, data_type: &DataType) -> Vec<ExtensionObject> {
        let Some(codec) = &self.codec else {
            return Vec::new();
        };
        vec![match codec {
            CompressorCodec::Fixed(codec) => codec.clone(),
            CompressorCodec::Blosc {
                cname,
                clevel,
                shuffle,
            } => {
                // zarr-python 3.1's `BloscCodec` (`evolve_from_array_spec`):
                // `typesize` is the element size (1 for variable-length
                // types), and the default shuffle is `bitshuffle` for
                // one-byte elements, `shuffle` otherwise.
                let typesize = data_type.size().max(1);
                let shuffle = shuffle.clone().unwrap_or_else(|| {
                    if typesize == 1 {
                        "bitshuffle"
                    } else {
                        "shuffle"
                    }
                    .to_string()
                });
                let mut configuration = JsonMap::new();
                configuration.insert("cname".into(), cname.clone().into());
                configuration.insert("clevel".into(), (*clevel).into());
                configuration.insert("shuffle".into(), shuffle.into());
                configuration.insert("typesize".into(), typesize.into());
                configuration.insert("blocksize".into(), 0.into());
                ExtensionObject::with_configuration("blosc", configuration)
            }
        }]
    }
}

/// A new array's layout: everything [`LayoutArgs`] sets, resolved against
/// a data type and shape (and a source array, for `cp`).
#[derive(Clone, Debug)]
pub struct Layout {
    /// The format to write.
    pub format: ZarrFormat,
    /// The chunk grid (of shards, when sharded).
    pub chunk_grid: ChunkGrid,
    /// The codec list, or `None` for the library's default for the format
    /// and data type.
    pub codecs: Option<Vec<ExtensionObject>>,
    /// The fill value, or `None` for zero.
    pub fill_value: Option<FillValue>,
    /// The dimension names.
    pub dimension_names: Option<Vec<Option<String>>>,
    /// The user attributes.
    pub attributes: JsonMap,
    /// The chunk key encoding, or `None` for the format's default.
    pub chunk_key_encoding: Option<ChunkKeyEncoding>,
}

impl Layout {
    /// A builder of an array of `shape` and `data_type` with this layout.
    #[must_use]
    pub fn builder(&self, shape: &[u64], data_type: DataType) -> ArrayBuilder {
        self.apply(ArrayBuilder::new(shape, data_type, &[]))
    }

    /// Applies this layout to `builder`, replacing its chunk grid, format
    /// and attributes, and whichever of codecs, fill value, dimension
    /// names and chunk key encoding this layout sets.
    #[must_use]
    pub fn apply(&self, builder: ArrayBuilder) -> ArrayBuilder {
        let mut builder = builder
            .chunk_grid(self.chunk_grid.clone())
            .format(self.format)
            .attributes(self.attributes.clone());
        if let Some(codecs) = &self.codecs {
            builder = builder.codecs_metadata(codecs.clone());
        }
        if let Some(fill_value) = &self.fill_value {
            builder = builder.fill_value_bytes(fill_value.clone());
        }
        if let Some(names) = &self.dimension_names {
            builder = builder.dimension_names_opt(names.clone());
        }
        if let Some(encoding) = &self.chunk_key_encoding {
            builder = builder.chunk_key_encoding(encoding.clone());
        }
        builder
    }
}

/// A source array whose layout fills in the options not given (`cp`).
#[derive(Clone, Copy, Debug)]
pub struct Source<'a> {
    /// The source's metadata.
    pub metadata: &'a ArrayMetadata,
    /// The source's format.
    pub format: ZarrFormat,
}

impl LayoutArgs {
    /// Resolves the options for an array of `shape` and `data_type` in
    /// `format` (`--format` or the caller's default). `big_endian` chooses the `bytes` codec's
    /// byte order when no `--codecs` is given (from a `>` NumPy type).
    ///
    /// What is not given comes from `source` when there is one: its
    /// (inner) chunk shape, shard shape, codecs, fill value, dimension
    /// names, attributes, and its chunk key encoding when the format stays
    /// the same. Without a source: zarr-python 3.1's automatic chunks
    /// ([`guess_chunks`]), no sharding, the library's default codecs for
    /// the format (v3 and v2: `bytes` + `zstd` level 0, as zarr-python
    /// 3.1), zero, no names, no attributes, the format's chunk key
    /// encoding. `--compressor` replaces the bytes→bytes codecs of the
    /// (inner) codec list and keeps the rest. With a sharded source,
    /// `--chunks` and `--codecs` change the inner chunks and the shards
    /// stay, unless `--shards` gives new ones or `none`.
    ///
    /// # Errors
    /// If a shape has the wrong number of dimensions, a chunk shape does
    /// not divide the shard shape, sharding is asked of a format without
    /// it, the fill value is not one of the data type, or the dimension
    /// names do not match the shape.
    pub fn layout(
        &self,
        format: ZarrFormat,
        shape: &[u64],
        data_type: &DataType,
        big_endian: bool,
        source: Option<Source<'_>>,
    ) -> anyhow::Result<Layout> {
        let ndim = shape.len();
        let check_ndim = |option: &str, values: &[u64]| {
            if values.len() != ndim {
                bail!(
                    "{option} {} has {} for an array of {} ({})",
                    join(values),
                    super::plural(values.len() as u64, "dimension", "dimensions"),
                    super::plural(ndim as u64, "dimension", "dimensions"),
                    super::format_shape(shape)
                );
            }
            Ok(())
        };
        // The source's sharding: its grid's shape and the inner chunks'.
        let source_sharding = source.and_then(|s| sharding_of(s.metadata));
        let shards = match (&self.shards, &source_sharding) {
            (Some(Shards::Shape(shards)), _) => Some(shards.clone()),
            (Some(Shards::None), _) => None,
            (None, Some((shards, _, _))) => Some(shards.clone()),
            (None, None) => None,
        };
        if let Some(shards) = &shards {
            check_ndim("--shards", shards)?;
            if shards.contains(&0) {
                bail!("--shards {} has a zero dimension", join(shards));
            }
            if !format.is_v3() {
                bail!(
                    "--shards: the format {format} has no sharding (v3's `sharding_indexed` codec); use --format v3"
                );
            }
        }
        let item_size = data_type.size().max(1) as u64;
        // The source's (inner) chunk shape, when it has a regular grid.
        let source_chunks = match (&source_sharding, source) {
            (Some((_, inner, _)), _) => Some(inner.clone()),
            (None, Some(source)) => source
                .metadata
                .chunk_grid
                .chunk_shape()
                .map(|chunks| chunks.iter().map(|n| n.get()).collect()),
            (None, None) => None,
        };
        let chunks = match (&self.chunks, source_chunks, &shards) {
            (Some(chunks), _, _) => chunks.clone(),
            (None, Some(chunks), _) => chunks,
            // zarr-python 3.1 (`_auto_partition`) aims at chunks of at most
            // 1 MiB inside shards; here the guess is made within one shard
            // and each side shrunk to a divisor of the shard's, as
            // sharding needs.
            (None, None, Some(shards)) => guess_chunks(shards, item_size, 1 << 20)
                .iter()
                .zip(shards)
                .map(|(&guess, &shard)| largest_divisor_at_most(shard, guess))
                .collect(),
            (None, None, None) => guess_chunks(shape, item_size, MAX_CHUNK_BYTES),
        };
        check_ndim("--chunks", &chunks)?;
        if let Some(shards) = &shards {
            for (dim, (&chunk, &shard)) in chunks.iter().zip(shards).enumerate() {
                if shard % chunk != 0 {
                    bail!(
                        "the chunk shape {} does not divide the shard shape {}: in dimension {dim}, \
                         {shard} is not a multiple of {chunk}",
                        join(&chunks),
                        join(shards)
                    );
                }
            }
        }
        // Which source (inner) codec list the options change, if any.
        let source_codecs = match (source, &source_sharding) {
            (_, Some((_, _, inner))) => Some(inner.clone()),
            (Some(source), None) => Some(source.metadata.codecs.clone()),
            (None, None) => None,
        };
        let inner_codecs = match (&self.codecs, &self.compressor, source_codecs) {
            (Some(codecs), _, _) => Some(codecs.clone()),
            (None, Some(compressor), base) => {
                let base = match base {
                    Some(base) => base,
                    None => default_codecs(format, shape, data_type)?,
                };
                Some(replace_compressor(&base, &compressor.codecs(data_type))?)
            }
            (None, None, base) => base,
        };
        let inner_codecs = match inner_codecs {
            Some(codecs) if big_endian && self.codecs.is_none() => Some(set_endian(codecs, "big")),
            None if big_endian => {
                Some(set_endian(default_codecs(format, shape, data_type)?, "big"))
            }
            other => other,
        };
        let (chunk_grid, codecs) = match shards {
            Some(shards) => {
                let inner = match inner_codecs {
                    Some(codecs) => codecs,
                    None => default_codecs(format, shape, data_type)?,
                };
                (
                    ChunkGrid::regular(&shards)?,
                    Some(vec![sharding_codec(&chunks, inner)]),
                )
            }
            None => (ChunkGrid::regular(&chunks)?, inner_codecs),
        };
        let fill_value = match &self.fill_value {
            Some(text) => Some(parse_fill_value(text, data_type)?),
            None => source.map(|s| s.metadata.fill_value.clone()),
        };
        let dimension_names = match &self.dimension_names {
            Some(names) => {
                if names.len() != ndim {
                    bail!(
                        "--dimension-names gives {} for an array of {}",
                        super::plural(names.len() as u64, "name", "names"),
                        super::plural(ndim as u64, "dimension", "dimensions")
                    );
                }
                Some(names.clone())
            }
            None => source.and_then(|s| s.metadata.dimension_names.clone()),
        };
        let attributes = match &self.attrs {
            Some(attributes) => attributes.clone(),
            None => source
                .map(|s| s.metadata.attributes.clone())
                .unwrap_or_default(),
        };
        let chunk_key_encoding = match (&self.chunk_key_encoding, source) {
            (Some(encoding), _) => Some(encoding.clone()),
            (None, Some(source)) if source.format == format => {
                Some(source.metadata.chunk_key_encoding.clone())
            }
            _ => None,
        };
        Ok(Layout {
            format,
            chunk_grid,
            codecs,
            fill_value,
            dimension_names,
            attributes,
            chunk_key_encoding,
        })
    }
}

/// zarr-python 3.1's cap on automatic chunks (`_guess_chunks`'s
/// `max_bytes`, 64 MiB).
const MAX_CHUNK_BYTES: u64 = 64 << 20;

/// zarr-python 3.1's automatic chunk shape (`zarr.core.chunk_grids.
/// _guess_chunks`, adapted there from h5py): the target chunk size grows
/// with the array's, 256 KiB × 2^log10(array MiB), kept within 128 KiB and
/// `max_bytes`; the dimensions are halved in turn (rounding up) until the
/// chunk is below the target or within 50% of it, and below `max_bytes`.
/// So a 1000×1000 `float64` array gets 250×250 chunks and a 512³
/// `float32` one 64×64×128, as in zarr-python.
#[must_use]
pub fn guess_chunks(shape: &[u64], item_size: u64, max_bytes: u64) -> Vec<u64> {
    const INCREMENT_BYTES: f64 = 256.0 * 1024.0;
    const MIN_BYTES: f64 = 128.0 * 1024.0;
    #[allow(clippy::cast_precision_loss)] // Sizes as zarr-python's float64 arithmetic.
    let (item_size, max_bytes) = (item_size as f64, max_bytes as f64);
    #[allow(clippy::cast_precision_loss)]
    let mut chunks: Vec<f64> = shape.iter().map(|&n| (n as f64).max(1.0)).collect();
    if chunks.is_empty() {
        return Vec::new();
    }
    let elements = |chunks: &[f64]| chunks.iter().product::<f64>();
    let dataset_size = elements(&chunks) * item_size;
    let mut target = INCREMENT_BYTES * 2f64.powf((dataset_size / (1024.0 * 1024.0)).log10());
    if target > max_bytes {
        target = max_bytes;
    } else if target < MIN_BYTES {
        target = MIN_BYTES;
    }
    let mut idx = 0;
    loop {
        let chunk_bytes = elements(&chunks) * item_size;
        if (chunk_bytes < target || (chunk_bytes - target).abs() / target < 0.5)
            && chunk_bytes < max_bytes
        {
            break;
        }
        if elements(&chunks) <= 1.0 {
            break;
        }
        let axis = idx % chunks.len();
        chunks[axis] = (chunks[axis] / 2.0).ceil();
        idx += 1;
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // Whole, positive.
    chunks.iter().map(|&n| n as u64).collect()
}

/// The largest divisor of `n` that is at most `at_most` (at least 1).
fn largest_divisor_at_most(n: u64, at_most: u64) -> u64 {
    (1..=at_most.min(n)).rev().find(|d| n % d == 0).unwrap_or(1)
}

/// The library's default codecs for a new array of `data_type` in
/// `format` (what [`ArrayBuilder`] writes when given none).
fn default_codecs(
    format: ZarrFormat,
    shape: &[u64],
    data_type: &DataType,
) -> anyhow::Result<Vec<ExtensionObject>> {
    let chunks = vec![1; shape.len()];
    let metadata = ArrayBuilder::new(shape, data_type.clone(), &chunks)
        .format(format)
        .build_metadata(&zarrkit::NodePath::root())
        .with_context(|| format!("no default codecs for `{data_type}` in {format}"))?;
    Ok(metadata.codecs)
}

/// `codecs` with its bytes→bytes codecs (the compressor and any checksum
/// after the array→bytes codec) replaced by `compressor`.
fn replace_compressor(
    codecs: &[ExtensionObject],
    compressor: &[ExtensionObject],
) -> anyhow::Result<Vec<ExtensionObject>> {
    let mut kept = Vec::new();
    for codec in codecs {
        let resolved = codec_from_metadata(codec)
            .with_context(|| format!("cannot read the codec `{}`", codec.name))?;
        if !matches!(resolved, Codec::BytesToBytes(_)) {
            kept.push(codec.clone());
        }
    }
    kept.extend(compressor.iter().cloned());
    Ok(kept)
}

/// `codecs` with the `bytes` codec's `endian` set to `endian` (where it
/// has one: single-byte types have none).
fn set_endian(mut codecs: Vec<ExtensionObject>, endian: &str) -> Vec<ExtensionObject> {
    for codec in &mut codecs {
        if codec.name == "bytes" {
            if let Some(configuration) = &mut codec.configuration {
                if configuration.contains_key("endian") {
                    configuration.insert("endian".into(), endian.into());
                }
            }
        }
    }
    codecs
}

/// The `sharding_indexed` codec of inner chunks of `chunk_shape` encoded
/// with `codecs`, with zarr-python 3.1's index: `bytes` (little endian)
/// and `crc32c`, at the end of the shard (v3 sharding codec spec).
fn sharding_codec(chunk_shape: &[u64], codecs: Vec<ExtensionObject>) -> ExtensionObject {
    let json = |codecs: &[ExtensionObject]| {
        Value::Array(
            codecs
                .iter()
                .map(zarrkit::metadata::json::extension_to_json)
                .collect(),
        )
    };
    let mut bytes = JsonMap::new();
    bytes.insert("endian".into(), "little".into());
    let index_codecs = [
        ExtensionObject::with_configuration("bytes", bytes),
        ExtensionObject::new("crc32c"),
    ];
    let mut configuration = JsonMap::new();
    configuration.insert("chunk_shape".into(), chunk_shape.to_vec().into());
    configuration.insert("codecs".into(), json(&codecs));
    configuration.insert("index_codecs".into(), json(&index_codecs));
    configuration.insert("index_location".into(), "end".into());
    ExtensionObject::with_configuration("sharding_indexed", configuration)
}

/// A sharded array's shard shape, inner chunk shape and inner codecs: its
/// regular grid and its only codec, `sharding_indexed`.
fn sharding_of(metadata: &ArrayMetadata) -> Option<(Vec<u64>, Vec<u64>, Vec<ExtensionObject>)> {
    let [codec] = metadata.codecs.as_slice() else {
        return None;
    };
    if codec.name != "sharding_indexed" {
        return None;
    }
    let shards = metadata.chunk_grid.chunk_shape()?;
    let configuration = codec.configuration.as_ref()?;
    let inner: Vec<u64> = configuration
        .get("chunk_shape")?
        .as_array()?
        .iter()
        .map(Value::as_u64)
        .collect::<Option<_>>()?;
    let codecs = configuration
        .get("codecs")?
        .as_array()?
        .iter()
        .map(|c| zarrkit::metadata::json::extension_from_json(c, "codecs").ok())
        .collect::<Option<_>>()?;
    Some((shards.iter().map(|n| n.get()).collect(), inner, codecs))
}

/// `1,2,3` for messages.
fn join(values: &[u64]) -> String {
    values
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Parses a shape: comma-separated lengths, optionally in brackets or
/// parentheses (`100,200`, `(100, 200)`, `[100,200]`); empty (`""`, `()`)
/// for a 0-d array.
///
/// # Errors
/// The message, for anything else.
pub fn parse_shape(text: &str) -> Result<Vec<u64>, String> {
    let trimmed = text.trim();
    let inner = trimmed
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .or_else(|| trimmed.strip_prefix('[').and_then(|t| t.strip_suffix(']')))
        .unwrap_or(trimmed)
        .trim();
    if inner.is_empty() {
        return Ok(Vec::new());
    }
    // A trailing comma, as in Python's `(5,)`.
    let inner = inner.strip_suffix(',').unwrap_or(inner);
    inner
        .split(',')
        .map(|n| {
            let n = n.trim();
            n.parse::<u64>().map_err(|_| {
                format!("`{text}`: `{n}` is not a length (comma-separated non-negative integers such as `100,200`)")
            })
        })
        .collect()
}

/// Parses a chunk or shard shape: as [`parse_shape`], every length positive.
///
/// # Errors
/// The message, for a malformed shape or a zero length.
pub fn parse_chunk_shape(text: &str) -> Result<Vec<u64>, String> {
    let shape = parse_shape(text)?;
    if shape.contains(&0) {
        return Err(format!(
            "`{text}`: every length of a chunk must be positive"
        ));
    }
    Ok(shape)
}

fn parse_shards(text: &str) -> Result<Shards, String> {
    if text.trim().eq_ignore_ascii_case("none") {
        return Ok(Shards::None);
    }
    parse_chunk_shape(text).map(Shards::Shape)
}

/// Reads `@FILE` or returns the text itself.
fn text_or_file(text: &str) -> Result<String, String> {
    match text.strip_prefix('@') {
        Some(path) => {
            std::fs::read_to_string(path).map_err(|e| format!("cannot read `{path}`: {e}"))
        }
        None => Ok(text.to_string()),
    }
}

/// Parses `--codecs`: a JSON list of v3 codecs (names or objects), or
/// `@FILE`; every name must be one this build knows.
///
/// # Errors
/// The message, naming an unknown codec and listing the known ones.
pub fn parse_codecs(text: &str) -> Result<Vec<ExtensionObject>, String> {
    let text = text_or_file(text)?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| format!("not a JSON list of codecs: {e}"))?;
    let Value::Array(items) = value else {
        return Err("not a JSON list of codecs (such as `[\"bytes\", \"zstd\"]`)".into());
    };
    let known = registry::codec_names();
    let mut codecs = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let codec = zarrkit::metadata::json::extension_from_json(item, &format!("codecs[{i}]"))
            .map_err(|e| e.to_string())?;
        if !known.contains(&codec.name.as_str()) {
            return Err(format!(
                "unknown codec `{}`; known codecs: {}",
                codec.name,
                known.join(", ")
            ));
        }
        // The codec's own configuration checks, now rather than at create.
        codec_from_metadata(&codec).map_err(|e| format!("codec `{}`: {e}", codec.name))?;
        codecs.push(codec);
    }
    if codecs.is_empty() {
        return Err(
            "the codec list is empty (it needs at least an array→bytes codec such as `bytes`)"
                .into(),
        );
    }
    Ok(codecs)
}

/// Parses `--compressor NAME[:OPTION…]`.
///
/// # Errors
/// The message, naming an unknown compressor and listing the known ones,
/// or a bad level.
pub fn parse_compressor(text: &str) -> Result<Compressor, String> {
    let mut parts = text.split(':');
    let name = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
    let options: Vec<&str> = parts.map(str::trim).collect();
    let too_many = |most: usize| {
        if options.len() > most {
            Err(format!(
                "`{text}`: the `{name}` compressor takes at most {most} option{}",
                if most == 1 { "" } else { "s" }
            ))
        } else {
            Ok(())
        }
    };
    let integer =
        |option: Option<&&str>, what: &str, range: std::ops::RangeInclusive<i64>, default: i64| {
            match option {
                None => Ok(default),
                Some(text) => text
                    .parse::<i64>()
                    .ok()
                    .filter(|n| range.contains(n))
                    .ok_or_else(|| {
                        format!(
                            "`{text}` is not a {what} of the `{name}` compressor ({} to {})",
                            range.start(),
                            range.end()
                        )
                    }),
            }
        };
    let fixed = |codec: &str, key: &str, value: i64| {
        let mut configuration = JsonMap::new();
        configuration.insert(key.into(), value.into());
        Some(CompressorCodec::Fixed(ExtensionObject::with_configuration(
            codec,
            configuration,
        )))
    };
    // Defaults are those of zarr-python 3.1's codecs (`ZstdCodec`,
    // `GzipCodec`, `BloscCodec`) and of numcodecs (`Zlib`, `BZ2`, `LZ4`,
    // `LZMA`) for the numcodecs ones.
    let codec = match name.as_str() {
        "zstd" => {
            too_many(1)?;
            let level = integer(options.first(), "level", -131_072..=22, 0)?;
            let mut configuration = JsonMap::new();
            configuration.insert("level".into(), level.into());
            configuration.insert("checksum".into(), false.into());
            Some(CompressorCodec::Fixed(ExtensionObject::with_configuration(
                "zstd",
                configuration,
            )))
        }
        "gzip" => {
            too_many(1)?;
            fixed(
                "gzip",
                "level",
                integer(options.first(), "level", 0..=9, 5)?,
            )
        }
        "zlib" => {
            too_many(1)?;
            fixed(
                "numcodecs.zlib",
                "level",
                integer(options.first(), "level", 0..=9, 1)?,
            )
        }
        "bz2" => {
            too_many(1)?;
            fixed(
                "numcodecs.bz2",
                "level",
                integer(options.first(), "level", 1..=9, 1)?,
            )
        }
        "lzma" => {
            too_many(1)?;
            match options.first() {
                None => Some(CompressorCodec::Fixed(ExtensionObject::with_configuration(
                    "numcodecs.lzma",
                    JsonMap::new(),
                ))),
                Some(_) => fixed(
                    "numcodecs.lzma",
                    "preset",
                    integer(options.first(), "preset", 0..=9, 6)?,
                ),
            }
        }
        "lz4" => {
            too_many(1)?;
            fixed(
                "numcodecs.lz4",
                "acceleration",
                integer(options.first(), "acceleration", 1..=65_537, 1)?,
            )
        }
        "blosc" => {
            too_many(3)?;
            const CNAMES: &[&str] = &["lz4", "lz4hc", "blosclz", "zstd", "zlib"];
            const SHUFFLES: &[&str] = &["noshuffle", "shuffle", "bitshuffle"];
            let cname = match options.first() {
                None => "zstd".to_string(),
                Some(cname) if CNAMES.contains(cname) => (*cname).to_string(),
                Some(cname) => {
                    return Err(format!(
                        "`{cname}` is not a blosc compressor; one of: {}",
                        CNAMES.join(", ")
                    ));
                }
            };
            let clevel = integer(options.get(1), "level", 0..=9, 5)?;
            let shuffle = match options.get(2) {
                None => None,
                Some(shuffle) if SHUFFLES.contains(shuffle) => Some((*shuffle).to_string()),
                Some(shuffle) => {
                    return Err(format!(
                        "`{shuffle}` is not a blosc shuffle; one of: {}",
                        SHUFFLES.join(", ")
                    ));
                }
            };
            Some(CompressorCodec::Blosc {
                cname,
                clevel: u8::try_from(clevel).unwrap_or(5),
                shuffle,
            })
        }
        "none" => {
            too_many(0)?;
            None
        }
        _ => {
            return Err(format!(
                "unknown compressor `{name}`; one of: {} (or --codecs for any v3 codec)",
                COMPRESSORS.join(", ")
            ));
        }
    };
    if let Some(CompressorCodec::Fixed(codec)) = &codec {
        codec_from_metadata(codec).map_err(|e| format!("`{text}`: {e}"))?;
    }
    Ok(Compressor {
        spelling: text.to_string(),
        codec,
    })
}

fn parse_dimension_names(text: &str) -> Result<Vec<Option<String>>, String> {
    Ok(text
        .split(',')
        .map(str::trim)
        .map(|name| (!name.is_empty()).then(|| name.to_string()))
        .collect())
}

/// Parses `--attrs`: a JSON object, or `@FILE`.
///
/// # Errors
/// The message, for anything but a JSON object.
pub fn parse_attributes(text: &str) -> Result<JsonMap, String> {
    let text = text_or_file(text)?;
    match serde_json::from_str(&text) {
        Ok(Value::Object(attributes)) => Ok(attributes),
        Ok(other) => Err(format!(
            "the attributes must be a JSON object such as `{{\"units\": \"K\"}}`, not `{other}`"
        )),
        Err(e) => Err(format!("not JSON: {e}")),
    }
}

fn parse_chunk_key_encoding(text: &str) -> Result<ChunkKeyEncoding, String> {
    let (name, separator) = match text.split_once(':') {
        Some((name, separator)) => (name, Some(separator)),
        None => (text, None),
    };
    let separator =
        match separator {
            None => None,
            Some(separator) => Some(Separator::from_str_opt(separator).ok_or_else(|| {
                format!("`{separator}` is not a chunk key separator (`/` or `.`)")
            })?),
        };
    match name {
        "default" => Ok(ChunkKeyEncoding::Default {
            separator: separator.unwrap_or(Separator::Slash),
        }),
        "v2" => Ok(ChunkKeyEncoding::V2 {
            separator: separator.unwrap_or(Separator::Dot),
        }),
        other => Err(format!(
            "unknown chunk key encoding `{other}`; one of: default, v2 (with `:/` or `:.` for the separator)"
        )),
    }
}

/// Parses a fill value for `data_type`: JSON as the v3 `fill_value`
/// (`0`, `1.5`, `true`, `"NaN"`, `[1, 2]`), or else the text as a JSON
/// string (`NaN`, `Infinity`, `-Infinity`, `NaT`, a string's value);
/// `nan`, `inf` and `-inf` in any case are NaN and the infinities.
///
/// # Errors
/// If the value is not one of `data_type`.
pub fn parse_fill_value(text: &str, data_type: &DataType) -> anyhow::Result<FillValue> {
    let special = match text.trim().to_ascii_lowercase().as_str() {
        "nan" => Some("NaN"),
        "inf" | "+inf" | "infinity" | "+infinity" => Some("Infinity"),
        "-inf" | "-infinity" => Some("-Infinity"),
        "nat" => Some("NaT"),
        _ => None,
    };
    let mut candidates = Vec::new();
    if let Some(special) = special {
        candidates.push(Value::String(special.to_string()));
    }
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        candidates.push(value);
    }
    candidates.push(Value::String(text.to_string()));
    let mut first_error = None;
    for value in &candidates {
        match zarrkit::metadata::json::fill_value_from_json(value, data_type) {
            Ok(fill) => return Ok(fill),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let error = first_error.map_or_else(String::new, |e| format!(": {e}"));
    bail!("--fill-value `{text}` is not a value of the data type `{data_type}`{error}")
}

/// A data type from the command line, and whether its elements are
/// big-endian (a `>` NumPy type string).
#[derive(Clone, Debug, PartialEq)]
pub struct DataTypeArg {
    /// The data type.
    pub data_type: DataType,
    /// Whether a NumPy type string asked for big-endian elements.
    pub big_endian: bool,
}

/// Parses `--dtype`: a v3 name (`uint16`, `float32`, `string`, `r24`,
/// `bfloat16`, …), a v3 `data_type` as JSON (`{"name":
/// "numpy.datetime64", "configuration": {…}}`), or a NumPy type string as
/// v2 spells it, the byte order optional (`<u2`, `>f8`, `|S10`, `S10`,
/// `<U5`, `M8[ns]`, `m8[10s]`, `?` for bool), or a NumPy structured type
/// as JSON (`[["a", "<i4"], ["b", "<f8", [2]]]`).
///
/// # Errors
/// The message, with examples of what is accepted.
pub fn parse_data_type(text: &str) -> Result<DataTypeArg, String> {
    let text = text.trim();
    let little = |data_type| DataTypeArg {
        data_type,
        big_endian: false,
    };
    if let Some(data_type) = DataType::from_name(text) {
        return Ok(little(data_type));
    }
    let unknown = || {
        format!(
            "unknown data type `{text}`: give a v3 name (bool, int8…int64, uint8…uint64, \
             float16, float32, float64, complex64, complex128, string, bytes, r<bits>, …) \
             or a NumPy type string (`<u2`, `>f8`, `|S10`, `<U5`, `M8[ns]`)"
        )
    };
    if text.starts_with('{') || text.starts_with('[') {
        let value: Value = serde_json::from_str(text).map_err(|e| format!("`{text}`: {e}"))?;
        if value.is_object() {
            return zarrkit::format::v3::data_type_from_json(&value)
                .map(little)
                .map_err(|e| format!("`{text}`: {e}"));
        }
        return numpy_data_type(&value).map_err(|e| format!("`{text}`: {e}"));
    }
    // NumPy's long names of the time types: `datetime64[ns]`.
    let numpy = if let Some(rest) = text.strip_prefix("datetime64") {
        format!("M8{rest}")
    } else if let Some(rest) = text.strip_prefix("timedelta64") {
        format!("m8{rest}")
    } else if text == "?" || text == "b1" {
        "|b1".to_string()
    } else {
        text.to_string()
    };
    // The byte order is optional, as in NumPy; `=` is the native one.
    let native = if cfg!(target_endian = "big") {
        '>'
    } else {
        '<'
    };
    let numpy = match numpy.chars().next() {
        Some('=') => format!("{native}{}", &numpy[1..]),
        Some('<' | '>' | '|') => numpy,
        Some(c) if c.is_ascii_alphabetic() => format!("{native}{numpy}"),
        _ => return Err(unknown()),
    };
    numpy_data_type(&Value::String(numpy)).map_err(|_| unknown())
}

fn numpy_data_type(value: &Value) -> Result<DataTypeArg, String> {
    let (data_type, endian) =
        zarrkit::format::v2::dtype_from_json(value).map_err(|e| e.to_string())?;
    Ok(DataTypeArg {
        data_type,
        big_endian: endian == Some("big"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        layout: LayoutArgs,
    }

    fn parse(args: &[&str]) -> Result<LayoutArgs, clap::Error> {
        let mut argv = vec!["test"];
        argv.extend_from_slice(args);
        Cli::try_parse_from(argv).map(|cli| cli.layout)
    }

    fn json(codecs: &[ExtensionObject]) -> Value {
        Value::Array(
            codecs
                .iter()
                .map(zarrkit::metadata::json::extension_to_json)
                .collect(),
        )
    }

    #[test]
    fn every_option_is_optional() {
        let args = parse(&[]).unwrap();
        assert!(args.chunks.is_none() && args.shards.is_none() && args.codecs.is_none());
        assert!(args.compressor.is_none() && args.fill_value.is_none() && args.format.is_none());
    }

    #[test]
    fn shapes_parse_in_several_spellings() {
        assert_eq!(parse_shape("64,64,64").unwrap(), [64, 64, 64]);
        assert_eq!(parse_shape("(100, 200)").unwrap(), [100, 200]);
        assert_eq!(parse_shape("[5]").unwrap(), [5]);
        assert_eq!(parse_shape("(5,)").unwrap(), [5]);
        assert_eq!(parse_shape("()").unwrap(), Vec::<u64>::new());
        assert_eq!(parse_shape("0,3").unwrap(), [0, 3]);
        assert!(
            parse_shape("4,x")
                .unwrap_err()
                .contains("`x` is not a length")
        );
        assert!(parse_shape("-1").is_err());
        assert!(parse_chunk_shape("4,0").unwrap_err().contains("positive"));
        let args = parse(&["--chunks", "64,32", "--shards", "none"]).unwrap();
        assert_eq!(args.chunks, Some(vec![64, 32]));
        assert_eq!(args.shards, Some(Shards::None));
        assert!(parse(&["--chunks", "0,4"]).is_err());
    }

    #[test]
    fn compressors_map_to_v3_codecs() {
        let codecs = |text: &str, data_type: &DataType| {
            json(&parse_compressor(text).unwrap().codecs(data_type))
        };
        let f4 = DataType::Float32;
        assert_eq!(
            codecs("zstd:3", &f4),
            serde_json::json!([{"name": "zstd", "configuration": {"level": 3, "checksum": false}}])
        );
        assert_eq!(
            codecs("zstd", &f4),
            serde_json::json!([{"name": "zstd", "configuration": {"level": 0, "checksum": false}}])
        );
        assert_eq!(
            codecs("GZIP", &f4),
            serde_json::json!([{"name": "gzip", "configuration": {"level": 5}}])
        );
        assert_eq!(
            codecs("zlib:9", &f4),
            serde_json::json!([{"name": "numcodecs.zlib", "configuration": {"level": 9}}])
        );
        assert_eq!(
            codecs("bz2", &f4),
            serde_json::json!([{"name": "numcodecs.bz2", "configuration": {"level": 1}}])
        );
        assert_eq!(
            codecs("lz4:2", &f4),
            serde_json::json!([{"name": "numcodecs.lz4", "configuration": {"acceleration": 2}}])
        );
        assert_eq!(codecs("none", &f4), serde_json::json!([]));
        assert_eq!(
            codecs("blosc:lz4:7:bitshuffle", &f4),
            serde_json::json!([{"name": "blosc", "configuration": {
                "cname": "lz4", "clevel": 7, "shuffle": "bitshuffle", "typesize": 4, "blocksize": 0}}])
        );
        // zarr-python's defaults: zstd, level 5, shuffle by element size.
        assert_eq!(
            codecs("blosc", &DataType::UInt8),
            serde_json::json!([{"name": "blosc", "configuration": {
                "cname": "zstd", "clevel": 5, "shuffle": "bitshuffle", "typesize": 1, "blocksize": 0}}])
        );
        assert_eq!(
            codecs("blosc", &DataType::Int64)[0]["configuration"]["shuffle"],
            "shuffle"
        );
    }

    #[test]
    fn bad_compressors_name_the_known_ones() {
        let err = parse_compressor("snappy").unwrap_err();
        assert!(err.contains("unknown compressor `snappy`"), "{err}");
        assert!(
            err.contains("zstd, gzip, zlib, bz2, lzma, lz4, blosc, none"),
            "{err}"
        );
        assert!(parse_compressor("gzip:10").unwrap_err().contains("0 to 9"));
        assert!(
            parse_compressor("gzip:1:2")
                .unwrap_err()
                .contains("at most 1 option")
        );
        assert!(
            parse_compressor("blosc:snappy")
                .unwrap_err()
                .contains("lz4, lz4hc")
        );
        assert!(
            parse_compressor("blosc:lz4:5:byteshuffle")
                .unwrap_err()
                .contains("bitshuffle")
        );
        assert!(parse_compressor("none:1").is_err());
        let err = parse(&["--compressor", "zstd", "--codecs", "[\"bytes\"]"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::ArgumentConflict);
    }

    #[test]
    fn codecs_are_json_lists_of_known_codecs() {
        let codecs =
            parse_codecs(r#"["bytes", {"name": "gzip", "configuration": {"level": 1}}]"#).unwrap();
        assert_eq!(codecs[0].name, "bytes");
        assert_eq!(codecs[1].configuration.as_ref().unwrap()["level"], 1);
        let err = parse_codecs(r#"["bytes", "snappy"]"#).unwrap_err();
        assert!(err.contains("unknown codec `snappy`"), "{err}");
        assert!(
            err.contains("known codecs: bytes,") && err.contains("zstd"),
            "{err}"
        );
        assert!(parse_codecs("[]").unwrap_err().contains("empty"));
        assert!(
            parse_codecs("{\"name\": \"bytes\"}")
                .unwrap_err()
                .contains("list")
        );
        assert!(parse_codecs(r#"[{"name": "gzip", "configuration": {"level": 99}}]"#).is_err());
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("codecs.json");
        std::fs::write(&file, r#"["bytes", "crc32c"]"#).unwrap();
        let codecs = parse_codecs(&format!("@{}", file.display())).unwrap();
        assert_eq!(codecs[1].name, "crc32c");
        assert!(
            parse_codecs("@/nonexistent/codecs.json")
                .unwrap_err()
                .contains("cannot read")
        );
    }

    #[test]
    fn chunk_key_encodings_and_dimension_names_parse() {
        let args = parse(&["--chunk-key-encoding", "v2", "--dimension-names", "t,,x"]).unwrap();
        assert_eq!(
            args.chunk_key_encoding,
            Some(ChunkKeyEncoding::V2 {
                separator: Separator::Dot
            })
        );
        assert_eq!(
            args.dimension_names,
            Some(vec![Some("t".into()), None, Some("x".into())])
        );
        assert_eq!(
            parse_chunk_key_encoding("default:.").unwrap(),
            ChunkKeyEncoding::Default {
                separator: Separator::Dot
            }
        );
        assert_eq!(
            parse_chunk_key_encoding("default").unwrap(),
            ChunkKeyEncoding::Default {
                separator: Separator::Slash
            }
        );
        assert!(
            parse_chunk_key_encoding("v2:-")
                .unwrap_err()
                .contains("separator")
        );
        assert!(
            parse_chunk_key_encoding("nested")
                .unwrap_err()
                .contains("default, v2")
        );
        assert!(parse(&["--format", "v4"]).is_err());
        assert_eq!(
            parse(&["--format", "v3-draft-2022"]).unwrap().format,
            Some(ZarrFormat::V3Draft2022)
        );
    }

    #[test]
    fn attributes_are_json_objects() {
        let attrs = parse_attributes(r#"{"units": "K", "scale": 2}"#).unwrap();
        assert_eq!(attrs["units"], "K");
        assert!(parse_attributes("[1]").unwrap_err().contains("JSON object"));
        assert!(parse_attributes("{").unwrap_err().contains("not JSON"));
    }

    #[test]
    fn fill_values_parse_per_data_type() {
        let fill = |text: &str, data_type: &DataType| {
            parse_fill_value(text, data_type)
                .unwrap()
                .as_bytes()
                .to_vec()
        };
        assert_eq!(fill("7", &DataType::UInt16), 7u16.to_ne_bytes());
        assert_eq!(fill("-1", &DataType::Int8), [0xff]);
        assert_eq!(fill("1.5", &DataType::Float32), 1.5f32.to_ne_bytes());
        assert!(f64::from_ne_bytes(fill("nan", &DataType::Float64).try_into().unwrap()).is_nan());
        assert_eq!(
            fill("-inf", &DataType::Float32),
            f32::NEG_INFINITY.to_ne_bytes()
        );
        assert_eq!(fill("true", &DataType::Bool), [1]);
        let err = parse_fill_value("300", &DataType::UInt8)
            .unwrap_err()
            .to_string();
        assert!(err.contains("`300`") && err.contains("uint8"), "{err}");
        assert!(parse_fill_value("x", &DataType::Float32).is_err());
        // A string type takes the text itself, even when it looks like JSON.
        assert!(parse_fill_value("hello", &DataType::String).is_ok());
        assert!(parse_fill_value("5", &DataType::String).is_ok());
    }

    #[test]
    fn data_types_take_v3_names_and_numpy_strings() {
        let dt = |text: &str| parse_data_type(text).unwrap();
        assert_eq!(dt("uint16").data_type, DataType::UInt16);
        assert_eq!(dt("string").data_type, DataType::String);
        assert_eq!(dt("r24").data_type, DataType::RawBits(24));
        assert_eq!(
            dt("<u2"),
            DataTypeArg {
                data_type: DataType::UInt16,
                big_endian: false
            }
        );
        assert_eq!(
            dt(">f8"),
            DataTypeArg {
                data_type: DataType::Float64,
                big_endian: true
            }
        );
        assert_eq!(dt("f4").data_type, DataType::Float32);
        assert_eq!(dt("|S10").data_type, DataType::FixedBytes(10));
        assert_eq!(dt("S10").data_type, DataType::FixedBytes(10));
        assert_eq!(dt("<U5").data_type, DataType::FixedUtf32(20));
        assert_eq!(dt("?").data_type, DataType::Bool);
        let ns = DataType::NumpyDateTime64 {
            unit: zarrkit::metadata::TimeUnit::Nanosecond,
            scale_factor: 1,
        };
        assert_eq!(dt("M8[ns]").data_type, ns);
        assert_eq!(dt("datetime64[ns]").data_type, ns);
        assert_eq!(
            dt(r#"{"name": "numpy.datetime64", "configuration": {"unit": "ns", "scale_factor": 1}}"#)
                .data_type,
            ns
        );
        assert!(matches!(
            dt(r#"[["a", "<i4"], ["b", "<f8"]]"#).data_type,
            DataType::Struct(_)
        ));
        let err = parse_data_type("float128x").unwrap_err();
        assert!(err.contains("unknown data type `float128x`"), "{err}");
        assert!(parse_data_type("<q9").is_err());
    }

    #[test]
    fn automatic_chunks_match_zarr_python() {
        // zarr-python 3.1.6: `zarr.core.chunk_grids._guess_chunks(shape, itemsize)`.
        assert_eq!(guess_chunks(&[1000, 1000], 8, MAX_CHUNK_BYTES), [250, 250]);
        assert_eq!(
            guess_chunks(&[512, 512, 512], 4, MAX_CHUNK_BYTES),
            [64, 64, 128]
        );
        assert_eq!(guess_chunks(&[100], 1, MAX_CHUNK_BYTES), [100]);
        assert_eq!(guess_chunks(&[10_000_000], 2, MAX_CHUNK_BYTES), [312_500]);
        assert_eq!(guess_chunks(&[0, 5], 4, MAX_CHUNK_BYTES), [1, 5]);
        assert_eq!(guess_chunks(&[2048, 2048], 1, MAX_CHUNK_BYTES), [512, 1024]);
        assert_eq!(
            guess_chunks(&[7, 1000, 1000], 2, MAX_CHUNK_BYTES),
            [2, 250, 500]
        );
        assert_eq!(guess_chunks(&[], 4, MAX_CHUNK_BYTES), Vec::<u64>::new());
    }

    fn layout(args: &[&str], shape: &[u64], data_type: &DataType) -> anyhow::Result<Layout> {
        let args = parse(args).unwrap();
        args.layout(
            args.format.unwrap_or(ZarrFormat::V3),
            shape,
            data_type,
            false,
            None,
        )
    }

    #[test]
    fn shards_wrap_the_inner_codecs() {
        let layout = layout(
            &[
                "--chunks",
                "32,32",
                "--shards",
                "128,64",
                "--compressor",
                "gzip:1",
            ],
            &[256, 256],
            &DataType::Float32,
        )
        .unwrap();
        assert_eq!(layout.chunk_grid.chunk_shape().unwrap()[0].get(), 128);
        let codecs = json(layout.codecs.as_ref().unwrap());
        assert_eq!(
            codecs,
            serde_json::json!([{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [32, 32],
                "codecs": [
                    {"name": "bytes", "configuration": {"endian": "little"}},
                    {"name": "gzip", "configuration": {"level": 1}}],
                "index_codecs": [
                    {"name": "bytes", "configuration": {"endian": "little"}},
                    {"name": "crc32c"}],
                "index_location": "end"}}])
        );
    }

    #[test]
    fn chunks_must_divide_shards_and_match_the_shape() {
        let err = layout(
            &["--chunks", "64,60", "--shards", "128,128"],
            &[256, 256],
            &DataType::UInt8,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("in dimension 1, 128 is not a multiple of 60"),
            "{err}"
        );
        let err = layout(&["--chunks", "64"], &[256, 256], &DataType::UInt8)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--chunks 64 has 1 dimension for an array of 2 dimensions"),
            "{err}"
        );
        let err = layout(
            &["--shards", "64,64", "--format", "v2"],
            &[256, 256],
            &DataType::UInt8,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("no sharding"), "{err}");
        let err = layout(&["--dimension-names", "a"], &[2, 2], &DataType::UInt8)
            .unwrap_err()
            .to_string();
        assert!(err.contains("1 name for an array of 2 dimensions"), "{err}");
        // Automatic inner chunks divide the shard.
        let layout = layout(&["--shards", "100,100"], &[1000, 1000], &DataType::Float64).unwrap();
        let codecs = json(layout.codecs.as_ref().unwrap());
        let inner = codecs[0]["configuration"]["chunk_shape"]
            .as_array()
            .unwrap()
            .clone();
        assert!(
            inner.iter().all(|n| 100 % n.as_u64().unwrap() == 0),
            "{inner:?}"
        );
    }

    #[test]
    fn defaults_follow_zarr_python_and_the_library() {
        let layout = layout(&[], &[1000, 1000], &DataType::Float64).unwrap();
        assert_eq!(
            layout
                .chunk_grid
                .chunk_shape()
                .unwrap()
                .iter()
                .map(|n| n.get())
                .collect::<Vec<_>>(),
            [250, 250]
        );
        // The library's default codecs (bytes + zstd level 0) are left to it.
        assert!(layout.codecs.is_none() && layout.fill_value.is_none());
        let metadata = layout
            .builder(&[1000, 1000], DataType::Float64)
            .build_metadata(&zarrkit::NodePath::root())
            .unwrap();
        assert_eq!(
            json(&metadata.codecs),
            serde_json::json!([
                {"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "zstd", "configuration": {"level": 0, "checksum": false}}])
        );
    }

    #[test]
    fn big_endian_types_and_compressors_keep_the_serializer() {
        let args = parse(&["--compressor", "zstd:3"]).unwrap();
        let layout = args
            .layout(ZarrFormat::V3, &[10], &DataType::UInt16, true, None)
            .unwrap();
        assert_eq!(
            json(layout.codecs.as_ref().unwrap()),
            serde_json::json!([
                {"name": "bytes", "configuration": {"endian": "big"}},
                {"name": "zstd", "configuration": {"level": 3, "checksum": false}}])
        );
        // The string type keeps its `vlen-utf8`.
        let layout = parse(&["--compressor", "gzip"])
            .unwrap()
            .layout(ZarrFormat::V3, &[10], &DataType::String, false, None)
            .unwrap();
        assert_eq!(layout.codecs.as_ref().unwrap()[0].name, "vlen-utf8");
        assert_eq!(layout.codecs.as_ref().unwrap()[1].name, "gzip");
    }

    #[test]
    fn a_source_fills_in_what_is_not_given() {
        let source = ArrayBuilder::new(&[100, 100], DataType::Int32, &[10, 10])
            .format(ZarrFormat::V2)
            .dimension_names(["y", "x"])
            .fill_value(-1i32)
            .build_metadata(&zarrkit::NodePath::root())
            .unwrap();
        let source = Source {
            metadata: &source,
            format: ZarrFormat::V2,
        };
        let args = parse(&["--compressor", "gzip:2"]).unwrap();
        let layout = args
            .layout(
                ZarrFormat::V2,
                &[100, 100],
                &DataType::Int32,
                false,
                Some(source),
            )
            .unwrap();
        assert_eq!(layout.chunk_grid.chunk_shape().unwrap()[0].get(), 10);
        assert_eq!(layout.fill_value.unwrap().as_bytes(), (-1i32).to_ne_bytes());
        assert_eq!(layout.dimension_names.unwrap()[1].as_deref(), Some("x"));
        assert_eq!(layout.codecs.as_ref().unwrap()[1].name, "gzip");
        assert_eq!(
            layout.chunk_key_encoding,
            Some(ChunkKeyEncoding::V2 {
                separator: Separator::Dot
            })
        );
        // Sharding a source keeps its chunks as the inner chunks.
        let layout = parse(&["--shards", "50,50"])
            .unwrap()
            .layout(
                ZarrFormat::V3,
                &[100, 100],
                &DataType::Int32,
                false,
                Some(source),
            )
            .unwrap();
        let codecs = json(layout.codecs.as_ref().unwrap());
        assert_eq!(
            codecs[0]["configuration"]["chunk_shape"],
            serde_json::json!([10, 10])
        );
        assert_eq!(layout.chunk_key_encoding, None);
    }
}
