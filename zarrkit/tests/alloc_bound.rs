//! Decompression bombs: whatever a stored chunk's bytes claim, decoding it
//! allocates little more than the chunk's declared decoded size, and fails
//! with an error that names the chunk's key.
//!
//! A binary of its own, because it counts every allocation of the process
//! with a `#[global_allocator]`. The tests take a lock, so that under
//! `cargo test` (one process, many threads) they measure one at a time;
//! nextest runs each in a process of its own anyway.

#![cfg(all(
    feature = "gzip",
    feature = "zstd",
    feature = "blosc",
    feature = "zlib",
    feature = "bz2",
    feature = "lzma",
    feature = "lz4",
    feature = "crc32c"
))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use zarrkit::codec::BytesToBytesCodec;
use zarrkit::store::{MemoryStore, Store, StoreKey};
use zarrkit::{Array, Region};

/// Counts the bytes live and the most live at once since the last reset.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every method forwards to `System` with the caller's arguments
// and only adds bookkeeping on atomics, which does not allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is passed on unchanged.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, so from `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`, and `new_size` is the caller's.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            if new_size >= layout.size() {
                let grown = new_size - layout.size();
                let live = LIVE.fetch_add(grown, Ordering::Relaxed) + grown;
                PEAK.fetch_max(live, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs `f` and returns its result with the most bytes it had allocated
/// at once beyond what was live when it started.
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let result = f();
    (result, PEAK.load(Ordering::Relaxed).saturating_sub(base))
}

/// The allocation allowed for decoding one 1 KiB chunk: the chunk, the
/// encoded bytes already in memory, decoder state (zstd's window, lzma's
/// dictionary and bz2's block tables for their lowest levels, a few MiB at
/// most) and the read path's bookkeeping. A bomb that inflated to its
/// claimed size would allocate at least 64 MiB.
const BOUND: usize = 12 << 20;

/// The size of a bomb's output: 100 MiB of zeros.
const MIB: usize = 100;

/// A bomb of 100 MiB of zeros for a codec whose decoder reads
/// concatenated streams (gzip members, zstd frames, bz2 and xz streams):
/// one MiB encoded, repeated, so that building it costs little in a debug
/// build.
fn bomb(encode: impl Fn(Vec<u8>) -> Vec<u8>) -> Vec<u8> {
    encode(vec![0; 1 << 20]).repeat(MIB)
}

/// An array of 1024 `uint8` in one 1 KiB chunk at `a`, with `codecs` (v3
/// codec JSON after `bytes`), its chunk `a/c/0` holding `chunk`.
fn v3_array(codecs: &str, chunk: Vec<u8>) -> (Arc<dyn Store>, Array) {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let document = format!(
        r#"{{"zarr_format":3,"node_type":"array","shape":[1024],"data_type":"uint8",
        "chunk_grid":{{"name":"regular","configuration":{{"chunk_shape":[1024]}}}},
        "chunk_key_encoding":{{"name":"default","configuration":{{"separator":"/"}}}},
        "fill_value":0,"codecs":[{{"name":"bytes"}}{codecs}]}}"#
    );
    let key = |k: &str| StoreKey::new(k).unwrap();
    store.set(&key("a/zarr.json"), document.as_bytes()).unwrap();
    store.set(&key("a/c/0"), &chunk).unwrap();
    let array = Array::open(Arc::clone(&store), "a").unwrap();
    (store, array)
}

/// As [`v3_array`] for a v2 array with `compressor` (JSON), chunk `a/0`.
fn v2_array(compressor: &str, chunk: Vec<u8>) -> Array {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let document = format!(
        r#"{{"zarr_format":2,"shape":[1024],"chunks":[1024],"dtype":"|u1",
        "compressor":{compressor},"fill_value":0,"order":"C","filters":null}}"#
    );
    let key = |k: &str| StoreKey::new(k).unwrap();
    store.set(&key("a/.zarray"), document.as_bytes()).unwrap();
    store.set(&key("a/0"), &chunk).unwrap();
    Array::open(store, "a").unwrap()
}

