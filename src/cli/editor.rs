//! The editor's lint (`winlint lsp`): one buffer's text linted the way `winlint FILE` lints that
//! file. The same configuration discovery (`--config`, else the nearest `winlint.yaml` from the
//! file's directory up to its repository root), the same pass 1 (the buffer's own context
//! objects: RuntimeClasses, namespaces) and the same pass 2 ([`lint_input`] on the buffer's
//! bytes, as on stdin's), so an editor shows what the command line reports.

use std::path::Path;

use clap::Parser;

use crate::config::Config;
use crate::lsp::{Linted, Linter};
use crate::model::Context;
use crate::model::workload::objects;

use super::args::{Cli, LintArgs, TargetArgs};
use super::collect::Input;
use super::lint::lint_input;
use super::prescan::{context_values, may_hold_context};

/// The linter `winlint lsp` runs: the target and policy flags it was started with.
pub(super) struct EditorLinter {
    target: TargetArgs,
    /// `winlint FILE`'s defaults (no `--fix`, the input cap): what [`lint_input`] reads.
    defaults: LintArgs,
}

impl EditorLinter {
    pub(super) fn new(target: TargetArgs) -> Result<Self, String> {
        let defaults = Cli::try_parse_from(["winlint"])
            .map_err(|e| e.to_string())?
            .lint;
        let me = EditorLinter { target, defaults };
        // A bad flag or `--config` is an error at start, not a silent default per buffer.
        me.config(None)?;
        Ok(me)
    }

    /// The configuration for a file at `path`: `--config`, else the one found from its
    /// directory (as `winlint` run there finds it), then the flags.
    fn config(&self, path: Option<&Path>) -> Result<Config, String> {
        let file = match (&self.target.config, self.target.no_config, path) {
            (Some(_), _, _) | (None, true, _) | (None, false, None) => self.target.config_file(),
            (None, false, Some(p)) => {
                crate::config::discover::find_from(p.parent().unwrap_or(Path::new(".")))
            }
        };
        (self.target.to_config_from(file.as_deref())).map_err(|e| e.to_string())
    }
}

/// A file under a Helm chart's `templates/` (the directory beside its `Chart.yaml`).
fn is_chart_template(path: &Path) -> bool {
    path.ancestors().skip(1).any(|d| {
        d.file_name().is_some_and(|n| n == "templates")
            && d.parent().is_some_and(|c| c.join("Chart.yaml").is_file())
    })
}

impl Linter for EditorLinter {
    fn lint(&self, name: &str, path: Option<&Path>, text: &str) -> Result<Linted, String> {
        let cfg = self.config(path)?;
        if path.is_some_and(is_chart_template) {
            // Go templates, not manifests: `winlint CHART` lints them through `helm template`,
            // which the editor does not run yet. Linted as YAML they would show only noise.
            return Ok(Linted {
                findings: Vec::new(),
                errors: Vec::new(),
                config: cfg,
                context: Context::default(),
            });
        }
        // Pass 1 over the one input.
        let mut cx = Context::default();
        if may_hold_context(text) {
            for v in &context_values(text) {
                for (_, o) in objects(v) {
                    cx.add(o);
                }
            }
        }
        let input = Input {
            name: name.to_string(),
            path: None,
            tree: path
                .and_then(Path::parent)
                .map_or_else(Default::default, Path::to_path_buf),
            bytes: Some(text.as_bytes().to_vec()),
            rendered: None,
        };
        let out = lint_input(&input, &self.defaults, &cfg, &cx);
        Ok(Linted {
            findings: out.findings,
            errors: out.errors,
            config: cfg,
            context: cx,
        })
    }

    fn fix_all(&self, text: &str, linted: &Linted) -> Option<String> {
        super::fix::fix_text(text, &linted.config, &linted.context)
            .ok()?
            .text
    }
}
