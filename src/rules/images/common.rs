//! WIN5xx: container images against the target's Windows builds (shared/rules.md §2.6, §5 and
//! the WIN508 row). The image facts come from [`crate::model::image::analyze`], computed once per
//! container by the engine (`eval.images`).
//!
//! What several rules of the family share.

use crate::model::Eval;
use crate::model::image::ImageInfo;
use crate::model::known_images::{self};
use crate::model::placement::HostBuilds;
use crate::model::windows::{self, Build, Isolation};
use crate::model::workload::{ContainerRef, PodSite};

// ---------------------------------------------------------------------------------------------
// The nodes a pod faces. Every question "which host builds, which isolation" in this file goes
// through these two functions.

/// The Windows builds of the nodes this pod's containers must run on: observed, those of the
/// Windows nodes it can land on; offline, the target's configured `windowsBuilds`; none when
/// nothing can be said ([`placement::Placement::host_builds`]).
pub fn host_builds(site: &PodSite, eval: &Eval) -> Vec<Build> {
    eval.placement(site)
        .host_builds(eval.target)
        .map(|h: HostBuilds| h.builds)
        .unwrap_or_default()
}

/// The isolation the pod's containers get: a RuntimeClass in the context whose handler says
/// (`runhcs-wcow-hypervisor*` / `runhcs-wcow-process*`), else Hyper-V when the pod names the
/// target's Hyper-V RuntimeClass, else the target's isolation.
pub fn isolation(site: &PodSite, eval: &Eval) -> Isolation {
    if let Some(name) = site.str("/runtimeClassName") {
        if let Some(iso) = eval
            .context
            .runtime_classes
            .get(name)
            .and_then(|rc| windows::handler_isolation(&rc.handler))
        {
            return iso;
        }
        if name == eval.target.hyperv_runtime_class {
            return Isolation::Hyperv;
        }
    }
    eval.target.isolation
}

// ---------------------------------------------------------------------------------------------
// Shared helpers

/// The containers with an image reference that parses, with their analyses.
pub(crate) fn images<'e, 'a>(
    eval: &'e Eval<'a>,
) -> impl Iterator<Item = (&'e ContainerRef<'a>, &'e str, &'e ImageInfo)> + 'e {
    eval.images.iter().filter_map(|(c, i)| {
        i.reference.as_ref()?;
        Some((c, c.image()?, i))
    })
}

pub(crate) fn image_ptr(site: &PodSite, c: &ContainerRef) -> String {
    site.ptr(&format!("{}/image", c.rel()))
}

/// `10.0.20348 (ltsc2022), 10.0.26100 (ltsc2025)` (`sep` between the builds).
pub(crate) fn describe(builds: &[Build], sep: &str) -> String {
    if builds.is_empty() {
        return "none configured".into();
    }
    builds
        .iter()
        .map(|b| match windows::KNOWN.iter().any(|(k, ..)| k == b) {
            true => format!("{b} ({})", b.token()),
            false => b.to_string(),
        })
        .collect::<Vec<_>>()
        .join(sep)
}

pub(crate) fn describe_builds(builds: &[Build]) -> String {
    describe(builds, ", ")
}

/// The builds images must be built for to run on nodes of `hosts` under process isolation
/// (23H2 nodes run ltsc2022 images), without repeats; Windows Server 2022 when no node build is
/// known.
pub(crate) fn image_builds(hosts: &[Build]) -> Vec<Build> {
    let mut v: Vec<Build> = Vec::new();
    for b in hosts.iter().map(|h| h.image_build()) {
        if !v.contains(&b) {
            v.push(b);
        }
    }
    if v.is_empty() {
        v.push(windows::WS2022);
    }
    v
}

/// The images [`known_images`] knows for nodes of `hosts`, in the order of the builds.
pub(crate) fn known_alternatives(
    info: &ImageInfo,
    hosts: &[Build],
) -> Vec<known_images::Suggestion> {
    let mut v: Vec<known_images::Suggestion> = Vec::new();
    for s in image_builds(hosts)
        .into_iter()
        .filter_map(|b| info.image_for(b))
    {
        if !v.contains(&s) {
            v.push(s);
        }
    }
    v
}

/// "use X or Y" with images that exist for nodes of `hosts`, else "use an image built for
/// 10.0.20348 (ltsc2022)": never a tag the table does not know.
pub(crate) fn instead(info: &ImageInfo, hosts: &[Build]) -> String {
    let known = known_alternatives(info, hosts);
    if known.is_empty() {
        format!(
            "use an image built for {}",
            describe(&image_builds(hosts), " or ")
        )
    } else {
        let names: Vec<String> = known.iter().map(|s| s.to_string()).collect();
        format!("use {}", names.join(" or "))
    }
}

/// Today (`YYYY-MM-DD`): the target's `today`, else the system clock (UTC).
pub(crate) fn today(eval: &Eval) -> String {
    eval.target.today.clone().unwrap_or_else(today_utc)
}

