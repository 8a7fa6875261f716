"""xarray datasets across zarrkit migrations (issue #9, item 11).

Usage (with the Python of scripts/requirements.txt, which pins xarray):
    xarray_interop.py write PATH FORMAT CONSOLIDATED
        xarray writes the dataset of `dataset()` to PATH as Zarr FORMAT
        (2 or 3), with consolidated metadata if CONSOLIDATED is 1
    xarray_interop.py check PATH FORMAT CONSOLIDATED
        xarray opens PATH as Zarr FORMAT (`consolidated=True` if
        CONSOLIDATED is 1, which fails without consolidated metadata, else
        False) and `xr.testing.assert_identical` holds with `dataset()`

zarrkit/tests/it/migrate.rs migrates between the two steps. Prints "ok".
"""

import sys

import numpy as np
import pandas as pd
import xarray as xr
import zarr


def dataset():
    """Coordinates (one of them datetimes), data variables of three types
    with attributes (one non-ASCII), and dataset attributes."""
    return xr.Dataset(
        {
            "temp": (("time", "y", "x"), np.arange(24, dtype="f4").reshape(2, 3, 4) - 5.5,
                     {"units": "K", "long_name": "Température"}),
            "mask": (("y", "x"), np.array([[1, 0, 1, 0]] * 3, dtype="i1")),
            "count": (("x",), np.array([3, 1, 4, 1], dtype="<u2"), {"note": "per column"}),
        },
        coords={
            "time": pd.date_range("2020-01-01", periods=2),
            "y": [10.0, 20.0, 30.0],
            "x": np.arange(4),
        },
        attrs={"title": "zarrkit migration", "source": "xarray " + xr.__version__},
    )


def main():
    mode, path, fmt, consolidated = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
    if mode == "write":
        # Chunks of 2 along x, so the arrays with an x have several chunks.
        encoding = {name: {"chunks": tuple(2 if d == "x" else n for d, n in var.sizes.items())}
                    for name, var in dataset().variables.items()}
        dataset().to_zarr(path, zarr_format=fmt, consolidated=consolidated, mode="w",
                          encoding=encoding)
    elif mode == "check":
        if consolidated:
            # The consolidated metadata itself must be there, in the format's place.
            meta = zarr.open_consolidated(path, zarr_format=fmt).metadata
            assert meta.zarr_format == fmt, meta.zarr_format
        got = xr.open_zarr(path, zarr_format=fmt, consolidated=consolidated).load()
        for name in got.variables:
            # xarray reads v3 dimensions only from `dimension_names`.
            assert "_ARRAY_DIMENSIONS" not in got[name].attrs, name
        xr.testing.assert_identical(got, dataset())
    else:
        sys.exit("unknown mode " + mode)
    print("ok")


if __name__ == "__main__":
    main()
