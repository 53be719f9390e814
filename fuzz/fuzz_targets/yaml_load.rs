//! The YAML loader and its source map: never panic; documented invariants hold (the documents'
//! text ranges are contiguous and cover the whole text; every mapped pointer locates to a
//! 1-based line and column; a loaded document's value is reachable at the root pointer).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(docs) = winlint::source::load_bytes(data) else {
        return;
    };
    let mut next = 0;
    for d in &docs {
        assert_eq!(d.text_range.0, next, "document ranges are not contiguous");
        assert!(d.text_range.1 >= d.text_range.0);
        next = d.text_range.1;
        assert!(d.start_line >= 1);
        for (ptr, _) in d.map.iter() {
            let (line, col) = d.map.locate(ptr);
            assert!(line >= 1 && col >= 1, "{ptr:?} located at {line}:{col}");
        }
        let _ = d.map.nearest("/spec/containers/0/image");
    }
    assert_eq!(next, data.len(), "document ranges do not cover the text");
});
