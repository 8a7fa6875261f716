//! `zarrkit._zarrkit`: the native half of the Python package, glue over
//! the library as `zarrkit-cli/` is. It opens stores and nodes, converts
//! Python index objects into the library's [`SelectionItem`]s (the
//! selection logic stays in the library) and moves element bytes between
//! the library and NumPy buffers with the GIL released. The Python half
//! (`zarrkit/`) adds zarr-python's API on top: modes, mappings, dtypes.

mod migrate;

use numpy::{IntoPyArray, PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadwriteArray1};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyEllipsis, PyInt, PyList, PySlice, PyTuple};
use std::sync::{Arc, RwLock};
use zarrkit::format::ZarrFormat;
use zarrkit::format::v2::ByteOrder;
use zarrkit::metadata::json::{extension_from_json, fill_value_from_json};
use zarrkit::metadata::{ChunkGrid, DataType, JsonMap, NodeMetadata};
use zarrkit::store::{Store, StoreOptions};
use zarrkit::{Array, Error, Group, Node, NodeKind, Selection, SelectionItem, SelectionMode};

/// The message of `error` with its sources, as the CLI prints it.
fn message(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Raises the exception class `name` of `zarrkit.errors` with `text`.
fn raise(name: &str, text: String) -> PyErr {
    Python::attach(|py| {
        let class = py.import("zarrkit.errors").and_then(|m| m.getattr(name));
        match class.and_then(|c| c.call1((text.clone(),))) {
            Ok(value) => PyErr::from_value(value),
            Err(e) => e,
        }
    })
}

/// The Python exception of a library error: each a subclass of
/// `zarrkit.ZarrkitError` and of the builtin exception Python users catch.
fn py_err(error: Error) -> PyErr {
    let name = match &error {
        Error::NodeNotFound { .. } | Error::WrongNodeKind { .. } => "NodeNotFoundError",
        Error::NodeExists { .. } => "NodeExistsError",
        Error::Selection { .. } | Error::OutOfBounds { .. } | Error::DimensionMismatch { .. } => {
            "SelectionError"
        }
        Error::Metadata { .. }
        | Error::InvalidMetadata { .. }
        | Error::Codecs { .. }
        | Error::InvalidHierarchy { .. }
        | Error::NodePath(_)
        | Error::InvalidInput { .. }
        | Error::InvalidValue { .. }
        | Error::BufferLength { .. } => "InvalidValueError",
        Error::DataTypeMismatch { .. } => "DataTypeError",
        Error::Store(_) | Error::Decode { .. } | Error::Encode { .. } => "StorageError",
        _ => "ZarrkitError",
    };
    raise(name, message(&error))
}

fn invalid(text: impl Into<String>) -> PyErr {
    raise("InvalidValueError", text.into())
}

fn json_to_py(py: Python<'_>, value: &serde_json::Value) -> PyResult<Py<PyAny>> {
    let text = serde_json::to_string(value).map_err(|e| invalid(e.to_string()))?;
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}

fn py_to_json_map(text: &str) -> PyResult<JsonMap> {
    serde_json::from_str(text)
        .map_err(|e| invalid(format!("attributes are not a JSON object: {e}")))
}

/// A store opened by location (a path, a URL, a zip archive).
#[pyclass(module = "zarrkit._zarrkit", frozen)]
struct Store_ {
    store: Arc<dyn Store>,
    location: String,
    /// The `storage_options` it was opened with (a copy), for pickling.
    options: Option<Py<PyDict>>,
}

/// Converts `storage_options` into the library's [`StoreOptions`]:
/// `anon`/`anonymous` turn on unsigned requests, every other key is a
/// backend option given as a string.
fn store_options(options: Option<&Bound<'_, PyDict>>) -> PyResult<StoreOptions> {
    let mut out = StoreOptions::new();
    if let Some(options) = options {
        for (key, value) in options.iter() {
            let key: String = key.extract()?;
            if key == "anon" || key == "anonymous" {
                out = out.anonymous(value.is_truthy()?);
                continue;
            }
            let value: String = if value.is_instance_of::<PyBool>() {
                if value.is_truthy()? { "true" } else { "false" }.to_string()
            } else {
                value.str()?.to_string()
            };
            out.set(&key, value);
        }
    }
    Ok(out)
}

#[pymethods]
impl Store_ {
    /// The store at `location`; a local directory is created when `create`.
    #[new]
    #[pyo3(signature = (location, storage_options=None, create=false))]
    fn new(
        py: Python<'_>,
        location: String,
        storage_options: Option<&Bound<'_, PyDict>>,
        create: bool,
    ) -> PyResult<Self> {
        let options = store_options(storage_options)?;
        let kept = storage_options
            .map(|d| d.copy())
            .transpose()?
            .map(Bound::unbind);
        let loc = location.clone();
        let store = py
            .detach(move || {
                if create {
                    zarrkit::store::open_or_create(&loc, &options)
                } else {
                    zarrkit::store::open(&loc, &options)
                }
            })
            .map_err(|e| py_err(Error::Store(e)))?;
        Ok(Self {
            store,
            location,
            options: kept,
        })
    }

    #[getter]
    fn location(&self) -> String {
        self.location.clone()
    }

    /// A copy of the `storage_options` the store was opened with, or `None`.
    #[getter]
    fn storage_options<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.options.as_ref().map(|d| d.bind(py).copy()).transpose()
    }

    /// `None`, or `(zarr_format, "array" | "group")` of the node at `path`.
    fn exists(&self, py: Python<'_>, path: &str) -> PyResult<Option<(String, String)>> {
        let store = Arc::clone(&self.store);
        let found = py
            .detach(|| zarrkit::node::exists(store.as_ref(), path))
            .map_err(py_err)?;
        Ok(found.map(|(format, kind)| (format.name().to_string(), kind_name(kind).to_string())))
    }

    /// Erases the node at `path` and everything below it.
    fn erase(&self, py: Python<'_>, path: &str) -> PyResult<()> {
        let store = Arc::clone(&self.store);
        py.detach(|| zarrkit::node::erase(store.as_ref(), path))
            .map_err(py_err)?;
        Ok(())
    }

    /// Erases every key of the store (mode `w`).
    fn clear(&self, py: Python<'_>) -> PyResult<()> {
        let store = Arc::clone(&self.store);
        py.detach(|| -> Result<(), Error> {
            if let Some((_, _)) = zarrkit::node::exists(store.as_ref(), "/")? {
                zarrkit::node::erase(store.as_ref(), "/")?;
            }
            Ok(())
        })
        .map_err(py_err)
    }

    /// Opens the node at `path`: an [`Array_`] or a [`Group_`].
    fn open_node(slf: &Bound<'_, Self>, py: Python<'_>, path: &str) -> PyResult<Py<PyAny>> {
        let store = Arc::clone(&slf.get().store);
        let node = py.detach(|| Node::open(store, path)).map_err(py_err)?;
        node_to_py(py, node)
    }

    /// Creates a group at `path`.
    fn create_group(
        &self,
        py: Python<'_>,
        path: &str,
        zarr_format: u8,
        attributes: &str,
    ) -> PyResult<Group_> {
        let attributes = py_to_json_map(attributes)?;
        let format = format_of(zarr_format)?;
        let store = Arc::clone(&self.store);
        let group = py
            .detach(|| Group::create_as(store, path, format, attributes))
            .map_err(py_err)?;
        Ok(Group_ { group })
    }

    /// Creates an array at `path`. `dtype` is a NumPy type string
    /// (`"<i4"`, `"<M8[ns]"`); `codecs` and `fill_value` are JSON (`null`:
    /// the format's defaults); `chunk_shape` is the shape of the grid's
    /// chunks (the shards of a sharded array).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (path, shape, dtype, chunk_shape, codecs, fill_value, dimension_names, attributes, zarr_format, overwrite, fill_bytes=None))]
    fn create_array(
        &self,
        py: Python<'_>,
        path: &str,
        shape: Vec<u64>,
        dtype: &str,
        chunk_shape: Vec<u64>,
        codecs: &str,
        fill_value: &str,
        dimension_names: Option<Vec<Option<String>>>,
        attributes: &str,
        zarr_format: u8,
        overwrite: bool,
        fill_bytes: Option<Vec<u8>>,
    ) -> PyResult<Array_> {
        let format = format_of(zarr_format)?;
        let data_type = data_type_of(dtype)?;
        let mut builder = Array::builder(&shape, data_type.clone(), &chunk_shape)
            .format(format)
            .attributes(py_to_json_map(attributes)?)
            .overwrite(overwrite);
        let codecs: serde_json::Value =
            serde_json::from_str(codecs).map_err(|e| invalid(e.to_string()))?;
        if let serde_json::Value::Array(list) = &codecs {
            let list = list
                .iter()
                .map(|c| extension_from_json(c, "codecs"))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| invalid(format!("invalid codecs: {}", message(&e))))?;
            builder = builder.codecs_metadata(list);
        }
        let fill: serde_json::Value =
            serde_json::from_str(fill_value).map_err(|e| invalid(e.to_string()))?;
        if !fill.is_null() {
            let fill = fill_value_from_json(&fill, &data_type)
                .map_err(|e| invalid(format!("invalid fill_value: {}", message(&e))))?;
            builder = builder.fill_value_bytes(fill);
        }
        if let Some(fill) = fill_bytes {
            if fill.len() != data_type.size() {
                return Err(invalid(format!(
                    "the fill value has {} bytes, not the {} of one `{}` element",
                    fill.len(),
                    data_type.size(),
                    data_type.name()
                )));
            }
            builder = builder.fill_value_bytes(zarrkit::metadata::FillValue::new(fill));
        }
        if let Some(names) = dimension_names {
            builder = builder.dimension_names_opt(names);
        }
        let store = Arc::clone(&self.store);
        let array = py.detach(|| builder.create(store, path)).map_err(py_err)?;
        Ok(Array_::new(array))
    }

    /// Finishes the store: a zip archive being written appears now.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let store = Arc::clone(&self.store);
        py.detach(|| store.finish())
            .map_err(|e| py_err(Error::Store(e)))
    }
}

