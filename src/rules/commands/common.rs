//! WIN413, WIN414: what the containers of a Windows pod run: `command`, exec probes and exec
//! lifecycle hooks (issue 19).
//!
//! How Windows starts them decides what can be judged from the spec. containerd's CRI plugin
//! hands the argv to hcsshim, which joins it into one command line, each element escaped with
//! `windows.EscapeArg` (containerd `internal/cri/server/container_execsync.go` sets
//! `pspec.Args = opts.cmd` and clears `CommandLine` for execs; `WithProcessCommandLineOrArgsForWindows`
//! escapes a `command` given by the pod, `firstArgFromImg == false`). `CreateProcess` then looks
//! the first element up as a program (`.exe` appended, the PATH searched): a Linux program, a
//! cmd.exe built-in or one string holding a whole command line ("powershell -Command x", quoted
//! as a single program name) is not found: `CreateProcess: The system cannot find the file
//! specified` (Azure/AKS#1836 shows the quoted `"CommandLine":"\"powershell -command Get-Date\""`).
//!
//! What several rules of the family share.

use serde_json::Value;

use crate::model::Eval;
use crate::model::Severity;
use crate::model::image::ImageInfo;
use crate::model::workload::{ContainerRef, PodSite};

/// Where an argv sits in a container, and what its failure does to the pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// `command`: the container's own process; if it cannot start, the container never runs.
    Command,
    /// `lifecycle.postStart.exec`: the kubelet kills a container whose hook fails.
    PostStart,
    /// `lifecycle.preStop.exec`: a failure is logged, the container is stopped anyway.
    PreStop,
    /// `livenessProbe`, `readinessProbe`, `startupProbe` `.exec`.
    Probe(&'static str),
}

impl Slot {
    /// What the slot is called in messages.
    pub fn label(self) -> &'static str {
        match self {
            Slot::Command => "command",
            Slot::PostStart => "postStart hook",
            Slot::PreStop => "preStop hook",
            Slot::Probe(p) => p,
        }
    }

    /// Whether a program that cannot be started here keeps the container from running at all
    /// (an error), rather than failing a probe or a stop hook of a running container.
    pub fn fatal(self) -> bool {
        matches!(self, Slot::Command | Slot::PostStart)
    }
}

/// The probes with an exec action: field name and label.
pub const PROBES: &[(&str, &str)] = &[
    ("livenessProbe", "liveness probe"),
    ("readinessProbe", "readiness probe"),
    ("startupProbe", "startup probe"),
];

/// One argv of one container.
pub struct Exec<'a> {
    pub container: ContainerRef<'a>,
    pub slot: Slot,
    /// Pointer relative to the container: `/command`, `/livenessProbe/exec/command`.
    pub rel: &'static str,
    pub argv: &'a [Value],
}

impl Exec<'_> {
    /// The first element, if it is a non-empty string.
    pub fn program(&self) -> Option<&str> {
        self.argv
            .first()
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    }
}

const SLOTS: &[(Slot, &str)] = &[
    (Slot::Command, "/command"),
    (Slot::PostStart, "/lifecycle/postStart/exec/command"),
    (Slot::PreStop, "/lifecycle/preStop/exec/command"),
    (Slot::Probe("liveness probe"), "/livenessProbe/exec/command"),
    (
        Slot::Probe("readiness probe"),
        "/readinessProbe/exec/command",
    ),
    (Slot::Probe("startup probe"), "/startupProbe/exec/command"),
];

/// Every argv of the pod that Windows starts as a process. `args` alone are not here: without
/// `command` they go to the image's entrypoint, which the spec does not show.
pub fn execs<'a>(site: &PodSite<'a>) -> Vec<Exec<'a>> {
    let mut out = Vec::new();
    for c in site.containers() {
        for &(slot, rel) in SLOTS {
            if let Some(argv) =
                crate::model::workload::lookup(c.value, rel).and_then(Value::as_array)
            {
                out.push(Exec {
                    container: c,
                    slot,
                    rel,
                    argv,
                });
            }
        }
    }
    out
}

