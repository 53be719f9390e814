//! Windows paths as the kubelet and Windows read them: named pipes, UNC shares, the default
//! drive, and a normal form for comparing container paths.

/// A path that opens a named pipe on the host: `\\.\pipe\…` with either separator style (any
/// case). What a HostProcess container, which runs on the host, reaches as a pipe (WIN206).
pub fn host_pipe_path(path: &str) -> bool {
    let p = path.replace('/', "\\").to_ascii_lowercase();
    p.starts_with("\\\\.\\pipe\\")
}

/// A path the kubelet mounts as a named pipe: `\\.\pipe\…`, backslashes only (any case), as its
/// `IsWindowsNamedPipe` tests (WIN311: a pipe can only be mounted at such a path).
pub fn kubelet_pipe_path(p: &str) -> bool {
    p.as_bytes()
        .get(..9)
        .is_some_and(|b| b.eq_ignore_ascii_case(br"\\.\pipe\"))
}

/// A UNC path to a share (`\\server\share`, `\\?\UNC\server\share`), not a local device path
/// (`\\.\pipe\x`, `\\.\PhysicalDrive1`) nor a long local path (`\\?\C:\x`).
pub fn is_smb_unc(p: &str) -> bool {
    if !p.starts_with(r"\\") {
        return false;
    }
    let rest = &p[2..];
    if rest.starts_with(r".\") {
        return false;
    }
    if let Some(long) = rest.strip_prefix(r"?\") {
        return long
            .as_bytes()
            .get(..4)
            .is_some_and(|b| b.eq_ignore_ascii_case(br"UNC\"));
    }
    !rest.is_empty()
}

/// What the kubelet makes of a container path on Windows (KL-PATH `MakeAbsolutePath`): paths
/// with a `:` are kept; `/x` or `\x` become `c:/x`; a relative `x` becomes `c:\x`.
pub fn make_absolute(p: &str) -> String {
    if p.contains(':') {
        p.to_string()
    } else if p.starts_with('/') || p.starts_with('\\') {
        format!("c:{p}")
    } else {
        format!("c:\\{p}")
    }
}

/// Normalised form of a container path for collision checks (WIN309): the kubelet's default
/// drive, `/` → `\`, repeated separators collapsed (a leading UNC `\\` kept), lower case, no
/// trailing separator.
pub fn normalize_path(p: &str) -> String {
    if is_smb_unc(p) || kubelet_pipe_path(p) || p.starts_with(r"\\") {
        let rest: String = p[2..].replace('/', "\\");
        return format!(r"\\{}", collapse(&rest).trim_end_matches('\\')).to_lowercase();
    }
    let abs = make_absolute(p).replace('/', "\\");
    collapse(&abs).trim_end_matches('\\').to_lowercase()
}

fn collapse(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        if ch == '\\' && out.ends_with('\\') {
            continue;
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_helpers() {
        assert_eq!(make_absolute("/data"), "c:/data");
        assert_eq!(make_absolute(r"\data"), r"c:\data");
        assert_eq!(make_absolute("data"), r"c:\data");
        assert_eq!(make_absolute(r"D:\x"), r"D:\x");
        assert_eq!(normalize_path(r"C:\Data"), normalize_path("c:/data/"));
        assert_eq!(normalize_path(r"C:\\secrets"), r"c:\secrets");
        assert_eq!(normalize_path(r"\\Server\Share\"), r"\\server\share");
        assert!(kubelet_pipe_path(r"\\.\pipe\x"));
        assert!(!kubelet_pipe_path(r"\\.\pip"));
    }

    #[test]
    fn pipe_paths_kubelet_and_host() {
        assert!(host_pipe_path("//./pipe/x") && !host_pipe_path("\\\\server\\share"));
        assert!(host_pipe_path(r"\\.\PIPE\docker_engine"));
        assert!(!kubelet_pipe_path("//./pipe/x"));
        assert!(kubelet_pipe_path(r"\\.\PIPE\docker_engine"));
    }

    #[test]
    fn unc_shares() {
        assert!(is_smb_unc(r"\\server\share"));
        assert!(is_smb_unc(r"\\?\UNC\server\share"));
        assert!(!is_smb_unc(r"\\?\C:\long"));
        assert!(!is_smb_unc(r"\\.\PhysicalDrive1"));
    }
}