fn kind_name(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Array => "array",
        _ => "group",
    }
}

fn format_of(zarr_format: u8) -> PyResult<ZarrFormat> {
    match zarr_format {
        3 => Ok(ZarrFormat::V3),
        2 => Ok(ZarrFormat::V2),
        other => Err(invalid(format!(
            "zarr_format must be 2 or 3 to create a node, not {other}"
        ))),
    }
}

/// The data type of a NumPy type string (`"<i4"`, `"|b1"`, `"<M8[ns]"`),
/// a v3 data type name (`"bfloat16"`, `"r16"`), or the JSON text of a
/// structured dtype's `descr` (`[["a", "<i4"], ["b", "<f8", [2]]]`), in
/// native (little-endian) byte order.
fn data_type_of(dtype: &str) -> PyResult<DataType> {
    if let Some(data_type) = DataType::from_name(dtype) {
        return Ok(data_type);
    }
    let value = if dtype.starts_with('[') {
        serde_json::from_str(dtype).map_err(|e| invalid(e.to_string()))?
    } else {
        serde_json::Value::String(dtype.to_string())
    };
    zarrkit::format::v2::numpy_dtype_from_json(&value)
        .map(|(data_type, _)| data_type)
        .map_err(|e| {
            raise(
                "DataTypeError",
                format!("unsupported dtype `{dtype}`: {}", message(&e)),
            )
        })
}

