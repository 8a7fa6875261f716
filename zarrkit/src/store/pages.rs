//! Buffers written whole, backed by huge pages: read results and
//! assembled shards. The store layer's one module with `unsafe` code, here
//! so that both the codecs and the arrays above it can use it.
//!
//! A whole read writes every byte of a buffer the allocator has just
//! mapped, and on Linux each 4 KiB page of it faults in on first touch: a
//! 32 MiB result took 8,192 page faults, which cost more than decoding
//! the chunks (the limits table of bench-compare measures a copy into
//! fresh memory at 2.5 GB/s on small pages and 9 GB/s on huge ones).
//! NumPy asks for transparent huge pages on every allocation of 4 MiB and
//! up; the vectors `Array::read_region` and `Array::read_selection` return
//! do the same, so a large read faults in 2 MiB at a time. The sharding
//! codec assembles a shard in such a buffer too.
//!
//! Huge pages are not always the faster ones: where the host of a virtual
//! machine has taken free memory back (free page reporting), or the
//! kernel has to compact memory to find a free 2 MiB block, each fresh
//! huge page stalls for milliseconds. A buffer of 64 MiB or more faults
//! in its first huge pages before it is returned, timing each, and leaves
//! the rest to small pages if they came slowly (`probe_huge_pages`).

/// Results from this size up are advised to use huge pages (NumPy's
/// threshold, `HUGEPAGE_THRESHOLD` in its allocator).
const HUGE_PAGE_THRESHOLD: usize = 4 << 20;

/// A vector of `n` zero elements for a read to fill: allocated zeroed (a
/// large one is fresh mapped pages, never written) and, from
/// [`HUGE_PAGE_THRESHOLD`] bytes up, advised to use huge pages before
/// anything touches it.
pub(crate) fn result_vec<T: Clone>(n: usize, zero: T) -> Vec<T> {
    advised_result_vec(n, zero).0
}

/// [`result_vec`], with what [`advise_huge_pages`] did.
fn advised_result_vec<T: Clone>(n: usize, zero: T) -> (Vec<T>, Advice) {
    let mut out = vec![zero; aligned_capacity::<T>(n)];
    out.truncate(n);
    let advice = advise_huge_pages(&mut out);
    (out, advice)
}

/// [`result_vec`] for bytes, failing rather than aborting: `None` when
/// the allocation fails. The buffer of [`Array::read_region_bytes`] and
/// of the other byte reads, which faulted in a 32 MiB result 4 KiB at a
/// time before, and of a shard the sharding codec assembles.
///
/// [`Array::read_region_bytes`]: crate::array::Array::read_region_bytes
pub(crate) fn try_result_bytes(n: usize) -> Option<Vec<u8>> {
    let mut out = bytemuck::allocation::try_zeroed_vec(aligned_capacity::<u8>(n)).ok()?;
    out.truncate(n);
    advise_huge_pages(&mut out);
    Some(out)
}

/// The huge page size of x86-64 and aarch64's 4 KiB-page kernels.
const HUGE_PAGE: usize = 2 << 20;

/// Bytes glibc's `malloc` adds to a request it serves with its own mapping
/// (two size words of the chunk header, rounded to 16): a request of
/// `k × 2 MiB − MALLOC_OVERHEAD` bytes maps exactly `k × 2 MiB`.
const MALLOC_OVERHEAD: usize = 24;

/// The capacity to allocate for a result of `n` elements: `n`, or, from
/// [`HUGE_PAGE_THRESHOLD`] up, the most elements whose allocation maps a
/// whole number of huge pages.
///
/// Linux (6.7 and later) places an anonymous mapping whose length is a
/// multiple of 2 MiB at a 2 MiB boundary, so every huge page of it can be
/// backed by one; a mapping of any other length starts anywhere, and its
/// first and last partial 2 MiB stay in 4 KiB pages: about 512 page faults
/// of a 32 MiB read, 15 % of a whole read of zstd chunks. The extra
/// capacity (under 2 MiB) is address space only: never touched, it maps
/// no memory. Another allocator or system only gets a little more
/// capacity than it needs.
fn aligned_capacity<T>(n: usize) -> usize {
    let size = std::mem::size_of::<T>();
    let Some(bytes) = n.checked_mul(size) else {
        return n;
    };
    if bytes < HUGE_PAGE_THRESHOLD || size == 0 {
        return n;
    }
    match bytes
        .checked_add(MALLOC_OVERHEAD)
        .and_then(|b| b.checked_next_multiple_of(HUGE_PAGE))
        .map(|mapped| mapped - MALLOC_OVERHEAD)
    {
        Some(aligned) if aligned % size == 0 => aligned / size,
        _ => n,
    }
}

