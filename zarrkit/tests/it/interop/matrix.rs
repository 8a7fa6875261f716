//! Interop with the reference implementations, zarr-python 3.1 and tensorstore.
//!
//! Each direction writes a matrix of arrays and groups with one side and
//! reads it with the other, comparing every element bit for bit: every data
//! type, every codec and option, every chunk key encoding, every form of fill
//! value, partial edge chunks, 0-d and zero-length arrays, missing chunks,
//! dimension names with nulls, and nested groups with attributes.
//!
//! - `testdata/generate/interop_write.py` writes with zarr-python and
//!   tensorstore; zarrkit reads.
//! - zarrkit writes; `testdata/generate/interop_read.py` reads with both.
//!
//! The two sides exchange a `manifest.json` and each array's values as raw
//! little-endian C-order bytes (`expected/<id>.bin`).
//!
//! The tests need a Python with the pinned packages of
//! `scripts/requirements.txt`, named by `ZARRKIT_PYTHON`; `scripts/test.sh`
//! creates it. Without it they skip, saying so on stderr, unless
//! `ZARRKIT_REQUIRE_INTEROP=1` (set by `scripts/test.sh` and CI).

use half::f16;
use num_complex::Complex;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use zarrkit::metadata::{
    ChunkKeyEncoding, DataType, ExtensionObject, FillValue, JsonMap, Separator,
};
use zarrkit::store::{FilesystemStore, Store};
use zarrkit::{Array, Element, Group, Region};

const HOW: &str =
    "set ZARRKIT_PYTHON to a Python with zarr 3.1 and tensorstore (scripts/test.sh does this)";

/// The Python with zarr-python and tensorstore, or `None` to skip.
///
/// # Panics
/// If `ZARRKIT_REQUIRE_INTEROP=1` and `ZARRKIT_PYTHON` is unset: CI must not
/// pass by skipping.
fn reference_python() -> Option<PathBuf> {
    if let Some(python) = std::env::var_os("ZARRKIT_PYTHON").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(python));
    }
    assert!(
        std::env::var("ZARRKIT_REQUIRE_INTEROP").as_deref() != Ok("1"),
        "ZARRKIT_REQUIRE_INTEROP=1 but ZARRKIT_PYTHON is unset: {HOW}"
    );
    eprintln!("skipping: {HOW}");
    None
}

fn run_script(python: &Path, script: &str, dir: &Path) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/generate")
        .join(script);
    Command::new(python)
        .arg(&script)
        .arg(dir)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run `{} {}`: {e}",
                python.display(),
                script.display()
            )
        })
}

fn describe(output: &Output) -> String {
    format!(
        "{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// An error and its causes, as the CLI prints them.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let _ = write!(out, ": {cause}");
        source = cause.source();
    }
    out
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_string()))
        .unwrap_or_else(|| "a panic without a message".to_string())
}

fn filesystem_store(root: &Path) -> Arc<dyn Store> {
    Arc::new(
        FilesystemStore::new(root)
            .unwrap_or_else(|e| panic!("cannot open a store at {}: {e}", root.display())),
    )
}

fn node_path(path: &str) -> String {
    format!("/{path}")
}

// Element bytes and regions ---------------------------------------------------

/// Converts between native and little-endian byte order in place; the same
/// swap goes both ways. `unit` is the data type's endian unit (the component
/// size for complex numbers).
fn swap_native_little(bytes: &mut [u8], unit: usize) {
    if cfg!(target_endian = "big") && unit > 1 {
        for element in bytes.chunks_exact_mut(unit) {
            element.reverse();
        }
    }
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Calls `f(array_offset, region_offset, len)`, in elements, for each
/// contiguous row of `region` within a C-order array of `shape`.
fn for_each_row(shape: &[u64], region: &Region, mut f: impl FnMut(usize, usize, usize)) {
    let ndim = shape.len();
    if region.is_empty() {
        return;
    }
    if ndim == 0 {
        f(0, 0, 1);
        return;
    }
    let as_usize = |n: u64| usize::try_from(n).expect("test arrays are small");
    let row_len = as_usize(region.shape()[ndim - 1]);
    let mut index = vec![0u64; ndim - 1];
    let mut region_offset = 0;
    loop {
        let mut offset = 0;
        for d in 0..ndim {
            let i = if d + 1 < ndim { index[d] } else { 0 };
            offset = offset * as_usize(shape[d]) + as_usize(region.start()[d] + i);
        }
        f(offset, region_offset, row_len);
        region_offset += row_len;
        // Odometer over every dimension but the last.
        let mut d = ndim - 1;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            if index[d] < region.shape()[d] {
                break;
            }
            index[d] = 0;
        }
    }
}

/// The elements of `region` from a C-order array of `shape`.
fn extract(data: &[u8], shape: &[u64], region: &Region, size: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for_each_row(shape, region, |offset, _, len| {
        out.extend_from_slice(&data[offset * size..(offset + len) * size]);
    });
    out
}

/// Copies `values` (the elements of `region`) into a C-order array of `shape`.
fn paste(data: &mut [u8], shape: &[u64], region: &Region, values: &[u8], size: usize) {
    for_each_row(shape, region, |offset, region_offset, len| {
        data[offset * size..(offset + len) * size]
            .copy_from_slice(&values[region_offset * size..(region_offset + len) * size]);
    });
}

