"""Every format read from Python: the fixtures the Rust tests read
(testdata/fixtures.toml: v1, v2, v3, the v3 drafts, with the SHA-256 of
each array's values), zarr-python 2's fixture directory, and zip stores."""

from __future__ import annotations

import hashlib
import pathlib
import tomllib
import zipfile

import numpy as np
import pytest
import zarr

import zarrkit

from conftest import REPO, SHARED_TESTDATA

TESTDATA = REPO / "testdata"
FIXTURES = tomllib.loads((TESTDATA / "fixtures.toml").read_text())["fixture"]

# The data types whose values NumPy holds as they are stored; struct
# arrays and the complex small floats have no NumPy dtype (zarrkit gives
# them as raw `V` bytes, whose byte order the manifest's digest fixes
# field by field) and are left to a later phase.
NUMPY_TYPES = {
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128", "numpy.datetime64",
    "numpy.timedelta64", "fixed_length_utf32", "null_terminated_bytes", "r24",
}
CASES = [f for f in FIXTURES if f["data_type"] in NUMPY_TYPES]


def test_the_cases_cover_every_format() -> None:
    formats = {f["format"] for f in CASES}
    assert {"v1", "v2", "v3", "v3-draft-2022", "v3-draft-2019"} <= formats, formats
    assert len(CASES) >= 140


@pytest.mark.parametrize("fixture", CASES, ids=[f["name"] for f in CASES])
def test_fixture_values(fixture: dict) -> None:
    a = zarrkit.open_array(TESTDATA / fixture["store"], path=fixture["node"], mode="r")
    assert a.shape == tuple(fixture["shape"])
    assert a.data_type == fixture["data_type"]
    values = np.array(a[...])
    assert values.shape == tuple(fixture["shape"])
    little = values.astype(values.dtype.newbyteorder("<")) if values.dtype.byteorder != "|" else values
    assert hashlib.sha256(little.tobytes()).hexdigest() == fixture["sha256"]
    # A reversed, strided read agrees with NumPy on the whole array.
    if values.ndim:
        key = (slice(None, None, -2),) + (slice(None),) * (values.ndim - 1)
        np.testing.assert_array_equal(a[key], values[key])


def test_v1_has_no_groups_but_opens_as_an_array() -> None:
    node = zarrkit.open(TESTDATA / "fixtures/v1/spec_example_int32_zlib", mode="r")
    assert isinstance(node, zarrkit.Array)
    assert node.zarr_format == 1
    assert node.shape == (20, 20)


def test_draft_2022_hierarchy() -> None:
    g = zarrkit.open_group(TESTDATA / "fixtures/v3-draft-2022/extension-dtypes.zarr", mode="r")
    assert g.zarr_format == "v3-draft-2022"
    assert len(list(g)) > 0


ZARR2_FIXTURE = SHARED_TESTDATA / "zarr-python-2-fixture"


def test_zarr_python_2_fixture_arrays() -> None:
    # Array 0 of zarr-python 2's format test (1111 `|i1` elements in
    # chunks of 100), stored with each of its compressors 0..6 (none,
    # zlib, bz2, blosc zstd with shuffle 0/1/2, blosc lz4). Compressor 0
    # stores the chunks raw, so their files are the expected values.
    raw = b"".join((ZARR2_FIXTURE / "0" / "0" / str(i)).read_bytes() for i in range(12))
    expected = np.frombuffer(raw[:1111], dtype="i1")
    assert len(set(expected.tolist())) > 100
    for compressor in range(7):
        a = zarrkit.open_array(ZARR2_FIXTURE / "0" / str(compressor), mode="r")
        assert a.zarr_format == 2
        assert a.dtype == np.dtype("i1")
        np.testing.assert_array_equal(a[...], expected)
        assert a[-1] == expected[-1]
        np.testing.assert_array_equal(a[1000::-7], expected[1000::-7])


def test_zip_store(tmp_path: pathlib.Path) -> None:
    expected = np.arange(30, dtype="<f4").reshape(5, 6)
    z = zarr.create_array(store=str(tmp_path / "d.zarr"), shape=(5, 6), chunks=(2, 4), dtype="f4")
    z[...] = expected
    archive = tmp_path / "d.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for p in sorted((tmp_path / "d.zarr").rglob("*")):
            if p.is_file():
                zf.write(p, p.relative_to(tmp_path / "d.zarr").as_posix())
    a = zarrkit.open_array(archive, mode="r")
    np.testing.assert_array_equal(a[...], expected)
    b = zarrkit.open_array(f"zip://{archive}", mode="r")
    np.testing.assert_array_equal(b[1:4, ::-1], expected[1:4, ::-1])


def test_file_url_and_string_path(tmp_path: pathlib.Path) -> None:
    zarrkit.create_array(str(tmp_path / "u.zarr"), shape=(4,), dtype="i2", fill_value=3)
    a = zarrkit.open_array(f"file://{tmp_path / 'u.zarr'}", mode="r")
    assert a[...].tolist() == [3, 3, 3, 3]
    assert a.fill_value == 3


def test_new_zip_archive_appears_on_close(tmp_path: pathlib.Path) -> None:
    archive = tmp_path / "new.zip"
    with zarrkit.create_group(archive, attributes={"a": 1}) as g:
        g.create_array("x", shape=(3,), dtype="i1", chunks=(2,))[...] = [1, 2, 3]
    assert zarrkit.open_group(archive, mode="r")["x"][...].tolist() == [1, 2, 3]
    z = zarr.open_group(zarr.storage.ZipStore(str(archive), mode="r"), mode="r")
    assert z["x"][...].tolist() == [1, 2, 3]
    assert z.attrs["a"] == 1
