"""One selection row of one Python peer, run by `bench-compare selections`.

    python selections.py IMP ROW CODECS DIR SIDE REPS THREADS

IMP is tensorstore, zarr-python or zarr-python-zarrs; ROW one of strided,
plane, points, oindex, mask (see bench-compare's src/selections.rs). The
selection's inputs are the files sel-*.bin next to the store DIR, written by
the parent, so every implementation selects the same elements. The
selection (and the mask) is built before the timing; one untimed warm-up
pass, REPS timed ones, and every value of the last result is checked
against the formula afterwards. Prints `time_s` lines and `vmhwm_kib`, as
peer.py does.

zarr-python has no negative steps: its `plane` row reads `100, :, :` and
reverses both axes with NumPy (a contiguous copy), marked in the table.
zarr-python with the zarrs pipeline runs strict, as in peer.py: a
selection the pipeline cannot take (its DiscontiguousArrayError or
UnsupportedVIndexingError) prints `unsupported NAME` rather than falling
back to zarr-python's own pipeline (which the zarr-python row measures).
tensorstore's `t[100, ::-1, ::-1]` is a true negative-step read (its
negative *indices* would be coordinates, not "from the end", but no row
uses one).
"""

import os
import sys
import time

import numpy as np

from peer import NOISE_BITS, ZarrPython, Tensorstore, mix64, vmhwm_kib

PLANE = 100


def value(z, y, x, side):
    """The formula at coordinate arrays z, y, x (see peer.plane)."""
    z, y, x = (np.asarray(a, dtype=np.uint64) for a in (z, y, x))
    v = (x + 2 * y + 3 * z) // 4
    if NOISE_BITS:
        index = (z * np.uint64(side) + y) * np.uint64(side) + x
        v = v + (mix64(index) >> np.uint64(64 - NOISE_BITS))
    return v.astype(np.uint16)


def load(path):
    return np.fromfile(path, dtype="<u8").astype(np.int64)


def main(argv):
    imp, row, codecs, path, side, reps, threads = argv[:7]
    side, reps, threads = int(side), int(reps), int(threads)
    base = os.path.dirname(os.path.abspath(path))
    points = load(os.path.join(base, "sel-points.bin")).reshape(3, -1)
    oindex = load(os.path.join(base, "sel-oindex.bin")).reshape(3, -1)
    plane = PLANE % side
    if imp == "tensorstore":
        peer = Tensorstore(threads)
    elif imp in ("zarr-python", "zarr-python-zarrs"):
        peer = ZarrPython(threads, zarrs_pipeline=imp == "zarr-python-zarrs")
    else:
        raise SystemExit(f"unknown peer `{imp}`")
    array = peer.open(path)
    ts = imp == "tensorstore"
    if row == "strided":
        sel = (slice(None, None, 2),) * 3
        run = (lambda: array[sel].read().result()) if ts else (lambda: array[sel])
    elif row == "plane":
        if ts:
            run = lambda: array[plane, ::-1, ::-1].read().result()  # noqa: E731
        else:
            run = lambda: np.ascontiguousarray(array[plane, :, :][::-1, ::-1])  # noqa: E731
    elif row == "points":
        sel = tuple(points)
        run = (lambda: array.vindex[sel].read().result()) if ts else (lambda: array.vindex[sel])
    elif row == "oindex":
        sel = tuple(oindex)
        run = (lambda: array.oindex[sel].read().result()) if ts else (lambda: array.oindex[sel])
    elif row == "mask":
        mask = np.zeros(side**3, dtype=bool)
        mask[load(os.path.join(base, "sel-mask.bin"))] = True
        mask = mask.reshape(side, side, side)
        run = (lambda: array.vindex[mask].read().result()) if ts else (lambda: array.vindex[mask])
    else:
        raise SystemExit(f"unknown row `{row}`")
    try:
        run()
    except Exception as e:  # noqa: BLE001
        # The zarrs pipeline runs strict (peer.py): selections it cannot
        # take raise instead of falling back to zarr-python's pipeline.
        name = type(e).__name__
        if imp == "zarr-python-zarrs" and name in ("DiscontiguousArrayError", "UnsupportedVIndexingError"):
            print(f"unsupported {name}")
            print(f"vmhwm_kib {vmhwm_kib()}")
            return
        raise
    times = []
    last = None
    for _ in range(reps):
        last = None
        start = time.perf_counter()
        last = run()
        times.append(time.perf_counter() - start)
    got = np.asarray(last)
    # The expected values, a plane at a time where the result is large.
    if row == "strided":
        r = np.arange(0, side, 2)
        ok = got.shape == (len(r),) * 3 and all(
            np.array_equal(got[i], value(z, r[:, None], r[None, :], side)) for i, z in enumerate(r)
        )
    elif row == "plane":
        r = np.arange(side - 1, -1, -1)
        ok = np.array_equal(got, value(plane, r[:, None], r[None, :], side))
    elif row == "points":
        ok = np.array_equal(got, value(*points, side))
    elif row == "oindex":
        a, b, c = oindex
        ok = got.shape == (len(a), len(b), len(c)) and all(
            np.array_equal(got[i], value(z, b[:, None], c[None, :], side)) for i, z in enumerate(a)
        )
    else:
        flat = load(os.path.join(base, "sel-mask.bin"))
        ok = np.array_equal(got, value(flat // (side * side), flat // side % side, flat % side, side))
    if not ok:
        raise SystemExit(f"{imp} {row}: wrong values (shape {got.shape})")
    for t in times:
        print(f"time_s {t}")
    print(f"vmhwm_kib {vmhwm_kib()}")


if __name__ == "__main__":
    main(sys.argv[1:])
