//! `--fix` and `--diff` are safe: surgical edits (comments, quoting and untouched lines stay
//! byte-for-byte), idempotent, CRLF kept, never a write when the file does not parse or the
//! atomic write cannot be done, and `--diff` never writes.
//!
//! Every test works on a copy of `testdata/cli/fix/*.yaml` in a temp dir.

mod cli_support;

use std::path::{Path, PathBuf};

use cli_support::*;

const COMMENTS: &str = "testdata/cli/fix/comments.yaml";

/// Lines `--fix` may touch in `comments.yaml`: the nodes of its safe fixes.
fn touched(line: &str) -> bool {
    line.contains("beta.kubernetes.io/os") || line.contains("mountPath: /logs")
}

fn copy_to(dir: &Path, rel: &str, name: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::copy(root().join(rel), &p).unwrap_or_else(|e| panic!("copy {rel}: {e}"));
    p
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `needles` appear in `hay` in order (a subsequence), else the first missing one.
fn missing_in_order<'a>(needles: &[&'a str], hay: &[&str]) -> Option<&'a str> {
    let mut it = hay.iter();
    needles.iter().copied().find(|n| !it.any(|h| h == n))
}

fn fix(path: &Path, extra: &[&str]) -> Out {
    let mut args = vec!["--fix"];
    args.extend_from_slice(extra);
    args.push(s(path));
    winlint(&args)
}

fn assert_fixed_cleanly(out: &Out) {
    out.assert_clean_exit();
    assert_ne!(out.code(), 2, "--fix failed\n{out}");
}

#[test]
fn diff_prints_a_unified_diff_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_to(dir.path(), COMMENTS, "comments.yaml");
    let before = std::fs::read(&p).unwrap();
    let out = winlint(&["--diff", s(&p)]);
    out.assert_clean_exit();
    assert_ne!(out.code(), 2, "{out}");
    assert_eq!(std::fs::read(&p).unwrap(), before, "--diff must not write");
    let d = &out.stdout;
    let name = p.display().to_string();
    assert!(
        d.lines()
            .any(|l| l.starts_with("--- ") && l.contains(&name)),
        "{out}"
    );
    assert!(
        d.lines()
            .any(|l| l.starts_with("+++ ") && l.contains(&name)),
        "{out}"
    );
    assert!(d.lines().any(|l| l.starts_with("@@ -")), "{out}");
    assert!(
        d.lines()
            .any(|l| l.starts_with("-") && l.contains("mountPath: /logs")),
        "{out}"
    );
    assert!(
        d.lines()
            .any(|l| l.starts_with("+") && l.contains("C:/logs")),
        "{out}"
    );
    assert!(
        d.lines()
            .any(|l| l.starts_with("+") && l.contains("hostNetwork: true")),
        "{out}"
    );
    // Only changed lines are - lines; comments are never removed.
    for l in d
        .lines()
        .filter(|l| l.starts_with('-') && !l.starts_with("---"))
    {
        assert!(
            touched(&l[1..]),
            "--diff removes an untouched line: {l:?}\n{out}"
        );
    }
}

#[test]
fn fix_keeps_comments_and_untouched_lines_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_to(dir.path(), COMMENTS, "comments.yaml");
    let before = std::fs::read_to_string(&p).unwrap();
    let out = fix(&p, &[]);
    assert_fixed_cleanly(&out);
    let after = std::fs::read_to_string(&p).unwrap();
    assert_ne!(after, before, "--fix changed nothing\n{out}");

    let kept: Vec<&str> = before.lines().filter(|l| !touched(l)).collect();
    let new: Vec<&str> = after.lines().collect();
    if let Some(l) = missing_in_order(&kept, &new) {
        panic!("untouched line {l:?} changed or moved by --fix; file now:\n{after}");
    }
    // Every removed line was one of the nodes the fixes name.
    for l in before.lines().filter(|l| !new.contains(l)) {
        assert!(touched(l), "--fix rewrote {l:?}; file now:\n{after}");
    }
    // The fixes themselves.
    assert!(after.contains("kubernetes.io/os: windows"), "{after}");
    assert!(!after.contains("beta.kubernetes.io/os"), "{after}");
    assert!(
        after.contains("mountPath: C:/logs        # WIN308"),
        "comment after the value kept: {after}"
    );
    assert!(after.contains("hostNetwork: true"), "{after}");
    assert!(after.contains("tolerations"), "{after}");
    // The opt-in WIN403 rename is not applied without --fix-opt-in.
    assert!(
        after.contains("- name: Logging:LogLevel   # WIN403"),
        "{after}"
    );
    // The result is still valid and lints.
    winlint(&["-o", "json", s(&p)]).assert_clean_exit();
}

