//! The `winlint` command line. (Owned by the lead; `serve` and `manifests` arguments live in
//! their own modules.)

pub fn main() -> i32 {
    0
}
