//! `winlint lsp` driven over JSON-RPC on its stdin/stdout, as an editor drives it: the
//! handshake, diagnostics of an open manifest (rule, range, severity, the rule's page) as it
//! changes, quick fixes that remove their finding when applied, hover with the rule's
//! documentation, the configuration found from the file's directory, and the protocol's edges
//! (unknown methods, bad params, `$/cancelRequest`, invalid YAML, a 5 MB document, bytes that are
//! not JSON-RPC, exit without shutdown). A Helm chart and a kustomization are linted through
//! their render on save, with the real helm and kustomize/kubectl (`$WINLINT_HELM`,
//! `$WINLINT_KUSTOMIZE` or PATH: without them those tests skip locally and fail under CI=true),
//! their findings on the files `winlint DIR` names. Every wait has a deadline, so a hang fails
//! instead of blocking; the time from a change (or a save) to its diagnostics is printed, not
//! asserted.

mod cli_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Far above any answer's time on a loaded machine: reaching it means the server hangs.
const DEADLINE: Duration = Duration::from_secs(120);

struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: Receiver<Value>,
    next_id: i64,
    /// Notifications read while waiting for something else.
    seen: Vec<Value>,
}

impl Client {
    fn start(dir: &std::path::Path) -> Client {
        Client::start_with(dir, &[], &[])
    }

    /// `winlint lsp ARGS` with the environment `env` added.
    fn start_with(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_winlint"))
            .arg("lsp")
            .args(args)
            .envs(env.iter().copied())
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("winlint lsp starts");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut len = None;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        len = v.parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; len.expect("Content-Length")];
                r.read_exact(&mut body).expect("a whole message");
                if tx
                    .send(serde_json::from_slice(&body).expect("JSON"))
                    .is_err()
                {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        Client {
            child,
            stdin,
            messages: rx,
            next_id: 0,
            seen: Vec::new(),
        }
    }

    fn write_raw(&mut self, bytes: &[u8]) {
        let w = self.stdin.as_mut().expect("stdin open");
        w.write_all(bytes).expect("write");
        w.flush().expect("flush");
    }