#[test]
fn fix_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_to(dir.path(), COMMENTS, "comments.yaml");
    assert_fixed_cleanly(&fix(&p, &[]));
    let once = std::fs::read(&p).unwrap();

    let out = winlint(&["-o", "json", s(&p)]);
    out.assert_clean_exit();
    let r = out.json();
    assert_eq!(r["summary"]["fixable"], 0, "after --fix:\n{}", brief(&r));
    for rule in ["WIN001", "WIN002", "WIN007", "WIN201", "WIN308"] {
        assert!(
            !findings(&r).iter().any(|f| f["rule"] == rule),
            "{rule} still reported after --fix:\n{}",
            brief(&r)
        );
    }

    assert_fixed_cleanly(&fix(&p, &[]));
    assert_eq!(
        std::fs::read(&p).unwrap(),
        once,
        "a second --fix changed the file"
    );
    let out = winlint(&["--diff", s(&p)]);
    out.assert_clean_exit();
    assert!(out.stdout.trim().is_empty(), "nothing left to diff\n{out}");
}

#[test]
fn fix_opt_in_renames_the_env_var() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_to(dir.path(), COMMENTS, "comments.yaml");
    assert_fixed_cleanly(&fix(&p, &["--fix-opt-in", "WIN403"]));
    let after = std::fs::read_to_string(&p).unwrap();
    assert!(
        after.contains("- name: Logging__LogLevel   # WIN403"),
        "renamed in place, comment kept:\n{after}"
    );
    let r = winlint(&["-o", "json", "--fix-opt-in", "WIN403", s(&p)]).json();
    assert_eq!(r["summary"]["fixable"], 0, "{}", brief(&r));
}

#[test]
fn crlf_files_keep_crlf() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("crlf.yaml");
    let text = fixture(COMMENTS).replace('\n', "\r\n");
    std::fs::write(&p, &text).unwrap();
    assert_fixed_cleanly(&fix(&p, &[]));
    let after = std::fs::read(&p).unwrap();
    assert_ne!(after, text.as_bytes(), "--fix changed nothing");
    let after = String::from_utf8(after).unwrap();
    let bare_lf = after
        .match_indices('\n')
        .filter(|(i, _)| *i == 0 || after.as_bytes()[i - 1] != b'\r')
        .count();
    assert_eq!(
        bare_lf, 0,
        "--fix wrote LF line endings into a CRLF file:\n{after:?}"
    );
    assert!(after.contains("C:/logs"), "{after}");
    let kept: Vec<&str> = text.split("\r\n").filter(|l| !touched(l)).collect();
    let new: Vec<&str> = after.split("\r\n").collect();
    if let Some(l) = missing_in_order(&kept, &new) {
        panic!("untouched line {l:?} changed by --fix in a CRLF file");
    }
}

#[test]
fn fix_keeps_the_file_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let p = copy_to(dir.path(), COMMENTS, "comments.yaml");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
    assert_fixed_cleanly(&fix(&p, &[]));
    let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    // No temp file left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn a_file_that_does_not_parse_is_never_touched() {
    let dir = tempfile::tempdir().unwrap();
    let broken = copy_to(dir.path(), "testdata/cli/bad/invalid.yaml", "a-broken.yaml");
    let dup = copy_to(
        dir.path(),
        "testdata/cli/bad/duplicate-keys.yaml",
        "b-dup.yaml",
    );
    let good = copy_to(dir.path(), COMMENTS, "c-good.yaml");
    let (b0, d0) = (
        std::fs::read(&broken).unwrap(),
        std::fs::read(&dup).unwrap(),
    );
    let out = winlint(&["--fix", s(dir.path())]);
    out.assert_code(2);
    assert_eq!(
        std::fs::read(&broken).unwrap(),
        b0,
        "invalid YAML rewritten by --fix"
    );
    assert_eq!(
        std::fs::read(&dup).unwrap(),
        d0,
        "duplicate-key file rewritten by --fix"
    );
    assert!(out.stdout.contains("a-broken.yaml:"), "{out}");
    // The good file is still fixed.
    let g = std::fs::read_to_string(&good).unwrap();
    assert!(
        g.contains("C:/logs"),
        "the parseable file was not fixed\n{out}"
    );
}