/// What [`advise_huge_pages`] did with a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Advice {
    /// Too small (or another system): left to the allocator's pages.
    None,
    /// Advised to use huge pages throughout.
    Huge,
    /// Huge pages came slowly (see [`SLOW_HUGE_PAGE`]): the probed pages
    /// stay huge, the rest from byte `small_from` of the mapping on is
    /// advised to use small pages.
    SmallAfterProbe { small_from: usize },
}

/// A fresh huge page that takes longer than this to fault in is taken as
/// one the hypervisor has to back again (see [`probe_huge_pages`]).
/// Faulting in an ordinary huge page (zeroing 2 MiB) takes 0.15–0.35 ms
/// on the 2-core development machine, the same 2 MiB in small pages
/// 0.6–0.9 ms, and a huge page the host has to back again 2.9–6.6 ms.
const SLOW_HUGE_PAGE: std::time::Duration = std::time::Duration::from_millis(1);

/// How many huge pages [`probe_huge_pages`] faults in at most.
const PROBES: usize = 8;

/// Buffers of fewer whole huge pages than this are not probed: they keep
/// huge pages. The kernel keeps a few blocks the host has not taken back
/// (see [`probe_huge_pages`]), enough for a small buffer: the first read
/// of a 32 MiB array in a fresh process took the same time with huge
/// pages and with small ones on the development machine.
const PROBED_FROM: usize = 32;

/// How many slow pages among the probed ones leave the rest of a buffer
/// to small pages: two, so that one page delayed by something else (the
/// thread descheduled) does not.
const SLOW_PROBES: usize = 2;

/// Decides from the first huge pages of a buffer whether the rest should
/// be huge: `populate(i)` faults in the `i`-th and says how long that
/// took (`None` where the kernel cannot, which keeps huge pages). Huge
/// pages stay (`None`) unless [`SLOW_PROBES`] of the first [`PROBES`]
/// pages came slowly: then `Some` of how many pages were faulted in.
///
/// Why: in a virtual machine whose balloon device reports free memory to
/// the host (virtio-balloon's free page reporting; Hyper-V's balloon, as
/// under WSL2), the guest kernel hands free 2 MiB blocks back to the
/// host, which maps them again only when the guest touches them, 4 KiB
/// at a time. A huge page needs such a whole block, so in a process that
/// has not just freed memory nearly every huge page is one the host backs
/// again: on the development machine a fresh 800 MiB buffer faulted in
/// at 0.45 GB/s in huge pages against 2.4 GB/s in small ones (which the
/// kernel takes from smaller free blocks, not reported), and the first
/// read of a 768³ array in a process took 1.2–1.4 s instead of 0.5 s.
/// Memory freed moments before (a loop of reads, each result dropped
/// before the next) is not reported yet, and there huge pages fault in at
/// 6–9 GB/s. The kernel hands out the blocks it has not reported first,
/// so a few fast pages can come before the slow ones (three or four in
/// the reads above): the first page does not tell. A longer run of fast
/// pages (more than six) before the slow ones goes unnoticed, and the
/// buffer keeps huge pages, as before this probe. A kernel that compacts
/// memory to find a huge page (`defrag` set to `madvise`, on a fragmented
/// machine) stalls the same way, and gets the same answer.
fn probe_huge_pages(
    mut populate: impl FnMut(usize) -> Option<std::time::Duration>,
) -> Option<usize> {
    let mut slow = 0;
    for i in 0..PROBES {
        match populate(i) {
            None => return None,
            Some(took) if took > SLOW_HUGE_PAGE => {
                slow += 1;
                if slow == SLOW_PROBES {
                    return Some(i + 1);
                }
            }
            Some(_) => {}
        }
    }
    None
}

