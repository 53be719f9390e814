//! The text report people read (issue 20): every finding names its object
//! (`namespace/Kind/name`, `Kind/name` when the manifest gives no namespace), the grouped layout
//! at a terminal, `--statistics`, `--severity`, and the namespace in JSON. Exact outputs are
//! golden files in testdata/text/ (`WINLINT_BLESS=1` rewrites them); the grouped layout is forced
//! with `--layout grouped` and a fixed `COLUMNS`, so the goldens do not depend on the terminal.

mod cli_support;

use cli_support::{Run, winlint};
use serde_json::Value;

const INPUT: &str = "testdata/text/input/";

fn golden(name: &str, actual: &str) {
    cli_support::golden(&format!("testdata/text/{name}"), actual);
}

fn grouped_layout_is_exact_at_a_fixed_width() {
    let out = Run::new(&["--layout", "grouped", INPUT])
        .env("COLUMNS", "80")
        .run();
    out.assert_code(1);
    golden("expected.grouped.txt", &out.stdout);
    // Wrapped to the width: no line is wider than 80 columns but the summary line and a word
    // that does not fit a line (an image reference is never cut).
    let last = out.stdout.lines().last().unwrap();
    for line in out.stdout.lines().filter(|l| *l != last) {
        assert!(
            line.chars().count() <= 80 || !line.trim().contains(' '),
            "{line:?}"
        );
    }
    // Another width, another fill; the same words.
    let narrow = Run::new(&["--layout", "grouped", INPUT])
        .env("COLUMNS", "50")
        .run();
    let words = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
    assert_ne!(narrow.stdout, out.stdout);
    assert_eq!(words(&narrow.stdout), words(&out.stdout));
}

/// A pipe gets the one-line records, as before the grouped layout existed (`--layout lines`
/// forces them at a terminal); each names its object.
fn a_pipe_gets_one_line_per_finding() {
    let piped = winlint(&[INPUT]);
    piped.assert_code(1);
    golden("expected.lines.txt", &piped.stdout);
    let forced = Run::new(&["--layout", "lines", INPUT])
        .env("COLUMNS", "80")
        .run();
    assert_eq!(forced.stdout, piped.stdout);
    assert!(
        piped
            .stdout
            .contains("shop.yaml:15:5: shop/Deployment/iis-frontend: error WIN001"),
        "{piped}"
    );
    // No namespace in the manifest: none is made up.
    assert!(
        piped
            .stdout
            .contains("shop.yaml:27:1: Pod/agent: warning WIN003"),
        "{piped}"
    );
    assert!(!piped.stdout.contains("default/"), "{piped}");
}

/// On a real terminal (a pseudo-terminal from util-linux `script`) the layout is grouped and
/// the width is the terminal's.
fn a_terminal_gets_the_grouped_layout_at_its_width() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        cli_support::skip_support::skip::<()>(
            "no `script` (util-linux) to make a terminal",
            cli_support::skip_support::GET_APT,
        );
        return;
    }
    let cmd = format!(
        "stty cols 64; {} --color never testdata/text/warnings.yaml",
        cli_support::bin()
    );
    let out = Run::new(&["-q", "-e", "-c", &cmd, "/dev/null"])
        .program(&["script"])
        .env_remove("COLUMNS")
        .cwd(cli_support::root())
        .run();
    let text = out.stdout.replace("\r\n", "\n");
    assert!(
        text.starts_with(
            "testdata/text/warnings.yaml: ops/Pod/agent\n  18:18  warning WIN408 \
             memory-request-limit\n    container \"agent\" requests 100Mi of memory but is \
             limited to\n    200Mi;"
        ),
        "{text:?}"
    );
}

