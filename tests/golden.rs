//! Golden cases by rule: `testdata/rules/<RULE-ID>/<case>/` holds `input.yaml`, `case.txt`
//! (title, the test vector of shared/rules.md §6 it comes from if any, target flags, the rule IDs
//! the catalogue expects, whether to check `--fix`), `expected.txt` (the exact text report) and,
//! for fix cases, `fixed.yaml` (the manifest after `--fix`).
//!
//! Every rule has a directory with at least one failing case (its ID is expected) and one
//! passing case (its ID is not: the near miss the rule must not flag).
//!
//! The expected rule IDs come from the catalogue, not from the tool: a case fails when the report
//! names other rules, whatever `expected.txt` says. `WINLINT_BLESS=1 cargo test --test golden`
//! rewrites `expected.txt`/`fixed.yaml` after a deliberate change; review the diff.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Case {
    dir: PathBuf,
    /// The rule whose directory holds the case.
    rule: String,
    /// The test vector of shared/rules.md §6 (`T06`), if the case is one.
    vector: Option<String>,
    args: Vec<String>,
    expect: BTreeSet<String>,
    fix: bool,
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn cases() -> Vec<Case> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/rules");
    let dirs: Vec<PathBuf> = subdirs(&root).iter().flat_map(|d| subdirs(d)).collect();
    for d in &dirs {
        assert!(
            d.join("case.txt").exists(),
            "{}: a case directory without case.txt",
            d.display()
        );
    }
    dirs.into_iter()
        .map(|dir| {
            let text = std::fs::read_to_string(dir.join("case.txt")).expect("case.txt");
            let field = |name: &str| {
                text.lines()
                    .find_map(|l| l.strip_prefix(&format!("{name}:")))
                    .map(|s| s.trim().to_string())
                    .unwrap_or_default()
            };
            let rule = dir
                .parent()
                .and_then(Path::file_name)
                .expect("testdata/rules/<RULE-ID>/<case>")
                .to_string_lossy()
                .into_owned();
            let vector = Some(field("vector")).filter(|v| !v.is_empty());
            Case {
                rule,
                vector,
                args: field("args").split_whitespace().map(String::from).collect(),
                expect: field("expect")
                    .split_whitespace()
                    .map(String::from)
                    .collect(),
                fix: field("fix") == "yes",
                dir,
            }
        })
        .collect()
}

fn winlint(args: &[&str], cwd: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_winlint"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .output()
        .expect("run winlint")
}

fn bless() -> bool {
    std::env::var_os("WINLINT_BLESS").is_some()
}

/// Compare with a golden file, or write it when blessing.
fn golden(path: &Path, actual: &str, failures: &mut Vec<String>) {
    if bless() {
        std::fs::write(path, actual).expect("write golden");
        return;
    }
    match std::fs::read_to_string(path) {
        Ok(expected) if expected == actual => {}
        Ok(expected) => failures.push(format!(
            "{}: differs from the golden file\n--- expected\n{expected}\n--- actual\n{actual}",
            path.display()
        )),
        Err(_) => failures.push(format!(
            "{}: missing (run with WINLINT_BLESS=1)",
            path.display()
        )),
    }
}

fn rel(p: &Path) -> String {
    p.strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(p)
        .display()
        .to_string()
}

