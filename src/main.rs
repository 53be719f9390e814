// mimalloc: the engine allocates many small objects (serde_json values, strings, findings);
// measured with scripts/instructions.sh and scripts/cli-throughput.sh against glibc malloc:
// -33 % instructions per admission request, -16 % CLI wall-clock (BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(winlint::cli::main());
}

/// On Linux mimalloc commits its arena up front (`arena_eager_commit`, on where the kernel
/// overcommits), and a purge of freed pages then only marks them reclaimable: the kernel takes
/// them back under memory pressure, so they stay resident on an idle machine. Every thread
/// frees pages of its own, so the CLI's peak RSS grew with its threads (35 MB with 2 threads,
/// 24 MB with one, on the 10 000-object corpus) though mimalloc never had more than 23 MiB
/// committed. Committed on demand, a purge gives the pages back: 17–18 MB, at the same CPU
/// (user + system time; BENCHMARKS.md §11). The option is read when the arena is reserved, at
/// the first allocation, which Rust's runtime makes before `main`: so it is set from
/// `.init_array`, which the loader runs before that.
#[cfg(target_os = "linux")]
mod allocator_options {
    unsafe extern "C" {
        /// mimalloc's `mi_option_set_default` (its include/mimalloc.h), in the library the
        /// mimalloc crate links; that crate declares it only with its `extended` feature, which
        /// adds a crate to the build for this one call. A default: `MIMALLOC_ARENA_EAGER_COMMIT`
        /// in the environment still wins.
        fn mi_option_set_default(option: std::ffi::c_int, value: std::ffi::c_long);
    }

    /// `mi_option_arena_eager_commit` in mimalloc's `mi_option_e` (4 in its v2 and v3).
    const MI_OPTION_ARENA_EAGER_COMMIT: std::ffi::c_int = 4;

    extern "C" fn commit_on_demand() {
        // SAFETY: a setter of an integer option; nothing else runs yet.
        unsafe { mi_option_set_default(MI_OPTION_ARENA_EAGER_COMMIT, 0) };
    }

    #[used]
    #[unsafe(link_section = ".init_array")]
    static COMMIT_ON_DEMAND: extern "C" fn() = commit_on_demand;
}
