//! The YAML loader against kubectl, on testdata/yaml/kubectl/*.yaml (tabs and shallow
//! indentation in quoted strings, tabs after ':', and their neighbours that both refuse).
//!
//! Beside each NAME.yaml, NAME.kubectl.json is the object kubectl decoded from it, or
//! NAME.kubectl.err kubectl's refusal. They were written by kubectl itself
//! (`WINLINT_BLESS=1 cargo test --test yaml_kubectl` with kubectl at hand), with
//! `kubectl label --local -f NAME.yaml winlint-oracle=1 -o json` minus that label: the same
//! file reader and YAML decoder as `kubectl create --dry-run=client -f` (sigs.k8s.io/yaml), and
//! no API server needed. `recordings_are_what_kubectl_says` re-runs kubectl on every case
//! (`$WINLINT_KUBECTL` or kubectl on PATH; skipped without it, failing under CI=true). They
//! were also checked once with `kubectl create --dry-run=client -f NAME.yaml -o json` against
//! the kube-apiserver 1.32 of shared/k8s: the same 39 objects (but the `namespace: default` it
//! adds) and the same 9 refusals.
//!
//! The loader must give kubectl's value where kubectl loads a file, refuse where it refuses, and
//! warn exactly when it relaxed YAML 1.2 to get there; KNOWN_DIFFERENCES lists the cases where
//! it does not follow kubectl yet (the README says so too).

mod cli_support;

use std::path::{Path, PathBuf};

use cli_support::{Run, column_of, line_of, root};
use serde_json::Value;
use winlint::source;

const DIR: &str = "testdata/yaml/kubectl";
const ORACLE_LABEL: &str = "winlint-oracle";

/// Cases where winlint and kubectl disagree, and which way.
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[
    // YAML 1.2 allows these; go-yaml refuses them.
    ("tab-after-dash", "kubectl refuses, winlint accepts"),
    ("tab-only-line-in-block", "kubectl refuses, winlint accepts"),
];

fn cases() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join(DIR))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    v.sort();
    assert!(v.len() >= 40, "only {} cases", v.len());
    v
}