fn node_to_py(py: Python<'_>, node: Node) -> PyResult<Py<PyAny>> {
    Ok(match node {
        Node::Array(array) => Py::new(py, Array_::new(array))?.into_any(),
        Node::Group(group) => Py::new(py, Group_ { group })?.into_any(),
    })
}

/// An array handle.
#[pyclass(module = "zarrkit._zarrkit", frozen)]
struct Array_ {
    /// Shared, so that each call takes the handle with one reference count
    /// (cloning the `Array`, its metadata and codec chain, cost about
    /// 9,000 instructions a call, a region read's largest cost in the
    /// binding after allocating its result); `resize` and attribute writes
    /// replace it (`Arc::make_mut`), leaving calls in flight their own.
    array: RwLock<Arc<Array>>,
}

impl Array_ {
    fn new(array: Array) -> Self {
        Self {
            array: RwLock::new(Arc::new(array)),
        }
    }

    /// The handle, shared.
    fn get(&self) -> Arc<Array> {
        Arc::clone(
            &self
                .array
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

/// Converts one Python index object into a [`SelectionItem`]: an integer,
/// a slice, `...`, `None`, or anything NumPy turns into an integer or
/// boolean array (lists, ndarrays).
fn selection_item(py: Python<'_>, item: &Bound<'_, PyAny>) -> PyResult<SelectionItem> {
    if item.is_none() {
        return Ok(SelectionItem::NewAxis);
    }
    if item.is_instance_of::<PyEllipsis>() {
        return Ok(SelectionItem::Ellipsis);
    }
    if let Ok(slice) = item.cast::<PySlice>() {
        // Interned names: a region read parses three slices a call, and a
        // new string for each attribute lookup was most of the binding's
        // cost of parsing them (callgrind).
        let bound = |attr: &Bound<'_, pyo3::types::PyString>| -> PyResult<Option<i64>> {
            let value = slice.getattr(attr)?;
            if value.is_none() {
                Ok(None)
            } else {
                value.extract().map(Some).map_err(|_| {
                    raise(
                        "SelectionTypeError",
                        format!("slice {attr} must be an integer or None"),
                    )
                })
            }
        };
        return Ok(SelectionItem::slice(
            bound(pyo3::intern!(py, "start"))?,
            bound(pyo3::intern!(py, "stop"))?,
            bound(pyo3::intern!(py, "step"))?,
        ));
    }
    if item.is_instance_of::<PyBool>() {
        return Ok(SelectionItem::Mask {
            shape: Vec::new(),
            values: vec![item.is_truthy()?],
        });
    }
    if item.is_instance_of::<PyInt>() {
        return Ok(SelectionItem::Index(item.extract()?));
    }
    // NumPy integer scalars, index arrays, masks and lists of them.
    let numpy = py.import("numpy")?;
    let array = numpy.call_method1("asarray", (item,))?;
    let kind: String = array.getattr("dtype")?.getattr("kind")?.extract()?;
    let shape: Vec<u64> = array.getattr("shape")?.extract()?;
    let flat = array.call_method0("ravel")?;
    let size: usize = flat.getattr("size")?.extract()?;
    match kind.as_str() {
        "b" => {
            let values: Vec<bool> = flat.call_method0("tolist")?.extract()?;
            Ok(SelectionItem::Mask { shape, values })
        }
        "i" | "u" => {
            let values: Vec<i64> = flat
                .call_method1("astype", ("int64",))?
                .call_method0("tolist")?
                .extract()?;
            // A NumPy integer scalar (or 0-d array) is one index.
            if let ([], [value]) = (shape.as_slice(), values.as_slice()) {
                return Ok(SelectionItem::Index(*value));
            }
            Ok(SelectionItem::Indices { shape, values })
        }
        // `[]`: NumPy makes a float64 array of no elements, an empty index list.
        _ if size == 0 => Ok(SelectionItem::Indices {
            shape,
            values: Vec::new(),
        }),
        _ => Err(raise(
            "SelectionTypeError",
            format!(
                "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or boolean arrays are valid indices, not {}",
                item.get_type().name()?
            ),
        )),
    }
}

/// The selection of `key` (what `__getitem__` gets) in `mode`.
fn selection(py: Python<'_>, mode: &str, key: &Bound<'_, PyAny>) -> PyResult<Selection> {
    let items: Vec<SelectionItem> = if let Ok(tuple) = key.cast::<PyTuple>() {
        tuple
            .iter()
            .map(|item| selection_item(py, &item))
            .collect::<PyResult<_>>()?
    } else {
        vec![selection_item(py, key)?]
    };
    let mode = match mode {
        "basic" => SelectionMode::Basic,
        "orthogonal" => SelectionMode::Orthogonal,
        "vectorized" => SelectionMode::Vectorized,
        "blocks" => SelectionMode::Blocks,
        other => {
            return Err(PyTypeError::new_err(format!(
                "unknown selection mode {other}"
            )));
        }
    };
    Ok(Selection::with_mode(mode, items))
}

/// A read's result: its shape and its element bytes as a flat `uint8` array.
type ShapedBytes<'py> = (Vec<u64>, Bound<'py, PyArray1<u8>>);

/// Whether `selection` (of output `shape`) is one the Python side reads in
/// pieces (`_pieces` in `zarrkit/__init__.py`: basic or orthogonal,
/// integers, slices and at most one `...`) and is larger than `max_bytes`
/// or may touch more than `max_chunks` chunks of the grid: per sliced
/// dimension, the chunks its span can cross.
fn exceeds(
    array: &Array,
    selection: &Selection,
    shape: &[u64],
    max_bytes: u64,
    max_chunks: u64,
) -> bool {
    if !matches!(
        selection.mode(),
        SelectionMode::Basic | SelectionMode::Orthogonal
    ) {
        return false;
    }
    let items = selection.items();
    let ndim = array.shape().len();
    let ellipses = items
        .iter()
        .filter(|i| matches!(i, SelectionItem::Ellipsis))
        .count();
    if ellipses > 1
        || items.len() - ellipses > ndim
        || !items.iter().all(|i| {
            matches!(
                i,
                SelectionItem::Index(_) | SelectionItem::Slice(_) | SelectionItem::Ellipsis
            )
        })
    {
        return false;
    }
    let bytes = shape
        .iter()
        .try_fold(array.data_type().size() as u64, |n, &d| n.checked_mul(d));
    if bytes.is_none_or(|b| b > max_bytes) {
        return true;
    }
    // Each item's dimension, `...` expanded; the output keeps one axis per
    // slice, in order.
    let grid = array.chunk_shape();
    let mut out_axes = shape.iter();
    let mut chunks = 1u64;
    let mut dim = 0;
    for item in items {
        let step = match item {
            SelectionItem::Ellipsis => {
                let whole = ndim - (items.len() - 1);
                for _ in 0..whole {
                    let n = out_axes.next().copied().unwrap_or(0);
                    chunks = chunks.saturating_mul(crossed(array, grid, dim, n, 1));
                    dim += 1;
                }
                continue;
            }
            SelectionItem::Slice(s) => s.step.unwrap_or(1).unsigned_abs(),
            _ => {
                dim += 1;
                continue;
            }
        };
        let n = out_axes.next().copied().unwrap_or(0);
        chunks = chunks.saturating_mul(crossed(array, grid, dim, n, step));
        dim += 1;
    }
    // Dimensions after the items are whole.
    while dim < ndim {
        let n = out_axes.next().copied().unwrap_or(0);
        chunks = chunks.saturating_mul(crossed(array, grid, dim, n, 1));
        dim += 1;
    }
    chunks > max_chunks
}

/// The chunks of dimension `dim` that `n` elements `step` apart may cross.
fn crossed(array: &Array, grid: &[u64], dim: usize, n: u64, step: u64) -> u64 {
    let c = grid.get(dim).copied().unwrap_or(1).max(1);
    let count = array.shape().get(dim).copied().unwrap_or(0).div_ceil(c);
    if n <= 1 {
        return 1;
    }
    let span = step.saturating_mul(n - 1).saturating_add(1);
    count.min(span.div_ceil(c).saturating_add(1))
}

#[pymethods]
impl Array_ {
    #[getter]
    fn path(&self) -> String {
        self.get().path().as_str().to_string()
    }