/// Make `--fix` unable to create its temp file next to `p`; returns the wrapper to run
/// winlint through, or `None` (with a note) when this environment cannot do it.
fn unwritable_dir(dir: &Path, file: &Path) -> Option<Vec<String>> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    if !is_root() {
        return Some(Vec::new());
    }
    // Root ignores directory permissions: drop to nobody for the run, if setpriv exists.
    let parent = dir.parent().unwrap();
    let _ = std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o755));
    let ok = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            bin(),
            "--fail-on",
            "never",
            file.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!(
            "note: running as root and cannot lint the file as nobody (setpriv missing, binary or temp dir not readable); read-only directory case skipped"
        );
        return None;
    }
    Some(
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
        ]
        .map(String::from)
        .to_vec(),
    )
}

#[test]
fn fix_in_a_read_only_directory_fails_and_leaves_the_file_alone() {
    use std::os::unix::fs::PermissionsExt;
    let outer = tempfile::tempdir().unwrap();
    let dir = outer.path().join("ro");
    std::fs::create_dir(&dir).unwrap();
    let p = copy_to(&dir, COMMENTS, "comments.yaml");
    // Readable (and, for root, writable by nobody in place: only the directory stops the write).
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o666)).unwrap();
    let before = std::fs::read(&p).unwrap();
    let Some(via) = unwritable_dir(&dir, &p) else {
        return;
    };
    let out = Run::new(&["--fix", s(&p)]).via(&via).run();
    // Restore so the temp dir can be removed whatever happened.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    out.assert_code(2);
    assert_eq!(
        std::fs::read(&p).unwrap(),
        before,
        "file changed although --fix failed"
    );
    assert!(
        out.stdout.contains(&format!("{}:", p.display())),
        "error names the file\n{out}"
    );
    assert!(
        out.stdout.contains("cannot write") || out.stdout.contains("ermission"),
        "error says why\n{out}"
    );
    let names: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(names.len(), 1, "no temp file left behind");
}

#[test]
fn fix_on_stdin_prints_the_fixed_manifest() {
    let out = winlint_stdin(&["--fix", "-"], fixture(COMMENTS));
    assert_fixed_cleanly(&out);
    assert!(out.stdout.contains("C:/logs"), "{out}");
    assert!(out.stdout.starts_with("# tests/cli_fix.rs"), "{out}");
    let again = winlint_stdin(&["-o", "json", "-"], out.stdout.clone());
    assert_eq!(again.json()["summary"]["fixable"], 0);
}

#[test]
fn fix_through_a_symlink_edits_the_target_and_keeps_the_link() {
    // Repos link shared manifests into several overlays; --fix on the link must fix the shared
    // file, not replace the link with a private copy.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("shared")).unwrap();
    let target = copy_to(&dir.path().join("shared"), COMMENTS, "app.yaml");
    let link = dir.path().join("link.yaml");
    std::os::unix::fs::symlink("shared/app.yaml", &link).unwrap();
    assert_fixed_cleanly(&fix(&link, &[]));
    let meta = std::fs::symlink_metadata(&link).unwrap();
    assert!(
        meta.file_type().is_symlink(),
        "--fix replaced the symlink {} with a regular file",
        link.display()
    );
    let fixed = std::fs::read_to_string(&target).unwrap();
    assert!(
        fixed.contains("C:/logs"),
        "the link's target was not fixed:\n{fixed}"
    );
}

#[test]
fn fix_on_stdin_with_nothing_to_fix_echoes_the_input() {
    // `winlint --fix - < in.yaml > out.yaml` is a filter: with nothing to fix, out.yaml must be
    // in.yaml, not empty.
    let input = fixture("testdata/linux/restricted.yaml");
    let out = winlint_stdin(&["--fix", "-"], input.clone());
    out.assert_code(0);
    assert_eq!(out.stdout, input, "--fix - lost the manifest");
}

