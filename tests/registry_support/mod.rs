//! Real registry parts for the registry tests: Debian's `docker-registry` (CNCF distribution)
//! started on a free 127.0.0.1 port with a config the test writes, images built as OCI layouts
//! by hand (no docker) and pushed with `skopeo`, and a small loopback HTTP server for what a
//! real registry does not do on request (a Bearer token endpoint, hangs, 429, 500, garbage,
//! a 100 MB manifest, a redirect loop).
//!
//! Without `docker-registry`, `skopeo` or `htpasswd` a test is reported as ignored, with how to
//! get them (tests/skip_support), except under `CI=true`, where it fails (`.ci/run` installs
//! them).

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use winlint::registry::client::sha256;

// One file for every support module: a test binary may load it more than once (the copies
// share nothing that matters: tests/skip_support).
#[allow(clippy::duplicate_mod)]
#[path = "../skip_support/mod.rs"]
pub mod skip_support;

/// The tools, or `None` (after saying why) when the test should skip.
pub fn tools() -> Option<()> {
    for bin in ["docker-registry", "skopeo", "htpasswd", "tar", "gzip"] {
        if which(bin).is_none() {
            return skip_support::skip(
                &format!("needs a real registry: no {bin} on PATH"),
                skip_support::GET_APT,
            );
        }
    }
    Some(())
}

fn which(bin: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(bin))
            .find(|p| p.is_file())
    })
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A running `docker-registry`, stopped (and its storage removed) on drop.
pub struct Registry {
    pub host: String,
    child: Child,
    pub dir: tempfile::TempDir,
    pub creds: Option<(String, String)>,
}

impl Registry {
    /// Start a registry; with `creds`, Basic auth through an htpasswd file.
    pub fn start(creds: Option<(&str, &str)>) -> Registry {
        let dir = tempfile::tempdir().unwrap();
        let mut last = String::new();
        for _attempt in 0..3 {
            let port = free_port();
            let mut cfg = format!(
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n\
                 http:\n  addr: 127.0.0.1:{port}\n",
                dir.path().join("data").display()
            );
            if let Some((u, p)) = creds {
                let out = Command::new("htpasswd")
                    .args(["-Bbn", u, p])
                    .output()
                    .unwrap();
                assert!(out.status.success(), "htpasswd failed");
                std::fs::write(dir.path().join("htpasswd"), &out.stdout).unwrap();
                cfg.push_str(&format!(
                    "auth:\n  htpasswd:\n    realm: winlint-test\n    path: {}\n",
                    dir.path().join("htpasswd").display()
                ));
            }
            let cfg_path = dir.path().join("config.yml");
            std::fs::write(&cfg_path, cfg).unwrap();
            let log = std::fs::File::create(dir.path().join("registry.log")).unwrap();
            let mut child = Command::new("docker-registry")
                .arg("serve")
                .arg(&cfg_path)
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .unwrap();
            // Ready when /v2/ answers (200, or 401 with auth); bounded.
            for _ in 0..100 {
                if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
                    let _ = s.write_all(b"GET /v2/ HTTP/1.0\r\n\r\n");
                    let mut buf = [0u8; 12];
                    if s.read_exact(&mut buf).is_ok() && buf.starts_with(b"HTTP/1.") {
                        return Registry {
                            host: format!("127.0.0.1:{port}"),
                            child,
                            dir,
                            creds: creds.map(|(u, p)| (u.into(), p.into())),
                        };
                    }
                }
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
            last = std::fs::read_to_string(dir.path().join("registry.log")).unwrap_or_default();
        }
        panic!("docker-registry did not start: {last}");
    }

    /// Push the OCI layout `layout` (tag `tag`) as `name:tag`; `v2s2`: as Docker media types
    /// (a manifest list, as MCR serves).
    pub fn push(&self, layout: &Path, tag: &str, name: &str, v2s2: bool) {
        let mut cmd = Command::new("skopeo");
        cmd.args([
            "--insecure-policy",
            "copy",
            "--all",
            "--dest-tls-verify=false",
        ]);
        if v2s2 {
            cmd.args(["--format", "v2s2"]);
        } else {
            cmd.arg("--preserve-digests");
        }
        if let Some((u, p)) = &self.creds {
            cmd.arg(format!("--dest-creds={u}:{p}"));
        }
        cmd.arg(format!("oci:{}:{tag}", layout.display()));
        cmd.arg(format!("docker://{}/{name}:{tag}", self.host));
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "skopeo copy failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An OCI image layout written by hand (registry.md's recipe).
pub struct Layout {
    pub dir: tempfile::TempDir,
    refs: Vec<Value>,
}

/// A platform of an image to build: os, architecture, `os.version`.
pub struct Plat<'a> {
    pub os: &'a str,
    pub arch: &'a str,
    pub version: Option<&'a str>,
}

pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";

impl Layout {
    pub fn new() -> Layout {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("blobs/sha256")).unwrap();
        std::fs::write(
            dir.path().join("oci-layout"),
            r#"{"imageLayoutVersion":"1.0.0"}"#,
        )
        .unwrap();
        Layout {
            dir,
            refs: Vec::new(),
        }
    }