// Values ---------------------------------------------------------------------

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A float for element `i` with hash `h`: distinct values of both signs with
/// fractions, and the special values a careless path mangles.
fn float_value(i: usize, h: u64) -> f64 {
    match i {
        _ if i % 7 == 3 => f64::NAN,
        _ if i % 11 == 5 => f64::INFINITY,
        _ if i % 13 == 6 => f64::NEG_INFINITY,
        _ if i % 17 == 8 => -0.0,
        _ if i % 19 == 9 => -f64::NAN,
        #[allow(clippy::cast_precision_loss)] // below 2^17: exact
        _ => ((h >> 11) % 128_001) as f64 / 64.0 - 1000.0,
    }
}

fn push<T: Element>(out: &mut Vec<u8>, value: T) {
    out.extend_from_slice(&T::as_bytes(std::slice::from_ref(&value)));
}

/// Native bytes of `n` deterministic, distinct-per-element values.
#[allow(clippy::cast_possible_truncation)] // wrapping conversions are the point
fn values(data_type: &DataType, n: usize, seed: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * data_type.size());
    for i in 0..n {
        let h = splitmix64(i as u64 + seed);
        let h2 = splitmix64((n - 1 - i) as u64 + seed + 1000);
        match data_type {
            DataType::Bool => push(&mut out, (h >> 17) & 1 == 1),
            DataType::Int8 => push(&mut out, h as i8),
            DataType::Int16 => push(&mut out, h as i16),
            DataType::Int32 => push(&mut out, h as i32),
            DataType::Int64 => push(&mut out, h as i64),
            DataType::UInt8 => push(&mut out, h as u8),
            DataType::UInt16 => push(&mut out, h as u16),
            DataType::UInt32 => push(&mut out, h as u32),
            DataType::UInt64 => push(&mut out, h),
            DataType::Float16 => push(&mut out, f16::from_f64(float_value(i, h) / 100.0)),
            DataType::Float32 => push(&mut out, float_value(i, h) as f32),
            DataType::Float64 => push(&mut out, float_value(i, h)),
            DataType::Complex64 => push(
                &mut out,
                Complex::new(float_value(i, h) as f32, float_value(n - 1 - i, h2) as f32),
            ),
            DataType::Complex128 => push(
                &mut out,
                Complex::new(float_value(i, h), float_value(n - 1 - i, h2)),
            ),
            other => panic!("no test values for {other:?}"),
        }
    }
    out
}

fn one<T: Element>(value: T) -> Vec<u8> {
    T::as_bytes(std::slice::from_ref(&value)).into_owned()
}

// zarrkit reads ---------------------------------------------------------------

fn u64s(value: &Value) -> Vec<u64> {
    value
        .as_array()
        .expect("a list in the manifest")
        .iter()
        .map(|v| v.as_u64().expect("a non-negative integer in the manifest"))
        .collect()
}

/// Dimension names with all-null lists as absent: both mean "unnamed", and
/// tensorstore drops all-null lists.
fn normalized_dimension_names(names: Option<Vec<Option<String>>>) -> Option<Vec<Option<String>>> {
    names.filter(|names| names.iter().any(Option::is_some))
}

