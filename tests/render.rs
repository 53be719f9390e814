//! Helm charts and Kustomize directories, rendered by the real tools (src/render/).
//!
//! helm comes from `$WINLINT_HELM` or PATH, kustomize/kubectl from `$WINLINT_KUSTOMIZE` or PATH
//! (`.ci/run` installs both into target/ci-tools). Without them these tests skip with a message,
//! except under `CI=true`, where a missing tool fails them. The tests of what happens without a
//! tool need none.
//!
//! Golden files: testdata/render/expected/ (`WINLINT_BLESS=1` rewrites them).

mod cli_support;

use std::path::Path;

use cli_support::{Out, Run, ci_tool, findings, root};
use serde_json::Value;

const CHART: &str = "testdata/charts/winapp";
const TEMPLATE: &str = "testdata/charts/winapp/templates/deployment.yaml";
const KUSTOMIZE: &str = "testdata/kustomize";

fn helm() -> Option<String> {
    ci_tool("WINLINT_HELM", &["helm"], &["version"], "helm")
}

fn kustomizer() -> Option<String> {
    ci_tool(
        "WINLINT_KUSTOMIZE",
        &["kustomize", "kubectl"],
        &["version", "--client"],
        "kustomize or kubectl",
    )
}

fn run_with(args: &[&str]) -> Out {
    let mut r = Run::new(args);
    if let Some(h) = helm() {
        r = r.env("WINLINT_HELM", &h);
    }
    if let Some(k) = kustomizer() {
        r = r.env("WINLINT_KUSTOMIZE", &k);
    }
    r.run()
}

fn golden(name: &str, actual: &str) {
    cli_support::golden(&format!("testdata/render/expected/{name}"), actual);
}

fn chart_findings_name_their_template_and_render() {
    if helm().is_none() {
        return;
    }
    let out = run_with(&[CHART]);
    out.assert_code(1);
    golden("winapp.txt", &out.stdout);
    for format in ["github", "codequality"] {
        let out = run_with(&["-o", format, CHART]);
        out.assert_code(1);
        golden(&format!("winapp.{format}"), &out.stdout);
    }
}

fn chart_json_places_findings_by_template_object_and_render() {
    if helm().is_none() {
        return;
    }
    let out = run_with(&["-o", "json", CHART]);
    out.assert_code(1);
    let r = out.json();
    let fs = findings(&r);
    assert!(!fs.is_empty());
    for f in fs {
        assert_eq!(f["file"], TEMPLATE, "{f}");
        assert_eq!(f["line"], 0, "no line in rendered output: {f}");
        assert_eq!(f["column"], 0);
        assert_eq!(f["object"], "Deployment/release-name-winapp");
        assert!(f.get("fix").is_none_or(|x| x["applied_by_fix"] == false));
    }
    let renders = |rule: &str| -> Vec<&str> {
        fs.iter()
            .filter(|f| f["rule"] == rule)
            .map(|f| f["rendered"].as_str().unwrap())
            .collect()
    };
    // The default values pin the pods; the ci/ values file does not.
    assert_eq!(
        renders("WIN001"),
        ["helm template -f ci/unpinned-values.yaml"]
    );
    assert_eq!(
        renders("WIN403"),
        ["helm template", "helm template -f ci/unpinned-values.yaml"]
    );
    // Two renders (values.yaml, ci/unpinned-values.yaml), each with a Deployment and a Service;
    // values.yaml, Chart.yaml and the templates are not linted as files.
    assert_eq!(r["summary"]["files"], 2);
    assert_eq!(r["summary"]["objects"], 4);
    assert_eq!(r["errors"], Value::Array(vec![]));
}

