//! `winlint serve --config` changed under the running binary (issue 29 item 3): the file lives
//! where the kubelet puts a ConfigMap (`winlint.yaml -> ..data/winlint.yaml`, `..data` a
//! symlink swapped to a new directory on every update), warn mode switches to deny without a
//! restart and the verdicts show it; a broken file is refused with its line and the mode in
//! force stays; the enforcement in force is logged at start and on every change, with the
//! file's SHA-256; `winlint_config_reload_total{result}` counts both.

mod webhook_support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use webhook_support::*;

/// A Windows Pod whose image is built for Windows Server 2019 while the default target's nodes
/// run 2022: WIN502, an error: denied in deny mode, admitted with warnings in warn mode.
fn review(uid: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "operation": "CREATE",
            "namespace": "shop",
            "name": "iis",
            "object": {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "iis", "namespace": "shop"},
                "spec": {"os": {"name": "windows"},
                    "nodeSelector": {"kubernetes.io/os": "windows"},
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [{"name": "a",
                        "image": "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2019"}]}}
        }
    }))
    .unwrap()
}

/// The kubelet's layout of a ConfigMap volume: `..data` points at a timestamped directory,
/// `winlint.yaml` at `..data/winlint.yaml`. An update writes a new directory and swaps
/// `..data` with a rename (kubernetes/pkg/volume/util/atomic_writer.go).
struct ConfigMapVolume {
    dir: std::path::PathBuf,
    n: usize,
}

impl ConfigMapVolume {
    fn new(dir: &Path, text: &str) -> ConfigMapVolume {
        let mut v = ConfigMapVolume {
            dir: dir.to_path_buf(),
            n: 0,
        };
        v.update(text);
        std::os::unix::fs::symlink("..data/winlint.yaml", dir.join("winlint.yaml")).unwrap();
        v
    }

    fn update(&mut self, text: &str) {
        self.n += 1;
        let ts = format!("..2026_11_29_11_00_00.{}", self.n);
        std::fs::create_dir(self.dir.join(&ts)).unwrap();
        std::fs::write(self.dir.join(&ts).join("winlint.yaml"), text).unwrap();
        let tmp = self.dir.join("..data_tmp");
        std::os::unix::fs::symlink(&ts, &tmp).unwrap();
        std::fs::rename(&tmp, self.dir.join("..data")).unwrap();
    }

    fn file(&self) -> std::path::PathBuf {
        self.dir.join("winlint.yaml")
    }
}

struct Serve {
    child: Child,
    log: Arc<Mutex<Vec<String>>>,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Serve {
    fn lines(&self) -> Vec<Value> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect()
    }
}

