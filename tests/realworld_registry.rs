//! The real-world corpus before and after `--registry` (issue 18): the images of
//! `testdata/realworld/registry-platforms.yaml` (real platform lists, each with its public
//! source) are built as OCI layouts, pushed under their own `registry/repository:tag` to a
//! local docker-registry, and `winlint testdata/realworld/windows` runs offline and with
//! `--registry --registry-mirror 127.0.0.1:PORT`. It prints the findings per rule both ways and
//! every finding that differs, and asserts the differences as judged (issue 18's closing note):
//!
//! * every WIN502 on a fixture image keeps its place and severity and now says it comes from the
//!   registry (servercore:ltsc2019/1809 are one-entry lists of 10.0.17763, servercore:ltsc2025 of
//!   10.0.26100): same verdict, from facts instead of the name;
//! * one new finding: the ltsc2019 pod under Hyper-V isolation on 10.0.20348 hosts. MCR serves
//!   servercore:ltsc2019 as a manifest list, and containerd picks a list entry by the host's build
//!   even for Hyper-V pods, so the pull fails (containerd/containerd#8348: this pod, 1.7.0 default
//!   config; #6862 leaves such pulls to future work). Offline the name alone does not say list or
//!   single manifest, so it is not reported there;
//! * nothing else changes (images without a sourced list answer 404 and are judged by name).
//!
//! Fast (a few seconds) and hermetic (a registry on 127.0.0.1), so it runs in `cargo test`;
//! without docker-registry/skopeo it skips as tests/registry.rs does. Tables and differences:
//! `cargo test --test realworld_registry -- --nocapture`.

mod registry_support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

use registry_support::{Layout, Plat, Registry, entry, tools};
use serde::Deserialize;