    #[getter]
    fn shape(&self) -> Vec<u64> {
        self.get().shape().to_vec()
    }

    /// The NumPy type string of the elements in native byte order
    /// (`"|O"` for variable-length strings and bytes), or for a struct the
    /// JSON text of its NumPy `descr` (`[["a", "<i4"], ["b", "<f8", [2]]]`).
    #[getter]
    fn dtype(&self) -> String {
        let array = self.get();
        let data_type = array.data_type();
        if let DataType::Struct(_) = data_type {
            let order = if cfg!(target_endian = "big") {
                ByteOrder::Big
            } else {
                ByteOrder::Little
            };
            return zarrkit::format::v2::dtype_to_json(data_type, &order).to_string();
        }
        if zarrkit::metadata::numpy::has_type_string(data_type) {
            zarrkit::metadata::numpy::type_string(data_type, cfg!(target_endian = "big"))
        } else if data_type.is_variable_length() {
            "|O".to_string()
        } else {
            format!("|V{}", data_type.size())
        }
    }

    /// The v3 name of the data type (`int32`, `numpy.datetime64`, `string`).
    #[getter]
    fn data_type(&self) -> String {
        self.get().data_type().name()
    }

    /// The format: `3`, `2`, `1`, or a draft's name.
    #[getter]
    fn zarr_format(&self) -> String {
        self.get().format().name().to_string()
    }

