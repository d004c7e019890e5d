//! The binary's global allocator: mimalloc, told never to hand freed memory back.
//!
//! Why: a training step allocates and frees megabyte-sized tensor buffers by the
//! thousand. glibc's malloc returned them to the kernel and page-faulted them in again on
//! the next step: `perf record` of a bert-s step on the CPU backend showed half the time
//! in the kernel (`clear_page_erms`, page faults, unmapping; `/usr/bin/time`: 16 s system
//! time for 16 s user time, 8 million minor faults). mimalloc with purging disabled keeps
//! the step's working set mapped (1,100 minor faults, see docs/benchmarks.md).

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc's `mi_option_t` (include/mimalloc.h of the v3
/// sources bundled by libmimalloc-sys 0.1.49; the crate names no constant for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Disables purging (`purge_delay = -1`): freed pages stay committed for reuse. Call
/// first thing in `main`. The process then holds on to its peak memory until it exits,
/// which is what a training run wants.
pub fn keep_freed_memory() {
    // SAFETY: setting an option is a plain store into mimalloc's option table; any
    // value is valid for `purge_delay` (-1 = never purge).
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
}
