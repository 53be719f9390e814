//! `winlint plan --fix` / `--diff`: every *retag* verdict's image reference rewritten in the
//! input files to the reference the verdict names ([`crate::plan::fix`]), through `--fix`'s own
//! machinery: the edits planned by [`super::fix::plan_edits`] (surgical, comments and layout
//! kept), the file written by [`super::write::write_fix`] (atomic, never a file that changed
//! meanwhile, a symlink out of the tree or a read-only file). What it must not touch it refuses
//! and says why: a chart's or kustomization's rendered output and a chart's own files (the
//! templates are Helm's input, not manifests), and stdin (nothing to write back: `--diff` prints
//! the change).

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use crate::model::Context;
use crate::model::workload::{is_pod_kind, objects};
use crate::plan::fix::ImageFix;
use crate::plan::{Move, plan_object};
use crate::source;

use super::collect::Input;
use super::fix::{diff_name, plan_edits, with_bom};
use super::write;

/// What `--fix` or `--diff` did.
#[derive(Default)]
pub(super) struct Outcome {
    /// `--diff`: the patch of every file (git's unified format).
    pub diff: String,
    /// One line per rewrite and per retag not rewritten (stderr).
    pub notes: Vec<String>,
    /// The documents of each file written, by input name: what the plan then judges.
    pub fixed: Vec<(String, Vec<Value>)>,
    /// A file that could not be written or edited.
    pub errors: Vec<crate::report::InputError>,
}

/// How `--fix` runs.
pub(super) struct Options {
    pub diff: bool,
    pub follow_symlinks: bool,
    pub cap: u64,
}

/// Rewrite the retags of every input.
pub(super) fn fix(inputs: &[Input], mv: &Move, cx: &Context, o: &Options) -> Outcome {
    let mut out = Outcome::default();
    for input in inputs {
        fix_input(input, mv, cx, o, &mut out);
    }
    out
}

fn fix_input(input: &Input, mv: &Move, cx: &Context, o: &Options, out: &mut Outcome) {
    let Ok(bytes) = input.read(o.cap) else {
        return; // reported when the inputs were read
    };
    let text = String::from_utf8_lossy(&bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let Ok(docs) = source::load(text) else {
        return;
    };
    let name = &input.name;
    // The rewrites of each document: (doc, pointer from the root, old, new).
    let mut rewrites: Vec<(usize, String, String, String)> = Vec::new();
    for (di, doc) in docs.iter().enumerate() {
        for (prefix, obj) in objects(&doc.value) {
            let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
            if !is_pod_kind(kind) {
                continue;
            }
            let Some(w) = plan_object(obj, name, mv, cx) else {
                continue;
            };
            for c in &w.containers {
                let pointer = format!("{prefix}{}", c.pointer);
                let (line, _) = doc.map.locate(&pointer);
                match &c.fix {
                    Some(ImageFix::To(new)) => {
                        rewrites.push((di, pointer, c.image.clone(), new.clone()))
                    }
                    Some(ImageFix::Refused(why)) => out.notes.push(format!(
                        "{}: {} {} {}: not fixed: {why}",
                        at(input, line),
                        w.object,
                        c.container,
                        c.image
                    )),
                    None => {}
                }
            }
        }
    }
    if rewrites.is_empty() {
        return;
    }
    let refuse = |out: &mut Outcome, why: &str| {
        for (di, pointer, old, new) in &rewrites {
            let (line, _) = docs[*di].map.locate(pointer);
            out.notes.push(format!(
                "{}: not fixed: {old} → {new}: {why}",
                at(input, line)
            ));
        }
    };
    if let Some(r) = &input.rendered {
        let why = format!(
            "`{}` renders it; change the image in the {}'s values or templates by hand",
            r.label,
            r.what()
        );
        return refuse(out, &why);
    }
    if let Some(chart) = input.path.as_deref().and_then(chart_of) {
        let why = format!(
            "a file of the Helm chart {}: its templates are Helm's input, not manifests; change the values by hand",
            chart.display()
        );
        return refuse(out, &why);
    }
    if input.path.is_none() && !o.diff {
        return refuse(
            out,
            "stdin has no file to write back; `winlint plan --diff -` prints the change as a patch",
        );
    }
    let mut edits = Vec::new();
    for (di, doc) in docs.iter().enumerate() {
        let ops: Vec<Vec<json_patch::PatchOperation>> = (rewrites.iter())
            .filter(|r| r.0 == di)
            .map(|(_, pointer, _, new)| {
                vec![crate::model::ops::replace(
                    pointer,
                    Value::String(new.clone()),
                )]
            })
            .collect();
        if ops.is_empty() {
            continue;
        }
        let groups: Vec<&[json_patch::PatchOperation]> = ops.iter().map(Vec::as_slice).collect();
        match plan_edits(text, doc, &groups) {
            Ok((e, given_up)) => {
                edits.extend(e);
                for (g, why) in given_up {
                    let pointer = match &groups[g][0] {
                        json_patch::PatchOperation::Replace(r) => r.path.to_string(),
                        _ => String::new(),
                    };
                    let (line, _) = doc.map.locate(&pointer);
                    out.notes
                        .push(format!("{}: not fixed: {why}", at(input, line)));
                }
            }
            Err(e) => out
                .errors
                .push(error(input, format!("cannot apply fixes: {e}"))),
        }
    }
    if edits.is_empty() {
        return;
    }
    edits.sort_by_key(|e| e.start);
    let fixed = crate::textedit::apply(text, &edits);
    let values = match source::load(&fixed) {
        Ok(d) => d.into_iter().map(|d| d.value).collect(),
        Err(e) => {
            out.errors
                .push(error(input, format!("cannot apply fixes: {}", e.message)));
            return;
        }
    };
    if o.diff {
        let _ = write!(
            out.diff,
            "{}",
            similar::TextDiff::from_lines(text, &fixed)
                .unified_diff()
                .header(&diff_name("a", name), &diff_name("b", name))
        );
        return;
    }
    let Some(path) = &input.path else { return };
    let written = write::write_fix(
        &write::Place {
            path,
            tree: &input.tree,
            follow_symlinks: o.follow_symlinks,
        },
        &bytes,
        &with_bom(&bytes, &fixed),
    );
    match written {
        Ok(()) => {
            for (di, pointer, old, new) in &rewrites {
                let (line, _) = docs[*di].map.locate(pointer);
                out.notes
                    .push(format!("{}: fixed: {old} → {new}", at(input, line)));
            }
            out.fixed.push((name.clone(), values));
        }
        Err(e) => out
            .errors
            .push(error(input, format!("--fix did not write the file: {e}"))),
    }
}

fn at(input: &Input, line: usize) -> String {
    match input.rendered {
        Some(_) => input.name.clone(),
        None => format!("{}:{line}", input.name),
    }
}

fn error(input: &Input, message: String) -> crate::report::InputError {
    crate::report::InputError {
        file: input.name.clone(),
        line: 0,
        column: 0,
        message,
    }
}

/// The Helm chart a file belongs to (a directory above it holds `Chart.yaml`).
fn chart_of(file: &Path) -> Option<std::path::PathBuf> {
    let file = std::fs::canonicalize(file).ok()?;
    file.ancestors()
        .skip(1)
        .find(|d| d.join("Chart.yaml").is_file())
        .map(Path::to_path_buf)
}
