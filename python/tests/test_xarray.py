"""The xarray backend (``engine="zarrkit"``): Datasets and DataTrees equal
to ``engine="zarr"``'s on stores xarray writes with zarr-python 3.1.6 (v2
and v3), laziness, Dask chunks, the options, the formats only zarrkit
opens (v1, the v3 drafts), and an S3 store."""

from __future__ import annotations

import os
import pathlib
import shutil
import time
import tomllib
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import zarrkit
from zarrkit.xarray_backend import ZarrkitBackendArray, ZarrkitBackendEntrypoint

from conftest import REPO

TESTDATA = REPO / "testdata"

# zarr-python's warnings about v3 consolidated metadata and data types
# without a v3 specification, and xarray's when consolidated metadata is
# missing, are about engine="zarr"; they are not what is tested here.
pytestmark = pytest.mark.filterwarnings(
    "ignore::UserWarning", "ignore::RuntimeWarning", "ignore:The data type"
)


def _dataset() -> xr.Dataset:
    """A Dataset with what CF decoding acts on: times, integers scaled
    with `scale_factor`/`add_offset` and a `_FillValue`, NaN fill values,
    strings (variable and fixed length), a non-index coordinate, attributes."""
    time = pd.date_range("2000-01-01", periods=6, freq="D")
    ds = xr.Dataset(
        {
            "temp": (("time", "x"), np.arange(24, dtype="f4").reshape(6, 4), {"units": "K"}),
            "scaled": (("time", "x"), np.linspace(0, 10, 24).reshape(6, 4)),
            "nan": (("x",), np.array([1.0, np.nan, 3.0, np.nan])),
            "name": (("x",), np.array(["a", "bb", "", "dddd"], dtype=object)),
            "fixed": (("x",), np.array(["a", "bb", "c", "d"], dtype="U2")),
            "flag": (("x",), np.array([True, False, True, True])),
            "wait": (("time",), pd.to_timedelta(np.arange(6), unit="h")),
        },
        coords={"time": time, "x": [10, 20, 30, 40], "lat": ("x", [1.5, 2.5, 3.5, 4.5])},
        attrs={"title": "test", "version": 3},
    )
    ds.scaled.encoding = {"dtype": "i2", "scale_factor": 0.1, "add_offset": 1.0, "_FillValue": -999}
    return ds


ENCODING = {"temp": {"chunks": (2, 2)}}


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[int, pathlib.Path]:
    """The Dataset written by xarray (engine="zarr") in formats 2 and 3."""
    root = tmp_path_factory.mktemp("xr")
    out = {}
    for fmt in (2, 3):
        out[fmt] = root / f"v{fmt}.zarr"
        _dataset().to_zarr(out[fmt], zarr_format=fmt, encoding=ENCODING, mode="w")
    return out


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> dict[int, pathlib.Path]:
    """A DataTree of nested groups written by xarray in formats 2 and 3."""
    root = tmp_path_factory.mktemp("xrtree")
    ds = _dataset()
    tree = xr.DataTree.from_dict(
        {
            "/": ds,
            "/a": xr.Dataset({"t2": ds.temp * 2}, attrs={"level": 1}),
            "/a/b": xr.Dataset({"v": ("z", np.arange(3, dtype="u2"))}, coords={"z": [5, 6, 7]}),
            "/c": xr.Dataset(attrs={"empty": True}),
        }
    )
    out = {}
    for fmt in (2, 3):
        out[fmt] = root / f"tree{fmt}.zarr"
        tree.to_zarr(out[fmt], zarr_format=fmt, mode="w")
    return out


def zk(store: object, **kwargs: object) -> xr.Dataset:
    return xr.open_dataset(store, engine="zarrkit", **kwargs)


def zr(store: object, **kwargs: object) -> xr.Dataset:
    return xr.open_dataset(store, engine="zarr", **kwargs)


# -- the same Dataset as engine="zarr" -----------------------------------


