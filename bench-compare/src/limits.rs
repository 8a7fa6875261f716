//! The machine's limits, measured in the same run on the same chunks as the
//! workloads: each codec library's encode and decode throughput on 1 and N
//! threads (called directly, as zarrkit calls them: zstd, libdeflate for
//! zlib, c-blosc), memcpy
//! into a fresh buffer, and reading the chunk files from the page cache
//! and cold.
//!
//! Throughput is decoded bytes per second (GB = 10⁹ bytes) for the codecs
//! and memcpy, file bytes per second for the file reads. Each figure is the
//! best of `reps` (at least 3) passes over every chunk of the array; the chunks are
//! spread over the threads, each thread with its own codec context and
//! reused output buffer (the best case a Zarr implementation can reach).

use crate::imps::BoxError;
use crate::workload::{Pattern, blocks};
use std::os::raw::{c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// One codec configuration the workloads use.
#[derive(Clone, Copy)]
pub enum Codec {
    Zstd(i32),
    Zlib(u32),
    /// c-blosc: compressor name (NUL-terminated), level, shuffle (0, 1 byte, 2 bit).
    Blosc(&'static str, c_int, c_int),
}

impl Codec {
    fn label(self) -> String {
        match self {
            Codec::Zstd(level) => format!("zstd {level}"),
            Codec::Zlib(level) => format!("zlib {level}"),
            Codec::Blosc(cname, level, shuffle) => format!(
                "blosc {} {level}{}",
                cname.trim_end_matches('\0'),
                [" noshuffle", " shuffle", " bitshuffle"][shuffle as usize]
            ),
        }
    }
}

/// A libdeflate compressor at zlib `level`.
fn zlib_compressor(level: u32) -> Result<libdeflater::Compressor, BoxError> {
    let level = libdeflater::CompressionLvl::new(level as i32)
        .map_err(|e| format!("zlib level {level}: {e:?}"))?;
    Ok(libdeflater::Compressor::new(level))
}

/// Per-thread state: codec contexts and a reused output buffer.
struct Ctx {
    zstd_c: Option<zstd::bulk::Compressor<'static>>,
    zstd_d: zstd::bulk::Decompressor<'static>,
    zlib_c: Option<libdeflater::Compressor>,
    zlib_d: libdeflater::Decompressor,
    /// libdeflate's decoded output, zeroed once (it takes an initialised
    /// slice).
    zlib_out: Vec<u8>,
    /// libdeflate's encoded output (its worst case), zeroed once, and the
    /// length of the last encoding.
    zlib_enc: Vec<u8>,
    zlib_enc_len: usize,
    out: Vec<u8>,
}

impl Ctx {
    fn new(codec: Codec, capacity: usize) -> Result<Self, BoxError> {
        Ok(Self {
            zstd_c: match codec {
                Codec::Zstd(level) => Some(zstd::bulk::Compressor::new(level)?),
                _ => None,
            },
            zstd_d: zstd::bulk::Decompressor::new()?,
            zlib_c: match codec {
                Codec::Zlib(level) => Some(zlib_compressor(level)?),
                _ => None,
            },
            zlib_d: libdeflater::Decompressor::new(),
            zlib_out: match codec {
                Codec::Zlib(_) => vec![0; capacity],
                _ => Vec::new(),
            },
            zlib_enc: match codec {
                Codec::Zlib(level) => {
                    let bound = |c: &mut libdeflater::Compressor| c.zlib_compress_bound(capacity);
                    vec![0; zlib_compressor(level).map(|mut c| bound(&mut c))?]
                }
                _ => Vec::new(),
            },
            zlib_enc_len: 0,
            out: Vec::with_capacity(capacity),
        })
    }

    fn encode(&mut self, codec: Codec, src: &[u8], internal_threads: c_int) -> usize {
        self.out.clear();
        match codec {
            Codec::Zstd(_) => {
                let c = self.zstd_c.as_mut().expect("made for zstd");
                c.compress_to_buffer(src, &mut self.out)
                    .expect("zstd encode")
            }
            Codec::Zlib(_) => {
                let c = self.zlib_c.as_mut().expect("made for zlib");
                self.zlib_enc_len = c
                    .zlib_compress(src, &mut self.zlib_enc)
                    .expect("zlib encode");
                self.zlib_enc_len
            }
            Codec::Blosc(cname, level, shuffle) => {
                let capacity = self.out.capacity();
                // SAFETY: `src` is readable for its length, `out` has
                // `capacity` writable bytes, passed as `destsize`; the name
                // is NUL-terminated.
                let written = unsafe {
                    blosc_src::blosc_compress_ctx(
                        level,
                        shuffle,
                        2,
                        src.len(),
                        src.as_ptr().cast::<c_void>(),
                        self.out.as_mut_ptr().cast::<c_void>(),
                        capacity,
                        cname.as_ptr().cast::<c_char>(),
                        0,
                        internal_threads,
                    )
                };
                assert!(written > 0, "blosc encode returned {written}");
                // SAFETY: c-blosc initialised `written` <= capacity bytes.
                unsafe { self.out.set_len(written as usize) };
                written as usize
            }
        }
    }

    /// The bytes the last [`Ctx::encode`] wrote.
    fn encoded(&self, codec: Codec) -> &[u8] {
        match codec {
            Codec::Zlib(_) => &self.zlib_enc[..self.zlib_enc_len],
            _ => &self.out,
        }
    }

    fn decode(&mut self, codec: Codec, src: &[u8], internal_threads: c_int) -> usize {
        self.out.clear();
        match codec {
            Codec::Zstd(_) => self
                .zstd_d
                .decompress_to_buffer(src, &mut self.out)
                .expect("zstd decode"),
            Codec::Zlib(_) => self
                .zlib_d
                .zlib_decompress(src, &mut self.zlib_out)
                .expect("zlib decode"),
            Codec::Blosc(..) => {
                let capacity = self.out.capacity();
                // SAFETY: `src` is a buffer c-blosc encoded above; `out`
                // has `capacity` writable bytes, passed as `destsize`.
                let n = unsafe {
                    blosc_src::blosc_decompress_ctx(
                        src.as_ptr().cast::<c_void>(),
                        self.out.as_mut_ptr().cast::<c_void>(),
                        capacity,
                        internal_threads,
                    )
                };
                assert!(n > 0, "blosc decode returned {n}");
                // SAFETY: c-blosc initialised `n` <= capacity bytes.
                unsafe { self.out.set_len(n as usize) };
                n as usize
            }
        }
    }
}

/// Runs `work(state, i)` for every `i < n` on `threads` threads (each with
/// its own `init()` state, made before the clock starts); returns the
/// seconds from the first thread's start to the last one's end (each thread
/// reads the clock itself, so a descheduled parent cannot skew it).
fn par_time<S>(
    threads: usize,
    n: usize,
    init: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, usize) + Sync,
) -> f64 {
    let next = AtomicUsize::new(0);
    let barrier = std::sync::Barrier::new(threads);
    let spans: Vec<(Instant, Instant)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut state = init();
                    barrier.wait();
                    let start = Instant::now();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= n {
                            break;
                        }
                        work(&mut state, i);
                    }
                    (start, Instant::now())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a limits thread panicked"))
            .collect()
    });
    let start = spans
        .iter()
        .map(|s| s.0)
        .min()
        .expect("at least one thread");
    let end = spans
        .iter()
        .map(|s| s.1)
        .max()
        .expect("at least one thread");
    (end - start).as_secs_f64()
}

