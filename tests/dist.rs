//! The release artefacts of `scripts/dist.sh`, checked as a user gets them: the static binaries
//! and their SHA256SUMS, the wheel installed into a fresh venv, the OCI image (its platforms,
//! user, entrypoint and its own binary run), the image pushed to a registry on 127.0.0.1 and read
//! back, and the GitHub Action installing the release binary from a loopback server.
//!
//! The artefacts are built once by `.ci/run` (`scripts/dist.sh target/artefacts`, a few minutes of
//! release builds) and named by `WINLINT_DIST_DIR`. Without it, or without a tool a test needs
//! (python3, skopeo, docker-registry, qemu-aarch64-static for the arm64 binary), the test says
//! why and passes, except under `CI=true`, where it fails.

mod cli_support;
mod http_support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cli_support::root;
use http_support::FileServer;
use serde_json::Value;

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Skips (a message, `None`) or, under CI=true, fails.
fn unavailable<T>(why: &str) -> Option<T> {
    assert!(
        !ci(),
        "CI=true and a release-artefact test cannot run: {why}"
    );
    eprintln!("skipped: {why}");
    None
}

/// The output directory of scripts/dist.sh.
fn dist() -> Option<PathBuf> {
    match std::env::var_os("WINLINT_DIST_DIR") {
        Some(d) if Path::new(&d).join("SHA256SUMS").exists() => Some(PathBuf::from(d)),
        Some(d) => unavailable(&format!("no SHA256SUMS in WINLINT_DIST_DIR={d:?}")),
        None => unavailable("WINLINT_DIST_DIR is not set (run scripts/dist.sh, as .ci/run does)"),
    }
}

/// A tool on PATH, or a skip.
fn tool(name: &str) -> Option<String> {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        Some(name.to_string())
    } else {
        unavailable(&format!("{name} is not installed (.ci/run installs it)"))
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn run(cmd: &mut Command) -> std::process::Output {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(cmd: &mut Command) -> String {
    String::from_utf8(run(cmd).stdout)
        .unwrap()
        .trim()
        .to_string()
}

/// (architecture as in the target triple, as in OCI and kubernetes.io/arch)
const ARCHS: [(&str, &str); 2] = [("x86_64", "amd64"), ("aarch64", "arm64")];

/// The architectures the dist output must have: `WINLINT_DIST_ARCHS` as given to dist.sh, by
/// default both.
fn expected_archs() -> BTreeSet<String> {
    std::env::var("WINLINT_DIST_ARCHS")
        .unwrap_or_else(|_| "x86_64 aarch64".into())
        .split_whitespace()
        .map(String::from)
        .collect()
}

fn oci_arch(arch: &str) -> &'static str {
    ARCHS.iter().find(|(a, _)| *a == arch).unwrap().1
}

/// The binaries SHA256SUMS lists: (arch, path).
fn binaries(dist: &Path) -> Vec<(String, PathBuf)> {
    sums(dist)
        .into_iter()
        .filter_map(|(_, name)| {
            let arch = name
                .strip_prefix("winlint-")?
                .strip_suffix("-unknown-linux-musl")?
                .to_string();
            Some((arch, dist.join(name)))
        })
        .collect()
}

fn sums(dist: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(dist.join("SHA256SUMS"))
        .unwrap()
        .lines()
        .map(|l| {
            let (sum, name) = l.split_once("  ").expect("sha256sum format");
            (sum.to_string(), name.to_string())
        })
        .collect()
}

/// What an ELF header and its section names say: machine, static (no PT_INTERP), stripped (no
/// .symtab, no .debug_*).
struct Elf {
    machine: u16,
    interpreter: bool,
    symbols_or_debug: Vec<String>,
}

fn elf(bytes: &[u8]) -> Elf {
    assert_eq!(&bytes[..4], b"\x7fELF");
    assert_eq!(bytes[4], 2, "64-bit");
    assert_eq!(bytes[5], 1, "little-endian");
    let u16_at = |o: usize| u16::from_le_bytes(bytes[o..o + 2].try_into().unwrap());
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap()) as usize;
    let (phoff, shoff) = (u64_at(0x20), u64_at(0x28));
    let (phentsize, phnum) = (u16_at(0x36) as usize, u16_at(0x38) as usize);
    let (shentsize, shnum, shstrndx) = (
        u16_at(0x3a) as usize,
        u16_at(0x3c) as usize,
        u16_at(0x3e) as usize,
    );
    let interpreter = (0..phnum).any(|i| u32_at(phoff + i * phentsize) == 3);
    let strtab = u64_at(shoff + shstrndx * shentsize + 0x18);
    let mut symbols_or_debug = Vec::new();
    for i in 0..shnum {
        let name_off = strtab + u32_at(shoff + i * shentsize) as usize;
        let end = bytes[name_off..].iter().position(|&b| b == 0).unwrap();
        let name = String::from_utf8_lossy(&bytes[name_off..name_off + end]).into_owned();
        if name == ".symtab" || name.starts_with(".debug") {
            symbols_or_debug.push(name);
        }
    }
    Elf {
        machine: u16_at(0x12),
        interpreter,
        symbols_or_debug,
    }
}