def test_the_engine_is_registered() -> None:
    engines = xr.backends.list_engines()
    assert isinstance(engines["zarrkit"], ZarrkitBackendEntrypoint)
    backend = engines["zarrkit"]
    assert "zarrkit" in backend.description and backend.url.endswith("#python")
    assert backend.supports_groups
    assert {"group", "storage_options", "drop_variables", "mask_and_scale"} <= set(
        backend.open_dataset_parameters
    )


DECODINGS = [
    {},
    {"mask_and_scale": False},
    {"decode_times": False},
    {"decode_timedelta": False, "decode_coords": False},
    {"concat_characters": False},
    {"decode_times": xr.coders.CFDatetimeCoder(time_unit="s")},
]


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("decoding", DECODINGS, ids=lambda d: ",".join(f"{k}={v}" for k, v in d.items()) or "default")
def test_identical_to_engine_zarr(stores: dict[int, pathlib.Path], fmt: int, decoding: dict) -> None:
    ours = zk(stores[fmt], **decoding)
    theirs = zr(stores[fmt], **decoding)
    xr.testing.assert_identical(ours, theirs)
    for name in ours.variables:
        a, b = ours[name].encoding, theirs[name].encoding
        for key in ("chunks", "preferred_chunks", "shards", "dtype", "_FillValue", "fill_value",
                    "scale_factor", "add_offset", "units", "calendar", "coordinates"):
            assert (key in a) == (key in b), (name, key)
            if key in a:
                np.testing.assert_equal(a[key], b[key], err_msg=f"{name} {key}")


ZARR_DTYPES = ["bool", "i1", "u2", "i4", "u8", "f2", "f4", "f8", "c8", "c16", "M8[s]", "m8[ms]",
               "S3", "U4", "str"]


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("dtype", ZARR_DTYPES)
@pytest.mark.parametrize("fill", ["default", "first value"])
def test_every_data_type_as_engine_zarr(tmp_path: pathlib.Path, fmt: int, dtype: str, fill: str) -> None:
    # An array written by zarr-python itself, with the dimension names
    # xarray reads from each format.
    import zarr

    store = tmp_path / "t.zarr"
    if dtype in ("S3", "U4", "str"):
        values = np.array(["ab", "", "xyz", "q", "", "w"], dtype=object if dtype == "str" else dtype)
    else:
        values = np.array([1, 0, 2, 1, 0, 3]).astype(dtype)
    names = {"dimension_names": ("y", "x")} if fmt == 3 else {"attributes": {"_ARRAY_DIMENSIONS": ["y", "x"]}}
    a = zarr.open_group(store, mode="w", zarr_format=fmt).create_array(
        "v", shape=(2, 3), chunks=(1, 2), dtype=str if dtype == "str" else dtype,
        fill_value=None if fill == "default" else values[0], **names,
    )
    a[...] = values.reshape(2, 3)
    for decoding in ({}, {"mask_and_scale": False}):
        ours, theirs = zk(store, **decoding), zr(store, **decoding)
        xr.testing.assert_identical(ours, theirs)
        for key in ("_FillValue", "fill_value", "dtype", "chunks", "preferred_chunks", "shards"):
            mine, zarrs = ours.v.encoding.get(key, "absent"), theirs.v.encoding.get(key, "absent")
            np.testing.assert_equal(mine, zarrs, err_msg=key)
            assert key == "dtype" or type(mine) is type(zarrs), (key, mine, zarrs)


