//! Helm charts: `helm template`.

use std::path::{Path, PathBuf};

use super::{How, Output, RenderArgs, Rendered, input_error, tool};
use crate::report::InputError;

/// The chart's name (`name:` of Chart.yaml), which starts the paths of its `# Source:` comments.
fn chart_name(dir: &Path) -> String {
    std::fs::read(dir.join("Chart.yaml"))
        .ok()
        .and_then(|b| crate::source::load_bytes_values(&b).ok())
        .and_then(|v| {
            v.first()
                .and_then(|d| d.get("name"))
                .and_then(|n| n.as_str())
                .map(String::from)
        })
        .unwrap_or_else(|| {
            dir.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
}

/// The chart's `ci/*.yaml` (and `*.yml`) values files, sorted.
fn ci_values(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join("ci"))
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_file() && matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))
        })
        .collect();
    v.sort();
    v
}

/// Render the chart in `dir` with its default values and with each `ci/` values file.
pub(super) fn render(
    dir: &Path,
    args: &RenderArgs,
    kube_version: &str,
    out: &mut Vec<Output>,
    errors: &mut Vec<InputError>,
) {
    let Some(helm) = args.helm.clone().or_else(|| tool::on_path("helm")) else {
        errors.push(input_error(
            dir,
            format!(
                "skipped chart: helm not found; install helm (or give --helm PATH) or pipe \
                 `helm template {}` into `winlint -`",
                dir.display()
            ),
        ));
        return;
    };
    let name = chart_name(dir);
    let mut base = vec![
        "template".to_string(),
        tool::local_arg(dir),
        "--kube-version".into(),
        kube_version.to_string(),
    ];
    for v in &args.helm_values {
        base.extend(["--values".into(), v.display().to_string()]);
    }
    for s in &args.helm_set {
        base.extend(["--set".into(), s.clone()]);
    }
    let mut runs: Vec<(Option<PathBuf>, Vec<String>)> = vec![(None, base.clone())];
    for ci in ci_values(dir) {
        let mut a = base.clone();
        a.extend(["--values".into(), ci.display().to_string()]);
        runs.push((Some(ci), a));
    }
    for (ci, a) in runs {
        let place = ci.clone().unwrap_or_else(|| dir.to_path_buf());
        let label = match &ci {
            None => "helm template".to_string(),
            Some(f) => format!(
                "helm template -f {}",
                f.strip_prefix(dir).unwrap_or(f).display()
            ),
        };
        match tool::run(&helm, &a, None, args.limits()) {
            Ok(r) if r.success => out.push(Output {
                name: place.display().to_string(),
                bytes: r.stdout,
                rendered: Rendered {
                    label,
                    how: How::Helm {
                        dir: dir.to_path_buf(),
                        name: name.clone(),
                    },
                },
            }),
            Ok(r) => errors.push(input_error(&place, format!("{label} failed: {}", r.stderr))),
            Err(e) => errors.push(input_error(&place, e)),
        }
    }
}

/// The template a rendered document comes from: helm writes `# Source: CHART/templates/x.yaml`
/// before each one; the chart's own directory replaces `CHART`.
pub(super) fn source_file(dir: &Path, name: &str, doc_text: &str) -> String {
    let source = doc_text
        .lines()
        .find_map(|l| l.strip_prefix("# Source: "))
        .map(str::trim);
    match source {
        Some(s) => {
            let rel = s
                .strip_prefix(name)
                .and_then(|r| r.strip_prefix('/'))
                .unwrap_or(s);
            dir.join(rel).display().to_string()
        }
        None => dir.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_comments_name_the_template_in_the_chart_directory() {
        let d = Path::new("charts/web");
        let doc = "---\n# Source: web-app/templates/deployment.yaml\napiVersion: apps/v1\n";
        assert_eq!(
            source_file(d, "web-app", doc),
            "charts/web/templates/deployment.yaml"
        );
        let sub = "# Source: web-app/charts/db/templates/sts.yaml\nkind: StatefulSet\n";
        assert_eq!(
            source_file(d, "web-app", sub),
            "charts/web/charts/db/templates/sts.yaml"
        );
        assert_eq!(source_file(d, "web-app", "kind: Pod\n"), "charts/web");
    }
}
