//! The module graph is layered and has no cycle (issue 11). Each module may use only modules of
//! its own layer or of the layers below it:
//!
//! | layer | modules |
//! |---|---|
//! | front ends | `cli`, `report`, `admission`, `server`, `manifests` (and any module not listed) |
//! | engine | `engine` (lint, the fixer, the webhook's mutation) |
//! | config | `config` (target + policy; resolves rule keys through the registry) |
//! | rules | `rules` (the registry and the rule modules) |
//! | model | `model::*`, `source`, `textedit` |
//!
//! The graph is read from the source: every `crate::a::b` and `super::b` path in code (comments
//! and `#[cfg(test)]` items, wherever they are in a file, are left out: tests may use anything). A
//! node is a top-level module, except that `model`'s submodules are nodes of their own (the
//! vocabulary must not be a tangle either). `cargo test --test architecture` prints the graph.
//!
//! Within the front ends, the linter (`cli`, `render`, `report`) and the webhook (`admission`,
//! `server`, `manifests`) do not use each other, and the cluster client (`cluster`), which both
//! use, uses neither (`FRONT_ENDS`, `FRONT_END_LINKS`: the subcommand dispatch, `cli.rs` and
//! `cli/args.rs`, is the one named exception). A module split into a folder (`cli/`, `source/`,
//! `textedit/`) is one node: every file of the folder is read, each `super::` resolved from it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// (layer name, rank, top-level modules). A module not listed is a front end.
const LAYERS: &[(&str, u8, &[&str])] = &[
    ("model", 0, &["model", "source", "textedit", "windows"]),
    ("rules", 1, &["rules"]),
    ("config", 2, &["config"]),
    ("engine", 3, &["engine"]),
    (
        "front ends",
        4,
        &["cli", "report", "admission", "server", "manifests"],
    ),
];

fn rank(node: &str) -> (u8, &'static str) {
    let top = node.split("::").next().unwrap_or(node);
    LAYERS
        .iter()
        .find(|(_, _, mods)| mods.contains(&top))
        .map(|(name, r, _)| (*r, *name))
        .unwrap_or((4, "front ends"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("src/") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file: `model/eval.rs` → `["model", "eval"]`, `engine/mod.rs` →
/// `["engine"]`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    if parts
        .last()
        .is_some_and(|l| l == "mod" || l == "lib" || l == "main")
    {
        parts.pop();
    }
    parts
}

/// The graph node of a module path.
fn node(path: &[String], model_modules: &BTreeSet<String>) -> Option<String> {
    let top = path.first()?;
    if top == "model"
        && let Some(sub) = path.get(1).filter(|s| model_modules.contains(*s))
    {
        return Some(format!("model::{sub}"));
    }
    Some(top.clone())
}

/// The code of a file: without comments and without its `#[cfg(test)]` items (wherever they
/// are: a test module in the middle of a file does not hide the code after it).
fn code(text: &str) -> String {
    let mut kept = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("#[cfg(test)]") {
        kept.push_str(&rest[..i]);
        rest = &rest[i + "#[cfg(test)]".len()..];
        rest = &rest[item_end(rest)..];
    }
    kept.push_str(rest);
    kept.lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where the item that starts `text` ends: after its first `;` outside braces, or after the `}`
/// that closes its first `{`. Braces inside string and character literals and comments do not
/// count (a test module is full of `json!({…})` and `"{x}"`).
fn item_end(text: &str) -> usize {
    let b = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i += text[i..].find('\n').unwrap_or(text.len() - i);
                continue;
            }
            b'r' if matches!(b.get(i + 1), Some(b'"' | b'#'))
                && !(i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) == Some(&b'"') {
                    let close = format!("\"{}", "#".repeat(hashes));
                    let start = i + 2 + hashes;
                    i = start
                        + text[start..].find(&close).unwrap_or(text.len() - start)
                        + close.len();
                    continue;
                }
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'\'' if b.get(i + 2) == Some(&b'\'') || b.get(i + 1) == Some(&b'\\') => {
                i += if b[i + 1] == b'\\' { 4 } else { 3 };
                continue;
            }
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            b';' if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    text.len()
}

/// Identifier segments after `prefix` in `text`: for `crate::model::eval::Eval`, `["model",
/// "eval", "Eval"]`; a `{` group yields its first segments (`crate::model::{a, b}`: `model`).
fn paths_after<'t>(text: &'t str, prefix: &str) -> Vec<Vec<&'t str>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().last();
        rest = &rest[i + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let segs: Vec<&str> = rest
            .split("::")
            .map_while(|s| {
                let id: &str = &s[..s
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(s.len())];
                (!id.is_empty() && id.len() == s.len().min(id.len())).then_some(id)
            })
            .collect();
        // Keep segments while each was followed by `::`.
        let mut kept = Vec::new();
        let mut cur = rest;
        for s in segs {
            kept.push(s);
            cur = &cur[s.len()..];
            if let Some(r) = cur.strip_prefix("::") {
                cur = r;
            } else {
                break;
            }
        }
        if !kept.is_empty() {
            out.push(kept);
        }
    }
    out
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let model_modules: BTreeSet<String> = files
        .iter()
        .filter_map(|f| {
            let m = module_path(f.strip_prefix(&src).ok()?);
            (m.len() == 2 && m[0] == "model").then(|| m[1].clone())
        })
        .collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (me, path) in uses(&src, &files) {
        let Some(from) = node(&me, &model_modules) else {
            continue; // lib.rs, main.rs: the crate root
        };
        let targets = g.entry(from.clone()).or_default();
        if let Some(n) = node(&path, &model_modules).filter(|n| *n != from) {
            targets.insert(n);
        }
    }
    g
}

