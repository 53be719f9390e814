//! The `winlint` binary end to end: locations in multi-document files, every pod-bearing kind,
//! exit codes, the text/JSON/SARIF reports, `rules`/`explain`, targets and configuration.
//!
//! Fixtures live in `testdata/cli/`. Expected lines and columns are computed from the fixture
//! text (the line holding `name: ConnectionStrings:Default`, …), never copied from the tool.
//! Bad input is in `tests/cli_bad_input.rs`, `--fix` in `tests/cli_fix.rs`, the Linux corpus in
//! `tests/cli_linux.rs`.

mod cli_support;

use std::collections::BTreeSet;

use cli_support::*;
use serde_json::Value;

const MULTI: &str = "testdata/cli/multi-doc.yaml";

// ---------------------------------------------------------------------------------------------
// 1. Locations in multi-document files

/// The multi-document fixture plants a WIN308 (off by default) five levels deep: enabled here.
fn multi_report() -> Value {
    let out = winlint(&["-o", "json", "--enable", "WIN308", MULTI]);
    out.assert_code(1);
    out.json()
}

#[test]
fn multi_doc_env_name_points_at_the_key_in_the_first_document() {
    let text = fixture(MULTI);
    let r = multi_report();
    let f = the_finding(&r, "WIN403", "/spec/template/spec/containers/0/env/1/name");
    let line = line_of(&text, "name: ConnectionStrings:Default");
    assert_eq!(f["line"], line, "{f}");
    assert_eq!(f["column"], column_of(&text, line, "name:"), "{f}");
    assert_eq!(f["file"], MULTI);
    assert_eq!(f["name"], "env-name-invalid");
    assert_eq!(f["object"], "Deployment/shop");
}

#[test]
fn multi_doc_missing_fields_point_at_the_nearest_existing_parent() {
    let text = fixture(MULTI);
    let r = multi_report();
    // The Deployment has no nodeSelector and no tolerations: both point at its pod spec, the
    // `spec:` under `template:` (the second `    spec:` at four spaces in the file).
    let spec_line = text
        .lines()
        .position(|l| l == "    spec:")
        .expect("template spec line")
        + 1;
    assert!(
        text.lines().nth(spec_line - 2).unwrap().contains("labels:"),
        "fixture layout changed"
    );
    for rule in ["WIN001", "WIN007"] {
        let f = the_finding(&r, rule, "/spec/template/spec");
        assert_eq!(
            (f["line"].as_u64(), f["column"].as_u64()),
            (Some(spec_line as u64), Some(5)),
            "{f}"
        );
        let patch_path = f["fix"]["patch"][0]["path"].as_str().unwrap_or("");
        assert!(
            patch_path.starts_with("/spec/template/spec/"),
            "{rule} fix adds below the pod spec: {f}"
        );
    }
}

#[test]
fn multi_doc_cronjob_finding_five_levels_deep() {
    let text = fixture(MULTI);
    let r = multi_report();
    let f = the_finding(
        &r,
        "WIN308",
        "/spec/jobTemplate/spec/template/spec/containers/0/volumeMounts/0/mountPath",
    );
    let line = line_of(&text, "mountPath: /reports");
    assert_eq!(f["line"], line, "{f}");
    assert_eq!(f["column"], column_of(&text, line, "mountPath"), "{f}");
    assert_eq!(f["object"], "CronJob/nightly");
}

#[test]
fn multi_doc_alias_findings_point_at_the_alias() {
    let text = fixture(MULTI);
    let r = multi_report();
    // The app container's own resources: the `memory` key inside the flow mapping.
    let f = the_finding(&r, "WIN408", "/spec/containers/0/resources/requests/memory");
    let line = line_of(&text, "requests: {memory: 100Mi}");
    assert_eq!(f["line"], line, "{f}");
    assert_eq!(f["column"], column_of(&text, line, "memory"), "{f}");
    // The init container reaches the same values through `*res`: the finding points at the
    // `resources: *res` entry, the nearest node written in the text.
    let f = the_finding(
        &r,
        "WIN408",
        "/spec/initContainers/0/resources/requests/memory",
    );
    let line = line_of(&text, "resources: *res");
    assert_eq!(f["line"], line, "{f}");
    assert_eq!(f["column"], column_of(&text, line, "resources"), "{f}");
}

#[test]
fn multi_doc_list_items_carry_the_items_prefix_and_their_own_line() {
    let text = fixture(MULTI);
    let r = multi_report();
    let f = the_finding(&r, "WIN303", "/items/1/spec/volumes/0/emptyDir/medium");
    let line = line_of(&text, "medium: Memory");
    assert_eq!(f["line"], line, "{f}");
    assert_eq!(f["column"], column_of(&text, line, "medium"), "{f}");
    assert_eq!(f["object"], "Pod/cache");
    // The ConfigMap item is counted as an object but is not a pod.
    assert_eq!(
        r["summary"]["objects"], 5,
        "Deployment, CronJob, Pod, ConfigMap, Pod"
    );
    assert_eq!(r["summary"]["pods"], 4);
}

