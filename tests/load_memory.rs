//! The loader's memory is bounded by its input (issue 30, src/source/budget.rs): a text denser
//! than one value per `source::MIN_BYTES_PER_NODE` bytes is refused before its values are
//! built, at a peak of live heap within 20 times its size, whatever its size; a real manifest
//! loads. Peak live bytes are counted by this file's allocator (one test, so nothing else
//! allocates meanwhile), not timed.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use winlint::source;

struct Peak;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grow(n: usize) {
    let live = LIVE.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for Peak {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grow(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        grow(new_size);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Peak = Peak;

/// Peak live heap bytes while `f` runs, above what was live before it.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed) - base)
}

/// The issue's inputs at `bytes`: a JSON pod with one `[0,0,…]` field, a YAML pod with `[],…`.
fn dense(bytes: usize) -> [(&'static str, Vec<u8>); 2] {
    let head = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"dense"},"spec":{"containers":[{"name":"c","image":"mcr.microsoft.com/windows/servercore:ltsc2022","args":["#;
    let mut json = head.as_bytes().to_vec();
    json.extend("0,".repeat(bytes / 2).bytes());
    json.extend(b"0]}]}}\n");
    let head = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: dense\nspec:\n  containers:\n  - name: c\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n    args: [";
    let mut yaml = head.as_bytes().to_vec();
    yaml.extend("[],".repeat(bytes / 3).bytes());
    yaml.extend(b"[]]\n");
    [("json [0,0,…]", json), ("yaml [],[],…", yaml)]
}

#[test]
fn dense_texts_are_refused_within_20_times_their_size_and_real_ones_load() {
    for size in [256 << 10, 2 << 20] {
        for (what, text) in dense(size) {
            for with_map in [true, false] {
                let (res, peak) = peak_of(|| match with_map {
                    true => source::load_bytes(&text).map(drop),
                    false => source::load_bytes_values(&text).map(drop),
                });
                let e = res.expect_err(what);
                assert!(e.message.starts_with("too dense to load"), "{what}: {e}");
                assert!(e.line >= 1 && e.column > 1, "{what}: {e}");
                assert!(
                    peak <= 20 * text.len(),
                    "{what} ({} bytes, source map {with_map}): {peak} bytes live at the peak",
                    text.len()
                );
            }
        }
    }
    // A real manifest, many times over (one document each): within the budget, and loaded.
    let one = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/examples/iis-deployment.yaml"
    ))
    .unwrap();
    let text = format!("---\n{one}\n").repeat((1 << 20) / one.len());
    let (docs, _) = peak_of(|| source::load_bytes(text.as_bytes()));
    assert!(docs.unwrap().len() > 10);
    // The same as one JSON document per line (`kubectl get -o json | jq -c`): loaded too.
    let docs = source::load_bytes(one.as_bytes()).unwrap();
    let json = serde_json::to_string(&docs[0].value).unwrap();
    let text = format!("{json}\n---\n").repeat(2_000);
    let (docs, peak) = peak_of(|| source::load_bytes(text.as_bytes()));
    assert!(docs.unwrap().len() >= 2_000);
    eprintln!(
        "one-line JSON documents: {peak} bytes live at the peak for {} bytes",
        text.len()
    );
}
