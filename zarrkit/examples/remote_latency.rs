//! As `latency.rs`, through the real remote backend: `store::RemoteStore`
//! over `object_store`'s in-memory store behind its `ThrottledStore`, which
//! waits a fixed time in each GET (20 ms by default) on the I/O runtime.
//! Prints the time to read an array of 512 chunks and the overlap achieved
//! (512 × delay over the time taken). Issue #13 asks for at least 32.
//!
//! ```text
//! cargo run --release -p zarrkit --features http --example remote_latency [DELAY_MS] [CONCURRENCY]
//! ```

use object_store::throttle::{ThrottleConfig, ThrottledStore};
use std::sync::Arc;
use std::time::{Duration, Instant};
use zarrkit::metadata::DataType;
use zarrkit::store::{Backend, RemoteStore, Store};
use zarrkit::{Array, Region};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let delay_ms: u64 = args.next().map_or(Ok(20), |a| a.parse())?;
    let concurrency: usize = args.next().map_or(Ok(64), |a| a.parse())?;
    let delay = Duration::from_millis(delay_ms);

    let memory = Arc::new(object_store::memory::InMemory::new());
    let fast = RemoteStore::new(Arc::clone(&memory) as _, "data.zarr", Backend::Other)?;
    let shape = [256u64, 256, 256];
    let array = Array::builder(&shape, DataType::UInt16, &[32, 32, 32])
        .create(Arc::new(fast) as Arc<dyn Store>, "/a")?;
    let n = shape.iter().product::<u64>() as usize;
    let data: Vec<u16> = (0..n).map(|i| (i % 65_521) as u16).collect();
    let region = Region::whole(&shape);
    array.write_region(&region, &data)?;

    let throttled = ThrottledStore::new(
        Arc::clone(&memory),
        ThrottleConfig {
            wait_get_per_call: delay,
            ..ThrottleConfig::default()
        },
    );
    let slow = RemoteStore::new(Arc::new(throttled), "data.zarr", Backend::Other)?
        .with_concurrency(concurrency);
    let array = Array::open(Arc::new(slow) as Arc<dyn Store>, "/a")?;
    let start = Instant::now();
    let back: Vec<u16> = array.read_region(&region)?;
    let elapsed = start.elapsed();
    assert!(back == data, "the array read back differs");
    let sequential = delay * 512;
    println!(
        "512 chunks, {delay_ms} ms per GET, {concurrency} in flight: {:.3} s (sequential {:.3} s, bound {:.3} s)",
        elapsed.as_secs_f64(),
        sequential.as_secs_f64(),
        (sequential / 32).as_secs_f64(),
    );
    println!(
        "overlap achieved: {:.1}x",
        sequential.as_secs_f64() / elapsed.as_secs_f64()
    );
    Ok(())
}
