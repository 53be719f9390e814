//! The message loop. Lints are debounced: a change waits [`DEBOUNCE`] for the next one, so a
//! burst of keystrokes is linted once; a request about a document (code actions, hover) lints
//! it first if a change is pending, so it always answers about the text the client has.
//! Requests are answered in order on this thread, so by the time a `$/cancelRequest` is read
//! its request has been answered: it is ignored, as the protocol allows.
//!
//! A file of a chart or a kustomization that is opened or saved asks for a render of it
//! (debounced as well, per chart or kustomization): the render thread runs them one at a time,
//! each save of the same source during a render coalesced into one more, so the loop never
//! waits for helm or kustomize and a tool that hangs is stopped at `--render-timeout`. Its
//! findings are published on their templates with what the buffers' own lints found there; a
//! render that fails is one error on the file whose save asked for it.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, select};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionParams, CodeActionProviderCapability,
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
    DidSaveTextDocumentParams, HoverParams, HoverProviderCapability, InitializeResult,
    PublishDiagnosticsParams, SaveOptions, ServerCapabilities, ServerInfo,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    TextDocumentSyncSaveOptions, Uri,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::actions::{FIX_ALL, actions};
use super::diagnostics::{Key, Seen, diagnostics, key, render_failed, rendered};
use super::hover::hover;
use super::store::{Lint, Store, file_path, file_uri};
use super::{Linted, SharedLinter};
use crate::process::EXIT_OK;
use crate::render::Source;
use crate::report::{InputError, Located};

/// The exit code after an `exit` without `shutdown`, or a broken connection: the protocol's 1.
const EXIT_ERROR: i32 = 1;

/// How long a change waits for the next before the document is linted.
pub const DEBOUNCE: Duration = Duration::from_millis(200);

/// Serve the Language Server Protocol on stdin/stdout until the client says `exit`; the exit
/// code the protocol asks for (0 after `shutdown`, 1 otherwise).
pub fn run(linter: SharedLinter) -> i32 {
    let (conn, io) = Connection::stdio();
    let code = match serve(&conn, linter) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            eprintln!("winlint lsp: {e}");
            EXIT_ERROR
        }
    };
    drop(conn);
    match io.join() {
        Ok(()) => code,
        Err(e) => {
            // Not JSON-RPC on stdin (or stdin closed mid-message): the reader stopped there.
            eprintln!("winlint lsp: {e}");
            EXIT_ERROR
        }
    }
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::FULL),
                save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                    include_text: Some(false),
                })),
                ..TextDocumentSyncOptions::default()
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![
                CodeActionKind::QUICKFIX,
                CodeActionKind::from(FIX_ALL.to_string()),
            ]),
            ..CodeActionOptions::default()
        })),
        ..ServerCapabilities::default()
    }
}

fn serve(conn: &Connection, linter: SharedLinter) -> Result<(), String> {
    let init = InitializeResult {
        capabilities: capabilities(),
        server_info: Some(ServerInfo {
            name: "winlint".to_string(),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
        }),
    };
    let (id, _) = conn.initialize_start().map_err(|e| e.to_string())?;
    let init = serde_json::to_value(init).map_err(|e| e.to_string())?;
    conn.initialize_finish(id, init)
        .map_err(|e| e.to_string())?;
    let (jobs, jobs_rx) = crossbeam_channel::unbounded();
    let (done_tx, done) = crossbeam_channel::unbounded();
    let worker = linter.clone();
    // Ends when `jobs` is dropped (the loop returned) and its render is over; the process
    // may exit first, a tool it runs then finishes or meets its time limit alone.
    std::thread::spawn(move || render_thread(worker, jobs_rx, done_tx));
    let mut s = Server {
        conn,
        linter: &*linter,
        store: Store::default(),
        pending: HashMap::new(),
        renders: HashMap::new(),
        rendered: HashMap::new(),
        jobs,
    };
    loop {
        let next = (s.pending.values().map(|(at, _)| *at))
            .chain(s.renders.values().map(|r| r.0))
            .min();
        let timer = next.map_or_else(crossbeam_channel::never, crossbeam_channel::at);
        select! {
            recv(conn.receiver) -> msg => match msg {
                Ok(Message::Request(req)) => {
                    if conn.handle_shutdown(&req).map_err(|e| e.to_string())? {
                        return Ok(());
                    }
                    s.request(req);
                }
                Ok(Message::Notification(n)) if n.method == "exit" => {
                    return Err("exit without shutdown".to_string());
                }
                Ok(Message::Notification(n)) => s.notification(n),
                Ok(Message::Response(_)) => {}
                Err(_) => {
                    return Err("the client closed the connection without exit".to_string());
                }
            },
            recv(done) -> d => {
                if let Ok(d) = d {
                    s.render_done(d);
                }
            }
            recv(timer) -> _ => s.due(),
        }
    }
}

