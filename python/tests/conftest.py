"""Shared fixtures of the Python package's tests."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import zarrkit

# The repository's root, and the shared test data beside it (as the Rust
# tests find it: `../shared/testdata` from the root).
REPO = pathlib.Path(__file__).resolve().parents[2]
SHARED_TESTDATA = REPO.parent / "shared" / "testdata"


@pytest.fixture
def arr2d(tmp_path: pathlib.Path) -> tuple[zarrkit.Array, np.ndarray]:
    """A 7×9 int32 array in 3×4 chunks holding 0..62, and its NumPy twin."""
    expected = np.arange(63, dtype="int32").reshape(7, 9)
    a = zarrkit.create_array(tmp_path / "a.zarr", shape=(7, 9), dtype="int32", chunks=(3, 4))
    a[...] = expected
    return a, expected