@pytest.mark.parametrize("fmt", [2, 3])
def test_decoded_values(stores: dict[int, pathlib.Path], fmt: int) -> None:
    ds = zk(stores[fmt])
    expected = _dataset()
    assert ds.time.dtype == np.dtype("datetime64[ns]")
    np.testing.assert_array_equal(ds.time.values, pd.date_range("2000-01-01", periods=6).values)
    np.testing.assert_array_equal(ds.wait.values, expected.wait.values)
    # Stored as int16 tenths, decoded to within half a tenth.
    assert ds.scaled.dtype == np.float64
    np.testing.assert_allclose(ds.scaled.values, expected.scaled.values, atol=0.05 + 1e-12)
    raw = zk(stores[fmt], mask_and_scale=False).scaled
    assert raw.dtype == np.int16 and raw.attrs["scale_factor"] == 0.1
    np.testing.assert_array_equal(raw.values, np.round((expected.scaled.values - 1.0) / 0.1))
    np.testing.assert_array_equal(np.isnan(ds.nan.values), [False, True, False, True])
    assert ds.name.values.tolist() == ["a", "bb", "", "dddd"]
    assert ds.fixed.values.tolist() == ["a", "bb", "c", "d"]
    assert ds.flag.values.tolist() == [True, False, True, True]
    assert set(ds.coords) == {"time", "x", "lat"} and "lat" not in ds.data_vars
    assert ds.attrs == {"title": "test", "version": 3}
    assert ds.temp.attrs == {"units": "K"}
    assert ds.temp.dims == ("time", "x")


@pytest.mark.parametrize("fmt", [2, 3])
def test_datatree_identical_to_engine_zarr(trees: dict[int, pathlib.Path], fmt: int) -> None:
    ours = xr.open_datatree(trees[fmt], engine="zarrkit")
    xr.testing.assert_identical(ours, xr.open_datatree(trees[fmt], engine="zarr"))
    assert ours["a/b"].v.values.tolist() == [0, 1, 2]
    assert ours["c"].attrs == {"empty": True}
    sub = xr.open_datatree(trees[fmt], engine="zarrkit", group="a")
    xr.testing.assert_identical(sub, xr.open_datatree(trees[fmt], engine="zarr", group="a"))
    assert set(sub.children) == {"b"}
    chunked = xr.open_datatree(trees[fmt], engine="zarrkit", chunks={})
    assert chunked["a"].t2.chunks == ((6,), (4,)) == tuple((c,) for c in ours["a"].t2.encoding["chunks"])
    xr.testing.assert_identical(chunked.compute(), ours.compute())
    groups = xr.open_groups(trees[fmt], engine="zarrkit")
    assert list(groups) == list(xr.open_groups(trees[fmt], engine="zarr"))
    assert sorted(groups) == ["/", "/a", "/a/b", "/c"]


@pytest.mark.parametrize("fmt", [2, 3])
def test_group(trees: dict[int, pathlib.Path], fmt: int) -> None:
    for group in ("a", "/a/b", "c"):
        xr.testing.assert_identical(zk(trees[fmt], group=group), zr(trees[fmt], group=group))
    assert zk(trees[fmt], group="a/b").v.values.tolist() == [0, 1, 2]
    with pytest.raises(FileNotFoundError):
        zk(trees[fmt], group="nowhere")


@pytest.mark.parametrize("fmt", [2, 3])
def test_drop_variables(stores: dict[int, pathlib.Path], fmt: int) -> None:
    ds = zk(stores[fmt], drop_variables=["temp", "lat"])
    assert set(ds.variables) == {"scaled", "nan", "name", "fixed", "flag", "wait", "time", "x"}
    xr.testing.assert_identical(ds, zr(stores[fmt], drop_variables=["temp", "lat"]))
    assert "nan" not in zk(stores[fmt], drop_variables="nan").variables


def test_sharded_encoding(tmp_path: pathlib.Path) -> None:
    store = tmp_path / "sharded.zarr"
    _dataset()[["temp"]].to_zarr(
        store, zarr_format=3, encoding={"temp": {"chunks": (1, 2), "shards": (2, 4)}}
    )
    ours, theirs = zk(store), zr(store)
    xr.testing.assert_identical(ours, theirs)
    enc = ours.temp.encoding
    assert enc["chunks"] == theirs.temp.encoding["chunks"] == (1, 2)
    assert enc["preferred_chunks"] == theirs.temp.encoding["preferred_chunks"] == {"time": 1, "x": 2}
    assert enc["shards"] == theirs.temp.encoding["shards"] == (2, 4)