fn statistics_count_per_rule_and_severity() {
    let out = winlint(&["--statistics", INPUT]);
    out.assert_code(1);
    golden("expected.statistics.txt", &out.stdout);

    let json = winlint(&["--statistics", "-o", "json", INPUT]).json();
    let findings = json["findings"].as_array().unwrap();
    let stats = &json["statistics"];
    let rows = stats["rules"].as_array().unwrap();
    let total: u64 = rows.iter().map(|r| r["count"].as_u64().unwrap()).sum();
    assert_eq!(total as usize, findings.len());
    for r in rows {
        let same = |f: &&Value| f["rule"] == r["rule"] && f["severity"] == r["severity"];
        assert_eq!(
            r["count"].as_u64().unwrap() as usize,
            findings.iter().filter(same).count(),
            "{r}"
        );
    }
    let win003 = rows.iter().find(|r| r["rule"] == "WIN003").unwrap();
    assert_eq!(
        (&win003["count"], &win003["fixable"], &win003["name"]),
        (&2.into(), &2.into(), &"missing-spec-os".into())
    );
    let sum = &json["summary"];
    assert_eq!(
        [
            &stats["severities"]["error"],
            &stats["severities"]["warning"],
            &stats["severities"]["info"]
        ],
        [&sum["errors"], &sum["warnings"], &sum["info"]]
    );
    // Namespaces are audit's table.
    assert!(stats.get("namespaces").is_none(), "{stats}");

    // The CI formats have no place for the tables: refused, not dropped silently.
    let out = winlint(&["--statistics", "-o", "sarif", INPUT]);
    out.assert_code(2);
    assert!(out.stderr.contains("--statistics"), "{out}");
}

/// `--severity` hides findings below it from the report, never from the exit code.
fn severity_is_a_display_filter() {
    let out = winlint(&["--severity", "warning", INPUT]);
    out.assert_code(1);
    assert!(!out.stdout.contains(" info WIN"), "{out}");
    assert!(out.stdout.contains(" warning WIN003"), "{out}");
    assert!(
        out.stdout.lines().last().unwrap().starts_with(
            "2 errors, 4 warnings, 1 info in 1 file (2 objects, 2 pod templates checked); 1 not \
             shown (below --severity warning)"
        ),
        "{out}"
    );
    // Only warnings, none shown, and --fail-on warning still fails.
    let out = winlint(&[
        "--severity",
        "error",
        "--fail-on",
        "warning",
        "testdata/text/warnings.yaml",
    ]);
    out.assert_code(1);
    assert!(!out.stdout.contains("WIN408"), "{out}");
    let json = winlint(&["--severity", "error", "-o", "json", INPUT]).json();
    let sevs: Vec<&Value> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f["severity"])
        .collect();
    assert_eq!(sevs, [&Value::from("error"), &Value::from("error")]);
    assert_eq!(json["summary"]["warnings"], 4);
    assert_eq!(json["summary"]["shown_from"], "error");
    assert_eq!(json["summary"]["not_shown"], 5);
}

/// JSON gains `namespace` where the manifest sets one; the other keys stay as they were.
fn json_names_the_namespace_the_manifest_gives() {
    let json = winlint(&["-o", "json", INPUT]).json();
    let findings = json["findings"].as_array().unwrap();
    for f in findings {
        let keys: Vec<&str> = f.as_object().unwrap().keys().map(String::as_str).collect();
        match f["object"].as_str().unwrap() {
            "Deployment/iis-frontend" => {
                assert_eq!(f["namespace"], "shop");
                assert_eq!(
                    keys[..8],
                    [
                        "rule",
                        "name",
                        "severity",
                        "file",
                        "line",
                        "column",
                        "namespace",
                        "pointer"
                    ]
                );
            }
            "Pod/agent" => assert!(f.get("namespace").is_none(), "{f}"),
            other => panic!("unexpected object {other}"),
        }
    }
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use cli_support::skip_support::{run, test};
    run(vec![
        test(
            "grouped_layout_is_exact_at_a_fixed_width",
            grouped_layout_is_exact_at_a_fixed_width,
        ),
        test(
            "a_pipe_gets_one_line_per_finding",
            a_pipe_gets_one_line_per_finding,
        ),
        test(
            "a_terminal_gets_the_grouped_layout_at_its_width",
            a_terminal_gets_the_grouped_layout_at_its_width,
        ),
        test(
            "statistics_count_per_rule_and_severity",
            statistics_count_per_rule_and_severity,
        ),
        test("severity_is_a_display_filter", severity_is_a_display_filter),
        test(
            "json_names_the_namespace_the_manifest_gives",
            json_names_the_namespace_the_manifest_gives,
        ),
    ]);
}
