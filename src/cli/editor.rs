//! The editor's lint (`winlint lsp`): one buffer's text linted the way `winlint FILE` lints that
//! file. The same configuration discovery (`--config`, else the nearest `winlint.yaml` from the
//! file's directory up to its repository root), the same pass 1 (the buffer's own context
//! objects: RuntimeClasses, namespaces) and the same pass 2 ([`lint_input`] on the buffer's
//! bytes, as on stdin's), so an editor shows what the command line reports.
//!
//! A chart's or a kustomization's files are linted through their render, as `winlint DIR` lints
//! them: the same [`crate::render`] plan, tools, limits and mapping of findings back to the
//! template ([`EditorLinter::lint_rendered`]). Their buffers are not linted alone, as the
//! command line never lints them as files: a template is Go text, a patch a fragment.

use std::path::Path;

use clap::Parser;

use crate::config::Config;
use crate::lsp::{Linted, Linter};
use crate::model::Context;
use crate::model::workload::objects;
use crate::render::{Plan, RenderArgs, Source};

use super::args::{Cli, LintArgs, TargetArgs};
use super::collect::{Input, rendered_inputs};
use super::lint::lint_input;
use super::prescan::{context_values, may_hold_context};

/// The linter `winlint lsp` runs: the target and policy flags it was started with.
pub(super) struct EditorLinter {
    target: TargetArgs,
    /// How charts and kustomizations are rendered (`--helm`, `--render-timeout`, …).
    render: RenderArgs,
    /// `winlint FILE`'s defaults (no `--fix`, the input cap): what [`lint_input`] reads.
    defaults: LintArgs,
}

impl EditorLinter {
    pub(super) fn new(target: TargetArgs, mut render: RenderArgs) -> Result<Self, String> {
        let defaults = Cli::try_parse_from(["winlint"])
            .map_err(|e| e.to_string())?
            .lint;
        // As `winlint lint` sets it: a tool's output is capped like any input.
        render.output_cap = defaults.max_input_bytes;
        let me = EditorLinter {
            target,
            render,
            defaults,
        };
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

/// Pass 1 over some texts: their context objects (RuntimeClasses, namespaces, …).
fn context_of<'a>(texts: impl IntoIterator<Item = &'a str>) -> Context {
    let mut cx = Context::default();
    for text in texts.into_iter().filter(|t| may_hold_context(t)) {
        for v in &context_values(text) {
            for (_, o) in objects(v) {
                cx.add(o);
            }
        }
    }
    cx
}

impl Linter for EditorLinter {
    fn lint(&self, name: &str, path: Option<&Path>, text: &str) -> Result<Linted, String> {
        let cfg = self.config(path)?;
        let alone = match path.and_then(crate::render::source_of_file) {
            // Under a chart: Go templates and values, no manifests (`winlint CHART` lints them
            // through `helm template`, [`Self::lint_rendered`]); linted as YAML they would
            // show only noise.
            Some(Source::Chart(_)) => false,
            // A patch is a fragment its base completes: `winlint PATCH` lints it through its
            // kustomization only. A resource is a manifest of its own: `winlint FILE` lints it.
            Some(Source::Kustomization(_)) => path.and_then(crate::render::patch_of).is_none(),
            None => true,
        };
        if !alone {
            return Ok(Linted {
                findings: Vec::new(),
                errors: Vec::new(),
                config: cfg,
                context: Context::default(),
            });
        }
        // Pass 1 over the one input.
        let cx = context_of([text]);
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

    fn source_of(&self, path: &Path) -> Option<Source> {
        crate::render::source_of_file(path)
    }

    fn lint_rendered(&self, source: &Source) -> Result<Linted, String> {
        // The configuration found from the chart's or the kustomization's directory, as for
        // a buffer there.
        let cfg = self.config(Some(&match source {
            Source::Chart(dir) => dir.join("Chart.yaml"),
            Source::Kustomization(file) => file.clone(),
        }))?;
        let mut errors = Vec::new();
        let plan = Plan::new(&[(source.clone(), true)]);
        let kube = cfg.target.kubernetes.to_string();
        let inputs = rendered_inputs(&plan, &self.render, &kube, &mut errors);
        let texts: Vec<String> = (inputs.iter())
            .filter_map(|i| i.bytes.as_deref())
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect();
        let cx = context_of(texts.iter().map(String::as_str));
        let mut findings = Vec::new();
        for input in &inputs {
            let out = lint_input(input, &self.defaults, &cfg, &cx);
            findings.extend(out.findings);
            errors.extend(out.errors);
        }
        Ok(Linted {
            findings,
            errors,
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