def test_zarrkit_nodes_and_zarr_format(stores: dict[int, pathlib.Path]) -> None:
    g = zarrkit.open_group(stores[3], mode="r")
    xr.testing.assert_identical(zk(g), zk(stores[3]))
    alone = zk(g, group="temp")  # an array: a Dataset of it alone
    assert list(alone.variables) == ["temp"] and alone.attrs == {}
    xr.testing.assert_identical(alone.temp.variable, zk(stores[3]).temp.variable)
    assert zk(stores[2], zarr_format=2).temp.shape == (6, 4)
    for consolidated in (None, True, False):  # accepted as engine="zarr" takes it
        xr.testing.assert_identical(zk(stores[2], consolidated=consolidated), zr(stores[2]))
    with pytest.raises(FileNotFoundError, match="format 2, not 3"):
        zk(stores[2], zarr_format=3)


def test_a_zip_archive(stores: dict[int, pathlib.Path], tmp_path: pathlib.Path) -> None:
    archive = shutil.make_archive(str(tmp_path / "v3"), "zip", stores[3])
    xr.testing.assert_identical(zk(archive), zr(stores[3]))


def test_a_missing_store() -> None:
    with pytest.raises(FileNotFoundError):
        zk("/nonexistent/x.zarr")


def test_guess_can_open(stores: dict[int, pathlib.Path], tmp_path: pathlib.Path) -> None:
    backend = ZarrkitBackendEntrypoint()
    assert backend.guess_can_open(stores[3]) and backend.guess_can_open(str(stores[2]) + "/")
    assert backend.guess_can_open(TESTDATA / "fixtures/v1/spec_example_int32_zlib")
    assert not backend.guess_can_open(tmp_path) and not backend.guess_can_open("x.nc")
    assert not backend.guess_can_open(b"bytes")


# -- laziness, outer and vectorized selections, Dask ----------------------


def test_opening_reads_no_chunk_and_a_selection_only_its_own(tmp_path: pathlib.Path) -> None:
    store = tmp_path / "lazy.zarr"
    _dataset().to_zarr(store, zarr_format=3, encoding=ENCODING)
    # `temp` has 3×2 chunks of 2×2; spoil every one but c/1/0 (rows 2-3,
    # columns 0-1): a read of any other fails to decompress.
    chunks = sorted(p for p in (store / "temp" / "c").rglob("*") if p.is_file())
    assert len(chunks) == 6
    for p in chunks:
        if p.relative_to(store / "temp" / "c").parts != ("1", "0"):
            p.write_bytes(b"not zstd at all")
    ds = zk(store)
    assert not ds.temp.variable._in_memory
    assert ds.temp[3, 1].item() == 13.0
    np.testing.assert_array_equal(ds.temp.isel(time=[3, 2], x=[1, 0]).values, [[13, 12], [9, 8]])
    points = ds.temp.isel(time=xr.DataArray([2, 3], dims="p"), x=xr.DataArray([1, 0], dims="p"))
    np.testing.assert_array_equal(points.values, [9, 12])
    with pytest.raises(zarrkit.ZarrkitError):
        ds.temp[0, 0].values
    with pytest.raises(zarrkit.ZarrkitError):
        ds.temp.values


