//! Bad input never panics, hangs or eats the machine: each case ends with a clean error (exit 2,
//! `file:line:col: error …` naming the place) or a result.
//!
//! Every run is bounded by a kill timeout (a hang fails the test) and by an address-space limit
//! (`ulimit -v`; an unbounded allocation aborts the process and fails the test). Neither is an
//! assertion about speed: the limits are far above what a correct implementation needs.
//! Fixtures a reader can open are in `testdata/cli/bad/`; large and binary inputs are generated
//! into a temp dir.

mod cli_support;

use std::path::Path;
use std::time::Duration;

use cli_support::*;

/// Address-space cap for small inputs: far above the few tens of MiB they need.
const SMALL_MIB: u64 = 1024;

fn lint_bounded(path: &Path, mib: u64) -> Out {
    Run::new(&["-o", "json"])
        .arg(path.to_str().unwrap())
        .mem_limit_mib(mib)
        .run()
}

/// Exit 2 with one input error for `file`, at `lines`; returns the error object.
fn assert_input_error(
    out: &Out,
    file: &str,
    lines: std::ops::RangeInclusive<u64>,
) -> serde_json::Value {
    out.assert_code(2);
    let r = out.json();
    let errs = r["errors"].as_array().expect("errors");
    assert_eq!(errs.len(), 1, "{out}");
    let e = errs[0].clone();
    assert_eq!(e["file"], file, "{out}");
    let line = e["line"].as_u64().unwrap();
    assert!(
        lines.contains(&line),
        "error line {line} not in {lines:?}\n{out}"
    );
    assert!(e["column"].as_u64().unwrap() >= 1, "{out}");
    assert!(!e["message"].as_str().unwrap().is_empty());
    assert!(findings(&r).is_empty());
    e
}

#[test]
fn empty_file_is_a_clean_empty_result() {
    let out = lint_bounded(&root().join("testdata/cli/bad/empty.yaml"), SMALL_MIB);
    out.assert_code(0);
    let r = out.json();
    assert!(findings(&r).is_empty());
    assert_eq!(r["summary"]["objects"], 0);
    // Empty stdin too.
    winlint_stdin(&["-"], Vec::new()).assert_code(0);
}

#[test]
fn comment_and_whitespace_only_file_is_a_clean_empty_result() {
    let out = lint_bounded(
        &root().join("testdata/cli/bad/comments-only.yaml"),
        SMALL_MIB,
    );
    out.assert_code(0);
    assert_eq!(out.json()["summary"]["objects"], 0);
    winlint_stdin(&["-"], "\n\n   \n# x\n").assert_code(0);
}

#[test]
fn invalid_yaml_names_file_and_line() {
    let f = "testdata/cli/bad/invalid.yaml";
    let out = Run::new(&["-o", "json", f]).mem_limit_mib(SMALL_MIB).run();
    assert_input_error(&out, f, 9..=10);
    let out = winlint(&[f]);
    out.assert_code(2);
    assert!(
        out.stdout
            .lines()
            .any(|l| l.starts_with(&format!("{f}:9:")) || l.starts_with(&format!("{f}:10:"))),
        "{out}"
    );
}

#[test]
fn tab_indentation_names_its_line() {
    let f = "testdata/cli/bad/tabs.yaml";
    let out = Run::new(&["-o", "json", f]).mem_limit_mib(SMALL_MIB).run();
    let e = assert_input_error(&out, f, 5..=5);
    assert!(e["message"].as_str().unwrap().contains("tab"), "{e}");
}

#[test]
fn duplicate_keys_are_an_error_at_the_second_key() {
    let f = "testdata/cli/bad/duplicate-keys.yaml";
    let text = fixture(f);
    let second = nth_line_of(&text, "image:", 1) as u64;
    let out = Run::new(&["-o", "json", f]).mem_limit_mib(SMALL_MIB).run();
    let e = assert_input_error(&out, f, second..=second);
    assert!(e["message"].as_str().unwrap().contains("image"), "{e}");
}

