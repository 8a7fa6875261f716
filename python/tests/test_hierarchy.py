"""`zarrkit.create_hierarchy`: many nodes from their metadata documents at
once, as zarr-python 3's `zarr.create_hierarchy`."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
import zarr

import zarrkit


def _documents(root: pathlib.Path) -> dict[str, bytes]:
    """Every file under `root` (relative path → bytes)."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_documents_from_metadata_create_the_same_hierarchy(tmp_path: pathlib.Path) -> None:
    # One node of each kind created alone, then their documents in a batch.
    single = tmp_path / "single.zarr"
    zarrkit.create_group(single, attributes={"title": "t"})
    a = zarrkit.create_array(
        single, path="g/a", shape=(10, 7), dtype="float32", chunks=(4, 4),
        fill_value=np.nan, attributes={"units": "K"},
    )
    g = zarrkit.open_group(single, path="g")
    root = zarrkit.open_group(single)
    nodes = {"": root.metadata, "g": g.metadata}
    nodes.update({f"g/a{i}": a.metadata for i in range(5)})

    batch = tmp_path / "batch.zarr"
    created = zarrkit.create_hierarchy(batch, nodes)
    assert sorted(created) == ["/", "/g", "/g/a0", "/g/a1", "/g/a2", "/g/a3", "/g/a4"]
    assert isinstance(created["/g"], zarrkit.Group)
    assert isinstance(created["/g/a3"], zarrkit.Array)
    # Byte for byte what creating each alone wrote.
    docs = _documents(batch)
    assert docs["g/a3/zarr.json"] == (single / "g/a/zarr.json").read_bytes()
    assert docs["zarr.json"] == (single / "zarr.json").read_bytes()
    assert len(docs) == 7

    created["/g/a3"][:] = np.arange(70, dtype="float32").reshape(10, 7)
    # zarr-python reads it: tree, attributes, values, the NaN fill value.
    z = zarr.open_group(batch, mode="r")
    assert sorted(name for name, _ in z.members(max_depth=None)) == [
        "g", "g/a0", "g/a1", "g/a2", "g/a3", "g/a4",
    ]
    assert z.attrs["title"] == "t"
    assert z["g/a3"][9, 6] == 69
    assert np.isnan(z["g/a0"][0, 0])


def test_parents_are_added_and_zarr_python_metadata_objects_accepted(
    tmp_path: pathlib.Path,
) -> None:
    src = zarr.create_array(tmp_path / "src.zarr", shape=(6,), dtype="int16", chunks=(4,))
    store = tmp_path / "h.zarr"
    created = zarrkit.create_hierarchy(
        store,
        {"x/y/z": src.metadata, "/w": {"zarr_format": 3, "node_type": "group",
                                       "attributes": {"k": [1, 2]}}},
    )
    assert sorted(created) == ["/", "/w", "/x", "/x/y", "/x/y/z"]
    assert created["/x/y/z"].shape == (6,)
    assert created["/x/y/z"].dtype == np.dtype("int16")
    assert zarrkit.open_group(store, path="w").attrs["k"] == [1, 2]
    assert json.loads((store / "x/y/zarr.json").read_text()) == {
        "zarr_format": 3, "node_type": "group", "attributes": {},
    }


def test_an_existing_node_refuses_the_batch_unless_overwrite(tmp_path: pathlib.Path) -> None:
    store = tmp_path / "h.zarr"
    old = zarrkit.create_array(store, path="a", shape=(4,), dtype="uint8", chunks=(2,))
    old[:] = [1, 2, 3, 4]
    zarr.create_group(store, path="v2", zarr_format=2)
    doc = {"zarr_format": 3, "node_type": "group", "attributes": {"new": True}}
    before = _documents(store)
    for path in ("a", "v2"):
        with pytest.raises(zarrkit.NodeExistsError, match=f"`/{path}` already exists"):
            zarrkit.create_hierarchy(store, {"b": doc, path: doc, "c/d": doc})
        assert _documents(store) == before

    created = zarrkit.create_hierarchy(store, {"a": doc}, overwrite=True)
    assert list(created) == ["/a"]
    assert zarrkit.open_group(store, path="a").attrs["new"] is True
    assert not (store / "a" / "c").exists()


def test_v2_documents(tmp_path: pathlib.Path) -> None:
    store = tmp_path / "v2.zarr"
    array = {
        "zarr_format": 2, "shape": [5], "chunks": [2], "dtype": "<f8",
        "compressor": None, "fill_value": "NaN", "order": "C", "filters": None,
        "attributes": {"a": 1},
    }
    created = zarrkit.create_hierarchy(store, {"g/x": array, "g": {"zarr_format": 2}})
    assert sorted(created) == ["/", "/g", "/g/x"]
    assert created["/g/x"].zarr_format == 2
    assert json.loads((store / "g/x/.zattrs").read_text()) == {"a": 1}
    assert (store / ".zgroup").exists()
    z = zarr.open_array(store, path="g/x", mode="r", zarr_format=2)
    assert np.isnan(z[0])


def test_invalid_batches_name_the_node(tmp_path: pathlib.Path) -> None:
    store = tmp_path / "h.zarr"
    group = {"zarr_format": 3, "node_type": "group"}
    with pytest.raises(zarrkit.InvalidValueError, match="`bad`"):
        zarrkit.create_hierarchy(store, {"ok": group, "bad": {"zarr_format": 3}})
    with pytest.raises(zarrkit.InvalidValueError, match="one batch writes one format"):
        zarrkit.create_hierarchy(store, {"a": group, "b": {"zarr_format": 2}})
    with pytest.raises(zarrkit.InvalidValueError, match="must be a metadata document"):
        zarrkit.create_hierarchy(store, {"a": 3})
    assert _documents(store) == {}
