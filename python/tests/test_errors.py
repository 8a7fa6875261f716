"""Errors are Python exceptions of the builtin kinds, and ZarrkitErrors."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import zarrkit


def test_missing_node(tmp_path: pathlib.Path) -> None:
    zarrkit.create_group(tmp_path / "g.zarr")
    with pytest.raises(FileNotFoundError) as e:
        zarrkit.open_array(tmp_path / "g.zarr", path="nothing", mode="r")
    assert isinstance(e.value, zarrkit.ZarrkitError)
    assert isinstance(e.value, zarrkit.NodeNotFoundError)
    assert "nothing" in str(e.value)
    with pytest.raises(KeyError) as k:
        zarrkit.open_group(tmp_path / "g.zarr", mode="r")["nothing"]
    assert isinstance(k.value, zarrkit.ZarrkitError)
    # A group where an array is asked for.
    with pytest.raises(FileNotFoundError):
        zarrkit.open_array(tmp_path / "g.zarr", mode="r")


def test_bad_selections_raise_index_error(arr2d) -> None:
    a, _ = arr2d
    for key in [7, -8, (0, 9), (0, 0, 0), [0, 7], (slice(None), [9]), (slice(None, None, 0),),
                (np.ones(6, dtype=bool),)]:
        with pytest.raises(IndexError) as e:
            a[key]
        assert isinstance(e.value, zarrkit.SelectionError), key
    with pytest.raises(IndexError) as e:
        a[7, 0]
    # The message names the dimension's bound.
    assert "7" in str(e.value)
    with pytest.raises(IndexError):
        a[7] = 1
    with pytest.raises(TypeError):
        a[1.5]
    with pytest.raises(TypeError):
        a["x"]
    # A slice's bounds and step must be integers (as NumPy's), each named.
    for key, name in [(np.s_[1.5:], "start"), (np.s_[:"x"], "stop"), (np.s_[::0.5], "step")]:
        with pytest.raises(TypeError, match=f"slice {name} must be an integer or None"):
            a[key]


def test_values_that_do_not_broadcast(arr2d) -> None:
    a, _ = arr2d
    with pytest.raises(ValueError) as e:
        a[0:2, 0:3] = np.zeros((3, 2), dtype="int32")
    assert isinstance(e.value, zarrkit.ZarrkitError)


def test_invalid_document(tmp_path: pathlib.Path) -> None:
    store = tmp_path / "bad.zarr"
    store.mkdir()
    (store / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "array", "shape": "x"}))
    with pytest.raises(ValueError) as e:
        zarrkit.open(store, mode="r")
    assert isinstance(e.value, zarrkit.ZarrkitError)
    assert "zarr.json" in str(e.value)


def test_exists_and_invalid_options(tmp_path: pathlib.Path) -> None:
    zarrkit.create_array(tmp_path / "e.zarr", shape=(2,), dtype="i1")
    with pytest.raises(FileExistsError):
        zarrkit.create_array(tmp_path / "e.zarr", shape=(2,), dtype="i1")
    zarrkit.create_array(tmp_path / "e.zarr", shape=(3,), dtype="i1", overwrite=True)
    with pytest.raises(ValueError):
        zarrkit.create_array(tmp_path / "c.zarr", shape=(2,), dtype="i1",
                             compressors=[{"name": "no-such-codec"}])
    with pytest.raises(ValueError):
        zarrkit.create_array(tmp_path / "f.zarr", shape=(2,), dtype="i1", chunks=(0,))
    with pytest.raises(zarrkit.ZarrkitError):
        zarrkit.open("s3://bucket/x.zarr", mode="r", storage_options={"no_such_option": "1"})