/// Reads the whole array, expecting an error that names `key`, and
/// checks the allocation bound; returns the error message.
fn assert_refused(what: &str, array: &Array, key: &str) -> String {
    let region = Region::new(vec![0], vec![1024]);
    let (result, peak) = peak_during(|| array.read_region_bytes(&region));
    let err = result.expect_err(what);
    let message = chain(&err);
    eprintln!("{what}: peak {} KiB: {message}", peak >> 10);
    assert!(message.contains(&format!("`{key}`")), "{what}: {message}");
    assert!(
        peak < BOUND,
        "{what}: decoding allocated {peak} bytes at once (bound {BOUND})"
    );
    // The chunk-sized path (`read_region_bytes_into`) is bounded too.
    let mut out = vec![0u8; 1024];
    let (result, peak) = peak_during(|| array.read_region_bytes_into(&region, &mut out));
    assert!(result.is_err(), "{what}: read into a buffer succeeded");
    assert!(peak < BOUND, "{what} (into a buffer): {peak} bytes");
    message
}

fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[test]
fn gzip_bomb_stops_at_the_chunk_size() {
    let _serial = serial();
    let gzip = zarrkit::codec::gzip::GzipCodec::new(1).unwrap();
    let bomb = bomb(|zeros| gzip.encode(zeros).unwrap());
    assert!(bomb.len() < 1 << 20, "{}", bomb.len());
    let (_store, array) = v3_array(r#",{"name":"gzip","configuration":{"level":1}}"#, bomb);
    let message = assert_refused("gzip", &array, "a/c/0");
    assert!(
        message.contains("more than the expected 1024 bytes"),
        "{message}"
    );
}

#[test]
fn zstd_bomb_stops_at_the_chunk_size() {
    let _serial = serial();
    let zstd = zarrkit::codec::zstd::ZstdCodec::new(1, false).unwrap();
    let bomb = bomb(|zeros| zstd.encode(zeros).unwrap());
    let (_store, array) = v3_array(
        r#",{"name":"zstd","configuration":{"level":1,"checksum":false}}"#,
        bomb,
    );
    let message = assert_refused("zstd", &array, "a/c/0");
    assert!(
        message.contains(&format!("records {} bytes of content", MIB << 20)),
        "{message}"
    );
}

#[test]
fn zstd_frame_claiming_a_terabyte_is_refused_unread() {
    let _serial = serial();
    // v1.5 format: magic, then a frame header with the single-segment flag
    // and an 8-byte content size of 2^40, then one empty raw last block.
    let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0xe0];
    frame.extend_from_slice(&(1u64 << 40).to_le_bytes());
    frame.extend_from_slice(&[0x01, 0x00, 0x00]);
    let (_store, array) = v3_array(
        r#",{"name":"zstd","configuration":{"level":1,"checksum":false}}"#,
        frame,
    );
    let message = assert_refused("zstd 2^40", &array, "a/c/0");
    assert!(message.contains("records 1099511627776 bytes"), "{message}");
}

#[test]
fn zstd_stream_without_a_content_size_stops_at_the_chunk_size() {
    let _serial = serial();
    // A streaming compressor records no content size: the decoder must
    // stop at the bound, not at the end of the stream.
    let mut bomb = Vec::new();
    {
        let mut encoder = RawZstdWriter::new(&mut bomb);
        let block = vec![0u8; 1 << 20];
        for _ in 0..MIB {
            std::io::Write::write_all(&mut encoder, &block).unwrap();
        }
        encoder.finish().unwrap();
    }
    let (_store, array) = v3_array(
        r#",{"name":"zstd","configuration":{"level":1,"checksum":false}}"#,
        bomb,
    );
    let message = assert_refused("zstd stream", &array, "a/c/0");
    assert!(
        message.contains("more than the expected 1024 bytes"),
        "{message}"
    );
}

/// Writes a zstd frame without a content size, its data as RLE blocks
/// (v1.5 format, "Blocks"): 4 bytes for each 128 KiB of one byte value.
struct RawZstdWriter<'a> {
    out: &'a mut Vec<u8>,
}

impl<'a> RawZstdWriter<'a> {
    fn new(out: &'a mut Vec<u8>) -> Self {
        // Magic; frame header descriptor 0: no content size, no checksum,
        // not single-segment; window descriptor 0x50: a 1 MiB window.
        out.extend_from_slice(&[0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x50]);
        Self { out }
    }

    fn finish(self) -> std::io::Result<()> {
        // An empty raw last block.
        self.out.extend_from_slice(&[0x01, 0x00, 0x00]);
        Ok(())
    }
}