#[test]
fn binary_garbage_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    // Deterministic pseudo-random bytes (xorshift), with NULs and invalid UTF-8 throughout.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut bytes: Vec<u8> = (0..64 * 1024)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    bytes[10] = 0;
    bytes[11] = 0xff;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("random.yaml", bytes.clone()),
        (
            "nul-in-value.yaml",
            b"apiVersion: v1\nkind: Pod\nmetadata: {name: \"a\x00b\"}\n".to_vec(),
        ),
        (
            "latin1-comment.yaml",
            b"# caf\xe9\napiVersion: v1\nkind: Pod\n".to_vec(),
        ),
        (
            "elf.yaml",
            b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00".to_vec(),
        ),
        (
            "utf16.yaml",
            "\u{feff}kind: Pod\n"
                .encode_utf16()
                .flat_map(u16::to_le_bytes)
                .collect(),
        ),
    ];
    for (name, body) in &cases {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        let out = lint_bounded(&p, SMALL_MIB);
        assert_input_error(&out, p.to_str().unwrap(), 1..=3);
    }
    // On stdin.
    let out = Run::new(&["-"]).stdin(bytes).mem_limit_mib(SMALL_MIB).run();
    out.assert_code(2);
    assert!(out.stdout.starts_with("<stdin>:"), "{out}");
}

#[test]
fn garbage_file_does_not_stop_the_other_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.yaml"), b"\x00\x01\x02\xff\xfe").unwrap();
    std::fs::copy(
        root().join("testdata/cli/kinds/pod.yaml"),
        dir.path().join("b.yaml"),
    )
    .unwrap();
    std::fs::copy(
        root().join("testdata/cli/bad/billion-laughs.yaml"),
        dir.path().join("c.yaml"),
    )
    .unwrap();
    let out = Run::new(&["-o", "json", dir.path().to_str().unwrap()])
        .mem_limit_mib(SMALL_MIB)
        .run();
    out.assert_code(2);
    let r = out.json();
    assert_eq!(r["errors"].as_array().unwrap().len(), 2, "{out}");
    the_finding(&r, "WIN403", "/spec/containers/0/env/0/name");
}

#[test]
fn deeply_nested_flow_sequences_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("brackets.yaml");
    std::fs::write(&p, "[".repeat(100_000)).unwrap();
    let out = lint_bounded(&p, SMALL_MIB);
    assert_input_error(&out, p.to_str().unwrap(), 1..=1);
    let p = dir.path().join("braces.yaml");
    std::fs::write(&p, "{a: ".repeat(100_000)).unwrap();
    let out = lint_bounded(&p, SMALL_MIB);
    assert_input_error(&out, p.to_str().unwrap(), 1..=1);
}

#[test]
fn deeply_nested_block_mappings_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("maps.yaml");
    let mut s = String::new();
    for i in 0..10_000 {
        s.push_str(&" ".repeat(i));
        s.push_str(&format!("k{i}:\n"));
    }
    s.push_str(&" ".repeat(10_000));
    s.push_str("leaf\n");
    std::fs::write(&p, s).unwrap();
    let out = lint_bounded(&p, SMALL_MIB);
    let e = assert_input_error(&out, p.to_str().unwrap(), 2..=10_001);
    assert!(e["message"].as_str().unwrap().contains("nest"), "{e}");
}

#[test]
fn billion_laughs_is_refused() {
    for f in [
        "testdata/cli/bad/billion-laughs.yaml",
        "testdata/cli/bad/merge-bomb.yaml",
    ] {
        let text = fixture(f);
        let out = Run::new(&["-o", "json", f]).mem_limit_mib(SMALL_MIB).run();
        let n = text.lines().count() as u64;
        let e = assert_input_error(&out, f, 1..=n);
        assert!(e["message"].as_str().unwrap().contains("alias"), "{e}");
    }
}

#[test]
fn alias_bomb_of_long_strings_is_refused_within_bounded_memory() {
    // 100 KB of text: one 100 KB string, aliased 100 × 100 × 10 = 100 000 times. Few nodes
    // (well under a node-count cap), but expanding it copies 10 GB of string data.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("string-bomb.yaml");
    let mut s = format!("a: &a \"{}\"\n", "x".repeat(100_000));
    s.push_str(&format!("b: &b [{}]\n", ["*a"; 100].join(",")));
    s.push_str(&format!("c: &c [{}]\n", ["*b"; 100].join(",")));
    s.push_str(&format!("d: [{}]\n", ["*c"; 10].join(",")));
    std::fs::write(&p, s).unwrap();
    let out = lint_bounded(&p, SMALL_MIB);
    assert_input_error(&out, p.to_str().unwrap(), 1..=4);
}

