//! `-o html` in a real browser: the page winlint writes, opened from a file in headless Debian
//! Chromium (no server, as a user opens a CI artefact), shows the summary's numbers, the
//! objects, the fixes, and shows markup from a manifest as text without running it. Chromium
//! is WINLINT_CHROMIUM or `chromium` on PATH (.ci/run installs Debian's package); without it
//! the test skips with a message, and fails under CI=true.
//!
//! `--dump-dom` gives the document Chromium built (after any script would have run);
//! `--screenshot` the pixels, decoded with the `png` crate and checked for size and content.
//! `winlint plan --format html` is opened the same way, with the console logged: no script
//! error, the blocked workloads first.

mod cli_support;

use std::path::Path;

use cli_support::{Out, Run, ci_tool, winlint};

/// The inputs of the page: the text report's (fixes, two objects, a namespace given and one
/// not) and the hostile names of testdata/html/input/.
const INPUTS: [&str; 2] = ["testdata/text/input/", "testdata/html/input/"];

fn chromium() -> Option<String> {
    ci_tool(
        "WINLINT_CHROMIUM",
        &["chromium"],
        &["--version"],
        "Chromium (Debian package chromium)",
    )
}

/// Write the page into `dir`; its path.
fn page(dir: &Path) -> std::path::PathBuf {
    let mut args = vec!["-o", "html"];
    args.extend(INPUTS);
    let out = winlint(&args);
    out.assert_code(1);
    let path = dir.join("report.html");
    std::fs::write(&path, &out.stdout).unwrap();
    path
}

/// Chromium, headless, with a fresh profile and no background traffic (the flags of
/// /work/.library/env/machines/rust.md: without them it tries to reach Google's hosts), on
/// `page` as a file:// URL.
fn run_chromium(bin: &str, profile: &Path, extra: &[String], page: &Path) -> Out {
    let mut argv: Vec<String> = vec![
        bin.into(),
        "--headless".into(),
        "--no-sandbox".into(),
        "--disable-gpu".into(),
        "--disable-quic".into(),
        "--no-first-run".into(),
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-sync".into(),
        format!("--user-data-dir={}", profile.display()),
    ];
    argv.extend(extra.iter().cloned());
    argv.push(format!("file://{}", page.display()));
    // A page that blocked (a script's alert) would hang Chromium: the kill fails the test.
    let out = Run::new::<&str>(&[])
        .program(&argv)
        .kill_after(std::time::Duration::from_secs(60))
        .run();
    assert!(out.status.success(), "chromium failed\n{out}");
    out
}

fn chromium_shows_the_report_and_runs_no_markup_from_manifests() {
    let Some(bin) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let page = page(dir.path());
    let profile = tempfile::tempdir().unwrap();
    let out = run_chromium(&bin, profile.path(), &["--dump-dom".into()], &page);
    let dom = &out.stdout;
    // The document, as Chromium parsed it: the title is the page's (the manifest's script
    // would have replaced it), the counts are the summary's.
    assert!(dom.contains("<title>winlint report</title>"), "{dom}");
    for want in [
        "5 errors, 6 warnings, 1 info in 2 files (4 objects, 3 pod templates checked)",
        "<span class=\"n\">5</span> errors",
        "<span class=\"n\">6</span> warnings",
        "<span class=\"n\">1</span> info",
        "<span class=\"n\">33%</span> workloads without errors (1 of 3)",
        "<tr><td>shop</td><td class=\"num\">2</td><td class=\"num\">2</td><td class=\"num\">1</td></tr>",
        "<h3>shop/Deployment/iis-frontend</h3>",
        "<b>fix:</b> add nodeSelector kubernetes.io/os=windows <span class=\"tag\">[fixable]</span>",
        // Markup in names and messages is text: serialized back escaped, quotes as written.
        "<h3>&lt;img src=x onerror=alert(1)&gt;/Deployment/web&lt;script&gt;document.title='pwned'&lt;/script&gt;</h3>",
        "container \"&lt;script&gt;alert('container')&lt;/script&gt;\" image",
    ] {
        assert!(dom.contains(want), "{want:?} not in the DOM\n{dom}");
    }
    // No element came from the input: the page has no script or image of its own.
    assert!(!dom.contains("<script"), "{dom}");
    assert!(!dom.contains("<img"), "{dom}");
    assert_eq!(
        dom.matches("<article class=\"object\">").count(),
        3,
        "{dom}"
    );
}