/// Why no node of `hosts` runs an image under `iso`.
pub(crate) enum Mismatch {
    /// The image's build (from its tag or the table).
    Build(Build),
    /// A known manifest list, none of whose Windows entries fits.
    List(&'static [Build]),
    /// The HostProcess base image in an ordinary container.
    HostProcessOnly,
}

/// Why no node of `hosts` can run the image under `iso`, if none can (`None` also when no node
/// build is known or nothing is known about the image).
pub(crate) fn mismatch(info: &ImageInfo, hosts: &[Build], iso: Isolation) -> Option<Mismatch> {
    if hosts.is_empty() {
        return None;
    }
    if info.host_process_only() {
        return Some(Mismatch::HostProcessOnly);
    }
    let fits = |b: Build| !windows::compatible_hosts(b, hosts, iso).is_empty();
    if let Some(b) = info.build {
        return (!fits(b)).then_some(Mismatch::Build(b));
    }
    let list = info.list_builds()?;
    (!list.iter().any(|&b| fits(b))).then_some(Mismatch::List(list))
}

/// Today's UTC date from the system clock, `YYYY-MM-DD`.
pub(crate) fn today_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (H. Hinnant's
/// `civil_from_days`).
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::config::Config;
    use crate::model::Finding;
    use crate::model::Severity;
    use crate::model::pod::is_host_process;

    use crate::model::windows::{WS2022, WS2025};
    use crate::rules::testutil::{cfg, findings, ids, set, winok};
    use serde_json::Value;
    use serde_json::json;
    pub(crate) const DIGEST: &str =
        "sha256:4b1a1d4e2c3f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b";

    pub(crate) const IMG: &str = "/spec/containers/0/image";

    pub(crate) fn with_image(image: &str) -> Value {
        set(winok(), IMG, json!(image))
    }

    pub(crate) fn target(builds: &[Build]) -> Config {
        let mut c = cfg();
        c.target.windows_builds = builds.to_vec();
        c
    }

    pub(crate) fn hyperv(mut c: Config) -> Config {
        c.target.isolation = Isolation::Hyperv;
        c
    }

    /// The severity of the (single) finding of `id`.
    pub(crate) fn sev(pod: &Value, c: &Config, id: &str) -> Severity {
        let fs: Vec<Finding> = findings(pod, c)
            .into_iter()
            .filter(|f| f.rule.id == id)
            .collect();
        assert_eq!(fs.len(), 1, "{id}: {fs:?}");
        fs[0].severity
    }

    pub(crate) fn message(pod: &Value, c: &Config, id: &str) -> String {
        findings(pod, c)
            .into_iter()
            .find(|f| f.rule.id == id)
            .unwrap_or_else(|| panic!("{id} did not fire"))
            .message
    }

    /// shared/rules.md §6 vectors about images: (name, pod, target, expected IDs).
    #[test]
    fn test_vectors() {
        let ws2019 = "mcr.microsoft.com/windows/servercore:ltsc2019";
        let t13 = set(
            winok(),
            "/spec/ephemeralContainers",
            json!([{"name":"debugger","image":"busybox:1.36","securityContext":{"privileged":true}}]),
        );
        let mut eol = target(&[windows::V20H2]);
        eol.target.check_eol = true;
        eol.target.today = Some("2026-01-01".into());
        let hyperv_class = set(
            with_image(ws2019),
            "/spec/runtimeClassName",
            json!("hyperv"),
        );
        let mut hv_named = cfg();
        hv_named.target.hyperv_runtime_class = "hyperv".into();
        let vectors: Vec<(&str, Value, Config, &[&str])> = vec![
            ("T04", winok(), cfg(), &[]),
            ("T13", t13, cfg(), &["WIN103", "WIN507"]),
            // rules.md §6 lists WIN503 beside WIN501 for T36/T37; WIN503 no longer repeats what
            // WIN501 says about a :latest image (issue 9: three findings stacked on one image).
            (
                "T36",
                with_image("mcr.microsoft.com/windows/servercore:latest"),
                cfg(),
                &["WIN501"],
            ),
            (
                "T37",
                with_image("mcr.microsoft.com/windows/nanoserver"),
                cfg(),
                &["WIN501"],
            ),
            ("T38", with_image(ws2019), cfg(), &["WIN502"]),
            ("T39", hyperv_class.clone(), hyperv(cfg()), &[]),
            ("T39 named class", hyperv_class, hv_named, &[]),
            ("T40", winok(), target(&[WS2025]), &[]),
            (
                "T41 process",
                with_image("mcr.microsoft.com/windows/servercore:ltsc2025"),
                cfg(),
                &["WIN502"],
            ),
            (
                "T41 hyperv",
                with_image("mcr.microsoft.com/windows/servercore:ltsc2025"),
                hyperv(cfg()),
                &["WIN502"],
            ),
            (
                "T42",
                with_image(
                    "mcr.microsoft.com/dotnet/framework/aspnet:4.8-20230808-windowsservercore-ltsc2022",
                ),
                cfg(),
                &[],
            ),
            (
                "T43",
                with_image(&format!("mcr.microsoft.com/windows/servercore@{DIGEST}")),
                cfg(),
                &["WIN503"],
            ),
            (
                "T54",
                with_image("mcr.microsoft.com/windows/servercore:20h2"),
                target(&[windows::V20H2]),
                &["WIN505"],
            ),
            (
                "T54 --check-eol",
                with_image("mcr.microsoft.com/windows/servercore:20h2"),
                eol,
                &["WIN505", "WIN506"],
            ),
        ];
        for (name, pod, c, want) in vectors {
            assert_eq!(ids(&pod, &c), want, "{name}");
        }
    }

    #[test]
    fn severities_of_the_vectors() {
        let t36 = with_image("mcr.microsoft.com/windows/servercore:latest");
        assert_eq!(sev(&t36, &cfg(), "WIN501"), Severity::Error);
        let t38 = with_image("mcr.microsoft.com/windows/servercore:ltsc2019");
        assert_eq!(sev(&t38, &cfg(), "WIN502"), Severity::Error);
        let t54 = with_image("mcr.microsoft.com/windows/servercore:20h2");
        assert_eq!(
            sev(&t54, &target(&[windows::V20H2]), "WIN505"),
            Severity::Warning
        );
    }

    #[test]
    fn hostprocess_containers_have_no_build_requirement() {
        let hp = |pod: Value| {
            let pod = set(pod, "/spec/hostNetwork", json!(true));
            set(
                pod,
                "/spec/securityContext/windowsOptions",
                json!({"hostProcess": true, "runAsUserName": "NT AUTHORITY\\SYSTEM"}),
            )
        };
        // Pod-level HostProcess: no WIN502, no WIN503.
        let old = hp(with_image("mcr.microsoft.com/windows/servercore:ltsc2019"));
        assert!(
            !ids(&old, &cfg()).contains(&"WIN502"),
            "{:?}",
            ids(&old, &cfg())
        );
        let unknown = hp(with_image("contoso/agent:1.0"));
        assert!(!ids(&unknown, &cfg()).contains(&"WIN503"));
        // No WIN501 either: the build of a HostProcess image does not matter, and :latest on it
        // is ordinary tag hygiene (the antrea-windows:latest HostProcess DaemonSet).
        let latest = hp(with_image("antrea/antrea-windows:latest"));
        assert!(!ids(&latest, &cfg()).contains(&"WIN501"));
        let base = hp(with_image("mcr.microsoft.com/windows/servercore"));
        assert!(!ids(&base, &cfg()).contains(&"WIN501"));
        // windows_exporter's shape: a nanoserver:1809 HostProcess init container beside a
        // HostProcess container: no WIN50x at all.
        let exporter = set(
            hp(with_image(
                "ghcr.io/prometheus-community/windows-exporter:latest",
            )),
            "/spec/initContainers",
            json!([{"name":"configure-firewall","image":"mcr.microsoft.com/windows/nanoserver:1809",
                    "command":["powershell"]}]),
        );
        assert!(
            !ids(&exporter, &target(&[WS2022]))
                .iter()
                .any(|id| id.starts_with("WIN50")),
            "{:?}",
            ids(&exporter, &cfg())
        );
        // Container-level HostProcess overrides a pod-level false.
        let pod = set(
            with_image("mcr.microsoft.com/windows/servercore:ltsc2019"),
            "/spec/containers/0/securityContext/windowsOptions/hostProcess",
            json!(true),
        );
        let sites = crate::model::workload::pod_sites(&pod);
        let c = sites[0].containers().next().unwrap();
        assert!(is_host_process(&sites[0], &c));
        let pod = set(
            pod,
            "/spec/securityContext/windowsOptions/hostProcess",
            json!(true),
        );
        let pod = set(
            pod,
            "/spec/containers/0/securityContext/windowsOptions/hostProcess",
            json!(false),
        );
        let sites = crate::model::workload::pod_sites(&pod);
        let c = sites[0].containers().next().unwrap();
        assert!(!is_host_process(&sites[0], &c));
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(20_513), (2026, 3, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(today_utc().len(), 10);
    }

    #[test]
    fn linux_pods_get_no_image_findings() {
        // T01/T03 shapes, and a Linux pod with an untagged image: the engine gates WIN5xx.
        for pod in [
            json!({"kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[{"name":"web","image":"nginx:1.25"}]}}),
            json!({"kind":"Pod","metadata":{"name":"b"},"spec":{"containers":[{"name":"a","image":"alpine"}]}}),
            json!({"kind":"Pod","metadata":{"name":"c"},"spec":{"containers":[{"name":"a","image":"contoso/app"}]}}),
            json!({"kind":"Pod","metadata":{"name":"d"},"spec":{"containers":[{"name":"a","image":"mcr.microsoft.com/dotnet/aspnet:8.0"}]}}),
        ] {
            assert!(
                !ids(&pod, &cfg()).iter().any(|id| id.starts_with("WIN5")),
                "{pod}"
            );
        }
    }
}