#[test]
fn fix_handles_a_list_with_many_fixable_items() {
    // `kubectl get deployments -o yaml` is one `kind: List` document: 40 Windows pods without an
    // OS pin or toleration need 80 fixes in that one document.
    let mut text = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for i in 0..40 {
        text.push_str(&format!(
            "- apiVersion: v1\n  kind: Pod\n  metadata: {{name: p{i}}}\n  spec:\n    os: {{name: windows}}\n    containers:\n    - name: a\n      image: mcr.microsoft.com/windows/servercore:ltsc2022\n"
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("list.yaml");
    std::fs::write(&p, &text).unwrap();
    let out = fix(&p, &[]);
    assert_fixed_cleanly(&out);
    let after = std::fs::read_to_string(&p).unwrap();
    assert_eq!(
        after.matches("kubernetes.io/os: windows").count(),
        40,
        "{out}"
    );
    let r = winlint(&["-o", "json", s(&p)]).json();
    assert_eq!(r["summary"]["fixable"], 0, "{}", brief(&r));
    assert_eq!(r["summary"]["errors"], 0, "{}", brief(&r));
}

#[test]
fn fix_handles_a_pod_with_many_fixable_mounts() {
    let mut text = String::from(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: many}\nspec:\n  os: {name: windows}\n  nodeSelector: {kubernetes.io/os: windows}\n  tolerations: [{key: os, operator: Equal, value: windows, effect: NoSchedule}]\n  containers:\n  - name: a\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n    volumeMounts:\n",
    );
    for i in 0..70 {
        text.push_str(&format!("    - {{name: v{i}, mountPath: /data{i}}}\n"));
    }
    text.push_str("  volumes:\n");
    for i in 0..70 {
        text.push_str(&format!("  - {{name: v{i}, emptyDir: {{}}}}\n"));
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("many.yaml");
    std::fs::write(&p, &text).unwrap();
    let out = fix(&p, &[]);
    assert_fixed_cleanly(&out);
    let after = std::fs::read_to_string(&p).unwrap();
    assert_eq!(after.matches("mountPath: C:/data").count(), 70, "{out}");
}

#[test]
fn an_unfixable_alias_does_not_block_the_other_fixes() {
    // Two containers share their volumeMounts through an alias. Whether or not the planner can
    // edit the aliased mountPath, the unrelated fixes of the file (nodeSelector, toleration)
    // must still be applied, and the file is not reported as unreadable.
    let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: anchors\nspec:\n  os: {name: windows}\n  containers:\n  - name: a\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n    volumeMounts: &vm\n    - name: v\n      mountPath: /data\n  - name: b\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n    volumeMounts: *vm\n  volumes:\n  - name: v\n    emptyDir: {}\n";
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("anchors.yaml");
    std::fs::write(&p, text).unwrap();
    let out = fix(&p, &[]);
    assert_fixed_cleanly(&out);
    assert!(!out.stdout.contains("could not be read"), "{out}");
    let after = std::fs::read_to_string(&p).unwrap();
    assert!(
        after.contains("kubernetes.io/os: windows"),
        "{out}\n{after}"
    );
    assert!(after.contains("volumeMounts: *vm"), "alias kept: {after}");
    let r = winlint(&["-o", "json", s(&p)]).json();
    assert!(
        !findings(&r)
            .iter()
            .any(|f| f["rule"] == "WIN001" || f["rule"] == "WIN007"),
        "{}",
        brief(&r)
    );
}

/// Two pods of a List share one spec through an anchor and need the same fixes: --fix makes
/// them once, in the anchored spec, and the alias stays.
#[test]
fn fixes_shared_through_an_anchor_are_made_once() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_to(
        dir.path(),
        "testdata/cli/fix/shared-spec.yaml",
        "shared.yaml",
    );
    let before = winlint(&["-o", "json", s(&p)]).json();
    assert_eq!(before["summary"]["fixable"], 6, "{}", brief(&before));
    assert_eq!(before["summary"]["not_fixed"], 0);
    let out = fix(&p, &[]);
    assert_fixed_cleanly(&out);
    let after = std::fs::read_to_string(&p).unwrap();
    assert!(
        after.contains("  spec: &spec\n") && after.contains("  spec: *spec\n"),
        "{after}"
    );
    assert_eq!(
        after.matches("kubernetes.io/os: windows").count(),
        1,
        "{after}"
    );
    let r = winlint(&["-o", "json", s(&p)]).json();
    assert_eq!(
        (
            r["summary"]["fixable"].as_u64(),
            r["summary"]["not_fixed"].as_u64()
        ),
        (Some(0), Some(0)),
        "{}",
        brief(&r)
    );
    assert!(findings(&r).is_empty(), "{}", brief(&r));
}

#[test]
fn fix_in_unusual_yaml_changes_only_the_mount_paths() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_to(dir.path(), "testdata/cli/odd-yaml.yaml", "odd.yaml");
    let before = std::fs::read_to_string(&p).unwrap();
    assert_fixed_cleanly(&fix(&p, &[]));
    let after = std::fs::read_to_string(&p).unwrap();
    let (b, a): (Vec<&str>, Vec<&str>) = (before.lines().collect(), after.lines().collect());
    assert_eq!(b.len(), a.len(), "{after}");
    let changed: Vec<(&str, &str)> = b
        .iter()
        .zip(&a)
        .filter(|(x, y)| x != y)
        .map(|(x, y)| (*x, *y))
        .collect();
    assert_eq!(changed.len(), 3, "{changed:#?}");
    for (old, new) in changed {
        assert_eq!(
            new,
            old.replacen("mountPath: /", "mountPath: C:/", 1),
            "only the mountPath value changes"
        );
    }
}

/// A fix --fix cannot make says why, next to its finding: in the text report, in JSON, and on
/// stderr with --diff (whose stdout stays a patch). The other fixes of the file are made.
#[test]
fn a_fix_that_cannot_be_made_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_to(
        dir.path(),
        "testdata/cli/fix/anchored-os-value.yaml",
        "anchored.yaml",
    );
    let why = "cannot edit /spec/nodeSelector/kubernetes.io~1os: it is anchored as &os and also \
               used at /metadata/labels/os: the edit would change them too";

    let diff = winlint(&["--diff", s(&p)]);
    assert!(diff.stdout.contains("+  os:\n"), "{diff}");
    assert!(!diff.stdout.contains("not fixed"), "{diff}");
    assert!(
        diff.stderr.contains(&format!(
            "anchored.yaml:7:18: WIN010 not fixed by --fix: {why}"
        )),
        "{diff}"
    );

    let out = fix(&p, &[]);
    assert_fixed_cleanly(&out);
    let after = std::fs::read_to_string(&p).unwrap();
    assert!(
        after.contains("{kubernetes.io/os: &os Windows}") && after.contains("labels: {os: *os}"),
        "{after}"
    );
    assert!(after.contains("  os:\n    name: windows\n"), "{after}");
    let win010: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("WIN010"))
        .collect();
    assert_eq!(win010.len(), 1, "{out}");
    assert!(
        win010[0].ends_with(&format!("[not fixed: {why}]")),
        "{}",
        win010[0]
    );
    assert!(
        out.stdout
            .contains("; 1 not fixed by --fix (why is on each): fix by hand"),
        "{out}"
    );

    let r = winlint(&["--fix", "-o", "json", s(&p)]).json();
    let f = findings(&r);
    assert_eq!(f.len(), 1, "{}", brief(&r));
    assert_eq!(f[0]["fix"]["not_fixed"], true);
    assert_eq!(f[0]["fix"]["not_fixed_reason"], why);
    assert_eq!(r["summary"]["not_fixed"], 1);
}