/// The best (shortest) of `times`: a limit is what the machine can do, and
/// on a shared machine other work only ever slows a pass down.
fn best(times: &[f64]) -> f64 {
    times.iter().copied().fold(f64::INFINITY, f64::min)
}

/// The median of `t` (the mean of the middle two for an even count).
pub fn median(mut t: Vec<f64>) -> f64 {
    t.sort_by(f64::total_cmp);
    let n = t.len();
    if n % 2 == 1 {
        t[n / 2]
    } else {
        (t[n / 2 - 1] + t[n / 2]) / 2.0
    }
}

/// One line of the limits table: what, and GB/s per thread count.
pub struct Limit {
    pub name: String,
    /// For a codec limit: the chain it belongs to, and whether it encodes.
    pub chain: Option<(&'static str, bool)>,
    pub gbps: Vec<f64>,
}

/// The codec configurations and chunk edges of the workloads.
pub const CODECS: [(&str, Codec, u64); 6] = [
    ("zstd", Codec::Zstd(3), 64),
    ("sharded", Codec::Zstd(3), 32),
    ("v2_zlib", Codec::Zlib(1), 64),
    ("v2_blosc", Codec::Blosc("lz4\0", 5, 1), 64),
    ("sharded_blosc", Codec::Blosc("lz4\0", 5, 1), 32),
    ("blosc256", Codec::Blosc("blosclz\0", 9, 2), 256),
];

/// Measures every limit. `stores` are zarrkit's stores of the raw and zstd
/// chains (for the file reads; skipped if absent); `cold` says whether the
/// page cache can be dropped.
pub fn measure(
    side: u64,
    noise_bits: u32,
    thread_counts: &[usize],
    reps: usize,
    stores: &[(String, PathBuf)],
    cold: bool,
) -> Result<Vec<Limit>, BoxError> {
    let pattern = Pattern::with_noise(side, noise_bits);
    let mut out = Vec::new();
    for (chain, codec, edge) in CODECS {
        if edge > side {
            continue;
        }
        let chunks: Vec<Vec<u8>> = blocks(side, edge)
            .iter()
            .map(|r| {
                pattern
                    .generate(r)
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect()
            })
            .collect();
        let total: usize = chunks.iter().map(Vec::len).sum();
        let capacity = chunks.iter().map(Vec::len).max().unwrap_or(0) * 2 + 4096;
        // Encode once (untimed) to have the encoded chunks, and check one
        // round trip.
        let mut ctx = Ctx::new(codec, capacity)?;
        let encoded: Vec<Vec<u8>> = chunks
            .iter()
            .map(|c| {
                ctx.encode(codec, c, 1);
                ctx.encoded(codec).to_vec()
            })
            .collect();
        let n = ctx.decode(codec, &encoded[0], 1);
        let decoded = match codec {
            Codec::Zlib(_) => &ctx.zlib_out[..n],
            _ => &ctx.out[..],
        };
        assert_eq!(decoded, &chunks[0][..], "{} round trip", codec.label());
        for encode in [false, true] {
            let mut gbps = Vec::new();
            for &threads in thread_counts {
                // One chunk on several threads: let c-blosc split it.
                let internal = if chunks.len() < threads { threads } else { 1 } as c_int;
                let times: Vec<f64> = (0..reps)
                    .map(|_| {
                        par_time(
                            threads,
                            chunks.len(),
                            || Ctx::new(codec, capacity).expect("codec context"),
                            |ctx, i| {
                                if encode {
                                    ctx.encode(codec, &chunks[i], internal);
                                } else {
                                    ctx.decode(codec, &encoded[i], internal);
                                }
                            },
                        )
                    })
                    .collect();
                gbps.push(total as f64 / best(&times) / 1e9);
            }
            let ratio = total as f64 / encoded.iter().map(Vec::len).sum::<usize>() as f64;
            out.push(Limit {
                name: format!(
                    "{} {}, {edge}³ chunks (ratio {ratio:.0}:1)",
                    codec.label(),
                    if encode { "encode" } else { "decode" }
                ),
                chain: Some((chain, encode)),
                gbps,
            });
        }
    }
    // memcpy of the whole array into a fresh (not yet faulted-in) buffer,
    // with the kernel's default 4 KiB pages and with transparent huge pages
    // asked for (`madvise(MADV_HUGEPAGE)`, as numpy does for large arrays).
    let bytes = (side.pow(3) * 2) as usize;
    let source: Vec<u8> = (0..bytes).map(|i| i as u8).collect();
    for huge in [false, true] {
        let mut gbps = Vec::new();
        for &threads in thread_counts {
            // Every repetition's buffer is kept until the end, so the
            // allocator cannot hand back pages an earlier one faulted in.
            let mut kept = Vec::with_capacity(reps);
            let mut times = Vec::with_capacity(reps);
            for _ in 0..reps {
                let start = Instant::now();
                let mut dest = vec![0u8; bytes];
                if huge {
                    advise_huge_pages(&mut dest);
                }
                let part = bytes.div_ceil(threads);
                std::thread::scope(|scope| {
                    for (d, s) in dest.chunks_mut(part).zip(source.chunks(part)) {
                        scope.spawn(move || d.copy_from_slice(s));
                    }
                });
                times.push(start.elapsed().as_secs_f64());
                assert_eq!(dest[bytes - 1], source[bytes - 1]);
                kept.push(dest);
            }
            gbps.push(bytes as f64 / best(&times) / 1e9);
        }
        out.push(Limit {
            name: format!(
                "memcpy of the array into a fresh buffer{}",
                if huge { ", MADV_HUGEPAGE" } else { "" }
            ),
            chain: None,
            gbps,
        });
    }
    drop(source);
    // File reads of every chunk file of zarrkit's stores.
    for (name, dir) in stores {
        let mut files = Vec::new();
        list_files(dir, &mut files)?;
        if files.is_empty() {
            continue;
        }
        let total: u64 = files
            .iter()
            .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
            .sum();
        for cold_pass in [false, true] {
            if cold_pass && !cold {
                continue;
            }
            let mut gbps = Vec::new();
            for &threads in thread_counts {
                let read = || {
                    par_time(
                        threads,
                        files.len(),
                        || (),
                        |(), i| {
                            std::hint::black_box(std::fs::read(&files[i]).expect("read"));
                        },
                    )
                };
                if !cold_pass {
                    read();
                }
                let times: Vec<f64> = (0..reps)
                    .map(|_| {
                        if cold_pass {
                            crate::drop_caches();
                        }
                        read()
                    })
                    .collect();
                gbps.push(total as f64 / best(&times) / 1e9);
            }
            out.push(Limit {
                name: format!(
                    "{} file reads, {} ({} files, {:.1} MiB)",
                    if cold_pass { "cold" } else { "page-cache" },
                    name,
                    files.len(),
                    total as f64 / f64::from(1 << 20)
                ),
                chain: None,
                gbps,
            });
        }
    }
    Ok(out)
}

/// Asks the kernel for transparent huge pages on the page-aligned part of
/// `buffer` (a hint: ignored where transparent huge pages are off).
fn advise_huge_pages(buffer: &mut [u8]) {
    const PAGE: usize = 4096;
    let address = buffer.as_mut_ptr() as usize;
    let start = address.next_multiple_of(PAGE);
    let end = (address + buffer.len()) / PAGE * PAGE;
    if end > start {
        // SAFETY: [start, end) lies inside `buffer`, which we own; the
        // advice changes how the kernel backs the pages, not their contents.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

/// Decode throughput of zlib streams other implementations wrote: the
/// chunk files of the `v2_zlib` stores, so the zlib rows can be read
/// against what each store costs to decode (zlib-rs's level 1 and zlib's
/// level 1 compress this data very differently).
pub fn zlib_store_limits(
    stores: &[(String, PathBuf)],
    thread_counts: &[usize],
    reps: usize,
    chunk_bytes: usize,
) -> Result<Vec<Limit>, BoxError> {
    let codec = Codec::Zlib(1);
    let mut out = Vec::new();
    for (name, dir) in stores {
        let mut files = Vec::new();
        list_files(dir, &mut files)?;
        files.retain(|f| {
            f.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| !n.starts_with('.'))
        });
        if files.is_empty() {
            continue;
        }
        let encoded: Vec<Vec<u8>> = files.iter().map(std::fs::read).collect::<Result<_, _>>()?;
        let stored: usize = encoded.iter().map(Vec::len).sum();
        let total = chunk_bytes * encoded.len();
        let mut gbps = Vec::new();
        for &threads in thread_counts {
            let times: Vec<f64> = (0..reps)
                .map(|_| {
                    par_time(
                        threads,
                        encoded.len(),
                        || Ctx::new(codec, chunk_bytes + 4096).expect("codec context"),
                        |ctx, i| {
                            assert_eq!(ctx.decode(codec, &encoded[i], 1), chunk_bytes);
                        },
                    )
                })
                .collect();
            gbps.push(total as f64 / best(&times) / 1e9);
        }
        out.push(Limit {
            name: format!(
                "zlib decode (libdeflate) of the {name}-written v2 zlib chunks (ratio {:.0}:1)",
                total as f64 / stored as f64
            ),
            chain: None,
            gbps,
        });
    }
    Ok(out)
}

fn list_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            list_files(&entry.path(), out)?;
        } else {
            out.push(entry.path());
        }
    }
    Ok(())
}