impl std::io::Write for RawZstdWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for piece in buf.chunks(128 << 10) {
            // RLE block (type 1), not last: size in the upper 21 bits.
            let header = ((piece.len() as u32) << 3) | (1 << 1);
            self.out.extend_from_slice(&header.to_le_bytes()[..3]);
            self.out.push(piece[0]);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn blosc_header_claiming_a_gigabyte_is_refused_unread() {
    let _serial = serial();
    let codec = zarrkit::codec::blosc::BloscCodec::new(
        zarrkit::codec::blosc::BloscCompressor::Lz4,
        5,
        zarrkit::codec::blosc::BloscShuffle::NoShuffle,
        Some(1),
        0,
    )
    .unwrap();
    let real = codec.encode(vec![0; 1024]).unwrap();
    let codecs = r#",{"name":"blosc","configuration":{"cname":"lz4","clevel":5,"shuffle":"noshuffle","typesize":1,"blocksize":0}}"#;
    // c-blosc 1 header: bytes 4..8 are the decoded size. 1 GiB passes
    // c-blosc's own check (at most 2 GiB); 4 GiB does not fit its field.
    for claimed in [1u32 << 30, u32::MAX] {
        let mut forged = real.clone();
        forged[4..8].copy_from_slice(&claimed.to_le_bytes());
        let (_store, array) = v3_array(codecs, forged);
        let message = assert_refused("blosc", &array, "a/c/0");
        assert!(message.contains("blosc"), "{message}");
        // A region read decodes only the blocks it needs: the header is
        // refused there too, before anything is allocated.
        let region = Region::new(vec![100], vec![50]);
        let (result, peak) = peak_during(|| array.read_region_bytes(&region));
        let message = chain(&result.expect_err("a partial blosc read"));
        assert!(message.contains("`a/c/0`"), "{message}");
        assert!(message.contains("blosc data is corrupt"), "{message}");
        assert!(peak < BOUND, "partial blosc read: {peak} bytes");
    }
}

#[test]
fn numcodecs_compressor_bombs_stop_at_the_chunk_size() {
    let _serial = serial();
    let lzma = zarrkit::codec::lzma::LzmaCodec::new(
        serde_json::from_str(r#"{"format":1,"check":-1,"preset":0}"#).unwrap(),
    )
    .unwrap();
    let bz2 = zarrkit::codec::bz2::Bz2Codec::new(1).unwrap();
    let bombs: [(&str, Vec<u8>); 4] = [
        // A zlib stream is one stream: 8 MiB encoded for real.
        (
            r#"{"id":"zlib","level":1}"#,
            zarrkit::codec::zlib::ZlibCodec::new(1)
                .unwrap()
                .encode(vec![0; 8 << 20])
                .unwrap(),
        ),
        (
            r#"{"id":"bz2","level":1}"#,
            bomb(|z| bz2.encode(z).unwrap()),
        ),
        (
            r#"{"id":"lzma","format":1,"check":-1,"preset":0,"filters":null}"#,
            bomb(|z| lzma.encode(z).unwrap()),
        ),
        // numcodecs' LZ4 is one block after a size header: the header
        // claims 100 MiB.
        (r#"{"id":"lz4","acceleration":1}"#, {
            let mut forged = zarrkit::codec::lz4::Lz4Codec::new(1)
                .encode(vec![0; 1024])
                .unwrap();
            forged[..4].copy_from_slice(&((MIB << 20) as u32).to_le_bytes());
            forged
        }),
    ];
    for (compressor, bomb) in bombs {
        let array = v2_array(compressor, bomb);
        let message = assert_refused(compressor, &array, "a/0");
        assert!(message.contains("1024"), "{compressor}: {message}");
    }
}

#[test]
fn outer_compressor_of_a_chain_is_bounded_too() {
    let _serial = serial();
    // gzip outermost: its output is zstd's input, which the chain bounds by
    // the chunk plus an encoder's slack, not by nothing.
    let gzip = zarrkit::codec::gzip::GzipCodec::new(1).unwrap();
    let bomb = bomb(|zeros| gzip.encode(zeros).unwrap());
    let (_store, array) = v3_array(
        r#",{"name":"zstd","configuration":{"level":1,"checksum":false}},{"name":"gzip","configuration":{"level":1}}"#,
        bomb,
    );
    let message = assert_refused("zstd then gzip", &array, "a/c/0");
    // 1024 + 1024/16 + 4096.
    assert!(
        message.contains("more than the expected 5184 bytes"),
        "{message}"
    );
}

#[test]
fn vlen_count_of_four_billion_is_refused_unallocated() {
    let _serial = serial();
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let key = |k: &str| StoreKey::new(k).unwrap();
    for (codec, data_type) in [("vlen-utf8", "string"), ("vlen-bytes", "bytes")] {
        let document = format!(
            r#"{{"zarr_format":3,"node_type":"array","shape":[4],"data_type":"{data_type}",
            "chunk_grid":{{"name":"regular","configuration":{{"chunk_shape":[4]}}}},
            "chunk_key_encoding":{{"name":"default","configuration":{{"separator":"/"}}}},
            "fill_value":"","codecs":[{{"name":"{codec}"}}]}}"#
        );
        store.set(&key("v/zarr.json"), document.as_bytes()).unwrap();
        // The count claims 2^32 - 1 items; each length claims 2^32 - 1 bytes.
        let mut chunk = u32::MAX.to_le_bytes().to_vec();
        chunk.extend_from_slice(&u32::MAX.to_le_bytes());
        chunk.extend_from_slice(b"abc");
        store.set(&key("v/c/0"), &chunk).unwrap();
        let array = Array::open(Arc::clone(&store), "v").unwrap();
        let (result, peak) = peak_during(|| array.read_chunk_bytes(&[0]));
        let message = chain(&result.expect_err(codec));
        eprintln!("{codec}: peak {} KiB: {message}", peak >> 10);
        assert!(message.contains("`v/c/0`"), "{message}");
        assert!(message.contains("4294967295"), "{message}");
        assert!(peak < BOUND, "{codec}: {peak} bytes");

