"""One repetition set of one Python peer, run as a child of bench-compare.

    python peer.py IMP WORKLOAD CODECS DIR SIDE REPS THREADS [cold]

IMP is tensorstore, zarr-python or zarr-python-zarrs (zarr-python with the
`zarrs` codec pipeline). Prints one `time_s SECONDS` line per repetition,
then `vmhwm_kib KIB` (this process's peak RSS), as bench-compare's own Rust
child does. Reads do an untimed warm-up pass first unless `cold` is given
(the parent drops the page cache before starting a cold child), and every
read's values are checked against the formula after the timing.

The data arrays' metadata documents are written by the parent (the same
document for every implementation), so `write` opens the array and writes
every chunk; the hierarchy workloads create and list nodes natively.

The values carry BENCH_COMPARE_NOISE_BITS bits of noise when the parent
sets it (bench-compare --noise).

Thread limits: the parent sets RAYON_NUM_THREADS, OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS, MKL_NUM_THREADS and BLOSC_NTHREADS to THREADS before
starting this script; here zarr-python's `threading.max_workers`,
numcodecs' blosc threads and tensorstore's `data_copy_concurrency` and
`file_io_concurrency` limits are set to THREADS too.
"""

import os
import shutil
import sys
import time

import numpy as np

REGION = 32
REGION_COUNT = 64
REGION_SEED = 0x5EED2A22
INNER = 32
HIERARCHY_ARRAYS = 1000
MASK64 = (1 << 64) - 1
ARRAY = "array"


def vmhwm_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM line in /proc/self/status")


NOISE_BITS = min(int(os.environ.get("BENCH_COMPARE_NOISE_BITS", "0") or 0), 16)


def mix64(z):
    """splitmix64's finaliser on a uint64 array (wrapping, as in Rust)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def plane(region, z, side):
    """The formula's values of plane `z` of `region` (uint16, C order):
    v = (x + 2y + 3z) / 4 + n wrapping to 16 bits, x the last index, n the
    top NOISE_BITS bits of mix64 of the element's C-order index (see
    bench-compare's `Pattern`)."""
    (y0, y1), (x0, x1) = region[1], region[2]
    y = np.arange(y0, y1, dtype=np.uint64)[:, None]
    x = np.arange(x0, x1, dtype=np.uint64)[None, :]
    smooth = (x + 2 * y + 3 * z) // 4
    if NOISE_BITS:
        index = (np.uint64(z) * np.uint64(side) + y) * np.uint64(side) + x
        smooth = smooth + (mix64(index) >> np.uint64(64 - NOISE_BITS))
    return smooth.astype(np.uint16)


def values(region, side):
    """The formula's values of `region` (three (start, stop) pairs), made a
    plane at a time so that the peak memory is the result plus one plane,
    as for the Rust child."""
    shape = tuple(b - a for a, b in region)
    out = np.empty(shape, dtype=np.uint16)
    for i, z in enumerate(range(*region[0])):
        out[i] = plane(region, z, side)
    return out


def check(region, data, side):
    """Checks `data` against the formula a plane at a time (no second
    array-sized buffer, so the check does not raise the peak memory)."""
    shape = tuple(b - a for a, b in region)
    data = np.asarray(data)
    if data.shape != shape or data.dtype != np.uint16:
        raise SystemExit(f"region {region}: got {data.dtype}{data.shape}, expected uint16{shape}")
    for i, z in enumerate(range(*region[0])):
        expected = plane(region, z, side)
        if not np.array_equal(data[i], expected):
            y, x = (int(v[0]) for v in np.nonzero(data[i] != expected))
            raise SystemExit(
                f"region {region}: element {(z, region[1][0] + y, region[2][0] + x)} "
                f"is {data[i][y, x]}, expected {expected[y, x]}"
            )


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return state, z ^ (z >> 31)


def random_regions(side):
    """The same regions as bench-compare's `random_regions`."""
    state = REGION_SEED
    span = side - REGION + 1
    out = []
    for _ in range(REGION_COUNT):
        region = []
        for _ in range(3):
            state, r = splitmix64(state)
            start = r % span
            region.append((start, start + REGION))
        out.append(tuple(region))
    return out


