//! Each rule's documentation page, `docs/rules/WINxxx.md`, is generated from its metadata
//! (`RuleMeta::page`, what `winlint explain` prints) and linked from the webhook's denials
//! (`RuleMeta::docs_url`). This test keeps the pages in step with the rules:
//! `WINLINT_BLESS=1 cargo test --test rule_docs` writes them; review the diff.

use std::collections::BTreeSet;
use std::path::Path;

#[test]
fn rule_pages_are_generated_from_the_metadata() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules");
    let bless = std::env::var_os("WINLINT_BLESS").is_some();
    if bless {
        std::fs::create_dir_all(&dir).unwrap();
    }
    let mut stale = Vec::new();
    let mut expected = BTreeSet::new();
    for rule in winlint::rules::all() {
        let name = format!("{}.md", rule.meta.id);
        let path = dir.join(&name);
        let page = rule.meta.page();
        assert!(
            rule.meta
                .docs_url()
                .ends_with(&format!("/docs/rules/{name}")),
            "{}",
            rule.meta.docs_url()
        );
        expected.insert(name);
        if bless {
            std::fs::write(&path, &page).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(page.as_str()) {
            stale.push(path.display().to_string());
        }
    }
    // A page whose rule is gone (IDs are never reused, but a rule can be retired).
    let present: BTreeSet<String> = std::fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.ends_with(".md"))
                .collect()
        })
        .unwrap_or_default();
    let orphans: Vec<&String> = present.difference(&expected).collect();
    assert!(
        stale.is_empty() && orphans.is_empty(),
        "stale or missing pages {stale:?}, pages of no rule {orphans:?}: run WINLINT_BLESS=1 cargo test --test rule_docs"
    );
}