/// What a program name is on Windows. The table below is the policy: a name is judged only
/// when it is listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnWindows {
    /// A Linux utility Windows does not ship (no `.exe` of that name in any Microsoft image).
    LinuxOnly,
    /// A cmd.exe built-in: not a file, so not a program CreateProcess can start.
    CmdBuiltin,
    /// `cmd.exe`: in every Windows image; starts in milliseconds.
    Cmd,
    /// Windows PowerShell 5.1 (`powershell.exe`): in Server Core, Server and Windows images,
    /// never in Nano Server.
    WindowsPowerShell,
    /// PowerShell 7 (`pwsh.exe`): only in images that install it (`mcr.microsoft.com/powershell`,
    /// the .NET SDK images), not in the Windows base images.
    Pwsh,
}

/// Program names (lower case, without `.exe`) and what they are on Windows. Names Windows also
/// ships as programs are deliberately absent: `ping`, `curl` (curl.exe since 1803), `tar`,
/// `timeout`, `hostname`, `whoami`, `find`, `sort`, `more`, `where`, `findstr`, `netstat`, …
const PROGRAMS: &[(&str, OnWindows)] = &[
    ("sh", OnWindows::LinuxOnly),
    ("bash", OnWindows::LinuxOnly),
    ("ash", OnWindows::LinuxOnly),
    ("dash", OnWindows::LinuxOnly),
    ("zsh", OnWindows::LinuxOnly),
    ("ksh", OnWindows::LinuxOnly),
    ("busybox", OnWindows::LinuxOnly),
    ("sleep", OnWindows::LinuxOnly),
    ("cat", OnWindows::LinuxOnly),
    ("ls", OnWindows::LinuxOnly),
    ("grep", OnWindows::LinuxOnly),
    ("test", OnWindows::LinuxOnly),
    ("[", OnWindows::LinuxOnly),
    ("true", OnWindows::LinuxOnly),
    ("false", OnWindows::LinuxOnly),
    ("env", OnWindows::LinuxOnly),
    ("wget", OnWindows::LinuxOnly),
    ("nc", OnWindows::LinuxOnly),
    ("kill", OnWindows::LinuxOnly),
    ("pkill", OnWindows::LinuxOnly),
    ("pgrep", OnWindows::LinuxOnly),
    ("pidof", OnWindows::LinuxOnly),
    ("ps", OnWindows::LinuxOnly),
    ("tail", OnWindows::LinuxOnly),
    ("touch", OnWindows::LinuxOnly),
    ("rm", OnWindows::LinuxOnly),
    ("cp", OnWindows::LinuxOnly),
    ("mv", OnWindows::LinuxOnly),
    ("chmod", OnWindows::LinuxOnly),
    ("chown", OnWindows::LinuxOnly),
    ("ln", OnWindows::LinuxOnly),
    ("stat", OnWindows::LinuxOnly),
    ("tee", OnWindows::LinuxOnly),
    ("awk", OnWindows::LinuxOnly),
    ("sed", OnWindows::LinuxOnly),
    ("dir", OnWindows::CmdBuiltin),
    ("echo", OnWindows::CmdBuiltin),
    ("type", OnWindows::CmdBuiltin),
    ("set", OnWindows::CmdBuiltin),
    ("copy", OnWindows::CmdBuiltin),
    ("del", OnWindows::CmdBuiltin),
    ("mkdir", OnWindows::CmdBuiltin),
    ("md", OnWindows::CmdBuiltin),
    ("rmdir", OnWindows::CmdBuiltin),
    ("rd", OnWindows::CmdBuiltin),
    ("move", OnWindows::CmdBuiltin),
    ("ren", OnWindows::CmdBuiltin),
    ("exit", OnWindows::CmdBuiltin),
    ("cmd", OnWindows::Cmd),
    ("powershell", OnWindows::WindowsPowerShell),
    ("pwsh", OnWindows::Pwsh),
];

/// A program reference split into what the rules judge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program<'a> {
    /// The first element as written.
    pub written: &'a str,
    /// The file name: after the last `/` or `\`, lower case, `.exe` removed.
    pub name: String,
    /// Whether the element names an extension (`sh.exe`, `start.sh`): a deliberate file.
    pub has_extension: bool,
    /// Whether the element is a path (holds `/` or `\`).
    pub is_path: bool,
}