/// Advises the kernel to back the whole pages of `buf` with transparent
/// huge pages (`MADV_HUGEPAGE`, and `MADV_COLLAPSE` for the first 2 MiB)
/// when it is large enough, unless its first huge pages fault in slowly
/// ([`probe_huge_pages`]): then the rest is left to small pages. Advice
/// and faulting in only: the contents do not change, and a kernel that
/// refuses (transparent huge pages disabled, another system) leaves
/// small pages.
#[cfg(target_os = "linux")]
fn advise_huge_pages<T>(buf: &mut [T]) -> Advice {
    use rustix::mm::{Advice as Madvise, madvise};
    let bytes = std::mem::size_of_val(buf);
    if bytes < HUGE_PAGE_THRESHOLD {
        return Advice::None;
    }
    let page = rustix::param::page_size();
    let start = buf.as_mut_ptr() as usize;
    // From the page the buffer starts in, which its allocation's header
    // shares: a buffer mapped at a 2 MiB boundary (`aligned_capacity`)
    // starts just past it, and advice from the next page on would leave
    // its first 2 MiB in small pages.
    let first = start / page * page;
    let end = (start + bytes) / page * page;
    if end <= first {
        return Advice::None;
    }
    // SAFETY (this and every `madvise` below): the ranges lie in
    // `[first, end)`, which is `buf` (memory this function borrows
    // mutably, which the allocator gave the vector) and at most the rest
    // of the mapped page it starts in. `MADV_HUGEPAGE` and
    // `MADV_NOHUGEPAGE` only mark a range as eligible or not for huge
    // pages, and `MADV_POPULATE_WRITE` faults pages in as a write would,
    // without writing: none frees or changes any byte (unlike
    // `MADV_DONTNEED`), so the vector's contents, and every other
    // allocation sharing those pages, stay as they are. An error (EINVAL
    // without THP support, or on a kernel without the advice) is
    // ignored: the pages stay as they were.
    let _ = unsafe {
        madvise(
            first as *mut std::ffi::c_void,
            end - first,
            Madvise::LinuxHugepage,
        )
    };
    // The whole huge pages of the buffer, from its first 2 MiB boundary.
    let aligned = first.next_multiple_of(HUGE_PAGE);
    let whole = end.saturating_sub(aligned) / HUGE_PAGE;
    let timed = |what: &dyn Fn() -> bool| {
        let began = std::time::Instant::now();
        what().then(|| began.elapsed())
    };
    // An allocation mapped at a 2 MiB boundary has its header in the
    // first page, which the allocator wrote before the advice: that page
    // is mapped small, so the first 2 MiB would fault in 4 KiB at a time
    // (511 faults of a 32 MiB read's 527). `MADV_COLLAPSE` (Linux 6.1)
    // replaces it with one huge page now, which is also the first probe.
    let collapsed = (aligned == first && whole > 0)
        .then(|| {
            // SAFETY: as above; `MADV_COLLAPSE` copies the pages' contents
            // into a huge page: no byte changes.
            timed(&|| unsafe {
                libc::madvise(first as *mut libc::c_void, HUGE_PAGE, libc::MADV_COLLAPSE) == 0
            })
        })
        .flatten();
    if whole < PROBED_FROM {
        return Advice::Huge;
    }
    let probed = probe_huge_pages(|i| {
        if i == 0 && aligned == first {
            return collapsed;
        }
        let at = aligned + i * HUGE_PAGE;
        // SAFETY: as above.
        timed(&|| unsafe {
            madvise(
                at as *mut std::ffi::c_void,
                HUGE_PAGE,
                Madvise::LinuxPopulateWrite,
            )
            .is_ok()
        })
    });
    let Some(probed) = probed else {
        return Advice::Huge;
    };
    // The probed pages are huge already; the rest is left small.
    let small_from = aligned + probed * HUGE_PAGE;
    if small_from < end {
        // SAFETY: as above.
        let _ = unsafe {
            madvise(
                small_from as *mut std::ffi::c_void,
                end - small_from,
                Madvise::LinuxNoHugepage,
            )
        };
    }
    Advice::SmallAfterProbe {
        small_from: small_from - first,
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages<T>(_buf: &mut [T]) -> Advice {
    Advice::None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_vectors_are_zeroed_at_every_size() {
        for n in [0, 1, 4095, (4 << 20) / 2 + 3, (8 << 20) / 2] {
            let v: Vec<u16> = result_vec(n, 0);
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|&x| x == 0));
        }
    }

    #[test]
    fn byte_results_are_zeroed_and_large_ones_map_whole_huge_pages() {
        for n in [0, 1, 4095, (4 << 20) + 3] {
            let v = try_result_bytes(n).expect("a small allocation");
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|&x| x == 0));
        }
        let large = try_result_bytes(32 << 20).expect("32 MiB");
        assert_eq!(large.capacity(), (34 << 20) - MALLOC_OVERHEAD);
        assert_eq!(try_result_bytes(100).map(|v| v.capacity()), Some(100));
    }

    #[test]
    fn large_results_allocate_whole_huge_pages() {
        // 32 MiB of u16: the request plus glibc's header maps 34 MiB.
        let n = 16 << 20;
        let cap = aligned_capacity::<u16>(n);
        assert_eq!((cap * 2 + MALLOC_OVERHEAD) % HUGE_PAGE, 0);
        assert!(cap >= n && cap * 2 < n * 2 + HUGE_PAGE, "{cap}");
        // Element sizes that cannot end exactly there, and small results,
        // keep their size.
        assert_eq!(aligned_capacity::<[u8; 3]>(3 << 20), 3 << 20);
        assert_eq!(aligned_capacity::<u64>(1000), 1000);
        assert_eq!(aligned_capacity::<u64>(usize::MAX / 4), usize::MAX / 4);
        let v: Vec<u16> = result_vec(n + 5, 0);
        assert_eq!(
            (v.len(), v.capacity()),
            (n + 5, aligned_capacity::<u16>(n + 5))
        );
        assert!(v.iter().all(|&x| x == 0));
    }

    #[test]
    fn huge_pages_stay_unless_two_probed_pages_came_slowly() {
        use std::time::Duration;
        let (fast, slow) = (Duration::from_micros(200), Duration::from_millis(4));
        let probe = |times: &[Option<Duration>]| {
            let mut asked = Vec::new();
            let probed = probe_huge_pages(|i| {
                asked.push(i);
                times.get(i).copied().flatten()
            });
            (probed, asked)
        };
        // A host that backs every page again: small pages after two.
        assert_eq!(probe(&[Some(slow); 8]), (Some(2), vec![0, 1]));
        // A few fast pages first (blocks not yet handed back), then slow.
        let mut mixed = [Some(slow); 8];
        mixed[..4].fill(Some(fast));
        assert_eq!(probe(&mixed), (Some(6), (0..6).collect()));
        mixed[..6].fill(Some(fast));
        assert_eq!(probe(&mixed), (Some(8), (0..8).collect()));
        // Freed moments ago: huge pages, after every probe.
        assert_eq!(probe(&[Some(fast); 8]), (None, (0..8).collect()));
        // One slow page alone is not enough.
        let mut one_slow = [Some(fast); 8];
        one_slow[3] = Some(slow);
        assert_eq!(probe(&one_slow), (None, (0..8).collect()));
        // A kernel that cannot fault in ahead keeps them.
        assert_eq!(probe(&[None]), (None, vec![0]));
        assert_eq!(probe(&[Some(slow), None]), (None, vec![0, 1]));
        // Exactly the threshold is not slow.
        assert_eq!(probe(&[Some(SLOW_HUGE_PAGE); 8]), (None, (0..8).collect()));
    }

    /// The `VmFlags` of the mapping holding `addr`, from /proc/self/smaps.
    #[cfg(target_os = "linux")]
    fn vm_flags(addr: usize) -> String {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut in_mapping = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ')
                && let Some((lo, hi)) = range.split_once('-')
                && let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
            {
                in_mapping = (lo..hi).contains(&addr);
            } else if in_mapping && let Some(rest) = line.strip_prefix("VmFlags:") {
                return rest.to_string();
            }
        }
        panic!("no mapping holds {addr:#x} in /proc/self/smaps");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn large_results_are_advised_to_use_huge_pages() {
        // /proc/self/smaps lists the mapping holding the vector with the
        // `hg` (huge page advised) flag in its VmFlags; where the probe
        // found huge pages slow, the part after the probed pages has `nh`.
        let has = |addr: usize, flag: &str| vm_flags(addr).split_whitespace().any(|f| f == flag);
        // 80 MiB: enough huge pages to be probed.
        let (v, advice) = advised_result_vec::<u64>(10 << 20, 0);
        let start = v.as_ptr() as usize;
        let page = rustix::param::page_size();
        let middle = start + v.len() * 4;
        match advice {
            Advice::Huge => assert!(has(middle, "hg"), "{}", vm_flags(middle)),
            Advice::SmallAfterProbe { small_from } => {
                let mapping = start / page * page;
                assert!(has(mapping, "hg"), "{}", vm_flags(mapping));
                assert!(small_from <= (PROBES + 1) * HUGE_PAGE, "{small_from}");
                assert!(
                    has(mapping + small_from, "nh"),
                    "{}",
                    vm_flags(mapping + small_from)
                );
            }
            Advice::None => panic!("an 80 MiB result is advised"),
        }
        assert!(v.iter().all(|&x| x == 0));
        // Small results get no advice.
        assert_eq!(advised_result_vec::<u8>(1 << 20, 0).1, Advice::None);
    }
}
