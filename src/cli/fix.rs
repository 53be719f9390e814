//! `--fix` on a file's text: the [`Fixer`] lints and applies the allowed fixes, [`TextDocument`]
//! turns each pass's fixes into surgical text edits ([`crate::textedit`]). [`fix_text`] is public
//! for the tests that fix text without a command line.

use serde_json::Value;

use crate::config::Config;
use crate::engine::fix::{Commit, FixOptions, Fixer, NotFixed, ObjectLint, PassFix};
use crate::engine::{self};
use crate::model::Context;
use crate::model::Operation;
use crate::source::{self, Document};

/// What `--fix` made of a file's text.
#[derive(Debug, Default)]
pub struct FixedText {
    /// The fixed text; `None` when nothing changed.
    pub text: Option<String>,
    /// The fixes it could not make, each with why.
    pub not_fixed: Vec<NotFixed>,
    /// The documents of the fixed text, as its last pass loaded them (`None` when nothing
    /// changed, or the text's line breaks were changed for the editor and back).
    pub docs: Option<Vec<Document>>,
    /// The lint of every object of the original text (the fixer's first pass).
    pub first: Option<Vec<ObjectLint>>,
    /// The lint of every object of the fixed text (the fixer's last pass), when it changed.
    pub last: Option<Vec<ObjectLint>>,
}

/// Apply the allowed fixes to a file's text, surgically: the [`Fixer`] lints and applies the
/// fixes, [`TextDocument`] turns each pass's fixes into text edits.
pub fn fix_text(text: &str, cfg: &Config, cx: &Context) -> Result<FixedText, FixError> {
    fix_loaded(text, None, cfg, cx)
}

/// [`fix_text`] given the documents of `text` when the caller has loaded them already
/// (`source::load(text)`'s: offsets into `text`), so the original is parsed once.
pub(super) fn fix_loaded(
    text: &str,
    loaded: Option<&[Document]>,
    cfg: &Config,
    cx: &Context,
) -> Result<FixedText, FixError> {
    // A file whose lines end in CR alone (classic Mac OS; YAML reads a lone CR as a line break):
    // the editor works on LF lines, so the breaks go LF and back. Every CR of such a file is a
    // line break (a CR in a scalar is written `\r`), so the round trip is exact. The documents
    // loaded are the LF text's: not handed back.
    if text.contains('\r') && !text.contains('\n') {
        let mut fixed = fix_loaded(&text.replace('\r', "\n"), None, cfg, cx)?;
        fixed.text = fixed.text.map(|t| t.replace('\n', "\r"));
        fixed.docs = None;
        return Ok(fixed);
    }
    let fixer = Fixer {
        config: cfg,
        context: cx,
        operation: Operation::Lint,
        options: FixOptions::CLI,
    };
    let mut doc = TextDocument::new(text, loaded)?;
    let fixed = fixer.fix(&mut doc, None, &|_| false)?;
    if !fixed.converged {
        return Err(FixError::NotConverged(FixOptions::CLI.max_passes));
    }
    let changed = doc.text != text;
    Ok(FixedText {
        docs: match doc.docs {
            Docs::Loaded(d) if changed => Some(d),
            _ => None,
        },
        text: changed.then_some(doc.text),
        not_fixed: fixed.not_fixed,
        first: fixed.first,
        last: fixed.last.filter(|_| changed),
    })
}

/// Why `--fix` left the fix of a finding (of document `root`) unmade, when it said.
pub(super) fn not_fixed_reason<'a>(
    not_fixed: &'a [NotFixed],
    root: usize,
    rule: &str,
    pointer: &str,
) -> Option<&'a str> {
    not_fixed
        .iter()
        .find(|n| n.root == root && n.rule == rule && n.pointer == pointer)
        .map(|n| n.reason.as_str())
}

/// Why `--fix` could not fix a file.
#[derive(Debug, thiserror::Error)]
pub enum FixError {
    /// The text as fixed so far does not load.
    #[error("line {line}: {message}")]
    Load { line: usize, message: String },
    #[error(transparent)]
    Plan(#[from] crate::textedit::EditError),
    #[error("fixes did not converge after {0} passes")]
    NotConverged(usize),
}

/// A YAML file as the fixer's [`Document`]: its roots are the file's documents. A pass's fixes
/// become surgical text edits ([`crate::textedit::plan`]), all of a document's at once; the
/// text is then loaded again for the next pass. A fix the planner cannot express (an edit under
/// an aliased node) is given up and the others still apply.
pub(super) struct TextDocument<'o> {
    text: String,
    docs: Docs<'o>,
    /// Each root's scratch copy for the pass (the fixer applies fixes there to normalize them).
    working: Vec<Option<Value>>,
}

/// The documents of [`TextDocument::text`]: the caller's until the text changes.
pub(super) enum Docs<'o> {
    Given(&'o [Document]),
    Loaded(Vec<Document>),
}

impl std::ops::Deref for Docs<'_> {
    type Target = [Document];
    fn deref(&self) -> &[Document] {
        match self {
            Docs::Given(d) => d,
            Docs::Loaded(d) => d,
        }
    }
}