        // The count right, one length past the end.
        let mut chunk = 4u32.to_le_bytes().to_vec();
        chunk.extend_from_slice(&u32::MAX.to_le_bytes());
        chunk.extend_from_slice(b"abc");
        store.set(&key("v/c/0"), &chunk).unwrap();
        let (result, peak) = peak_during(|| array.read_chunk_bytes(&[0]));
        let message = chain(&result.expect_err(codec));
        assert!(message.contains("`v/c/0`"), "{message}");
        assert!(peak < BOUND, "{codec}: {peak} bytes");
    }
}

#[test]
fn shard_index_pointing_past_the_end_is_refused_unallocated() {
    let _serial = serial();
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let key = |k: &str| StoreKey::new(k).unwrap();
    // One shard of 4 inner chunks of 256 bytes, raw inner chunks, no index
    // checksum: the index is 4 × (offset, length) little-endian u64 at the end.
    let document = r#"{"zarr_format":3,"node_type":"array","shape":[1024],"data_type":"uint8",
        "chunk_grid":{"name":"regular","configuration":{"chunk_shape":[1024]}},
        "chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},
        "fill_value":0,"codecs":[{"name":"sharding_indexed","configuration":{
        "chunk_shape":[256],"codecs":[{"name":"bytes"}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}],
        "index_location":"end"}}]}"#;
    store.set(&key("s/zarr.json"), document.as_bytes()).unwrap();
    let array = Array::open(Arc::clone(&store), "s").unwrap();
    for (offset, length) in [
        (0u64, 1u64 << 40),
        (1 << 40, 256),
        (u64::MAX - 10, 256),
        (0, u64::MAX),
    ] {
        let mut shard = vec![7u8; 256];
        for i in 0..4u64 {
            let (o, l) = if i == 1 {
                (offset, length)
            } else {
                (u64::MAX, u64::MAX)
            };
            shard.extend_from_slice(&o.to_le_bytes());
            shard.extend_from_slice(&l.to_le_bytes());
        }
        store.set(&key("s/c/0"), &shard).unwrap();
        let region = Region::new(vec![0], vec![1024]);
        let (result, peak) = peak_during(|| array.read_region_bytes(&region));
        let message = chain(&result.expect_err("shard"));
        eprintln!(
            "shard ({offset}, {length}): peak {} KiB: {message}",
            peak >> 10
        );
        assert!(message.contains("`s/c/0`"), "{message}");
        assert!(message.contains("inner chunk 1"), "{message}");
        assert!(peak < BOUND, "shard: {peak} bytes");
        // Reading the inner chunk alone (a ranged read) fails the same way.
        let region = Region::new(vec![256], vec![256]);
        let (result, peak) = peak_during(|| array.read_region_bytes(&region));
        let message = chain(&result.expect_err("inner chunk"));
        assert!(message.contains("`s/c/0`"), "{message}");
        assert!(peak < BOUND, "inner chunk: {peak} bytes");
    }
}
