//! The CI formats' exact output (`-o github`, `-o codequality`, `-o sarif`) on
//! testdata/formats/, against the golden files beside it (`WINLINT_BLESS=1` rewrites them), and
//! the properties CI systems rely on: GitHub's escaping, fingerprints that survive line moves,
//! what GitHub code scanning requires of SARIF.

mod cli_support;

use cli_support::{Run, root, winlint};
use serde_json::Value;

const INPUT: &str = "testdata/formats/input/";

/// The SARIF report names the directory winlint ran in; the golden file says `{{SRCROOT}}`.
fn srcroot_uri() -> String {
    format!("file://{}/", root().display())
}

fn golden(name: &str, actual: &str) {
    cli_support::golden(&format!("testdata/formats/{name}"), actual);
}

#[test]
fn github_output_is_exact() {
    let out = winlint(&["-o", "github", INPUT]);
    out.assert_code(2);
    golden("expected.github.txt", &out.stdout);
}

#[test]
fn codequality_output_is_exact() {
    let out = winlint(&["-o", "codequality", INPUT]);
    out.assert_code(2);
    golden("expected.codequality.json", &out.stdout);
    // It is JSON, and every issue has the fields GitLab requires.
    let issues: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(issues.len(), 7);
    for i in &issues {
        for k in ["description", "check_name", "fingerprint", "severity"] {
            assert!(i[k].as_str().is_some_and(|s| !s.is_empty()), "{k} in {i}");
        }
        assert!(
            ["info", "minor", "major", "critical", "blocker"]
                .contains(&i["severity"].as_str().unwrap())
        );
        assert!(i["location"]["path"].is_string(), "{i}");
        assert!(
            i["location"]["lines"]["begin"].as_u64().unwrap() >= 1,
            "{i}"
        );
    }
}

#[test]
fn sarif_output_is_exact() {
    let out = winlint(&["-o", "sarif", INPUT]);
    out.assert_code(2);
    golden(
        "expected.sarif.json",
        &out.stdout.replace(&srcroot_uri(), "{{SRCROOT}}"),
    );
}

/// What docs.github.com ("SARIF support for code scanning") marks required, and the relative-URI
/// guidance: `uriBaseId` with `originalUriBaseIds`.
#[test]
fn sarif_has_what_github_code_scanning_requires() {
    let out = winlint(&["-o", "sarif", INPUT]);
    let s = out.json();
    assert_eq!(s["version"], "2.1.0");
    let run = &s["runs"][0];
    assert_eq!(run["originalUriBaseIds"]["%SRCROOT%"]["uri"], srcroot_uri());
    assert_eq!(
        run["invocations"][0]["workingDirectory"]["uri"],
        srcroot_uri()
    );
    for r in run["tool"]["driver"]["rules"].as_array().unwrap() {
        for k in ["shortDescription", "fullDescription", "help"] {
            let t = r[k]["text"].as_str().unwrap_or("");
            assert!(
                !t.is_empty() && t.len() <= 1024 || k == "help",
                "{k} of {r}"
            );
        }
        assert!(!r["help"]["text"].as_str().unwrap().is_empty());
        assert!(r["help"]["markdown"].is_string());
        assert!(r["properties"]["tags"].is_array());
        assert!(r["properties"]["problem.severity"].is_string());
        assert!(r["name"].as_str().unwrap().len() <= 255);
    }
    let results = run["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for res in results {
        assert!(!res["message"]["text"].as_str().unwrap().is_empty());
        let art = &res["locations"][0]["physicalLocation"]["artifactLocation"];
        assert_eq!(art["uri"], "testdata/formats/input/web.yaml");
        assert_eq!(art["uriBaseId"], "%SRCROOT%");
        assert_eq!(
            res["fingerprints"]["winlint/v1"].as_str().unwrap().len(),
            64
        );
    }
}