#[test]
fn odd_but_valid_yaml_gives_a_result() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str)] = &[
        (
            "scalar-roots.yaml",
            "~\n---\n[]\n---\n\"string\"\n---\n42\n---\n- kind: Pod\n",
        ),
        (
            "wrong-shapes.yaml",
            "kind: [Pod]\n---\nkind: Pod\nspec: 5\n---\nkind: Deployment\nspec: {template: []}\n---\nkind: CronJob\nspec: {jobTemplate: {spec: {template: {spec: {containers: \"x\", volumes: 3, initContainers: [1, null, \"s\"]}}}}}\n---\nkind: List\nitems: {a: 1}\n---\nkind: PodList\nitems: [{kind: Pod, spec: {containers: [{}]}}]\n",
        ),
        (
            "numbers-and-tags.yaml",
            "--- !foo\napiVersion: v1\nkind: !!str Pod\nspec:\n  terminationGracePeriodSeconds: 1e999999\n  priority: 99999999999999999999999999999\n  containers:\n  - name: x\n    image: !!binary aGVsbG8=\n    ports: [{containerPort: .inf}]\n  volumes: [{name: v, emptyDir: !!null ''}]\n",
        ),
        ("many-empty-docs.yaml", &"---\n".repeat(100_000)),
        (
            "long-scalar.yaml",
            &format!(
                "apiVersion: v1\nkind: ConfigMap\ndata:\n  x: \"{}\"\n",
                "y".repeat(5_000_000)
            ),
        ),
    ];
    for (name, body) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        let out = lint_bounded(&p, SMALL_MIB);
        out.assert_clean_exit();
        assert!([0, 1, 2].contains(&out.code()), "{name}\n{out}");
        let r = out.json();
        if out.code() == 2 {
            let e = &r["errors"][0];
            assert!(e["line"].as_u64().unwrap() >= 1, "{name}: {e}");
        }
    }
}

#[test]
fn directory_with_unreadable_entries_and_non_manifests() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README.md"), "# not yaml: [").unwrap();
    std::fs::write(dir.path().join("binary.bin"), [0u8, 1, 2, 255]).unwrap();
    std::fs::create_dir(dir.path().join("sub.yaml")).unwrap(); // a directory named like a file
    std::fs::copy(
        root().join("testdata/cli/kinds/job.yaml"),
        dir.path().join("sub.yaml/job.yml"),
    )
    .unwrap();
    let out = Run::new(&["-o", "json", dir.path().to_str().unwrap()])
        .mem_limit_mib(SMALL_MIB)
        .run();
    out.assert_code(0);
    let r = out.json();
    assert_eq!(
        r["summary"]["files"], 1,
        "only sub.yaml/job.yml is a manifest\n{out}"
    );
    the_finding(&r, "WIN403", "/spec/template/spec/containers/0/env/0/name");
}