    /// The shape of the grid's chunks (the shards of a sharded array).
    #[getter]
    fn chunk_shape(&self) -> Vec<u64> {
        self.get().chunk_shape().to_vec()
    }

    /// Whether the grid is regular (every chunk of one shape).
    #[getter]
    fn regular(&self) -> bool {
        matches!(self.get().chunk_grid(), ChunkGrid::Regular { .. })
            || self.get().regular_chunk_shape().is_some()
    }

    /// The inner chunk shape of a sharded array, else `None`.
    #[getter]
    fn inner_chunk_shape(&self) -> Option<Vec<u64>> {
        self.get().inner_chunk_shape()
    }

    #[getter]
    fn chunk_grid_shape(&self) -> Vec<u64> {
        self.get().chunk_grid_shape()
    }

    /// The fill value's bytes in native byte order (empty for
    /// variable-length types).
    #[getter]
    fn fill_value_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u8>> {
        let array = self.get();
        let data_type = array.data_type();
        if data_type.is_variable_length() {
            return Vec::<u8>::new().into_pyarray(py);
        }
        array.fill_value().as_bytes().to_vec().into_pyarray(py)
    }

    /// The fill value as the v3 JSON spells it.
    #[getter]
    fn fill_value_json(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let array = self.get();
        let value =
            zarrkit::metadata::json::fill_value_to_json(array.fill_value(), array.data_type());
        json_to_py(py, &value)
    }

    #[getter]
    fn dimension_names(&self) -> Option<Vec<Option<String>>> {
        self.get().metadata().dimension_names.clone()
    }

    /// The user attributes as JSON text.
    fn attributes_json(&self) -> PyResult<String> {
        serde_json::to_string(self.get().attributes()).map_err(|e| invalid(e.to_string()))
    }

    /// Replaces the user attributes (JSON text of an object) in the store.
    fn set_attributes_json(&self, py: Python<'_>, attributes: &str) -> PyResult<()> {
        let attributes = py_to_json_map(attributes)?;
        let mut guard = self
            .array
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let array: &mut Array = Arc::make_mut(&mut guard);
        py.detach(|| array.set_attributes(attributes))
            .map_err(py_err)
    }

    /// The array's document as its format writes it (JSON text).
    fn metadata_json(&self) -> PyResult<String> {
        let array = self.get();
        let bytes = zarrkit::format::serialize_node(
            array.format(),
            &NodeMetadata::Array(array.metadata().clone()),
        )
        .map_err(|e| invalid(message(&e)))?;
        String::from_utf8(bytes).map_err(|e| invalid(e.to_string()))
    }

    /// The number of chunks stored.
    fn nchunks_initialized(&self, py: Python<'_>) -> PyResult<usize> {
        let array = self.get();
        py.detach(|| array.stored_chunks())
            .map(|chunks| chunks.len())
            .map_err(py_err)
    }

    /// The number of chunks stored and their stored (encoded) bytes, from
    /// one listing with sizes where the store can list.
    fn stored_size(&self, py: Python<'_>) -> PyResult<(u64, u64)> {
        let array = self.get();
        py.detach(|| array.stored_size())
            .map(|s| (s.chunks, s.bytes))
            .map_err(py_err)
    }

