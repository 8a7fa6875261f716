//! Measures how well the read engine hides latency: reads an array of 512
//! chunks from a store that waits a fixed time before each read
//! (`store::testing::LatencyStore`, 20 ms by default), and prints the time
//! taken, the requests the store saw in flight at once, and the overlap
//! (sequential time over measured time). Issue #13 asks for at least 32.
//!
//! ```text
//! cargo run --release -p zarrkit --example latency [DELAY_MS] [CONCURRENCY]
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};
use zarrkit::metadata::DataType;
use zarrkit::store::{MemoryStore, Store, testing::LatencyStore};
use zarrkit::{Array, Region};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let delay_ms: u64 = args.next().map_or(Ok(20), |a| a.parse())?;
    let concurrency: usize = args.next().map_or(Ok(64), |a| a.parse())?;
    let delay = Duration::from_millis(delay_ms);

    // 512 chunks of 32 × 32 × 32 uint16 (64 KiB each, default codecs).
    let shape = [256u64, 256, 256];
    let memory: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = Array::builder(&shape, DataType::UInt16, &[32, 32, 32])
        .create(Arc::clone(&memory), "/a")?;
    let n = shape.iter().product::<u64>() as usize;
    let data: Vec<u16> = (0..n).map(|i| (i % 65_521) as u16).collect();
    let region = Region::whole(&shape);
    array.write_region(&region, &data)?;

    let slow = Arc::new(LatencyStore::new(memory, delay, concurrency));
    let array = Array::open(Arc::clone(&slow) as Arc<dyn Store>, "/a")?;
    slow.reset_counts();
    let start = Instant::now();
    let back: Vec<u16> = array.read_region(&region)?;
    let elapsed = start.elapsed();
    assert!(back == data, "the array read back differs");

    let reads = slow.reads();
    let sequential = delay * u32::try_from(reads)?;
    println!(
        "{reads} reads with {delay_ms} ms each: {:.3} s (sequential {:.3} s, bound 512 × {delay_ms} ms / 32 = {:.3} s)",
        elapsed.as_secs_f64(),
        sequential.as_secs_f64(),
        (delay * 512 / 32).as_secs_f64(),
    );
    println!(
        "peak requests in flight: {}; overlap achieved: {:.1}×",
        slow.peak_in_flight(),
        sequential.as_secs_f64() / elapsed.as_secs_f64()
    );
    Ok(())
}