    /// Store a blob; its descriptor (digest, size) is returned.
    pub fn blob(&self, media: &str, bytes: &[u8]) -> Value {
        let d = sha256(bytes);
        let hex = d.strip_prefix("sha256:").unwrap();
        std::fs::write(self.dir.path().join("blobs/sha256").join(hex), bytes).unwrap();
        json!({"mediaType": media, "digest": d, "size": bytes.len()})
    }

    /// A deterministic one-file tar.gz layer: (its descriptor, the uncompressed diff id).
    fn layer(&self, content: &str) -> (Value, String) {
        let src = tempfile::tempdir().unwrap();
        std::fs::write(src.path().join("hello.txt"), content).unwrap();
        let tar = Command::new("tar")
            .args([
                "--sort=name",
                "--mtime=@0",
                "--numeric-owner",
                "--owner=0",
                "--group=0",
            ])
            .arg("-C")
            .arg(src.path())
            .args(["-cf", "-", "hello.txt"])
            .output()
            .unwrap();
        assert!(tar.status.success());
        let mut gz = Command::new("gzip")
            .arg("-n")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        gz.stdin.take().unwrap().write_all(&tar.stdout).unwrap();
        let out = gz.wait_with_output().unwrap();
        let desc = self.blob("application/vnd.oci.image.layer.v1.tar+gzip", &out.stdout);
        (desc, sha256(&tar.stdout))
    }

    /// A single-platform image manifest; the platform is in its config only. Windows images
    /// name their default user, as Nano Server's config does.
    pub fn manifest(&self, p: &Plat) -> Value {
        self.manifest_as(p, (p.os == "windows").then_some("ContainerUser"))
    }

    /// A single-platform image manifest whose config's `User` is `user` (`None`: no `User`,
    /// as Server Core's config).
    pub fn manifest_as(&self, p: &Plat, user: Option<&str>) -> Value {
        let (layer, diff) = self.layer(&format!("{} {} {:?} {user:?}", p.os, p.arch, p.version));
        let mut config = json!({"architecture": p.arch, "os": p.os,
            "rootfs": {"type": "layers", "diff_ids": [diff]}, "config": {}});
        if let Some(v) = p.version {
            config["os.version"] = v.into();
        }
        if let Some(u) = user {
            config["config"]["User"] = u.into();
        }
        let config = self.blob(
            "application/vnd.oci.image.config.v1+json",
            config.to_string().as_bytes(),
        );
        let m = json!({"schemaVersion": 2, "mediaType": OCI_MANIFEST, "config": config,
            "layers": [layer]});
        self.blob(OCI_MANIFEST, m.to_string().as_bytes())
    }

    /// A BuildKit-style attestation manifest for the image `of`.
    pub fn attestation(&self, of: &Value) -> Value {
        let config = self.blob("application/vnd.oci.image.config.v1+json", b"{}");
        let statement = self.blob(
            "application/vnd.in-toto+json",
            br#"{"_type":"https://in-toto.io/Statement/v0.1"}"#,
        );
        let m = json!({"schemaVersion": 2, "mediaType": OCI_MANIFEST, "config": config,
            "layers": [statement]});
        let mut d = self.blob(OCI_MANIFEST, m.to_string().as_bytes());
        d["platform"] = json!({"os": "unknown", "architecture": "unknown"});
        d["annotations"] = json!({"vnd.docker.reference.type": "attestation-manifest",
            "vnd.docker.reference.digest": of["digest"]});
        d
    }

