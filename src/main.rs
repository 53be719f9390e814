fn main() {
    std::process::exit(winlint::cli::main());
}
