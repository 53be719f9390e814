//! Rendering tools that misbehave (src/render/tool.rs), played by shell scripts given as
//! `--helm`/`--kustomize`: one that prints without end, one that leaves a child holding its
//! stdout, one that never ends; and a kustomization naming a remote resource, which is not built
//! (nor fetched) without `--allow-remote`.

mod cli_support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use cli_support::{Out, Run, fixture};

const POD: &str = "testdata/examples/iis-deployment.yaml";

/// An executable script `name` in `dir`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// A chart directory (its templates do not matter: the fake helm prints what it likes).
fn chart(dir: &Path) -> PathBuf {
    let c = dir.join("chart");
    std::fs::create_dir_all(c.join("templates")).unwrap();
    std::fs::write(c.join("Chart.yaml"), "name: c\nversion: 0.1.0\n").unwrap();
    c
}

fn lint_chart(helm: &Path, chart: &Path, extra: &[&str]) -> Out {
    let mut args = vec!["--helm", helm.to_str().unwrap()];
    args.extend_from_slice(extra);
    args.push(chart.to_str().unwrap());
    Run::new(&args).mem_limit_mib(1024).run()
}

#[test]
fn a_tool_printing_without_end_is_stopped_at_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    // `yes` prints forever; 1 GiB of it is what the issue measured.
    let helm = script(dir.path(), "helm", "yes 'a: b'");
    let out = lint_chart(&helm, &chart(dir.path()), &["--max-input-bytes", "1048576"]);
    out.assert_code(2);
    assert!(
        out.stdout.contains("printed more than 1048576 bytes"),
        "{out}"
    );
    // The default cap (64 MiB) holds within the address-space limit too.
    let out = lint_chart(&helm, &chart(dir.path()), &[]);
    out.assert_code(2);
    assert!(out.stdout.contains("printed more than"), "{out}");
}

#[test]
fn a_child_left_holding_stdout_does_not_hang_winlint() {
    let dir = tempfile::tempdir().unwrap();
    let pod = dir.path().join("pod.yaml");
    std::fs::write(&pod, fixture(POD)).unwrap();
    let pidfile = dir.path().join("child.pid");
    let helm = script(
        dir.path(),
        "helm",
        &format!(
            "cat {}\nsleep 600 &\necho $! > {}\nexit 0",
            pod.display(),
            pidfile.display()
        ),
    );
    let out = lint_chart(&helm, &chart(dir.path()), &[]);
    // Linted (error findings), not hung until the kill timeout of the test.
    out.assert_code(1);
    assert!(out.stdout.contains("WIN"), "{out}");
    // And the child is gone with its tool.
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    let alive = Path::new(&format!("/proc/{}", pid.trim())).exists()
        && !std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
            .unwrap_or_default()
            .contains(") Z ");
    assert!(!alive, "the tool's child {pid} still runs");
}

#[test]
fn a_tool_that_never_ends_is_killed_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let helm = script(dir.path(), "helm", "sleep 600");
    let out = lint_chart(&helm, &chart(dir.path()), &["--render-timeout", "1"]);
    out.assert_code(2);
    assert!(out.stdout.contains("did not finish within 1 s"), "{out}");
}

#[test]
fn a_remote_resource_is_not_fetched_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k");
    std::fs::create_dir(&k).unwrap();
    std::fs::write(
        k.join("kustomization.yaml"),
        "resources:\n- deployment.yaml\n- https://example.com/manifests/app.yaml\n",
    )
    .unwrap();
    std::fs::write(k.join("deployment.yaml"), fixture(POD)).unwrap();
    // The fake kustomize says what network it was given, and prints the local resource.
    let log = dir.path().join("ran.txt");
    let kustomize = script(
        dir.path(),
        "kustomize",
        &format!(
            "echo \"proxy=$HTTPS_PROXY git=$GIT_ALLOW_PROTOCOL\" > {}\ncat {}",
            log.display(),
            k.join("deployment.yaml").display()
        ),
    );
    let run = |extra: &[&str]| {
        let mut args = vec!["--kustomize", kustomize.to_str().unwrap()];
        args.extend_from_slice(extra);
        args.push(k.to_str().unwrap());
        Run::new(&args).env_remove("HTTPS_PROXY").run()
    };
    let out = run(&[]);
    out.assert_code(2);
    assert!(
        out.stdout
            .contains("https://example.com/manifests/app.yaml")
            && out.stdout.contains("--allow-remote"),
        "{out}"
    );
    assert!(!log.exists(), "the tool ran");

    let out = run(&["--allow-remote"]);
    out.assert_code(1);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "proxy= git=\n");
}