#[derive(Deserialize)]
struct Fixture {
    images: Vec<Image>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Image {
    image: String,
    platforms: Vec<Platform>,
    source: String,
    seen: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Platform {
    os: String,
    architecture: String,
    #[serde(rename = "os.version")]
    os_version: Option<String>,
}

/// (file, object, pointer, rule, severity, message).
type Finding = (String, String, String, String, String, String);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture() -> Fixture {
    let path = root().join("testdata/realworld/registry-platforms.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut docs = winlint::source::load(&text)
        .unwrap_or_else(|e| panic!("{}:{}: {}", path.display(), e.line, e.message));
    let f: Fixture = serde_json::from_value(docs.remove(0).value).unwrap();
    for i in &f.images {
        assert!(i.source.starts_with("https://"), "{}: no source", i.image);
        assert!(!i.seen.is_empty() && !i.platforms.is_empty(), "{}", i.image);
    }
    f
}

/// Lint the corpus with `args`: its findings and winlint's stderr.
fn lint(args: &[&str]) -> (BTreeSet<Finding>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_winlint"))
        .args(args)
        .args(["-o", "json", "windows"])
        .current_dir(root().join("testdata/realworld"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("winlint {args:?}: not JSON ({e}): {stderr}"));
    let s = |v: &serde_json::Value, k: &str| v[k].as_str().unwrap_or_default().to_string();
    let findings = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                s(f, "file"),
                s(f, "object"),
                s(f, "pointer"),
                s(f, "rule"),
                s(f, "severity"),
                s(f, "message"),
            )
        })
        .collect();
    (findings, stderr)
}

fn per_rule(findings: &BTreeSet<Finding>) -> BTreeMap<(String, String), usize> {
    let mut m = BTreeMap::new();
    for f in findings {
        *m.entry((f.3.clone(), f.4.clone())).or_default() += 1;
    }
    m
}

fn corpus_before_and_after_registry() {
    if tools().is_none() {
        return;
    }
    let fixture = fixture();
    let reg = pushed(&fixture);
    let cache = tempfile::tempdir().unwrap();
    let cache_arg = cache.path().to_str().unwrap();
    let registry = [
        "--registry",
        "--registry-mirror",
        &reg.host,
        "--registry-cache",
        cache_arg,
    ];
    // The targets of expected.yaml: the default (ltsc2022 hosts) is asserted; the seed targets
    // (1709 and 1803 hosts) are printed for the closing note.
    let targets: [(&str, &[&str]); 3] = [
        ("default", &[]),
        (
            "seed19",
            &["--kubernetes-version", "1.9", "--windows-build", "1709"],
        ),
        (
            "seed111",
            &["--kubernetes-version", "1.11", "--windows-build", "1803"],
        ),
    ];
    for (name, args) in targets {
        let (before, _) = lint(args);
        let with: Vec<&str> = args.iter().copied().chain(registry).collect();
        let (after, stderr) = lint(&with);
        // Every fixture image was looked up (a failure would be judged by its name and say so).
        for i in &fixture.images {
            assert!(
                !stderr.contains(&format!("registry: {}: ", i.image)),
                "{} did not resolve: {stderr}",
                i.image
            );
        }
        let diff = report(name, &before, &after);
        if name != "default" {
            continue;
        }
        // Same verdict at the same place, from the registry's facts now.
        assert!(
            diff.removed.is_empty(),
            "gone with --registry: {:?}",
            diff.removed
        );
        assert_eq!(
            diff.changed.len(),
            9,
            "WIN502 findings judged from the registry"
        );
        for (p, x, y) in &diff.changed {
            let sev = |v: &Vec<(String, String)>| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
            assert_eq!(sev(x), sev(y), "{p:?}: severity changed");
            assert_eq!(p.3, "WIN502", "{p:?}: only WIN502 reads these facts here");
            assert!(
                y.iter().all(|f| f.1.contains(": registry: ")),
                "{p:?}: {y:?}"
            );
        }
        let hyperv = (
            "windows/windows-testing-hyperv-runtimeclass.yaml".to_string(),
            "Pod/hyperv-servercore-2019".to_string(),
            "/spec/containers/0/image".to_string(),
            "WIN502".to_string(),
        );
        let added: Vec<_> = diff.added.iter().map(|(p, _)| p.clone()).collect();
        assert_eq!(added, vec![hyperv], "new findings with --registry");
        assert_eq!(diff.added[0].1[0].0, "error");
    }
}

/// (file, object, pointer, rule).
type Place = (String, String, String, String);
/// (severity, message) of the findings at a place.
type At = Vec<(String, String)>;

#[derive(Default)]
struct Diff {
    removed: Vec<(Place, At)>,
    added: Vec<(Place, At)>,
    changed: Vec<(Place, At, At)>,
}

/// Print the per-rule table and every difference by place (a finding whose severity or message
/// changed is one entry, not a removal and an addition).
fn report(target: &str, before: &BTreeSet<Finding>, after: &BTreeSet<Finding>) -> Diff {
    let (b, a) = (per_rule(before), per_rule(after));
    let keys: BTreeSet<_> = b.keys().chain(a.keys()).collect();
    println!(
        "\n## target {target}\n\n| rule | severity | offline | --registry |\n|---|---|---:|---:|"
    );
    for k in keys {
        let (x, y) = (
            b.get(k).copied().unwrap_or(0),
            a.get(k).copied().unwrap_or(0),
        );
        let mark = if x == y { "" } else { " *" };
        println!("| {} | {} | {x} | {y}{mark} |", k.0, k.1);
    }
    println!("| total | | {} | {} |", before.len(), after.len());
    let by_place = |s: &BTreeSet<Finding>| -> BTreeMap<Place, At> {
        let mut m: BTreeMap<Place, At> = BTreeMap::new();
        for f in s {
            let p = (f.0.clone(), f.1.clone(), f.2.clone(), f.3.clone());
            m.entry(p).or_default().push((f.4.clone(), f.5.clone()));
        }
        m
    };
    let (bp, ap) = (by_place(before), by_place(after));
    let places: BTreeSet<&Place> = bp.keys().chain(ap.keys()).collect();
    println!("\nDifferences (- offline, + with --registry):");
    let mut diff = Diff::default();
    for p in places {
        let (x, y) = (bp.get(p), ap.get(p));
        if x == y {
            continue;
        }
        println!("{} {} {} {}", p.0, p.1, p.2, p.3);
        for (sev, msg) in x.into_iter().flatten() {
            println!("  - {sev}: {msg}");
        }
        for (sev, msg) in y.into_iter().flatten() {
            println!("  + {sev}: {msg}");
        }
        match (x, y) {
            (Some(x), Some(y)) => diff.changed.push((p.clone(), x.clone(), y.clone())),
            (None, Some(y)) => diff.added.push((p.clone(), y.clone())),
            (Some(x), None) => diff.removed.push((p.clone(), x.clone())),
            (None, None) => unreachable!(),
        }
    }
    diff
}

/// A local registry holding the fixture's images under their own names (Docker media types:
/// MCR and Docker Hub serve manifest lists).
fn pushed(fixture: &Fixture) -> Registry {
    let reg = Registry::start(None);
    for i in &fixture.images {
        let r = winlint::model::image::parse(&i.image).expect("a reference");
        let tag = r.tag.clone().unwrap_or_else(|| "latest".into());
        let mut l = Layout::new();
        let entries = i
            .platforms
            .iter()
            .map(|p| {
                let plat = Plat {
                    os: &p.os,
                    arch: &p.architecture,
                    version: p.os_version.as_deref(),
                };
                entry(&l.manifest(&plat), &plat)
            })
            .collect();
        let index = l.index(entries);
        l.tag(&index, &tag);
        // Docker media types: MCR and Docker Hub serve manifest lists.
        let name = format!("{}/{}", r.registry, r.repository);
        reg.push(l.dir.path(), &tag, &name, true);
    }
    reg
}

/// `winlint plan --registry` on testdata/plan, 2022 → 2025 (issue 27): the registry's lists
/// decide, and a tag to move to is named with its digest when the registry lists it for the
/// planned build (servercore:ltsc2019 → servercore:ltsc2025, a one-entry list of 10.0.26100).
fn plan_with_the_registry_names_the_tag_and_digest() {
    if tools().is_none() {
        return;
    }
    let reg = pushed(&fixture());
    let cache = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_winlint"))
        .args(["plan", "testdata/plan", "--no-config", "--platform", "aks"])
        .args([
            "--windows-build",
            "ltsc2022",
            "--to",
            "ltsc2025",
            "--format",
            "json",
        ])
        .args([
            "--registry",
            "--registry-mirror",
            &reg.host,
            "--registry-cache",
        ])
        .arg(cache.path())
        .current_dir(root())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plan["registry"], true);
    let container = |object: &str| {
        plan["workloads"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["object"] == object)
            .unwrap_or_else(|| panic!("{object} not planned"))["containers"][0]
            .clone()
    };
    let web = container("Deployment/win-webserver");
    assert_eq!(web["verdict"], "retag", "{web}");
    assert!(
        web["evidence"].as_str().unwrap().starts_with("registry: "),
        "{web}"
    );
    let change = web["change"].as_str().unwrap();
    assert!(
        change.starts_with("image: mcr.microsoft.com/windows/servercore:ltsc2025 (digest sha256:"),
        "{change}"
    );
    // Not in the registry (404): judged by its name, and said on stderr.
    let ps = container("windows-storage-example/Deployment/example-windows-pod");
    assert_eq!(ps["verdict"], "runs-as-is", "{ps}");
    assert!(stderr.contains("(judged by its name)"), "{stderr}");
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use registry_support::skip_support::{run, test};
    run(vec![
        test(
            "corpus_before_and_after_registry",
            corpus_before_and_after_registry,
        ),
        test(
            "plan_with_the_registry_names_the_tag_and_digest",
            plan_with_the_registry_names_the_tag_and_digest,
        ),
    ]);
}
