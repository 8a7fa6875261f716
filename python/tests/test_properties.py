"""Property tests (Hypothesis): selections read and written through zarrkit
equal NumPy's.

For random shapes (0-d to 4-d, zero-length dimensions included), chunks,
v3 shards of inner chunks, data types, fill values and selections of every
form, ``a[sel]`` equals ``np_arr[sel]`` (value, shape, dtype, and a NumPy
scalar where NumPy gives one) and ``a[sel] = v`` (a scalar, a value of the
selection's shape, or one that broadcasts to it) leaves the array equal to
``np_arr`` after the same assignment. Where NumPy raises ``IndexError``
(an index out of bounds, a mask of the wrong length, index arrays that do
not broadcast, too many indices), zarrkit raises it too. ``oindex``,
``vindex`` and ``blocks`` have no NumPy spelling; their expected values are
built from NumPy's (``np.ix_``-style outer products, coordinate indexing,
element slices of whole chunks), following zarr-python where it defines
them (``vindex`` of integers only is a 0-d array, ``blocks[i]`` keeps
the dimension). One deliberate difference from NumPy: zarrkit checks
every index against its dimension, even one broadcast against an empty
index array (see :func:`check_every_index`).

The runs are reproducible (``derandomize=True``, no example database).
``ZARRKIT_HYPOTHESIS_EXAMPLES`` sets the examples per test (default 150:
750 examples, about 4 s of CPU for the file); a larger run:
``ZARRKIT_HYPOTHESIS_EXAMPLES=3000``; ``ZARRKIT_HYPOTHESIS_RANDOM=1`` draws
new examples on each run.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

import zarrkit

EXAMPLES = int(os.environ.get("ZARRKIT_HYPOTHESIS_EXAMPLES", "150"))

PROPERTY_SETTINGS = settings(
    max_examples=EXAMPLES,
    # ZARRKIT_HYPOTHESIS_RANDOM=1: new examples each run, for exploring.
    derandomize=os.environ.get("ZARRKIT_HYPOTHESIS_RANDOM") != "1",
    database=None,
    deadline=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

STRING = np.dtypes.StringDType()

# Every data type the package writes from Python ("str": variable-length
# strings, NumPy's StringDType).
DTYPES = [
    "bool",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "datetime64[s]",
    "timedelta64[ms]",
    "S3",
    "U2",
    "str",
]

# The longest side per number of dimensions: small, so chunk edges,
# zero-length dimensions and steps beyond the length are all common.
MAX_SIDE = {0: 0, 1: 13, 2: 7, 3: 5, 4: 3}

WORDS = ["", "a", "zarr", "ünï", "xyz", "éé", "longer word"]


def np_dtype(name: str) -> np.dtype[Any]:
    return STRING if name == "str" else np.dtype(name)


def random_values(
    dtype: np.dtype[Any], shape: tuple[int, ...], rng: np.random.Generator
) -> np.ndarray:
    """Values of every sort the type has: extremes, NaN and infinities,
    NaT, empty strings."""
    n = math.prod(shape)
    kind = dtype.kind
    if kind == "b":
        v: np.ndarray = rng.random(n) < 0.5
    elif kind in "iu":
        info = np.iinfo(dtype)
        v = rng.integers(int(info.min), int(info.max), endpoint=True, size=n, dtype=dtype)
    elif kind in "fc":
        v = rng.standard_normal(n) * 1000
        if kind == "c":
            v = v + 1j * rng.standard_normal(n)
        special = rng.random(n)
        v[special < 0.1] = np.nan
        v[(special >= 0.1) & (special < 0.15)] = np.inf
        v[(special >= 0.15) & (special < 0.2)] = -0.0
        v = v.astype(dtype)
    elif kind in "mM":
        v = rng.integers(-(2**40), 2**40, size=n, dtype=np.int64)
        v[rng.random(n) < 0.1] = np.iinfo(np.int64).min  # NaT
        v = v.view(dtype)
    elif kind == "S":
        letters = np.frombuffer(b"abcxyz", dtype="S1")
        v = np.array(
            [b"".join(rng.choice(letters, rng.integers(0, dtype.itemsize + 1))) for _ in range(n)],
            dtype=dtype,
        )
    elif kind == "U":
        v = np.array(
            [
                "".join(rng.choice(list("aüz€"), rng.integers(0, dtype.itemsize // 4 + 1)))
                for _ in range(n)
            ],
            dtype=dtype,
        )
    else:
        v = np.array([WORDS[i] for i in rng.integers(0, len(WORDS), size=n)], dtype=dtype)
    return v.reshape(shape)


# -- the arrays ---------------------------------------------------------------


@st.composite
def arrays(draw: st.DrawFn) -> tuple[zarrkit.Array, np.ndarray, np.random.Generator]:
    """A new array in a memory store (its chunks, shards, type, format and
    fill value drawn), what it holds (all of it, a box, or nothing written),
    its NumPy twin, and a seeded generator for values."""
    ndim = draw(st.integers(0, 4), label="ndim")
    shape = tuple(draw(st.integers(0, MAX_SIDE[ndim])) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, max(n, 1) + 1)) for n in shape)
    name = draw(st.sampled_from(DTYPES), label="dtype")
    dtype = np_dtype(name)
    zarr_format = draw(st.sampled_from([3, 2]), label="zarr_format")
    shards = None
    # No shards for `U` for now: the package's default inner codecs give
    # `fixed_length_utf32` a `bytes` codec without `endian`, which the
    # library refuses (test_interop_dtypes.py checks sharded arrays).
    if zarr_format == 3 and ndim > 0 and dtype.kind != "U" and draw(st.booleans(), label="sharded"):
        shards = tuple(c * draw(st.integers(1, 3)) for c in chunks)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed"))
    fill = None
    if draw(st.booleans(), label="fill_value given"):
        fill = random_values(dtype, (), rng)[()]
        if dtype.kind in "mM" and np.isnat(fill):
            # A NaT fill value is test_interop_dtypes.py's subject.
            fill = fill.dtype.type(7, np.datetime_data(dtype)[0])
    a = zarrkit.create_array(
        "memory://",
        shape=shape,
        dtype=str if name == "str" else dtype,
        chunks=chunks,
        shards=shards,
        zarr_format=zarr_format,
        fill_value=fill,
    )
    note(
        f"array: shape={shape} chunks={chunks} shards={shards} dtype={name} v{zarr_format} fill={fill!r}"
    )
    assert a.shape == shape
    assert a.dtype == dtype
    assert a.chunks == chunks
    assert a.shards == shards
    if fill is not None:
        np.testing.assert_array_equal(np.asarray(a.fill_value, dtype=dtype), fill)
    expected = np.full(shape, a.fill_value, dtype=dtype)
    initial = draw(st.sampled_from(["all", "box", "nothing"]), label="initial")
    if initial == "all":
        expected = random_values(dtype, shape, rng)
        a[...] = expected
    elif initial == "box" and ndim > 0:
        box = tuple(slice(*sorted(draw(st.integers(0, n)) for _ in range(2))) for n in shape)
        value = random_values(dtype, expected[box].shape, rng)
        a[box] = value
        expected[box] = value
    np.testing.assert_array_equal(a[...], expected)
    return a, expected, rng


# -- the selections -----------------------------------------------------------


def in_range_index(n: int) -> st.SearchStrategy[int]:
    return st.integers(-n, n - 1)


def any_index(n: int) -> st.SearchStrategy[int]:
    """An index that is out of bounds now and then."""
    return st.integers(-n - 2, n + 1)


def slices(n: int) -> st.SearchStrategy[slice]:
    """Any slice: bounds past either end, negative and large steps."""
    bound = st.none() | st.integers(-2 * n - 3, 2 * n + 3)
    step = st.none() | st.builds(
        lambda sign, size: sign * size, st.sampled_from([1, -1]), st.integers(1, n + 2)
    )
    return st.builds(slice, bound, bound, step)


def integer(value: int, draw: st.DrawFn) -> Any:
    """An int, or a NumPy integer."""
    return draw(st.sampled_from([int, np.int64, np.int32, np.intp]))(value)


def index_array(draw: st.DrawFn, n: int, shape: tuple[int, ...], oob: bool) -> Any:
    """An integer array of `shape` indexing a dimension of length `n`, as a
    NumPy array or a (nested) list."""
    if n == 0 and not oob:
        shape = tuple(0 for _ in shape) or (0,)
    count = math.prod(shape)
    ints = any_index(n) if oob else in_range_index(n)
    values = draw(st.lists(ints, min_size=count, max_size=count)) if count else []
    arr = np.array(values, dtype=draw(st.sampled_from(["int64", "int32", "intp"]))).reshape(shape)
    if draw(st.booleans()) and arr.size > 0:
        return arr.tolist()
    return arr


def mask(draw: st.DrawFn, shape: tuple[int, ...]) -> np.ndarray:
    count = math.prod(shape)
    bits = draw(st.lists(st.booleans(), min_size=count, max_size=count))
    return np.array(bits, dtype=bool).reshape(shape)


@st.composite
def basic_keys(draw: st.DrawFn, shape: tuple[int, ...]) -> Any:
    """A NumPy index: integers, slices, `...`, `None`, integer arrays (one
    common index shape, or one that broadcasts to it) and boolean masks
    over one or more dimensions; now and then out of bounds or one index
    too many."""
    ndim = len(shape)
    oob = draw(st.integers(0, 7), label="out of bounds allowed") == 0
    index_shape = tuple(draw(st.integers(0, 3)) for _ in range(draw(st.integers(1, 2))))

    def item_for(d: int, last: int) -> tuple[Any, int]:
        """An index for dimension `d` and the number of dimensions it takes."""
        n = shape[d]
        kinds = ["slice", "array", "mask"]
        if n > 0 or oob:
            kinds.append("int")
        if last - d >= 2:
            kinds.append("mask_nd")
        kind = draw(st.sampled_from(kinds))
        if kind == "int":
            return integer(draw(any_index(n) if oob else in_range_index(n)), draw), 1
        if kind == "slice":
            return draw(slices(n)), 1
        if kind == "array":
            ishape = index_shape
            if draw(st.booleans()):  # broadcasts against the common shape
                ishape = tuple(1 if draw(st.booleans()) else k for k in index_shape)
            return index_array(draw, n, ishape, oob), 1
        if kind == "mask":
            return mask(draw, (n + (1 if oob and draw(st.booleans()) else 0),)), 1
        k = draw(st.integers(2, last - d))
        return mask(draw, shape[d : d + k]), k

    def items(start: int, stop: int) -> list[Any]:
        out = []
        d = start
        while d < stop:
            item, k = item_for(d, stop)
            out.append(item)
            d += k
        return out

    if draw(st.booleans(), label="ellipsis"):
        head = draw(st.integers(0, ndim))
        tail = draw(st.integers(head, ndim))
        key = [*items(0, head), Ellipsis, *items(tail, ndim)]
    else:
        key = items(0, draw(st.integers(0, ndim)))
    if oob and draw(st.booleans()):
        key.append(0)  # one index too many
    for _ in range(draw(st.integers(0, 2), label="newaxes")):
        key.insert(draw(st.integers(0, len(key))), None)
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]), label="boolean scalars")):
        # NumPy: an index array of length 1 (True) or 0 along a new axis.
        scalar = draw(
            st.sampled_from([True, False, np.True_, np.False_, np.array(True), np.array(False)])
        )
        key.insert(draw(st.integers(0, len(key))), scalar)
    if len(key) == 1 and draw(st.booleans()):
        return key[0]
    return tuple(key)


@st.composite
def orthogonal_keys(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """One integer, slice, 1-d integer array or 1-d mask per dimension (a
    prefix of them, or around a `...`)."""
    ndim = len(shape)
    oob = draw(st.integers(0, 7)) == 0

    def item(n: int) -> Any:
        kinds = ["slice", "array", "mask"] + (["int"] if n > 0 or oob else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "int":
            return integer(draw(any_index(n) if oob else in_range_index(n)), draw)
        if kind == "slice":
            return draw(slices(n))
        if kind == "array":
            return index_array(draw, n, (draw(st.integers(0, 4)),), oob)
        return mask(draw, (n,))

    if ndim > 0 and draw(st.booleans()):
        head = draw(st.integers(0, ndim))
        tail = draw(st.integers(head, ndim))
        return (*[item(n) for n in shape[:head]], Ellipsis, *[item(n) for n in shape[tail:]])
    return tuple(item(n) for n in shape[: draw(st.integers(0, ndim))])


def expand(key: tuple[Any, ...], ndim: int) -> list[Any]:
    """`key` with its `...` (or the missing trailing items) as full slices."""
    key = list(key)
    if Ellipsis in [k if k is Ellipsis else None for k in key]:
        at = next(i for i, k in enumerate(key) if k is Ellipsis)
        key[at : at + 1] = [slice(None)] * (ndim - len(key) + 1)
    return key + [slice(None)] * (ndim - len(key))


def check_every_index(key: Any, shape: tuple[int, ...]) -> None:
    """Raises IndexError if an integer or index array value of `key` (a
    basic or vectorized selection) is out of bounds for its dimension.

    NumPy checks only the indices it uses, so an out-of-bounds index that
    broadcasts against an empty index array selects nothing without an
    error (``np.zeros((2, 3))[[], [7]]`` is empty); zarrkit checks every
    index, as a bound error is almost always a mistake."""
    items = list(key) if isinstance(key, tuple) else [key]

    def dims(k: Any) -> int:
        if k is None or k is Ellipsis or isinstance(k, (bool, np.bool_)):
            return 0
        if isinstance(k, np.ndarray) and k.dtype == bool:
            return k.ndim
        return 1

    used = sum(dims(k) for k in items)
    if used > len(shape):
        return  # too many indices: NumPy says so
    d = 0
    for k in items:
        if k is Ellipsis:
            d += len(shape) - used
            continue
        if isinstance(k, bool):
            pass
        elif isinstance(k, (int, np.integer, list)) or (
            isinstance(k, np.ndarray) and k.dtype != bool
        ):
            values = np.asarray(k)
            n = shape[d]
            if values.size and ((values < -n) | (values >= n)).any():
                raise IndexError(f"an index is out of bounds for axis {d} with size {n}")
        d += dims(k)


def orthogonal_expected(
    expected: np.ndarray, key: tuple[Any, ...]
) -> tuple[np.ndarray, tuple[Any, ...]]:
    """The outer product `key` selects (IndexError when NumPy raises one for
    an item), and the NumPy index (`np.ix_` of every dimension) that writes
    it."""
    items = expand(key, expected.ndim)
    per_dim = []
    for d, k in enumerate(items):
        n = expected.shape[d]
        if isinstance(k, (int, np.integer)):
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {d} with size {n}")
            per_dim.append(np.array([k % n]))
        else:
            per_dim.append(np.arange(n)[np.asarray(k) if isinstance(k, list) else k])
    if not per_dim:  # a 0-d array: the whole of it, as a 0-d array
        return expected[...], (Ellipsis,)
    ix = np.ix_(*per_dim)
    kept = tuple(len(p) for p, k in zip(per_dim, items) if not isinstance(k, (int, np.integer)))
    return expected[ix].reshape(kept), ix


@st.composite
def vectorized_keys(draw: st.DrawFn, shape: tuple[int, ...]) -> Any:
    """Coordinate arrays (and integers) for every dimension, broadcasting
    together, or one boolean mask of the array's shape."""
    oob = draw(st.integers(0, 7)) == 0
    if not shape:
        return draw(st.sampled_from([(), np.array(True), np.array(False)]))
    if draw(st.integers(0, 3)) == 0:
        return mask(draw, shape)
    index_shape = tuple(draw(st.integers(0, 4)) for _ in range(draw(st.integers(1, 2))))
    key = []
    for n in shape:
        if (n > 0 or oob) and draw(st.integers(0, 4)) == 0:
            key.append(integer(draw(any_index(n) if oob else in_range_index(n)), draw))
            continue
        ishape = index_shape
        if draw(st.booleans()):
            ishape = tuple(1 if draw(st.booleans()) else k for k in index_shape)
        key.append(index_array(draw, n, ishape, oob))
    if len(key) == 1 and draw(st.booleans()):
        return key[0]
    return tuple(key)


