//! `winlint --fix` makes the webhook's fixes whatever YAML style the manifest is written in.
//!
//! A deterministic table: every rule's golden input (`testdata/rules/<ID>/<case>/input.yaml`,
//! with the case's target flags), the real-world corpus (`testdata/realworld/`) and the shapes
//! they lack (`testdata/fix-styles/`: empty collections, values that need quotes), each
//! document written again in several styles (block with indented or compact sequences, flow on
//! one line, the Kubernetes documentation's multi-line flow with quoted keys and trailing
//! commas, block outside and flow inside at two depths, JSON). For each file and style:
//!
//! 1. the styled text loads to the same documents (the writers are right);
//! 2. `cli::fix_text` succeeds and gives up no fix, its output loads;
//! 3. re-linting the output offers no fix the policy allows;
//! 4. each object equals what the webhook's JSON patch makes of it (`mutation::mutate_with`,
//!    its own steps M5/M6/linux guard off and its audit annotation left out), for the pods the
//!    webhook mutates; and every style gives the same objects.

use std::path::{Path, PathBuf};

use clap::Parser;
use serde_json::Value;

use winlint::cli::{TargetArgs, fix_text};
use winlint::config::{Config, HyperV, LinuxGuard, rule_id};
use winlint::engine::{fix::fix_allowed, lint_object, mutation};
use winlint::model::classify::{Os, Source, Strength};
use winlint::model::labels::MUTATED_ANNOTATION;
use winlint::model::workload::{is_patch, objects, pod_sites};
use winlint::model::{Context, Operation};
use winlint::source;

/// The golden cases' `args:` (target flags and `--fix-opt-in`).
#[derive(Parser)]
struct CaseArgs {
    #[command(flatten)]
    target: TargetArgs,
    #[arg(long = "fix-opt-in")]
    fix_opt_in: Vec<String>,
}

fn config(args: &[String]) -> Config {
    let a = CaseArgs::try_parse_from(
        std::iter::once("winlint".to_string()).chain(args.iter().cloned()),
    )
    .unwrap_or_else(|e| panic!("case args {args:?}: {e}"));
    let mut cfg = a.target.to_config().expect("case config");
    for r in &a.fix_opt_in {
        cfg.policy
            .fix_opt_in
            .insert(rule_id(r).expect("rule").to_string());
    }
    cfg
}

// ---------------------------------------------------------------------------------------------
// Writers
// ---------------------------------------------------------------------------------------------

/// A string that reads back as itself as a plain scalar in block and flow context (YAML 1.1
/// and 1.2), conservatively; every other string is double-quoted (JSON escapes are YAML's).
fn plain_ok(s: &str) -> bool {
    let special = [
        "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~",
    ];
    s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '_' | '-'))
        && !special.contains(&s.to_ascii_lowercase().as_str())
}

fn scalar(v: &Value, quote_all: bool) -> String {
    match v {
        Value::String(s) if quote_all || !plain_ok(s) => serde_json::to_string(s).unwrap(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn is_scalar_or_empty(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => true,
    }
}

/// `{a: b, c: [d]}`.
fn flow(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let e: Vec<String> = m
                .iter()
                .map(|(k, x)| format!("{}: {}", scalar(&Value::String(k.clone()), false), flow(x)))
                .collect();
            format!("{{{}}}", e.join(", "))
        }
        Value::Array(a) => {
            let e: Vec<String> = a.iter().map(flow).collect();
            format!("[{}]", e.join(", "))
        }
        s => scalar(s, false),
    }
}

/// The Kubernetes documentation's flow style: an entry a line, keys and strings
/// double-quoted, trailing commas, `[{` … `}]` for a sequence of mappings.
fn flow_docs(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent + 2);
    match v {
        Value::Object(m) if !m.is_empty() => {
            out.push_str("{\n");
            for (k, x) in m {
                out.push_str(&format!("{pad}{}: ", serde_json::to_string(k).unwrap()));
                flow_docs(x, indent + 2, out);
                out.push_str(",\n");
            }
            out.push_str(&format!("{}}}", " ".repeat(indent)));
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if x.is_object() && !is_scalar_or_empty(x) {
                    // `[{` … `}, {` … `}]`
                    if i > 0 {
                        out.push_str(", ");
                    }
                    flow_docs(x, indent, out);
                } else {
                    out.push_str(&format!("\n{pad}"));
                    flow_docs(x, indent + 2, out);
                    out.push(',');
                    if i + 1 == a.len() {
                        out.push_str(&format!("\n{}", " ".repeat(indent)));
                    }
                }
            }
            out.push(']');
        }
        s => out.push_str(&if is_scalar_or_empty(s) && !s.is_string() {
            flow(s)
        } else {
            scalar(s, true)
        }),
    }
}