    /// Resizes the array to `shape`, erasing chunks past the new edge.
    fn resize(&self, py: Python<'_>, shape: Vec<u64>) -> PyResult<()> {
        let mut guard = self
            .array
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let array: &mut Array = Arc::make_mut(&mut guard);
        py.detach(|| array.resize(&shape)).map_err(py_err)
    }

    /// The shape `key` selects in `mode`.
    fn selection_shape(
        &self,
        py: Python<'_>,
        mode: &str,
        key: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<u64>> {
        let selection = selection(py, mode, key)?;
        self.get().selection_shape(&selection).map_err(py_err)
    }

    /// Reads `key` in `mode`: `(shape, bytes)`, the element bytes in native
    /// byte order and C order, as a flat `uint8` array.
    ///
    /// With `limits = (bytes, chunks)`, a selection that the Python side
    /// splits into pieces (integers, slices and `...` only) and that is
    /// larger than `bytes` or may touch more than `chunks` chunks is not
    /// read: the result is `None`, and the caller reads it in pieces so
    /// that Ctrl-C is seen between them. One call for a small read, where
    /// a separate size check cost as much as the call itself.
    #[pyo3(signature = (mode, key, limits=None))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        mode: &str,
        key: &Bound<'py, PyAny>,
        limits: Option<(u64, u64)>,
    ) -> PyResult<Option<ShapedBytes<'py>>> {
        let selection = selection(py, mode, key)?;
        let array = self.get();
        let shape = array.selection_shape(&selection).map_err(py_err)?;
        if let Some((bytes, chunks)) = limits
            && exceeds(&array, &selection, &shape, bytes, chunks)
        {
            return Ok(None);
        }
        let len = shape
            .iter()
            .try_fold(array.data_type().size() as u64, |n, &d| n.checked_mul(d))
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| {
                py_err(Error::TooLarge {
                    path: array.path().clone(),
                    shape: shape.clone(),
                })
            })?;
        // NumPy's allocator, not a Rust vector handed over: it asks the
        // kernel for huge pages for large arrays (4 MiB and up), so a
        // large read faults in a few huge pages rather than thousands of
        // small ones (a 32 MiB read: about 8,000 page faults fewer).
        let out = PyArray1::<u8>::zeros(py, len, false);
        {
            let mut writable = out.readwrite();
            let buffer = writable
                .as_slice_mut()
                .map_err(|_| invalid("the output must be a contiguous uint8 array"))?;
            py.detach(|| array.read_selection_bytes_into(&selection, buffer))
                .map_err(py_err)?;
        }
        Ok(Some((shape, out)))
    }

    /// Reads `key` in `mode` into `out`: the element bytes in native byte
    /// order and C order of the selection's shape, as a flat, contiguous
    /// `uint8` view of the caller's array (which must have exactly their
    /// length). The GIL is released while reading.
    fn read_into(
        &self,
        py: Python<'_>,
        mode: &str,
        key: &Bound<'_, PyAny>,
        mut out: PyReadwriteArray1<'_, u8>,
    ) -> PyResult<()> {
        let selection = selection(py, mode, key)?;
        let array = self.get();
        let buffer = out
            .as_slice_mut()
            .map_err(|_| invalid("the output must be a contiguous uint8 array"))?;
        py.detach(|| array.read_selection_bytes_into(&selection, buffer))
            .map_err(py_err)
    }

    /// One pass of a benchmark workload done in Rust, the GIL released:
    /// `"read"` reads each of `regions` (a list of `(start, stop)` per
    /// axis) into a new vector, as `Array::read_region_bytes` does;
    /// `"write"` writes `data` (element bytes, C order) into the one
    /// region given. Returns the seconds it took, timed in Rust; read
    /// results are freed after the timing.
    ///
    /// For `bench-compare/python/bench_python.py`, which alternates these
    /// passes with the same workload through the Python API in one
    /// process: the difference is the binding's cost alone, free of the
    /// machine's phases and of the heap's state, which differ from one
    /// process to the next.
    #[pyo3(name = "_rust_pass", signature = (workload, regions, data=None))]
    fn rust_pass(
        &self,
        py: Python<'_>,
        workload: &str,
        regions: Vec<Vec<(u64, u64)>>,
        data: Option<PyReadonlyArray1<'_, u8>>,
    ) -> PyResult<f64> {
        let array = self.get();
        let regions: Vec<zarrkit::Region> = regions
            .iter()
            .map(|r| {
                let ranges: Vec<std::ops::Range<u64>> = r.iter().map(|&(a, b)| a..b).collect();
                zarrkit::Region::from_ranges(&ranges)
            })
            .collect();
        match (workload, &data, regions.as_slice()) {
            ("read", None, _) => {
                let (elapsed, results) = py
                    .detach(|| -> Result<_, Error> {
                        let start = std::time::Instant::now();
                        let results = regions
                            .iter()
                            .map(|region| array.read_region_bytes(region))
                            .collect::<Result<Vec<_>, Error>>()?;
                        Ok((start.elapsed(), results))
                    })
                    .map_err(py_err)?;
                drop(results);
                Ok(elapsed.as_secs_f64())
            }
            ("write", Some(data), [region]) => {
                let bytes = data
                    .as_slice()
                    .map_err(|_| invalid("the value must be C-contiguous"))?;
                py.detach(|| -> Result<_, Error> {
                    let start = std::time::Instant::now();
                    array.write_region_bytes(region, bytes)?;
                    Ok(start.elapsed().as_secs_f64())
                })
                .map_err(py_err)
            }
            _ => Err(invalid(
                "expected (\"read\", regions) or (\"write\", [region], data)",
            )),
        }
    }

    /// Reads `key` of a `string` or `bytes` array: `(shape, list)`.
    fn read_vlen(
        &self,
        py: Python<'_>,
        mode: &str,
        key: &Bound<'_, PyAny>,
    ) -> PyResult<(Vec<u64>, Py<PyAny>)> {
        let selection = selection(py, mode, key)?;
        let array = self.get();
        let is_string = matches!(array.data_type(), DataType::String);
        let (shape, items) = py
            .detach(|| -> Result<_, Error> {
                let shape = array.selection_shape(&selection)?;
                let chunk = array.read_selection_vlen(&selection)?;
                let items: Vec<Vec<u8>> = chunk.iter().map(<[u8]>::to_vec).collect();
                Ok((shape, items))
            })
            .map_err(py_err)?;
        let list = if is_string {
            let strings: Vec<String> = items
                .into_iter()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .collect();
            strings.into_pyobject(py)?.into_any().unbind()
        } else {
            let bytes: Vec<pyo3::Bound<'_, pyo3::types::PyBytes>> = items
                .iter()
                .map(|b| pyo3::types::PyBytes::new(py, b))
                .collect();
            PyList::new(py, bytes)?.into_any().unbind()
        };
        Ok((shape, list))
    }

    /// Writes `data` (element bytes in native byte order, C order, of
    /// `data_shape`) into `key` in `mode`, broadcast as NumPy does.
    fn write(
        &self,
        py: Python<'_>,
        mode: &str,
        key: &Bound<'_, PyAny>,
        data: PyReadonlyArray1<'_, u8>,
        data_shape: Vec<u64>,
    ) -> PyResult<()> {
        let selection = selection(py, mode, key)?;
        let array = self.get();
        let bytes = data
            .as_slice()
            .map_err(|_| invalid("the value must be C-contiguous"))?;
        py.detach(|| array.write_selection_bytes_broadcast(&selection, bytes, &data_shape))
            .map_err(py_err)
    }

    /// Writes strings (or bytes) of `data_shape`, C order, into `key`.
    fn write_vlen(
        &self,
        py: Python<'_>,
        mode: &str,
        key: &Bound<'_, PyAny>,
        data: Vec<Vec<u8>>,
        data_shape: Vec<u64>,
    ) -> PyResult<()> {
        let selection = selection(py, mode, key)?;
        let array = self.get();
        py.detach(|| {
            let chunk = zarrkit::codec::vlen::VlenChunk::from_items(data.iter().map(Vec::as_slice));
            array.write_selection_vlen_broadcast(&selection, &chunk, &data_shape)
        })
        .map_err(py_err)
    }
}