#[test]
fn multi_doc_finds_exactly_the_planted_faults() {
    let r = multi_report();
    let got: BTreeSet<(String, String)> = findings(&r)
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["pointer"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want: BTreeSet<(String, String)> = [
        ("WIN001", "/spec/template/spec"),
        ("WIN007", "/spec/template/spec"),
        ("WIN403", "/spec/template/spec/containers/0/env/1/name"),
        (
            "WIN308",
            "/spec/jobTemplate/spec/template/spec/containers/0/volumeMounts/0/mountPath",
        ),
        ("WIN408", "/spec/containers/0/resources/requests/memory"),
        ("WIN408", "/spec/initContainers/0/resources/requests/memory"),
        ("WIN303", "/items/1/spec/volumes/0/emptyDir/medium"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(got, want, "findings:\n{}", brief(&r));
}

#[test]
fn unusual_yaml_locations() {
    let f = "testdata/cli/odd-yaml.yaml";
    let text = fixture(f);
    // Its findings are WIN308's (off by default), at odd YAML locations.
    let out = winlint(&["-o", "json", "--enable", "WIN308", f]);
    out.assert_code(0);
    let r = out.json();
    assert_eq!(findings(&r).len(), 3, "{}", brief(&r));
    for (pointer, needle) in [
        (
            "/spec/containers/0/volumeMounts/0/mountPath",
            "mountPath: /explicit-key",
        ),
        (
            "/spec/containers/1/volumeMounts/0/mountPath",
            "mountPath: /multiline-flow",
        ),
        (
            "/spec/containers/0/volumeMounts/0/mountPath",
            "mountPath: /same-line",
        ),
    ] {
        let line = line_of(&text, needle);
        let hit = findings(&r)
            .iter()
            .find(|x| x["line"] == line && x["pointer"] == pointer)
            .unwrap_or_else(|| panic!("no WIN308 at line {line} ({needle})\n{}", brief(&r)));
        assert_eq!(hit["rule"], "WIN308");
        assert_eq!(hit["column"], column_of(&text, line, needle), "{hit}");
    }
}

#[test]
fn findings_are_sorted_by_line() {
    let r = multi_report();
    let lines: Vec<u64> = findings(&r)
        .iter()
        .map(|f| f["line"].as_u64().unwrap())
        .collect();
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted);
}

#[test]
fn crlf_and_bom_do_not_shift_locations() {
    let text = fixture(MULTI);
    let line = line_of(&text, "name: ConnectionStrings:Default");
    let col = column_of(&text, line, "name:");
    let dir = tempfile::tempdir().unwrap();
    let crlf = dir.path().join("crlf.yaml");
    std::fs::write(&crlf, text.replace('\n', "\r\n")).unwrap();
    let bom = dir.path().join("bom.yaml");
    std::fs::write(&bom, format!("\u{feff}{text}")).unwrap();
    for p in [&crlf, &bom] {
        let out = winlint(&["-o", "json", p.to_str().unwrap()]);
        out.assert_code(1);
        let r = out.json();
        let f = the_finding(&r, "WIN403", "/spec/template/spec/containers/0/env/1/name");
        assert_eq!(
            (f["line"].as_u64(), f["column"].as_u64()),
            (Some(line as u64), Some(col as u64)),
            "{}",
            p.display()
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Every pod-bearing kind, other kinds skipped, JSON input, stdin

const KINDS: &[(&str, &str)] = &[
    ("pod.yaml", "/spec"),
    ("deployment.yaml", "/spec/template/spec"),
    ("replicaset.yaml", "/spec/template/spec"),
    ("statefulset.yaml", "/spec/template/spec"),
    ("daemonset.yaml", "/spec/template/spec"),
    ("job.yaml", "/spec/template/spec"),
    ("cronjob.yaml", "/spec/jobTemplate/spec/template/spec"),
    ("replicationcontroller.yaml", "/spec/template/spec"),
    ("podtemplate.yaml", "/template/spec"),
    ("deployment.json", "/spec/template/spec"),
];

#[test]
fn every_pod_bearing_kind_gets_the_same_finding_with_its_prefix() {
    for (file, prefix) in KINDS {
        let rel = format!("testdata/cli/kinds/{file}");
        let text = fixture(&rel);
        let out = winlint(&["-o", "json", &rel]);
        out.assert_code(0); // WIN403 is info on the default target (1.34)
        let r = out.json();
        assert_eq!(findings(&r).len(), 1, "{rel}:\n{}", brief(&r));
        let f = the_finding(&r, "WIN403", &format!("{prefix}/containers/0/env/0/name"));
        let needle = if file.ends_with(".json") {
            "\"name\": \"Logging:LogLevel\""
        } else {
            "name: Logging:LogLevel"
        };
        let line = line_of(&text, needle);
        let key = if file.ends_with(".json") {
            "\"name\""
        } else {
            "name"
        };
        assert_eq!(f["line"], line, "{rel}: {f}");
        assert_eq!(f["column"], column_of(&text, line, key), "{rel}: {f}");
        assert_eq!(r["summary"]["pods"], 1, "{rel}");
    }
}

#[test]
fn kinds_directory_is_linted_recursively_and_other_kinds_are_skipped() {
    let out = winlint(&["-o", "json", "testdata/cli/kinds"]);
    out.assert_code(0);
    let r = out.json();
    let files: BTreeSet<&str> = findings(&r)
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    let want: BTreeSet<String> = KINDS
        .iter()
        .map(|(f, _)| format!("testdata/cli/kinds/{f}"))
        .collect();
    assert_eq!(
        files,
        want.iter().map(String::as_str).collect::<BTreeSet<_>>(),
        "{}",
        brief(&r)
    );
    assert_eq!(findings(&r).len(), KINDS.len(), "{}", brief(&r));
    // not-pods.yaml: a Service and a ConfigMap, counted as objects, never as pods.
    assert_eq!(r["summary"]["pods"], KINDS.len());
    assert_eq!(r["summary"]["objects"], KINDS.len() + 2);
    assert_eq!(r["summary"]["files"], KINDS.len() + 1);
}

#[test]
fn directories_lint_symlinked_manifests() {
    // A directory of links (shared manifests linked into an overlay) must not lint as empty:
    // a silent "0 files" is a green CI run that checked nothing.
    let dir = tempfile::tempdir().unwrap();
    let target = root().join("testdata/cli/kinds/pod.yaml");
    std::os::unix::fs::symlink(&target, dir.path().join("pod.yaml")).unwrap();
    let out = winlint(&["-o", "json", dir.path().to_str().unwrap()]);
    out.assert_clean_exit();
    let r = out.json();
    assert_eq!(
        r["summary"]["files"], 1,
        "symlinked manifest skipped\n{out}"
    );
    the_finding(&r, "WIN403", "/spec/containers/0/env/0/name");
}

#[test]
fn the_same_file_named_twice_is_linted_once() {
    let out = winlint(&[
        "-o",
        "json",
        "testdata/cli/kinds/pod.yaml",
        "./testdata/cli/kinds/pod.yaml",
        "testdata/cli/kinds/../kinds/pod.yaml",
    ]);
    out.assert_code(0);
    let r = out.json();
    assert_eq!(r["summary"]["files"], 1, "{}", brief(&r));
    assert_eq!(findings(&r).len(), 1, "{}", brief(&r));
}

#[test]
fn service_and_configmap_only_give_nothing() {
    let out = winlint(&["-o", "json", "testdata/cli/kinds/not-pods.yaml"]);
    out.assert_code(0);
    let r = out.json();
    assert!(findings(&r).is_empty(), "{}", brief(&r));
    assert_eq!(r["summary"]["pods"], 0);
    assert_eq!(r["summary"]["objects"], 2);
}

#[test]
fn stdin_dash_reads_the_manifest() {
    let text = fixture("testdata/cli/kinds/cronjob.yaml");
    let out = winlint_stdin(&["-o", "json", "-"], text.clone());
    out.assert_code(0);
    let r = out.json();
    let f = the_finding(
        &r,
        "WIN403",
        "/spec/jobTemplate/spec/template/spec/containers/0/env/0/name",
    );
    assert_eq!(f["line"], line_of(&text, "name: Logging:LogLevel"));
    assert_eq!(f["file"], "<stdin>");
    // Text output names stdin too, and the exit code follows the findings.
    let out = winlint_stdin(
        &["--kubernetes-version", "1.30", "-"],
        fixture("testdata/cli/kinds/pod.yaml"),
    );
    out.assert_code(1);
    assert!(out.stdout.starts_with("<stdin>:"), "{out}");
}

#[test]
fn json_on_stdin_works() {
    let out = winlint_stdin(
        &["-o", "json", "-"],
        fixture("testdata/cli/kinds/deployment.json"),
    );
    out.assert_code(0);
    let r = out.json();
    the_finding(&r, "WIN403", "/spec/template/spec/containers/0/env/0/name");
}

// ---------------------------------------------------------------------------------------------
// 3. Exit codes

const WINOK: &str = "apiVersion: v1
kind: Pod
metadata: {name: winok}
spec:
  os: {name: windows}
  nodeSelector: {kubernetes.io/os: windows}
  tolerations: [{key: os, operator: Equal, value: windows, effect: NoSchedule}]
  containers:
  - name: app
    image: mcr.microsoft.com/windows/servercore:ltsc2022
";

/// WINOK plus a Secret volume: one warning (WIN314), nothing else.
fn winok_with_warning() -> String {
    format!("{WINOK}  volumes:\n  - name: s\n    secret: {{secretName: s}}\n")
}

#[test]
fn exit_0_when_clean() {
    let out = winlint_stdin(&["-"], WINOK);
    out.assert_code(0);
    assert!(
        out.stdout
            .contains("0 errors, 0 warnings, 0 info in 1 file"),
        "{out}"
    );
}

#[test]
fn exit_0_with_warnings_only_and_1_with_fail_on_warning() {
    let out = winlint_stdin(&["-o", "json", "-"], winok_with_warning());
    out.assert_code(0);
    let r = out.json();
    assert_eq!(r["summary"]["warnings"], 1, "{}", brief(&r));
    assert_eq!(r["summary"]["errors"], 0, "{}", brief(&r));
    the_finding(&r, "WIN314", "/spec/volumes/0/secret");
    winlint_stdin(&["--fail-on", "warning", "-"], winok_with_warning()).assert_code(1);
    winlint_stdin(&["--fail-on", "error", "-"], winok_with_warning()).assert_code(0);
    winlint_stdin(&["--fail-on", "never", "-"], fixture(MULTI)).assert_code(0);
}

#[test]
fn exit_0_with_info_only_and_1_with_fail_on_info() {
    let pod = fixture("testdata/cli/kinds/pod.yaml"); // WIN403 info on 1.34
    winlint_stdin(&["-"], pod.clone()).assert_code(0);
    winlint_stdin(&["--fail-on", "info", "-"], pod.clone()).assert_code(1);
    winlint_stdin(&["--fail-on", "warning", "-"], pod).assert_code(0);
}

#[test]
fn exit_1_on_errors() {
    winlint(&[MULTI]).assert_code(1);
}

fn assert_usage_error(args: &[&str], needle: &str) {
    let out = winlint(args);
    out.assert_code(2);
    assert!(
        out.stderr.contains(needle),
        "stderr should mention {needle:?}\n{out}"
    );
    assert!(out.stdout.is_empty(), "no report on a usage error\n{out}");
}

#[test]
fn exit_2_on_usage_errors() {
    assert_usage_error(&["--no-such-flag", MULTI], "--no-such-flag");
    assert_usage_error(&["--windows-build", "vista", MULTI], "vista");
    assert_usage_error(&["--windows-build", "10.0.x", MULTI], "10.0.x");
    assert_usage_error(&["--kubernetes-version", "one.thirty", MULTI], "one.thirty");
    assert_usage_error(&["--isolation", "chroot", MULTI], "chroot");
    assert_usage_error(&["--feature-gate", "NoValue", MULTI], "NoValue");
    assert_usage_error(&["--fix-opt-in", "WIN999", MULTI], "WIN999");
    assert_usage_error(&["--disable", "no-such-rule", MULTI], "no-such-rule");
    assert_usage_error(&["-o", "xml", MULTI], "xml");
    assert_usage_error(&[], "no input");
}

#[test]
fn help_and_version_exit_0() {
    for args in [
        &["--help"][..],
        &["-h"],
        &["--version"],
        &["rules", "--help"],
    ] {
        let out = winlint(args);
        out.assert_code(0);
        assert!(!out.stdout.is_empty(), "{out}");
    }
}

#[test]
fn accepted_windows_build_spellings() {
    for b in [
        "ltsc2022",
        "1709",
        "20H2",
        "10.0.20348",
        "ltsc2019,ltsc2022",
    ] {
        let out = winlint_stdin(&["--windows-build", b, "-"], WINOK);
        out.assert_clean_exit();
        assert_ne!(out.code(), 2, "--windows-build {b} is valid\n{out}");
    }
}

#[test]
fn exit_2_on_unreadable_file_and_other_files_still_linted() {
    let out = winlint(&[
        "-o",
        "json",
        "testdata/cli/does-not-exist.yaml",
        "testdata/cli/kinds/pod.yaml",
    ]);
    out.assert_code(2);
    let r = out.json();
    let errs = r["errors"].as_array().unwrap();
    assert_eq!(errs.len(), 1, "{r}");
    assert_eq!(errs[0]["file"], "testdata/cli/does-not-exist.yaml");
    the_finding(&r, "WIN403", "/spec/containers/0/env/0/name");
}

/// Context objects apply across files: T52's RuntimeClass, moved into another file between a
/// Service and a ConfigMap, still tells the pod in this file which Windows build it lands on.
#[test]
fn context_from_another_file_applies() {
    let case = fixture("testdata/rules/WIN006/runtimeclass-build/input.yaml");
    let (runtime_class, pod) = case.split_once("\n---\n").expect("T52 has two documents");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a-cluster.yaml"),
        format!(
            "apiVersion: v1\nkind: Service\nmetadata: {{name: s}}\n---\n{runtime_class}\n---\n\
             apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.path().join("b-pod.yaml"), pod).unwrap();
    let args = [
        "--kubernetes-version",
        "1.30",
        "--windows-build",
        "ltsc2019",
    ];
    let with_context =
        winlint(&[&args[..], &["-o", "json", dir.path().to_str().unwrap()]].concat());
    with_context.assert_code(1);
    let r = with_context.json();
    let f = the_finding(&r, "WIN006", "/spec/runtimeClassName");
    assert!(f["file"].as_str().unwrap().ends_with("b-pod.yaml"), "{f}");

    // Without the other file the RuntimeClass is unknown, and WIN006 has nothing to compare.
    let alone = winlint(
        &[
            &args[..],
            &[
                "-o",
                "json",
                dir.path().join("b-pod.yaml").to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    assert!(
        findings(&alone.json())
            .iter()
            .all(|f| f["rule"] != "WIN006"),
        "{}",
        brief(&alone.json())
    );
}

#[test]
fn broken_yaml_is_reported_with_its_line_and_other_files_still_linted() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("a-broken.yaml");
    // Document 1 is fine, document 2 breaks on its 3rd line (line 6 of the file).
    std::fs::write(
        &broken,
        "apiVersion: v1\nkind: ConfigMap\n---\napiVersion: v1\nkind: Pod\nspec: {containers: [\n",
    )
    .unwrap();
    std::fs::copy(
        root().join("testdata/cli/kinds/deployment.yaml"),
        dir.path().join("b-good.yaml"),
    )
    .unwrap();
    let d = dir.path().to_str().unwrap();

    let out = winlint(&["-o", "json", d]);
    out.assert_code(2);
    let r = out.json();
    let errs = r["errors"].as_array().unwrap();
    assert_eq!(errs.len(), 1, "{r}");
    assert_eq!(errs[0]["file"], broken.to_str().unwrap());
    let line = errs[0]["line"].as_u64().unwrap();
    assert!(
        (6..=7).contains(&line),
        "error line {line} should be where the flow sequence breaks (6, or 7 = end of input)"
    );
    the_finding(&r, "WIN403", "/spec/template/spec/containers/0/env/0/name");
    assert_eq!(r["summary"]["input_errors"], 1);

    // Text: `file:line:col: error …` for the broken file, the finding of the good one.
    let out = winlint(&[d]);
    out.assert_code(2);
    let prefix = format!("{}:{line}:", broken.display());
    let err_line = out
        .stdout
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no {prefix}… line\n{out}"));
    assert!(err_line.contains(" error "), "{err_line}");
    assert!(out.stdout.contains("WIN403 env-name-invalid"), "{out}");
    assert!(out.stdout.contains("1 input could not be read"), "{out}");
}

// ---------------------------------------------------------------------------------------------
// 4. Output formats

#[test]
fn text_line_shape_and_summary() {
    let text = fixture(MULTI);
    let out = winlint(&["--enable", "WIN308", MULTI]);
    out.assert_code(1);
    let re = regex::Regex::new(
        r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<object>(?:[a-z0-9-]+/)?[A-Za-z]+/[a-z0-9.-]+): (?P<sev>error|warning|info) (?P<id>WIN\d{3}) (?P<name>[a-z0-9-]+): (?P<msg>.+)$",
    )
    .unwrap();
    let mut n = 0;
    for l in out.stdout.lines().filter(|l| l.starts_with(MULTI)) {
        let c = re
            .captures(l)
            .unwrap_or_else(|| panic!("bad line shape: {l:?}"));
        assert_eq!(&c["file"], MULTI);
        assert!(!c["msg"].is_empty());
        n += 1;
    }
    assert_eq!(n, 7, "{out}");
    let env_line = line_of(&text, "name: ConnectionStrings:Default");
    let want = format!(
        "{MULTI}:{env_line}:{}: Deployment/shop: info WIN403 env-name-invalid: ",
        column_of(&text, env_line, "name:")
    );
    assert!(
        out.stdout.lines().any(|l| l.starts_with(&want)),
        "missing {want:?}\n{out}"
    );
    let last = out.stdout.lines().last().unwrap();
    assert!(
        last.starts_with(
            "2 errors, 3 warnings, 2 info in 1 file (5 objects, 4 pod templates checked)"
        ),
        "summary: {last:?}"
    );
    assert!(last.contains("3 fixable with --fix"), "summary: {last:?}");
    assert!(
        !out.stdout_bytes.contains(&0x1b),
        "NO_COLOR: no escape codes"
    );
}

#[test]
fn colour_choices() {
    let esc = |o: &Out| o.stdout_bytes.contains(&0x1b);
    // NO_COLOR (set by the helper) and a pipe: plain.
    assert!(!esc(&winlint(&[MULTI])));
    assert!(!esc(&winlint(&["--color", "never", MULTI])));
    assert!(!esc(&Run::new(&["--color", "never", MULTI])
        .without_no_color()
        .run()));
    // auto on a pipe: plain even without NO_COLOR.
    assert!(!esc(&Run::new(&[MULTI]).without_no_color().run()));
    // always: coloured, also the summary.
    let out = Run::new(&["--color", "always", MULTI])
        .without_no_color()
        .run();
    out.assert_code(1);
    assert!(esc(&out), "{out}");
    assert!(out.stdout.contains("\x1b["), "{out}");
    // JSON is never coloured.
    let out = Run::new(&["--color", "always", "-o", "json", MULTI])
        .without_no_color()
        .run();
    assert!(!esc(&out));
    out.json();
}

/// `winlint ARGS` on a pseudo-terminal (util-linux `script`), or `None` when unavailable.
fn on_a_terminal(args: &str, no_color: bool) -> Option<Out> {
    let probe = std::process::Command::new("script")
        .args(["-qec", "true", "/dev/null"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        eprintln!("note: no `script` to allocate a terminal; terminal colour case skipped");
        return None;
    }
    let cmdline = format!("'{}' {args}", bin());
    let mut run = Run::new::<&str>(&[])
        .program(&["script", "-qec", &cmdline, "/dev/null"])
        .without_no_color();
    if no_color {
        run = run.env("NO_COLOR", "1");
    }
    Some(run.run())
}

#[test]
fn colour_on_a_terminal_unless_no_color() {
    let Some(tty) = on_a_terminal(MULTI, false) else {
        return;
    };
    assert!(
        tty.stdout.contains("\x1b["),
        "a terminal gets colour\n{tty}"
    );
    assert!(tty.stdout.contains("WIN403"), "{tty}");
    let Some(plain) = on_a_terminal(MULTI, true) else {
        return;
    };
    assert!(plain.stdout.contains("WIN403"), "{plain}");
    assert!(
        !plain.stdout.contains('\x1b'),
        "NO_COLOR is respected on a terminal\n{plain}"
    );
    let Some(never) = on_a_terminal(&format!("--color never {MULTI}"), false) else {
        return;
    };
    assert!(!never.stdout.contains('\x1b'), "{never}");
    // An explicit --color always wins over NO_COLOR (no-color.org).
    let Some(always) = on_a_terminal(&format!("--color always {MULTI}"), true) else {
        return;
    };
    assert!(always.stdout.contains("\x1b["), "{always}");
}

#[test]
fn json_contract_fields() {
    let r = multi_report();
    for f in findings(&r) {
        for (k, is) in [
            ("rule", Value::is_string as fn(&Value) -> bool),
            ("name", Value::is_string),
            ("severity", Value::is_string),
            ("file", Value::is_string),
            ("line", Value::is_u64),
            ("column", Value::is_u64),
            ("pointer", Value::is_string),
            ("message", Value::is_string),
        ] {
            assert!(is(&f[k]), "finding field {k} missing or mistyped: {f}");
        }
        assert!(
            ["error", "warning", "info"].contains(&f["severity"].as_str().unwrap()),
            "{f}"
        );
        assert!(f["line"].as_u64().unwrap() >= 1 && f["column"].as_u64().unwrap() >= 1);
        assert!(f["pointer"].as_str().unwrap().starts_with('/'));
        assert!(f["rule"].as_str().unwrap().starts_with("WIN"));
    }
    let s = &r["summary"];
    // WIN007 on the assumed default taint is a warning.
    assert_eq!(s["errors"], 2);
    assert_eq!(s["warnings"], 3);
    assert_eq!(s["info"], 2);
    assert_eq!(s["files"], 1);
    assert_eq!(s["fixable"], 3);
    assert!(r["errors"].as_array().unwrap().is_empty());
}

#[test]
fn json_fix_patch_paths_are_document_pointers_like_the_finding() {
    // A finding's pointer is prefixed with /items/N for a List item; its fix patch should be
    // addressed the same way, or a consumer applying it to the document edits the wrong node.
    let r = multi_report();
    let f = the_finding(&r, "WIN303", "/items/1/spec/volumes/0/emptyDir/medium");
    let path = f["fix"]["patch"][0]["path"].as_str().unwrap_or("");
    assert_eq!(path, "/items/1/spec/volumes/0/emptyDir/medium", "{f}");
}

fn rules_json() -> Vec<Value> {
    let out = winlint(&["rules", "-o", "json"]);
    out.assert_code(0);
    out.json().as_array().expect("rules array").clone()
}

#[test]
fn sarif_shape() {
    let text = fixture(MULTI);
    let out = winlint(&["-o", "sarif", "--enable", "WIN308", MULTI]);
    out.assert_code(1);
    let s = out.json();
    assert_eq!(s["version"], "2.1.0");
    assert!(s["$schema"].as_str().unwrap().contains("sarif"));
    let run = &s["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "winlint");
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let catalogue: Vec<String> = rules_json()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    let ids: Vec<String> = rules
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, catalogue, "SARIF lists every rule of `winlint rules`");
    for r in rules {
        let help = r["help"]["text"].as_str().unwrap_or("");
        assert!(help.len() > 40, "rule {} has no help text: {r}", r["id"]);
        assert!(r["shortDescription"]["text"].is_string(), "{r}");
    }
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 7);
    for res in results {
        let idx = res["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[idx]["id"], res["ruleId"], "ruleIndex matches ruleId");
        assert!(["error", "warning", "note"].contains(&res["level"].as_str().unwrap()));
        let loc = &res["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], MULTI);
    }
    let emptydir = results
        .iter()
        .find(|r| r["ruleId"] == "WIN303")
        .expect("WIN303 result");
    assert_eq!(emptydir["level"], "error");
    let region = &emptydir["locations"][0]["physicalLocation"]["region"];
    let line = line_of(&text, "medium: Memory");
    assert_ne!(region["startLine"], 1);
    assert_eq!(region["startLine"], line);
    assert_eq!(region["startColumn"], column_of(&text, line, "medium"));
    let info = results.iter().find(|r| r["ruleId"] == "WIN403").unwrap();
    assert_eq!(info["level"], "note");
}

#[test]
fn sarif_uris_are_valid_uri_references() {
    // RFC 3986: a space is not allowed in a URI; code-scanning uploads resolve these against
    // the checkout, so `my manifests/pod.yaml` must be written `my%20manifests/pod.yaml`.
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("my manifests");
    std::fs::create_dir(&sub).unwrap();
    std::fs::copy(
        root().join("testdata/cli/kinds/pod.yaml"),
        sub.join("pod.yaml"),
    )
    .unwrap();
    let out = Run::new(&["-o", "sarif", "my manifests/pod.yaml"])
        .cwd(dir.path())
        .run();
    out.assert_code(0);
    let s = out.json();
    let uri =
        s["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap()
            .to_string();
    assert_eq!(uri, "my%20manifests/pod.yaml");
}

#[test]
fn sarif_reports_input_errors_as_notifications() {
    let out = winlint_stdin(&["-o", "sarif", "-"], "a: [\n");
    out.assert_code(2);
    let s = out.json();
    let inv = &s["runs"][0]["invocations"][0];
    assert_eq!(inv["executionSuccessful"], false);
    assert_eq!(
        inv["toolExecutionNotifications"].as_array().unwrap().len(),
        1
    );
}

// ---------------------------------------------------------------------------------------------
// 5. rules / explain

/// The rule IDs of the catalogue (`testdata/rules/catalogue.txt`).
fn catalogue() -> BTreeSet<String> {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/rules/catalogue.txt"),
    )
    .expect("testdata/rules/catalogue.txt")
    .lines()
    .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    .filter_map(|l| l.split_whitespace().next())
    .map(String::from)
    .collect()
}

#[test]
fn rules_lists_the_whole_catalogue() {
    let want = catalogue();
    assert!(want.len() >= 61, "{want:?}");
    let out = winlint(&["rules"]);
    out.assert_code(0);
    let listed: BTreeSet<String> = out
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.starts_with("WIN"))
        .map(String::from)
        .collect();
    assert_eq!(listed, want, "text table");

    let json = rules_json();
    let ids: BTreeSet<String> = json
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, want, "rules -o json");
    assert_eq!(json.len(), want.len(), "no duplicates");
    let names: BTreeSet<&str> = json.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), json.len(), "names are unique");
    let kebab = regex::Regex::new(r"^[a-z0-9]+(-[a-z0-9]+)*$").unwrap();
    for r in &json {
        assert!(kebab.is_match(r["name"].as_str().unwrap()), "{r}");
        assert!(
            ["error", "warning", "info"].contains(&r["severity"].as_str().unwrap()),
            "{r}"
        );
        assert!(!r["summary"].as_str().unwrap().is_empty(), "{r}");
    }
    let env = json.iter().find(|r| r["id"] == "WIN403").unwrap();
    assert_eq!(env["name"], "env-name-invalid");
    assert_eq!(env["severity"], "error");
}

#[test]
fn explain_by_id_and_by_name() {
    let by_id = winlint(&["explain", "WIN403"]);
    by_id.assert_code(0);
    assert!(by_id.stdout.contains("WIN403"), "{by_id}");
    assert!(by_id.stdout.contains("env-name-invalid"), "{by_id}");
    assert!(by_id.stdout.len() > 300, "docs, not just a title\n{by_id}");
    let by_name = winlint(&["explain", "env-name-invalid"]);
    by_name.assert_code(0);
    assert_eq!(by_id.stdout, by_name.stdout);
    // Every rule has docs.
    for id in catalogue() {
        let out = winlint(&["explain", &id]);
        out.assert_code(0);
        assert!(out.stdout.contains(&id), "{out}");
    }
}

#[test]
fn explain_unknown_rule_is_a_usage_error() {
    for key in ["WIN999", "not-a-rule", ""] {
        let out = winlint(&["explain", key]);
        out.assert_code(2);
        assert!(out.stdout.is_empty(), "{out}");
        assert!(out.stderr.contains("unknown rule"), "{out}");
    }
}

// ---------------------------------------------------------------------------------------------
// 6. Targets and config

fn rules_of(r: &Value) -> Vec<(String, String)> {
    findings(r)
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn has(r: &Value, rule: &str, sev: &str) -> bool {
    rules_of(r).iter().any(|(a, b)| a == rule && b == sev)
}

#[test]
fn seed_era_target_rejects_secret_volumes_and_statefulsets() {
    let f = "testdata/cli/seed-era.yaml";
    let text = fixture(f);
    let out = winlint(&[
        "-o",
        "json",
        "--kubernetes-version",
        "1.9",
        "--windows-build",
        "1709",
        f,
    ]);
    out.assert_code(1);
    let r = out.json();
    assert!(has(&r, "WIN302", "error"), "{}", brief(&r));
    assert!(has(&r, "WIN601", "error"), "{}", brief(&r));
    assert!(
        !has(&r, "WIN314", "warning"),
        "WIN302 replaces WIN314 on 1709\n{}",
        brief(&r)
    );
    assert!(
        !rules_of(&r).iter().any(|(a, _)| a == "WIN002"),
        "beta label is right on 1.9"
    );
    let secret = the_finding(&r, "WIN302", "/spec/template/spec/volumes/0/secret");
    let line = line_of(&text, "secret:");
    assert_eq!(secret["line"], line, "{secret}");
    assert_eq!(
        secret["column"],
        column_of(&text, line, "secret:"),
        "{secret}"
    );
    let sts = the_finding(&r, "WIN601", "/kind");
    assert_eq!(sts["line"], line_of(&text, "kind: StatefulSet"), "{sts}");
    assert_eq!(sts["column"], 1, "{sts}");

    // Default target: the same manifest gets no seed-era errors, the modern Secret warning.
    let out = winlint(&["-o", "json", f]);
    let r = out.json();
    assert!(
        !rules_of(&r)
            .iter()
            .any(|(a, _)| a == "WIN302" || a == "WIN601"),
        "{}",
        brief(&r)
    );
    assert!(has(&r, "WIN314", "warning"), "{}", brief(&r));
    assert!(has(&r, "WIN002", "warning"), "{}", brief(&r));
}

const SUBJECT: &str = "testdata/cli/config-subject.yaml";
const CONFIG: &str = "testdata/cli/config/target.yaml";

#[test]
fn config_file_sets_target_severity_and_disables_rules() {
    let plain = winlint(&["-o", "json", SUBJECT]).json();
    assert!(has(&plain, "WIN403", "info"), "{}", brief(&plain));
    // WIN308 is off by default; `--enable` turns it on.
    assert!(!rules_of(&plain).iter().any(|(a, _)| a == "WIN308"));
    let enabled = winlint(&["-o", "json", "--enable", "WIN308", SUBJECT]).json();
    assert!(has(&enabled, "WIN308", "info"), "{}", brief(&enabled));
    assert!(has(&plain, "WIN314", "warning"), "{}", brief(&plain));

    let out = winlint(&["-o", "json", "--config", CONFIG, SUBJECT]);
    out.assert_code(1);
    let r = out.json();
    // kubernetesVersion 1.30: ':' is an API error.
    assert!(has(&r, "WIN403", "error"), "{}", brief(&r));
    // WIN314: error override.
    assert!(has(&r, "WIN314", "error"), "{}", brief(&r));
    // mountpath-not-windows-style: off (by name).
    assert!(
        !rules_of(&r).iter().any(|(a, _)| a == "WIN308"),
        "{}",
        brief(&r)
    );
    // fix.optIn: [env-name-invalid] makes the opt-in WIN403 fix part of --fix.
    let f = the_finding(&r, "WIN403", "/spec/containers/0/env/0/name");
    assert_eq!(f["fix"]["applied_by_fix"], true, "{f}");
    assert_eq!(r["summary"]["fixable"], 1);
    let f = the_finding(&plain, "WIN403", "/spec/containers/0/env/0/name");
    assert_eq!(f["fix"]["applied_by_fix"], false, "{f}");
}

#[test]
fn flags_override_the_config_file() {
    let out = winlint(&[
        "-o",
        "json",
        "--config",
        CONFIG,
        "--kubernetes-version",
        "1.34",
        "--disable",
        "WIN314",
        SUBJECT,
    ]);
    out.assert_code(0);
    let r = out.json();
    assert!(
        has(&r, "WIN403", "info"),
        "--kubernetes-version wins: {}",
        brief(&r)
    );
    assert!(
        !rules_of(&r).iter().any(|(a, _)| a == "WIN314"),
        "{}",
        brief(&r)
    );
    // --fix-opt-in on the command line does what fix.optIn does.
    let r = winlint(&["-o", "json", "--fix-opt-in", "WIN403", SUBJECT]).json();
    let f = the_finding(&r, "WIN403", "/spec/containers/0/env/0/name");
    assert_eq!(f["fix"]["applied_by_fix"], true, "{f}");
}

#[test]
fn unknown_rule_in_config_is_a_clear_usage_error() {
    let bad = "testdata/cli/config/unknown-rule.yaml";
    let out = winlint(&["--config", bad, SUBJECT]);
    out.assert_code(2);
    assert!(out.stdout.is_empty(), "{out}");
    assert!(out.stderr.contains("WIN999"), "{out}");
    assert!(out.stderr.contains("unknown rule"), "{out}");
    assert!(
        out.stderr.contains(bad),
        "the message should name the config file it comes from\n{out}"
    );
}

#[test]
fn bad_config_files_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("unknown-key.yaml", "targets: {}\n", "targets"),
        ("bad-severity.yaml", "rules: {WIN403: loud}\n", "loud"),
        (
            "bad-version.yaml",
            "target: {kubernetesVersion: x.y}\n",
            "x.y",
        ),
        ("bad-yaml.yaml", "rules: [\n", "bad-yaml.yaml"),
    ];
    for (name, body, needle) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        let out = winlint(&["--config", p.to_str().unwrap(), SUBJECT]);
        out.assert_code(2);
        assert!(
            out.stderr.contains(needle),
            "{name}: stderr should mention {needle:?}\n{out}"
        );
    }
    let out = winlint(&["--config", "testdata/cli/config/missing.yaml", SUBJECT]);
    out.assert_code(2);
    assert!(out.stderr.contains("missing.yaml"), "{out}");
}

#[test]
fn unquoted_off_in_the_config_disables_the_rule() {
    // `WIN314: off` is how people write it; YAML 1.1 (Kubernetes' YAML) reads a bare off as
    // false. Both must mean "disabled", not "invalid type: boolean".
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in [
        ("off.yaml", "rules:\n  WIN314: off\n"),
        ("false.yaml", "rules:\n  secret-volume-cleartext: false\n"),
    ] {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        let out = winlint(&["-o", "json", "--config", p.to_str().unwrap(), SUBJECT]);
        out.assert_code(0);
        let r = out.json();
        assert!(
            !rules_of(&r).iter().any(|(a, _)| a == "WIN314"),
            "{name}: {}",
            brief(&r)
        );
    }
}

#[test]
fn unquoted_kubernetes_version_is_not_read_as_a_float() {
    // `kubernetesVersion: 1.30` unquoted is the float 1.3. winlint must not lint against
    // Kubernetes 1.3: either read it as 1.30 or refuse it with a hint to quote it.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("winlint.yaml");
    std::fs::write(&p, "target:\n  kubernetesVersion: 1.30\n").unwrap();
    let pod =
        format!("{WINOK}    resources: {{requests: {{memory: 1Gi}}, limits: {{memory: 1Gi}}}}\n");
    let out = Run::new(&["-o", "json", "--config", p.to_str().unwrap(), "-"])
        .stdin(pod)
        .run();
    out.assert_clean_exit();
    if out.code() == 2 {
        assert!(
            out.stderr.contains("quote") || out.stderr.contains("\"1.30\""),
            "refusing is fine, but say how to fix it\n{out}"
        );
    } else {
        let r = out.json();
        assert!(
            !rules_of(&r).iter().any(|(a, _)| a == "WIN406"),
            "linted against Kubernetes 1.3: {}",
            brief(&r)
        );
    }
}

#[test]
fn ignore_annotation_by_id_and_by_name_with_reason() {
    let f = "testdata/cli/ignore.yaml";
    let out = winlint(&["-o", "json", f]);
    out.assert_code(1);
    let r = out.json();
    let objects: BTreeSet<&str> = findings(&r)
        .iter()
        .map(|f| f["object"].as_str().unwrap())
        .collect();
    assert_eq!(
        objects,
        BTreeSet::from(["Pod/not-ignored"]),
        "only the pod without the annotation is reported\n{}",
        brief(&r)
    );
    assert_eq!(r["summary"]["suppressed"], 4, "2 rules × 2 pods");

    let out = winlint(&[f]);
    out.assert_code(1);
    let last = out.stdout.lines().last().unwrap();
    assert!(last.contains("4 suppressed by winlint.io/ignore"), "{last}");
    assert!(
        last.contains("scheduled by the batch operator"),
        "ignore-reason in the summary: {last}"
    );
    assert!(last.contains("Pod/by-id"), "{last}");
}
