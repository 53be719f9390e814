//! `winlint plan --fix` and `--diff` end to end: the goldens of `testdata/plan-fix` (each case's
//! `input.yaml` fixed with its `args.txt` must equal its `fixed.yaml`, and say the lines of its
//! `stderr.txt`), a second run that changes nothing, and what it must not write: stdin (a patch
//! with `--diff` instead), a chart's files. `WINLINT_BLESS=1 cargo test --test plan_fix` rewrites
//! the `fixed.yaml` files.

mod cli_support;

use std::path::{Path, PathBuf};

use cli_support::{Out, Run, root};

/// `winlint plan ARGS` in `dir`, on a fixed date, with `stdin` piped in when given.
fn plan(dir: &Path, args: &[&str], stdin: Option<&str>) -> Out {
    let run =
        Run::new(&[&["plan", "--no-config", "--as-of", "2026-11-29"], args].concat()).cwd(dir);
    match stdin {
        Some(s) => run.stdin(s),
        None => run,
    }
    .run()
}

fn cases() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("testdata/plan-fix"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

#[test]
fn every_case_is_fixed_as_its_golden_says_and_a_second_run_changes_nothing() {
    let cases = cases();
    assert!(cases.len() >= 4, "{cases:?}");
    for case in cases {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::copy(case.join("input.yaml"), tmp.path().join("input.yaml")).unwrap();
        let args = lines(&case.join("args.txt"));
        let mut argv: Vec<&str> = args.iter().map(String::as_str).collect();
        argv.extend(["--fix", "input.yaml"]);
        let out = plan(tmp.path(), &argv, None);
        let stderr = &out.stderr;
        assert_eq!(out.status.code(), Some(0), "{}: {stderr}", case.display());
        for want in lines(&case.join("stderr.txt")) {
            assert!(
                stderr.contains(&want),
                "{}: stderr lacks {want:?}:\n{stderr}",
                case.display()
            );
        }
        let got = std::fs::read_to_string(tmp.path().join("input.yaml")).unwrap();
        let golden = case.join("fixed.yaml");
        cli_support::golden(golden.strip_prefix(root()).unwrap().to_str().unwrap(), &got);
        // Idempotent: the fixed file plans without a rewrite, byte for byte the same.
        let again = plan(tmp.path(), &argv, None);
        assert_eq!(again.status.code(), Some(0));
        let stderr = &again.stderr;
        assert!(
            !stderr.contains(": fixed: "),
            "{}: a second run fixed again:\n{stderr}",
            case.display()
        );
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("input.yaml")).unwrap(),
            got,
            "{}: a second run changed the file",
            case.display()
        );
    }
}

#[test]
fn the_plan_after_fix_judges_the_file_as_written_and_json_names_the_rewrite() {
    let case = root().join("testdata/plan-fix/one-build/input.yaml");
    let base = ["--windows-build", "ltsc2019", "--to", "ltsc2025"];
    let mut argv = base.to_vec();
    argv.extend(["--format", "json", case.to_str().unwrap()]);
    let out = plan(&root(), &argv, None);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let c = &v["workloads"][0]["containers"][0];
    assert_eq!(c["verdict"], "retag");
    assert_eq!(
        c["fix"]["to"], "mcr.microsoft.com/windows/servercore:ltsc2025",
        "{c}"
    );
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(&case, tmp.path().join("w.yaml")).unwrap();
    let mut argv = base.to_vec();
    argv.extend(["--fix", "--format", "json", "w.yaml"]);
    let out = plan(tmp.path(), &argv, None);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["workloads"][0]["containers"][0]["verdict"], "runs-as-is");
}

#[test]
fn stdin_is_never_written_and_diff_prints_the_patch() {
    let input =
        std::fs::read_to_string(root().join("testdata/plan-fix/one-build/input.yaml")).unwrap();
    let args = ["--windows-build", "ltsc2019", "--to", "ltsc2025"];
    let mut fix = args.to_vec();
    fix.extend(["--fix", "-"]);
    let out = plan(&root(), &fix, Some(&input));
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.contains("stdin has no file to write back"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.starts_with("winlint plan:"));
    let mut diff = args.to_vec();
    diff.extend(["--diff", "-"]);
    let out = plan(&root(), &diff, Some(&input));
    let patch = &out.stdout;
    assert!(patch.starts_with("--- <stdin>\n+++ <stdin>\n"), "{patch}");
    assert!(
        patch.contains("-        image: mcr.microsoft.com/windows/servercore:ltsc2019\n+        image: mcr.microsoft.com/windows/servercore:ltsc2025\n"),
        "{patch}"
    );
    // --diff on a file writes nothing.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("w.yaml"), &input).unwrap();
    let mut diff = args.to_vec();
    diff.extend(["--diff", "w.yaml"]);
    let out = plan(tmp.path(), &diff, None);
    assert!(out.stdout.starts_with("--- a/w.yaml\n+++ b/w.yaml\n"));
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("w.yaml")).unwrap(),
        input
    );
}

#[test]
fn a_charts_file_is_not_written() {
    let input =
        std::fs::read_to_string(root().join("testdata/plan-fix/one-build/input.yaml")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("templates")).unwrap();
    std::fs::write(
        tmp.path().join("Chart.yaml"),
        "apiVersion: v2\nname: web\nversion: 0.1.0\n",
    )
    .unwrap();
    // A template that is plain YAML parses, and is still Helm's input: never rewritten.
    std::fs::write(tmp.path().join("templates/web.yaml"), &input).unwrap();
    let out = plan(
        tmp.path(),
        &[
            "--windows-build",
            "ltsc2019",
            "--to",
            "ltsc2025",
            "--fix",
            "templates/web.yaml",
        ],
        None,
    );
    assert!(
        out.stderr.contains("a file of the Helm chart"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("templates/web.yaml")).unwrap(),
        input
    );
}

#[test]
fn fix_needs_files() {
    let out = plan(&root(), &["--to", "ltsc2025", "--cluster", "--fix"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stderr.contains("rewrite files"));
}