/// A group handle.
#[pyclass(module = "zarrkit._zarrkit", frozen)]
struct Group_ {
    group: Group,
}

#[pymethods]
impl Group_ {
    #[getter]
    fn path(&self) -> String {
        self.group.path().as_str().to_string()
    }

    #[getter]
    fn zarr_format(&self) -> String {
        self.group.format().name().to_string()
    }

    /// The user attributes as JSON text.
    fn attributes_json(&self) -> PyResult<String> {
        serde_json::to_string(self.group.attributes()).map_err(|e| invalid(e.to_string()))
    }

    /// The node at `path` below the group.
    fn node(&self, py: Python<'_>, path: &str) -> PyResult<Py<PyAny>> {
        let node = py.detach(|| self.group.node(path)).map_err(py_err)?;
        node_to_py(py, node)
    }

    /// The children: a list of `(name, node)`, sorted by name.
    fn children(&self, py: Python<'_>) -> PyResult<Vec<(String, Py<PyAny>)>> {
        let children = py.detach(|| self.group.children()).map_err(py_err)?;
        children
            .into_iter()
            .map(|node| {
                let name = match &node {
                    Node::Array(a) => a.path().name().to_string(),
                    Node::Group(g) => g.path().name().to_string(),
                };
                Ok((name, node_to_py(py, node)?))
            })
            .collect()
    }