/// WIN010's fixes in the documentation's flow style: the value lowercased in place, and before
/// 1.14 the key renamed to beta.kubernetes.io/os in place; the braces, the quotes and the
/// trailing commas stay.
#[test]
fn the_os_label_fixes_edit_flow_style_in_place() {
    let src = "testdata/cli/fix/flow-os-label.yaml";
    let original = std::fs::read_to_string(root().join(src)).unwrap();
    let dir = tempfile::tempdir().unwrap();

    let p = copy_to(dir.path(), src, "now.yaml");
    assert_fixed_cleanly(&fix(&p, &[]));
    let after = std::fs::read_to_string(&p).unwrap();
    let want = original.replace(
        "      \"kubernetes.io/os\": \"Windows\",\n    },\n",
        "      \"kubernetes.io/os\": \"windows\",\n    },\n    \"os\": {\"name\": \"windows\"},\n    \"tolerations\": [{\"key\": \"os\", \"operator\": \"Equal\", \"value\": \"windows\", \"effect\": \"NoSchedule\"}],\n",
    );
    assert_eq!(after, want);

    let p = copy_to(dir.path(), src, "old.yaml");
    assert_fixed_cleanly(&fix(&p, &["--kubernetes-version", "1.13"]));
    let after = std::fs::read_to_string(&p).unwrap();
    assert_eq!(
        after,
        original.replace(
            "\"kubernetes.io/os\": \"Windows\"",
            "\"beta.kubernetes.io/os\": \"windows\""
        )
    );
    let r = winlint(&["-o", "json", "--kubernetes-version", "1.13", s(&p)]).json();
    assert!(findings(&r).is_empty(), "{}", brief(&r));
}

/// An anchored node shared by two objects of which only one needs the fix: the fix is refused
/// (never made for both), and the finding says where the anchor is also used.
#[test]
fn an_anchor_shared_with_an_object_that_needs_no_fix_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let src = "testdata/cli/fix/anchor-shared-by-two-objects.yaml";
    let p = copy_to(dir.path(), src, "shared.yaml");
    let flags = ["--fix-opt-in", "WIN403", "--kubernetes-version", "1.30"];
    let out = fix(&p, &flags);
    assert_fixed_cleanly(&out);
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        std::fs::read_to_string(root().join(src)).unwrap()
    );
    assert!(
        out.stdout.contains(
            "[not fixed: cannot edit /items/0/spec/containers/0/env: it is anchored as &env and \
             also used at /items/1/spec/containers/0/env: the edit would change them too]"
        ),
        "{out}"
    );
}
