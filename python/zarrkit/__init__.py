"""zarrkit for Python: read and write every Zarr format with NumPy.

zarrkit reads and writes Zarr v3 and v2, and reads v1 and the v3 drafts,
behind an API modelled on zarr-python 3::

    import numpy as np
    import zarrkit

    a = zarrkit.create_array("data.zarr", name="t", shape=(100, 100),
                             dtype="float32", chunks=(10, 10))
    a[:] = np.arange(10_000, dtype="float32").reshape(100, 100)
    g = zarrkit.open_group("data.zarr", mode="r")
    g["t"][::-1, 3]            # NumPy's indexing, negative steps included
    g["t"].oindex[[0, 5], :2]  # orthogonal, like zarr-python
    g["t"].vindex[[0, 5], [1, 2]]

Selections are resolved and executed by the Rust library (the same code
Rust users call); reads and writes release the GIL.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any, Literal

import numpy as np

from . import _zarrkit, errors
from .errors import (
    DataTypeError,
    InvalidValueError,
    MemberNotFoundError,
    NodeExistsError,
    NodeNotFoundError,
    ReadOnlyError,
    SelectionError,
    SelectionTypeError,
    StorageError,
    ZarrkitError,
)

__all__ = [
    "Array",
    "Group",
    "Attributes",
    "open",
    "open_array",
    "open_group",
    "create_array",
    "create_group",
    "consolidate_metadata",
    "__version__",
    *errors.__all__,
]

__version__: str = _zarrkit.__version__

# NumPy 2's variable-length string dtype, which zarr-python 3 gives
# string arrays; object with NumPy 1.
_STRING_DTYPE: np.dtype[Any] | None = (
    np.dtypes.StringDType() if hasattr(np.dtypes, "StringDType") else None  # type: ignore[attr-defined]
)

AccessMode = Literal["r", "r+", "a", "w", "w-"]
_MODES = ("r", "r+", "a", "w", "w-")

_FORMATS = {"v3": 3, "v2": 2, "v1": 1}


def _format_number(name: str) -> int | str:
    return _FORMATS.get(name, name)


def _location(store: Any) -> str:
    if isinstance(store, (Array, Group)):
        return store._store.location
    if isinstance(store, (str, os.PathLike)):
        return os.fspath(store)
    raise TypeError(
        f"store must be a path, a URL or a pathlib.Path, not {type(store).__name__}"
    )


def _open_store(store: Any, storage_options: dict[str, Any] | None, create: bool) -> Any:
    if isinstance(store, (Array, Group)):
        return store._store
    if isinstance(store, _zarrkit.Store_):
        return store
    location = _location(store)
    if not create and "://" not in location and not os.path.exists(location):
        raise NodeNotFoundError(f"no store at `{location}`")
    return _zarrkit.Store_(location, storage_options, create)


def _node_path(path: str | None) -> str:
    return "/" + (path or "").strip("/")


def _join(parent: str, name: str) -> str:
    return "/" + "/".join(p for p in (parent.strip("/"), name.strip("/")) if p)


def _check_mode(mode: str) -> None:
    if mode not in _MODES:
        raise InvalidValueError(f"mode must be one of {', '.join(_MODES)}, not {mode!r}")


def _wrap(node: Any, store: Any, read_only: bool) -> Array | Group:
    if isinstance(node, _zarrkit.Array_):
        return Array(node, store, read_only)
    return Group(node, store, read_only)


class Attributes(MutableMapping[str, Any]):
    """A node's user attributes: a mutable mapping whose every change is
    written to the store at once (the node's document is rewritten)."""

    def __init__(self, load: Any, save: Any, read_only: bool) -> None:
        self._load = load
        self._save = save
        self._read_only = read_only

    def _get(self) -> dict[str, Any]:
        return json.loads(self._load())

    def _put(self, values: dict[str, Any]) -> None:
        if self._read_only:
            raise ReadOnlyError("the node was opened read-only (mode 'r')")
        self._save(json.dumps(values, allow_nan=True))

    def __getitem__(self, key: str) -> Any:
        """One attribute."""
        return self._get()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        """Sets one attribute (the document is rewritten)."""
        values = self._get()
        values[key] = value
        self._put(values)

    def __delitem__(self, key: str) -> None:
        """Removes one attribute (the document is rewritten)."""
        values = self._get()
        del values[key]
        self._put(values)

    def __iter__(self) -> Iterator[str]:
        """The attribute names."""
        return iter(self._get())

    def __len__(self) -> int:
        """The number of attributes."""
        return len(self._get())

    def update(self, other: Any = (), /, **kwargs: Any) -> None:  # type: ignore[override]
        """Sets several attributes with one write."""
        values = self._get()
        values.update(other, **kwargs)
        self._put(values)

    def put(self, values: Mapping[str, Any]) -> None:
        """Replaces every attribute with `values`."""
        self._put(dict(values))

    def asdict(self) -> dict[str, Any]:
        """The attributes as a new dict."""
        return self._get()

    def __repr__(self) -> str:
        return f"Attributes({self._get()!r})"


class _Indexer:
    """`array.oindex`, `array.vindex`, `array.blocks`."""

    def __init__(self, array: Array, mode: str) -> None:
        self._array = array
        self._mode = mode

    def __getitem__(self, key: Any) -> Any:
        return self._array._read(self._mode, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._array._write(self._mode, key, value)


def _has_ellipsis(key: Any) -> bool:
    items = key if isinstance(key, tuple) else (key,)
    return any(k is Ellipsis for k in items)


class _Node:
    """What arrays and groups share: where they are and how they were opened."""

    def __init__(self, native: Any, store: Any, read_only: bool = False) -> None:
        self._native = native
        self._store = store
        self._read_only = read_only

    @property
    def path(self) -> str:
        """The node's path in its hierarchy (``"/"`` for the root)."""
        return self._native.path

    @property
    def name(self) -> str:
        """The node's path, as zarr-python names it."""
        return self._native.path

    @property
    def basename(self) -> str:
        """The last name of the node's path."""
        return self._native.path.rstrip("/").rsplit("/", 1)[-1]

    @property
    def store_path(self) -> str:
        """The location of the store (path or URL)."""
        return self._store.location

    @property
    def read_only(self) -> bool:
        """Whether the node was opened with mode ``"r"``."""
        return self._read_only

    @property
    def zarr_format(self) -> int | str:
        """3, 2 or 1, or a v3 draft's name (``"v3-draft-2022"``)."""
        return _format_number(self._native.zarr_format)

    def close(self) -> None:
        """Finishes the store: a new zip archive being written appears now
        (nothing else needs closing). Also on leaving a ``with`` block."""
        self._store.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Array(_Node):
    """An array in a store. Index it as a NumPy array: ``a[1:-1, ::-2]``,
    ``a[[0, 3]]``, ``a[mask]``, ``a.oindex[...]``, ``a.vindex[...]``,
    ``a.blocks[...]``; assign the same way, a scalar or any value that
    broadcasts to the selection. Open one with :func:`open_array`."""

    @property
    def shape(self) -> tuple[int, ...]:
        """The array's shape."""
        return tuple(self._native.shape)

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self._native.shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        return math.prod(self._native.shape)

    def __len__(self) -> int:
        """The length of the first dimension."""
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    @property
    def dtype(self) -> np.dtype[Any]:
        """The NumPy dtype of the elements: ``StringDType()`` for
        variable-length strings (as zarr-python 3 with NumPy 2), object for
        variable-length bytes, ``V<n>`` for types NumPy has no name for."""
        if self._native.data_type == "string" and _STRING_DTYPE is not None:
            return _STRING_DTYPE
        return np.dtype(self._native.dtype)

    @property
    def _vlen(self) -> bool:
        """Whether the elements are variable-length (strings, bytes)."""
        return self._native.dtype == "|O"

    @property
    def data_type(self) -> str:
        """The Zarr v3 name of the data type (``"int32"``, ``"string"``)."""
        return self._native.data_type

    @property
    def itemsize(self) -> int:
        """The bytes of one element in memory."""
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """The bytes of the whole array in memory (uncompressed)."""
        return self.size * self.dtype.itemsize

    @property
    def chunks(self) -> tuple[int, ...]:
        """The chunk shape (the inner chunks of a sharded array)."""
        inner = self._native.inner_chunk_shape
        return tuple(inner if inner is not None else self._native.chunk_shape)

    @property
    def shards(self) -> tuple[int, ...] | None:
        """The shard shape of a sharded array, else ``None``."""
        if self._native.inner_chunk_shape is None:
            return None
        return tuple(self._native.chunk_shape)

    @property
    def cdata_shape(self) -> tuple[int, ...]:
        """The number of chunks (shards of a sharded array) per dimension."""
        return tuple(self._native.chunk_grid_shape)

    @property
    def nchunks(self) -> int:
        """The number of chunks in the grid (shards of a sharded array)."""
        return math.prod(self._native.chunk_grid_shape)

    @property
    def nchunks_initialized(self) -> int:
        """The number of chunks (shards) stored; lists the store."""
        return self._native.nchunks_initialized()

    @property
    def fill_value(self) -> Any:
        """The fill value, as a NumPy scalar of the array's dtype."""
        if self._vlen:
            return self._native.fill_value_json
        return np.frombuffer(self._native.fill_value_bytes.tobytes(), dtype=self.dtype)[0]

    @property
    def dimension_names(self) -> tuple[str | None, ...] | None:
        """The dimension names, if the array has them."""
        names = self._native.dimension_names
        return None if names is None else tuple(names)

    @property
    def attrs(self) -> Attributes:
        """The user attributes; changes are written through to the store."""
        return Attributes(self._native.attributes_json, self._native.set_attributes_json, self._read_only)

    @property
    def metadata(self) -> dict[str, Any]:
        """The array's document as its format writes it."""
        return json.loads(self._native.metadata_json())

    @property
    def info(self) -> str:
        """A printable summary: format, data type, shape, chunks, shards,
        fill value and codecs."""
        md = self.metadata
        codecs = md.get("codecs") or [c for c in (md.get("filters"), md.get("compressor")) if c]
        lines = [
            ("Type", "Array"),
            ("Zarr format", str(self.zarr_format)),
            ("Data type", f"{self.data_type} ({self.dtype})"),
            ("Shape", str(self.shape)),
            ("Chunk shape", str(self.chunks)),
            ("Shard shape", str(self.shards)),
            ("Fill value", repr(self.fill_value)),
            ("Codecs", json.dumps(codecs)),
            ("No. bytes", str(self.nbytes)),
        ]
        return "\n".join(f"{k:<12}: {v}" for k, v in lines)

    def __repr__(self) -> str:
        return (
            f"<zarrkit.Array {self.store_path} {self.path} shape={self.shape} "
            f"dtype={self.dtype} zarr_format={self.zarr_format}>"
        )

    # -- changes -------------------------------------------------------

    def _check_writable(self) -> None:
        if self._read_only:
            raise ReadOnlyError(f"array `{self.path}` was opened read-only (mode 'r')")

    def resize(self, *shape: int | tuple[int, ...]) -> None:
        """Changes the shape; chunks wholly past the new edge are erased."""
        self._check_writable()
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        self._native.resize([int(n) for n in shape])  # type: ignore[arg-type]

    def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        """Grows the array along `axis` and writes `data` there; returns the
        new shape."""
        self._check_writable()
        data = np.asarray(data)
        if data.ndim != self.ndim:
            raise InvalidValueError(
                f"data of {data.ndim} dimensions cannot be appended to an array of {self.ndim}"
            )
        axis = axis % self.ndim
        old = self.shape
        new = tuple(n + data.shape[axis] if d == axis else n for d, n in enumerate(old))
        self.resize(new)
        key = tuple(slice(old[d], None) if d == axis else slice(None) for d in range(self.ndim))
        self[key] = data
        return new

    # -- reads and writes -----------------------------------------------

    def _read(self, mode: str, key: Any) -> Any:
        dtype = self.dtype
        if self._vlen:
            shape, items = self._native.read_vlen(mode, key)
            out = np.empty(len(items), dtype=object)
            out[:] = items
            out = out.reshape(shape).astype(dtype)
        else:
            shape, data = self._native.read(mode, key)
            out = data.view(dtype).reshape(shape)
        # NumPy gives a scalar for integers in every dimension, and a 0-d
        # array for `...`.
        if out.ndim == 0 and mode == "basic" and not _has_ellipsis(key):
            return out[()]
        return out

    def _write(self, mode: str, key: Any, value: Any) -> None:
        self._check_writable()
        dtype = self.dtype
        if isinstance(value, Array):
            value = value[...]
        if self._vlen:
            values = np.asarray(value).astype(object)
            string = self.data_type == "string"
            items = [
                (v.encode("utf-8") if string else bytes(v)) if not isinstance(v, bytes) else v
                for v in values.reshape(-1).tolist()
            ]
            self._native.write_vlen(mode, key, items, list(values.shape))
            return
        values = np.ascontiguousarray(np.asarray(value, dtype=dtype))
        self._native.write(mode, key, values.reshape(-1).view(np.uint8), list(values.shape))

    def __getitem__(self, key: Any) -> Any:
        """Reads a selection with NumPy's semantics (basic and advanced)."""
        return self._read("basic", key)

    def __setitem__(self, key: Any, value: Any) -> None:
        """Writes `value`, broadcast as NumPy does, into a selection."""
        self._write("basic", key, value)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray[Any, Any]:
        """The whole array, read into a new NumPy array (``np.asarray(a)``)."""
        out = np.asarray(self._read("basic", ...))
        return out if dtype is None else out.astype(dtype)

    @property
    def oindex(self) -> _Indexer:
        """Orthogonal indexing: each integer list or mask selects along its
        own dimension (``a.oindex[[0, 2], [1, 3]]`` is a 2×2 block)."""
        return _Indexer(self, "orthogonal")

    @property
    def vindex(self) -> _Indexer:
        """Vectorized (coordinate) indexing: integer arrays broadcast
        together, or one boolean mask of the array's shape."""
        return _Indexer(self, "vectorized")

    @property
    def blocks(self) -> _Indexer:
        """Block indexing: integers and slices over chunks (shards of a
        sharded array) rather than elements."""
        return _Indexer(self, "blocks")

    def get_basic_selection(self, selection: Any = ...) -> Any:
        """``a[selection]``."""
        return self._read("basic", selection)

    def set_basic_selection(self, selection: Any, value: Any) -> None:
        """``a[selection] = value``."""
        self._write("basic", selection, value)

    def get_orthogonal_selection(self, selection: Any) -> Any:
        """``a.oindex[selection]``."""
        return self._read("orthogonal", selection)

    def set_orthogonal_selection(self, selection: Any, value: Any) -> None:
        """``a.oindex[selection] = value``."""
        self._write("orthogonal", selection, value)

    def get_coordinate_selection(self, selection: Any) -> Any:
        """``a.vindex[selection]`` with integer arrays."""
        return self._read("vectorized", selection)

    def set_coordinate_selection(self, selection: Any, value: Any) -> None:
        """``a.vindex[selection] = value`` with integer arrays."""
        self._write("vectorized", selection, value)

    def get_mask_selection(self, mask: Any) -> Any:
        """``a.vindex[mask]`` with a boolean mask of the array's shape."""
        return self._read("vectorized", mask)

    def set_mask_selection(self, mask: Any, value: Any) -> None:
        """``a.vindex[mask] = value``."""
        self._write("vectorized", mask, value)

    def get_block_selection(self, selection: Any) -> Any:
        """``a.blocks[selection]``."""
        return self._read("blocks", selection)

    def set_block_selection(self, selection: Any, value: Any) -> None:
        """``a.blocks[selection] = value``."""
        self._write("blocks", selection, value)


class Group(_Node, Mapping[str, "Array | Group"]):
    """A group: a mapping of member names (or paths below it, ``g["a/b"]``)
    to arrays and groups. Open one with :func:`open_group`."""

    @property
    def attrs(self) -> Attributes:
        """The user attributes; changes are written through to the store."""

        def save(text: str) -> None:
            _zarrkit.set_group_attributes(self._store, self.path, text)
            self._native = self._store.open_node(self.path)

        return Attributes(lambda: self._native.attributes_json(), save, self._read_only)

    @property
    def metadata(self) -> dict[str, Any]:
        """The group's document as its format writes it."""
        return json.loads(self._native.metadata_json())

    def __repr__(self) -> str:
        return f"<zarrkit.Group {self.store_path} {self.path} zarr_format={self.zarr_format}>"

    # -- the mapping -----------------------------------------------------

    def __getitem__(self, path: str) -> Array | Group:
        """The member at `path` (``"name"`` or ``"a/b"``); KeyError if none."""
        try:
            node = self._native.node(path)
        except NodeNotFoundError as e:
            raise MemberNotFoundError(str(e)) from None
        return _wrap(node, self._store, self._read_only)

    def __contains__(self, path: object) -> bool:
        """Whether a member is at `path`."""
        if not isinstance(path, str):
            return False
        try:
            self._native.node(path)
        except NodeNotFoundError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        """The members' names, sorted."""
        return iter([name for name, _ in self._native.children()])

    def __len__(self) -> int:
        """The number of members."""
        return len(self._native.children())

    def members(self) -> tuple[tuple[str, Array | Group], ...]:
        """The children as ``(name, node)`` pairs, sorted by name."""
        return tuple(
            (name, _wrap(node, self._store, self._read_only)) for name, node in self._native.children()
        )

    def group_keys(self) -> Iterator[str]:
        """The names of the child groups."""
        return (name for name, node in self.members() if isinstance(node, Group))

    def array_keys(self) -> Iterator[str]:
        """The names of the child arrays."""
        return (name for name, node in self.members() if isinstance(node, Array))

    def groups(self) -> Iterator[tuple[str, Group]]:
        """The child groups as ``(name, group)`` pairs."""
        return ((n, g) for n, g in self.members() if isinstance(g, Group))

    def arrays(self) -> Iterator[tuple[str, Array]]:
        """The child arrays as ``(name, array)`` pairs."""
        return ((n, a) for n, a in self.members() if isinstance(a, Array))

    def tree(self) -> str:
        """The hierarchy below the group as indented text."""
        lines = [self.path]

        def walk(group: Group, depth: int) -> None:
            for name, node in group.members():
                if isinstance(node, Array):
                    lines.append(f"{'  ' * depth}{name} {node.shape} {node.dtype}")
                else:
                    lines.append(f"{'  ' * depth}{name}/")
                    walk(node, depth + 1)

        walk(self, 1)
        return "\n".join(lines)

    # -- changes ---------------------------------------------------------

    def _check_writable(self) -> None:
        if self._read_only:
            raise ReadOnlyError(f"group `{self.path}` was opened read-only (mode 'r')")

    def create_group(
        self, name: str, *, attributes: dict[str, Any] | None = None, overwrite: bool = False
    ) -> Group:
        """Creates a child group `name` (in the group's format)."""
        self._check_writable()
        return create_group(
            self._store,
            path=_join(self.path, name),
            attributes=attributes,
            zarr_format=_creatable_format(self.zarr_format),
            overwrite=overwrite,
        )

    def require_group(self, name: str, *, attributes: dict[str, Any] | None = None) -> Group:
        """The child group `name`, created if it does not exist."""
        if name in self:
            node = self[name]
            if not isinstance(node, Group):
                raise NodeExistsError(f"`{_join(self.path, name)}` is an array, not a group")
            return node
        return self.create_group(name, attributes=attributes)

    def create_array(self, name: str, **kwargs: Any) -> Array:
        """Creates a child array `name`; takes :func:`create_array`'s keywords."""
        self._check_writable()
        kwargs.setdefault("zarr_format", _creatable_format(self.zarr_format))
        return create_array(self._store, name=_join(self.path, name), **kwargs)

    def __delitem__(self, name: str) -> None:
        """Erases the member `name` and everything below it."""
        self._check_writable()
        self._store.erase(_join(self.path, name))


def _creatable_format(zarr_format: int | str) -> int:
    return zarr_format if zarr_format in (2, 3) else 3  # type: ignore[return-value]


def _auto_chunks(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """Chunks of at most about 1 MiB, halving the longest dimension."""
    chunks = [max(n, 1) for n in shape]
    while math.prod(chunks) * itemsize > (1 << 20) and max(chunks) > 1:
        d = chunks.index(max(chunks))
        chunks[d] = (chunks[d] + 1) // 2
    return tuple(chunks)


def _default_codecs(dtype: np.dtype[Any]) -> list[dict[str, Any]]:
    """`bytes` (+ `zstd`): what a v3 array gets inside a shard."""
    if dtype == object:
        return [{"name": "vlen-utf8", "configuration": {}}]
    if dtype.itemsize == 1 or dtype.kind in "SUV":
        return [{"name": "bytes", "configuration": {}}]
    return [{"name": "bytes", "configuration": {"endian": "little"}}]


def _parse_dtype(dtype: Any) -> tuple[str, np.dtype[Any]]:
    """The type string the native half takes, and the NumPy dtype."""
    if isinstance(dtype, str) and dtype in ("string", "str"):
        return "string", np.dtype(object)
    if dtype is str:
        return "string", np.dtype(object)
    np_dtype = np.dtype(dtype)
    if np_dtype == object or np_dtype.kind == "T":
        return "string", np.dtype(object)
    if np_dtype.fields is not None:
        raise DataTypeError("structured dtypes cannot be created from Python yet")
    return np_dtype.newbyteorder("<").str if np_dtype.byteorder != "|" else np_dtype.str, np_dtype


def _fill_json(fill_value: Any, np_dtype: np.dtype[Any]) -> Any:
    """The v3 JSON form of a fill value given as a Python or NumPy scalar."""
    if fill_value is None:
        return None
    if np_dtype == object:
        return str(fill_value)
    value = np.asarray(fill_value, dtype=np_dtype)[()]
    kind = np_dtype.kind
    if kind == "b":
        return bool(value)
    if kind in "iu":
        return int(value)
    if kind in "mM":
        return None if np.isnat(value) else int(value.astype(np.int64))
    if kind == "f":
        return _float_json(float(value))
    if kind == "c":
        return [_float_json(float(value.real)), _float_json(float(value.imag))]
    if kind == "S":
        import base64

        return base64.b64encode(bytes(value).ljust(np_dtype.itemsize, b"\0")).decode()
    if kind == "U":
        return str(value)
    raise DataTypeError(f"no fill value of dtype {np_dtype} can be given from Python yet")


def _float_json(v: float) -> Any:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return v


def create_array(
    store: Any,
    name: str | None = None,
    *,
    shape: int | tuple[int, ...],
    dtype: Any = "float64",
    chunks: int | tuple[int, ...] | Literal["auto"] | None = "auto",
    shards: tuple[int, ...] | None = None,
    compressors: Literal["auto"] | None | dict[str, Any] | list[dict[str, Any]] = "auto",
    filters: list[dict[str, Any]] | None = None,
    fill_value: Any = None,
    order: Literal["C"] = "C",
    dimension_names: tuple[str | None, ...] | list[str | None] | None = None,
    attributes: dict[str, Any] | None = None,
    zarr_format: Literal[2, 3] = 3,
    overwrite: bool = False,
    storage_options: dict[str, Any] | None = None,
    path: str | None = None,
) -> Array:
    """Creates an array at `name` (or `path`; the root by default) of `store`
    (a path, ``pathlib.Path``, URL or zip archive) and returns it.

    - `shape`, `dtype` (anything ``numpy.dtype`` takes; ``str`` or
      ``"string"`` for variable-length strings), `chunks` (``"auto"``:
      about 1 MiB each).
    - `shards`: the shard shape; `chunks` are then the inner chunks
      (v3 ``sharding_indexed``).
    - `compressors`: ``"auto"`` (zstd for v3, the format's default for v2),
      ``None`` (no compression), or codec documents in v3 form
      (``{"name": "gzip", "configuration": {"level": 5}}``); `filters`:
      array-to-array codec documents placed before them.
    - `fill_value` (default zero), `dimension_names`, `attributes`,
      `zarr_format` (3 or 2), `overwrite` (replace a node already there).

    Raises :class:`NodeExistsError` (a ``FileExistsError``) if a node is
    there and `overwrite` is false, :class:`InvalidValueError` (a
    ``ValueError``) for invalid options.
    """
    if order != "C":
        raise InvalidValueError("only order='C' is supported")
    node = _node_path(name if name is not None else path)
    shape_t = (shape,) if isinstance(shape, int) else tuple(int(n) for n in shape)
    type_string, np_dtype = _parse_dtype(dtype)
    if chunks is None or chunks == "auto":
        chunks_t = _auto_chunks(shape_t, max(np_dtype.itemsize, 8))
    else:
        chunks_t = (chunks,) * len(shape_t) if isinstance(chunks, int) else tuple(chunks)
    if isinstance(compressors, dict):
        compressors = [compressors]
    codecs: list[dict[str, Any]] | None
    if compressors == "auto" and not filters and shards is None:
        codecs = None  # the format's defaults
        if zarr_format == 2 and np_dtype == object:
            codecs = [{"name": "vlen-utf8", "configuration": {}}]
    else:
        if compressors == "auto":
            compressors = [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}]
        inner = list(filters or []) + _default_codecs(np_dtype) + list(compressors or [])
        if shards is not None:
            codecs = [
                {
                    "name": "sharding_indexed",
                    "configuration": {
                        "chunk_shape": list(chunks_t),
                        "codecs": inner,
                        "index_codecs": [
                            {"name": "bytes", "configuration": {"endian": "little"}},
                            {"name": "crc32c"},
                        ],
                        "index_location": "end",
                    },
                }
            ]
        else:
            codecs = inner
    grid = tuple(shards) if shards is not None else chunks_t
    s = _open_store(store, storage_options, create=True)
    if overwrite and s.exists(node) is not None:
        # Creating over a group: the builder replaces arrays only.
        if s.exists(node)[1] == "group":
            s.erase(node)
    native = s.create_array(
        node,
        list(shape_t),
        type_string,
        list(grid),
        json.dumps(codecs),
        json.dumps(_fill_json(fill_value, np_dtype)),
        None if dimension_names is None else list(dimension_names),
        json.dumps(attributes or {}, allow_nan=True),
        int(zarr_format),
        bool(overwrite),
    )
    return Array(native, s, False)


def create_group(
    store: Any,
    path: str | None = None,
    *,
    attributes: dict[str, Any] | None = None,
    zarr_format: Literal[2, 3] = 3,
    overwrite: bool = False,
    storage_options: dict[str, Any] | None = None,
) -> Group:
    """Creates a group at `path` (the root by default) of `store` and
    returns it. With `overwrite`, a node already there is erased first;
    otherwise it raises :class:`NodeExistsError`."""
    node = _node_path(path)
    s = _open_store(store, storage_options, create=True)
    if overwrite and s.exists(node) is not None:
        s.erase(node)
    native = s.create_group(node, int(zarr_format), json.dumps(attributes or {}, allow_nan=True))
    return Group(native, s, False)


def _check_format(node: Array | Group, zarr_format: int | None) -> None:
    if zarr_format is not None and node.zarr_format != zarr_format:
        raise NodeNotFoundError(
            f"`{node.path}` is stored in format {node.zarr_format}, not {zarr_format}"
        )


def open(
    store: Any,
    mode: AccessMode = "a",
    path: str | None = None,
    zarr_format: int | None = None,
    storage_options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Array | Group:
    """Opens the array or group at `path` of `store` (a path, a
    ``pathlib.Path``, a URL such as ``s3://bucket/x.zarr``, a zip archive),
    in any format: v3, v2, v1 and the v3 drafts.

    Modes, as zarr-python defines them: ``"r"`` read only, ``"r+"`` read
    and write (must exist), ``"a"`` read and write, created if missing,
    ``"w"`` created, replacing what is there, ``"w-"`` created, failing if
    something is there. When creating, an array is created if `shape` is
    given (with :func:`create_array`'s keywords), else a group.

    Raises :class:`NodeNotFoundError` (a ``FileNotFoundError``) when
    nothing is there and the mode does not create.
    """
    _check_mode(mode)
    node = _node_path(path)
    if mode in ("r", "r+"):
        s = _open_store(store, storage_options, create=False)
        opened = _wrap(s.open_node(node), s, mode == "r")
        _check_format(opened, zarr_format)
        return opened
    s = _open_store(store, storage_options, create=True)
    exists = s.exists(node)
    if mode == "a" and exists is not None:
        opened = _wrap(s.open_node(node), s, False)
        _check_format(opened, zarr_format)
        return opened
    if mode == "w-" and exists is not None:
        raise NodeExistsError(f"`{node}` already exists ({exists[1]})")
    fmt = 3 if zarr_format is None else zarr_format
    if "shape" in kwargs:
        return create_array(s, name=node, zarr_format=fmt, overwrite=mode == "w", **kwargs)
    return create_group(
        s, path=node, zarr_format=fmt, overwrite=mode == "w", attributes=kwargs.get("attributes")
    )


def open_array(
    store: Any,
    mode: AccessMode = "a",
    path: str | None = None,
    zarr_format: int | None = None,
    storage_options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Array:
    """Opens the array at `path` of `store` with `mode` (see :func:`open`);
    creating one needs `shape` and takes :func:`create_array`'s keywords.

    Raises :class:`NodeNotFoundError` (a ``FileNotFoundError``) if there is
    no array there."""
    _check_mode(mode)
    if mode == "a" and "shape" not in kwargs:
        mode = "r+"
    if mode in ("w", "w-") and "shape" not in kwargs:
        raise InvalidValueError(f"creating an array (mode {mode!r}) needs its shape")
    node = open(
        store, mode=mode, path=path, zarr_format=zarr_format,
        storage_options=storage_options, **kwargs,
    )
    if not isinstance(node, Array):
        raise NodeNotFoundError(f"`{node.path}` is a group, not an array")
    return node


def open_group(
    store: Any,
    mode: AccessMode = "a",
    path: str | None = None,
    zarr_format: int | None = None,
    storage_options: dict[str, Any] | None = None,
    attributes: dict[str, Any] | None = None,
) -> Group:
    """Opens the group at `path` of `store` with `mode` (see :func:`open`);
    mode ``"a"`` creates it if missing.

    Raises :class:`NodeNotFoundError` (a ``FileNotFoundError``) if there is
    no group there."""
    kwargs: dict[str, Any] = {}
    if attributes is not None:
        kwargs["attributes"] = attributes
    node = open(
        store, mode=mode, path=path, zarr_format=zarr_format,
        storage_options=storage_options, **kwargs,
    )
    if not isinstance(node, Group):
        raise NodeNotFoundError(f"`{node.path}` is an array, not a group")
    return node


def consolidate_metadata(
    store: Any, path: str | None = None, *, storage_options: dict[str, Any] | None = None
) -> Group:
    """Gathers the documents of every node below the group at `path` (the
    root by default) into its consolidated metadata (v2 ``.zmetadata``, v3
    ``consolidated_metadata`` in ``zarr.json``), as zarr-python does, and
    returns the group reopened with it."""
    node = _node_path(path)
    s = _open_store(store, storage_options, create=False)
    _zarrkit.consolidate_metadata(s, node)
    return Group(s.open_node(node), s, False)
