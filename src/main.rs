// mimalloc: the engine allocates many small objects (serde_json values, strings, findings);
// measured with scripts/instructions.sh and scripts/cli-throughput.sh against glibc malloc:
// -33 % instructions per admission request, -16 % CLI wall-clock (BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(winlint::cli::main());
}