/// Block style from `indent` on; containers at `depth >= flow_from` are written in flow style
/// on one line; sequences under a key indented by 2 (`indent_seq`) or not.
fn block(v: &Value, indent: usize, depth: usize, style: &Block, out: &mut Vec<String>) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let key = scalar(&Value::String(k.clone()), false);
                if is_scalar_or_empty(x) || depth + 1 >= style.flow_from {
                    out.push(format!("{pad}{key}: {}", flow(x)));
                } else if x.is_object() {
                    out.push(format!("{pad}{key}:"));
                    block(x, indent + 2, depth + 1, style, out);
                } else {
                    out.push(format!("{pad}{key}:"));
                    let d = if style.indent_seq { indent + 2 } else { indent };
                    block(x, d, depth + 1, style, out);
                }
            }
        }
        Value::Array(a) => {
            for x in a {
                if is_scalar_or_empty(x) || depth + 1 >= style.flow_from {
                    out.push(format!("{pad}- {}", flow(x)));
                } else if x.is_object() {
                    let mut sub = Vec::new();
                    block(x, indent + 2, depth + 1, style, &mut sub);
                    if let Some(first) = sub.first_mut() {
                        *first = format!("{pad}- {}", &first[indent + 2..]);
                    }
                    out.extend(sub);
                } else {
                    out.push(format!("{pad}-"));
                    block(x, indent + 2, depth + 1, style, out);
                }
            }
        }
        s => out.push(format!("{pad}{}", flow(s))),
    }
}

struct Block {
    indent_seq: bool,
    flow_from: usize,
}

const STYLES: &[&str] = &[
    "block",
    "block-compact-sequences",
    "flow-one-line",
    "flow-documentation",
    "mixed-depth-1",
    "mixed-depth-2",
    "json",
];

fn write(style: &str, v: &Value) -> String {
    let lines = |b: Block| {
        let mut out = Vec::new();
        block(v, 0, 0, &b, &mut out);
        out.join("\n") + "\n"
    };
    match style {
        "block" => lines(Block {
            indent_seq: true,
            flow_from: usize::MAX,
        }),
        "block-compact-sequences" => lines(Block {
            indent_seq: false,
            flow_from: usize::MAX,
        }),
        "flow-one-line" => flow(v) + "\n",
        "flow-documentation" => {
            let mut out = String::new();
            flow_docs(v, 0, &mut out);
            out + "\n"
        }
        "mixed-depth-1" => lines(Block {
            indent_seq: true,
            flow_from: 2,
        }),
        "mixed-depth-2" => lines(Block {
            indent_seq: false,
            flow_from: 3,
        }),
        "json" => serde_json::to_string_pretty(v).unwrap() + "\n",
        _ => unreachable!(),
    }
}

// ---------------------------------------------------------------------------------------------
// The webhook's result
// ---------------------------------------------------------------------------------------------

/// What the webhook's patch makes of `object` with the rules' fixes only (its own steps off),
/// without its audit annotation; `None` when the webhook does not mutate the pods of `object`
/// (not classified Windows, or Windows-probable on evidence other than an image, such as a
/// Windows path, without `mutation.probable`).
fn webhook(object: &Value, cfg: &Config, cx: &Context) -> Option<Value> {
    let mut cfg = cfg.clone();
    let m = &mut cfg.policy.mutation;
    (m.hyperv, m.pod_os_label, m.linux_guard) = (HyperV::Off, false, LinuxGuard::Off);
    let report = lint_object(object, &cfg, cx, Operation::Create);
    let class = report.classes.first()?;
    let image_evidence = class.signals.iter().any(|s| {
        s.os == Os::Windows && s.source == Source::Image && s.strength >= Strength::Probable
    });
    if class.os != Os::Windows
        || !(class.strength == Strength::Definite
            || (class.strength == Strength::Probable
                && (image_evidence || cfg.policy.mutation.probable)))
    {
        return None;
    }
    let mut work = object.clone();
    let mutated = mutation::mutate_with(&mut work, &cfg, cx);
    let mut out = object.clone();
    json_patch::patch(&mut out, &mutated.patch).expect("the webhook's patch applies");
    strip_audit(&mut out, object);
    Some(out)
}