    fn send(&mut self, msg: Value) {
        let body = serde_json::to_vec(&msg).expect("json");
        let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        frame.extend(body);
        self.write_raw(&frame);
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The next message, or a panic at the deadline.
    fn next(&mut self) -> Value {
        self.messages
            .recv_timeout(DEADLINE)
            .expect("winlint lsp answered within the deadline")
    }

    /// Send a request and wait for its response (notifications meanwhile are kept).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.next();
            if m["id"] == json!(id) && m.get("method").is_none() {
                return m;
            }
            self.seen.push(m);
        }
    }

    /// The next diagnostics published for `uri`.
    fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        let m = self.next_diagnostics(uri);
        m["params"]["diagnostics"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// The next `publishDiagnostics` message for `uri`, whole (its version too).
    fn next_diagnostics(&mut self, uri: &str) -> Value {
        if let Some(i) = self.seen.iter().position(|m| is_diagnostics(m, uri)) {
            return self.seen.remove(i);
        }
        loop {
            let m = self.next();
            if is_diagnostics(&m, uri) {
                return m;
            }
            self.seen.push(m);
        }
    }

    /// The exit status, waiting at most the deadline.
    fn wait(&mut self) -> (std::process::ExitStatus, String) {
        self.stdin = None;
        let start = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().expect("wait") {
                let mut err = String::new();
                if let Some(mut e) = self.child.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                return (s, err);
            }
            if start.elapsed() > DEADLINE {
                let _ = self.child.kill();
                panic!("winlint lsp did not exit");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn is_diagnostics(m: &Value, uri: &str) -> bool {
    m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
}

fn codes(diags: &[Value]) -> Vec<String> {
    let mut c: Vec<String> = (diags.iter())
        .map(|d| d["code"].as_str().unwrap_or("").to_string())
        .collect();
    c.sort();
    c
}

/// The byte offset of an LSP position (UTF-16 code units) in `text`.
fn offset(text: &str, p: &Value) -> usize {
    let (line, ch) = (
        p["line"].as_u64().unwrap() as usize,
        p["character"].as_u64().unwrap(),
    );
    let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
    let mut units = 0;
    for (i, c) in text[start..].char_indices() {
        if units >= ch || c == '\n' {
            return start + i;
        }
        units += c.len_utf16() as u64;
    }
    text.len()
}

/// `text` with a WorkspaceEdit's edits for `uri` applied (from the last, so offsets hold).
fn apply(text: &str, edit: &Value, uri: &str) -> String {
    let mut edits: Vec<(usize, usize, String)> = (edit["changes"][uri].as_array())
        .expect("edits for the document")
        .iter()
        .map(|e| {
            (
                offset(text, &e["range"]["start"]),
                offset(text, &e["range"]["end"]),
                e["newText"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut out = text.to_string();
    for (s, e, t) in edits {
        out.replace_range(s..e, &t);
    }
    out
}

const POD: &str = include_str!("../testdata/lsp/windows-pod.yaml");

fn workspace() -> (tempfile::TempDir, String, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    // The repository root: configuration discovery stops here, as for `winlint FILE`.
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    // AKS: Windows nodes carry no taint, so WIN007 (missing toleration) is not reported.
    std::fs::write(
        dir.path().join("winlint.yaml"),
        "target:\n  platform: aks\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("deploy")).unwrap();
    let path = dir.path().join("deploy").join("pod.yaml");
    std::fs::write(&path, POD).unwrap();
    let uri = format!("file://{}", path.display());
    (dir, uri, path)
}

fn initialize(c: &mut Client, root: &std::path::Path) -> Value {
    let r = c.request(
        "initialize",
        json!({"processId": null, "rootUri": format!("file://{}", root.display()), "capabilities": {}}),
    );
    c.notify("initialized", json!({}));
    r
}

fn change(c: &mut Client, uri: &str, version: i32, text: &str) {
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
    );
}

fn an_editor_session() {
    let (dir, uri, _) = workspace();
    let mut c = Client::start(dir.path());
    let init = initialize(&mut c, dir.path());
    let caps = &init["result"]["capabilities"];
    assert_eq!(caps["textDocumentSync"]["change"], 1, "full sync: {init}");
    assert_eq!(caps["hoverProvider"], true);
    assert_eq!(init["result"]["serverInfo"]["name"], "winlint");

    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": POD}}),
    );
    let diags = c.diagnostics(&uri);
    // winlint.yaml of the directory above was found: AKS, so no WIN007.
    assert_eq!(codes(&diags), ["WIN001", "WIN003"], "{diags:#?}");
    let win001 = diags.iter().find(|d| d["code"] == "WIN001").unwrap();
    // On the `spec` key (line 6 of the file, 0-based 5), where the selector is missing.
    assert_eq!(
        win001["range"],
        json!({"start": {"line": 5, "character": 0}, "end": {"line": 5, "character": 4}})
    );
    assert_eq!(win001["severity"], 1);
    assert_eq!(win001["source"], "winlint");
    assert!(
        (win001["codeDescription"]["href"].as_str().unwrap()).ends_with("/docs/rules/WIN001.md"),
        "{win001}"
    );
    assert!(win001["message"].as_str().unwrap().contains("Pod/iis"));

    // Hover on the finding: the rule's page, as `winlint explain WIN001` prints it.
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 5, "character": 2}}),
    );
    let page = h["result"]["contents"]["value"]
        .as_str()
        .expect("hover text");
    assert!(
        page.contains("WIN001") && page.contains("missing-os-selector"),
        "{page}"
    );
    assert!(page.contains("## What it does"), "{page}");
    let none = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 1, "character": 0}}),
    );
    assert_eq!(none["result"], Value::Null);

    // The quick fix of WIN001, applied, removes WIN001 and only it.
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": win001["range"],
               "context": {"diagnostics": [win001]}}),
    );
    let list = actions["result"].as_array().expect("actions");
    let quick = (list.iter())
        .find(|a| a["kind"] == "quickfix" && a["title"].as_str().unwrap().starts_with("WIN001"))
        .unwrap_or_else(|| panic!("a WIN001 quick fix: {actions:#}"));
    assert_eq!(quick["diagnostics"][0]["code"], "WIN001");
    let fixed = apply(POD, &quick["edit"], &uri);
    assert!(fixed.contains("kubernetes.io/os: windows"), "{fixed}");
    let sent = Instant::now();
    change(&mut c, &uri, 2, &fixed);
    let diags = c.diagnostics(&uri);
    let took = sent.elapsed();
    assert_eq!(codes(&diags), ["WIN003"], "{diags:#?}");
    println!(
        "didChange -> publishDiagnostics: {} ms (debounce {} ms included)",
        took.as_millis(),
        200
    );

    // Fix all: every allowed fix, as `winlint --fix` writes it; then nothing is left.
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0},
               "end": {"line": 0, "character": 0}}, "context": {"diagnostics": []}}),
    );
    let all = (actions["result"].as_array().unwrap().iter())
        .find(|a| a["kind"] == "source.fixAll.winlint")
        .unwrap_or_else(|| panic!("fix all: {actions:#}"));
    let fixed = apply(&fixed, &all["edit"], &uri);
    change(&mut c, &uri, 3, &fixed);
    assert_eq!(c.diagnostics(&uri), Vec::<Value>::new());

    // A burst of changes: linted once, for the last text.
    for v in 4..9 {
        change(&mut c, &uri, v, POD);
    }
    change(&mut c, &uri, 9, &fixed);
    assert_eq!(c.diagnostics(&uri), Vec::<Value>::new());

    // Invalid YAML: an error diagnostic at its line, and the server goes on.
    change(&mut c, &uri, 10, "apiVersion: v1\nkind: [Pod\n");
    let diags = c.diagnostics(&uri);
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert_eq!(diags[0]["severity"], 1);
    change(&mut c, &uri, 11, POD);
    assert_eq!(codes(&c.diagnostics(&uri)), ["WIN001", "WIN003"]);

    // Unknown requests and bad params are errors; an unknown notification and a cancellation
    // of an answered request are ignored.
    let r = c.request("winlint/unknown", json!({}));
    assert_eq!(r["error"]["code"], -32601, "{r}");
    let r = c.request("textDocument/hover", json!({"nonsense": true}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    c.notify("$/cancelRequest", json!({"id": 1}));
    c.notify("winlint/unknownNotification", json!([1, 2]));
    let r = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": "file:///not/open.yaml"}, "position": {"line": 0, "character": 0}}),
    );
    assert_eq!(r["result"], Value::Null);

    // A Helm template is not linted as a manifest (no noise from its Go templates).
    let chart = dir.path().join("chart");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    )
    .unwrap();
    let tpl_uri = format!(
        "file://{}",
        chart.join("templates").join("pod.yaml").display()
    );
    let tpl = format!(
        "{POD}  {{{{- if .Values.x }}}}\n  nodeName: {{{{ .Values.x }}}}\n  {{{{- end }}}}\n"
    );
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": tpl_uri, "languageId": "yaml", "version": 1, "text": tpl}}),
    );
    assert_eq!(c.diagnostics(&tpl_uri), Vec::<Value>::new());

    // Closing clears the document's diagnostics.
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(c.diagnostics(&uri), Vec::<Value>::new());
    shutdown(c);
}