/// Every use of a crate path in code: (the module path of the file, the crate path it names). A
/// `super::x` from a submodule file names its parent's `x` (only that first segment is kept).
fn uses(src: &Path, files: &[PathBuf]) -> Vec<(Vec<String>, Vec<String>)> {
    let mut out = Vec::new();
    for f in files {
        let me = module_path(f.strip_prefix(src).expect("under src"));
        let text = code(&std::fs::read_to_string(f).expect("read"));
        for segs in paths_after(&text, "crate::") {
            out.push((me.clone(), segs.iter().map(|s| s.to_string()).collect()));
        }
        let parent: Vec<String> = me[..me.len().saturating_sub(1)].to_vec();
        for segs in paths_after(&text, "super::") {
            let mut path = parent.clone();
            path.push(segs[0].to_string());
            out.push((me.clone(), path));
        }
        // A file that names nothing is still a node of the graph.
        out.push((me.clone(), me.clone()));
    }
    out
}

/// The front ends, by the program they belong to. The linter and the webhook do not use each
/// other, and the cluster client (which both use) uses neither: a change to one front end cannot
/// break another through the back door.
const FRONT_ENDS: &[(&str, &[&str])] = &[
    ("linter", &["cli", "render", "report", "plan", "lsp"]),
    ("webhook", &["admission", "server", "manifests"]),
    ("cluster client", &["cluster"]),
];

/// The uses across front ends that are allowed: who may use whom, and through which paths
/// only. `cli.rs` and `cli/args.rs` hold the subcommand dispatch of the one binary: they name
/// the webhook's subcommands (their arguments and entry points) and nothing else of them.
const FRONT_END_LINKS: &[(&str, &str, &[&str])] = &[
    ("linter", "cluster client", &[]),
    ("webhook", "cluster client", &[]),
    (
        "linter",
        "webhook",
        &[
            "server::ServeArgs",
            "server::serve",
            "manifests::ManifestsArgs",
            "manifests::manifests",
        ],
    ),
];

fn front_end(module: &str) -> Option<&'static str> {
    FRONT_ENDS
        .iter()
        .find(|(_, mods)| mods.contains(&module))
        .map(|(name, _)| *name)
}

#[test]
fn front_ends_do_not_use_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut bad = BTreeSet::new();
    let mut seen = BTreeSet::new();
    for (me, path) in uses(&src, &files) {
        let (Some(from), Some(to)) = (
            me.first().and_then(|m| front_end(m)),
            path.first().and_then(|m| front_end(m)),
        ) else {
            continue;
        };
        if from == to {
            continue;
        }
        seen.insert(from);
        let named = path.join("::");
        let allowed = FRONT_END_LINKS.iter().any(|(a, b, only)| {
            *a == from && *b == to && (only.is_empty() || only.contains(&named.as_str()))
        });
        if !allowed {
            bad.insert(format!("{} ({from}) uses {named} ({to})", me.join("::")));
        }
    }
    assert!(
        bad.is_empty(),
        "front ends using each other:\n{}",
        bad.into_iter().collect::<Vec<_>>().join("\n")
    );
    // The reader found the links it allows (the check is not vacuous).
    assert!(
        seen.contains("linter") && seen.contains("webhook"),
        "{seen:?}"
    );
}

fn print(g: &BTreeMap<String, BTreeSet<String>>) {
    for (from, to) in g {
        let (_, layer) = rank(from);
        let to: Vec<&str> = to.iter().map(String::as_str).collect();
        println!("{from:<18} [{layer}] -> {}", to.join(", "));
    }
}

#[test]
fn layers_are_used_downward_only() {
    let g = graph();
    print(&g);
    let mut bad = Vec::new();
    for (from, tos) in &g {
        let (rf, lf) = rank(from);
        for to in tos {
            let (rt, lt) = rank(to);
            if rt > rf {
                bad.push(format!("{from} ({lf}) uses {to} ({lt}), a higher layer"));
            }
            if from.starts_with("model::") && to == "model" {
                bad.push(format!(
                    "{from} uses a re-export of model/mod.rs: name the module (`super::x::Y`)"
                ));
            }
        }
    }
    assert!(bad.is_empty(), "layering violations:\n{}", bad.join("\n"));
    // The vocabulary is really there (the parse found the layers it checks).
    for n in [
        "model::finding",
        "model::meta",
        "model::eval",
        "rules",
        "config",
        "engine",
    ] {
        assert!(g.contains_key(n), "no module {n} found: {:?}", g.keys());
    }
    assert!(g["rules"].iter().any(|t| t.starts_with("model")));
}

