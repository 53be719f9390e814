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
//! and the `#[cfg(test)]` part at the end of a file are left out: tests may use anything). A
//! node is a top-level module, except that `model`'s submodules are nodes of their own (the
//! vocabulary must not be a tangle either). `cargo test --test architecture` prints the graph.

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

/// The code of a file: without comments and without the `#[cfg(test)]` part at its end.
fn code(text: &str) -> String {
    let end = text.find("\n#[cfg(test)]").unwrap_or(text.len());
    text[..end]
        .lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
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
    for f in &files {
        let rel = f.strip_prefix(&src).expect("under src");
        let me = module_path(rel);
        let Some(from) = node(&me, &model_modules) else {
            continue; // lib.rs, main.rs: the crate root
        };
        let text = code(&std::fs::read_to_string(f).expect("read"));
        let mut targets = BTreeSet::new();
        for segs in paths_after(&text, "crate::") {
            let path: Vec<String> = segs.iter().map(|s| s.to_string()).collect();
            if let Some(n) = node(&path, &model_modules) {
                targets.insert(n);
            }
        }
        // `super::x` from a submodule file: its parent's `x` (or the parent itself).
        let parent: Vec<String> = me[..me.len().saturating_sub(1)].to_vec();
        for segs in paths_after(&text, "super::") {
            let mut path = parent.clone();
            path.push(segs[0].to_string());
            if let Some(n) = node(&path, &model_modules) {
                targets.insert(n);
            }
        }
        targets.remove(&from);
        g.entry(from).or_default().extend(targets);
    }
    g
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
                use super::pod::Effective;\nfn f() -> crate::rules::Rule {}\n#[cfg(test)]\nuse crate::server::X;";
    let c = code(text);
    let got: Vec<Vec<&str>> = paths_after(&c, "crate::");
    assert_eq!(
        got,
        vec![vec!["model"], vec!["engine", "lint"], vec!["rules", "Rule"]]
    );
    assert_eq!(paths_after(&c, "super::"), vec![vec!["pod", "Effective"]]);
}