def inner_blocks(side):
    n = side // INNER
    return [
        tuple((i * INNER, (i + 1) * INNER) for i in (b // (n * n), b // n % n, b % n))
        for b in range(n * n * n)
    ]


def slices(region):
    return tuple(slice(a, b) for a, b in region)


# ------------------------------------------------------------- backends ---


class ZarrPython:
    def __init__(self, threads, zarrs_pipeline):
        import zarr

        self.zarr = zarr
        config = {"threading.max_workers": threads}
        if zarrs_pipeline:
            import zarrs  # noqa: F401  (registers the pipeline)

            config["codec_pipeline.path"] = "zarrs.ZarrsCodecPipeline"
            # Fail rather than silently fall back to zarr-python's pipeline.
            config["codec_pipeline.strict"] = True
        zarr.config.set(config)
        try:
            import numcodecs.blosc

            numcodecs.blosc.set_nthreads(threads)
        except ImportError:
            pass

    def store(self, path):
        return self.zarr.storage.LocalStore(path)

    def open(self, path):
        return self.zarr.open_array(store=self.store(path), path=ARRAY, mode="r+")

    def write(self, array, data):
        array[...] = data

    def read(self, array, region):
        return array[slices(region)]

    def create_hierarchy(self, path):
        group = self.zarr.create_group(store=self.store(path), zarr_format=3)
        for i in range(HIERARCHY_ARRAYS):
            group.create_array(f"a{i:04}", shape=(64, 64), chunks=(32, 32), dtype="uint16")

    def list_hierarchy(self, path):
        group = self.zarr.open_group(store=self.store(path), mode="r")
        return sum(1 for _ in group.arrays())


class Tensorstore:
    def __init__(self, threads):
        import tensorstore as ts

        self.ts = ts
        self.context = ts.Context(
            {
                "data_copy_concurrency": {"limit": threads},
                "file_io_concurrency": {"limit": threads},
            }
        )

    def spec(self, path):
        driver = "zarr3" if os.path.exists(os.path.join(path, ARRAY, "zarr.json")) else "zarr"
        return {"driver": driver, "kvstore": {"driver": "file", "path": os.path.join(path, ARRAY) + "/"}}

    def open(self, path):
        return self.ts.open(self.spec(path), open=True, context=self.context).result()

    def write(self, array, data):
        array.write(data).result()

    def read(self, array, region):
        return array[slices(region)].read().result()

    def create_hierarchy(self, path):
        ts = self.ts
        os.makedirs(path, exist_ok=True)
        kv = ts.KvStore.open({"driver": "file", "path": path + "/"}, context=self.context).result()
        kv.write("zarr.json", b'{"zarr_format":3,"node_type":"group","attributes":{}}').result()
        futures = [
            ts.open(
                {
                    "driver": "zarr3",
                    "kvstore": {"driver": "file", "path": f"{path}/a{i:04}/"},
                    "metadata": {
                        "shape": [64, 64],
                        "data_type": "uint16",
                        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [32, 32]}},
                    },
                },
                create=True,
                context=self.context,
            )
            for i in range(HIERARCHY_ARRAYS)
        ]
        for f in futures:
            f.result()

    def list_hierarchy(self, path):
        ts = self.ts
        kv = ts.KvStore.open({"driver": "file", "path": path + "/"}, context=self.context).result()
        keys = kv.list().result()
        names = [k[: -len(b"/zarr.json")].decode() for k in keys if k.endswith(b"/zarr.json")]
        futures = [
            ts.open(
                {"driver": "zarr3", "kvstore": {"driver": "file", "path": f"{path}/{name}/"}},
                open=True,
                context=self.context,
            )
            for name in names
        ]
        return sum(1 for f in futures if f.result() is not None)


# ----------------------------------------------------------------- main ---


def main(argv):
    if len(argv) < 7:
        raise SystemExit(__doc__)
    imp, workload, codecs, path, side, reps, threads = argv[:7]
    cold = argv[7:] == ["cold"]
    side, reps, threads = int(side), int(reps), int(threads)
    if imp == "tensorstore":
        peer = Tensorstore(threads)
    elif imp == "zarr-python":
        peer = ZarrPython(threads, zarrs_pipeline=False)
    elif imp == "zarr-python-zarrs":
        peer = ZarrPython(threads, zarrs_pipeline=True)
    else:
        raise SystemExit(f"unknown peer `{imp}`")
    whole = ((0, side), (0, side), (0, side))
    times = []
    if workload == "write":
        data = values(whole, side)
        array = peer.open(path)
        for _ in range(reps):
            start = time.perf_counter()
            peer.write(array, data)
            times.append(time.perf_counter() - start)
    elif workload in ("read_all", "read_regions", "read_inner", "verify"):
        regions = {
            "read_all": [whole],
            "verify": [whole],
            "read_regions": random_regions(side),
            "read_inner": inner_blocks(side),
        }[workload]
        array = peer.open(path)
        if not cold and workload != "verify":
            for region in regions:
                peer.read(array, region)
        last = []
        for _ in range(1 if workload == "verify" else reps):
            last = []
            start = time.perf_counter()
            for region in regions:
                last.append(peer.read(array, region))
            times.append(time.perf_counter() - start)
        for region, data in zip(regions, last):
            check(region, data, side)
        if workload == "verify":
            times = []
    elif workload == "create":
        for _ in range(reps):
            shutil.rmtree(path, ignore_errors=True)
            start = time.perf_counter()
            peer.create_hierarchy(path)
            times.append(time.perf_counter() - start)
    elif workload == "list":
        peer.list_hierarchy(path)
        for _ in range(reps):
            start = time.perf_counter()
            n = peer.list_hierarchy(path)
            times.append(time.perf_counter() - start)
            if n != HIERARCHY_ARRAYS:
                raise SystemExit(f"listed {n} arrays, expected {HIERARCHY_ARRAYS}")
    else:
        raise SystemExit(f"unknown workload `{workload}`")
    for t in times:
        print(f"time_s {t}")
    print(f"vmhwm_kib {vmhwm_kib()}")


if __name__ == "__main__":
    main(sys.argv[1:])