@st.composite
def block_keys(draw: st.DrawFn, shape: tuple[int, ...], blocks: tuple[int, ...]) -> tuple[Any, ...]:
    """Block integers and slices (step 1 or none) over the grid."""
    oob = draw(st.integers(0, 7)) == 0
    key = []
    for n, b in zip(shape, blocks):
        grid = -(-n // b)
        if (grid > 0 or oob) and draw(st.booleans()):
            key.append(integer(draw(any_index(grid) if oob else in_range_index(grid)), draw))
        else:
            bound = st.none() | st.integers(-grid - 2, grid + 2)
            key.append(slice(draw(bound), draw(bound), draw(st.sampled_from([None, 1]))))
    return tuple(key[: draw(st.integers(0, len(key)))])


def blocks_expected(
    shape: tuple[int, ...], blocks: tuple[int, ...], key: tuple[Any, ...]
) -> tuple[slice, ...]:
    """The element slices `key`'s blocks cover (IndexError for a block out
    of the grid); an integer keeps its dimension, as zarr-python's."""
    out = []
    for d, (n, b) in enumerate(zip(shape, blocks)):
        grid = -(-n // b)
        k = key[d] if d < len(key) else slice(None)
        if isinstance(k, slice):
            start, stop, _ = k.indices(grid)
            stop = max(stop, start)
        else:
            if not -grid <= k < grid:
                raise IndexError(
                    f"block index {k} is out of bounds for axis {d} with {grid} blocks"
                )
            start = k % grid
            stop = start + 1
        out.append(slice(start * b, min(stop * b, n)))
    return tuple(out)


# -- the checks ---------------------------------------------------------------


def assert_same(got: Any, want: Any) -> None:
    """Equal values (NaN and NaT equal themselves), shape, dtype, and a
    scalar where NumPy gives a scalar."""
    assert isinstance(got, np.ndarray) == isinstance(want, np.ndarray), (type(got), type(want))
    if isinstance(want, np.ndarray):
        assert got.shape == want.shape
        assert got.dtype == want.dtype
    else:
        assert type(got) is type(want), (type(got), type(want))
    np.testing.assert_array_equal(got, want, strict=True)


def write_value(
    draw: st.DrawFn, target_shape: tuple[int, ...], dtype: np.dtype[Any], rng: np.random.Generator
) -> Any:
    """A scalar, a value of the selection's shape, or one that broadcasts to
    it (leading dimensions dropped, others of length 1)."""
    kind = draw(st.sampled_from(["scalar", "python scalar", "full", "broadcast"]), label="value")
    if kind in ("scalar", "python scalar"):
        v = random_values(dtype, (), rng)[()]
        if kind == "python scalar" and dtype.kind in "biufcSU":
            return v.item()
        return v
    shape = target_shape
    if kind == "broadcast":
        shape = shape[draw(st.integers(0, len(shape))) :]
        shape = tuple(1 if draw(st.booleans()) else n for n in shape)
    return random_values(dtype, shape, rng)


def check_read_and_write(
    draw: st.DrawFn,
    a: zarrkit.Array,
    expected: np.ndarray,
    rng: np.random.Generator,
    read: Any,
    write: Any,
    want_fn: Any,
) -> None:
    """`read()` equals `want_fn()` (or both raise IndexError); then
    `write(value)` and the same assignment into `expected` (through
    `want_fn`'s NumPy index) agree."""
    try:
        want, np_write = want_fn()
    except IndexError as e:
        note(f"NumPy raises {e}")
        event("IndexError")
        with pytest.raises(IndexError):
            read()
        with pytest.raises(IndexError):
            write(random_values(expected.dtype, (), rng)[()])
        np.testing.assert_array_equal(a[...], expected, strict=True)
        return
    event("selection")
    assert_same(read(), want)
    value = write_value(draw, np.shape(want), expected.dtype, rng)
    note(f"value: {value!r}")
    np_write(value)
    write(value)
    np.testing.assert_array_equal(a[...], expected, strict=True)


@PROPERTY_SETTINGS
@given(st.data())
def test_basic_selections_read_and_write_as_numpy(data: st.DataObject) -> None:
    a, expected, rng = data.draw(arrays())
    key = data.draw(basic_keys(expected.shape), label="key")

    def want() -> tuple[Any, Any]:
        out = expected[key]
        check_every_index(key, expected.shape)
        return out, lambda v: expected.__setitem__(key, v)

    def write(v: Any) -> None:
        a[key] = v

    check_read_and_write(data.draw, a, expected, rng, lambda: a[key], write, want)


@PROPERTY_SETTINGS
@given(st.data())
def test_oindex_reads_and_writes_outer_products(data: st.DataObject) -> None:
    a, expected, rng = data.draw(arrays())
    key = data.draw(orthogonal_keys(expected.shape), label="key")

    def want() -> tuple[Any, Any]:
        out, ix = orthogonal_expected(expected, key)

        def np_write(v: Any) -> None:
            expected[ix] = np.broadcast_to(v, out.shape).reshape(expected[ix].shape)

        return out, np_write

    def write(v: Any) -> None:
        a.oindex[key] = v

    check_read_and_write(data.draw, a, expected, rng, lambda: a.oindex[key], write, want)


@PROPERTY_SETTINGS
@given(st.data())
def test_vindex_reads_and_writes_coordinates_and_masks(data: st.DataObject) -> None:
    a, expected, rng = data.draw(arrays())
    key = data.draw(vectorized_keys(expected.shape), label="key")
    # NumPy's spelling: lists as arrays, one coordinate array as a 1-tuple.
    is_mask = isinstance(key, np.ndarray) and key.dtype == bool
    items = (key,) if is_mask or not isinstance(key, tuple) else key
    np_key: Any = tuple(np.asarray(k) if isinstance(k, list) else k for k in items)
    if is_mask:
        np_key = key

    def want() -> tuple[Any, Any]:
        # As zarr-python's, a 0-d array where NumPy gives a scalar (integer
        # coordinates only, or a 0-d array's `()`).
        key_ = (*np_key, Ellipsis) if isinstance(np_key, tuple) else np_key
        out = expected[key_]
        check_every_index(np_key, expected.shape)
        return out, lambda v: expected.__setitem__(key_, v)

    def write(v: Any) -> None:
        a.vindex[key] = v

    check_read_and_write(
        data.draw, a, expected, rng, lambda: np.asarray(a.vindex[key]), write, want
    )


@PROPERTY_SETTINGS
@given(st.data())
def test_blocks_read_and_write_whole_chunks(data: st.DataObject) -> None:
    a, expected, rng = data.draw(arrays())
    blocks = a.shards or a.chunks
    key = data.draw(block_keys(expected.shape, blocks), label="key")

    def want() -> tuple[Any, Any]:
        region = (*blocks_expected(expected.shape, blocks, key), Ellipsis)  # a 0-d array too
        return expected[region], lambda v: expected.__setitem__(region, v)

    def write(v: Any) -> None:
        a.blocks[key] = v

    check_read_and_write(data.draw, a, expected, rng, lambda: a.blocks[key], write, want)


@PROPERTY_SETTINGS
@given(st.data())
def test_out_of_bounds_integers_name_the_dimension(data: st.DataObject) -> None:
    ndim = data.draw(st.integers(1, 4))
    shape = tuple(data.draw(st.integers(0, MAX_SIDE[ndim])) for _ in range(ndim))
    a = zarrkit.create_array(
        "memory://", shape=shape, dtype="int16", chunks=tuple(max(n, 1) for n in shape)
    )
    d = data.draw(st.integers(0, ndim - 1))
    n = shape[d]
    k = data.draw(st.integers(n, n + 5) | st.integers(-n - 5, -n - 1))
    key = tuple(k if i == d else slice(None) for i in range(ndim))
    with pytest.raises(IndexError) as e:
        a[key]
    assert isinstance(e.value, zarrkit.SelectionError)
    message = str(e.value)
    assert str(k) in message and f"dimension {d}" in message and str(n) in message, message
    with pytest.raises(IndexError):
        a[key] = 1