/// `winlint --version` of a binary of this architecture (qemu-user for a foreign one).
fn version_of(arch: &str, bin: &Path) -> Option<String> {
    let mut cmd = if arch == std::env::consts::ARCH {
        Command::new(bin)
    } else {
        let qemu = tool(&format!("qemu-{arch}-static"))?;
        let mut c = Command::new(qemu);
        c.arg(bin);
        c
    };
    Some(stdout(cmd.arg("--version")))
}

#[test]
fn binaries_are_static_stripped_summed_and_run() {
    let Some(dist) = dist() else { return };
    let bins = binaries(&dist);
    let archs: BTreeSet<String> = bins.iter().map(|(a, _)| a.clone()).collect();
    assert_eq!(archs, expected_archs(), "{bins:?}");
    for (sum, name) in sums(&dist) {
        let bytes = std::fs::read(dist.join(&name)).unwrap();
        assert_eq!(sha256_hex(&bytes), sum, "{name}: SHA256SUMS");
    }
    for (arch, bin) in &bins {
        let bytes = std::fs::read(bin).unwrap();
        let e = elf(&bytes);
        let want = match arch.as_str() {
            "x86_64" => 62,
            "aarch64" => 183,
            other => panic!("{other}"),
        };
        assert_eq!(e.machine, want, "{}: ELF machine", bin.display());
        assert!(!e.interpreter, "{}: dynamically linked", bin.display());
        assert!(
            e.symbols_or_debug.is_empty(),
            "{}: not stripped: {:?}",
            bin.display(),
            e.symbols_or_debug
        );
        eprintln!("{}: {} bytes", bin.display(), bytes.len());
        if let Some(v) = version_of(arch, bin) {
            assert_eq!(v, format!("winlint {VERSION}"), "{}", bin.display());
        }
    }
}

/// The wheel for this machine, installed into a fresh venv from the file alone (no index, so
/// nothing is built): `winlint` is on the venv's PATH, says its version and lints.
#[test]
fn the_wheel_installs_into_a_fresh_venv_and_lints() {
    let Some(dist) = dist() else { return };
    let Some(python) = tool("python3") else {
        return;
    };
    let wheels: Vec<PathBuf> = std::fs::read_dir(dist.join("wheels"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    for arch in expected_archs() {
        let w = wheels
            .iter()
            .find(|w| {
                let name = w.to_string_lossy();
                name.contains("linux") && name.ends_with(&format!("{arch}.whl"))
            })
            .unwrap_or_else(|| panic!("no {arch} wheel in {wheels:?}"));
        let name = w.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with(&format!("winlint-{VERSION}-py3-none-")),
            "{name}"
        );
        // A static binary runs on glibc and musl systems alike: both tags.
        assert!(
            name.contains(&format!("manylinux2014_{arch}"))
                && name.contains(&format!("musllinux_1_2_{arch}")),
            "{name}"
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let venv = tmp.path().join("venv");
    run(Command::new(&python).args(["-m", "venv"]).arg(&venv));
    let wheel = wheels
        .iter()
        .find(|w| {
            let name = w.to_string_lossy();
            name.contains("linux") && name.ends_with(&format!("{}.whl", std::env::consts::ARCH))
        })
        .unwrap();
    let started = Instant::now();
    run(Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "--no-index",
            "--disable-pip-version-check",
            "--quiet",
        ])
        .arg(wheel));
    eprintln!(
        "pip install {} into a fresh venv: {:.1} s",
        wheel.display(),
        started.elapsed().as_secs_f64()
    );
    let winlint = venv.join("bin/winlint");
    assert_eq!(
        stdout(Command::new(&winlint).arg("--version")),
        format!("winlint {VERSION}")
    );
    let lint = |file: &str| {
        Command::new(&winlint)
            .args(["--color", "never", file])
            .current_dir(root())
            .output()
            .unwrap()
    };
    let bad = lint("testdata/rules/WIN001/windows-image-only/input.yaml");
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stdout).contains("WIN001"));
    assert_eq!(
        lint("testdata/examples/windows-good.yaml").status.code(),
        Some(0)
    );
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn blob(layout: &Path, digest: &str) -> Vec<u8> {
    let hex = digest.strip_prefix("sha256:").unwrap();
    let bytes = std::fs::read(layout.join("blobs/sha256").join(hex)).unwrap();
    assert_eq!(sha256_hex(&bytes), hex, "blob {digest}");
    bytes
}

/// The image of one platform in an OCI layout: its config, and the files of its layer.
struct Image {
    platform: String,
    config: Value,
    files: tempfile::TempDir,
}

