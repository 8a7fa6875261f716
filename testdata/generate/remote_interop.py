"""Interop with zarr-python 3.1 over real servers (#13).

zarrkit/tests/it/remote.rs runs this against SeaweedFS (S3) and nginx
(HTTP), both on 127.0.0.1, with the store packages of
scripts/requirements.txt (`obstore`, through `zarr.storage.ObjectStore`).

    remote_interop.py write URL   zarr-python writes the arrays below
    remote_interop.py read URL    zarr-python reads them and checks every
                                  element, exiting 1 on a difference

URL is `s3://BUCKET/PREFIX` (the endpoint and credentials come from
ZARRKIT_S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
AWS_REGION, given explicitly: never the instance metadata service),
`http://...` (read only) or a local directory (write only: nginx serves it).

The arrays are those `remote_cases` in remote.rs writes and reads: a v2
array, a v3 array and a sharded v3 array, with partial edge chunks, one
chunk (or shard) never written, and values each side computes from the
element's index.
"""

import os
import sys

import numpy as np
import obstore.store
import zarr
import zarr.storage

# name: (zarr_format, dtype, shape, chunks, shards)
CASES = {
    "v2_float64": (2, "float64", (37, 23), (10, 8), None),
    "v3_uint16": (3, "uint16", (37, 23), (10, 8), None),
    "v3_sharded_int32": (3, "int32", (40, 30), (5, 5), (20, 15)),
}


def expected(name):
    """The values of array `name`: a formula of the C-order index, zero
    (the fill value) in the last chunk (shard), which is never written."""
    _, dtype, shape, chunks, shards = CASES[name]
    i = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    if dtype == "float64":
        values = i * 0.5 - 100.0
    elif dtype == "uint16":
        values = (i * 7 + 3) % 65536
    else:
        values = i * 3 - 1000
    values = values.astype(dtype)
    outer = shards or chunks
    last = tuple(slice((n - 1) // c * c, n) for n, c in zip(shape, outer))
    values[last] = 0
    return values


def open_store(url, mode):
    read_only = mode == "read"
    if url.startswith("s3://"):
        bucket, _, prefix = url[len("s3://") :].partition("/")
        store = obstore.store.S3Store(
            bucket,
            prefix=prefix,
            config={
                "endpoint": os.environ["ZARRKIT_S3_ENDPOINT"],
                "access_key_id": os.environ["AWS_ACCESS_KEY_ID"],
                "secret_access_key": os.environ["AWS_SECRET_ACCESS_KEY"],
                "region": os.environ.get("AWS_REGION", "us-east-1"),
                "virtual_hosted_style_request": False,
            },
            client_options={"allow_http": True},
        )
        return zarr.storage.ObjectStore(store, read_only=read_only)
    if url.startswith(("http://", "https://")):
        assert read_only, "HTTP is read only"
        store = obstore.store.HTTPStore.from_url(url, client_options={"allow_http": True})
        return zarr.storage.ObjectStore(store, read_only=True)
    return zarr.storage.LocalStore(url, read_only=read_only)


def write(store):
    for name, (zarr_format, dtype, shape, chunks, shards) in CASES.items():
        array = zarr.create_array(
            store,
            name=name,
            shape=shape,
            chunks=chunks,
            shards=shards,
            dtype=dtype,
            fill_value=0,
            zarr_format=zarr_format,
        )
        values = expected(name)
        outer = shards or chunks
        # Every chunk (shard) but the last, which stays unwritten.
        written = np.ones(values.shape, dtype=bool)
        written[tuple(slice((n - 1) // c * c, n) for n, c in zip(shape, outer))] = False
        for region in np.ndindex(*[-(-n // c) for n, c in zip(shape, outer)]):
            box = tuple(slice(r * c, min((r + 1) * c, n)) for r, c, n in zip(region, outer, shape))
            if written[box].all():
                array[box] = values[box]


def read(store):
    failures = []
    for name, (zarr_format, dtype, shape, chunks, shards) in CASES.items():
        array = zarr.open_array(store, path=name, mode="r")
        got = (array.metadata.zarr_format, str(array.dtype), array.shape, array.chunks, array.shards)
        want = (zarr_format, dtype, shape, chunks, shards)
        if got != want:
            failures.append(f"{name}: (format, dtype, shape, chunks, shards) {got} != {want}")
            continue
        values = array[...]
        if not np.array_equal(values, expected(name)):
            wrong = np.argwhere(values != expected(name))
            failures.append(f"{name}: {len(wrong)} elements differ, the first at {tuple(wrong[0])}")
        else:
            print(f"{name}: {values.size} elements equal")
    for failure in failures:
        print(failure, file=sys.stderr)
    return 1 if failures else 0


def main():
    mode, url = sys.argv[1], sys.argv[2]
    store = open_store(url, mode)
    if mode == "write":
        write(store)
        return 0
    return read(store)


if __name__ == "__main__":
    sys.exit(main())