    /// An index over `entries` (manifest descriptors with `platform` set by the caller).
    pub fn index(&self, entries: Vec<Value>) -> Value {
        let i = json!({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": entries});
        self.blob(OCI_INDEX, i.to_string().as_bytes())
    }

    /// Name `desc` `tag` in index.json.
    pub fn tag(&mut self, desc: &Value, tag: &str) {
        let mut d = desc.clone();
        d["annotations"] = json!({"org.opencontainers.image.ref.name": tag});
        self.refs.push(d);
        let idx = json!({"schemaVersion": 2, "manifests": self.refs});
        std::fs::write(self.dir.path().join("index.json"), idx.to_string()).unwrap();
    }
}

/// A manifest descriptor with its platform, for an index.
pub fn entry(desc: &Value, p: &Plat) -> Value {
    let mut d = desc.clone();
    let mut plat = json!({"os": p.os, "architecture": p.arch});
    if let Some(v) = p.version {
        plat["os.version"] = v.into();
    }
    d["platform"] = plat;
    d
}

/// What the fake server saw.
#[derive(Debug, Default)]
pub struct Seen {
    pub requests: Mutex<Vec<(String, Option<String>)>>,
    pub bytes_sent: AtomicU64,
    pub stop: AtomicBool,
}

/// A request as the fake server hands it to its handler.
pub struct Req {
    pub method: String,
    pub path: String,
    pub auth: Option<String>,
}

/// What the handler answers.
pub enum Reply {
    /// status, headers, body.
    Full(u16, Vec<(String, String)>, Vec<u8>),
    /// Read the request, never answer (until the test ends).
    Hang,
    /// 200 with `Content-Length: total` and zeros streamed until the client goes.
    Endless(u64),
}

/// A fake registry's answer to any manifest request: an OCI index with one Windows 20348
/// entry, with its digest header (the lookups this answers resolve to a 20348 image). The
/// entry names no digest, so a lookup reads no entry config (the real registry of
/// `tests/registry.rs` shows that it does): one manifest GET per lookup, which the request
/// counts of these tests rely on.
pub fn windows_20348_index() -> Reply {
    let body = json!({"schemaVersion": 2, "mediaType": OCI_INDEX,
        "manifests": [{"mediaType": OCI_MANIFEST, "size": 1,
            "platform": {"os": "windows", "architecture": "amd64", "os.version": "10.0.20348.1"}}]})
    .to_string()
    .into_bytes();
    let digest = sha256(&body);
    Reply::Full(
        200,
        vec![
            ("Content-Type".into(), OCI_INDEX.into()),
            ("Docker-Content-Digest".into(), digest),
        ],
        body,
    )
}

/// A loopback HTTP/1.1 server, one thread per connection, stopped on drop.
pub struct Fake {
    pub addr: String,
    pub seen: Arc<Seen>,
}

impl Fake {
    pub fn start(handler: impl Fn(&Req, &str) -> Reply + Send + Sync + 'static) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let seen = Arc::new(Seen::default());
        let handler = Arc::new(handler);
        let (s2, a2) = (seen.clone(), addr.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s2.stop.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(conn) = conn else { continue };
                let (h, s, a) = (handler.clone(), s2.clone(), a2.clone());
                std::thread::spawn(move || serve_conn(conn, &*h, &s, &a));
            }
        });
        Fake { addr, seen }
    }

    pub fn requests(&self) -> Vec<(String, Option<String>)> {
        self.seen.requests.lock().unwrap().clone()
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        self.seen.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(&self.addr);
    }
}

fn serve_conn(
    conn: TcpStream,
    handler: &(dyn Fn(&Req, &str) -> Reply + Send + Sync),
    seen: &Seen,
    addr: &str,
) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut out = conn;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let path = parts.next().unwrap_or("").to_string();
        let mut auth = None;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':')
                && k.eq_ignore_ascii_case("authorization")
            {
                auth = Some(v.trim().to_string());
            }
        }
        seen.requests
            .lock()
            .unwrap()
            .push((format!("{method} {path}"), auth.clone()));
        let req = Req { method, path, auth };
        match handler(&req, addr) {
            Reply::Hang => {
                while !seen.stop.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(50));
                }
                return;
            }
            Reply::Endless(total) => {
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: {OCI_MANIFEST}\r\nContent-Length: {total}\r\n\r\n"
                );
                if out.write_all(head.as_bytes()).is_err() {
                    return;
                }
                let chunk = vec![b' '; 64 << 10];
                let mut sent = 0u64;
                while sent < total {
                    if out.write_all(&chunk).is_err() {
                        return;
                    }
                    sent += chunk.len() as u64;
                    seen.bytes_sent
                        .fetch_add(chunk.len() as u64, Ordering::SeqCst);
                }
                return;
            }
            Reply::Full(status, headers, body) => {
                let mut head = format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\n", body.len());
                for (k, v) in headers {
                    head.push_str(&format!("{k}: {v}\r\n"));
                }
                head.push_str("\r\n");
                let body = if req.method == "HEAD" {
                    &[][..]
                } else {
                    &body[..]
                };
                if out.write_all(head.as_bytes()).is_err() || out.write_all(body).is_err() {
                    return;
                }
                seen.bytes_sent
                    .fetch_add(body.len() as u64, Ordering::SeqCst);
            }
        }
    }
}