/// Inserting lines above the findings moves them but keeps every fingerprint (codequality and
/// SARIF), so GitLab and GitHub see the same issues, not new ones.
#[test]
fn fingerprints_survive_line_moves() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join(INPUT).join("web.yaml")).unwrap();
    std::fs::write(dir.path().join("web.yaml"), &text).unwrap();
    let report = |format: &str| -> Value {
        let out = Run::new(&["-o", format, "web.yaml"]).cwd(dir.path()).run();
        out.assert_code(1);
        out.json()
    };
    let prints = |cq: &Value, sarif: &Value| -> (Vec<(String, u64)>, Vec<String>) {
        let cq = cq
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                (
                    i["fingerprint"].as_str().unwrap().to_string(),
                    i["location"]["lines"]["begin"].as_u64().unwrap(),
                )
            })
            .collect();
        let sarif = sarif["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                r["fingerprints"]["winlint/v1"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        (cq, sarif)
    };
    let (before, sarif_before) = prints(&report("codequality"), &report("sarif"));
    std::fs::write(
        dir.path().join("web.yaml"),
        format!("# one\n# two\n# three\n{text}"),
    )
    .unwrap();
    let (after, sarif_after) = prints(&report("codequality"), &report("sarif"));
    assert_eq!(before.len(), 6);
    for ((p0, l0), (p1, l1)) in before.iter().zip(&after) {
        assert_eq!(p0, p1, "the fingerprint is kept");
        assert_eq!(l0 + 3, *l1, "the line moved");
    }
    assert_eq!(sarif_before, sarif_after);
    let distinct: std::collections::BTreeSet<_> = before.iter().map(|(p, _)| p).collect();
    assert_eq!(distinct.len(), before.len(), "fingerprints are distinct");
    // The codequality and SARIF fingerprints of a finding are the same identity.
    assert_eq!(
        before.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>(),
        sarif_before
    );
}

/// A file name with `,`, `:` and `%` is escaped in the annotation's properties, as GitHub's
/// toolkit does; `./` is dropped so the path matches the checkout's.
#[test]
fn github_escapes_file_names() {
    let dir = tempfile::tempdir().unwrap();
    let name = "a,b:c%d.yaml";
    std::fs::copy(root().join(INPUT).join("web.yaml"), dir.path().join(name)).unwrap();
    let out = Run::new(&["-o", "github", &format!("./{name}")])
        .cwd(dir.path())
        .run();
    out.assert_code(1);
    let first = out.stdout.lines().next().unwrap();
    assert!(
        first.starts_with(
            "::error file=a%2Cb%3Ac%25d.yaml,line=13,col=5,title=WIN001 missing-os-selector::"
        ),
        "{first}"
    );
}

/// A manifest's line breaks, carriage returns and terminal escapes never reach a text report
/// raw (issue 30): a name can neither forge a report line (in GitHub Actions a workflow command,
/// `::error …`) nor drive the terminal. One hostile pod, every text format.
#[test]
fn control_characters_from_a_manifest_are_escaped_in_every_text_format() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("evil.yaml");
    std::fs::write(
        &path,
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: \"web\\n::error file=x.yaml::forged\\r\\e[2J\\u009b31m\"\n  namespace: \"ns\\n::add-mask::x\"\nspec:\n  containers:\n  - name: \"c\\nd\"\n    image: \"mcr.microsoft.com/windows/servercore:ltsc2022\"\n",
    )
    .unwrap();
    let p = path.to_str().unwrap();
    for format in [
        &["-o", "text"][..],
        &["-o", "github"],
        &["-o", "text", "--layout", "grouped"],
    ] {
        let out = Run::new(format).arg(p).run();
        assert!(out.code() == 1 || out.code() == 2, "{format:?}: {out}");
        assert!(
            out.stdout.contains("forged"),
            "{format:?}: no finding names the pod\n{out}"
        );
        for (i, line) in out.stdout.lines().enumerate() {
            assert!(
                !line.chars().any(|c| c.is_control()),
                "{format:?}: line {i} holds a raw control character: {line:?}"
            );
            // Only the report's own commands start a line (a finding, an error, not a forgery).
            if format[1] == "github" && line.starts_with("::") {
                assert!(
                    line.starts_with("::error file=")
                        || line.starts_with("::warning file=")
                        || line.starts_with("::notice file="),
                    "{line}"
                );
            } else {
                assert!(!line.starts_with("::"), "{format:?}: forged line {line:?}");
            }
        }
        let shown = match format[1] {
            "github" => r"web%0A::error file=x.yaml::forged%0D\u{1b}[2J\u{9b}31m",
            _ => r"web\n::error file=x.yaml::forged\r\u{1b}[2J\u{9b}31m",
        };
        assert!(
            out.stdout.contains(shown),
            "{format:?}: not {shown}\n{}",
            out.stdout
        );
    }
}