fn a_5_mb_document() {
    let (dir, uri, _) = workspace();
    let mut c = Client::start(dir.path());
    initialize(&mut c, dir.path());
    // The pod, then a ConfigMap with a 5 MB value.
    let text = format!(
        "{POD}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  blob: {}\n",
        "x".repeat(5 << 20)
    );
    let sent = Instant::now();
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}),
    );
    let diags = c.diagnostics(&uri);
    println!(
        "5 MB didOpen -> publishDiagnostics: {} ms",
        sent.elapsed().as_millis()
    );
    assert_eq!(codes(&diags), ["WIN001", "WIN003"], "{diags:#?}");
    shutdown(c);
}

fn bytes_that_are_not_json_rpc_end_the_server_without_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Client::start(dir.path());
    initialize(&mut c, dir.path());
    c.write_raw(b"Content-Length: 7\r\n\r\n{{{{{{{");
    let (status, stderr) = c.wait();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains("winlint lsp"), "{stderr}");
}

fn exit_without_shutdown_is_an_error_exit() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Client::start(dir.path());
    initialize(&mut c, dir.path());
    c.notify("exit", Value::Null);
    let (status, stderr) = c.wait();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

fn a_bad_config_flag_is_refused_at_start() {
    let out = Command::new(env!("CARGO_BIN_EXE_winlint"))
        .args(["lsp", "--config", "/nonexistent/winlint.yaml"])
        .stdin(Stdio::null())
        .output()
        .expect("winlint lsp runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("winlint lsp:") && err.contains("/nonexistent"),
        "{err}"
    );
}