    /// The group's document as JSON text.
    fn metadata_json(&self) -> PyResult<String> {
        let bytes = zarrkit::format::serialize_node(
            self.group.format(),
            &NodeMetadata::Group(self.group.metadata().clone()),
        )
        .map_err(|e| invalid(message(&e)))?;
        String::from_utf8(bytes).map_err(|e| invalid(e.to_string()))
    }
}

/// Replaces the attributes of the group at `path` of `store` (JSON text).
#[pyfunction]
fn set_group_attributes(
    py: Python<'_>,
    store: &Bound<'_, Store_>,
    path: &str,
    attributes: &str,
) -> PyResult<()> {
    let attributes = py_to_json_map(attributes)?;
    let store = Arc::clone(&store.get().store);
    py.detach(|| {
        let mut group = Group::open(store, path)?;
        group.set_attributes(attributes)
    })
    .map_err(py_err)
}

/// Writes the consolidated metadata of the group at `path` of `store`
/// (v2 `.zmetadata`, v3 `consolidated_metadata` in `zarr.json`).
#[pyfunction]
fn consolidate_metadata(py: Python<'_>, store: &Bound<'_, Store_>, path: &str) -> PyResult<()> {
    let store = Arc::clone(&store.get().store);
    py.detach(|| zarrkit::consolidate::consolidate(store.as_ref(), path))
        .map(|_| ())
        .map_err(py_err)
}

/// The node a metadata document describes (JSON text of a v3 `zarr.json`,
/// or of a v2 `.zarray` or `.zgroup` with an optional `attributes` member,
/// as zarr-python's `to_dict()` gives), for [`create_hierarchy`].
fn node_of_document(path: &str, text: &str) -> PyResult<zarrkit::NewNode> {
    let bad = |what: String| invalid(format!("invalid metadata for `{path}`: {what}"));
    // Python's `json` writes bare `NaN` and `Infinity` in fill values.
    let text = zarrkit::format::v2::quote_non_finite_tokens(text.as_bytes());
    let mut value: serde_json::Value =
        serde_json::from_slice(&text).map_err(|e| bad(e.to_string()))?;
    let Some(document) = value.as_object_mut() else {
        return Err(bad("the document is not a JSON object".into()));
    };
    let (format, metadata) = match document.get("zarr_format").and_then(|v| v.as_u64()) {
        Some(3) => (
            ZarrFormat::V3,
            zarrkit::format::v3::parse_node(&text).map_err(|e| bad(message(&e)))?,
        ),
        Some(2) => {
            let attributes = match document.remove("attributes") {
                None => None,
                Some(serde_json::Value::Object(attributes)) => Some(attributes),
                Some(_) => return Err(bad("`attributes` is not a JSON object".into())),
            };
            let is_array = document.contains_key("shape");
            let bytes = serde_json::to_vec(&value).map_err(|e| bad(e.to_string()))?;
            let metadata = if is_array {
                zarrkit::format::v2::parse_array(&bytes, attributes).map(NodeMetadata::Array)
            } else {
                zarrkit::format::v2::parse_group(&bytes, attributes).map(NodeMetadata::Group)
            };
            (ZarrFormat::V2, metadata.map_err(|e| bad(message(&e)))?)
        }
        _ => return Err(bad("`zarr_format` must be 2 or 3".into())),
    };
    Ok(zarrkit::NewNode::Metadata { format, metadata })
}

/// Creates the nodes `(path, document JSON)` in `store` at once (see the
/// library's `create_hierarchy`); returns `(path, node)` for every node
/// written, the added parent groups too, sorted by path.
#[pyfunction]
fn create_hierarchy(
    py: Python<'_>,
    store: &Bound<'_, Store_>,
    nodes: Vec<(String, String)>,
    overwrite: bool,
) -> PyResult<Vec<(String, Py<PyAny>)>> {
    let nodes = nodes
        .iter()
        .map(|(path, document)| Ok((path.as_str(), node_of_document(path, document)?)))
        .collect::<PyResult<Vec<_>>>()?;
    let store = Arc::clone(&store.get().store);
    let created = py
        .detach(|| zarrkit::create_hierarchy(store, nodes, overwrite))
        .map_err(py_err)?;
    created
        .into_iter()
        .map(|node| Ok((node.path().to_string(), node_to_py(py, node)?)))
        .collect()
}

/// The native half of the `zarrkit` package.
#[pymodule]
fn _zarrkit(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Store_>()?;
    m.add_class::<Array_>()?;
    m.add_class::<Group_>()?;
    m.add_function(wrap_pyfunction!(set_group_attributes, m)?)?;
    m.add_function(wrap_pyfunction!(consolidate_metadata, m)?)?;
    m.add_function(wrap_pyfunction!(create_hierarchy, m)?)?;
    m.add_function(wrap_pyfunction!(migrate::migrate, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
