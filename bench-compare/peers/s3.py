"""One repetition of one Python peer against S3, run by `bench-compare s3`.

    python s3.py IMP WORKLOAD CODECS PREFIX SIDE THREADS

IMP is tensorstore (its `s3` kvstore, the endpoint overridden) or
zarr-python (3.1.6, `zarr.storage.ObjectStore` over obstore's `S3Store`);
WORKLOAD is write, read_all or verify (untimed read). The array is at
PREFIX/array in the bucket ZARRKIT_TEST_BUCKET, its metadata document
written by the parent. Endpoint and credentials come from
ZARRKIT_S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
AWS_REGION, given explicitly to each client. Prints `time_s SECONDS` and
`vmhwm_kib KIB` as peer.py does; reads are checked against the formula
after the timing (peer.py's `check`, a plane at a time).
"""

import os
import sys
import time

from peer import ARRAY, check, values, vmhwm_kib

ENDPOINT = os.environ["ZARRKIT_S3_ENDPOINT"]
BUCKET = os.environ.get("ZARRKIT_TEST_BUCKET", "zarrkit")
REGION = os.environ.get("AWS_REGION", "us-east-1")
KEY_ID = os.environ["AWS_ACCESS_KEY_ID"]
SECRET = os.environ["AWS_SECRET_ACCESS_KEY"]


class ZarrPython:
    def __init__(self, threads):
        import zarr

        self.zarr = zarr
        # As in peer.py: the thread pool sized to THREADS; async.concurrency
        # (requests in flight) stays at its default.
        zarr.config.set({"threading.max_workers": threads})

    def open(self, prefix):
        from obstore.store import S3Store
        from zarr.storage import ObjectStore

        s3 = S3Store(
            BUCKET,
            prefix=prefix,
            endpoint=ENDPOINT,
            region=REGION,
            access_key_id=KEY_ID,
            secret_access_key=SECRET,
            client_options={"allow_http": True},
        )
        return self.zarr.open_array(store=ObjectStore(s3, read_only=False), path=ARRAY, mode="r+")

    def write(self, array, data):
        array[...] = data

    def read(self, array):
        return array[...]


class Tensorstore:
    def __init__(self, threads):
        import tensorstore as ts

        self.ts = ts
        # As in peer.py: the copy threads limited to THREADS; the S3
        # request concurrency stays at its default.
        self.context = ts.Context({"data_copy_concurrency": {"limit": threads}})

    def open(self, prefix):
        spec = {
            "driver": "zarr3",
            "kvstore": {
                "driver": "s3",
                "bucket": BUCKET,
                "path": f"{prefix}/{ARRAY}/",
                "endpoint": ENDPOINT,
                "aws_region": REGION,
                # AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, never metadata.
                "aws_credentials": {"type": "environment"},
            },
        }
        return self.ts.open(spec, open=True, context=self.context).result()

    def write(self, array, data):
        array.write(data).result()

    def read(self, array):
        return array.read().result()


def main(argv):
    if len(argv) != 6:
        raise SystemExit(__doc__)
    imp, workload, _codecs, prefix, side, threads = argv
    side, threads = int(side), int(threads)
    if imp == "tensorstore":
        peer = Tensorstore(threads)
    elif imp == "zarr-python":
        peer = ZarrPython(threads)
    else:
        raise SystemExit(f"unknown peer `{imp}`")
    whole = ((0, side), (0, side), (0, side))
    array = peer.open(prefix)
    if workload == "write":
        data = values(whole, side)
        start = time.perf_counter()
        peer.write(array, data)
        print(f"time_s {time.perf_counter() - start}")
    elif workload in ("read_all", "verify"):
        start = time.perf_counter()
        data = peer.read(array)
        elapsed = time.perf_counter() - start
        check(whole, data, side)
        if workload == "read_all":
            print(f"time_s {elapsed}")
    else:
        raise SystemExit(f"unknown workload `{workload}`")
    print(f"vmhwm_kib {vmhwm_kib()}")


if __name__ == "__main__":
    main(sys.argv[1:])
