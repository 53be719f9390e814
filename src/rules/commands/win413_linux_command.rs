//! WIN413 `linux-command`.

use crate::model::Eval;
use crate::model::image::ImageInfo;
use crate::model::image_contents::{self, Contents, Origin};
use crate::model::meta::{Area, Mutation, Reads, RuleOs};
use crate::model::pod::is_host_process;
use crate::model::workload::PodSite;
use crate::model::{Finding, RuleMeta, Severity};
use crate::rules::Rule;
use crate::rules::commands::common::{
    Exec, OnWindows, Program, execs, image_of, one_string_program, severity,
};

/// WIN413 in the registry.
pub const RULE: Rule = Rule {
    meta: &WIN413,
    check: linux_command,
};

pub static WIN413: RuleMeta = RuleMeta {
    id: "WIN413",
    name: "linux-command",
    severity: Severity::Error,
    summary: "a command, exec probe or exec hook of a Windows pod starts a program Windows cannot find",
    docs: r#"## What it does
Finds, in Windows pods, the `command` of a container, the `exec` of its liveness, readiness and
startup probes and of its `postStart`/`preStop` hooks, whose program Windows cannot start:
* a Linux shell or utility (`/bin/sh`, `sh`, `bash`, `sleep`, `cat`, …);
* a shell script (`/app/start.sh`);
* a `cmd.exe` built-in used as a program (`dir`, `echo`, `type`, …);
* a whole command line written as one string (`["powershell -Command Get-Date"]`,
  `["ping -t localhost > NULL"]`), whatever the program;
* `powershell` in a Nano Server image (Windows PowerShell is not in Nano Server), `pwsh` in a
  Windows base image (PowerShell 7 is not in Server Core, Nano Server or Server);
* a program under `/bin`, `/sbin` or `/usr` (the Linux file system layout; a warning, since an
  image could put an `.exe` there).

Names Windows also ships (`cmd`, `powershell`, `ping`, `curl`, `tar`, `timeout`, `hostname`,
`whoami`, …) and any name written with `.exe` are not flagged.

Whether a Linux program or a cmd.exe built-in is missing depends on the image: winlint reports it
as certain only where it knows the image lacks it (its table of known images:
Microsoft's base images and the images built on them, the
official images' `nanoserver` and `windowsservercore` tags; or the user's `images:` in
`winlint.yaml`). Images known to bring Linux tools (the Kubernetes e2e test images, built on
busybox; a declared `tools: [linux]`, as for Git for Windows or MSYS based images) are silent. In
an image winlint knows nothing of, the finding is an **info** that names the assumption. A whole
command line in one element is reported for every program and every image.

## Why is this bad?
containerd on Windows joins the argv into one command line, escaping each element, and
`CreateProcess` looks the first element up as a program: a Linux program, a built-in of cmd.exe
or a quoted whole command line is not found, and the container fails with `CreateProcess: The
system cannot find the file specified`. A container whose `command` or `postStart` hook cannot
start never runs (error, where the image cannot hold the program); a failing probe restarts the
container or keeps it unready, a failing `preStop` hook is skipped (warnings).

## Example
```yaml
spec:
  os: {name: windows}
  containers:
  - name: app
    image: mcr.microsoft.com/windows/servercore:ltsc2022
    command: ["/bin/sh", "-c", "sleep 3600"]
    livenessProbe:
      exec:
        command: ["powershell -Command Test-Path C:\\ready"]
```

## Fix
Run the Windows equivalent, one argv element per token: `["cmd", "/c", "ping -n 3600 127.0.0.1 > nul"]`,
`["powershell", "-Command", "Test-Path C:\\ready"]`; `pwsh` only in an image that has PowerShell 7
(`mcr.microsoft.com/powershell:lts-nanoserver-ltsc2022`).

## Severity
`error` where the program is certainly missing (a Linux shell or tool as a container's command in
an image whose contents winlint knows); `warning` where it fails less visibly or winlint is less
sure (an exec probe or preStop hook, an image judged by its name); `info` where nothing is known
of the image's contents and the finding only names the assumption (declare the image under
`images:` in `winlint.yaml`).
"#,
    fix: None,
    source: "containerd CRI (Windows argv escaping), Azure/AKS#1836, Azure/AKS#3107, microsoft/Windows-Containers#252",
    applies: "all",
    os: RuleOs::Windows,
    default_on: true,
    reads: Reads::of(&[Area::Containers, Area::PodSecurityContext]),
    mutation: Mutation::DEFAULT,
};

/// Why a program cannot start, and how sure winlint is.
struct Problem {
    why: String,
    fix: String,
    sure: Sure,
}