fn name(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

fn recorded(p: &Path) -> Result<Value, String> {
    let json = p.with_extension("kubectl.json");
    match std::fs::read_to_string(&json) {
        Ok(t) => Ok(serde_json::from_str(&t).unwrap()),
        Err(_) => Err(
            std::fs::read_to_string(p.with_extension("kubectl.err")).unwrap_or_else(|_| {
                panic!(
                    "{}: no kubectl recording (WINLINT_BLESS=1 with kubectl)",
                    p.display()
                )
            }),
        ),
    }
}

/// YAML 1.2 (saphyr-parser alone) accepts the text.
fn strict_ok(text: &str) -> bool {
    let mut p = saphyr_parser::Parser::new_from_str(text);
    loop {
        match p.next_event() {
            None | Some(Ok((saphyr_parser::Event::StreamEnd, _))) => return true,
            Some(Err(_)) => return false,
            Some(Ok(_)) => {}
        }
    }
}

fn loads_what_kubectl_loads_with_the_same_values() {
    let mut failures = Vec::new();
    for p in cases() {
        let n = name(&p);
        let bytes = std::fs::read(&p).unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        let got = source::load_bytes_warned(&bytes);
        let known = KNOWN_DIFFERENCES.iter().find(|(k, _)| *k == n);
        match (recorded(&p), got, known) {
            (Ok(want), Ok((docs, warnings)), None) => {
                if docs[0].value != want {
                    failures.push(format!(
                        "{n}: value differs from kubectl's\n  winlint {}\n  kubectl {want}",
                        docs[0].value
                    ));
                }
                // A warning exactly when YAML 1.2 refuses the text, at a line of the file.
                let lines = text.lines().count();
                if warnings.is_empty() != strict_ok(&text)
                    || warnings.iter().any(|w| w.line == 0 || w.line > lines)
                {
                    failures.push(format!("{n}: warnings {warnings:?}"));
                }
            }
            (Err(_), Err(_), None) => {}
            // A known difference, still as listed.
            (Ok(_), Err(_), Some((_, k))) if k.starts_with("kubectl accepts") => {}
            (Err(_), Ok(_), Some((_, k))) if k.starts_with("kubectl refuses") => {}
            (want, got, known) => {
                failures.push(format!(
                "{n}: kubectl {}, winlint {}{}",
                if want.is_ok() { "loads it" } else { "refuses it" },
                match got {
                    Ok(_) => "loads it".to_string(),
                    Err(e) => format!("refuses it ({e})"),
                },
                known.map_or(String::new(), |(_, k)| format!(
                    " (listed as a known difference: {k}; update KNOWN_DIFFERENCES and the README)"
                ))
            ))
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The recordings are kubectl's: run it again on every case.
fn recordings_are_what_kubectl_says() {
    let Some(kubectl) = kubectl() else { return };
    let bless = std::env::var_os("WINLINT_BLESS").is_some();
    let mut failures = Vec::new();
    for p in cases() {
        let n = name(&p);
        let out = std::process::Command::new(&kubectl)
            .args(["label", "--local", "-o", "json", "-f"])
            .arg(p.file_name().unwrap())
            .arg(format!("{ORACLE_LABEL}=1"))
            .current_dir(p.parent().unwrap())
            .output()
            .expect("run kubectl");
        let said: Result<Value, String> = if out.status.success() {
            let mut v: Value = serde_json::from_slice(&out.stdout).unwrap();
            let labels = v["metadata"]["labels"].as_object_mut().unwrap();
            labels.remove(ORACLE_LABEL);
            if labels.is_empty() {
                v["metadata"].as_object_mut().unwrap().remove("labels");
            }
            Ok(v)
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        };
        if bless {
            let _ = std::fs::remove_file(p.with_extension("kubectl.json"));
            let _ = std::fs::remove_file(p.with_extension("kubectl.err"));
            match &said {
                Ok(v) => std::fs::write(
                    p.with_extension("kubectl.json"),
                    serde_json::to_string_pretty(v).unwrap() + "\n",
                ),
                Err(e) => std::fs::write(p.with_extension("kubectl.err"), e),
            }
            .unwrap();
            continue;
        }
        match (said, recorded(&p)) {
            (Ok(a), Ok(b)) if a == b => {}
            (Err(_), Err(_)) => {}
            (a, b) => failures.push(format!("{n}: kubectl now says {a:?}, recorded {b:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn kubectl() -> Option<String> {
    cli_support::ci_tool(
        "WINLINT_KUBECTL",
        &["kubectl"],
        &["version", "--client"],
        "kubectl",
    )
}

/// The Windows DaemonSet with its PowerShell script: one warning with its line, the findings
/// of the DaemonSet, and exact places for the nodes after the relaxed string.
fn the_powershell_daemonset_is_linted_with_one_warning() {
    let rel = format!("{DIR}/daemonset-powershell.yaml");
    let text = std::fs::read_to_string(root().join(&rel)).unwrap();
    let out = Run::new(&["-o", "json", &rel]).run();
    // Linted, not refused: warnings only (WIN007: the DaemonSet creates no pod on tainted nodes).
    out.assert_code(0);
    let start = line_of(&text, "- \"$ErrorActionPreference");
    let tab = text.lines().position(|l| l.starts_with('\t')).unwrap() + 1;
    assert_eq!(
        out.stderr,
        format!(
            "{rel}:{start}: warning: multi-line quoted string indented with tabs or by less than \
             its key (lines {start}, {tab}): YAML 1.2 forbids it, kubectl accepts it; loaded as \
             kubectl does\n"
        )
    );
    let r = out.json();
    let env = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "WIN403")
        .expect("the env var after the script is checked");
    let line = line_of(&text, "Pruner:Days");
    assert_eq!(env["line"], line);
    assert_eq!(env["column"], column_of(&text, line, "name:"));
    assert!(
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "WIN007")
    );
}

/// A real syntax error after a relaxed string keeps its own line and column.
fn errors_after_a_relaxed_string_keep_their_place() {
    let relaxed = "data:\n  s: \"a\n\tb\n c\"\n  t: x: y\n";
    let strict = "data:\n  s: \"a\n     b\n     c\"\n  t: x: y\n";
    assert!(strict_ok(strict.split("  t:").next().unwrap()));
    let e1 = source::load(relaxed).unwrap_err();
    let e2 = source::load(strict).unwrap_err();
    assert_eq!(
        (e1.line, e1.column, &e1.message),
        (e2.line, e2.column, &e2.message)
    );
    assert_eq!(e1.line, 5);
}

/// --fix edits a file that needed relaxing at the right places, and kubectl's value of the
/// script is unchanged.
fn fix_keeps_the_relaxed_string_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ds.yaml");
    let text = std::fs::read_to_string(root().join(DIR).join("daemonset-powershell.yaml")).unwrap();
    std::fs::write(&file, &text).unwrap();
    let out = Run::new(&["--fix", file.to_str().unwrap()]).run();
    out.assert_code(0);
    let fixed = std::fs::read_to_string(&file).unwrap();
    let script = |t: &str| {
        let docs = source::load(t).unwrap();
        docs[0].value["spec"]["template"]["spec"]["containers"][0]["args"][0].clone()
    };
    assert_eq!(script(&fixed), script(&text));
    let start = text.find("- \"$Error").unwrap();
    let end = text.find("}\"\n").unwrap() + 3;
    assert!(fixed.contains(&text[start..end]), "the string is untouched");
    assert!(fixed.contains("tolerations:"), "{fixed}");
}

// ---------------------------------------------------------------------------------------------
// The differential test: generated variants of the corpus against kubectl (issue 19)
// ---------------------------------------------------------------------------------------------

/// How kubectl and winlint treat one variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Verdict {
    BothLoadSame,
    BothRefuse,
    /// Both load it, to different values.
    ValuesDiffer,
    KubectlLoadsWinlintRefuses,
    KubectlRefusesWinlintLoads,
    /// winlint refuses without a line number.
    RefusedWithoutLine,
}

/// A text transformation: `None` when it changes nothing in this file.
type Transform = fn(&str) -> Option<String>;

/// `key: value` lines with a plain single-line scalar value: (prefix up to and including
/// `": "`, value).
fn plain_pair(line: &str) -> Option<(&str, &str)> {
    let i = line.find(": ")?;
    let (key, value) = (&line[..i], line[i + 2..].trim_end());
    let k = key.trim_start().trim_start_matches("- ");
    let plain_key = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c));
    let plain_value = !value.is_empty()
        && !value.contains(" #")
        && !value.contains(": ")
        && !"[]{}&*!|>'\"%@`#,?:-".contains(value.chars().next()?);
    (plain_key && plain_value).then_some((&line[..i + 2], value))
}

fn map_lines(text: &str, f: impl Fn(&str) -> Option<String>) -> Option<String> {
    let mut changed = false;
    let out: Vec<String> = text
        .split('\n')
        .map(|l| match f(l) {
            Some(n) => {
                changed = true;
                n
            }
            None => l.to_string(),
        })
        .collect();
    changed.then(|| out.join("\n"))
}

fn indent_of(l: &str) -> usize {
    l.len() - l.trim_start_matches(' ').len()
}

/// A block sequence of plain scalars under `key:` rewritten as a flow sequence, its items one a
/// line at `items` columns and its closing bracket at `close` (relative to the key's column,
/// clamped at 0); `None` for a bracket on the last item's line.
fn flow_seq(text: &str, items: isize, close: Option<isize>) -> Option<String> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out: Vec<String> = Vec::new();
    let mut changed = false;
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        let key_col = indent_of(l);
        let is_key = l.trim_end().ends_with(':')
            && !l.trim_start().starts_with('#')
            && !l.trim_start().starts_with("- ");
        let mut j = i + 1;
        let mut vals = Vec::new();
        while is_key && j < lines.len() {
            let m = lines[j];
            let c = indent_of(m);
            let Some(v) = m.trim_start().strip_prefix("- ") else {
                break;
            };
            if !(c == key_col || c == key_col + 2) || plain_pair(&format!("k: {v}")).is_none() {
                break;
            }
            vals.push(v.trim_end());
            j += 1;
        }
        if vals.len() < 2 {
            out.push(l.to_string());
            i += 1;
            continue;
        }
        changed = true;
        let col = |d: isize| " ".repeat((key_col as isize + d).max(0) as usize);
        out.push(format!("{} [{},", l.trim_end(), vals[0]));
        for (n, v) in vals.iter().enumerate().skip(1) {
            let last = n == vals.len() - 1;
            let end = match (last, close) {
                (true, None) => "]",
                (false, _) => ",",
                (true, Some(_)) => "",
            };
            out.push(format!("{}{v}{end}", col(items)));
        }
        if let Some(c) = close {
            out.push(format!("{}]", col(c)));
        }
        i = j;
    }
    changed.then(|| out.join("\n"))
}

const TRANSFORMS: &[(&str, Transform)] = &[
    ("crlf", |t| Some(t.replace('\n', "\r\n"))),
    ("bom", |t| Some(format!("\u{feff}{t}"))),
    ("document-start", |t| Some(format!("---\n{t}"))),
    ("document-end", |t| Some(format!("{}\n...\n", t.trim_end()))),
    ("comment-lines", |t| {
        map_lines(t, |l| (!l.is_empty()).then(|| format!("{l}\n# comment")))
    }),
    ("trailing-comments", |t| {
        map_lines(t, |l| plain_pair(l).map(|_| format!("{l} # comment")))
    }),
    ("indent-doubled", |t| {
        map_lines(t, |l| {
            let n = indent_of(l);
            (n > 0).then(|| format!("{}{}", " ".repeat(n), l))
        })
    }),
    ("tab-indent", |t| {
        map_lines(t, |l| {
            let n = indent_of(l);
            (n > 0).then(|| format!("{}{}", "\t".repeat(n.div_ceil(2)), &l[n..]))
        })
    }),
    ("tab-after-colon", |t| {
        map_lines(t, |l| {
            plain_pair(l).map(|(k, v)| format!("{}:\t{v}", &k[..k.len() - 2]))
        })
    }),
    ("double-quoted", |t| {
        map_lines(t, |l| {
            plain_pair(l)
                .map(|(k, v)| format!("{k}\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\"")))
        })
    }),
    ("single-quoted", |t| {
        map_lines(t, |l| {
            plain_pair(l).map(|(k, v)| format!("{k}'{}'", v.replace('\'', "''")))
        })
    }),
    ("block-literal", |t| {
        map_lines(t, |l| {
            plain_pair(l).map(|(k, v)| format!("{k}|-\n{}{v}", " ".repeat(indent_of(l) + 4)))
        })
    }),
    ("block-folded-keep", |t| {
        map_lines(t, |l| {
            plain_pair(l).map(|(k, v)| format!("{k}>+\n{}{v}\n", " ".repeat(indent_of(l) + 2)))
        })
    }),
    ("flow-seq-close-on-last-item", |t| flow_seq(t, 2, None)),
    ("flow-seq-close-at-key", |t| flow_seq(t, 2, Some(0))),
    ("flow-seq-close-at-col0", |t| flow_seq(t, 0, Some(-1000))),
    ("flow-seq-items-at-col0", |t| {
        flow_seq(t, -1000, Some(-1000))
    }),
    ("flow-seq-items-under-key", |t| flow_seq(t, -1, Some(-2))),
];