impl<'a> Program<'a> {
    pub fn parse(written: &'a str) -> Program<'a> {
        let file = written.rsplit(['/', '\\']).next().unwrap_or(written);
        let lower = file.to_ascii_lowercase();
        let has_extension = lower.contains('.') && lower != "[";
        let name = lower.strip_suffix(".exe").unwrap_or(&lower).to_string();
        Program {
            written,
            name,
            has_extension,
            is_path: written.contains(['/', '\\']),
        }
    }

    /// What the table says the program is, if it lists it. A name given with `.exe` is a
    /// Windows file the author means (busybox-w32's `sh.exe`), never a Linux program.
    pub fn on_windows(&self) -> Option<OnWindows> {
        let kind = PROGRAMS.iter().find(|(n, _)| *n == self.name)?.1;
        let windows_file = self.written.to_ascii_lowercase().ends_with(".exe")
            || self.written.contains('\\')
            || self.written.as_bytes().get(1) == Some(&b':');
        match kind {
            OnWindows::LinuxOnly | OnWindows::CmdBuiltin if windows_file || self.has_extension => {
                None
            }
            OnWindows::CmdBuiltin if self.is_path => None,
            k => Some(k),
        }
    }
}

/// The first token of a one-string command line ("ping -t localhost > NUL" → "ping"), for
/// every program: containerd escapes the element as one argument, and `CreateProcess` looks the
/// whole string up as a file name. A bare name followed by more words is a command line; a path
/// is one only when it names a file with an extension before the space (`C:\app\app.exe
/// --serve`) or holds a space after its last separator (`/bin/sh -c x`): a path with spaces
/// (`C:\Program Files\app\app.exe`) is one element, rightly.
pub fn one_string_program(s: &str) -> Option<&str> {
    let t = s.trim();
    let (first, rest) = t.split_once(char::is_whitespace)?;
    if rest.trim().is_empty() {
        return None;
    }
    let p = Program::parse(first);
    if !p.is_path {
        return Some(first);
    }
    let after = t.rsplit(['/', '\\']).next().unwrap_or(t);
    (p.has_extension || after.contains(char::is_whitespace)).then_some(first)
}

/// The image analysis of container `c`.
pub fn image_of<'e>(eval: &'e Eval, c: &ContainerRef) -> Option<&'e ImageInfo> {
    eval.images
        .iter()
        .find(|(r, _)| r.list == c.list && r.index == c.index)
        .map(|(_, i)| i)
}

/// The severity of a finding in `slot`: an error only where the container cannot run at all
/// and the verdict does not depend on what the image holds.
pub fn severity(slot: Slot, certain: bool) -> Severity {
    if slot.fatal() && certain {
        Severity::Error
    } else {
        Severity::Warning
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_judged_by_file_name() {
        assert_eq!(
            Program::parse("/bin/sh").on_windows(),
            Some(OnWindows::LinuxOnly)
        );
        assert_eq!(
            Program::parse("BASH").on_windows(),
            Some(OnWindows::LinuxOnly)
        );
        // A Windows file the author chose (busybox-w32, Git for Windows).
        assert_eq!(Program::parse("sh.exe").on_windows(), None);
        assert_eq!(Program::parse("C:\\tools\\sh").on_windows(), None);
        assert_eq!(
            Program::parse("C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe")
                .on_windows(),
            Some(OnWindows::WindowsPowerShell)
        );
        assert_eq!(Program::parse("cmd.exe").on_windows(), Some(OnWindows::Cmd));
        assert_eq!(
            Program::parse("dir").on_windows(),
            Some(OnWindows::CmdBuiltin)
        );
        // Windows programs that share a Linux name are not listed.
        for p in [
            "ping", "curl", "curl.exe", "timeout", "tar", "hostname", "whoami",
        ] {
            assert_eq!(Program::parse(p).on_windows(), None, "{p}");
        }
    }

    #[test]
    fn one_string_command_lines() {
        assert_eq!(
            one_string_program("powershell -command Get-Date"),
            Some("powershell")
        );
        assert_eq!(one_string_program("app.exe --serve"), Some("app.exe"));
        assert_eq!(one_string_program("C:\\Program Files\\app\\app.exe"), None);
        assert_eq!(one_string_program("powershell "), None);
        // Every program, not only the ones the table knows (the kubelet passes the element
        // as one program name).
        assert_eq!(one_string_program("myapp --serve"), Some("myapp"));
        assert_eq!(one_string_program("ping -t localhost > NULL"), Some("ping"));
        assert_eq!(one_string_program("/bin/sh -c date"), Some("/bin/sh"));
        assert_eq!(
            one_string_program("C:\\tools\\app.exe C:\\data"),
            Some("C:\\tools\\app.exe")
        );
        assert_eq!(one_string_program("C:\\My App\\run"), None);
    }
}