/// Poll `f` every 50 ms until it returns `Some` (bounded by a generous limit: no assertion on
/// speed, two shared cores).
async fn wait_for<T>(what: &str, mut f: impl AsyncFnMut() -> Option<T>) -> T {
    let t = Instant::now();
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(t.elapsed() < Duration::from_secs(120), "{what}: never");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_config_file_switches_warn_to_deny_and_a_broken_one_is_refused() {
    let c = certs();
    let volume_dir = c.dir.path().join("config");
    std::fs::create_dir(&volume_dir).unwrap();
    let mut volume = ConfigMapVolume::new(&volume_dir, "webhook:\n  enforcement: warn\n");
    let mut child = Command::new(env!("CARGO_BIN_EXE_winlint"))
        .args([
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
        .arg("--config")
        .arg(volume.file())
        .args(["--config-reload-interval", "0.1", "--cluster-facts", "off"])
        .args(["--log-format", "json"])
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("winlint serve starts");
    let stderr = child.stderr.take().unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&log);
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            sink.lock().unwrap().push(line);
        }
    });
    let serve = Serve { child, log };
    let (addr, metrics) = wait_for("the listening line", async || {
        serve.lines().iter().find_map(|v| {
            Some((
                v["addr"].as_str()?.parse::<std::net::SocketAddr>().ok()?,
                v["metrics"]
                    .as_str()?
                    .parse::<std::net::SocketAddr>()
                    .ok()?,
            ))
        })
    })
    .await;
    let in_force = |serve: &Serve| -> Vec<Value> {
        serve
            .lines()
            .into_iter()
            .filter(|v| {
                v["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("enforcement in force: "))
            })
            .collect()
    };
    // At start: the mode, and where it comes from (the path the flag names, the content's hash).
    let first = in_force(&serve);
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(first[0]["enforcement"], "warn", "{first:?}");
    let sha = |text: &str| -> String {
        let d = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
        d.as_ref()
            .iter()
            .take(6)
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let source = format!(
        "{} (sha256 {})",
        volume.file().display(),
        sha("webhook:\n  enforcement: warn\n")
    );
    assert_eq!(first[0]["config"], source.as_str(), "{first:?}");

    let mut client = Client::connect(addr, &c.tls.ca_pem, false).await;
    let verdict = async |client: &mut Client, uid: &str| -> Value {
        let (status, body) = client.post("/validate", review(uid)).await.unwrap();
        assert_eq!(status, 200);
        parse_review(&body, uid)["response"].clone()
    };
    let r = verdict(&mut client, "warn-1").await;
    assert_eq!(r["allowed"], true, "warn mode admits: {r}");
    assert!(
        r["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(
                |w| winlint::admission::warnings::unnamed(w.as_str().unwrap())
                    .starts_with("would deny: WIN502")
            ),
        "{r}"
    );

    // The ConfigMap is updated: deny, without a restart.
    let deny = "# rolled out\nwebhook:\n  enforcement: deny\n";
    volume.update(deny);
    let reloaded = "winlint_config_reload_total{result=\"ok\"} ";
    wait_for("the reload of the new content", async || {
        webhook_support::metric(&plain_get(metrics, "/metrics").await.1, reloaded)
            .filter(|n| *n == 1.0)
    })
    .await;
    let r = verdict(&mut client, "deny-1").await;
    assert_eq!(r["allowed"], false, "deny mode refuses: {r}");
    assert_eq!(r["status"]["code"], 403, "{r}");
    let logged = in_force(&serve);
    assert_eq!(logged.len(), 2, "{logged:?}");
    assert_eq!(logged[1]["enforcement"], "deny");
    assert_eq!(
        logged[1]["config"],
        format!("{} (sha256 {})", volume.file().display(), sha(deny)).as_str()
    );

    // A broken update: refused with its line, deny stays in force.
    volume.update("webhook:\n  enforcement: block\n");
    let refused = "winlint_config_reload_total{result=\"error\"} ";
    let text = wait_for("the refusal of the broken content", async || {
        let text = plain_get(metrics, "/metrics").await.1;
        webhook_support::metric(&text, refused)
            .filter(|n| *n == 1.0)
            .map(|_| text)
    })
    .await;
    assert_eq!(
        webhook_support::metric(&text, "winlint_config_last_reload_successful "),
        Some(0.0),
        "{text}"
    );
    let why = serve
        .lines()
        .into_iter()
        .find_map(|v| {
            let m = v["message"].as_str()?;
            m.starts_with("configuration not reloaded")
                .then(|| m.to_string())
        })
        .expect("the refusal is logged");
    let at = format!("{}:2: unknown variant `block`", volume.file().display());
    assert!(why.contains(&at), "{why}");
    let r = verdict(&mut client, "deny-2").await;
    assert_eq!(r["allowed"], false, "the mode in force stays deny: {r}");
    assert_eq!(in_force(&serve).len(), 2, "no change in force, no new line");

    // Fixed: in force again, back to warn.
    volume.update("webhook:\n  enforcement: warn\n");
    wait_for("the reload of the fixed content", async || {
        webhook_support::metric(&plain_get(metrics, "/metrics").await.1, reloaded)
            .filter(|n| *n == 2.0)
    })
    .await;
    let r = verdict(&mut client, "warn-2").await;
    assert_eq!(r["allowed"], true, "{r}");
    let text = plain_get(metrics, "/metrics").await.1;
    assert_eq!(
        webhook_support::metric(&text, "winlint_config_last_reload_successful "),
        Some(1.0)
    );
}