fn chart_sarif_results_have_no_region_and_an_identity() {
    if helm().is_none() {
        return;
    }
    let out = run_with(&["-o", "sarif", CHART]);
    let s = out.json();
    for res in s["runs"][0]["results"].as_array().unwrap() {
        let loc = &res["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], TEMPLATE);
        assert!(loc.get("region").is_none(), "{res}");
        let print = res["fingerprints"]["winlint/v1"].as_str().unwrap();
        assert_eq!(
            res["partialFingerprints"]["primaryLocationLineHash"],
            format!("{}:1", &print[..16])
        );
        assert!(
            res["message"]["text"]
                .as_str()
                .unwrap()
                .starts_with("Deployment/release-name-winapp (helm template")
        );
    }
}

fn helm_values_and_set_apply_to_every_render() {
    if helm().is_none() {
        return;
    }
    let out = run_with(&["-o", "json", "--helm-set", "windows.pinned=false", CHART]);
    let r = out.json();
    let win001: Vec<&Value> = findings(&r)
        .iter()
        .filter(|f| f["rule"] == "WIN001")
        .collect();
    assert_eq!(win001.len(), 2, "both renders are unpinned: {r}");
    let values = "testdata/charts/winapp/ci/unpinned-values.yaml";
    let out = run_with(&["-o", "json", "--helm-values", values, CHART]);
    let r = out.json();
    assert_eq!(
        findings(&r)
            .iter()
            .filter(|f| f["rule"] == "WIN502")
            .count(),
        2
    );
}

/// The chart renders for the target Kubernetes version: the webhook chart requires 1.25+.
fn charts_render_for_the_target_kubernetes_version() {
    if helm().is_none() {
        return;
    }
    let out = run_with(&["--kubernetes-version", "1.24", "charts/winlint"]);
    out.assert_code(2);
    assert!(
        out.stdout
            .contains("charts/winlint: error helm template failed: ")
            && out.stdout.contains("incompatible with Kubernetes v1.24"),
        "{out}"
    );
}

/// Done when: the project's own chart renders and is clean (its pods are pinned to Linux).
fn the_webhook_chart_lints_clean() {
    if helm().is_none() {
        return;
    }
    let out = run_with(&["-o", "json", "charts/winlint"]);
    out.assert_code(0);
    let r = out.json();
    assert_eq!(findings(&r).len(), 0, "{r}");
    assert!(r["summary"]["objects"].as_u64().unwrap() >= 8, "{r}");
    assert_eq!(r["summary"]["pods"], 1, "the webhook Deployment is checked");
    assert_eq!(r["summary"]["files"], 1, "one render: no ci/*.yaml values");
}

fn a_chart_that_fails_to_render_gives_helms_error_and_the_rest_is_linted() {
    if helm().is_none() {
        return;
    }
    let out = run_with(&[
        "testdata/render/broken-chart",
        "testdata/examples/iis-deployment.yaml",
    ]);
    out.assert_code(2);
    assert!(
        out.stdout.contains(
            "testdata/render/broken-chart: error helm template failed: Error: execution error at \
             (broken/templates/bad.yaml:1:3): this chart fails on purpose"
        ),
        "{out}"
    );
    assert!(
        out.stdout
            .contains("iis-deployment.yaml:15:5: web/Deployment/iis: error WIN001"),
        "{out}"
    );
}

fn kustomize_overlay_is_built_and_its_base_is_not_linted_alone() {
    if kustomizer().is_none() {
        return;
    }
    let out = run_with(&[KUSTOMIZE]);
    out.assert_code(1);
    // The label says which tool built it; the golden file is written with kubectl.
    let tool = if out.stdout.contains("(kustomize build)") {
        "kustomize build"
    } else {
        "kubectl kustomize"
    };
    golden(
        "kustomize.txt",
        &out.stdout.replace(tool, "kubectl kustomize"),
    );
    let r = run_with(&["-o", "json", KUSTOMIZE]).json();
    for f in findings(&r) {
        assert_eq!(
            f["file"],
            "testdata/kustomize/overlays/windows/kustomization.yaml"
        );
        assert_eq!(f["object"], "Deployment/web-win");
    }
    // One build; the base's files and both kustomization files are not linted as files.
    assert_eq!(r["summary"]["files"], 1, "{r}");
    // Given on its own, the base builds and is a Linux app: clean.
    run_with(&["testdata/kustomize/base"]).assert_code(0);
}

/// --fix refuses rendered output (an error for that input, its findings `[not fixed: …]`) and
/// still fixes the plain files of the run.
fn fix_refuses_rendered_output_and_fixes_the_files() {
    if helm().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&root().join(CHART), &dir.path().join("winapp"));
    let plain = dir.path().join("iis.yaml");
    std::fs::copy(root().join("testdata/examples/iis-deployment.yaml"), &plain).unwrap();
    let template = dir.path().join("winapp/templates/deployment.yaml");
    let before = std::fs::read_to_string(&template).unwrap();
    let out = Run::new(&["--fix", "."])
        .cwd(dir.path())
        .env("WINLINT_HELM", &helm().unwrap())
        .run();
    out.assert_code(2);
    assert!(
        out.stdout.contains(
            "winapp/ci/unpinned-values.yaml: error --fix cannot edit what helm template -f \
             ci/unpinned-values.yaml renders: 3 fixable finding(s) in the chart ./winapp are left"
        ),
        "{out}"
    );
    assert!(
        out.stdout.contains(
            "[not fixed: --fix cannot edit what helm template -f ci/unpinned-values.yaml renders]"
        ),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&template).unwrap(), before);
    let fixed = std::fs::read_to_string(&plain).unwrap();
    assert!(fixed.contains("kubernetes.io/os: windows"), "{fixed}");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Without helm and kustomize: one clear line per chart and per kustomization, exit 2, and the