fn helm() -> Option<String> {
    cli_support::ci_tool("WINLINT_HELM", &["helm"], &["version"], "helm")
}

fn kustomizer() -> Option<String> {
    cli_support::ci_tool(
        "WINLINT_KUSTOMIZE",
        &["kustomize", "kubectl"],
        &["version", "--client"],
        "kustomize or kubectl",
    )
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

fn uri_of(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// The rule IDs `winlint -o json DIR` (run in `cwd`, with `env`) reports in `file`.
fn cli_codes(cwd: &Path, dir: &str, file: &Path, env: &[(&str, &str)]) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_winlint"))
        .args(["-o", "json", dir])
        .envs(env.iter().copied())
        .current_dir(cwd)
        .output()
        .expect("winlint runs");
    let r: Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    let mut c: Vec<String> = (r["findings"].as_array().expect("findings").iter())
        .filter(|f| cwd.join(f["file"].as_str().unwrap()) == file)
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect();
    c.sort();
    c
}

fn save(c: &mut Client, uri: &str) {
    c.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": uri}}),
    );
}

fn open(c: &mut Client, path: &Path) -> String {
    let uri = uri_of(path);
    let text = std::fs::read_to_string(path).unwrap();
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}),
    );
    uri
}

fn shutdown(mut c: Client) {
    let r = c.request("shutdown", Value::Null);
    assert_eq!(r["result"], Value::Null, "{r}");
    c.notify("exit", Value::Null);
    let (status, stderr) = c.wait();
    assert!(status.success(), "{status}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A chart's values saved: `helm template` runs (default values and `ci/*.yaml`), and its
/// findings are published on the template that `winlint CHART` names, the same rules; a
/// template that no longer renders is one error on the saved file, and the findings come back
/// once it renders again.
fn a_chart_is_linted_through_helm_template_on_save() {
    let Some(helm) = helm() else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let chart = dir.path().join("winapp");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/charts/winapp"),
        &chart,
    );
    let env = [("WINLINT_HELM", helm.as_str())];
    let template = chart.join("templates/deployment.yaml");
    let want = cli_codes(dir.path(), "winapp", &template, &env);
    assert!(want.contains(&"WIN001".to_string()), "{want:?}");

    let mut c = Client::start_with(dir.path(), &[], &env);
    initialize(&mut c, dir.path());
    let values = open(&mut c, &chart.join("values.yaml"));
    // values.yaml is no manifest: nothing of its own.
    assert_eq!(c.diagnostics(&values), Vec::<Value>::new());
    // Nor a ci/ values file nor the template: a chart's files are linted through its render
    // only, so what the render finds on the template below shows once.
    let ci_values = open(&mut c, &chart.join("ci/unpinned-values.yaml"));
    assert_eq!(c.diagnostics(&ci_values), Vec::<Value>::new());
    let tpl = open(&mut c, &template);
    assert_eq!(c.diagnostics(&tpl), Vec::<Value>::new());
    let sent = Instant::now();
    save(&mut c, &values);
    let diags = c.diagnostics(&tpl);
    println!(
        "didSave -> publishDiagnostics through helm template: {} ms (debounce 200 ms included)",
        sent.elapsed().as_millis()
    );
    assert_eq!(codes(&diags), want, "{diags:#?}");
    for d in &diags {
        assert_eq!(
            d["range"]["start"],
            json!({"line": 0, "character": 0}),
            "{d}"
        );
        let m = d["message"].as_str().unwrap();
        assert!(
            m.contains("Deployment/release-name-winapp (helm template"),
            "{m}"
        );
    }
    let ci = diags.iter().filter(|d| {
        (d["message"].as_str().unwrap()).contains("helm template -f ci/unpinned-values.yaml")
    });
    assert!(ci.count() >= 3, "the ci/ values render too: {diags:#?}");

    // A template that does not render: helm's message, one error on the saved file.
    let good = std::fs::read_to_string(&template).unwrap();
    std::fs::write(
        &template,
        format!("{good}\n{{{{ .Values.nope.deeper }}}}\n"),
    )
    .unwrap();
    save(&mut c, &tpl);
    let diags = c.diagnostics(&tpl);
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert_eq!(diags[0]["severity"], 1);
    let m = diags[0]["message"].as_str().unwrap();
    assert!(
        m.contains("helm template failed") && m.contains("nope"),
        "{m}"
    );
    std::fs::write(&template, good).unwrap();
    save(&mut c, &tpl);
    assert_eq!(codes(&c.diagnostics(&tpl)), want);
    shutdown(c);
}

/// A Kustomize patch opened and saved: not linted alone (a fragment), but through the overlay
/// that applies it, its findings on the overlay's kustomization file as `winlint DIR` places them.
fn a_kustomize_patch_is_linted_through_its_overlay() {
    let Some(kustomize) = kustomizer() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kustomize"),
        &dir.path().join("k"),
    );
    let env = [("WINLINT_KUSTOMIZE", kustomize.as_str())];
    let overlay = dir.path().join("k/overlays/windows");
    let kfile = overlay.join("kustomization.yaml");
    let want = cli_codes(dir.path(), "k", &kfile, &env);
    assert!(!want.is_empty());

    let mut c = Client::start_with(dir.path(), &[], &env);
    initialize(&mut c, dir.path());
    let patch = open(&mut c, &overlay.join("windows.yaml"));
    assert_eq!(c.diagnostics(&patch), Vec::<Value>::new());
    save(&mut c, &patch);
    let diags = c.diagnostics(&uri_of(&kfile));
    assert_eq!(codes(&diags), want, "{diags:#?}");
    assert!(
        (diags.iter()).all(|d| d["message"]
            .as_str()
            .unwrap()
            .contains("Deployment/web-win")),
        "{diags:#?}"
    );
    shutdown(c);
}