def test_http_reads_are_counted(tmp_path: pathlib.Path) -> None:
    url, root, log = (os.environ.get(v) for v in
                      ("ZARRKIT_HTTP_URL", "ZARRKIT_HTTP_ROOT", "ZARRKIT_HTTP_ACCESS_LOG"))
    if not (url and root and log):
        _no_server("ZARRKIT_HTTP_URL, ZARRKIT_HTTP_ROOT and ZARRKIT_HTTP_ACCESS_LOG")
        return
    prefix = f"xarray-{os.getpid()}-{time.time_ns()}"
    target = pathlib.Path(root) / prefix / "lazy.zarr"
    try:
        _dataset().to_zarr(target, zarr_format=3, encoding=ENCODING, consolidated=True)

        def temp_chunk_requests() -> list[str]:
            lines = pathlib.Path(log).read_text().splitlines()
            return [ln for ln in lines if f"/{prefix}/lazy.zarr/temp/c/" in ln]

        ds = zk(f"{url}/{prefix}/lazy.zarr")
        assert ds.temp.shape == (6, 4)
        assert temp_chunk_requests() == []
        assert ds.temp[5, 3].item() == 23.0
        _wait_for(lambda: len(temp_chunk_requests()) >= 1)
        requests = temp_chunk_requests()
        assert len(requests) == 1 and "/temp/c/2/1 " in requests[0], requests
    finally:
        shutil.rmtree(pathlib.Path(root) / prefix, ignore_errors=True)