/// Reads the image index tagged `tag` in an OCI layout, and every image in it.
fn images(layout: &Path, tag: &str) -> Vec<Image> {
    let top = read_json(&layout.join("index.json"));
    let entry = top["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["annotations"]["org.opencontainers.image.ref.name"] == tag)
        .unwrap_or_else(|| panic!("no {tag} in {top}"));
    let index: Value =
        serde_json::from_slice(&blob(layout, entry["digest"].as_str().unwrap())).unwrap();
    assert_eq!(
        index["mediaType"],
        "application/vnd.oci.image.index.v1+json"
    );
    let mut out = Vec::new();
    for m in index["manifests"].as_array().unwrap() {
        let p = &m["platform"];
        assert_eq!(p["os"], "linux");
        let manifest: Value =
            serde_json::from_slice(&blob(layout, m["digest"].as_str().unwrap())).unwrap();
        let config: Value = serde_json::from_slice(&blob(
            layout,
            manifest["config"]["digest"].as_str().unwrap(),
        ))
        .unwrap();
        assert_eq!(config["architecture"], p["architecture"]);
        let layers = manifest["layers"].as_array().unwrap();
        assert_eq!(layers.len(), 1, "one layer: the binary");
        let gz = blob(layout, layers[0]["digest"].as_str().unwrap());
        let files = tempfile::tempdir().unwrap();
        std::fs::write(files.path().join("layer.tar.gz"), &gz).unwrap();
        run(Command::new("gzip")
            .args(["-dk", "layer.tar.gz"])
            .current_dir(files.path()));
        let tar = std::fs::read(files.path().join("layer.tar")).unwrap();
        assert_eq!(
            config["rootfs"]["diff_ids"][0],
            format!("sha256:{}", sha256_hex(&tar)),
            "diff_id"
        );
        let listing = stdout(
            Command::new("tar")
                .args(["-tvf", "layer.tar"])
                .current_dir(files.path()),
        );
        assert!(
            listing.starts_with("-rwxr-xr-x 0/0") && listing.ends_with(" winlint"),
            "{listing}"
        );
        std::fs::create_dir(files.path().join("rootfs")).unwrap();
        run(Command::new("tar")
            .args(["-xf", "layer.tar", "-C", "rootfs"])
            .current_dir(files.path()));
        out.push(Image {
            platform: p["architecture"].as_str().unwrap().to_string(),
            config,
            files,
        });
    }
    out
}

/// The image: one per architecture of the binaries, FROM scratch with the binary alone as
/// /winlint (the very binary of the release), non-root, entrypoint /winlint, labelled.
#[test]
fn the_image_has_every_platform_a_non_root_user_and_its_own_binary_runs() {
    let Some(dist) = dist() else { return };
    let images = images(&dist.join("oci"), VERSION);
    let platforms: BTreeSet<&str> = images.iter().map(|i| i.platform.as_str()).collect();
    let want: BTreeSet<&str> = expected_archs().iter().map(|a| oci_arch(a)).collect();
    assert_eq!(platforms, want);
    for (arch, bin) in binaries(&dist) {
        let image = images
            .iter()
            .find(|i| i.platform == oci_arch(&arch))
            .unwrap();
        let c = &image.config["config"];
        assert_eq!(c["User"], "65532:65532");
        assert_eq!(c["Entrypoint"], serde_json::json!(["/winlint"]));
        assert!(c.get("Cmd").is_none_or(Value::is_null), "{c}");
        assert_eq!(c["Labels"]["org.opencontainers.image.version"], VERSION);
        assert_eq!(
            c["Labels"]["org.opencontainers.image.source"],
            "https://github.com/winlint/winlint"
        );
        let own = image.files.path().join("rootfs/winlint");
        assert_eq!(
            std::fs::read(&own).unwrap(),
            std::fs::read(&bin).unwrap(),
            "{arch}: the image's /winlint is the release binary"
        );
        if let Some(v) = version_of(&arch, &own) {
            assert_eq!(v, format!("winlint {VERSION}"));
        }
    }
}

/// `docker-registry` (Debian's distribution registry) on 127.0.0.1, storing in a temp dir;
/// killed when dropped.
struct Registry {
    child: std::process::Child,
    addr: String,
    _dir: tempfile::TempDir,
}

impl Registry {
    fn start(bin: &str) -> Registry {
        let dir = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr = format!("127.0.0.1:{port}");
        let config = dir.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {addr}\n",
                dir.path().join("data").display()
            ),
        )
        .unwrap();
        let child = Command::new(bin)
            .arg("serve")
            .arg(&config)
            .stdin(Stdio::null())
            // It logs a 404 for each blob skopeo checks before pushing it: noise.
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(&addr).is_err() {
            assert!(
                Instant::now() < deadline,
                "the registry did not listen on {addr}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Registry {
            child,
            addr,
            _dir: dir,
        }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Pushed with skopeo (as release.yml pushes to ghcr.io) to a registry on 127.0.0.1 and read
/// back: the manifest list names every platform, and a pull of the amd64 image gives the
/// release binary.
#[test]
fn the_image_is_pushed_to_a_registry_and_read_back() {
    let Some(dist) = dist() else { return };
    let (Some(skopeo), Some(registry)) = (tool("skopeo"), tool("docker-registry")) else {
        return;
    };
    let registry = Registry::start(&registry);
    let reference = format!("docker://{}/winlint/winlint:{VERSION}", registry.addr);
    let started = Instant::now();
    run(Command::new(&skopeo)
        .args(["copy", "--quiet", "--all", "--dest-tls-verify=false"])
        .arg(format!("oci:{}:{VERSION}", dist.join("oci").display()))
        .arg(&reference));
    eprintln!(
        "skopeo copy --all (push): {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let raw: Value = serde_json::from_str(&stdout(
        Command::new(&skopeo)
            .args(["inspect", "--raw", "--tls-verify=false"])
            .arg(&reference),
    ))
    .unwrap();
    assert_eq!(raw["mediaType"], "application/vnd.oci.image.index.v1+json");
    let platforms: BTreeSet<String> = raw["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            format!(
                "{}/{}",
                m["platform"]["os"].as_str().unwrap(),
                m["platform"]["architecture"].as_str().unwrap()
            )
        })
        .collect();
    let want: BTreeSet<String> = expected_archs()
        .iter()
        .map(|a| format!("linux/{}", oci_arch(a)))
        .collect();
    assert_eq!(platforms, want);
    // What the user's runtime does: pull the image of its platform.
    let pulled = tempfile::tempdir().unwrap();
    let started = Instant::now();
    run(Command::new(&skopeo)
        .args([
            "copy",
            "--quiet",
            "--src-tls-verify=false",
            "--override-arch",
            "amd64",
        ])
        .arg(&reference)
        .arg(format!("oci:{}:{VERSION}", pulled.path().display())));
    eprintln!(
        "skopeo copy (pull of linux/amd64 from 127.0.0.1): {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let config = read_json(&pulled.path().join("index.json"));
    let manifest = &config["manifests"][0];
    let manifest: Value =
        serde_json::from_slice(&blob(pulled.path(), manifest["digest"].as_str().unwrap())).unwrap();
    let layer = &manifest["layers"][0];
    eprintln!(
        "image linux/amd64: {} bytes compressed",
        layer["size"].as_u64().unwrap()
    );
    let config: Value = serde_json::from_slice(&blob(
        pulled.path(),
        manifest["config"]["digest"].as_str().unwrap(),
    ))
    .unwrap();
    assert_eq!(config["config"]["User"], "65532:65532");
    assert_eq!(config["architecture"], "amd64");
}

