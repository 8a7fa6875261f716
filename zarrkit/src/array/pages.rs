//! Result buffers backed by huge pages: the one place array reads need
//! `unsafe` besides [`disjoint`](super::disjoint).
//!
//! A whole read writes every byte of a buffer the allocator has just
//! mapped, and on Linux each 4 KiB page of it faults in on first touch: a
//! 32 MiB result took 8,192 page faults, which cost more than decoding
//! the chunks (the limits table of bench-compare measures a copy into
//! fresh memory at 2.5 GB/s on small pages and 9 GB/s on huge ones).
//! NumPy asks for transparent huge pages on every allocation of 4 MiB and
//! up; the vectors `Array::read_region` and `Array::read_selection` return
//! do the same, so a large read faults in 2 MiB at a time.

use super::Element;

/// Results from this size up are advised to use huge pages (NumPy's
/// threshold, `HUGEPAGE_THRESHOLD` in its allocator).
const HUGE_PAGE_THRESHOLD: usize = 4 << 20;

/// A vector of `n` zero elements for a read to fill: allocated zeroed (a
/// large one is fresh mapped pages, never written) and, from
/// [`HUGE_PAGE_THRESHOLD`] bytes up, advised to use huge pages before
/// anything touches it.
pub(super) fn result_vec<T: Element>(n: usize) -> Vec<T> {
    let mut out = vec![T::zero(); n];
    advise_huge_pages(&mut out);
    out
}

/// Advises the kernel to back the whole pages of `buf` with transparent
/// huge pages (`MADV_HUGEPAGE`) when it is large enough. Advice only: the
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
    let first = start.next_multiple_of(page);
    let end = (start + bytes) / page * page;
    if end <= first {
        return;
    }
    // SAFETY: `[first, end)` lies inside `buf`, memory this function
    // borrows mutably and the allocator gave the vector. `MADV_HUGEPAGE`
    // only marks the range as eligible for huge pages: it neither frees
    // nor changes any byte (unlike `MADV_DONTNEED`), so the vector's
    // contents, and every other allocation sharing those pages, stay as
    // they are. An error (EINVAL without THP support) is ignored: the
    // pages stay small.
    let _ = unsafe {
        rustix::mm::madvise(
            first as *mut std::ffi::c_void,
            end - first,
            rustix::mm::Advice::LinuxHugepage,
        )
    };
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages<T>(_buf: &mut [T]) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_vectors_are_zeroed_at_every_size() {
        for n in [0, 1, 4095, (4 << 20) / 2 + 3, (8 << 20) / 2] {
            let v: Vec<u16> = result_vec(n);
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|&x| x == 0));
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn large_results_are_advised_to_use_huge_pages() {
        // /proc/self/smaps lists the mapping holding the vector with the
        // `hg` (huge page advised) flag in its VmFlags.
        let v: Vec<u64> = result_vec(1 << 20); // 8 MiB
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
