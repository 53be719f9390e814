//! The real `winlint` binary: `winlint serve` answers over TLS, logs JSON lines that carry the
//! request UID and no object contents, and on SIGTERM finishes the request in flight before it
//! exits 0; `winlint manifests` prints parseable YAML.

mod webhook_support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use webhook_support::*;

struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
    log: Vec<String>,
}

impl Running {
    /// The next log line (bounded wait).
    fn next_line(&mut self) -> Option<String> {
        let l = self.lines.recv_timeout(Duration::from_secs(60)).ok()?;
        self.log.push(l.clone());
        Some(l)
    }
    fn drain(&mut self) {
        while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.log.push(l);
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Follow a spawned `winlint serve`'s stderr line by line.
fn running(mut child: Child) -> Running {
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    Running {
        child,
        lines: rx,
        log: Vec::new(),
    }
}

/// `winlint serve` on loopback ports with `c`, JSON logs on stderr.
fn serve_command(c: &Certs) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_winlint"));
    cmd.args([
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--metrics-listen",
        "127.0.0.1:0",
    ])
    .arg("--tls-cert")
    .arg(&c.cert)
    .arg("--tls-key")
    .arg(&c.key)
    .args(["--log-format", "json"])
    .env_remove("RUST_LOG")
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    cmd
}

fn spawn_serve(c: &Certs) -> (Running, std::net::SocketAddr, std::net::SocketAddr) {
    let child = serve_command(c)
        // Never whatever cluster this machine's kubeconfig points at.
        .args(["--cluster-facts", "off"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("winlint serve starts");
    let mut r = running(child);
    // The first log lines say where it listens.
    for _ in 0..50 {
        let Some(line) = r.next_line() else { break };
        let v: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("log line is not JSON ({e}): {line}"));
        if let (Some(a), Some(m)) = (v["addr"].as_str(), v["metrics"].as_str()) {
            return (r, a.parse().unwrap(), m.parse().unwrap());
        }
    }
    panic!("winlint serve did not report its address: {:?}", r.log);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_finishes_in_flight_requests_then_exits_zero() {
    let c = certs();
    let (mut run, addr, metrics) = spawn_serve(&c);
    // Some traffic first.
    let mut client = Client::connect(addr, &c.tls.ca_pem, false).await;
    for i in 0..10 {
        let uid = format!("before-{i}");
        let (status, body) = client.post("/mutate", windows_review(&uid)).await.unwrap();
        assert_eq!(status, 200);
        parse_review(&body, &uid);
    }
    assert_eq!(plain_get(metrics, "/readyz").await.0, 200);

    // A request in flight: headers and half the body.
    let body = windows_review("inflight");
    let cfg = client_config(&[&c.tls.ca_pem], &[b"http/1.1"], None);
    let mut s = tls_connect(addr, cfg).await.unwrap();
    let head = format!(
        "POST /validate?timeout=10s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(&body[..body.len() / 2]).await.unwrap();
    s.flush().await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;

    let pid = run.child.id().to_string();
    assert!(
        // The shell's kill builtin: no dependency on a kill binary being installed.
        Command::new("sh")
            .args(["-c", &format!("kill -TERM {pid}")])
            .status()
            .unwrap()
            .success()
    );
    // Wait (bounded) until the server has seen the signal.
    let mut seen = false;
    for _ in 0..50 {
        match run.next_line() {
            Some(l) if l.contains("shutting down") => {
                seen = true;
                break;
            }
            Some(_) => {}
            None => break,
        }
    }
    assert!(seen, "no shutdown log line: {:?}", run.log);

    // The rest of the body, after SIGTERM: the answer still comes.
    s.write_all(&body[body.len() / 2..]).await.unwrap();
    s.flush().await.unwrap();
    let mut resp = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(30), s.read_to_end(&mut resp)).await;
    let text = String::from_utf8_lossy(&resp);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    let start = text.find("\r\n\r\n").unwrap() + 4;
    parse_review(&resp[start..], "inflight");

    // The process exits 0 (bounded wait).
    let mut status = None;
    for _ in 0..300 {
        if let Some(st) = run.child.try_wait().unwrap() {
            status = Some(st);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let status = status.expect("winlint serve exits after SIGTERM");
    assert!(status.success(), "{status:?}");
    run.drain();

    // Logs: JSON lines, the UID on every line, the in-flight request logged, no object contents.
    assert!(
        run.log.iter().any(|l| l.contains("\"uid\":\"inflight\"")),
        "{:?}",
        run.log
    );
    for l in &run.log {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert!(v.get("uid").is_some(), "log line without uid: {l}");
        assert!(
            !l.contains("mcr.microsoft.com"),
            "object contents logged: {l}"
        );
    }
}

#[test]
fn manifests_command_prints_yaml() {
    let out = Command::new(env!("CARGO_BIN_EXE_winlint"))
        .args(["manifests", "--namespace", "wl"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    // Namespace, ServiceAccount, ClusterRole, ClusterRoleBinding, ConfigMap, Secret,
    // Deployment, Service, PodDisruptionBudget and the two webhook configurations.
    assert_eq!(text.lines().filter(|l| *l == "---").count(), 11, "{text}");
    assert!(text.contains("kind: ValidatingWebhookConfiguration"));
    let bad = Command::new(env!("CARGO_BIN_EXE_winlint"))
        .args(["manifests", "--url", "http://insecure:80"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
}

#[test]
fn serve_refuses_missing_certificates() {
    let out = Command::new(env!("CARGO_BIN_EXE_winlint"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--tls-cert",
            "/nonexistent/tls.crt",
            "--tls-key",
            "/nonexistent/tls.key",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/tls.crt"));
}

/// `--kubeconfig` names the cluster to watch: a file that cannot be read is a startup error
/// naming it, not a webhook silently without facts.
#[test]
fn serve_refuses_an_unusable_kubeconfig() {
    let c = certs();
    let out = Command::new(env!("CARGO_BIN_EXE_winlint"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .arg("--tls-cert")
        .arg(&c.cert)
        .arg("--tls-key")
        .arg(&c.key)
        .args(["--kubeconfig", "/nonexistent/kubeconfig"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/kubeconfig"), "{err}");
    assert!(err.contains("--cluster-facts=off"), "{err}");
}

/// Neither flag, not in a pod, no kubeconfig: the webhook serves with the configured facts,
/// says so in the log, and is ready at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_without_any_cluster_configuration_uses_the_configured_facts() {
    let c = certs();
    let home = tempfile::tempdir().unwrap();
    let child = serve_command(&c)
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBERNETES_SERVICE_PORT")
        .env("HOME", home.path())
        .spawn()
        .unwrap();
    let mut run = running(child);
    let mut metrics = None;
    for _ in 0..50 {
        let Some(line) = run.next_line() else { break };
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if let Some(m) = v["metrics"].as_str() {
            metrics = Some(m.parse().unwrap());
            break;
        }
    }
    let metrics = metrics.unwrap_or_else(|| panic!("no address logged: {:?}", run.log));
    assert!(
        run.log
            .iter()
            .any(|l| l.contains("cluster facts unavailable, evaluating with the configured facts")),
        "{:?}",
        run.log
    );
    assert_eq!(
        plain_get(metrics, "/readyz").await,
        (200, "ready: configured facts".to_string())
    );
    let (_, text) = plain_get(metrics, "/metrics").await;
    assert_eq!(
        webhook_support::metric(&text, "winlint_cluster_facts_synced"),
        Some(0.0),
        "{text}"
    );
}

/// `winlint serve` under an open-file limit (issue 30): the soft limit is raised to the hard
/// one at start, and the connection cap stays below it (limit less the reserve), logged; at a
/// soft limit of 1 024, common for containers, the default cap of 1 024 was never reached and
/// new connections starved.
#[test]
fn the_open_file_limit_is_raised_and_the_connection_cap_kept_below_it() {
    use std::os::unix::process::CommandExt;
    let c = certs();
    let start = |soft: u64, hard: u64| {
        let mut cmd = serve_command(&c);
        cmd.args(["--cluster-facts", "off"]);
        // SAFETY: only setrlimit, async-signal-safe, between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                let lim = libc::rlimit {
                    rlim_cur: soft,
                    rlim_max: hard,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut r = running(cmd.spawn().expect("winlint serve starts"));
        let mut said = None;
        for _ in 0..50 {
            let Some(line) = r.next_line() else { break };
            if line.contains("open-file limit") {
                said = Some(line.clone());
            }
            if line.contains("listening") {
                break;
            }
        }
        let limits = std::fs::read_to_string(format!("/proc/{}/limits", r.child.id())).unwrap();
        let files = limits
            .lines()
            .find(|l| l.starts_with("Max open files"))
            .unwrap()
            .split_whitespace()
            .skip(3)
            .take(2)
            .map(|n| n.parse::<u64>().unwrap())
            .collect::<Vec<_>>();
        (
            said.unwrap_or_else(|| panic!("no open-file limit logged: {:?}", r.log)),
            files,
        )
    };
    // Soft 512 under hard 2 048: raised, and the default cap fits.
    let (said, files) = start(512, 2048);
    assert_eq!(files, [2048, 2048]);
    assert!(said.contains("up to 1024 connections"), "{said}");
    // Hard 1 024: the cap goes below it, and the log says so.
    let (said, files) = start(1024, 1024);
    assert_eq!(files, [1024, 1024]);
    assert!(
        said.contains("--max-connections 1024 lowered to 768"),
        "{said}"
    );
}