/// The seeds: the kubectl cases and the real-world corpus (every Linux control, every third
/// Windows file, to keep the kubectl runs to a few hundred).
fn seeds() -> Vec<PathBuf> {
    let mut v = cases();
    for (dir, step) in [
        ("testdata/realworld/linux", 1),
        ("testdata/realworld/windows", 3),
    ] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        files.sort();
        v.extend(files.into_iter().step_by(step));
    }
    v
}

/// kubectl's objects for `text` (a List's items, or the one object), or its refusal; `None`
/// when kubectl refuses for a reason that is not YAML (an object without kind, …).
fn kubectl_says(kubectl: &str, dir: &Path, text: &str) -> Option<Result<Vec<Value>, String>> {
    let file = dir.join("variant.yaml");
    std::fs::write(&file, text).unwrap();
    let out = std::process::Command::new(kubectl)
        .args(["label", "--local", "-o", "json", "-f"])
        .arg(&file)
        .arg(format!("{ORACLE_LABEL}=1"))
        .output()
        .expect("run kubectl");
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        return (err.contains("yaml:") || err.contains("YAML")).then_some(Err(err));
    }
    let v: Value = serde_json::from_slice(&out.stdout).ok()?;
    let mut objs = if v["kind"] == "List" && v.get("items").is_some() {
        v["items"].as_array().unwrap().clone()
    } else {
        vec![v]
    };
    for o in &mut objs {
        if let Some(labels) = o["metadata"]["labels"].as_object_mut() {
            labels.remove(ORACLE_LABEL);
            if labels.is_empty() {
                o["metadata"].as_object_mut().unwrap().remove("labels");
            }
        }
    }
    Some(Ok(objs))
}