def _wait_for(condition: object, seconds: float = 5.0) -> None:
    """nginx writes its access log line as the response ends."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.02)


def _no_server(what: str) -> None:
    if os.environ.get("ZARRKIT_REQUIRE_SERVERS") == "1":
        pytest.fail(f"ZARRKIT_REQUIRE_SERVERS=1 but {what} are not set (scripts/servers.sh)")
    pytest.skip(f"no test server: {what} not set (scripts/servers.sh)")


@pytest.mark.parametrize("fmt", [2, 3])
def test_outer_and_vectorized_selections(stores: dict[int, pathlib.Path], fmt: int) -> None:
    temp = zk(stores[fmt]).temp
    values = np.arange(24, dtype="f4").reshape(6, 4)
    np.testing.assert_array_equal(temp.isel(time=[0, 5, 2], x=[3, 1]).values,
                                  values[np.ix_([0, 5, 2], [3, 1])])
    np.testing.assert_array_equal(temp[::-2, ::-1].values, values[::-2, ::-1])
    p, q = xr.DataArray([0, 5, 2], dims="p"), xr.DataArray([3, 1, 0], dims="p")
    np.testing.assert_array_equal(temp.isel(time=p, x=q).values, values[[0, 5, 2], [3, 1, 0]])
    np.testing.assert_array_equal(temp.isel(time=p, x=slice(1, 3)).values, values[[0, 5, 2], 1:3])
    grid = xr.DataArray([[0, 5], [2, 1]], dims=("p", "r"))
    np.testing.assert_array_equal(temp.isel(time=grid).values, values[[[0, 5], [2, 1]]])
    np.testing.assert_array_equal(temp.sel(x=[40, 10]).values, values[:, [3, 0]])


def test_backend_array_directly(stores: dict[int, pathlib.Path]) -> None:
    arr = ZarrkitBackendArray(zarrkit.open_array(stores[3], path="temp", mode="r"))
    values = np.arange(24, dtype="f4").reshape(6, 4)
    idx = xr.core.indexing
    assert arr.shape == (6, 4) and arr.dtype == np.float32
    np.testing.assert_array_equal(arr[idx.BasicIndexer((slice(1, 5, 3), 2))], values[1:5:3, 2])
    np.testing.assert_array_equal(
        arr[idx.OuterIndexer((np.array([4, 0]), slice(None, None, 2)))], values[[4, 0]][:, ::2]
    )
    key = idx.VectorizedIndexer((np.array([[1], [4]]), slice(0, 3)))
    got = arr[key]  # the arrays' broadcast shape, then the slice's
    assert got.shape == (2, 1, 3)
    np.testing.assert_array_equal(got, values[np.array([[1], [4]]), :3])


@pytest.mark.parametrize("fmt", [2, 3])
def test_dask_chunks(stores: dict[int, pathlib.Path], fmt: int) -> None:
    import dask.array

    ds = zk(stores[fmt], chunks={})
    assert isinstance(ds.temp.data, dask.array.Array)
    assert ds.temp.chunks == ((2, 2, 2), (2, 2))  # the stored chunks
    assert ds.scaled.chunks == ((6,), (4,))
    xr.testing.assert_identical(ds.compute(), zk(stores[fmt]).compute())
    xr.testing.assert_identical(ds, zr(stores[fmt], chunks={}))
    auto = zk(stores[fmt], chunks="auto", drop_variables=["name"])
    assert isinstance(auto.temp.data, dask.array.Array)
    assert auto.temp.chunks == ((6,), (4,))  # whole chunks, merged
    np.testing.assert_array_equal(auto.temp.values, np.arange(24, dtype="f4").reshape(6, 4))
    two = zk(stores[fmt], chunks={"time": 4})
    assert two.temp.chunks == ((4, 2), (2, 2))
    assert float(two.temp.sum().compute()) == 276.0


# -- arrays without dimension names; what engine="zarr" cannot open -------


def test_dimension_names_where_the_format_has_none(tmp_path: pathlib.Path) -> None:
    store = tmp_path / "nameless.zarr"
    zarrkit.create_group(store, attributes={"about": "nameless"})
    a = zarrkit.create_array(store, name="a", shape=(2, 3), dtype="i4", chunks=(1, 3))
    a[...] = np.arange(6).reshape(2, 3)
    zarrkit.create_array(store, name="b", shape=(2,), dtype="f4", fill_value=1.5)
    zarrkit.create_array(store, name="c", shape=(5,), dtype="u1")  # dim_0 of another length
    zarrkit.create_array(store, name="d", shape=(3, 3), dtype="u1", dimension_names=("y", None))
    zarrkit.create_array(store, name="e", shape=(3, 2), dtype="u1", dimension_names=("y", None))
    # engine="zarr" refuses v3 arrays without dimension_names.
    with pytest.raises(KeyError, match="dimension_names"):
        zr(store)
    ds = zk(store)
    assert ds.a.dims == ("dim_0", "dim_1")
    assert ds.b.dims == ("dim_0",)
    assert ds.c.dims == ("c_dim_0",)
    assert ds.d.dims == ("y", "dim_1")
    assert ds.e.dims == ("y", "e_dim_1")
    assert ds.sizes == {"dim_0": 2, "dim_1": 3, "c_dim_0": 5, "y": 3, "e_dim_1": 2}
    np.testing.assert_array_equal(ds.a.values, np.arange(6).reshape(2, 3))
    # v3: the fill value is encoding only, never a mask.
    assert ds.b.values.tolist() == [1.5, 1.5] and ds.b.encoding["fill_value"] == 1.5
    assert ds.attrs == {"about": "nameless"}


def test_a_plain_fill_value_attribute_in_v3(tmp_path: pathlib.Path) -> None:
    # xarray writes a float `_FillValue` as base64; other writers give the
    # number, which engine="zarr" refuses and zarrkit takes.
    store = tmp_path / "plain.zarr"
    zarrkit.create_group(store)
    a = zarrkit.create_array(store, name="v", shape=(3,), dtype="f4", dimension_names=("x",),
                             attributes={"_FillValue": -9999.0})
    a[...] = [1.0, -9999.0, 3.0]
    with pytest.raises(TypeError, match="expected str or bytes"):
        zr(store)
    ds = zk(store)
    np.testing.assert_array_equal(ds.v.values, [1.0, np.nan, 3.0])
    assert ds.v.encoding["_FillValue"] == -9999.0


def test_v2_dimension_names_and_fill_value(tmp_path: pathlib.Path) -> None:
    store = tmp_path / "v2.zarr"
    zarrkit.create_group(store, zarr_format=2)
    a = zarrkit.create_array(store, name="a", shape=(2, 3), dtype="i2", fill_value=-1,
                             zarr_format=2, attributes={"_ARRAY_DIMENSIONS": ["y", "x"], "k": 1,
                                                        "_nc_hidden": 0})
    a[0] = [1, -1, 3]
    # engine="zarr" agrees while every array has dimension names.
    xr.testing.assert_identical(zk(store), zr(store))
    zarrkit.create_array(store, name="b", shape=(4,), dtype="f8", zarr_format=2)
    ds = zk(store)
    assert ds.a.dims == ("y", "x") and ds.b.dims == ("dim_0",)
    assert ds.a.attrs == {"k": 1}  # _ARRAY_DIMENSIONS and _nc* hidden
    # v2: the fill value is the CF _FillValue, so it masks.
    np.testing.assert_array_equal(ds.a.values, [[1, np.nan, 3], [np.nan] * 3])
    assert ds.a.encoding["_FillValue"] == -1
    unmasked = zk(store, use_zarr_fill_value_as_mask=False)
    assert unmasked.a.values.tolist() == [[1, -1, 3], [-1, -1, -1]]
    with pytest.raises(KeyError, match="_ARRAY_DIMENSIONS"):
        zr(store)


def test_a_root_array_opens_as_an_unnamed_dataarray(tmp_path: pathlib.Path) -> None:
    store = tmp_path / "root.zarr"
    a = zarrkit.create_array(store, shape=(3,), dtype="u2", zarr_format=2,
                             attributes={"_ARRAY_DIMENSIONS": ["t"], "units": "m"})
    a[...] = [4, 5, 6]
    da = xr.open_dataarray(store, engine="zarrkit", mask_and_scale=False)
    assert da.name is None and da.dims == ("t",)
    assert da.attrs == {"units": "m", "_FillValue": 0}  # v2: the fill value, undecoded
    assert da.values.tolist() == [4, 5, 6]
    inner = tmp_path / "g.zarr"
    zarrkit.create_group(inner).create_array("sub/arr", shape=(2,), dtype="i1", fill_value=7)
    ds = zk(inner, group="sub/arr")
    assert list(ds.data_vars) == ["arr"] and ds.arr.values.tolist() == [7, 7]


# -- v1 and the v3 drafts, from the Rust tests' fixtures --------------------

FIXTURES = tomllib.loads((TESTDATA / "fixtures.toml").read_text())["fixture"]
OLD_FORMATS = [
    f for f in FIXTURES
    if f["format"] not in ("v2", "v3") and f["data_type"] not in ("struct", "r24")
]


def test_the_old_format_cases() -> None:
    formats = {f["format"] for f in OLD_FORMATS}
    assert formats == {"v1", "v3-draft-2019", "v3-draft-2019a", "v3-draft-2019-json", "v3-draft-2022"}
    assert len(OLD_FORMATS) >= 60


@pytest.mark.parametrize("fixture", OLD_FORMATS, ids=[f["name"] for f in OLD_FORMATS])
def test_old_formats(fixture: dict) -> None:
    store, node = TESTDATA / fixture["store"], fixture["node"]
    array = zarrkit.open_array(store, path=node, mode="r")
    expected = array[...]
    raw = zk(store, group=node, mask_and_scale=False, decode_times=False, decode_timedelta=False,
             concat_characters=False)
    (name,) = raw.data_vars
    var = raw[name]
    assert name == (node.rsplit("/", 1)[-1] or "__xarray_dataarray_variable__")
    assert var.dims == tuple(f"dim_{i}" for i in range(array.ndim))
    assert var.dtype == expected.dtype
    np.testing.assert_array_equal(var.values, expected)
    # With decoding: the fill value masks (as xarray reads v2), so a
    # number equal to it reads NaN (NaT for times).
    # With decoding, the fill value of v1 and the drafts masks (as xarray
    # reads v2): a number equal to it reads NaN.
    decoded = zk(store, group=node)[name]
    if expected.dtype.kind in "iufc":
        fill = raw[name].attrs.get("_FillValue")
        hit = np.zeros(expected.shape, bool) if fill is None else expected == fill
        assert np.all(np.isnan(decoded.values[hit]))
        np.testing.assert_array_equal(decoded.values[~hit], expected[~hit])


def test_draft_hierarchy_as_a_datatree() -> None:
    store = TESTDATA / "fixtures/v3-draft-2019-json/zarr-python-2.18.zarr"
    tree = xr.open_datatree(store, engine="zarrkit", mask_and_scale=False)
    assert set(tree.children) == {"nested", "sub"} and set(tree["nested"].children) == {"deeper"}
    assert tree["sub"].attrs == {"kind": "explicit group"}
    assert tree.bool_dot_separator.dims == ("dim_0",)  # 11 long
    leaf = tree["nested/deeper"].uint8_missing_chunks
    # dim_0 is 11 long in the root, which the child inherits.
    assert leaf.dims == ("uint8_missing_chunks_dim_0", "uint8_missing_chunks_dim_1")
    np.testing.assert_array_equal(
        leaf.values,
        zarrkit.open_array(store, path="nested/deeper/uint8_missing_chunks", mode="r")[...],
    )
    assert zk(store).int16_gzip.shape == (7, 9)


def test_v1_with_chunks() -> None:
    store = TESTDATA / "fixtures/v1/spec_example_int32_zlib"
    array = zarrkit.open_array(store, mode="r")
    ds = zk(store, chunks={}, mask_and_scale=False)
    var = ds["__xarray_dataarray_variable__"]
    assert var.chunks == tuple(
        tuple(min(c, n - i) for i in range(0, n, c)) for c, n in zip(array.chunks, array.shape)
    )
    np.testing.assert_array_equal(var.values, array[...])


# -- a remote store --------------------------------------------------------


def test_s3_through_storage_options() -> None:
    endpoint = os.environ.get("ZARRKIT_S3_ENDPOINT")
    if not endpoint:
        _no_server("ZARRKIT_S3_ENDPOINT")
        return
    options = {
        "aws_endpoint": endpoint,
        "aws_access_key_id": os.environ.get("AWS_ACCESS_KEY_ID", "zarrkit-test"),
        "aws_secret_access_key": os.environ.get("AWS_SECRET_ACCESS_KEY", "zarrkit-test-secret"),
        "aws_region": os.environ.get("AWS_REGION", "us-east-1"),
        "max_retries": "2",
    }
    bucket = os.environ.get("ZARRKIT_TEST_BUCKET", "zarrkit")
    url = f"s3://{bucket}/xarray-{os.getpid()}-{time.time_ns()}.zarr"
    g = zarrkit.create_group(url, storage_options=options, attributes={"title": "remote"})
    try:
        t = g.create_array("time", shape=(3,), dtype="i8", dimension_names=("time",),
                           attributes={"units": "days since 2020-01-01", "calendar": "standard"})
        t[...] = [0, 1, 31]
        v = g.create_array("v", shape=(3, 2), dtype="i2", chunks=(1, 2), dimension_names=("time", "x"),
                           attributes={"scale_factor": 0.5, "_FillValue": -1})
        v[...] = [[2, 4], [-1, 6], [8, 10]]
        ds = zk(url, storage_options=options, chunks={})
        assert ds.attrs == {"title": "remote"}
        np.testing.assert_array_equal(
            ds.time.values, np.array(["2020-01-01", "2020-01-02", "2020-02-01"], dtype="M8[ns]")
        )
        assert ds.v.chunks == ((1, 1, 1), (2,))
        np.testing.assert_array_equal(ds.v.values, [[1, 2], [np.nan, 3], [4, 5]])
        assert xr.open_datatree(url, engine="zarrkit", storage_options=options)["/"].v.shape == (3, 2)
    finally:
        with warnings.catch_warnings():
            g._store.clear()