/// The Action on its release tag, against a loopback server that serves this dist output as a
/// GitHub release (`<base>/v<version>/…`): it downloads the binary for this machine, checks it
/// against SHA256SUMS, never runs cargo, and the installed binary lints.
#[test]
fn the_action_installs_the_release_binary_from_the_dist_output() {
    let Some(dist) = dist() else { return };
    if std::env::consts::ARCH != "x86_64" && std::env::consts::ARCH != "aarch64" {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let releases = tmp.path().join("releases");
    std::fs::create_dir(&releases).unwrap();
    std::os::unix::fs::symlink(
        std::fs::canonicalize(&dist).unwrap(),
        releases.join(format!("v{VERSION}")),
    )
    .unwrap();
    let server = FileServer::start(&releases);
    let install_root = tmp.path().join("install");
    let action = |sub: &str| {
        Command::new("bash")
            .arg(root().join("scripts/action.sh"))
            .arg(sub)
            .current_dir(root())
            .env("GITHUB_ACTION_PATH", root())
            // No cargo: /usr/bin and /bin only.
            .env("PATH", "/usr/bin:/bin")
            .env("RUNNER_OS", "Linux")
            .env(
                "RUNNER_ARCH",
                if std::env::consts::ARCH == "x86_64" {
                    "X64"
                } else {
                    "ARM64"
                },
            )
            .env("ACTION_REF", format!("v{VERSION}"))
            .env("INPUT_RELEASE_BASE_URL", &server.base)
            .env("WINLINT_ROOT", &install_root)
            .env(
                "INPUT_PATHS",
                "testdata/rules/WIN001/windows-image-only/input.yaml",
            )
            .env("INPUT_ANNOTATIONS", "true")
            .env_remove("WINLINT_BIN")
            .output()
            .unwrap()
    };
    let out = action("install");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("winlint: release binary http://127.0.0.1:"),
        "{text}"
    );
    assert!(text.contains(&format!("winlint {VERSION}")), "{text}");
    let triple = format!("{}-unknown-linux-musl", std::env::consts::ARCH);
    assert_eq!(
        std::fs::read(install_root.join("bin/winlint")).unwrap(),
        std::fs::read(dist.join(format!("winlint-{triple}"))).unwrap()
    );
    let out = action("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("title=WIN001"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The Windows binary of the dist output.
const WINDOWS_EXE: &str = "winlint-x86_64-pc-windows-gnu.exe";

/// scripts/dist.sh's default WINLINT_DIST_WINDOWS (what .ci/run builds).
const WINDOWS_DEFAULT: &str = "x86_64";

/// Runs the dist's Windows binary under Wine (Debian's `wine`) in a prefix of its own, and the
/// dist's Linux x86_64 binary natively, with the same arguments.
struct WinePair {
    /// A copy of the dist's binary beside scripts/wine/prepare.sh's ProcessPrng stand-in
    /// (Debian 12's Wine 8 has no bcryptprimitives.dll, which Rust's std needs).
    exe: PathBuf,
    linux: PathBuf,
    prefix: tempfile::TempDir,
    /// The stand-in's directory; also the Linux binary's PATH, holding no renderer.
    bin: tempfile::TempDir,
}

impl WinePair {
    fn new(dist: &Path) -> Option<WinePair> {
        tool("wine")?;
        tool("x86_64-w64-mingw32-gcc")?;
        let exe = dist.join(WINDOWS_EXE);
        assert!(exe.exists(), "no {WINDOWS_EXE} in {}", dist.display());
        let linux = dist.join("winlint-x86_64-unknown-linux-musl");
        if !linux.exists() {
            return unavailable("no x86_64 Linux binary in the dist output to compare with");
        }
        let bin = tempfile::tempdir().unwrap();
        let exe = PathBuf::from(stdout(
            Command::new("bash")
                .arg(root().join("scripts/wine/prepare.sh"))
                .arg(&exe)
                .arg(bin.path()),
        ));
        Some(WinePair {
            exe,
            linux,
            prefix: tempfile::tempdir().unwrap(),
            bin,
        })
    }

    /// `C:\` of the prefix (created on the first run).
    fn drive_c(&self) -> PathBuf {
        self.prefix.path().join("drive_c")
    }

    fn command(&self, windows: bool, args: &[&str], cwd: &Path) -> Command {
        let mut cmd = if windows {
            let mut c = Command::new("wine");
            c.arg(&self.exe)
                .env("PATH", "/usr/bin:/bin")
                .env("WINEPREFIX", self.prefix.path())
                .env("WINEDEBUG", "-all")
                // No Mono or Gecko installer dialog on the prefix's first start.
                .env("WINEDLLOVERRIDES", "mscoree,mshtml=");
            c
        } else {
            // The static Linux binary needs no PATH; an empty one keeps it from finding a
            // renderer the Windows binary cannot see (a machine's /usr/bin/kubectl renders
            // testdata/'s kustomizations on Linux only).
            let mut c = Command::new(&self.linux);
            c.env("PATH", self.bin.path());
            c
        };
        // The same inputs for both: no renderer from the environment (CI names Linux ones).
        cmd.args(args)
            .current_dir(cwd)
            .env_remove("WINLINT_HELM")
            .env_remove("WINLINT_KUSTOMIZE")
            .env_remove("WINLINT_KUBECTL")
            .env_remove("NO_COLOR")
            .stdin(Stdio::null());
        cmd
    }

    /// (exit code, stdout) of one run.
    fn run(&self, windows: bool, args: &[&str], cwd: &Path) -> (Option<i32>, Vec<u8>) {
        let out = self.command(windows, args, cwd).output().unwrap();
        (out.status.code(), out.stdout)
    }
}

/// A copy of the tree `from` (its manifests only) in `to`, with CRLF line endings when `crlf`.
fn copy_manifests(from: &Path, to: &Path, crlf: bool) {
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_manifests(&p, &dest, crlf);
        } else if matches!(
            p.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml" | "json")
        ) {
            let text = std::fs::read(&p).unwrap();
            let text = if crlf {
                String::from_utf8_lossy(&text)
                    .replace("\r\n", "\n")
                    .replace('\n', "\r\n")
                    .into_bytes()
            } else {
                text
            };
            std::fs::write(dest, text).unwrap();
        }
    }
}