/// other inputs are still linted. Needs no tool.
fn without_the_tools_each_chart_and_kustomization_is_one_clear_error() {
    let empty = tempfile::tempdir().unwrap();
    let out = Run::new(&[CHART, KUSTOMIZE, "testdata/examples/iis-deployment.yaml"])
        .env("PATH", empty.path().to_str().unwrap())
        .env_remove("WINLINT_HELM")
        .env_remove("WINLINT_KUSTOMIZE")
        .run();
    out.assert_code(2);
    let errors: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains(": error skipped"))
        .collect();
    assert_eq!(
        errors,
        [
            "testdata/charts/winapp: error skipped chart: helm not found; install helm (or give \
             --helm PATH) or pipe `helm template testdata/charts/winapp` into `winlint -`",
            "testdata/kustomize/overlays/windows: error skipped kustomization: neither kustomize \
             nor kubectl found; install one (or give --kustomize PATH) or pipe `kubectl \
             kustomize testdata/kustomize/overlays/windows` into `winlint -`",
        ],
        "{out}"
    );
    assert!(
        out.stdout
            .contains("iis-deployment.yaml:15:5: web/Deployment/iis: error WIN001"),
        "{out}"
    );
    assert!(out.stdout.contains("2 inputs could not be read"), "{out}");
}

/// A Kustomize patch named on the command line (what a pre-commit hook passes) is a fragment
/// its base completes: linted alone it would miss the base's selector and tolerations, and
/// `--fix` would write lists into it that replace the base's. It is linted through the
/// kustomization that applies it, or, with no tool to build that, not at all (a note says so).
fn a_patch_named_on_the_command_line_is_linted_through_its_kustomization() {
    const PATCH: &str = "testdata/kustomize/overlays/windows/windows.yaml";
    if kustomizer().is_some() {
        let through = run_with(&["-o", "json", PATCH]);
        through.assert_code(1);
        assert_eq!(
            through.stderr,
            format!(
                "{PATCH}: note: a patch of the kustomization testdata/kustomize/overlays/windows: \
                 linted through it\n"
            )
        );
        let overlay = run_with(&["-o", "json", "testdata/kustomize/overlays/windows"]);
        assert_eq!(through.json()["findings"], overlay.json()["findings"]);
    }
    let empty = tempfile::tempdir().unwrap();
    let alone = Run::new(&["--fix", PATCH])
        .env("PATH", empty.path().to_str().unwrap())
        .env_remove("WINLINT_KUSTOMIZE")
        .run();
    alone.assert_code(0);
    assert!(
        alone.stderr.contains(
            "not linted alone, and neither kustomize nor kubectl is here to build it; pipe \
             `kubectl kustomize testdata/kustomize/overlays/windows` into `winlint -`"
        ),
        "{alone}"
    );
    assert!(alone.stdout.contains("in 0 files"), "{alone}");
}

/// A document with strategic-merge directives (`$patch: replace`) is no object, wherever it is.
fn a_strategic_merge_patch_document_is_not_linted_or_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("patch.yaml");
    let text = "kind: DaemonSet\napiVersion: apps/v1\nmetadata:\n  name: csi-node-win\nspec:\n  \
                template:\n    spec:\n      containers:\n      - name: driver\n        \
                volumeMounts:\n        - $patch: replace\n";
    std::fs::write(&file, text).unwrap();
    let out = Run::new(&["--fix", file.to_str().unwrap()]).run();
    out.assert_code(0);
    assert!(
        out.stderr
            .contains(":1: note: a strategic-merge patch ($patch directives), not an object"),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use cli_support::skip_support::{run, test};
    run(vec![
        test(
            "chart_findings_name_their_template_and_render",
            chart_findings_name_their_template_and_render,
        ),
        test(
            "chart_json_places_findings_by_template_object_and_render",
            chart_json_places_findings_by_template_object_and_render,
        ),
        test(
            "chart_sarif_results_have_no_region_and_an_identity",
            chart_sarif_results_have_no_region_and_an_identity,
        ),
        test(
            "helm_values_and_set_apply_to_every_render",
            helm_values_and_set_apply_to_every_render,
        ),
        test(
            "charts_render_for_the_target_kubernetes_version",
            charts_render_for_the_target_kubernetes_version,
        ),
        test(
            "the_webhook_chart_lints_clean",
            the_webhook_chart_lints_clean,
        ),
        test(
            "a_chart_that_fails_to_render_gives_helms_error_and_the_rest_is_linted",
            a_chart_that_fails_to_render_gives_helms_error_and_the_rest_is_linted,
        ),
        test(
            "kustomize_overlay_is_built_and_its_base_is_not_linted_alone",
            kustomize_overlay_is_built_and_its_base_is_not_linted_alone,
        ),
        test(
            "fix_refuses_rendered_output_and_fixes_the_files",
            fix_refuses_rendered_output_and_fixes_the_files,
        ),
        test(
            "without_the_tools_each_chart_and_kustomization_is_one_clear_error",
            without_the_tools_each_chart_and_kustomization_is_one_clear_error,
        ),
        test(
            "a_patch_named_on_the_command_line_is_linted_through_its_kustomization",
            a_patch_named_on_the_command_line_is_linted_through_its_kustomization,
        ),
        test(
            "a_strategic_merge_patch_document_is_not_linted_or_fixed",
            a_strategic_merge_patch_document_is_not_linted_or_fixed,
        ),
    ]);
}