fn judge(kubectl: Result<Vec<Value>, String>, text: &str) -> Verdict {
    match (kubectl, source::load_bytes_warned(text.as_bytes())) {
        (Ok(want), Ok((docs, _))) => {
            let got: Vec<Value> = docs
                .into_iter()
                .map(|d| d.value)
                .filter(|v| !v.is_null())
                .collect();
            if got == want {
                Verdict::BothLoadSame
            } else {
                Verdict::ValuesDiffer
            }
        }
        (Err(_), Err(e)) if e.line == 0 => Verdict::RefusedWithoutLine,
        (Err(_), Err(_)) => Verdict::BothRefuse,
        (Ok(_), Err(e)) if e.line == 0 => Verdict::RefusedWithoutLine,
        (Ok(_), Err(_)) => Verdict::KubectlLoadsWinlintRefuses,
        (Err(_), Ok(_)) => Verdict::KubectlRefusesWinlintLoads,
    }
}

/// Every variant of every seed through kubectl and winlint. Prints the counts per transform;
/// fails on a disagreement that is not a listed known one.
fn generated_variants_load_as_kubectl_loads_them() {
    let Some(kubectl) = kubectl() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut counts: std::collections::BTreeMap<(&str, Verdict), usize> = Default::default();
    let mut tried = 0;
    let mut unknown = Vec::new();
    for seed in seeds() {
        let Ok(text) = std::fs::read_to_string(&seed) else {
            continue;
        };
        // Seeds kubectl itself refuses, or that already differ, say nothing about the variants.
        if KNOWN_DIFFERENCES.iter().any(|(k, _)| *k == name(&seed))
            || !matches!(kubectl_says(&kubectl, dir.path(), &text), Some(Ok(_)))
        {
            continue;
        }
        for (tname, t) in TRANSFORMS {
            let Some(variant) = t(&text) else { continue };
            let Some(said) = kubectl_says(&kubectl, dir.path(), &variant) else {
                continue;
            };
            tried += 1;
            let v = judge(said, &variant);
            *counts.entry((tname, v)).or_default() += 1;
            if v != Verdict::BothLoadSame
                && v != Verdict::BothRefuse
                && !KNOWN_VARIANT_DIFFERENCES.contains(&(*tname, v))
            {
                unknown.push(format!("{} [{tname}]: {v:?}", name(&seed)));
            }
        }
    }
    let total = |want: Verdict| {
        counts
            .iter()
            .filter(|((_, v), _)| *v == want)
            .map(|(_, n)| n)
            .sum::<usize>()
    };
    eprintln!(
        "variants tried {tried}: loaded by both {}, refused by both {}, disagreements {}",
        total(Verdict::BothLoadSame),
        total(Verdict::BothRefuse),
        tried - total(Verdict::BothLoadSame) - total(Verdict::BothRefuse)
    );
    for ((t, v), n) in &counts {
        eprintln!("  {t:32} {v:?}: {n}");
    }
    assert!(tried > 300, "only {tried} variants");
    assert!(unknown.is_empty(), "{}", unknown.join("\n"));
}