impl<'o> TextDocument<'o> {
    fn new(text: &str, loaded: Option<&'o [Document]>) -> Result<Self, FixError> {
        let mut doc = TextDocument {
            text: text.to_string(),
            docs: Docs::Loaded(Vec::new()),
            working: Vec::new(),
        };
        match loaded {
            Some(d) => {
                doc.docs = Docs::Given(d);
                doc.working = vec![None; d.len()];
            }
            None => doc.load()?,
        }
        Ok(doc)
    }

    fn load(&mut self) -> Result<(), FixError> {
        let docs = source::load(&self.text).map_err(|e| FixError::Load {
            line: e.line,
            message: e.message,
        })?;
        self.working = vec![None; docs.len()];
        self.docs = Docs::Loaded(docs);
        Ok(())
    }
}

impl engine::fix::Document for TextDocument<'_> {
    type Error = FixError;

    fn roots(&self) -> usize {
        self.docs.len()
    }

    fn root(&self, i: usize) -> &Value {
        &self.docs[i].value
    }

    fn working(&mut self, i: usize) -> &mut Value {
        let docs = &self.docs;
        self.working[i].get_or_insert_with(|| docs[i].value.clone())
    }

    fn commit(&mut self, fixes: &mut [PassFix]) -> Result<Commit, FixError> {
        use json_patch::PatchOperation;
        let mut commit = Commit::default();
        let mut edits = Vec::new();
        for (di, doc) in self.docs.iter().enumerate() {
            let mine: Vec<(usize, &PassFix)> = fixes
                .iter()
                .enumerate()
                .filter(|(_, f)| f.root == di)
                .collect();
            if mine.is_empty() {
                continue;
            }
            let groups: Vec<&[PatchOperation]> = mine.iter().map(|(_, f)| &f.ops[..]).collect();
            let (e, given_up) = plan_edits(&self.text, doc, &groups)?;
            edits.extend(e);
            (commit.given_up).extend(given_up.into_iter().map(|(g, why)| (mine[g].0, why)));
        }
        if edits.is_empty() {
            return Ok(commit);
        }
        edits.sort_by_key(|e| e.start);
        self.text = crate::textedit::apply(&self.text, &edits);
        commit.changed = true;
        self.load()?;
        Ok(commit)
    }
}

/// The edits planned for one document, and the fixes given up (index, why).
pub(super) type PlannedEdits = (Vec<crate::textedit::Edit>, Vec<(usize, String)>);

/// The text edits of one document's fixes (`groups`: each fix's operations): all together when
/// they plan together; else the fixes that plan together are kept and a fix that cannot be
/// planned even on its own is given up (its index in `groups`, and why), the others being
/// retried in the next pass. `winlint --fix` and `winlint plan --fix` edit through it.
pub(super) fn plan_edits(
    text: &str,
    doc: &Document,
    groups: &[&[json_patch::PatchOperation]],
) -> Result<PlannedEdits, FixError> {
    let all: Vec<_> = groups.iter().flat_map(|g| g.iter().cloned()).collect();
    if let Ok(e) = crate::textedit::plan(text, doc, &all) {
        return Ok((e, Vec::new()));
    }
    let mut kept = Vec::new();
    let mut given_up = Vec::new();
    for (i, ops) in groups.iter().enumerate() {
        let mut trial = kept.clone();
        trial.extend(ops.iter().cloned());
        if crate::textedit::plan(text, doc, &trial).is_ok() {
            kept = trial;
        } else if let Err(e) = crate::textedit::plan(text, doc, ops) {
            given_up.push((i, e.to_string()));
        }
    }
    if kept.is_empty() {
        return Ok((Vec::new(), given_up));
    }
    Ok((crate::textedit::plan(text, doc, &kept)?, given_up))
}

/// The fixed text, with the original's byte-order mark kept.
pub(super) fn with_bom(original: &[u8], fixed: &str) -> Vec<u8> {
    let bom: &[u8] = if original.starts_with(b"\xEF\xBB\xBF") {
        b"\xEF\xBB\xBF"
    } else {
        b""
    };
    [bom, fixed.as_bytes()].concat()
}

/// `a/deploy.yaml` for relative paths (what `git apply -p1` expects), the path itself otherwise
/// (`/x`, `<stdin>`, and on Windows `C:\x` or `\\server\x`). On Windows a relative `k8s\pod.yaml`
/// is written `a/k8s/pod.yaml`: git's patches separate with `/` on every platform.
pub(super) fn diff_name(side: &str, name: &str) -> String {
    use std::path::{Component, Path};
    let rooted = matches!(
        Path::new(name).components().next(),
        Some(Component::Prefix(_) | Component::RootDir)
    );
    if rooted || name.starts_with('<') {
        name.to_string()
    } else if cfg!(windows) {
        format!("{side}/{}", name.replace('\\', "/"))
    } else {
        format!("{side}/{name}")
    }
}
