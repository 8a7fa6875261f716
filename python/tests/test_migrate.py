"""`zarrkit.migrate`: a whole hierarchy into another format, from Python."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
import zarr

import zarrkit


def _v2_store(root: pathlib.Path) -> dict[str, np.ndarray]:
    g = zarrkit.create_group(root, zarr_format=2, attributes={"title": "t"})
    temp = np.arange(6 * 8, dtype="float32").reshape(6, 8) / 3
    a = g.create_array(
        "temp", shape=(6, 8), dtype="float32", chunks=(4, 3), fill_value=-1,
        attributes={"_ARRAY_DIMENSIONS": ["y", "x"], "units": "K"},
    )
    a[...] = temp
    sub = g.create_group("sub")
    n = sub.create_array("n", shape=(5,), dtype="int64", chunks=(2,),
                         compressors={"name": "gzip", "configuration": {"level": 1}})
    n[:4] = [10, -20, 30, -40]
    return {"/temp": temp, "/sub/n": np.array([10, -20, 30, -40, 0])}


def test_migrated_v2_store_is_read_by_zarr_python(tmp_path: pathlib.Path) -> None:
    expected = _v2_store(tmp_path / "src.zarr")
    report = zarrkit.migrate(tmp_path / "src.zarr", tmp_path / "dst.zarr")
    assert report["format"] == "v3"
    assert report["source"] == str(tmp_path / "src.zarr")
    assert report["destination"] == str(tmp_path / "dst.zarr")
    assert (report["groups"], report["arrays_copied"], report["arrays_reencoded"]) == (2, 2, [])
    assert report["resumed"] is False
    # 4 stored chunks of /temp ((6, 8) in (4, 3): 2 x 3 = 6) and 2 of /sub/n.
    assert (report["chunks_written"], report["chunks_skipped"]) == (6 + 2, 0)
    assert report["bytes_read"] == report["bytes_written"] > 0
    assert report["chunks_verified"] >= 8
    notes = [n["note"] for n in report["notes"] if n["path"] == "/temp"]
    assert any("_ARRAY_DIMENSIONS" in n for n in notes), report["notes"]
    z = zarr.open_group(str(tmp_path / "dst.zarr"), mode="r")
    assert z.metadata.zarr_format == 3
    assert dict(z.attrs) == {"title": "t"}
    temp = z["temp"]
    assert temp.metadata.dimension_names == ("y", "x")
    assert temp.attrs["units"] == "K"
    assert temp.fill_value == -1
    np.testing.assert_array_equal(temp[...], expected["/temp"])
    np.testing.assert_array_equal(z["sub/n"][...], expected["/sub/n"])
    back = zarrkit.open_array(tmp_path / "dst.zarr", path="temp", mode="r")
    assert back.zarr_format == 3 and back.dimension_names == ("y", "x")


def test_dry_run_plans_and_writes_nothing(tmp_path: pathlib.Path) -> None:
    _v2_store(tmp_path / "src.zarr")
    plan = zarrkit.migrate(tmp_path / "src.zarr", dry_run=True)
    assert not (tmp_path / "dst.zarr").exists()
    assert (plan["to"], plan["destination"]) == ("v3", None)
    assert plan["total"] == {
        "nodes": 4, "groups": 2, "arrays": 2, "reencoded": 0, "chunks": 8,
        "bytes": plan["total"]["bytes"],
    }
    nodes = {n["path"]: n for n in plan["nodes"]}
    assert sorted(nodes) == ["/", "/sub", "/sub/n", "/temp"]
    assert (nodes["/temp"]["node_type"], nodes["/temp"]["action"]) == ("array", "copy")
    assert nodes["/temp"]["source_format"] == "v2"
    assert nodes["/sub/n"]["chunks"] == 2
    plan2 = zarrkit.migrate(tmp_path / "src.zarr", tmp_path / "dst.zarr", dry_run=True)
    assert plan2["destination"] == str(tmp_path / "dst.zarr")
    assert not (tmp_path / "dst.zarr").exists()


def test_migrate_to_v2_and_errors(tmp_path: pathlib.Path) -> None:
    a = zarrkit.create_array(tmp_path / "v3.zarr", shape=(4,), dtype="uint16", chunks=(2,),
                             dimension_names=("t",))
    a[...] = [1, 2, 3, 4]
    report = zarrkit.migrate(tmp_path / "v3.zarr", tmp_path / "v2.zarr", to=2)
    assert report["format"] == "v2" and report["arrays_copied"] == 1
    z = zarr.open_array(str(tmp_path / "v2.zarr"), mode="r")
    assert z.metadata.zarr_format == 2
    assert z.attrs["_ARRAY_DIMENSIONS"] == ["t"]
    assert z[...].tolist() == [1, 2, 3, 4]
    with pytest.raises(zarrkit.NodeExistsError):
        zarrkit.migrate(tmp_path / "v3.zarr", tmp_path / "v2.zarr", to="v2")
    with pytest.raises(zarrkit.InvalidValueError, match="unknown format"):
        zarrkit.migrate(tmp_path / "v3.zarr", tmp_path / "x.zarr", to="v9")
    with pytest.raises(zarrkit.InvalidValueError, match="destination"):
        zarrkit.migrate(tmp_path / "v3.zarr")
    with pytest.raises(zarrkit.NodeNotFoundError):
        zarrkit.migrate(tmp_path / "missing.zarr", tmp_path / "y.zarr")
