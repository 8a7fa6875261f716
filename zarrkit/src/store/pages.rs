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

/// Results from this size up are advised to use huge pages (NumPy's
/// threshold, `HUGEPAGE_THRESHOLD` in its allocator).
const HUGE_PAGE_THRESHOLD: usize = 4 << 20;

/// A vector of `n` zero elements for a read to fill: allocated zeroed (a
/// large one is fresh mapped pages, never written) and, from
/// [`HUGE_PAGE_THRESHOLD`] bytes up, advised to use huge pages before
/// anything touches it.
pub(crate) fn result_vec<T: Clone>(n: usize, zero: T) -> Vec<T> {
    let mut out = vec![zero; aligned_capacity::<T>(n)];
    out.truncate(n);
    advise_huge_pages(&mut out);
    out
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

/// Advises the kernel to back the whole pages of `buf` with transparent
/// huge pages (`MADV_HUGEPAGE`, and `MADV_COLLAPSE` for the first 2 MiB)
/// when it is large enough. Advice only: the
/// contents do not change, and a kernel that refuses (transparent huge
/// pages disabled, another system) leaves small pages.
#[cfg(target_os = "linux")]
fn advise_huge_pages<T>(buf: &mut [T]) {
    let bytes = std::mem::size_of_val(buf);
    if bytes < HUGE_PAGE_THRESHOLD {
        return;
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
        return;
    }
    // SAFETY: `[first, end)` is `buf` (memory this function borrows
    // mutably, which the allocator gave the vector) and at most the rest
    // of the mapped page it starts in. `MADV_HUGEPAGE` only marks the
    // range as eligible for huge pages: it neither frees nor changes any
    // byte (unlike `MADV_DONTNEED`), so the vector's contents, and every
    // other allocation sharing those pages, stay as they are. An error
    // (EINVAL without THP support) is ignored: the pages stay small.
    let _ = unsafe {
        rustix::mm::madvise(
            first as *mut std::ffi::c_void,
            end - first,
            rustix::mm::Advice::LinuxHugepage,
        )
    };
    // An allocation mapped at a 2 MiB boundary has its header in the
    // first page, which the allocator wrote before the advice: that page
    // is mapped small, so the first 2 MiB would fault in 4 KiB at a time
    // (511 faults of a 32 MiB read's 527). `MADV_COLLAPSE` (Linux 6.1)
    // replaces it with one huge page now. Only where that first 2 MiB is
    // the buffer's own (it starts in the first page of one).
    if first.is_multiple_of(HUGE_PAGE) && first + HUGE_PAGE <= end {
        // SAFETY: `[first, first + 2 MiB)` lies inside the range advised
        // above. `MADV_COLLAPSE` copies the pages' contents into a huge
        // page: no byte changes. An error (older kernel, no huge page
        // free) is ignored: the pages stay small.
        let _ =
            unsafe { libc::madvise(first as *mut libc::c_void, HUGE_PAGE, libc::MADV_COLLAPSE) };
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages<T>(_buf: &mut [T]) {}

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

    #[cfg(target_os = "linux")]
    #[test]
    fn large_results_are_advised_to_use_huge_pages() {
        // /proc/self/smaps lists the mapping holding the vector with the
        // `hg` (huge page advised) flag in its VmFlags.
        let v: Vec<u64> = result_vec(1 << 20, 0); // 8 MiB
        let addr = v.as_ptr() as usize + v.len() * 4;
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut in_mapping = false;
        let mut flags = None;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ')
                && let Some((lo, hi)) = range.split_once('-')
                && let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
            {
                in_mapping = (lo..hi).contains(&addr);
            } else if in_mapping && let Some(rest) = line.strip_prefix("VmFlags:") {
                flags = Some(rest.to_string());
            }
        }
        let flags = flags.expect("the vector's mapping in /proc/self/smaps");
        assert!(
            flags.split_whitespace().any(|f| f == "hg"),
            "VmFlags: {flags}"
        );
        assert!(v.iter().all(|&x| x == 0));
    }
}
