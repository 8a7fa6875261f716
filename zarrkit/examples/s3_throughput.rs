//! Whole-array write and read of a `uint16` cube against an S3 server, with
//! zstd chunks (64³) and with shards (128³ of 32³ zstd inner chunks), as
//! `bench-compare`'s workloads do locally (#13). Prints the times and the
//! decoded MB/s. The test credentials of `scripts/servers.sh` are assumed.
//!
//! ```text
//! cargo run --release -p zarrkit --features s3 --example s3_throughput -- ENDPOINT [SIDE]
//! ```

use std::sync::Arc;
use std::time::Instant;
use zarrkit::codec::sharding::ShardingCodec;
use zarrkit::codec::{Codec, bytes::BytesCodec, zstd::ZstdCodec};
use zarrkit::metadata::DataType;
use zarrkit::store::{Store, StoreOptions, open};
use zarrkit::{Array, Region};
fn main() {
    let endpoint = std::env::args()
        .nth(1)
        .expect("usage: s3_throughput ENDPOINT [SIDE]");
    let side: u64 = std::env::args().nth(2).map_or(256, |s| s.parse().unwrap());
    let opts = StoreOptions::new()
        .with("aws_endpoint", endpoint)
        .with("aws_access_key_id", "zarrkit-test")
        .with("aws_secret_access_key", "zarrkit-test-secret")
        .with("aws_region", "us-east-1");
    let shape = [side; 3];
    let n = (side * side * side) as usize;
    let data: Vec<u16> = (0..n as u64)
        .map(|i| ((i.wrapping_mul(2654435761) >> 13) & 0x3ff) as u16 + (i % 512) as u16)
        .collect();
    for sharded in [false, true] {
        let bucket = std::env::var("ZARRKIT_TEST_BUCKET").unwrap_or_else(|_| "zarrkit".into());
        let url = format!("s3://{bucket}/throughput-{}-{sharded}", std::process::id());
        let store: Arc<dyn Store> = open(&url, &opts).unwrap();
        let mut b = Array::builder(
            &shape,
            DataType::UInt16,
            if sharded {
                &[128, 128, 128]
            } else {
                &[64, 64, 64]
            },
        );
        if sharded {
            let zstd = Codec::BytesToBytes(Arc::new(ZstdCodec::new(0, false).unwrap()));
            let bytes = Codec::ArrayToBytes(Arc::new(BytesCodec::little()));
            b = b.codecs(vec![Codec::ArrayToBytes(Arc::new(ShardingCodec::new(
                &[32, 32, 32],
                vec![bytes, zstd],
            )))]);
        }
        let array = b.create(Arc::clone(&store), "/a").unwrap();
        let t = Instant::now();
        array.write_region(&Region::whole(&shape), &data).unwrap();
        let w = t.elapsed().as_secs_f64();
        let array = Array::open(Arc::clone(&store), "/a").unwrap();
        let t = Instant::now();
        let back: Vec<u16> = array.read_region(&Region::whole(&shape)).unwrap();
        let r = t.elapsed().as_secs_f64();
        assert!(back == data);
        let mb = (n * 2) as f64 / 1e6;
        println!(
            "{side}^3 uint16 zstd sharded={sharded}: write {w:.2} s ({:.0} MB/s), read {r:.2} s ({:.0} MB/s)",
            mb / w,
            mb / r
        );
        store
            .erase_prefix(&zarrkit::store::StorePrefix::root())
            .unwrap();
    }
}