/// How winlint knows the program is missing.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sure {
    /// Whatever the image contains (a quoted command line, a script, the Linux layout in a
    /// known image, a program the image is known to lack).
    Certain,
    /// The image could hold it, but likely does not (a warning).
    Likely,
    /// winlint does not know what the image contains: an info naming the assumption.
    Assumed,
}

pub(crate) fn linux_command(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    for exec in execs(site) {
        let Some(first) = exec.program() else {
            continue;
        };
        // A HostProcess container runs on the host, with the host's PATH: its image's content
        // does not decide which programs exist (the nanoserver init container that runs the
        // host's powershell is fine).
        let host_process = is_host_process(site, &exec.container);
        let image = (!host_process)
            .then(|| image_of(eval, &exec.container))
            .flatten();
        let contents = image
            .and_then(|i| i.reference.as_ref())
            .and_then(|r| image_contents::lookup(&eval.target.images, r));
        let Some(p) = problem(&exec, first, image, contents, host_process) else {
            continue;
        };
        let c = &exec.container;
        let message = format!(
            "{} {} runs {first:?}: {}; {}",
            c.label(),
            exec.slot.label(),
            p.why,
            p.fix
        );
        let sev = match p.sure {
            Sure::Certain => severity(exec.slot, true),
            Sure::Likely => severity(exec.slot, false),
            Sure::Assumed => Severity::Info,
        };
        out.push(
            Finding::new(
                &WIN413,
                site.container_ptr(c, &format!("{}/0", exec.rel)),
                message,
            )
            .severity(sev),
        );
    }
    out
}

/// cmd.exe built-ins that busybox also brings as applets (`C:\bin\echo.exe` in its images).
const BUSYBOX_BUILTINS: &[&str] = &["echo", "mkdir", "rmdir"];

