//! The real-world corpus (`testdata/realworld/`, issue 9): Windows manifests after public
//! projects and Linux controls, linted by the built binary at every target of
//! `testdata/realworld/expected.yaml`, whose findings are judged against that file:
//!
//! * every `must` finding is reported with its severity, object, pointer and line (and the
//!   message holds / lacks the listed substrings);
//! * no `must_not` finding (a FALSE or NOISE verdict of JUDGEMENT.md) is reported;
//! * every reported finding is a `must` or a `tolerated` one: a new finding fails the test, with
//!   the YAML line to add to expected.yaml if the new finding is right;
//! * every file of `linux/` produces no finding and no error at any target.
//!
//! Entries marked `pending: <label>` wait for work on another branch: they never fail the test;
//! the test prints those still unmet and those already met (to be turned on).
//!
//! `cargo test --test realworld -- --nocapture` prints findings per rule and severity per target.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Expected {
    targets: BTreeMap<String, Target>,
    pending: BTreeMap<String, String>,
    files: BTreeMap<String, BTreeMap<String, FileTarget>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Target {
    title: String,
    args: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct FileTarget {
    must: Vec<Item>,
    must_not: Vec<Item>,
    tolerated: Vec<Item>,
    /// The file cannot be read today (a load error naming `message_contains`).
    read_error: Option<Item>,
}

#[derive(Deserialize, Default, Clone)]
#[serde(deny_unknown_fields, default)]
struct Item {
    rule: String,
    severity: Option<String>,
    object: String,
    pointer: Option<String>,
    line: Option<u64>,
    pending: Option<String>,
    message_contains: Vec<String>,
    message_not_contains: Vec<String>,
    note: Option<String>,
    why: Option<String>,
}

#[derive(Debug)]
struct Finding {
    rule: String,
    severity: String,
    object: String,
    pointer: String,
    line: u64,
    message: String,
}

impl Item {
    fn names(&self, f: &Finding) -> bool {
        self.rule == f.rule
            && self.object == f.object
            && self.pointer.as_ref().is_none_or(|p| *p == f.pointer)
    }

    /// Names the finding and, where given, its severity.
    fn matches(&self, f: &Finding) -> bool {
        self.names(f) && self.severity.as_ref().is_none_or(|s| *s == f.severity)
    }

    fn describe(&self) -> String {
        let mut s = format!("{} {}", self.rule, self.object);
        if let Some(p) = &self.pointer {
            write!(s, " {p}").unwrap();
        }
        if let Some(l) = self.line {
            write!(s, " (line {l})").unwrap();
        }
        if let Some(sev) = &self.severity {
            write!(s, " [{sev}]").unwrap();
        }
        s
    }

    /// What is wrong with `f` as this `must` finding, if anything.
    fn must_problem(&self, f: &Finding) -> Option<String> {
        let mut problems = Vec::new();
        if let Some(sev) = self.severity.as_ref().filter(|s| **s != f.severity) {
            problems.push(format!("severity {} instead of {sev}", f.severity));
        }
        if let Some(line) = self.line.filter(|l| *l != f.line) {
            problems.push(format!("line {} instead of {line}", f.line));
        }
        for want in &self.message_contains {
            if !f.message.contains(want.as_str()) {
                problems.push(format!("message lacks {want:?}"));
            }
        }
        for bad in &self.message_not_contains {
            if f.message.contains(bad.as_str()) {
                problems.push(format!("message holds {bad:?}"));
            }
        }
        (!problems.is_empty()).then(|| format!("{}; message: {}", problems.join(", "), f.message))
    }
}

fn yaml_line(f: &Finding) -> String {
    format!(
        "- {{rule: {}, severity: {}, object: {}, pointer: {}, line: {}}}",
        f.rule, f.severity, f.object, f.pointer, f.line
    )
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn load_expected() -> Expected {
    let path = root().join("testdata/realworld/expected.yaml");
    let text = std::fs::read_to_string(&path).expect("read expected.yaml");
    let mut docs = winlint::source::load(&text)
        .unwrap_or_else(|e| panic!("{}:{}: {}", path.display(), e.line, e.message));
    assert_eq!(docs.len(), 1, "expected.yaml: one YAML document");
    serde_json::from_value(docs.remove(0).value)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn yaml_files(dir: &str) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(root().join("testdata/realworld").join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .map(|p| format!("{dir}/{}", p.file_name().unwrap().to_string_lossy()))
        .collect();
    files.sort();
    files
}

/// Lint `files` (relative to testdata/realworld) with `args`: findings and read errors by file.
type Report = BTreeMap<String, (Vec<Finding>, Vec<String>)>;

fn lint(files: &[&String], args: &[String]) -> Report {
    let dir: PathBuf = root().join("testdata/realworld");
    let out = Command::new(env!("CARGO_BIN_EXE_winlint"))
        .args(args)
        .args(["-o", "json"])
        .args(files.iter().map(|f| f.as_str()))
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("run winlint");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "winlint {args:?}: not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let mut by_file: Report = files
        .iter()
        .map(|f| ((*f).clone(), Default::default()))
        .collect();
    let s = |v: &serde_json::Value, k: &str| v[k].as_str().unwrap_or_default().to_string();
    for f in report["findings"].as_array().expect("findings") {
        let entry = by_file.entry(s(f, "file")).or_default();
        entry.0.push(Finding {
            rule: s(f, "rule"),
            severity: s(f, "severity"),
            object: s(f, "object"),
            pointer: s(f, "pointer"),
            line: f["line"].as_u64().unwrap_or_default(),
            message: s(f, "message"),
        });
    }
    for e in report["errors"].as_array().expect("errors") {
        let entry = by_file.entry(s(e, "file")).or_default();
        entry.1.push(format!(
            "{}:{}: {}",
            e["line"],
            e["column"],
            s(e, "message")
        ));
    }
    by_file
}

#[derive(Default)]
struct Outcome {
    failures: Vec<String>,
    pending_unmet: Vec<String>,
    pending_met: Vec<String>,
}

/// Judge one file at one target.
fn judge(
    file: &str,
    target: &str,
    expect: &FileTarget,
    findings: &[Finding],
    errors: &[String],
    out: &mut Outcome,
) {
    let at = format!("{file} [{target}]");
    let mut failures = Vec::new();
    let pending = |item: &Item, met: bool, out: &mut Outcome, what: &str| {
        let label = item.pending.as_deref().unwrap_or_default();
        let line = format!("{at}: {what} {} (pending: {label})", item.describe());
        if met {
            out.pending_met.push(line);
        } else {
            out.pending_unmet.push(line);
        }
    };

    match (&expect.read_error, errors.is_empty()) {
        (None, true) => {}
        (None, false) => failures.push(format!("cannot be read: {}", errors.join("; "))),
        (Some(item), unread_ok) => {
            let still = !unread_ok
                && item
                    .message_contains
                    .iter()
                    .all(|m| errors.iter().any(|e| e.contains(m.as_str())));
            if item.pending.is_some() {
                pending(item, !still, out, "read error");
            } else if !still {
                failures.push(format!(
                    "expected the read error {:?}",
                    item.message_contains
                ));
            }
        }
    }

    for item in &expect.must {
        let named: Vec<&Finding> = findings.iter().filter(|f| item.names(f)).collect();
        let problem = if named.is_empty() {
            Some("not reported".to_string())
        } else if named.iter().any(|f| item.must_problem(f).is_none()) {
            None
        } else {
            item.must_problem(named[0])
        };
        match (&item.pending, problem) {
            (Some(_), p) => pending(item, p.is_none(), out, "must"),
            (None, Some(p)) => failures.push(format!(
                "MUST {}: {p}{}",
                item.describe(),
                item.note
                    .as_ref()
                    .map(|n| format!(" (note: {n})"))
                    .unwrap_or_default()
            )),
            (None, None) => {}
        }
    }
    for item in &expect.must_not {
        let hit = findings.iter().find(|f| item.matches(f));
        match (&item.pending, hit) {
            (Some(_), h) => pending(item, h.is_none(), out, "must not"),
            (None, Some(f)) => failures.push(format!(
                "MUST NOT {}: reported ({}){}",
                item.describe(),
                f.message,
                item.why
                    .as_ref()
                    .map(|w| format!("; judged {w}"))
                    .unwrap_or_default()
            )),
            (None, None) => {}
        }
    }
    for f in findings {
        let expected = expect.must.iter().any(|i| i.names(f))
            || expect.tolerated.iter().any(|i| i.matches(f))
            || expect.must_not.iter().any(|i| i.matches(f));
        if !expected {
            failures.push(format!(
                "UNEXPECTED {} {} {} {} (line {}): {}\n      if this finding is right, add under files.{file}.{target}.must in testdata/realworld/expected.yaml:\n      {}",
                f.rule,
                f.severity,
                f.object,
                f.pointer,
                f.line,
                f.message,
                yaml_line(f)
            ));
        }
    }
    if !failures.is_empty() {
        out.failures
            .push(format!("{at}:\n    {}", failures.join("\n    ")));
    }
}

fn check_expectations(expected: &Expected) -> Vec<String> {
    let mut problems = Vec::new();
    let windows: BTreeSet<String> = yaml_files("windows").into_iter().collect();
    let listed: BTreeSet<String> = expected.files.keys().cloned().collect();
    for f in windows.difference(&listed) {
        problems.push(format!("{f}: no entry in expected.yaml"));
    }
    for f in listed.difference(&windows) {
        problems.push(format!("{f}: in expected.yaml but not a file of windows/"));
    }
    for (file, targets) in &expected.files {
        for (target, ft) in targets {
            if !expected.targets.contains_key(target) {
                problems.push(format!("{file}: unknown target {target}"));
            }
            let all = ft
                .must
                .iter()
                .chain(&ft.must_not)
                .chain(&ft.tolerated)
                .chain(&ft.read_error);
            for item in all {
                if let Some(label) = &item.pending
                    && !expected.pending.contains_key(label)
                {
                    problems.push(format!("{file} [{target}]: unknown pending label {label}"));
                }
                if item.rule.starts_with("NEW:") && item.pending.is_none() {
                    problems.push(format!(
                        "{file} [{target}]: {} names no rule yet, so it must be pending",
                        item.rule
                    ));
                }
            }
            for item in &ft.must {
                if item.severity.is_none() || item.pointer.is_none() || item.line.is_none() {
                    problems.push(format!(
                        "{file} [{target}]: must {} needs severity, pointer and line",
                        item.describe()
                    ));
                }
            }
        }
    }
    problems
}

/// Findings per rule and severity, per target.
fn summary(reports: &BTreeMap<String, Report>) -> String {
    let mut out = String::new();
    for (target, report) in reports {
        let mut per_rule: BTreeMap<&str, [usize; 3]> = BTreeMap::new();
        for f in report.values().flat_map(|(f, _)| f) {
            let col = match f.severity.as_str() {
                "error" => 0,
                "warning" => 1,
                _ => 2,
            };
            per_rule.entry(&f.rule).or_default()[col] += 1;
        }
        let files = report.len();
        let total: [usize; 3] = per_rule.values().fold([0; 3], |mut a, c| {
            (0..3).for_each(|i| a[i] += c[i]);
            a
        });
        writeln!(out, "\ntarget {target} ({files} files)").unwrap();
        writeln!(
            out,
            "| rule | findings | error | warning | info |\n|---|---:|---:|---:|---:|"
        )
        .unwrap();
        for (rule, c) in per_rule.iter().chain([(&"all", &total)]) {
            writeln!(
                out,
                "| {rule} | {} | {} | {} | {} |",
                c.iter().sum::<usize>(),
                c[0],
                c[1],
                c[2]
            )
            .unwrap();
        }
    }
    out
}

#[test]
fn realworld_corpus() {
    let expected = load_expected();
    let problems = check_expectations(&expected);
    assert!(
        problems.is_empty(),
        "testdata/realworld/expected.yaml:\n  {}",
        problems.join("\n  ")
    );
    let linux = yaml_files("linux");
    assert!(linux.len() >= 10, "the Linux controls are missing");

    let mut outcome = Outcome::default();
    let mut reports = BTreeMap::new();
    for (name, target) in &expected.targets {
        let windows: Vec<&String> = expected
            .files
            .iter()
            .filter(|(_, t)| t.contains_key(name))
            .map(|(f, _)| f)
            .collect();
        let files: Vec<&String> = windows.iter().copied().chain(&linux).collect();
        let report = lint(&files, &target.args);
        for file in &windows {
            let (findings, errors) = &report[*file];
            judge(
                file,
                name,
                &expected.files[*file][name],
                findings,
                errors,
                &mut outcome,
            );
        }
        for file in &linux {
            let (findings, errors) = &report[file];
            if !findings.is_empty() || !errors.is_empty() {
                let lines: Vec<String> = findings
                    .iter()
                    .map(|f| format!("{} {} {} {}", f.rule, f.severity, f.object, f.pointer))
                    .chain(errors.iter().cloned())
                    .collect();
                outcome.failures.push(format!(
                    "{file} [{name}]: a Linux control must produce nothing:\n    {}",
                    lines.join("\n    ")
                ));
            }
        }
        println!("target {name}: {} {:?}", target.title, target.args);
        reports.insert(name.clone(), report);
    }

    println!("{}", summary(&reports));
    println!(
        "\npending, still unmet ({}):\n  {}",
        outcome.pending_unmet.len(),
        outcome.pending_unmet.join("\n  ")
    );
    println!(
        "\npending, already met: delete their `pending:` key ({}):\n  {}",
        outcome.pending_met.len(),
        outcome.pending_met.join("\n  ")
    );
    assert!(
        outcome.failures.is_empty(),
        "{} file/target(s) differ from testdata/realworld/expected.yaml (JUDGEMENT.md says why each \
         entry is there; change expected.yaml only when the new behaviour is right):\n\n{}",
        outcome.failures.len(),
        outcome.failures.join("\n\n")
    );
}
