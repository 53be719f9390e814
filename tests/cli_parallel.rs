//! Inputs are linted on several threads (`--jobs`, default: the cores available), and the output
//! is the same bytes as a run on one thread: stdout, stderr (warnings and notes, in report
//! order) and the exit code, in every output format and for `--fix --diff`.

mod cli_support;

use cli_support::winlint;

/// Several hundred files: rules' goldens, real-world manifests, YAML that warns or does not load.
const TREE: &[&str] = &["testdata/realworld", "testdata/rules", "testdata/yaml"];

fn compare(extra: &[&str]) {
    let run = |jobs: &str| {
        let mut args: Vec<&str> = vec!["--jobs", jobs];
        args.extend_from_slice(extra);
        args.extend_from_slice(TREE);
        winlint(&args)
    };
    let one = run("1");
    // More threads than this machine may have cores: results finish out of order all the more.
    for jobs in ["2", "7"] {
        let many = run(jobs);
        assert_eq!(
            one.code(),
            many.code(),
            "{extra:?} --jobs {jobs}: exit code"
        );
        assert!(
            one.stdout_bytes == many.stdout_bytes,
            "{extra:?} --jobs {jobs}: stdout differs\n--- one thread\n{}\n--- {jobs} threads\n{}",
            one.stdout,
            many.stdout
        );
        assert_eq!(one.stderr, many.stderr, "{extra:?} --jobs {jobs}: stderr");
    }
    // The comparison means something: the tree has findings, warnings and input errors.
    assert!(one.stdout.len() > 10_000, "{extra:?}: {}", one.stdout.len());
    assert!(
        one.stderr.contains(": warning: "),
        "{extra:?}: {}",
        one.stderr
    );
}

#[test]
fn text_output_is_the_same_on_any_number_of_threads() {
    compare(&[]);
}

#[test]
fn json_output_is_the_same_on_any_number_of_threads() {
    compare(&["-o", "json"]);
}

#[test]
fn sarif_output_is_the_same_on_any_number_of_threads() {
    compare(&["-o", "sarif"]);
}

#[test]
fn github_output_is_the_same_on_any_number_of_threads() {
    compare(&["-o", "github"]);
}

#[test]
fn codequality_output_is_the_same_on_any_number_of_threads() {
    compare(&["-o", "codequality"]);
}

#[test]
fn fix_diff_is_the_same_on_any_number_of_threads() {
    compare(&["--fix", "--diff"]);
}

#[test]
fn jobs_zero_is_a_usage_error() {
    let out = winlint(&["--jobs", "0", "testdata/realworld"]);
    out.assert_code(2);
    assert!(out.stderr.contains("--jobs"), "{}", out.stderr);
}