#[test]
fn module_graph_has_no_cycle() {
    let g = graph();
    // Depth-first search with colours; report the first cycle found.
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(n) {
            Some(2) => return None,
            Some(1) => {
                let i = stack.iter().position(|s| s == n).unwrap_or(0);
                let mut cycle = stack[i..].to_vec();
                cycle.push(n.to_string());
                return Some(cycle);
            }
            _ => {}
        }
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, g, state, stack) {
                return Some(c);
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if let Some(cycle) = visit(n, &g, &mut state, &mut Vec::new()) {
            print(&g);
            panic!("module cycle: {}", cycle.join(" -> "));
        }
    }
}

/// The parser of this test finds what it must: a path in code counts, one in a comment or in
/// the test part of a file does not.
#[test]
fn the_graph_reader_reads_paths() {
    let text = "use crate::model::{Eval, Finding};\nlet x = crate::engine::lint(a); // crate::cli::x\n\
                use super::pod::Effective;\n#[cfg(test)]\nmod tests { fn t() { let s = \"}\"; crate::cli::run(); } }\n\
                fn f() -> crate::rules::Rule {}\n#[cfg(test)]\nuse crate::server::X;";
    let c = code(text);
    let got: Vec<Vec<&str>> = paths_after(&c, "crate::");
    assert_eq!(
        got,
        vec![vec!["model"], vec!["engine", "lint"], vec!["rules", "Rule"]]
    );
    assert_eq!(paths_after(&c, "super::"), vec![vec!["pod", "Effective"]]);
}

/// The modules split into folders are read file by file: the edges of `cli` come from its
/// submodules (`cli.rs` is only the dispatch), `source` and `textedit` are read in their
/// folders, and the writer `manifests` uses is `source`'s.
#[test]
fn split_modules_are_read_in_their_folders() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> = files
        .iter()
        .map(|f| module_path(f.strip_prefix(&src).expect("under src")).join("::"))
        .collect();
    for m in [
        "cli::args",
        "cli::lint",
        "cli::fix",
        "source::loader",
        "source::emit",
        "textedit::layout",
        "textedit::steps",
    ] {
        assert!(modules.contains(m), "no file for {m}: {modules:?}");
    }
    let g = graph();
    for (from, to) in [
        ("cli", "engine"),
        ("cli", "textedit"),
        ("manifests", "source"),
    ] {
        assert!(
            g.get(from).is_some_and(|t| t.contains(to)),
            "{from} -> {to} not found: {:?}",
            g.get(from)
        );
    }
}

/// The test binaries on libtest-mimic (`harness = false` under `[[test]]` in Cargo.toml, issue
/// 29): a `#[test]` there would compile to nothing, so a test added that way would silently
/// never run; and a test that needs an outside tool (the skip helpers of tests/skip_support)
/// must live in such a binary, or a missing tool is reported as `ok`.
#[test]
fn tests_that_can_skip_are_reported_as_ignored() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let toml = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let mut mimic = BTreeSet::new();
    for section in toml.split("\n[").filter(|s| s.starts_with("[test]]")) {
        let name = section
            .lines()
            .find_map(|l| l.strip_prefix("name = \""))
            .and_then(|l| l.strip_suffix('"'))
            .expect("a [[test]] with a name");
        if section.lines().any(|l| l.trim() == "harness = false") {
            mimic.insert(name.to_string());
        }
    }
    let mut wrong = Vec::new();
    for entry in std::fs::read_dir(root.join("tests")).unwrap() {
        let path = entry.unwrap().path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".rs"))
        else {
            continue;
        };
        if name == "architecture" {
            continue; // names the helpers above
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let attr = text
            .lines()
            .any(|l| l.trim_start().starts_with("#[test]") || l.contains("#[tokio::test"));
        let skips = [
            "cluster()",
            "ci_tool(",
            "registry_support::tools()",
            "skip_support::skip",
        ]
        .iter()
        .any(|s| text.contains(s));
        if mimic.contains(name) {
            if attr {
                wrong.push(format!(
                    "tests/{name}.rs runs on libtest-mimic: list the test in its `main` instead of #[test]"
                ));
            }
            if !text.contains("run(vec![") {
                wrong.push(format!("tests/{name}.rs has no skip_support::run main"));
            }
        } else if skips {
            wrong.push(format!(
                "tests/{name}.rs calls a skip helper under libtest, which reports a skipped test as \
                 `ok`: give it `harness = false` in Cargo.toml and a skip_support::run main"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
