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
    // Tab-indented or shallow lines inside […] / {…} in block context: kubectl accepts them.
    ("flow-seq-tab-indent", "kubectl accepts, winlint refuses"),
    ("flow-map-tab-nested", "kubectl accepts, winlint refuses"),
    ("flow-seq-under-indent", "kubectl accepts, winlint refuses"),
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

#[test]
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
#[test]
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
#[test]
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
#[test]
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
#[test]
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