/// Transforms whose variants still disagree, and how. The first run (793 variants of 90 seeds:
/// 672 loaded by both, 113 refused by both) found 8 disagreements; the 3 of flow sequences
/// indented at or left of their key (which kubectl loads) are gone since source/kubectl.rs
/// relaxes lines inside flow collections (now 832 variants of 93 seeds: 707 loaded by both, 118
/// refused by both, 7 disagreements). The loader does not follow kubectl here yet.
const KNOWN_VARIANT_DIFFERENCES: &[(&str, Verdict)] = &[
    // A block scalar whose first content line starts with a tab after its indentation
    // (colon-space-tab-letter, flow-map-tab…): YAML 1.2 content, go-yaml refuses it (6 variants).
    ("block-literal", Verdict::KubectlRefusesWinlintLoads),
    ("block-folded-keep", Verdict::KubectlRefusesWinlintLoads),
    // dq-crlf with CRLF made CR CR LF inside a double-quoted string: the two read the lone CR
    // differently (1 variant; not analysed further).
    ("crlf", Verdict::ValuesDiffer),
];

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use cli_support::skip_support::{run, test};
    run(vec![
        test(
            "loads_what_kubectl_loads_with_the_same_values",
            loads_what_kubectl_loads_with_the_same_values,
        ),
        test(
            "recordings_are_what_kubectl_says",
            recordings_are_what_kubectl_says,
        ),
        test(
            "the_powershell_daemonset_is_linted_with_one_warning",
            the_powershell_daemonset_is_linted_with_one_warning,
        ),
        test(
            "errors_after_a_relaxed_string_keep_their_place",
            errors_after_a_relaxed_string_keep_their_place,
        ),
        test(
            "fix_keeps_the_relaxed_string_as_it_is",
            fix_keeps_the_relaxed_string_as_it_is,
        ),
        test(
            "generated_variants_load_as_kubectl_loads_them",
            generated_variants_load_as_kubectl_loads_them,
        ),
    ]);
}