fn problem(
    exec: &Exec,
    first: &str,
    image: Option<&ImageInfo>,
    contents: Option<Contents>,
    host_process: bool,
) -> Option<Problem> {
    if exec.argv.len() == 1
        && let Some(program) = one_string_program(first)
    {
        let split: Vec<&str> = first.split_whitespace().collect();
        // Redirections and pipes need a shell: one element per argument is not enough.
        let fix = if first.contains(['>', '<', '|', '&']) {
            format!(
                "run it through a shell, one element per argument: [\"cmd\", \"/c\", {first:?}]"
            )
        } else {
            format!("write one element per argument: {split:?}")
        };
        return Some(Problem {
            why: format!(
                "a whole command line in one string, which Windows looks up as one program name \
                 and cannot find (only {program:?} is the program)"
            ),
            fix,
            sure: Sure::Certain,
        });
    }
    let p = Program::parse(first);
    if p.name.ends_with(".sh") {
        return Some(Problem {
            why: "a shell script, which Windows cannot execute".into(),
            fix: "run a PowerShell script (powershell -File x.ps1) or a .cmd file instead".into(),
            sure: Sure::Certain,
        });
    }
    // What the image holds: known (winlint.yaml `images:`, winlint's table), or assumed.
    let known = contents.filter(Contents::known_programs);
    let has = |name: &str, linux_tool: bool| known.map(|c| c.has(name, linux_tool));
    let image_name = image
        .and_then(|i| i.reference.as_ref())
        .map(|r| r.canonical())
        .unwrap_or_default();
    let missing = |name: &str, linux_tool: bool, unknown: Sure| match has(name, linux_tool) {
        // A HostProcess container runs the host's programs: Windows Server has none of these.
        _ if host_process => Some((Sure::Certain, String::new())),
        Some(true) => None,
        // Said where the user declared it; winlint's own table goes without saying.
        Some(false) => Some((
            Sure::Certain,
            known
                .filter(|c| c.origin == Origin::Config)
                .map(|c| format!(", nor does image {image_name} bring it ({})", c.why()))
                .unwrap_or_default(),
        )),
        None => Some((
            unknown,
            format!(
                " (assuming image {image_name} brings no such program: winlint does not know \
                 its contents; declare them in winlint.yaml images: tools)"
            ),
        )),
    };
    match p.on_windows() {
        Some(OnWindows::LinuxOnly) => {
            let (sure, assumed) = missing(&p.name, true, Sure::Assumed)?;
            Some(Problem {
                why: format!("a Linux program that Windows does not have{assumed}"),
                fix: "run the Windows equivalent through cmd /c or powershell -Command".into(),
                sure,
            })
        }
        Some(OnWindows::CmdBuiltin) => {
            let (sure, assumed) =
                missing(&p.name, BUSYBOX_BUILTINS.contains(&p.name.as_str()), Sure::Assumed)?;
            Some(Problem {
                why: format!("a built-in command of cmd.exe, not a program{assumed}"),
                fix: format!("run it through cmd: [\"cmd\", \"/c\", \"{}\", …]", p.name),
                sure,
            })
        }
        Some(OnWindows::WindowsPowerShell) if has("powershell", false) == Some(false) => {
            Some(Problem {
                why: if image.is_some_and(nano_server) {
                    "Windows PowerShell, which Nano Server images do not have".into()
                } else {
                    format!(
                        "Windows PowerShell, which image {image_name} does not have ({})",
                        known.map(|c| c.why()).unwrap_or_default()
                    )
                },
                fix: "use pwsh with a PowerShell image (mcr.microsoft.com/powershell:lts-nanoserver-ltsc2022), cmd /c, or a Server Core image".into(),
                sure: Sure::Certain,
            })
        }
        Some(OnWindows::WindowsPowerShell) if known.is_none() && image.is_some_and(nano_server) => {
            Some(Problem {
                why: "Windows PowerShell, which Nano Server images do not have".into(),
                fix: "use pwsh with a PowerShell image (mcr.microsoft.com/powershell:lts-nanoserver-ltsc2022), cmd /c, or a Server Core image".into(),
                sure: Sure::Certain,
            })
        }
        Some(OnWindows::Pwsh) if !host_process && has("pwsh", false) == Some(false) => {
            Some(Problem {
                why: if image.is_some_and(|i| i.ms_base) {
                    "PowerShell 7, which the Windows base images do not have".into()
                } else {
                    format!(
                        "PowerShell 7, which image {image_name} does not have ({})",
                        known.map(|c| c.why()).unwrap_or_default()
                    )
                },
                fix: "use powershell (Windows PowerShell) on Server Core, or an image with PowerShell 7 (mcr.microsoft.com/powershell)".into(),
                sure: Sure::Certain,
            })
        }
        // The host's PATH: Windows Server ships Windows PowerShell, not PowerShell 7, whatever
        // the image holds (MicrosoftDocs/azure-docs#101159: `pwsh.exe` in a HostProcess
        // container of the powershell:lts-nanoserver image, "failed to find executable").
        Some(OnWindows::Pwsh) if host_process && !p.is_path => Some(Problem {
            why: "PowerShell 7, which Windows Server hosts do not have unless installed, and a \
                  HostProcess container runs the host's programs, not its image's"
                .into(),
            fix: "use powershell.exe, or the image's copy by its path under \
                  %CONTAINER_SANDBOX_MOUNT_POINT%"
                .into(),
            sure: Sure::Likely,
        }),
        Some(_) => None,
        None if linux_directory(first) => {
            // Not a Linux utility: an image bringing them has no such file either, so only
            // an image that names it is silent.
            let (sure, assumed) = missing(&p.name, false, Sure::Assumed)?;
            Some(Problem {
                why: format!(
                    "a path of the Linux file system layout, which Windows images rarely have \
                     (Windows resolves it on drive C:){assumed}"
                ),
                fix: format!(
                    "use the program's path in the Windows image (for example C:\\{}.exe where \
                     Windows images keep it at the root)",
                    p.name
                ),
                sure: if sure == Sure::Certain { Sure::Likely } else { sure },
            })
        }
        None => None,
    }
}

/// A Nano Server image, by its reference: the repository or tag says so (the Microsoft base
/// image, and the tags of images built on it: `…-nanoserver-ltsc2022`).
fn nano_server(image: &ImageInfo) -> bool {
    image.reference.as_ref().is_some_and(|r| {
        r.repository.to_ascii_lowercase().contains("nanoserver")
            || r.tag
                .as_deref()
                .is_some_and(|t| t.to_ascii_lowercase().contains("nanoserver"))
    })
}