fn describe_elements(bytes: &[u8], size: usize, unit: usize) -> String {
    bytes
        .chunks(size)
        .map(|e| {
            e.chunks(unit)
                .map(|u| {
                    let mut u = u.to_vec();
                    u.reverse();
                    format!("0x{}", to_hex(&u))
                })
                .collect::<Vec<_>>()
                .join("+")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Compares little-endian element bytes; describes the first difference.
fn compare_elements(got: &[u8], expected: &[u8], data_type: &DataType) -> Option<String> {
    if got == expected {
        return None;
    }
    let size = data_type.size();
    if got.len() != expected.len() {
        return Some(format!(
            "read {} bytes, expected {}",
            got.len(),
            expected.len()
        ));
    }
    let differing: Vec<usize> = (0..got.len() / size)
        .filter(|&i| got[i * size..(i + 1) * size] != expected[i * size..(i + 1) * size])
        .collect();
    let first = differing[0];
    let unit = data_type.endian_unit();
    Some(format!(
        "{} of {} elements differ; first at linear index {first}: read {}, expected {}",
        differing.len(),
        got.len() / size,
        describe_elements(&got[first * size..(first + 1) * size], size, unit),
        describe_elements(&expected[first * size..(first + 1) * size], size, unit),
    ))
}

/// Every way zarrkit's view of one array differs from the manifest.
fn check_array(store: Arc<dyn Store>, dir: &Path, entry: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let path = entry["path"].as_str().expect("path");
    let array = match Array::open(store, &node_path(path)) {
        Ok(array) => array,
        Err(e) => return vec![format!("cannot open: {}", error_chain(&e))],
    };
    let shape = u64s(&entry["shape"]);
    if array.shape() != shape.as_slice() {
        problems.push(format!("shape is {:?}, expected {shape:?}", array.shape()));
    }
    let data_type_name = entry["data_type"].as_str().expect("data_type");
    if array.data_type().name() != data_type_name {
        problems.push(format!(
            "data type is `{}`, expected `{data_type_name}`",
            array.data_type().name()
        ));
    }
    let chunk_shape = u64s(&entry["chunk_shape"]);
    if array.chunk_shape() != chunk_shape.as_slice() {
        problems.push(format!(
            "chunk shape is {:?}, expected {chunk_shape:?}",
            array.chunk_shape()
        ));
    }
    let unit = array.data_type().endian_unit();
    let mut fill = array.fill_value().as_bytes().to_vec();
    swap_native_little(&mut fill, unit);
    let fill_hex = entry["fill_value_hex"].as_str().expect("fill_value_hex");
    if to_hex(&fill) != fill_hex {
        problems.push(format!(
            "fill value bytes (little endian) are {}, expected {fill_hex} (from {})",
            to_hex(&fill),
            entry["fill_value"]
        ));
    }
    let attributes = Value::Object(array.attributes().clone());
    if attributes != entry["attributes"] {
        problems.push(format!(
            "attributes are {attributes}, expected {}",
            entry["attributes"]
        ));
    }
    let expected_names: Option<Vec<Option<String>>> =
        serde_json::from_value(entry["dimension_names"].clone()).expect("dimension_names");
    let names = normalized_dimension_names(array.metadata().dimension_names.clone());
    if names != normalized_dimension_names(expected_names.clone()) {
        problems.push(format!(
            "dimension names are {names:?}, expected {expected_names:?}"
        ));
    }
    if !problems.is_empty() {
        // The values cannot be compared meaningfully.
        return problems;
    }

    let expected = std::fs::read(dir.join(entry["expected"].as_str().expect("expected")))
        .expect("the expected values");
    let whole = Region::whole(&shape);
    match array.read_region_bytes(&whole) {
        Ok(mut bytes) => {
            swap_native_little(&mut bytes, unit);
            if let Some(difference) = compare_elements(&bytes, &expected, array.data_type()) {
                problems.push(format!("reading {whole}: {difference}"));
            }
        }
        Err(e) => problems.push(format!("cannot read {whole}: {}", error_chain(&e))),
    }
    // A region that starts inside the first chunk: partial chunk decoding.
    let start: Vec<u64> = shape.iter().map(|&n| u64::from(n > 1)).collect();
    let inner_shape: Vec<u64> = shape.iter().zip(&start).map(|(n, s)| n - s).collect();
    let inner = Region::new(start, inner_shape);
    if !inner.is_empty() && inner != whole {
        match array.read_region_bytes(&inner) {
            Ok(mut bytes) => {
                swap_native_little(&mut bytes, unit);
                let expected = extract(&expected, &shape, &inner, array.data_type().size());
                if let Some(difference) = compare_elements(&bytes, &expected, array.data_type()) {
                    problems.push(format!("reading {inner}: {difference}"));
                }
            }
            Err(e) => problems.push(format!("cannot read {inner}: {}", error_chain(&e))),
        }
    }
    problems
}

fn check_group(store: Arc<dyn Store>, entry: &Value) -> Vec<String> {
    let path = entry["path"].as_str().expect("path");
    let group = match Group::open(store, &node_path(path)) {
        Ok(group) => group,
        Err(e) => return vec![format!("cannot open: {}", error_chain(&e))],
    };
    let mut problems = Vec::new();
    let attributes = Value::Object(group.attributes().clone());
    if attributes != entry["attributes"] {
        problems.push(format!(
            "attributes are {attributes}, expected {}",
            entry["attributes"]
        ));
    }
    match group.children() {
        Ok(children) => {
            let mut names: Vec<String> = children
                .iter()
                .map(|c| c.path().name().to_string())
                .collect();
            names.sort();
            let expected: Vec<String> =
                serde_json::from_value(entry["children"].clone()).expect("children");
            if names != expected {
                problems.push(format!("children are {names:?}, expected {expected:?}"));
            }
        }
        Err(e) => problems.push(format!("cannot list children: {}", error_chain(&e))),
    }
    problems
}

/// The node's document on one line, for failure messages.
fn document(dir: &Path, entry: &Value) -> String {
    let path = dir
        .join(entry["store"].as_str().unwrap_or_default())
        .join(entry["path"].as_str().unwrap_or_default())
        .join("zarr.json");
    std::fs::read(&path)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .map_or_else(|| format!("<no {}>", path.display()), |v| v.to_string())
}

#[test]
fn zarrkit_reads_every_array_and_group_zarr_python_and_tensorstore_write() {
    let Some(python) = reference_python() else {
        return;
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let output = run_script(&python, "interop_write.py", dir.path());
    assert!(
        output.status.success(),
        "interop_write.py failed: {}",
        describe(&output)
    );
    let manifest: Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("manifest.json")).expect("manifest.json"),
    )
    .expect("a JSON manifest");
    let arrays = manifest["arrays"].as_array().expect("arrays");
    let groups = manifest["groups"].as_array().expect("groups");
    // The matrix: every writer, and enough cases that a truncated manifest
    // cannot pass.
    for writer in ["zarr-python", "tensorstore"] {
        let n = arrays.iter().filter(|a| a["writer"] == writer).count();
        assert!(n > 90, "only {n} arrays written by {writer}");
    }
    assert!(groups.len() >= 10, "only {} groups", groups.len());

    let mut stores: BTreeMap<String, Arc<dyn Store>> = BTreeMap::new();
    let mut failures = Vec::new();
    for (entry, is_array) in arrays
        .iter()
        .map(|a| (a, true))
        .chain(groups.iter().map(|g| (g, false)))
    {
        let store_name = entry["store"].as_str().expect("store").to_string();
        let store = Arc::clone(
            stores
                .entry(store_name.clone())
                .or_insert_with(|| filesystem_store(&dir.path().join(&store_name))),
        );
        let checked = std::panic::catch_unwind(AssertUnwindSafe(|| {
            if is_array {
                check_array(store, dir.path(), entry)
            } else {
                check_group(store, entry)
            }
        }))
        .unwrap_or_else(|panic| vec![format!("zarrkit panicked: {}", panic_message(&*panic))]);
        if !checked.is_empty() {
            failures.push(format!(
                "{} ({}):\n      {}\n      zarr.json: {}",
                entry["id"].as_str().unwrap_or_default(),
                entry["writer"].as_str().unwrap_or_default(),
                checked.join("\n      "),
                document(dir.path(), entry)
            ));
        }
    }
    // The hierarchy as a whole: walking zarr-python's root finds every node
    // below it, arrays and groups, and nothing else.
    let in_zarr_python = |entry: &&Value| entry["store"] == "zarr_python" && entry["path"] != "";
    let expected: BTreeSet<String> = arrays
        .iter()
        .chain(groups)
        .filter(in_zarr_python)
        .map(|entry| node_path(entry["path"].as_str().expect("path")))
        .collect();
    match Group::open(Arc::clone(&stores["zarr_python"]), "/").and_then(|root| root.walk()) {
        Ok(nodes) => {
            let walked: BTreeSet<String> = nodes
                .iter()
                .map(|n| n.path().as_str().to_string())
                .collect();
            if walked != expected {
                failures.push(format!(
                    "walking zarr_python's root: found but not written {:?}; written but not found {:?}",
                    walked.difference(&expected).collect::<Vec<_>>(),
                    expected.difference(&walked).collect::<Vec<_>>()
                ));
            }
        }
        Err(e) => failures.push(format!(
            "cannot walk zarr_python's root: {}",
            error_chain(&e)
        )),
    }
    assert!(
        failures.is_empty(),
        "zarrkit reads {} of {} nodes differently from their writers:\n  - {}",
        failures.len(),
        arrays.len() + groups.len(),
        failures.join("\n  - ")
    );
}

// zarrkit writes --------------------------------------------------------------

/// Which parts of an array are written.
enum Written {
    All,
    Nothing,
    Regions(Vec<Region>),
}

/// The Python readers that check an array, when not all of them.
type Readers = Option<&'static [&'static str]>;

/// One array for zarrkit to write.
struct Case {
    group: &'static str,
    name: String,
    data_type: DataType,
    shape: Vec<u64>,
    chunk_shape: Vec<u64>,
    /// Codecs as v3 JSON; `None` for the builder's default.
    codecs: Option<Value>,
    /// Native bytes; `None` for the builder's default (zero).
    fill: Option<Vec<u8>>,
    chunk_key_encoding: Option<ChunkKeyEncoding>,
    dimension_names: Option<Vec<Option<String>>>,
    attributes: JsonMap,
    written: Written,
    seed: u64,
    /// The readers to check with, when not both.
    readers: Readers,
}

impl Case {
    fn new(
        group: &'static str,
        name: &str,
        data_type: DataType,
        shape: &[u64],
        chunk_shape: &[u64],
    ) -> Self {
        Self {
            group,
            name: name.to_string(),
            data_type,
            shape: shape.to_vec(),
            chunk_shape: chunk_shape.to_vec(),
            codecs: None,
            fill: None,
            chunk_key_encoding: None,
            dimension_names: None,
            attributes: JsonMap::new(),
            written: Written::All,
            seed: 0,
            readers: None,
        }
    }

    fn codecs(mut self, codecs: Value) -> Self {
        self.codecs = Some(codecs);
        self
    }

    fn fill(mut self, fill: Vec<u8>) -> Self {
        self.fill = Some(fill);
        self
    }

    fn written(mut self, written: Written) -> Self {
        self.written = written;
        self
    }

    fn path(&self) -> String {
        format!("{}/{}", self.group, self.name)
    }

    fn num_elements(&self) -> usize {
        usize::try_from(self.shape.iter().product::<u64>()).expect("small")
    }

    fn fill_bytes(&self) -> Vec<u8> {
        self.fill
            .clone()
            .unwrap_or_else(|| vec![0; self.data_type.size()])
    }

    /// The native bytes of the values the array holds after writing.
    fn expected(&self, data: &[u8]) -> Vec<u8> {
        let regions = match &self.written {
            Written::All => return data.to_vec(),
            Written::Nothing => &[][..],
            Written::Regions(regions) => regions.as_slice(),
        };
        let fill = self.fill_bytes();
        let mut out: Vec<u8> = fill.iter().copied().cycle().take(data.len()).collect();
        let size = self.data_type.size();
        for region in regions {
            paste(
                &mut out,
                &self.shape,
                region,
                &extract(data, &self.shape, region, size),
                size,
            );
        }
        out
    }
}

fn codec_objects(codecs: &Value) -> Vec<ExtensionObject> {
    codecs
        .as_array()
        .expect("a codec list")
        .iter()
        .map(|codec| {
            let name = codec["name"].as_str().expect("a codec name");
            match codec.get("configuration").and_then(Value::as_object) {
                Some(configuration) => {
                    ExtensionObject::with_configuration(name, configuration.clone())
                }
                None => ExtensionObject::new(name),
            }
        })
        .collect()
}

fn bytes_codec(data_type: &DataType, endian: &str) -> Value {
    if data_type.size() == 1 {
        json!({"name": "bytes"})
    } else {
        json!({"name": "bytes", "configuration": {"endian": endian}})
    }
}

fn attributes(value: Value) -> JsonMap {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn rich_attributes() -> JsonMap {
    attributes(json!({
        "title": "zarrkit interop",
        "count": 3,
        "pi": std::f64::consts::PI,
        "negative": -17,
        "big": 9_007_199_254_740_993_u64,
        "max_u64": u64::MAX,
        "nested": {"a": [1, 2, {"b": null}], "t": true, "f": false, "deep": {"deeper": [[1], [2, [3]]]}},
        "unicode": "Grüße, 世界 🌍 e\u{301}",
        "empty_list": [],
        "empty_object": {},
    }))
}

const ALL_DATA_TYPES: [DataType; 14] = [
    DataType::Bool,
    DataType::Int8,
    DataType::Int16,
    DataType::Int32,
    DataType::Int64,
    DataType::UInt8,
    DataType::UInt16,
    DataType::UInt32,
    DataType::UInt64,
    DataType::Float16,
    DataType::Float32,
    DataType::Float64,
    DataType::Complex64,
    DataType::Complex128,
];

#[allow(clippy::too_many_lines)] // one flat list of cases reads best
fn write_cases() -> Vec<Case> {
    let mut cases = Vec::new();

    for dt in ALL_DATA_TYPES {
        // The builder's default codecs (bytes + zstd).
        cases.push(Case::new("dtypes", &dt.name(), dt, &[17, 23], &[5, 7]));
    }
    for dt in ALL_DATA_TYPES.into_iter().filter(|dt| dt.size() > 1) {
        let codecs =
            json!([bytes_codec(&dt, "big"), {"name": "gzip", "configuration": {"level": 1}}]);
        cases.push(Case::new("big_endian", &dt.name(), dt, &[9, 4], &[4, 3]).codecs(codecs));
    }

    let transpose = |order: Value| json!({"name": "transpose", "configuration": {"order": order}});
    cases.push(
        Case::new(
            "transpose",
            "int32_3d_201",
            DataType::Int32,
            &[4, 5, 6],
            &[3, 2, 4],
        )
        .codecs(
            json!([transpose(json!([2, 0, 1])), bytes_codec(&DataType::Int32, "little"),
                   {"name": "gzip", "configuration": {"level": 5}}]),
        ),
    );
    cases.push(
        Case::new(
            "transpose",
            "float16_3d_120_big",
            DataType::Float16,
            &[5, 3, 4],
            &[2, 3, 3],
        )
        .codecs(
            json!([transpose(json!([1, 2, 0])), bytes_codec(&DataType::Float16, "big"),
                           {"name": "zstd", "configuration": {"level": 3, "checksum": false}}]),
        ),
    );
    cases.push(
        Case::new(
            "transpose",
            "complex64_2d_10_big",
            DataType::Complex64,
            &[7, 6],
            &[3, 4],
        )
        .codecs(json!([
            transpose(json!([1, 0])),
            bytes_codec(&DataType::Complex64, "big")
        ])),
    );
    cases.push(
        Case::new("transpose", "bool_2d_10", DataType::Bool, &[6, 5], &[4, 4])
            .codecs(json!([transpose(json!([1, 0])), {"name": "bytes"}])),
    );

    for level in [0, 1, 9] {
        cases.push(
            Case::new("gzip", &format!("level_{level}"), DataType::UInt16, &[30], &[8]).codecs(
                json!([bytes_codec(&DataType::UInt16, "little"), {"name": "gzip", "configuration": {"level": level}}]),
            ),
        );
    }
    for (level, checksum) in [
        (0, false),
        (1, false),
        (-5, false),
        (19, false),
        (3, true),
        (-1, true),
    ] {
        let name =
            format!("level_{level}{}", if checksum { "_checksum" } else { "" }).replace('-', "neg");
        cases.push(
            Case::new("zstd", &name, DataType::Float64, &[30], &[8]).codecs(json!([
                bytes_codec(&DataType::Float64, "little"),
                {"name": "zstd", "configuration": {"level": level, "checksum": checksum}}
            ])),
        );
    }

    let blosc = |cname: &str, shuffle: &str, typesize: usize, clevel: u32, blocksize: u64| {
        json!({"name": "blosc", "configuration": {
            "cname": cname, "clevel": clevel, "shuffle": shuffle, "typesize": typesize, "blocksize": blocksize}})
    };
    let blosc_types = [DataType::Int32, DataType::Float64, DataType::UInt16];
    for (i, cname) in ["lz4", "lz4hc", "blosclz", "zstd", "zlib"]
        .into_iter()
        .enumerate()
    {
        for (j, shuffle) in ["noshuffle", "shuffle", "bitshuffle"]
            .into_iter()
            .enumerate()
        {
            let dt = blosc_types[(i + j) % blosc_types.len()].clone();
            let codecs = json!([
                bytes_codec(&dt, "little"),
                blosc(cname, shuffle, dt.size(), 5, 0)
            ]);
            cases.push(
                Case::new(
                    "blosc",
                    &format!("{cname}_{shuffle}"),
                    dt,
                    &[40, 3],
                    &[16, 2],
                )
                .codecs(codecs),
            );
        }
    }
    cases.push(
        Case::new(
            "blosc",
            "blocksize_64_clevel_9",
            DataType::Float32,
            &[200],
            &[96],
        )
        .codecs(json!([
            bytes_codec(&DataType::Float32, "little"),
            blosc("lz4", "shuffle", 4, 9, 64)
        ])),
    );
    cases.push(
        Case::new(
            "blosc",
            "typesize_1_clevel_0",
            DataType::Int64,
            &[50],
            &[16],
        )
        .codecs(json!([
            bytes_codec(&DataType::Int64, "little"),
            blosc("zstd", "bitshuffle", 1, 0, 0)
        ])),
    );

    // One chunk of 2.2 MB, above blosc's threshold for internal threads:
    // written as the only chunk of its write, it is compressed on all the
    // pool's threads, and the readers decode that.
    cases.push(
        Case::new(
            "blosc",
            "one_large_chunk_internal_threads",
            DataType::UInt16,
            &[1100, 1024],
            &[1100, 1024],
        )
        .codecs(json!([
            bytes_codec(&DataType::UInt16, "little"),
            blosc("blosclz", "bitshuffle", 2, 9, 0)
        ])),
    );

    let crc32c = json!({"name": "crc32c"});
    cases.push(
        Case::new("crc32c", "bytes_crc32c", DataType::Int32, &[13], &[5])
            .codecs(json!([bytes_codec(&DataType::Int32, "little"), crc32c])),
    );
    cases.push(
        Case::new("crc32c", "zstd_crc32c", DataType::UInt64, &[13], &[5]).codecs(json!([
            bytes_codec(&DataType::UInt64, "little"),
            {"name": "zstd", "configuration": {"level": 3, "checksum": false}},
            crc32c
        ])),
    );
    cases.push(
        Case::new(
            "crc32c",
            "big_gzip_crc32c",
            DataType::Float32,
            &[13, 2],
            &[5, 2],
        )
        .codecs(json!([
            bytes_codec(&DataType::Float32, "big"),
            {"name": "gzip", "configuration": {"level": 6}},
            crc32c
        ])),
    );

    let encodings = [
        (
            "default_slash",
            ChunkKeyEncoding::Default {
                separator: Separator::Slash,
            },
        ),
        (
            "default_dot",
            ChunkKeyEncoding::Default {
                separator: Separator::Dot,
            },
        ),
        (
            "v2_dot",
            ChunkKeyEncoding::V2 {
                separator: Separator::Dot,
            },
        ),
        (
            "v2_slash",
            ChunkKeyEncoding::V2 {
                separator: Separator::Slash,
            },
        ),
    ];
    for (name, encoding) in encodings {
        let mut case = Case::new("chunk_keys", name, DataType::Int16, &[5, 4, 3], &[2, 3, 2]);
        case.chunk_key_encoding = Some(encoding.clone());
        cases.push(case);
        let mut case = Case::new(
            "chunk_keys",
            &format!("{name}_0d"),
            DataType::Int32,
            &[],
            &[],
        );
        case.chunk_key_encoding = Some(encoding);
        cases.push(case);
    }

    cases.push(Case::new("shapes", "one_d", DataType::UInt32, &[100], &[9]));
    cases.push(Case::new("shapes", "zero_d", DataType::Float64, &[], &[]));
    cases.push(
        Case::new("shapes", "zero_d_missing", DataType::Float32, &[], &[])
            .fill(one(-2.5f32))
            .written(Written::Nothing),
    );
    cases.push(Case::new(
        "shapes",
        "zero_length",
        DataType::Int8,
        &[0, 5],
        &[2, 2],
    ));
    cases.push(
        Case::new(
            "shapes",
            "zero_length_3d",
            DataType::Float32,
            &[3, 0, 4],
            &[2, 2, 2],
        )
        .fill(one(1.0f32)),
    );
    cases.push(Case::new(
        "shapes",
        "chunk_larger_than_array",
        DataType::Int64,
        &[3, 4],
        &[10, 10],
    ));
    cases.push(Case::new(
        "shapes",
        "four_d",
        DataType::UInt8,
        &[3, 2, 4, 5],
        &[2, 2, 3, 2],
    ));
    cases.push(Case::new(
        "shapes",
        "one_element_chunks",
        DataType::Int16,
        &[3, 4],
        &[1, 1],
    ));

    // Missing chunks: only some regions are written, the rest reads as fill.
    let partial = || {
        Written::Regions(vec![
            Region::from_ranges(&[0..5, 0..7]),     // one whole chunk
            Region::from_ranges(&[10..17, 14..23]), // edge chunks
            Region::from_ranges(&[6..8, 2..9]),     // parts of two chunks
        ])
    };
    let fills: Vec<(&str, DataType, Vec<u8>, Readers)> = vec![
        ("nan_float32", DataType::Float32, one(f32::NAN), None),
        ("inf_float64", DataType::Float64, one(f64::INFINITY), None),
        (
            "neg_inf_float64",
            DataType::Float64,
            one(f64::NEG_INFINITY),
            None,
        ),
        (
            "hex_nan_float32",
            DataType::Float32,
            one(f32::from_bits(0x7fc0_0001)),
            None,
        ),
        (
            "hex_nan_float64",
            DataType::Float64,
            one(f64::from_bits(0x7ff8_0000_0000_0123)),
            None,
        ),
        // zarr-python 3.1.6 reads the float16 fill value "0xfe01" as 0xfe00
        // (it drops float16 NaN payloads), so only tensorstore checks this.
        (
            "hex_nan_float16",
            DataType::Float16,
            one(f16::from_bits(0xfe01)),
            Some(&["tensorstore"]),
        ),
        (
            "neg_float16",
            DataType::Float16,
            one(f16::from_f32(-1.5)),
            None,
        ),
        ("zero_int32", DataType::Int32, one(0i32), None),
        ("neg_int16", DataType::Int16, one(-7i16), None),
        ("min_int64", DataType::Int64, one(i64::MIN), None),
        ("max_uint64", DataType::UInt64, one(u64::MAX), None),
        ("max_uint8", DataType::UInt8, one(u8::MAX), None),
        (
            "complex128_1_5_nan",
            DataType::Complex128,
            one(Complex::new(1.5f64, f64::NAN)),
            None,
        ),
        (
            "complex64_inf_neg",
            DataType::Complex64,
            one(Complex::new(f32::INFINITY, -2.25f32)),
            None,
        ),
        ("bool_true", DataType::Bool, one(true), None),
        ("float32_neg_zero", DataType::Float32, one(-0.0f32), None),
    ];
    for (name, dt, fill, readers) in fills {
        let mut case = Case::new("fill_values", name, dt, &[17, 23], &[5, 7])
            .fill(fill)
            .written(partial());
        case.readers = readers;
        cases.push(case);
    }
    cases.push(
        Case::new(
            "fill_values",
            "never_written",
            DataType::Int32,
            &[6, 6],
            &[4, 4],
        )
        .fill(one(-123_456i32))
        .written(Written::Nothing),
    );

    let mut case = Case::new(
        "dimension_names",
        "with_nulls",
        DataType::Int8,
        &[3, 4, 5],
        &[2, 2, 2],
    );
    case.dimension_names = Some(vec![Some("z".into()), None, Some("x".into())]);
    cases.push(case);
    let mut case = Case::new(
        "dimension_names",
        "all_named",
        DataType::Float32,
        &[4, 3],
        &[2, 2],
    );
    case.dimension_names = Some(vec![Some("latitude".into()), Some("longitude".into())]);
    case.attributes = rich_attributes();
    cases.push(case);
    let mut case = Case::new("dimension_names", "all_null", DataType::UInt16, &[4], &[3]);
    case.dimension_names = Some(vec![None]);
    cases.push(case);

    let mut case = Case::new(
        "nested/inner/deep",
        "leaf",
        DataType::Float32,
        &[6, 7],
        &[4, 4],
    );
    case.attributes = rich_attributes();
    cases.push(case);

    for (seed, case) in cases.iter_mut().enumerate() {
        case.seed = seed as u64 + 1;
    }
    cases
}

/// Writes `case` with zarrkit, returning its manifest entry.
fn write_case(store: &Arc<dyn Store>, dir: &Path, case: &Case) -> Value {
    let mut builder = Array::builder(&case.shape, case.data_type.clone(), &case.chunk_shape)
        .attributes(case.attributes.clone());
    if let Some(codecs) = &case.codecs {
        builder = builder.codecs_metadata(codec_objects(codecs));
    }
    if let Some(fill) = &case.fill {
        builder = builder.fill_value_bytes(FillValue::new(fill.clone()));
    }
    if let Some(encoding) = &case.chunk_key_encoding {
        builder = builder.chunk_key_encoding(encoding.clone());
    }
    if let Some(names) = &case.dimension_names {
        builder = builder.dimension_names_opt(names.clone());
    }
    let path = case.path();
    let array = builder
        .create(Arc::clone(store), &node_path(&path))
        .unwrap_or_else(|e| panic!("zarrkit cannot create `{path}`: {}", error_chain(&e)));
    let size = case.data_type.size();
    let data = values(&case.data_type, case.num_elements(), case.seed);
    let regions = match &case.written {
        Written::All => vec![Region::whole(&case.shape)],
        Written::Nothing => Vec::new(),
        Written::Regions(regions) => regions.clone(),
    };
    for region in regions.iter().filter(|r| !r.is_empty()) {
        array
            .write_region_bytes(region, &extract(&data, &case.shape, region, size))
            .unwrap_or_else(|e| {
                panic!(
                    "zarrkit cannot write {region} of `{path}`: {}",
                    error_chain(&e)
                )
            });
    }

    let unit = case.data_type.endian_unit();
    let mut expected = case.expected(&data);
    swap_native_little(&mut expected, unit);
    let file = format!("zarrkit__{}.bin", path.replace('/', "__"));
    std::fs::write(dir.join("expected").join(&file), &expected).expect("write expected values");
    let mut fill = case.fill_bytes();
    swap_native_little(&mut fill, unit);
    let mut entry = json!({
        "id": format!("zarrkit/{path}"),
        "writer": "zarrkit",
        "store": "zarrkit",
        "path": path,
        "data_type": case.data_type.name(),
        "shape": case.shape,
        "chunk_shape": case.chunk_shape,
        "fill_value_hex": to_hex(&fill),
        "dimension_names": case.dimension_names,
        "attributes": case.attributes,
        "expected": format!("expected/{file}"),
    });
    if let Some(readers) = case.readers {
        entry["readers"] = json!(readers);
    }
    entry
}

#[test]
fn zarr_python_and_tensorstore_read_every_array_and_group_zarrkit_writes() {
    let Some(python) = reference_python() else {
        return;
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::create_dir_all(dir.path().join("expected")).expect("expected/");
    let store = filesystem_store(&dir.path().join("zarrkit"));
    let cases = write_cases();

    // The hierarchy: a root group with rich attributes, one group per
    // category, and three levels of nested groups.
    let mut children: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut group_attributes: BTreeMap<String, JsonMap> = BTreeMap::new();
    group_attributes.insert(String::new(), rich_attributes());
    group_attributes.insert(
        "nested".into(),
        attributes(json!({"level": 1, "names": ["a", "b"]})),
    );
    group_attributes.insert(
        "nested/inner".into(),
        attributes(json!({"level": 2, "ünï": {"cödé": "✓"}})),
    );
    group_attributes.insert("nested/inner/deep".into(), JsonMap::new());
    for case in &cases {
        group_attributes
            .entry(case.group.to_string())
            .or_insert_with(|| attributes(json!({"category": case.group})));
    }
    for (path, attrs) in &group_attributes {
        Group::create(Arc::clone(&store), &node_path(path), attrs.clone()).unwrap_or_else(|e| {
            panic!("zarrkit cannot create group `{path}`: {}", error_chain(&e))
        });
        if !path.is_empty() {
            let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
            children
                .entry(parent.to_string())
                .or_default()
                .push(name.to_string());
        }
    }
    let arrays: Vec<Value> = cases
        .iter()
        .map(|case| {
            children
                .entry(case.group.to_string())
                .or_default()
                .push(case.name.clone());
            write_case(&store, dir.path(), case)
        })
        .collect();
    let groups: Vec<Value> = group_attributes
        .iter()
        .map(|(path, attrs)| {
            let mut names = children.get(path).cloned().unwrap_or_default();
            names.sort();
            json!({
                "id": format!("zarrkit/group/{}", if path.is_empty() { "root" } else { path }),
                "writer": "zarrkit",
                "store": "zarrkit",
                "path": path,
                "attributes": attrs,
                "children": names,
            })
        })
        .collect();
    let manifest = json!({"arrays": arrays, "groups": groups});
    std::fs::write(
        dir.path().join("manifest.json"),
        serde_json::to_vec_pretty(&manifest).expect("manifest JSON"),
    )
    .expect("write manifest.json");

    let output = run_script(&python, "interop_read.py", dir.path());
    assert!(
        output.status.success(),
        "zarr-python or tensorstore read {} arrays and {} groups written by zarrkit differently: {}",
        arrays.len(),
        groups.len(),
        describe(&output)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let read_by = |reader: &str| {
        arrays
            .iter()
            .filter(|a| {
                a.get("readers")
                    .is_none_or(|r| r.as_array().is_some_and(|r| r.contains(&json!(reader))))
            })
            .count()
    };
    let summary = format!(
        "checked {} arrays with zarr-python, {} with tensorstore and {} groups",
        read_by("zarr-python"),
        read_by("tensorstore"),
        groups.len()
    );
    assert!(
        stdout.contains(&summary),
        "interop_read.py did not check every array: {}",
        describe(&output)
    );
}

#[test]
fn region_rows_cover_a_region_once_in_c_order() {
    // The helpers that build expected values must be right for the
    // comparisons above to mean anything.
    let shape = [3, 4, 5];
    let data: Vec<u8> = (0..60).collect();
    let region = Region::new(vec![1, 2, 1], vec![2, 2, 3]);
    let got = extract(&data, &shape, &region, 1);
    assert_eq!(got, [31, 32, 33, 36, 37, 38, 51, 52, 53, 56, 57, 58]);
    let mut pasted = vec![0u8; 60];
    paste(&mut pasted, &shape, &region, &got, 1);
    assert_eq!(pasted.iter().filter(|&&b| b != 0).count(), 12);
    assert_eq!(pasted[57], 57);
    assert_eq!(extract(&[7, 9], &[], &Region::whole(&[]), 2), [7, 9]);
    assert!(extract(&data, &[0, 5], &Region::whole(&[0, 5]), 1).is_empty());
}

#[test]
fn test_values_are_distinct_and_include_special_floats() {
    let n = 200;
    let floats = values(&DataType::Float64, n, 1);
    let floats: Vec<u64> = floats
        .chunks_exact(8)
        .map(|b| u64::from_ne_bytes(b.try_into().unwrap()))
        .collect();
    assert!(floats.contains(&f64::INFINITY.to_bits()));
    assert!(floats.contains(&(-0.0f64).to_bits()));
    assert!(
        floats
            .iter()
            .any(|&b| f64::from_bits(b).is_nan() && b >> 63 == 1)
    );
    let finite: std::collections::BTreeSet<u64> = floats
        .iter()
        .copied()
        .filter(|&b| f64::from_bits(b).is_finite())
        .collect();
    assert!(
        finite.len() > n / 2,
        "only {} distinct finite values",
        finite.len()
    );
    let ints = values(&DataType::Int16, n, 1);
    assert!(
        ints.chunks_exact(2)
            .any(|b| i16::from_ne_bytes([b[0], b[1]]) < 0)
    );
}
