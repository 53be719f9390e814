//! SHA-256 written as lower-case hex: the one helper for the config's identity in the log
//! (`server/config_reload.rs`), the CI formats' fingerprints (`report/ci.rs`) and the
//! registry's content digests (`registry/client.rs`).

/// The SHA-256 of `parts`, one after the other, as 64 lower-case hex digits.
pub fn sha256_hex(parts: &[&[u8]]) -> String {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    for p in parts {
        ctx.update(p);
    }
    let mut s = String::with_capacity(64);
    for b in ctx.finish().as_ref() {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn what_sha256sum_prints() {
        // printf abc | sha256sum
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(super::sha256_hex(&[b"abc"]), abc);
        assert_eq!(super::sha256_hex(&[b"a", b"", b"bc"]), abc);
    }
}