#[test]
fn golden_cases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cases = cases();
    let vectors: BTreeSet<&str> = cases.iter().filter_map(|c| c.vector.as_deref()).collect();
    assert!(
        vectors.len() >= 64,
        "expected every vector of rules.md §6, found {}",
        vectors.len()
    );
    let mut failures = Vec::new();
    // What `winlint rules` says each rule's severities are (issue 26: shown as they vary).
    let listed = winlint(&["rules", "-o", "json"], root);
    let listed: Vec<serde_json::Value> = serde_json::from_slice(&listed.stdout).expect("rules");
    let severities: std::collections::BTreeMap<String, Vec<String>> = listed
        .iter()
        .map(|r| {
            let all = r["severities"].as_array().expect("severities").iter();
            (
                r["id"].as_str().expect("id").to_string(),
                all.map(|s| s.as_str().expect("severity").to_string())
                    .collect(),
            )
        })
        .collect();
    for case in &cases {
        let input = rel(&case.dir.join("input.yaml"));
        let mut args: Vec<&str> = case.args.iter().map(String::as_str).collect();

        // Rule IDs from the JSON report must be exactly the catalogue's.
        let mut json_args = args.clone();
        json_args.extend(["-o", "json", &input]);
        let out = winlint(&json_args, root);
        let report: serde_json::Value = match serde_json::from_slice(&out.stdout) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!(
                    "{input}: not JSON ({e}): {}",
                    String::from_utf8_lossy(&out.stderr)
                ));
                continue;
            }
        };
        let got: BTreeSet<String> = report["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| f["rule"].as_str().expect("rule").to_string())
            .collect();
        if got != case.expect {
            failures.push(format!(
                "{input}: expected rules {:?}, got {got:?}",
                case.expect
            ));
        }
        for f in report["findings"].as_array().expect("findings") {
            let (rule, sev) = (f["rule"].as_str().unwrap_or(""), f["severity"].as_str());
            if !severities
                .get(rule)
                .is_some_and(|s| s.iter().any(|x| Some(x.as_str()) == sev))
            {
                failures.push(format!(
                    "{input}: {rule} reports {sev:?}, a severity `winlint rules` does not show \
                     for it: name it in the rule's `## Severity` docs section"
                ));
            }
        }
        let errors = report["summary"]["errors"].as_u64().expect("errors");
        let want_code = if errors > 0 { 1 } else { 0 };
        if out.status.code() != Some(want_code) {
            failures.push(format!(
                "{input}: exit code {:?}, expected {want_code}",
                out.status.code()
            ));
        }

        // The text report, byte for byte.
        let mut text_args = args.clone();
        text_args.push(&input);
        let out = winlint(&text_args, root);
        golden(
            &case.dir.join("expected.txt"),
            &String::from_utf8_lossy(&out.stdout),
            &mut failures,
        );

        // A finding marked fixable is fixed by --fix, in every case (`fix: yes` also keeps
        // the fixed manifest as a golden).
        let fixable = report["summary"]["fixable"].as_u64().expect("fixable");
        if case.fix || fixable > 0 {
            let tmp = tempfile::tempdir().expect("tempdir");
            let file = tmp.path().join("input.yaml");
            std::fs::copy(case.dir.join("input.yaml"), &file).expect("copy");
            let f = file.to_str().expect("utf-8 path");
            args.extend(["--fix", f]);
            let mut json_fix = args.clone();
            json_fix.extend(["-o", "json"]);
            let out = winlint(&json_fix, root);
            if !matches!(out.status.code(), Some(0 | 1)) {
                failures.push(format!(
                    "{input}: --fix failed: {}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                ));
                continue;
            }
            let after: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
            let not_fixed: Vec<String> = (after["findings"].as_array().expect("findings"))
                .iter()
                .filter(|f| f["fix"]["not_fixed"] == true)
                .map(|f| {
                    format!(
                        "{} {}: {}",
                        f["rule"], f["pointer"], f["fix"]["not_fixed_reason"]
                    )
                })
                .collect();
            if !not_fixed.is_empty() {
                failures.push(format!(
                    "{input}: fixable findings --fix did not fix: {}",
                    not_fixed.join("; ")
                ));
            }
            let fixed = std::fs::read_to_string(&file).expect("fixed file");
            if case.fix {
                golden(&case.dir.join("fixed.yaml"), &fixed, &mut failures);
            }
            // A second run finds nothing fixable, and a second --fix changes nothing.
            let mut again: Vec<&str> = case.args.iter().map(String::as_str).collect();
            again.extend(["-o", "json", f]);
            let out = winlint(&again, root);
            let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
            if report["summary"]["fixable"].as_u64() != Some(0) {
                failures.push(format!(
                    "{input}: fixable findings remain after --fix: {}",
                    report["findings"]
                ));
            }
            let out = winlint(&args, root);
            assert!(matches!(out.status.code(), Some(0 | 1)));
            if std::fs::read_to_string(&file).expect("file") != fixed {
                failures.push(format!("{input}: a second --fix changed the file again"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} golden failures:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Every rule has a directory of cases with a failing and a passing one; every directory is a
/// rule.
#[test]
fn every_rule_has_a_failing_and_a_passing_case() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = winlint(&["rules", "-o", "json"], root);
    let rules: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("rules json");
    let ids: BTreeSet<String> = rules
        .iter()
        .map(|r| r["id"].as_str().expect("id").to_string())
        .collect();
    let cases = cases();
    let mut missing = Vec::new();
    for id in &ids {
        let mine: Vec<&Case> = cases.iter().filter(|c| &c.rule == id).collect();
        if !mine.iter().any(|c| c.expect.contains(id)) {
            missing.push(format!(
                "{id}: no failing case (one whose expect names {id})"
            ));
        }
        if !mine.iter().any(|c| !c.expect.contains(id)) {
            missing.push(format!(
                "{id}: no passing case (one whose expect does not name {id})"
            ));
        }
    }
    for c in &cases {
        if !ids.contains(&c.rule) {
            missing.push(format!("{}: {} is not a rule", c.dir.display(), c.rule));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// The README's rule table is `winlint rules -o markdown`, never written by hand.
#[test]
fn readme_rule_table_is_generated() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = winlint(&["rules", "-o", "markdown"], root);
    assert!(out.status.success());
    let table = String::from_utf8(out.stdout).expect("utf-8");
    let readme_path = root.join("README.md");
    let readme = std::fs::read_to_string(&readme_path).expect("README.md");
    let (begin, end) = ("<!-- rules:begin -->\n", "<!-- rules:end -->");
    let i = readme.find(begin).expect("rules:begin marker") + begin.len();
    let j = readme.find(end).expect("rules:end marker");
    if bless() {
        std::fs::write(
            &readme_path,
            format!("{}{table}{}", &readme[..i], &readme[j..]),
        )
        .expect("write README");
        return;
    }
    assert_eq!(
        readme[i..j],
        table,
        "README rule table is stale: run WINLINT_BLESS=1 cargo test --test golden"
    );
}

/// The README's sample sessions ("Using the linter") are what winlint prints today: every line
/// each shows is a line of the real output (`…` stands for the lines it leaves out), and its
/// summary line is the real summary. The grouped one is at 100 columns, the default width.
#[test]
fn readme_sample_output_is_real() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let file = "testdata/examples/iis-deployment.yaml";
    for args in [
        vec![file],
        vec!["--layout", "grouped", file],
        vec!["--statistics", file],
    ] {
        let prompt = format!("$ winlint {}\n", args.join(" "));
        let start = readme.find(&prompt).expect("the README's sample session") + prompt.len();
        let shown: Vec<&str> = readme[start..]
            .lines()
            .take_while(|l| !l.starts_with("```"))
            .filter(|l| *l != "…")
            .collect();
        let out = Command::new(env!("CARGO_BIN_EXE_winlint"))
            .args(&args)
            .current_dir(root)
            .env("NO_COLOR", "1")
            .env("COLUMNS", "100")
            .output()
            .expect("run winlint");
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let stdout = String::from_utf8(out.stdout).expect("utf-8");
        let real: Vec<&str> = stdout.lines().collect();
        let stale: Vec<&&str> = shown.iter().filter(|l| !real.contains(l)).collect();
        assert!(
            stale.is_empty(),
            "README sample lines `{prompt}` no longer prints:\n{stale:#?}\nreal output:\n{stdout}"
        );
        assert_eq!(shown.last(), real.last(), "the README's summary line");
    }
}