/// One Windows pod document of the generated file: WIN001 + WIN007 (errors), WIN403 (info).
fn windows_doc(i: usize) -> String {
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: win-{i}\nspec:\n  os: {{name: windows}}\n  containers:\n  - name: app\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n    env:\n    - {{name: \"Setting:{i}\", value: x}}\n"
    )
}

/// One Linux Deployment of the generated file: no findings.
fn linux_doc(i: usize) -> String {
    format!(
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{i}\n  labels: {{app: app-{i}}}\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {{app: app-{i}}}\n  template:\n    metadata:\n      labels: {{app: app-{i}}}\n    spec:\n      securityContext: {{runAsNonRoot: true, runAsUser: 1000, seccompProfile: {{type: RuntimeDefault}}}}\n      containers:\n      - name: app\n        image: ghcr.io/example/app-{i}:1.0.{i}\n        env:\n        - {{name: INDEX, value: \"{i}\"}}\n        resources:\n          requests: {{cpu: 100m, memory: 128Mi}}\n          limits: {{memory: 256Mi}}\n        volumeMounts:\n        - {{name: data, mountPath: /data}}\n      volumes:\n      - {{name: data, emptyDir: {{}}}}\n"
    )
}

#[test]
fn fifty_megabyte_file_gives_a_result_with_exact_counts() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.yaml");
    let mut text = String::with_capacity(51 * 1024 * 1024);
    let (mut docs, mut windows) = (0usize, 0usize);
    while text.len() < 50 * 1024 * 1024 {
        if docs % 10 == 0 {
            text.push_str(&windows_doc(docs));
            windows += 1;
        } else {
            text.push_str(&linux_doc(docs));
        }
        docs += 1;
    }
    // The last document is a Windows pod, so a finding sits at the very end of the file.
    text.push_str(&windows_doc(docs));
    windows += 1;
    docs += 1;
    std::fs::write(&p, &text).unwrap();
    let last_env_line = text.lines().count() as u64; // `- {name: "Setting:N", …}` is the last line

    // Address space capped at 4 GiB (~80× the input); a debug build may take a while, so the
    // kill timeout is long. Neither is a performance assertion.
    let out = Run::new(&["-o", "json", p.to_str().unwrap()])
        .mem_limit_mib(4096)
        .kill_after(Duration::from_secs(900))
        .run();
    out.assert_code(1);
    let r = out.json();
    let s = &r["summary"];
    assert_eq!(s["objects"], docs as u64);
    assert_eq!(s["pods"], docs as u64);
    assert_eq!(
        s["errors"], windows as u64,
        "WIN001 per Windows pod (WIN007 on the assumed taint is a warning)"
    );
    assert_eq!(s["info"], windows as u64, "WIN403 per Windows pod");
    assert_eq!(s["warnings"], windows as u64, "WIN007 per Windows pod");
    let last = findings(&r)
        .iter()
        .filter(|f| f["rule"] == "WIN403")
        .max_by_key(|f| f["line"].as_u64())
        .unwrap();
    assert_eq!(last["line"], last_env_line, "{last}");
    let col = column_of(&text, last_env_line as usize, "name");
    assert_eq!(last["column"], col, "{last}");
    assert_eq!(last["object"], format!("Pod/win-{}", docs - 1));
}

#[test]
fn symlink_loops_in_a_directory_end_and_the_rest_is_linted() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::copy(
        root().join("testdata/cli/kinds/pod.yaml"),
        sub.join("pod.yaml"),
    )
    .unwrap();
    std::os::unix::fs::symlink("..", sub.join("up")).unwrap();
    std::os::unix::fs::symlink("pod.yaml", sub.join("again.yaml")).unwrap();
    let out = Run::new(&["-o", "json", dir.path().to_str().unwrap()])
        .mem_limit_mib(SMALL_MIB)
        .run();
    out.assert_clean_exit();
    assert!([0, 2].contains(&out.code()), "{out}");
    let r = out.json();
    // pod.yaml once, however many ways the walk reaches it.
    assert_eq!(findings(&r).len(), 1, "{}", brief(&r));
}

/// Denser than the loader's budget (issue 30, src/source/budget.rs): a JSON pod with one
/// `[0,0,…]` field and a YAML pod of `[],[],…` are each one clean error naming the file, the
/// line and the problem, within a small address space (60 MB of them peaked at 15.3 and 7.5 GB;
/// tests/load_memory.rs counts the peak, scripts/dense-inputs.sh measures the CLI).
#[test]
fn dense_inputs_are_refused_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("dense.json");
    std::fs::write(
        &json,
        format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"d"}},"spec":{{"containers":[{{"name":"c","image":"mcr.microsoft.com/windows/servercore:ltsc2022","args":[{}0]}}]}}}}"#,
            "0,".repeat(1 << 20)
        ),
    )
    .unwrap();
    let yaml = dir.path().join("dense.yaml");
    std::fs::write(
        &yaml,
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: d\nspec:\n  containers:\n  - name: c\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n    args: [{}[]]\n",
            "[],".repeat(700_000)
        ),
    )
    .unwrap();
    for (path, line) in [(&json, 1), (&yaml, 9)] {
        let out = lint_bounded(path, SMALL_MIB);
        let e = assert_input_error(&out, path.to_str().unwrap(), line..=line);
        let message = e["message"].as_str().unwrap();
        assert!(
            message.starts_with("too dense to load: more than")
                && message.contains("one per 4 bytes"),
            "{message}"
        );
    }
}
