#!/usr/bin/env python3
"""bench-compare's workloads from Python: zarrkit's Python package against
zarr-python 3.1.6 (with its own codec pipeline and with the `zarrs` one)
and tensorstore, and against zarrkit from Rust on the same stores.

    python3 bench-compare/python/bench_python.py            # 256³, 3 repetitions
    python3 bench-compare/python/bench_python.py --side 512

The array is side³ uint16 with bench-compare's values (`peers/peer.py`'s
formula), in two chains: `zstd` (v3, 64³ chunks, bytes + zstd 3) and
`sharded` (v3, shards of min(256, side)³ holding 32³ inner chunks, inner
bytes + zstd 3, index bytes + crc32c at the end). The workloads:

- `write`: one call writing the whole array from a NumPy array;
- `read_all`: one call reading the whole array into a new NumPy array;
- `read_regions`: 64 calls, each reading one 32³ region (bench-compare's
  fixed-seed regions, most straddling chunk boundaries).

Every (implementation, chain, workload) repetition runs in its own child
process with the same thread budget (`--threads`, default 2: rayon's pool,
OpenMP/BLAS, blosc, zarr-python's `threading.max_workers`, tensorstore's
concurrency limits), reads after an untimed warm-up pass, and checks the
values it read; the implementations take turns, repetition by repetition.
The table gives the median of the repetitions, the peak memory of the
children (`ru_maxrss`), the ratio of zarrkit from Python to
the best Python peer, and zarrkit from Python against zarrkit from Rust
plus the cost of one copy of the result into a new NumPy array (for the
region reads, of each region into its own). Two more tables compare the
two languages in a steady state: separate processes taking turns
(`--steady` passes each), and pairs of passes in one process (`--paired`:
each pass through the Python API paired with the same pass in Rust, the
native module's `_rust_pass`, the two taking turns to go first), which
leaves the machine's phases and the heap's state out of the difference.

The implementations and their interpreters:

- `zarrkit-py`: this script's own child mode, run by `--zarrkit-python`
  (default: the first of this interpreter, `<repo>/.venv-py/bin/python`
  that imports `zarrkit`; `scripts/test.sh` or `pip install ./python`
  makes one);
- `zp`, `zp+zarrs`, `ts`: `bench-compare/peers/peer.py` run by
  `--peers-python` (default `bench-compare/.venv-peers/bin/python`, made by
  `bench-compare/setup-peers.sh`);
- `zarrkit-rs`: bench-compare's own Rust child (`bench-compare child
  zarrkit ...`), the binary given by `--rust` (default: found under
  `$CARGO_TARGET_DIR/release` or `bench-compare/target/release`; build it
  with `cargo build --release --manifest-path bench-compare/Cargo.toml`,
  or pass `--build`).

An implementation whose interpreter or binary is missing is skipped with a
note. The parent needs only the standard library.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
REPO = BENCH.parent
PEER_SCRIPT = BENCH / "peers" / "peer.py"

IMPS = ["zarrkit-py", "zarrkit-rs", "zp", "zp+zarrs", "ts"]
PYTHON_PEERS = {"zp": "zarr-python", "zp+zarrs": "zarr-python-zarrs", "ts": "tensorstore"}
CODECS = ["zstd", "sharded"]
WORKLOADS = ["write", "read_all", "read_regions"]
LABELS = {"zstd": "v3 64³ zstd 3", "sharded": "v3 shards {shard}³/32³ zstd 3"}
THREAD_VARS = [
    "RAYON_NUM_THREADS",
    "OMP_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "BLOSC_NTHREADS",
]


def metadata(codecs: str, side: int) -> str:
    """The array's zarr.json: the same document bench-compare writes (so
    every implementation encodes the same chunks the same way)."""
    bytes_codec = {"name": "bytes", "configuration": {"endian": "little"}}
    zstd = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}
    if codecs == "zstd":
        chunk = 64
        chain = [bytes_codec, zstd]
    else:
        chunk = min(256, side)
        chain = [
            {
                "name": "sharding_indexed",
                "configuration": {
                    "chunk_shape": [32, 32, 32],
                    "codecs": [bytes_codec, zstd],
                    "index_codecs": [bytes_codec, {"name": "crc32c"}],
                    "index_location": "end",
                },
            }
        ]
    return json.dumps(
        {
            "zarr_format": 3,
            "node_type": "array",
            "shape": [side] * 3,
            "data_type": "uint16",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [chunk] * 3}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0,
            "codecs": chain,
            "attributes": {},
        }
    )


# ------------------------------------------------------------------ child ---


def child(argv: list[str]) -> None:
    """`child WORKLOAD DIR SIDE [PASSES [paired]]`: one repetition of
    zarrkit from Python (PASSES timed passes of it in this one process,
    default 1), printing `time_s` lines as peer.py does. `copy` times one
    copy of an array-sized NumPy array into a new one (what handing a
    result to NumPy costs: page faults included).

    `paired`: each pass through the Python API is paired with the same
    pass done in Rust in this process (the native module's `_rust_pass`),
    printed as `rust_time_s`: the two alternate pass by pass, on the same
    heap and in the same phase of the machine's speed. Which of the two
    goes first alternates from pair to pair: the second of a pair runs
    with the first's results alive and its freed pages at hand, and it
    right after the first's parallel work, which a fixed order would
    charge to one language only."""
    import numpy as np

    sys.path.insert(0, str(PEER_SCRIPT.parent))
    import peer  # the values, the regions and the checks bench-compare uses

    import zarrkit

    workload, path, side = argv[0], argv[1], int(argv[2])
    passes = int(argv[3]) if len(argv) > 3 else 1
    paired = len(argv) > 4 and argv[4] == "paired"
    rust_times = []
    whole = ((0, side), (0, side), (0, side))
    times = []

    def timed(i: int, python_pass, rust_pass):
        """Pass `i` through the Python API, timed; when `paired`, the same
        pass in Rust after it (even `i`) or before it (odd `i`). Returns
        what the Python pass returned."""
        if paired and i % 2:
            rust_times.append(rust_pass())
        start = time.perf_counter()
        result = python_pass()
        times.append(time.perf_counter() - start)
        if paired and not i % 2:
            rust_times.append(rust_pass())
        return result
    if workload == "copy":
        data = peer.values(whole, side)
        start = time.perf_counter()
        out = np.empty_like(data)
        np.copyto(out, data)
        times.append(time.perf_counter() - start)
    elif workload == "copy_regions":
        # Each of the 64 regions' values copied into a new NumPy array, as
        # a region read's results would be handed over: after a first
        # pass whose results are freed, as the read passes are.
        def copied(values: np.ndarray) -> np.ndarray:
            out = np.empty_like(values)
            np.copyto(out, values)
            return out

        datas = [peer.values(region, side) for region in peer.random_regions(side)]
        outs = None
        for _ in range(2):
            outs = None
            start = time.perf_counter()
            outs = [copied(d) for d in datas]
            times.append(time.perf_counter() - start)
        del outs
        times = times[1:]
    elif workload == "write":
        data = peer.values(whole, side)
        array = zarrkit.open_array(os.path.join(path, peer.ARRAY), mode="r+")
        flat = data.reshape(-1).view(np.uint8)

        def write() -> None:
            array[...] = data

        for i in range(passes):
            timed(i, write, lambda: array._native._rust_pass("write", [whole], flat))
    elif workload in ("read_all", "read_regions", "verify"):
        regions = peer.random_regions(side) if workload == "read_regions" else [whole]
        array = zarrkit.open_array(os.path.join(path, peer.ARRAY), mode="r")
        if workload != "verify":
            for region in regions:
                array[peer.slices(region)]
        for i in range(passes if workload != "verify" else 1):
            last = None  # the previous pass's results are freed first, as in Rust
            last = timed(
                i,
                lambda: [array[peer.slices(region)] for region in regions],
                lambda: array._native._rust_pass("read", regions),
            )
        for region, data in zip(regions, last):
            peer.check(region, data, side)
        if workload == "verify":
            times = []
    else:
        raise SystemExit(f"unknown workload `{workload}`")
    for t in times:
        print(f"time_s {t}")
    for t in rust_times:
        print(f"rust_time_s {t}")


# ----------------------------------------------------------------- parent ---


def imports(python: Path, module: str) -> bool:
    try:
        # From `/`: the repository's `zarrkit/` directory would import as
        # a namespace package.
        check = f"import numpy, {module}; {module}.__file__.strip()"
        return (
            subprocess.run([str(python), "-c", check], capture_output=True, cwd="/").returncode == 0
        )
    except OSError:
        return False


def find_zarrkit_python(given: str | None) -> Path | None:
    if given:
        return Path(given)
    for candidate in (Path(sys.executable), REPO / ".venv-py" / "bin" / "python"):
        if candidate.exists() and imports(candidate, "zarrkit"):
            return candidate
    return None


def find_rust(given: str | None, build: bool) -> Path | None:
    if given:
        return Path(given)
    target = os.environ.get("CARGO_TARGET_DIR")
    candidates = ([Path(target) / "release" / "bench-compare"] if target else []) + [
        BENCH / "target" / "release" / "bench-compare"
    ]
    if build:
        subprocess.run(
            ["cargo", "build", "--release", "--manifest-path", str(BENCH / "Cargo.toml")],
            check=True,
        )
    return next((c for c in candidates if c.exists()), None)


class Runner:
    def __init__(
        self,
        args: argparse.Namespace,
        zarrkit_python: Path | None,
        peers_python: Path | None,
        rust: Path | None,
    ):
        self.side = args.side
        self.threads = args.threads
        self.noise = args.noise
        self.zarrkit_python = zarrkit_python
        self.peers_python = peers_python
        self.rust = rust

    def command(
        self, imp: str, workload: str, codecs: str, store: Path, passes: int = 1, paired: bool = False
    ) -> list[str]:
        if imp == "zarrkit-py":
            assert self.zarrkit_python is not None
            return [
                str(self.zarrkit_python),
                str(Path(__file__).resolve()),
                "child",
                workload,
                str(store),
                str(self.side),
                str(passes),
            ] + (["paired"] if paired else [])
        if imp == "zarrkit-rs":
            assert self.rust is not None
            return [
                str(self.rust),
                "child",
                "zarrkit",
                workload,
                codecs,
                str(store),
                str(self.side),
                str(passes),
            ]
        assert passes == 1, "the Python peers run one pass per process"
        assert self.peers_python is not None
        return [
            str(self.peers_python),
            str(PEER_SCRIPT),
            PYTHON_PEERS[imp],
            workload,
            codecs,
            str(store),
            str(self.side),
            "1",
            str(self.threads),
        ]

    def run(
        self, imp: str, workload: str, codecs: str, store: Path, passes: int = 1
    ) -> tuple[list[float], int]:
        """One child (`passes` timed passes): its times and its peak RSS (ru_maxrss, KiB)."""
        stdout, maxrss = self.spawn(self.command(imp, workload, codecs, store, passes), imp, workload, codecs)
        return times_of(stdout, "time_s"), maxrss

    def run_paired(
        self, workload: str, codecs: str, store: Path, passes: int
    ) -> tuple[list[float], list[float]]:
        """One zarrkit-py child of `passes` paired passes (see `child`): the
        times through the Python API, and those of the same passes in Rust."""
        command = self.command("zarrkit-py", workload, codecs, store, passes, paired=True)
        stdout, _ = self.spawn(command, "zarrkit-py", workload, codecs)
        return times_of(stdout, "time_s"), times_of(stdout, "rust_time_s")

    def spawn(self, command: list[str], imp: str, workload: str, codecs: str) -> tuple[str, int]:
        """Runs one child: its standard output and its peak RSS (ru_maxrss, KiB)."""
        env = dict(os.environ)
        for var in THREAD_VARS:
            env[var] = str(self.threads)
        # NumPy's BLAS is no part of any workload, and its idle workers spin
        # on a core after NumPy is imported: one thread each.
        env["OPENBLAS_NUM_THREADS"] = env["MKL_NUM_THREADS"] = "1"
        env["BENCH_COMPARE_NOISE_BITS"] = str(self.noise)
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            p = subprocess.Popen(command, stdout=out, stderr=err, env=env, cwd="/")
            _, status, usage = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            stdout, stderr = out.read().decode(), err.read().decode(errors="replace")
        if p.returncode != 0:
            tail = " | ".join(stderr.strip().splitlines()[-4:])
            raise RuntimeError(f"{imp} {workload} [{codecs}] exited with {p.returncode}: {tail}")
        return stdout, usage.ru_maxrss


def times_of(stdout: str, name: str) -> list[float]:
    """The values of a child's `NAME SECONDS` lines."""
    return [float(line.split()[1]) for line in stdout.splitlines() if line.startswith(name + " ")]


def signed(t: float) -> str:
    """`t` with its sign (− when negative)."""
    return ("−" if t < 0 else "+") + fmt_time(abs(t))


def fmt_time(t: float | None) -> str:
    if t is None:
        return "–"
    if t < 0.1:
        return f"{t * 1000:.1f} ms"
    return f"{t * 1000:.0f} ms" if t < 10 else f"{t:.1f} s"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--side", type=int, default=256, help="the array is SIDE³ uint16 (default 256; 512 also)"
    )
    parser.add_argument(
        "--reps", type=int, default=3, help="repetitions, each its own child (default 3)"
    )
    parser.add_argument(
        "--threads", type=int, default=2, help="every implementation's thread budget (default 2)"
    )
    parser.add_argument(
        "--noise",
        type=int,
        default=0,
        help="bits of hash noise in the values (bench-compare --noise)",
    )
    parser.add_argument(
        "--imps", default=",".join(IMPS), help=f"comma-separated subset of {','.join(IMPS)}"
    )
    parser.add_argument("--codecs", default=",".join(CODECS), help="zstd,sharded")
    parser.add_argument(
        "--workloads", default=",".join(WORKLOADS), help="write,read_all,read_regions"
    )
    parser.add_argument("--zarrkit-python", help="the interpreter with the zarrkit package")
    parser.add_argument("--peers-python", help="the interpreter with zarr, zarrs and tensorstore")
    parser.add_argument("--rust", help="bench-compare's binary (zarrkit from Rust)")
    parser.add_argument(
        "--steady",
        type=int,
        default=8,
        help="passes per process of the steady-state comparison of zarrkit from Python "
        "and from Rust (0: skip it; default 8)",
    )
    parser.add_argument(
        "--paired",
        type=int,
        default=24,
        help="passes per process of the paired comparison: each pass through the Python API "
        "paired with the same pass in Rust in the same process, each going first in turn "
        "(0: skip it; default 24)",
    )
    parser.add_argument(
        "--build", action="store_true", help="cargo build --release bench-compare first"
    )
    parser.add_argument("--dir", help="where the stores go (default: a new temporary directory)")
    parser.add_argument("--keep", action="store_true", help="keep the stores")
    args = parser.parse_args()

    imps = [i for i in args.imps.split(",") if i]
    codecs_list = [c for c in args.codecs.split(",") if c]
    workloads = [w for w in args.workloads.split(",") if w]
    for name, given, known in (
        ("imp", imps, IMPS),
        ("codecs", codecs_list, CODECS),
        ("workload", workloads, WORKLOADS),
    ):
        for g in given:
            if g not in known:
                raise SystemExit(f"unknown {name} `{g}` (expected one of {', '.join(known)})")

    notes = []
    zarrkit_python = find_zarrkit_python(args.zarrkit_python)
    peers_python = (
        Path(args.peers_python) if args.peers_python else BENCH / ".venv-peers" / "bin" / "python"
    )
    rust = find_rust(args.rust, args.build) if "zarrkit-rs" in imps else None
    available = []
    for imp in imps:
        if imp == "zarrkit-py" and zarrkit_python is None:
            notes.append(
                "zarrkit-py skipped: no interpreter imports zarrkit (pip install ./python, or --zarrkit-python)"
            )
        elif imp == "zarrkit-rs" and rust is None:
            notes.append("zarrkit-rs skipped: no bench-compare binary (--build, or --rust PATH)")
        elif imp in PYTHON_PEERS and not peers_python.exists():
            notes.append(
                f"{imp} skipped: no {peers_python} (bench-compare/setup-peers.sh, or --peers-python)"
            )
        else:
            available.append(imp)
    imps = available

    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="bench-python-"))
    runner = Runner(args, zarrkit_python, peers_python, rust)
    load_before = open("/proc/loadavg").read().split()[:3]
    started = time.perf_counter()
    results: dict[tuple[str, str, str], tuple[float, int]] = {}
    copy_time = None
    region_copy_time = None
    # (codecs, workload, imp) -> the passes after each process's first.
    steady: dict[tuple[str, str, str], list[float]] = {}
    paired: dict[tuple[str, str], list[tuple[float, float]]] = {}
    try:
        if "zarrkit-py" in imps:
            copies = [
                runner.run("zarrkit-py", "copy", "zstd", root)[0][0] for _ in range(args.reps)
            ]
            # The fastest: a copy's outliers (70 ms where 3 ms is usual,
            # the kernel compacting memory for huge pages) would only
            # loosen the allowance.
            copy_time = min(copies)
            region_copies = [
                runner.run("zarrkit-py", "copy_regions", "zstd", root)[0][0]
                for _ in range(args.reps)
            ]
            region_copy_time = min(region_copies)
        for codecs in codecs_list:
            for imp in imps:
                store = root / codecs / imp
                shutil.rmtree(store, ignore_errors=True)
                (store / "array").mkdir(parents=True)
                (store / "array" / "zarr.json").write_text(metadata(codecs, args.side))
                if "write" not in workloads:
                    runner.run(imp, "write", codecs, store)  # the data the reads read
            for workload in workloads:
                # The implementations take turns, repetition by repetition:
                # this machine's speed moves in phases of seconds, and all
                # of one implementation's repetitions before the next's
                # would compare phases as much as implementations.
                runs: dict[str, tuple[list[float], list[int]]] = {imp: ([], []) for imp in imps}
                for _ in range(args.reps):
                    for imp in list(runs):
                        try:
                            t, peak = runner.run(imp, workload, codecs, root / codecs / imp)
                        except RuntimeError as e:
                            notes.append(f"FAILED: {e}")
                            del runs[imp]
                            continue
                        runs[imp][0].extend(t)
                        runs[imp][1].append(peak)
                for imp, (times, peaks) in runs.items():
                    results[(codecs, workload, imp)] = (statistics.median(times), max(peaks))
                    print(
                        f"{codecs:8} {workload:13} {imp:11} {fmt_time(results[(codecs, workload, imp)][0]):>9} "
                        f"{max(peaks) / 1024:7.0f} MiB",
                        file=sys.stderr,
                    )
            # Cross-checks: zarrkit from Python reads every peer's store, and
            # every peer reads zarrkit's (one verifying read each).
            if "zarrkit-py" in imps and "write" in workloads:
                for peer in [i for i in imps if i != "zarrkit-py"]:
                    for reader, writer in (("zarrkit-py", peer), (peer, "zarrkit-py")):
                        try:
                            runner.run(reader, "verify", codecs, root / codecs / writer)
                            notes.append(
                                f"[{codecs}] {reader} reads the {writer}-written store: all values equal"
                            )
                        except RuntimeError as e:
                            notes.append(
                                f"[{codecs}] {reader} reads the {writer}-written store: FAILED: {e}"
                            )
        # The binding's cost in a steady state: zarrkit from Python and from
        # Rust, each running the workload `--steady` times in one process;
        # every pass after a process's first counts. A process's first
        # parallel call after a while without one may wait on the
        # kernel's scheduler (see the README), in either language.
        # The two alternate, process by process: this shared machine's
        # speed moves in phases of seconds (the same Rust process's passes
        # of the sharded regions went from 10 to 19 ms and back), and all
        # of one language's processes before the other's compared phases,
        # not languages.
        both = "zarrkit-py" in imps and "zarrkit-rs" in imps
        if both and args.steady > 1:
            for codecs in codecs_list:
                for workload in workloads:
                    pair = ("zarrkit-py", "zarrkit-rs")
                    for imp in pair:
                        steady[(codecs, workload, imp)] = []
                    for _ in range(args.reps):
                        for imp in pair:
                            t, _ = runner.run(
                                imp, workload, codecs, root / codecs / imp, args.steady
                            )
                            steady[(codecs, workload, imp)].extend(t[1:])
        # The binding's cost alone: in one zarrkit-py process, each pass
        # through the Python API is paired with the same pass in Rust, the
        # two taking turns to go first (`child ... paired`); the passes
        # after each process's first count, compared pair by pair.
        if "zarrkit-py" in imps and args.paired > 1:
            for codecs in codecs_list:
                for workload in workloads:
                    pairs = paired.setdefault((codecs, workload), [])
                    for _ in range(args.reps):
                        py_t, rs_t = runner.run_paired(
                            workload, codecs, root / codecs / "zarrkit-py", args.paired
                        )
                        pairs.extend(list(zip(py_t, rs_t))[1:])
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    elapsed = time.perf_counter() - started
    load_after = open("/proc/loadavg").read().split()[:3]

    peers = [i for i in imps if i in PYTHON_PEERS]

    def against_copy(workload: str, diff: float, spread: str = "") -> str:
        """zarrkit from Python minus from Rust (`diff`, then `spread`)
        against the goal's allowance: one copy of the result into NumPy
        (for the region reads, of each region into its own array)."""
        copy = region_copy_time if workload == "read_regions" else copy_time
        verdict = "within" if copy is not None and diff <= copy else "over"
        return f"{signed(diff)}{spread} vs {fmt_time(copy)}: {verdict}"
    header = ["chain", "workload", *imps]
    if "zarrkit-py" in imps and peers:
        header.append("zarrkit-py / best Python peer")
    if "zarrkit-py" in imps and "zarrkit-rs" in imps:
        header.append("zarrkit-py − zarrkit-rs vs one copy")
    print(
        f"\nbench-compare workloads from Python: {args.side}³ uint16 ({args.side**3 * 2 / 2**20:.0f} MiB), "
        f"{args.threads} threads, median of {args.reps}, noise {args.noise} bits; "
        f"{platform.machine()}, {os.cpu_count()} CPUs\n"
    )
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    for codecs in codecs_list:
        label = LABELS[codecs].format(shard=min(256, args.side))
        for workload in workloads:
            row = [label, workload]
            for imp in imps:
                r = results.get((codecs, workload, imp))
                row.append("–" if r is None else f"{fmt_time(r[0])} ({r[1] / 1024:.0f} MiB)")
            mine = results.get((codecs, workload, "zarrkit-py"))
            if "zarrkit-py" in imps and peers:
                best = [
                    results[(codecs, workload, p)][0]
                    for p in peers
                    if (codecs, workload, p) in results
                ]
                row.append(f"{mine[0] / min(best):.2f}" if mine and best else "–")
            if "zarrkit-py" in imps and "zarrkit-rs" in imps:
                rs = results.get((codecs, workload, "zarrkit-rs"))
                if mine and rs:
                    row.append(against_copy(workload, mine[0] - rs[0]))
                else:
                    row.append("–")
            print("| " + " | ".join(row) + " |")
    print(
        "\nTimes: median wall time of one repetition (write: the whole array; read_all: the whole "
        "array into a new NumPy array; read_regions: 64 reads of 32³); in brackets the peak memory "
        "of the child process (ru_maxrss, the interpreter included). Ratio < 1: zarrkit from Python "
        "is faster than the fastest Python peer. Last column: how much slower zarrkit from Python is "
        "than from Rust (− when faster), against one copy of the result into a new NumPy array "
        '(for read_regions, of each of the 64 regions into its own); "within" meets the goal.'
    )
    if copy_time is not None:
        print(
            f"One copy of the whole array into a new NumPy array: {fmt_time(copy_time)}; of each of "
            f"the 64 regions' values into its own new NumPy array: {fmt_time(region_copy_time)} in all "
            f"({fmt_time(copy_time * 64 * 32**3 / args.side**3)} pro rata of the whole copy)."
        )
    if steady and copy_time is not None:
        print(
            f"\nSteady state: {args.reps} processes each of zarrkit from Python and from Rust, "
            f"{args.steady} passes each; median of the passes after each process's first.\n"
        )
        print("| chain | workload | zarrkit-py | zarrkit-rs | zarrkit-py − zarrkit-rs vs one copy |")
        print("| --- | --- | --- | --- | --- |")
        for codecs in codecs_list:
            label = LABELS[codecs].format(shard=min(256, args.side))
            for workload in workloads:
                py = statistics.median(steady[(codecs, workload, "zarrkit-py")])
                rs = statistics.median(steady[(codecs, workload, "zarrkit-rs")])
                print(
                    f"| {label} | {workload} | {fmt_time(py)} | {fmt_time(rs)} | "
                    f"{against_copy(workload, py - rs)} |"
                )
    if paired and copy_time is not None:
        print(
            f"\nPaired, in one process: {args.reps} zarrkit-py processes of {args.paired} passes, each "
            "pass through the Python API paired with the same pass in Rust (`_rust_pass`), each "
            "going first in every other pair; medians of "
            "the passes after each process's first, and of the pairs' differences (in brackets their "
            "quartiles).\n"
        )
        print("| chain | workload | from Python | from Rust, same process | Python − Rust (quartiles) vs one copy |")
        print("| --- | --- | --- | --- | --- |")
        for codecs in codecs_list:
            label = LABELS[codecs].format(shard=min(256, args.side))
            for workload in workloads:
                pairs = paired[(codecs, workload)]
                py = statistics.median(p for p, _ in pairs)
                rs = statistics.median(r for _, r in pairs)
                diffs = [p - r for p, r in pairs]
                q1, diff, q3 = statistics.quantiles(diffs, n=4)
                print(
                    f"| {label} | {workload} | {fmt_time(py)} | {fmt_time(rs)} | "
                    f"{against_copy(workload, diff, f' ({signed(q1)} to {signed(q3)})')} |"
                )
    print(
        f"Load average before {' '.join(load_before)}, after {' '.join(load_after)}; the run took {elapsed:.0f} s."
    )
    for note in notes:
        print(f"- {note}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child(sys.argv[2:])
    else:
        main()