/// A render asked for: `source` (its key: the chart's directory or the kustomization file),
/// because `trigger` was opened or saved.
struct Job {
    key: PathBuf,
    source: Source,
    trigger: PathBuf,
}

/// A render's lint.
struct Done {
    key: PathBuf,
    trigger: PathBuf,
    linted: Result<Linted, String>,
}

/// The render thread: the jobs one at a time; those that queued up during a render run once
/// per source, for its last trigger.
fn render_thread(linter: SharedLinter, jobs: Receiver<Job>, done: Sender<Done>) {
    while let Ok(first) = jobs.recv() {
        let mut batch: Vec<Job> = std::iter::once(first).chain(jobs.try_iter()).collect();
        let mut seen = HashSet::new();
        batch.reverse();
        batch.retain(|j| seen.insert(j.key.clone()));
        batch.reverse();
        for j in batch {
            // As for a buffer's lint: a bug must not take the server down.
            let linted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                linter.lint_rendered(&j.source)
            }))
            .unwrap_or_else(|_| Err("the lint failed (a bug: please report it)".to_string()));
            let d = Done {
                key: j.key,
                trigger: j.trigger,
                linted,
            };
            if done.send(d).is_err() {
                return;
            }
        }
    }
}

/// The rendered diagnostics of one source, per file, each with its finding's [`Key`] (`None`:
/// the render failed).
type PerFile = HashMap<PathBuf, Vec<(Option<Key>, lsp_types::Diagnostic)>>;

struct Server<'a> {
    conn: &'a Connection,
    linter: &'a (dyn super::Linter + Send + Sync),
    store: Store,
    /// Documents changed and not linted yet, with when they are due.
    pending: HashMap<String, (Instant, Uri)>,
    /// Renders asked for and not sent to the render thread yet, with when they are due.
    renders: HashMap<PathBuf, (Instant, Source, PathBuf)>,
    /// The last render's diagnostics of each chart or kustomization.
    rendered: HashMap<PathBuf, PerFile>,
    jobs: Sender<Job>,
}

fn params<P: DeserializeOwned>(v: Value) -> Result<P, String> {
    serde_json::from_value(v).map_err(|e| format!("invalid params: {e}"))
}