/// `/bin/x`, `/sbin/x`, `/usr/…`: where Linux images keep their programs.
fn linux_directory(path: &str) -> bool {
    ["/bin/", "/sbin/", "/usr/"]
        .iter()
        .any(|d| path.starts_with(d))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::rules::testutil::{assert_says, cfg, hits, set, winok};

    const C0: &str = "/spec/containers/0";

    fn with(rel: &str, argv: serde_json::Value) -> serde_json::Value {
        set(winok(), &format!("{C0}{rel}"), argv)
    }

    fn one(pod: &serde_json::Value) -> Vec<(Severity, String)> {
        hits(pod, &cfg(), "WIN413")
    }

    #[test]
    fn linux_shell_as_command_is_an_error() {
        let pod = with("/command", json!(["/bin/sh", "-c", "sleep 3600"]));
        assert_eq!(one(&pod), [(Severity::Error, format!("{C0}/command/0"))]);
        // A bare name in a base image: its content is known.
        assert_eq!(
            one(&with("/command", json!(["sleep", "10"])))[0].0,
            Severity::Error
        );
    }

    #[test]
    fn linux_name_in_an_unknown_image_is_an_info_naming_the_assumption() {
        for argv in [json!(["bash", "-c", "x"]), json!(["/bin/sh", "-c", "x"])] {
            let pod = set(
                with("/command", argv.clone()),
                "/spec/containers/0/image",
                json!("contoso/tools:1.0-ltsc2022"),
            );
            let f = crate::rules::testutil::only(&pod, &cfg(), "WIN413");
            assert_eq!(f[0].severity, Severity::Info, "{argv}");
            assert_says(&f[0], "assuming image docker.io/contoso/tools:1.0-ltsc2022");
            assert_says(&f[0], "winlint.yaml images:");
        }
        // Written as a Windows file: what the author means.
        let pod = set(
            with("/command", json!(["bash.exe", "-c", "x"])),
            "/spec/containers/0/image",
            json!("contoso/tools:1.0-ltsc2022"),
        );
        assert!(one(&pod).is_empty());
    }

    #[test]
    fn windows_programs_are_not_flagged() {
        for argv in [
            json!(["cmd", "/c", "echo hi"]),
            json!(["powershell", "-Command", "Get-Date"]),
            json!(["ping", "-t", "localhost"]),
            json!(["curl", "http://localhost"]),
            json!(["timeout", "/t", "10"]),
            json!(["C:\\app\\app.exe", "--serve"]),
            json!([
                "/csi-node-driver-registrar.exe",
                "--mode=kubelet-registration-probe"
            ]),
            json!(["C:\\Program Files\\app\\app.exe"]),
        ] {
            assert!(one(&with("/command", argv.clone())).is_empty(), "{argv}");
        }
    }

    #[test]
    fn probes_and_hooks() {
        let pod = with(
            "/livenessProbe",
            json!({"exec": {"command": ["cat", "/tmp/healthy"]}}),
        );
        assert_eq!(
            one(&pod),
            [(
                Severity::Warning,
                format!("{C0}/livenessProbe/exec/command/0")
            )]
        );
        let pod = with(
            "/lifecycle",
            json!({"postStart": {"exec": {"command": ["/bin/bash", "-c", "x"]}}}),
        );
        assert_eq!(one(&pod)[0].0, Severity::Error);
        let pod = with(
            "/lifecycle",
            json!({"preStop": {"exec": {"command": ["/bin/aws-ebs-csi-driver", "pre-stop-hook"]}}}),
        );
        assert_eq!(
            one(&pod),
            [(
                Severity::Warning,
                format!("{C0}/lifecycle/preStop/exec/command/0")
            )]
        );
    }

    #[test]
    fn one_string_command_line() {
        let pod = with(
            "/readinessProbe",
            json!({"exec": {"command": ["powershell -command Get-Date"]}}),
        );
        let f = crate::rules::testutil::only(&pod, &cfg(), "WIN413");
        assert_eq!(f.len(), 1);
        assert_says(&f[0], r#"["powershell", "-command", "Get-Date"]"#);
        assert_eq!(
            one(&with("/command", json!(["cmd /c dir"])))[0].0,
            Severity::Error
        );
    }

    #[test]
    fn powershell_in_nano_server() {
        let nano = |argv| {
            set(
                with("/command", argv),
                "/spec/containers/0/image",
                json!("mcr.microsoft.com/windows/nanoserver:ltsc2022"),
            )
        };
        assert_eq!(
            one(&nano(json!(["powershell", "-c", "x"])))[0].0,
            Severity::Error
        );
        assert_eq!(one(&nano(json!(["pwsh", "-c", "x"])))[0].0, Severity::Error);
        assert!(one(&nano(json!(["cmd", "/c", "x"]))).is_empty());
        // The PowerShell image has pwsh, and Server Core has powershell.
        let ps = set(
            with("/command", json!(["pwsh", "-c", "x"])),
            "/spec/containers/0/image",
            json!("mcr.microsoft.com/powershell:lts-nanoserver-ltsc2022"),
        );
        assert!(one(&ps).is_empty());
        assert!(one(&with("/command", json!(["powershell", "-c", "x"]))).is_empty());
    }

    #[test]
    fn host_process_containers_run_the_hosts_programs() {
        let hp = set(
            crate::rules::hostprocess::common::tests::hpc(),
            "/spec/containers/0/image",
            json!("mcr.microsoft.com/windows/nanoserver:1809"),
        );
        let pod = set(
            hp.clone(),
            "/spec/containers/0/command",
            json!(["powershell", "-c", "x"]),
        );
        assert!(one(&pod).is_empty());
        // PowerShell 7 is the image's, not on the host's PATH.
        let pod = set(
            hp.clone(),
            "/spec/containers/0/command",
            json!(["pwsh.exe", "-c", "x"]),
        );
        assert_eq!(one(&pod)[0].0, Severity::Warning);
        // A Linux path is still none of the host's.
        let pod = set(
            hp,
            "/spec/containers/0/command",
            json!(["/bin/sh", "-c", "x"]),
        );
        assert_eq!(one(&pod)[0].0, Severity::Error);
    }

    #[test]
    fn shell_scripts_and_builtins() {
        assert_eq!(
            one(&with("/command", json!(["/app/start.sh"])))[0].0,
            Severity::Error
        );
        let f = crate::rules::testutil::only(&with("/command", json!(["dir"])), &cfg(), "WIN413");
        assert_says(&f[0], r#"["cmd", "/c", "dir", …]"#);
    }

    #[test]
    fn images_that_bring_linux_tools_are_silent() {
        for image in [
            "registry.k8s.io/e2e-test-images/busybox:1.36.1-1",
            "registry.k8s.io/e2e-test-images/agnhost:2.52",
            "k8s.gcr.io/e2e-test-images/busybox:1.29-2",
            "e2eteam/busybox:1.29",
        ] {
            for argv in [
                json!(["sleep", "3600"]),
                json!(["/bin/sh", "-c", "x"]),
                json!(["sh", "-c", "x"]),
                json!(["echo", "hi"]),
            ] {
                let pod = set(
                    with("/command", argv.clone()),
                    "/spec/containers/0/image",
                    json!(image),
                );
                assert!(one(&pod).is_empty(), "{image} {argv}");
            }
            // A quoted whole command line is never found, whatever the image holds.
            let pod = set(
                with("/command", json!(["sleep 3600"])),
                "/spec/containers/0/image",
                json!(image),
            );
            assert_eq!(one(&pod)[0].0, Severity::Error, "{image}");
        }
    }

    #[test]
    fn declared_images_say_what_they_bring() {
        let pod = set(
            with("/command", json!(["bash", "-c", "x"])),
            "/spec/containers/0/image",
            json!("contoso.azurecr.io/build/gitbash:1.0-ltsc2022"),
        );
        let mut c = cfg();
        c.target.images = crate::model::image_contents::parse_entries(
            "- match: contoso.azurecr.io/build/gitbash\n  shells: [cmd, powershell, bash, sh]\n  tools: [linux]\n- match: contoso.azurecr.io/*\n  shells: [cmd]\n",
        )
        .expect("entries")
        .into();
        assert!(hits(&pod, &c, "WIN413").is_empty());
        let other = set(
            pod,
            "/spec/containers/0/image",
            json!("contoso.azurecr.io/web:1.0"),
        );
        let f = crate::rules::testutil::only(&other, &c, "WIN413");
        assert_eq!(f[0].severity, Severity::Error);
        assert_says(&f[0], "winlint.yaml images: \"contoso.azurecr.io/*\"");
    }

    #[test]
    fn a_whole_command_line_of_any_program() {
        // kubernetes-sigs/windows-testing and many Windows samples: the kubelet passes the
        // element as one program name.
        let f = crate::rules::testutil::only(
            &with("/command", json!(["ping -t localhost > NULL"])),
            &cfg(),
            "WIN413",
        );
        assert_eq!(f[0].severity, Severity::Error);
        assert_says(&f[0], r#"["cmd", "/c", "ping -t localhost > NULL"]"#);
        let f = crate::rules::testutil::only(
            &with("/command", json!(["myapp --port 80"])),
            &cfg(),
            "WIN413",
        );
        assert_says(&f[0], r#"["myapp", "--port", "80"]"#);
    }

    #[test]
    fn args_alone_go_to_the_entrypoint() {
        assert!(one(&with("/args", json!(["sh", "-c", "x"]))).is_empty());
    }

    #[test]
    fn linux_pods_are_not_judged() {
        let pod = serde_json::json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"l"},"spec":{
            "containers":[{"name":"a","image":"busybox:1.36","command":["sh","-c","sleep 1"]}]}});
        assert!(one(&pod).is_empty());
    }
}