#[test]
fn a_local_kustomization_builds_offline() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k");
    std::fs::create_dir(&k).unwrap();
    std::fs::write(
        k.join("kustomization.yaml"),
        "resources:\n- deployment.yaml\n",
    )
    .unwrap();
    std::fs::write(k.join("deployment.yaml"), fixture(POD)).unwrap();
    let log = dir.path().join("ran.txt");
    let kustomize = script(
        dir.path(),
        "kustomize",
        &format!(
            "echo \"proxy=$HTTPS_PROXY git=$GIT_ALLOW_PROTOCOL\" > {}\ncat {}",
            log.display(),
            k.join("deployment.yaml").display()
        ),
    );
    let out = Run::new(&[
        "--kustomize",
        kustomize.to_str().unwrap(),
        k.to_str().unwrap(),
    ])
    .run();
    out.assert_code(1);
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "proxy=http://127.0.0.1:9 git=file\n"
    );
}

/// A path is a path (issue 30): a resource `http://127.0.0.1:18081/pod.yaml` is fetched by
/// kustomize even when the local directory `http:/127.0.0.1:18081/pod.yaml` exists (`//` is `/`
/// on the disk), so it is remote; and the kustomization's own directory, named like a URL, is
/// given to the tool as an absolute path, never as something kustomize could read as a URL.
#[test]
fn a_local_path_that_looks_like_a_url_is_neither_fetched_nor_passed_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k");
    let lookalike = k.join("http:/127.0.0.1:18081/pod.yaml");
    std::fs::create_dir_all(&lookalike).unwrap();
    std::fs::write(lookalike.join("p.yaml"), fixture(POD)).unwrap();
    std::fs::write(
        k.join("kustomization.yaml"),
        "resources:\n- http://127.0.0.1:18081/pod.yaml\n",
    )
    .unwrap();
    let log = dir.path().join("ran.txt");
    let kustomize = script(
        dir.path(),
        "kustomize",
        &format!(
            "echo \"$@\" >> {}\ncat {}",
            log.display(),
            lookalike.join("p.yaml").display()
        ),
    );
    let out = Run::new(&["--kustomize", kustomize.to_str().unwrap(), "k"])
        .cwd(dir.path())
        .run();
    out.assert_code(2);
    assert!(
        out.stdout.contains("http://127.0.0.1:18081/pod.yaml")
            && out.stdout.contains("--allow-remote"),
        "{out}"
    );
    assert!(!log.exists(), "the tool ran");

    // A kustomization in a directory named like a URL, named relatively: built from its
    // absolute path.
    let other = dir.path().join("o");
    let lookalike = other.join("http:/127.0.0.1:18081/pod.yaml");
    std::fs::create_dir_all(&lookalike).unwrap();
    std::fs::write(
        lookalike.join("kustomization.yaml"),
        "resources: [p.yaml]\n",
    )
    .unwrap();
    std::fs::write(lookalike.join("p.yaml"), fixture(POD)).unwrap();
    let out = Run::new(&[
        "--kustomize",
        kustomize.to_str().unwrap(),
        "http:/127.0.0.1:18081/pod.yaml",
    ])
    .cwd(&other)
    .run();
    out.assert_code(1);
    let ran = std::fs::read_to_string(&log).unwrap();
    let dir_arg = ran.split_whitespace().last().unwrap();
    assert!(dir_arg.starts_with('/'), "{ran}");
    assert!(
        dir_arg.ends_with("/o/http:/127.0.0.1:18081/pod.yaml"),
        "{ran}"
    );
}