/// A kustomization's resource: its buffer is linted (exact lines) and so is the render (the
/// object comes back to the file through `buildMetadata: [originAnnotations]`). Each problem
/// shows once: the buffer's at its line, what only the render sees (a patch of the same
/// kustomization adds `hostNetwork`) on the first line, the object renamed by `namePrefix`.
/// Still once after an edit; after close, the render's findings alone.
fn a_kustomize_resource_shows_each_problem_once() {
    let Some(kustomize) = kustomizer() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let k = dir.path().join("k");
    std::fs::create_dir(&k).unwrap();
    let write = |name: &str, text: &str| std::fs::write(k.join(name), text).unwrap();
    write(
        "kustomization.yaml",
        "buildMetadata: [originAnnotations]\nnamePrefix: prod-\nresources:\n- deployment.yaml\n\
         patches:\n- path: hostnet.yaml\n",
    );
    // A Windows image with no OS pin: WIN001, WIN003, WIN007 on `spec` (line 11).
    write(
        "deployment.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector:\n    \
         matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      \
         containers:\n      - name: web\n        image: mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022\n",
    );
    // Host networking on a Windows pod: WIN208, in the render only.
    write(
        "hostnet.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      \
         hostNetwork: true\n",
    );
    let env = [("WINLINT_KUSTOMIZE", kustomize.as_str())];
    let file = k.join("deployment.yaml");
    let want = ["WIN001", "WIN003", "WIN007", "WIN208"];
    // `winlint DIR` reports each once too, through the render.
    assert_eq!(cli_codes(dir.path(), "k", &file, &env), want);

    let mut c = Client::start_with(dir.path(), &[], &env);
    initialize(&mut c, dir.path());
    let uri = open(&mut c, &file);
    assert_eq!(codes(&c.diagnostics(&uri)), want[..3]);
    save(&mut c, &uri);
    // The publishes of the open's and the save's renders (coalesced or not): the last has WIN208.
    let with_render = |c: &mut Client| loop {
        let d = c.diagnostics(&uri);
        if codes(&d).contains(&"WIN208".to_string()) {
            return d;
        }
    };
    let line = |d: &Value| d["range"]["start"]["line"].as_u64().unwrap();
    let check = |diags: &[Value], buffer_line: u64| {
        assert_eq!(codes(diags), want, "{diags:#?}");
        for d in diags {
            let m = d["message"].as_str().unwrap();
            if d["code"] == "WIN208" {
                assert_eq!(line(d), 0, "{d}");
                assert!(m.contains("Deployment/prod-web (kubectl kustomize"), "{m}");
            } else {
                assert_eq!(line(d), buffer_line, "{d}");
                assert!(m.starts_with("Deployment/web ("), "{m}");
            }
        }
    };
    check(&with_render(&mut c), 10);
    // An edit moves the buffer's findings down a line; the render's copies stay dropped.
    let text = std::fs::read_to_string(&file).unwrap();
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2},
               "contentChanges": [{"text": format!("# edited\n{text}")}]}),
    );
    // (A publish of a render that was still under way may come first: version 1.)
    let edited = loop {
        let m = c.next_diagnostics(&uri);
        if m["params"]["version"] == 2 {
            break m["params"]["diagnostics"].as_array().cloned().unwrap();
        }
    };
    check(&edited, 11);
    // Closed: no buffer lint, the render's four on the first line.
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    );
    let diags = c.diagnostics(&uri);
    assert_eq!(codes(&diags), want, "{diags:#?}");
    assert!(diags.iter().all(|d| line(d) == 0), "{diags:#?}");
    shutdown(c);
}