impl Server<'_> {
    fn send(&self, m: Message) {
        // The writer is gone only when the client is: the loop ends at the next read.
        let _ = self.conn.sender.send(m);
    }

    fn request(&mut self, req: Request) {
        let id = req.id.clone();
        let result = match req.method.as_str() {
            "textDocument/codeAction" => params::<CodeActionParams>(req.params).map(|p| {
                self.lint_now(&p.text_document.uri);
                let found = (self.store.get(&p.text_document.uri))
                    .map(|d| actions(d, p.range, self.linter));
                serde_json::to_value(found.unwrap_or_default()).unwrap_or(Value::Null)
            }),
            "textDocument/hover" => params::<HoverParams>(req.params).map(|p| {
                let tdp = p.text_document_position_params;
                self.lint_now(&tdp.text_document.uri);
                let found =
                    (self.store.get(&tdp.text_document.uri)).and_then(|d| hover(d, tdp.position));
                serde_json::to_value(found).unwrap_or(Value::Null)
            }),
            other => {
                let msg = format!("winlint lsp does not serve {other}");
                let r = Response::new_err(id, ErrorCode::MethodNotFound as i32, msg);
                return self.send(r.into());
            }
        };
        self.send(
            match result {
                Ok(v) => Response::new_ok(id, v),
                Err(e) => Response::new_err(id, ErrorCode::InvalidParams as i32, e),
            }
            .into(),
        );
    }

    fn notification(&mut self, n: Notification) {
        // A notification has no answer: one with bad params is dropped.
        match n.method.as_str() {
            "textDocument/didOpen" => {
                if let Ok(p) = params::<DidOpenTextDocumentParams>(n.params) {
                    let d = p.text_document;
                    let uri = d.uri.clone();
                    self.store.open(d.uri, d.version, d.text);
                    self.lint_now_forced(&uri);
                    self.render_later(&uri);
                }
            }
            "textDocument/didChange" => {
                if let Ok(p) = params::<DidChangeTextDocumentParams>(n.params)
                    // Full sync: the last change is the whole text.
                    && let Some(c) = p.content_changes.into_iter().last()
                    && c.range.is_none()
                {
                    let uri = p.text_document.uri;
                    if self.store.change(&uri, p.text_document.version, c.text) {
                        let key = uri.as_str().to_string();
                        self.pending.insert(key, (Instant::now() + DEBOUNCE, uri));
                    }
                }
            }
            "textDocument/didSave" => {
                if let Ok(p) = params::<DidSaveTextDocumentParams>(n.params) {
                    self.lint_now(&p.text_document.uri);
                    self.render_later(&p.text_document.uri);
                }
            }
            "textDocument/didClose" => {
                if let Ok(p) = params::<DidCloseTextDocumentParams>(n.params) {
                    self.pending.remove(p.text_document.uri.as_str());
                    if let Some(d) = self.store.close(&p.text_document.uri) {
                        // What a render found there stays: the file is still in its chart.
                        // No buffer lint now: all of them show.
                        let kept = d.path.as_deref().map(|p| self.rendered_on(p, None));
                        self.publish(d.uri, kept.unwrap_or_default(), None);
                    }
                }
            }
            // $/cancelRequest (answered already), $/setTrace, initialized, the rest.
            _ => {}
        }
    }

    /// The lints and renders whose debounce is over.
    fn due(&mut self) {
        self.lint_due();
        let now = Instant::now();
        let due: Vec<PathBuf> = (self.renders.iter())
            .filter(|(_, r)| r.0 <= now)
            .map(|(k, _)| k.clone())
            .collect();
        for key in due {
            if let Some((_, source, trigger)) = self.renders.remove(&key) {
                // The render thread is gone only with a panic there: nothing to render with.
                let _ = self.jobs.send(Job {
                    key,
                    source,
                    trigger,
                });
            }
        }
    }

    /// A render of the chart or kustomization of the file `uri`, if it has one, after the
    /// debounce.
    fn render_later(&mut self, uri: &Uri) {
        let Some(path) = file_path(uri) else {
            return;
        };
        if let Some(source) = self.linter.source_of(&path) {
            let (Source::Chart(key) | Source::Kustomization(key)) = source.clone();
            (self.renders).insert(key, (Instant::now() + DEBOUNCE, source, path));
        }
    }

    /// A render's lint: its diagnostics replace the last ones of its source, and every file
    /// that had or has some is published again.
    fn render_done(&mut self, d: Done) {
        let mut files = PerFile::new();
        let errors = match d.linted {
            Ok(l) => {
                for f in &l.findings {
                    let file = files.entry(PathBuf::from(&f.file)).or_default();
                    file.push((Some(key(f)), rendered(f)));
                }
                l.errors
            }
            Err(message) => vec![InputError {
                file: d.trigger.display().to_string(),
                line: 0,
                column: 0,
                message,
            }],
        };
        if !errors.is_empty() {
            (files.entry(d.trigger).or_default()).push((None, render_failed(&errors)));
        }
        let now: Vec<PathBuf> = files.keys().cloned().collect();
        let before = self.rendered.insert(d.key, files).unwrap_or_default();
        let touched: BTreeSet<PathBuf> = before.into_keys().chain(now).collect();
        for path in touched {
            let (uri, diags, version) = match self.store.by_path(&path) {
                // Its lint is due: that publishes the render's findings with the buffer's.
                Some(doc) if self.pending.contains_key(doc.uri.as_str()) => continue,
                Some(doc) => {
                    let lint = doc.lint.as_ref();
                    let mut diags = lint.map_or_else(Vec::new, |l| l.diagnostics.clone());
                    diags.extend(self.rendered_on(&path, lint.map(|l| &*l.linted.findings)));
                    (doc.uri.clone(), diags, Some(doc.version))
                }
                None => match file_uri(&path) {
                    Some(uri) => (uri, self.rendered_on(&path, None), None),
                    None => continue,
                },
            };
            self.publish(uri, diags, version);
        }
    }

    /// What the last renders found in the file at `path` but what the buffer's own lint of it
    /// (`buffer`: its findings, `None` when it has none) shows already at its place: a
    /// kustomization's resource is linted both ways, each problem is shown once.
    fn rendered_on(&self, path: &Path, buffer: Option<&[Located]>) -> Vec<lsp_types::Diagnostic> {
        let mut seen = buffer.map(Seen::of).unwrap_or_default();
        (self.rendered.values())
            .filter_map(|f| f.get(path))
            .flatten()
            .filter(|(k, _)| !k.as_ref().is_some_and(|k| seen.take(k)))
            .map(|(_, d)| d.clone())
            .collect()
    }

    /// Lint the documents whose debounce is over.
    fn lint_due(&mut self) {
        let now = Instant::now();
        let due: Vec<Uri> = (self.pending.values())
            .filter(|(at, _)| *at <= now)
            .map(|(_, u)| u.clone())
            .collect();
        for uri in due {
            self.lint_now(&uri);
        }
    }

    /// Lint a document now if a change of it is pending.
    fn lint_now(&mut self, uri: &Uri) {
        if self.pending.contains_key(uri.as_str()) {
            self.lint_now_forced(uri);
        }
    }

    fn lint_now_forced(&mut self, uri: &Uri) {
        self.pending.remove(uri.as_str());
        let Some(doc) = self.store.get_mut(uri) else {
            return;
        };
        let name = (doc.path.as_ref())
            .map_or_else(|| uri.as_str().to_string(), |p| p.display().to_string());
        // A bug in a rule must not take the editor's server down with it: that document's
        // lint fails (the panic's message goes to stderr, the client's log) and the rest goes on.
        let linter = self.linter;
        let linted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            linter.lint(&name, doc.path.as_deref(), &doc.text)
        }))
        .unwrap_or_else(|_| Err("the lint failed (a bug: please report it)".to_string()));
        let linted = match linted {
            Ok(l) => l,
            Err(e) => {
                let msg = format!("winlint: {name}: {e}");
                self.send(
                    Notification::new(
                        "window/showMessage".into(),
                        serde_json::json!({
                            "type": 1, "message": msg,
                        }),
                    )
                    .into(),
                );
                return;
            }
        };
        let docs = crate::source::load(&doc.text).ok();
        let diags = diagnostics(&doc.text, &linted, docs.as_deref());
        let (uri, version, path) = (doc.uri.clone(), doc.version, doc.path.clone());
        let mut all = diags.clone();
        if let Some(p) = path.as_deref() {
            all.extend(self.rendered_on(p, Some(&linted.findings)));
        }
        if let Some(doc) = self.store.get_mut(&uri) {
            doc.lint = Some(Lint {
                linted,
                diagnostics: diags,
                docs,
            });
        }
        self.publish(uri, all, Some(version));
    }

    fn publish(&self, uri: Uri, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) {
        let p = PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        };
        self.send(Notification::new("textDocument/publishDiagnostics".into(), p).into());
    }
}