/// Where each finding is: (file, line, column, rule), from `-o json`.
fn places(json: &[u8]) -> Vec<String> {
    let v: Value = serde_json::from_slice(json).unwrap();
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("{} {} {} {}", f["file"], f["line"], f["column"], f["rule"]))
        .collect()
}

/// Issue 28: the Windows binary under Wine says byte for byte what the Linux binary says on
/// testdata/ (`-o json`), and takes Windows input as Windows users write it: CRLF files (the
/// same lines and columns as LF), `C:\` paths on the command line (reported with their
/// backslashes; `C:/` with slashes), `--fix` writing a CRLF file as Linux does, and no ANSI
/// colour where stdout is no console.
#[test]
fn the_windows_binary_under_wine_matches_the_linux_binary() {
    let Some(dist) = dist() else { return };
    if other_platforms()
        .iter()
        .all(|(asset, _)| asset != WINDOWS_EXE)
    {
        eprintln!("skipped: scripts/dist.sh built no Windows binary (WINLINT_DIST_WINDOWS)");
        return;
    }
    let Some(w) = WinePair::new(&dist) else {
        return;
    };
    let started = Instant::now();
    assert_eq!(
        stdout(&mut w.command(true, &["--version"], &root())).replace('\r', ""),
        format!("winlint {VERSION}")
    );

    // testdata/, as a user or a script names it (`/`: the walked files are named with it).
    let args = ["-o", "json", "--color", "never", "testdata/"];
    let linux = w.run(false, &args, &root());
    let windows = w.run(true, &args, &root());
    assert!(
        places(&linux.1).len() > 100,
        "{}",
        String::from_utf8_lossy(&linux.1)
    );
    assert_eq!(linux.0, windows.0, "exit codes on testdata/");
    assert!(
        linux.1 == windows.1,
        "the Windows binary's JSON on testdata/ differs from Linux's (first differing line: {:?})",
        String::from_utf8_lossy(&linux.1)
            .lines()
            .zip(String::from_utf8_lossy(&windows.1).lines())
            .find(|(a, b)| a != b)
    );

    // CRLF: the same JSON as Linux on the CRLF files, the same places as on LF ones.
    let tmp = tempfile::tempdir().unwrap();
    let (lf, crlf) = (tmp.path().join("lf"), tmp.path().join("crlf"));
    for (dir, is_crlf) in [(&lf, false), (&crlf, true)] {
        std::fs::create_dir_all(dir.join("rules")).unwrap();
        copy_manifests(&root().join("testdata/rules"), &dir.join("rules"), is_crlf);
    }
    let args = ["-o", "json", "rules/"];
    let windows_crlf = w.run(true, &args, &crlf);
    assert!(
        w.run(false, &args, &crlf) == windows_crlf,
        "CRLF files: Windows and Linux differ"
    );
    assert_eq!(
        places(&windows_crlf.1),
        places(&w.run(false, &args, &lf).1),
        "CRLF files: other lines or columns than LF"
    );

    // `C:\` paths: a file in the prefix's C: drive, named as a Windows user does.
    let pod = "testdata/rules/WIN001/windows-image-only/input.yaml";
    let app = w.drive_c().join("k8s/app");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::copy(root().join(pod), app.join("pod.yaml")).unwrap();
    let reference = String::from_utf8(w.run(false, &["-o", "json", pod], &root()).1).unwrap();
    let as_linux = |name: &str| reference.replace(pod, &name.replace('\\', "\\\\"));
    for (arg, name) in [
        (r"C:\k8s", r"C:\k8s\app\pod.yaml"),
        (r"C:\k8s\", r"C:\k8s\app\pod.yaml"),
        (r"C:\k8s\app\pod.yaml", r"C:\k8s\app\pod.yaml"),
        ("C:/k8s", "C:/k8s/app/pod.yaml"),
        (r"c:\K8S\APP", r"c:\K8S\APP\pod.yaml"),
    ] {
        let (code, out) = w.run(true, &["-o", "json", arg], &root());
        assert_eq!(code, Some(1), "{arg}");
        assert_eq!(String::from_utf8(out).unwrap(), as_linux(name), "{arg}");
    }

    // `--fix` on a CRLF file named with `C:\`: Windows' write path (the temporary file renamed
    // over the old one) leaves what Linux's leaves, CRLF kept.
    let crlf_pod = String::from_utf8(std::fs::read(root().join(pod)).unwrap())
        .unwrap()
        .replace('\n', "\r\n");
    let fix_dir = w.drive_c().join("fix");
    std::fs::create_dir_all(&fix_dir).unwrap();
    std::fs::write(fix_dir.join("pod.yaml"), &crlf_pod).unwrap();
    std::fs::write(tmp.path().join("pod.yaml"), &crlf_pod).unwrap();
    let fix = ["--fix", "--kubernetes-version", "1.30", "-o", "json"];
    w.run(true, &[&fix[..], &[r"C:\fix\pod.yaml"]].concat(), &root());
    w.run(false, &[&fix[..], &["pod.yaml"]].concat(), tmp.path());
    let fixed = std::fs::read_to_string(fix_dir.join("pod.yaml")).unwrap();
    assert_ne!(fixed, crlf_pod, "--fix under Wine changed nothing");
    assert_eq!(
        fixed,
        std::fs::read_to_string(tmp.path().join("pod.yaml")).unwrap(),
        "--fix: Windows and Linux wrote different files"
    );
    assert!(
        fixed.split_inclusive('\n').all(|l| l.ends_with("\r\n")),
        "--fix under Wine wrote LF lines into a CRLF file"
    );

    // Colour: none on a pipe (auto), ANSI when asked for.
    let text = |color: &str| w.run(true, &["--color", color, r"C:\k8s"], &root()).1;
    assert!(!text("auto").contains(&0x1b), "escape codes on a pipe");
    assert!(text("always").windows(2).any(|p| p == b"\x1b["));
    eprintln!(
        "wine checks: {:.1} s (a new prefix included)",
        started.elapsed().as_secs_f64()
    );
}

/// The Windows and macOS binaries scripts/dist.sh builds by default (WINLINT_DIST_WINDOWS,
/// WINLINT_DIST_MACOS): (asset, the wheel's platform tag).
fn other_platforms() -> Vec<(String, String)> {
    let list = |var: &str, default: &str| {
        std::env::var(var)
            .unwrap_or_else(|_| default.into())
            .split_whitespace()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    let windows = list("WINLINT_DIST_WINDOWS", WINDOWS_DEFAULT)
        .into_iter()
        .map(|a| {
            if a == "aarch64" {
                (
                    "winlint-aarch64-pc-windows-gnullvm.exe".to_string(),
                    "win_arm64".to_string(),
                )
            } else {
                (WINDOWS_EXE.to_string(), "win_amd64".to_string())
            }
        });
    let macos = list("WINLINT_DIST_MACOS", "").into_iter().map(|a| {
        let tag = if a == "aarch64" { "arm64" } else { "x86_64" };
        (format!("winlint-{a}-apple-darwin"), format!("macosx_{tag}"))
    });
    windows.chain(macos).collect()
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap())
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// A NUL-terminated string at `at`.
fn c_str(b: &[u8], at: usize) -> String {
    let end = b[at..]
        .iter()
        .position(|&c| c == 0)
        .map_or(b.len(), |n| at + n);
    String::from_utf8_lossy(&b[at..end]).into_owned()
}

/// What a PE32+ header says: machine, subsystem, and the DLLs its import table (and delay-load
/// table) names, lower-cased.
struct Pe {
    machine: u16,
    subsystem: u16,
    dlls: BTreeSet<String>,
}

fn pe(b: &[u8]) -> Pe {
    assert_eq!(&b[..2], b"MZ", "not an MZ executable");
    let pe = u32_at(b, 0x3c) as usize;
    assert_eq!(&b[pe..pe + 4], b"PE\0\0", "no PE signature");
    let coff = pe + 4;
    let machine = u16_at(b, coff);
    let sections = u16_at(b, coff + 2) as usize;
    let opt = coff + 20;
    let opt_size = u16_at(b, coff + 16) as usize;
    assert_eq!(u16_at(b, opt), 0x20b, "not PE32+");
    let subsystem = u16_at(b, opt + 68);
    // PE32+: the data directories start at 112; 1 is the import table, 13 the delay-load one.
    let dir = |n: usize| u32_at(b, opt + 112 + 8 * n) as usize;
    // An RVA to a file offset, through the section table.
    let file_offset = |rva: usize| {
        (0..sections)
            .map(|i| opt + opt_size + 40 * i)
            .find_map(|s| {
                let (vsize, va) = (u32_at(b, s + 8) as usize, u32_at(b, s + 12) as usize);
                let raw = u32_at(b, s + 20) as usize;
                (va..va + vsize.max(u32_at(b, s + 16) as usize))
                    .contains(&rva)
                    .then(|| rva - va + raw)
            })
            .unwrap_or_else(|| panic!("RVA {rva:#x} in no section"))
    };
    let mut dlls = BTreeSet::new();
    // (directory, descriptor size, where in a descriptor the DLL name's RVA is)
    for (d, size, name_at) in [(1, 20, 12), (13, 32, 4)] {
        if dir(d) == 0 {
            continue;
        }
        let mut at = file_offset(dir(d));
        while u32_at(b, at + name_at) != 0 {
            dlls.insert(c_str(b, file_offset(u32_at(b, at + name_at) as usize)).to_lowercase());
            at += size;
        }
    }
    Pe {
        machine,
        subsystem,
        dlls,
    }
}

/// What a 64-bit Mach-O header and its load commands say: CPU type, file type, the libraries
/// it loads (LC_LOAD_DYLIB and its weak/re-export/lazy kinds), its run paths (LC_RPATH), and
/// the minimum macOS version (LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX) as (major, minor), and
/// whether it carries a code signature.
struct MachO {
    cpu: u32,
    filetype: u32,
    dylibs: Vec<String>,
    rpaths: Vec<String>,
    min_macos: Option<(u32, u32)>,
    signed: bool,
}

fn macho(b: &[u8]) -> MachO {
    assert_eq!(
        u32_at(b, 0),
        0xfeed_facf,
        "not a 64-bit Mach-O (MH_MAGIC_64)"
    );
    let (ncmds, mut at) = (u32_at(b, 16), 32);
    let mut m = MachO {
        cpu: u32_at(b, 4),
        filetype: u32_at(b, 12),
        dylibs: Vec::new(),
        rpaths: Vec::new(),
        min_macos: None,
        signed: false,
    };
    for _ in 0..ncmds {
        let (cmd, size) = (u32_at(b, at), u32_at(b, at + 4) as usize);
        // The string a command names sits at an offset from the command's start.
        let string = |field: usize| c_str(&b[..at + size], at + u32_at(b, at + field) as usize);
        // A version packed as xxxx.yy.zz.
        let version = |v: u32| (v >> 16, (v >> 8) & 0xff);
        match cmd {
            // LC_LOAD_DYLIB, LC_LOAD_WEAK_DYLIB, LC_REEXPORT_DYLIB, LC_LAZY_LOAD_DYLIB,
            // LC_LOAD_UPWARD_DYLIB
            0xc | 0x8000_0018 | 0x8000_001f | 0x20 | 0x8000_0023 => m.dylibs.push(string(8)),
            0x8000_001c => m.rpaths.push(string(8)),
            // LC_BUILD_VERSION: platform (1 = macOS), minos
            0x32 => {
                assert_eq!(
                    u32_at(b, at + 8),
                    1,
                    "LC_BUILD_VERSION: not the macOS platform"
                );
                m.min_macos = Some(version(u32_at(b, at + 12)));
            }
            0x24 => m.min_macos = Some(version(u32_at(b, at + 8))),
            // LC_CODE_SIGNATURE
            0x1d => m.signed = true,
            _ => {}
        }
        at += size;
    }
    m
}

/// Windows' own DLLs a Rust program on MinGW/LLVM-MinGW may import: the Win32 API and the
/// Universal CRT's api sets (part of Windows 10 and later). Not libunwind.dll, libc++.dll,
/// libwinpthread-1.dll or libgcc_s_*.dll: they come with a MinGW toolchain, not with Windows.
fn windows_own_dll(dll: &str) -> bool {
    const SYSTEM: &[&str] = &[
        "kernel32.dll",
        "ntdll.dll",
        "advapi32.dll",
        "bcrypt.dll",
        "bcryptprimitives.dll",
        "crypt32.dll",
        "ncrypt.dll",
        "secur32.dll",
        "ws2_32.dll",
        "userenv.dll",
        "user32.dll",
        "shell32.dll",
        "ole32.dll",
        "oleaut32.dll",
        "msvcrt.dll",
        "ucrtbase.dll",
        "iphlpapi.dll",
        "dbghelp.dll",
        "synchronization.dll",
    ];
    SYSTEM.contains(&dll) || dll.starts_with("api-ms-win-")
}

/// The Windows binaries are PE32+ console programs for their CPU that import only Windows' own
/// DLLs; the macOS ones Mach-O executables for their CPU that load libSystem and the Security
/// and CoreFoundation frameworks from the system (linked against
/// scripts/macos-framework-stubs.sh's stubs) and nothing else, with no run path, and a minimum
/// macOS no later than the one their wheel's macosx_X_Y tag promises; each wheel carries its
/// binary as `winlint[.exe]` in its scripts, byte for byte, and SHA256SUMS lists both. Checked
/// without running them: this machine runs neither macOS nor arm64 Windows.
#[test]
fn the_windows_and_macos_binaries_and_wheels() {
    let Some(dist) = dist() else { return };
    let Some(python) = tool("python3") else {
        return;
    };
    let summed: BTreeSet<String> = sums(&dist).into_iter().map(|(_, name)| name).collect();
    for (asset, tag) in other_platforms() {
        let bytes = std::fs::read(dist.join(&asset))
            .unwrap_or_else(|e| panic!("{asset} in {}: {e}", dist.display()));
        assert!(summed.contains(&asset), "{asset} not in SHA256SUMS");
        let arm64 = asset.starts_with("winlint-aarch64");
        let wheel = std::fs::read_dir(dist.join("wheels"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|w| {
                // `macosx_x86_64`: the platform tag's first part and its architecture.
                let (os, arch) = tag.split_once('_').unwrap();
                let name = w.file_name().unwrap().to_string_lossy().into_owned();
                name.strip_prefix(&format!("winlint-{VERSION}-py3-none-"))
                    .is_some_and(|p| p.starts_with(os) && p.ends_with(&format!("_{arch}.whl")))
            })
            .unwrap_or_else(|| panic!("no {tag} wheel"));
        let wheel_name = wheel.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            summed.contains(&format!("wheels/{wheel_name}")),
            "{wheel_name} not in SHA256SUMS"
        );
        if asset.ends_with(".exe") {
            let p = pe(&bytes);
            // IMAGE_FILE_MACHINE_ARM64 or _AMD64.
            let (want, cpu) = if arm64 {
                (0xaa64, "arm64")
            } else {
                (0x8664, "x86-64")
            };
            assert_eq!(p.machine, want, "{asset}: {cpu}");
            assert_eq!(p.subsystem, 3, "{asset}: a console program");
            let foreign: Vec<_> = p.dlls.iter().filter(|d| !windows_own_dll(d)).collect();
            assert!(
                foreign.is_empty(),
                "{asset} imports DLLs Windows does not ship: {foreign:?} (all: {:?})",
                p.dlls
            );
            eprintln!("{asset}: imports {:?}", p.dlls);
        } else {
            let m = macho(&bytes);
            // CPU_TYPE_ARM64 or CPU_TYPE_X86_64.
            assert_eq!(
                m.cpu,
                if arm64 { 0x0100_000c } else { 0x0100_0007 },
                "{asset}: CPU type"
            );
            assert_eq!(m.filetype, 2, "{asset}: MH_EXECUTE");
            let mut dylibs = m.dylibs.clone();
            dylibs.sort();
            assert_eq!(
                dylibs,
                [
                    "/System/Library/Frameworks/CoreFoundation.framework/Versions/A/CoreFoundation",
                    "/System/Library/Frameworks/Security.framework/Versions/A/Security",
                    "/usr/lib/libSystem.B.dylib",
                ],
                "{asset}: the libraries it loads"
            );
            assert!(m.rpaths.is_empty(), "{asset}: run paths {:?}", m.rpaths);
            // Apple silicon's kernel kills unsigned arm64 code; an ad-hoc signature is enough
            // outside Gatekeeper, and zig's Mach-O linker writes one for aarch64-macos only
            // (ziglang/zig#7103, #9568): x86_64 binaries carry none and need none.
            assert!(
                !arm64 || m.signed,
                "{asset}: no code signature (LC_CODE_SIGNATURE)"
            );
            let (major, minor) = m
                .min_macos
                .unwrap_or_else(|| panic!("{asset}: no minimum macOS version"));
            // winlint-V-py3-none-macosx_11_0_arm64.whl: pip installs it on macOS 11.0 and later.
            let tag_version: Vec<u32> = wheel_name
                .split("macosx_")
                .nth(1)
                .unwrap()
                .split('_')
                .take(2)
                .map(|n| n.parse().unwrap())
                .collect();
            assert!(
                (major, minor) <= (tag_version[0], tag_version[1]),
                "{asset}: needs macOS {major}.{minor}, its wheel {wheel_name} says earlier"
            );
            eprintln!("{asset}: macOS {major}.{minor}+, loads {dylibs:?}");
        }
        eprintln!("{asset}: {} bytes", bytes.len());
        let script = if asset.ends_with(".exe") {
            "winlint.exe"
        } else {
            "winlint"
        };
        let inside = run(Command::new(&python)
            .args(["-c", "import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))"])
            .arg(&wheel)
            .arg(format!("winlint-{VERSION}.data/scripts/{script}")))
        .stdout;
        assert!(
            inside == bytes,
            "{}: its {script} is not {asset}",
            wheel.display()
        );
    }
}