/// A render that hangs: the server answers meanwhile, and the tool is stopped at
/// `--render-timeout` with one error on the saved file. (A stand-in helm that sleeps: no real
/// tool needed.)
fn a_render_that_hangs_is_stopped_and_the_server_answers_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let fake = dir.path().join("slow-helm");
    std::fs::write(&fake, "#!/bin/sh\nsleep 60\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let chart = dir.path().join("c");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(chart.join("values.yaml"), "x: 1\n").unwrap();
    let fake = fake.display().to_string();
    let mut c = Client::start_with(
        dir.path(),
        &["--render-timeout", "3"],
        &[("WINLINT_HELM", fake.as_str())],
    );
    initialize(&mut c, dir.path());
    let values = open(&mut c, &chart.join("values.yaml"));
    assert_eq!(c.diagnostics(&values), Vec::<Value>::new());
    save(&mut c, &values);
    // After the debounce the render runs (at least 3 s): a request now is answered first.
    std::thread::sleep(Duration::from_millis(800));
    let r = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": values}, "position": {"line": 0, "character": 0}}),
    );
    assert_eq!(r["result"], Value::Null, "{r}");
    assert!(
        !c.seen.iter().any(|m| is_diagnostics(m, &values)),
        "the render's result came before the hover's answer: {:#?}",
        c.seen
    );
    let diags = c.diagnostics(&values);
    assert_eq!(diags.len(), 1, "{diags:#?}");
    let m = diags[0]["message"].as_str().unwrap();
    assert!(m.contains("did not finish within 3 s"), "{m}");
    shutdown(c);
}

/// The tests (libtest-mimic: a test whose tool is missing is reported as ignored, with how to
/// get it; tests/skip_support).
fn main() {
    use cli_support::skip_support::{run, test};
    run(vec![
        test("an_editor_session", an_editor_session),
        test("a_5_mb_document", a_5_mb_document),
        test(
            "bytes_that_are_not_json_rpc_end_the_server_without_a_panic",
            bytes_that_are_not_json_rpc_end_the_server_without_a_panic,
        ),
        test(
            "exit_without_shutdown_is_an_error_exit",
            exit_without_shutdown_is_an_error_exit,
        ),
        test(
            "a_bad_config_flag_is_refused_at_start",
            a_bad_config_flag_is_refused_at_start,
        ),
        test(
            "a_chart_is_linted_through_helm_template_on_save",
            a_chart_is_linted_through_helm_template_on_save,
        ),
        test(
            "a_kustomize_patch_is_linted_through_its_overlay",
            a_kustomize_patch_is_linted_through_its_overlay,
        ),
        test(
            "a_kustomize_resource_shows_each_problem_once",
            a_kustomize_resource_shows_each_problem_once,
        ),
        test(
            "a_render_that_hangs_is_stopped_and_the_server_answers_meanwhile",
            a_render_that_hangs_is_stopped_and_the_server_answers_meanwhile,
        ),
    ]);
}
