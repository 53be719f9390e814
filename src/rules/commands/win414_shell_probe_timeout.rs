//! WIN414 `shell-probe-timeout`.

use crate::model::Eval;
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::workload::{PodSite, lookup};
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::commands::common::{OnWindows, PROBES, Program, one_string_program};

/// WIN414 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN414,
    check: shell_probe_timeout,
};

pub static WIN414: RuleMeta = RuleMeta {
    id: "WIN414",
    name: "shell-probe-timeout",
    severity: Severity::Warning,
    summary: "an exec probe of a Windows pod starts PowerShell or cmd with a timeout too short for it",
    docs: r#"## What it does
Finds exec probes (liveness, readiness, startup) of Windows pods whose program is PowerShell
(`powershell`, `pwsh`) with `timeoutSeconds` under 5, or `cmd` with `timeoutSeconds` under 2
(the default is 1), on targets where the kubelet enforces exec probe timeouts (Kubernetes 1.20
and later, feature gate `ExecProbeTimeout`).

## Why is this bad?
An exec probe on Windows creates a process in the container through the Host Compute Service,
and PowerShell then loads the .NET runtime and its modules: seconds, more on a loaded node. The
kubelet kills the probe at `timeoutSeconds` (1 by default) and counts a failure, so a healthy
container is restarted (liveness, startup) or kept out of its Services (readiness). Before
Kubernetes 1.20 the timeout was not enforced, which is why probes copied from old manifests
start failing after an upgrade.

## Example
```yaml
livenessProbe:
  exec:
    command: ["powershell", "-Command", "Test-Path C:\\healthy"]
  periodSeconds: 10
```

## Fix
Set `timeoutSeconds: 5` or more for PowerShell (2 or more for cmd), or probe with `httpGet`
or `tcpSocket`, which need no process in the container.
"#,
    fix: None,
    source: "kubernetes ExecProbeTimeout (GA 1.20), kubernetes-csi/csi-driver-smb#359, Azure/prometheus-collector#727",
    applies: "K>=1.20 (ExecProbeTimeout)",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers]),
    mutation: Mutation::DEFAULT,
};

/// The shortest timeout each interpreter is given (seconds). PowerShell's start-up in a
/// container is measured in seconds; cmd's in milliseconds, but the process creation through
/// HCS on a busy node can take a second on its own. A judgement, stated in the docs.
fn minimum(kind: OnWindows) -> Option<u64> {
    match kind {
        OnWindows::WindowsPowerShell | OnWindows::Pwsh => Some(5),
        OnWindows::Cmd => Some(2),
        _ => None,
    }
}

/// The probe's own default (core/v1 `Probe.timeoutSeconds`).
const DEFAULT_TIMEOUT: u64 = 1;

pub(crate) fn shell_probe_timeout(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !eval.target.gate("ExecProbeTimeout") {
        return Vec::new();
    }
    let mut out = Vec::new();
    for c in site.containers() {
        for &(field, label) in PROBES {
            let Some(probe) = c.value.get(field) else {
                continue;
            };
            let Some(first) = lookup(probe, "/exec/command/0").and_then(|v| v.as_str()) else {
                continue;
            };
            // The one-string form is WIN413's; its program is still the first token.
            let program = one_string_program(first).unwrap_or(first);
            let Some(kind) = Program::parse(program).on_windows() else {
                continue;
            };
            let Some(min) = minimum(kind) else {
                continue;
            };
            let set = probe.get("timeoutSeconds").and_then(|v| v.as_u64());
            let timeout = set.unwrap_or(DEFAULT_TIMEOUT);
            if timeout >= min {
                continue;
            }
            let (pointer, now) = match set {
                Some(t) => (
                    site.container_ptr(&c, &format!("/{field}/timeoutSeconds")),
                    format!("timeoutSeconds is {t}"),
                ),
                None => (
                    site.container_ptr(&c, &format!("/{field}/exec")),
                    "timeoutSeconds is not set (1 second)".to_string(),
                ),
            };
            out.push(Finding::new(
                &WIN414,
                pointer,
                format!(
                    "{} {label} runs {program:?}, which takes longer to start on Windows than \
                     its timeout allows ({now}), so the kubelet counts healthy checks as \
                     failures; set timeoutSeconds to {min} or more, or use an httpGet or \
                     tcpSocket probe",
                    c.label()
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::testutil::{assert_says, at, cfg, hits, only, set, winok};

    const C0: &str = "/spec/containers/0";

    fn probe(p: serde_json::Value) -> serde_json::Value {
        set(winok(), &format!("{C0}/livenessProbe"), p)
    }

    #[test]
    fn powershell_with_the_default_timeout() {
        let pod = probe(json!({"exec": {"command": ["powershell", "-Command", "exit 0"]}}));
        assert_eq!(
            hits(&pod, &cfg(), "WIN414"),
            [(Severity::Warning, format!("{C0}/livenessProbe/exec"))]
        );
        let f = &only(&pod, &cfg(), "WIN414")[0];
        assert_says(f, "set timeoutSeconds to 5 or more");
    }

    #[test]
    fn short_set_timeouts_and_enough() {
        let pod = probe(json!({"exec": {"command": ["pwsh.exe", "-c", "x"]}, "timeoutSeconds": 3}));
        assert_eq!(
            hits(&pod, &cfg(), "WIN414"),
            [(
                Severity::Warning,
                format!("{C0}/livenessProbe/timeoutSeconds")
            )]
        );
        let ok =
            probe(json!({"exec": {"command": ["powershell", "-c", "x"]}, "timeoutSeconds": 5}));
        assert!(hits(&ok, &cfg(), "WIN414").is_empty());
        // cmd needs less.
        let cmd = probe(json!({"exec": {"command": ["cmd", "/c", "x"]}, "timeoutSeconds": 2}));
        assert!(hits(&cmd, &cfg(), "WIN414").is_empty());
        let cmd1 = probe(json!({"exec": {"command": ["cmd", "/c", "x"]}}));
        assert_eq!(hits(&cmd1, &cfg(), "WIN414").len(), 1);
    }

    #[test]
    fn other_programs_and_probe_kinds_are_not_judged() {
        let exe = probe(json!({"exec": {"command": ["C:\\probe.exe"]}}));
        assert!(hits(&exe, &cfg(), "WIN414").is_empty());
        let http = probe(json!({"httpGet": {"path": "/", "port": 80}}));
        assert!(hits(&http, &cfg(), "WIN414").is_empty());
    }

    #[test]
    fn not_before_exec_probe_timeouts_were_enforced() {
        let pod = probe(json!({"exec": {"command": ["powershell", "-c", "x"]}}));
        assert!(hits(&pod, &at(19), "WIN414").is_empty());
        assert_eq!(hits(&pod, &at(20), "WIN414").len(), 1);
    }
}