/// `out` without the webhook's audit annotation (and without `metadata.annotations` when
/// `original` had none and the annotation made it).
fn strip_audit(out: &mut Value, original: &Value) {
    for meta in [
        "/metadata",
        "/spec/template/metadata",
        "/template/metadata",
        "/spec/jobTemplate/spec/template/metadata",
    ] {
        let had = original.pointer(&format!("{meta}/annotations")).is_some();
        if let Some(Value::Object(m)) = out.pointer_mut(meta)
            && let Some(Value::Object(a)) = m.get_mut("annotations")
        {
            a.remove(MUTATED_ANNOTATION);
            if a.is_empty() && !had {
                m.remove("annotations");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------------------

struct Input {
    name: String,
    text: String,
    cfg: Config,
}

fn inputs() -> Vec<Input> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let mut cases: Vec<PathBuf> = glob(&root.join("testdata/rules"), 2);
    cases.sort();
    for dir in cases {
        let Ok(case) = std::fs::read_to_string(dir.join("case.txt")) else {
            continue;
        };
        let args: Vec<String> = case
            .lines()
            .find_map(|l| l.strip_prefix("args:"))
            .unwrap_or("")
            .split_whitespace()
            .map(String::from)
            .collect();
        out.push(Input {
            name: dir.strip_prefix(root).unwrap().display().to_string(),
            text: std::fs::read_to_string(dir.join("input.yaml")).expect("input.yaml"),
            cfg: config(&args),
        });
    }
    let mut corpus: Vec<PathBuf> = ["realworld/windows", "realworld/linux", "fix-styles"]
        .iter()
        .flat_map(|d| glob(&root.join("testdata").join(d), 0))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    corpus.sort();
    for p in corpus {
        out.push(Input {
            name: p.strip_prefix(root).unwrap().display().to_string(),
            text: std::fs::read_to_string(&p).expect("corpus file"),
            cfg: Config::default(),
        });
    }
    out
}

/// The entries `depth` directories below `dir` (0: its files).
fn glob(dir: &Path, depth: usize) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let entries: Vec<PathBuf> = rd.map(|e| e.unwrap().path()).collect();
    match depth {
        0 => entries.into_iter().filter(|p| p.is_file()).collect(),
        1 => entries.into_iter().filter(|p| p.is_dir()).collect(),
        _ => entries
            .iter()
            .filter(|p| p.is_dir())
            .flat_map(|p| glob(p, depth - 1))
            .collect(),
    }
}

fn context(values: &[Value]) -> Context {
    let mut cx = Context::default();
    for v in values {
        for (_, o) in objects(v) {
            cx.add(o);
        }
    }
    cx
}

/// The allowed fixes `value`'s objects are still offered.
fn fixable_left(value: &Value, cfg: &Config, cx: &Context) -> Vec<String> {
    objects(value)
        .into_iter()
        .flat_map(|(prefix, o)| {
            lint_object(o, cfg, cx, Operation::Lint)
                .findings
                .into_iter()
                .filter(|f| fix_allowed(f, cfg))
                .map(move |f| format!("{} at {prefix}{}", f.rule.id, f.pointer))
        })
        .collect()
}

#[test]
fn fix_makes_the_webhooks_fixes_in_every_style() {
    let inputs = inputs();
    assert!(inputs.len() >= 200, "{} inputs", inputs.len());
    let mut failures: Vec<String> = Vec::new();
    let (mut files, mut fixed_docs, mut compared) = (0, 0, 0);
    for input in &inputs {
        // (Inputs that do not load are the bad-input cases: nothing to restyle.)
        let Ok(docs) = source::load(&input.text) else {
            continue;
        };
        let values: Vec<Value> = docs
            .into_iter()
            .map(|d| d.value)
            .filter(|v| v.is_object())
            .collect();
        if values.is_empty() {
            continue;
        }
        let cx = context(&values);
        let mut results: Vec<(&str, Vec<Value>)> = Vec::new();
        for style in STYLES {
            let at = format!("{} ({style})", input.name);
            let text: String = values
                .iter()
                .map(|v| write(style, v))
                .collect::<Vec<_>>()
                .join("---\n");
            match source::load(&text) {
                Ok(d) if d.iter().map(|d| &d.value).eq(values.iter()) => {}
                Ok(_) => {
                    failures.push(format!("{at}: the writer is wrong:\n{text}"));
                    continue;
                }
                Err(e) => {
                    failures.push(format!(
                        "{at}: the writer's text does not load ({e:?}):\n{text}"
                    ));
                    continue;
                }
            }
            files += 1;
            let fixed = match fix_text(&text, &input.cfg, &cx) {
                Ok(f) => f,
                Err(e) => {
                    failures.push(format!("{at}: --fix failed: {e}\n{text}"));
                    continue;
                }
            };
            for n in &fixed.not_fixed {
                failures.push(format!(
                    "{at}: {} at {} not fixed: {}\n{text}",
                    n.rule, n.pointer, n.reason
                ));
            }
            let out = fixed.text.clone().unwrap_or_else(|| text.clone());
            let after: Vec<Value> = match source::load(&out) {
                Ok(d) => d.into_iter().map(|d| d.value).collect(),
                Err(e) => {
                    failures.push(format!(
                        "{at}: the fixed text does not load ({e:?}):\n{out}"
                    ));
                    continue;
                }
            };
            if after.len() != values.len() {
                failures.push(format!("{at}: {} documents after --fix", after.len()));
                continue;
            }
            for (before, v) in values.iter().zip(&after) {
                fixed_docs += usize::from(before != v);
                let left = fixable_left(v, &input.cfg, &cx);
                if !left.is_empty() {
                    failures.push(format!("{at}: still fixable after --fix: {left:?}\n{out}"));
                }
                let (Some(b), Some(a)) = (before.as_object(), v.as_object()) else {
                    continue;
                };
                // One pod-bearing object (a List's items are not mutated by the webhook). A
                // strategic-merge patch is no object: --fix leaves it, and the API server never
                // sends one to the webhook.
                if pod_sites(before).is_empty()
                    || b.get("kind") == Some(&"List".into())
                    || is_patch(before)
                {
                    continue;
                }
                // A fix the webhook never applies (no mutation name, e.g. WIN308's): --fix
                // makes it, the webhook does not; nothing to compare.
                if lint_object(before, &input.cfg, &cx, Operation::Lint)
                    .findings
                    .iter()
                    .any(|f| fix_allowed(f, &input.cfg) && f.rule.mutation.recorded_as.is_none())
                {
                    continue;
                }
                if let Some(want) = webhook(before, &input.cfg, &cx) {
                    compared += usize::from(*style == STYLES[0]);
                    if want != Value::Object(a.clone()) {
                        failures.push(format!(
                            "{at}: --fix and the webhook differ:\n--fix:   {}\nwebhook: {}",
                            serde_json::to_string(&Value::Object(a.clone())).unwrap(),
                            serde_json::to_string(&want).unwrap()
                        ));
                    }
                }
            }
            results.push((style, after));
        }
        if let Some((first, want)) = results.first() {
            for (style, got) in &results[1..] {
                if got != want {
                    failures.push(format!(
                        "{}: {style} is fixed differently from {first}",
                        input.name
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures ({files} styled files):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    eprintln!(
        "{files} styled files; {fixed_docs} documents fixed; {compared} objects compared with the webhook"
    );
    // The table exercises the fixes: documents changed, objects compared with the webhook.
    assert!(
        fixed_docs >= 100 && compared >= 50,
        "{fixed_docs} fixed, {compared} compared"
    );
}