fn chromium_screenshot_is_the_window_and_not_blank() {
    let Some(bin) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let page = page(dir.path());
    let profile = tempfile::tempdir().unwrap();
    let shot = dir.path().join("report.png");
    run_chromium(
        &bin,
        profile.path(),
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,2000".into(),
        ],
        &page,
    );
    let file = std::fs::File::open(&shot).expect("chromium wrote no screenshot");
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut buf).unwrap();
    assert_eq!((frame.width, frame.height), (1280, 2000));
    let channels = frame.color_type.samples();
    assert!(channels >= 3, "{:?}", frame.color_type);
    let pixels: Vec<&[u8]> = buf[..frame.buffer_size()].chunks(channels).collect();
    let white = pixels.iter().filter(|p| p[..3] == [255, 255, 255]).count();
    // Text and tables cover part of the page, not nothing and not all of it.
    let inked = pixels.len() - white;
    assert!(
        inked * 100 > pixels.len() && inked * 100 < pixels.len() * 60,
        "{inked} of {} pixels are not white",
        pixels.len()
    );
    // The style was applied: the error card's red border (#cf222e) is drawn.
    let near = |p: &[u8], c: [u8; 3]| (0..3).all(|i| p[i].abs_diff(c[i]) <= 8);
    let red = pixels
        .iter()
        .filter(|p| near(p, [0xcf, 0x22, 0x2e]))
        .count();
    assert!(red > 100, "{red} pixels of the error colour");
}

/// A Windows workload whose names carry markup, planned with testdata/plan.
const HOSTILE_PLAN: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  \
    name: \"web<script>document.title='pwned'</script>\"\n  namespace: \"<img src=x onerror=alert(1)>\"\n\
    spec:\n  selector: {matchLabels: {app: w}}\n  template:\n    metadata: {labels: {app: w}}\n    \
    spec:\n      nodeSelector: {kubernetes.io/os: windows}\n      containers:\n      \
    - name: \"<script>alert('c')</script>\"\n        image: mcr.microsoft.com/windows/servercore:ltsc2019\n";

/// `winlint plan --format html` on testdata/plan (a workload in every verdict class) and
/// [`HOSTILE_PLAN`], in Chromium: the document it builds, with the console logged to stderr.
fn plan_page_in_chromium(bin: &str) -> (String, String) {
    let out = Run::new(&[
        "plan",
        "testdata/plan",
        "-",
        "--format",
        "html",
        "--no-config",
        "--platform",
        "aks",
        "--windows-build",
        "ltsc2019",
        "--windows-build",
        "ltsc2022",
        "--to",
        "ltsc2025",
        "--as-of",
        "2026-11-29",
    ])
    .stdin(HOSTILE_PLAN)
    .run();
    out.assert_code(0);
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("plan.html");
    std::fs::write(&page, &out.stdout).unwrap();
    let profile = tempfile::tempdir().unwrap();
    let shown = run_chromium(
        bin,
        profile.path(),
        &[
            "--dump-dom".into(),
            "--enable-logging=stderr".into(),
            "--v=0".into(),
        ],
        &page,
    );
    (shown.stdout, shown.stderr)
}

/// The plan's page: no script error or console message (Chromium logs each as `CONSOLE`), the
/// markup of the manifest shown as text, and the workloads in the order people act on them:
/// every blocked one (pin-breaks, rebuild, needs-hyperv) before any other.
fn chromium_shows_the_plan_blocked_workloads_first() {
    let Some(bin) = chromium() else { return };
    let (dom, log) = plan_page_in_chromium(&bin);
    assert!(!log.contains(":CONSOLE"), "console messages:\n{log}");
    assert!(dom.contains("<title>winlint plan</title>"), "{dom}");
    assert!(!dom.contains("<script"), "{dom}");
    assert!(!dom.contains("<img"), "{dom}");
    assert!(
        dom.contains("&lt;img src=x onerror=alert(1)&gt;/Deployment/web&lt;script&gt;"),
        "{dom}"
    );
    // The verdict of each workload, in the page's order.
    let verdicts: Vec<&str> = dom
        .split("<article class=\"object\">\n<h3>")
        .skip(1)
        .map(|a| a.split(' ').next().unwrap())
        .collect();
    let blocks = |v: &str| ["pin-breaks", "rebuild", "needs-hyperv"].contains(&v);
    let last_blocked = verdicts
        .iter()
        .rposition(|v| blocks(v))
        .expect("a blocked workload");
    let first_other = verdicts.iter().position(|v| !blocks(v)).expect("another");
    assert!(last_blocked < first_other, "{verdicts:?}");
    for v in [
        "pin-breaks",
        "rebuild",
        "needs-hyperv",
        "retag",
        "runs-as-is",
    ] {
        assert!(verdicts.contains(&v), "{v} not in {verdicts:?}");
    }
    // The cards count what the page lists.
    let blocked = verdicts.iter().filter(|v| blocks(v)).count();
    assert!(
        dom.contains(&format!(
            "{} Windows workload(s): {blocked} blocked",
            verdicts.len()
        )),
        "{dom}"
    );
}

/// The tests (libtest-mimic: a test that lacks an outside tool is reported ignored, with how
/// to get it; tests/skip_support).
fn main() {
    use cli_support::skip_support::{run, test};
    run(vec![
        test(
            "chromium_shows_the_report_and_runs_no_markup_from_manifests",
            chromium_shows_the_report_and_runs_no_markup_from_manifests,
        ),
        test(
            "chromium_screenshot_is_the_window_and_not_blank",
            chromium_screenshot_is_the_window_and_not_blank,
        ),
        test(
            "chromium_shows_the_plan_blocked_workloads_first",
            chromium_shows_the_plan_blocked_workloads_first,
        ),
    ]);
}
