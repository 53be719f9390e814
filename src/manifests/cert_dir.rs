//! The certificate directory of `winlint manifests --url`: certificates already there are kept.
//! Re-running the command used to generate a new CA every time: `serve` reloaded the new
//! certificate while the API server still held the old caBundle, refused the handshake and
//! failed open. Now only `--rotate-certs` replaces them.

use std::path::Path;

use super::ManifestsError;

/// The files of a certificate directory.
pub const FILES: [&str; 3] = ["ca.crt", "tls.crt", "tls.key"];

/// The CA of the certificates in `dir` when they are there and usable for `host`; `None` when
/// none of the files exists. A partial set, a certificate its CA does not verify for `host`, or
/// a key that is not the certificate's, is an error (neither silently kept nor silently
/// replaced).
pub fn existing(dir: &Path, host: &str) -> Result<Option<String>, ManifestsError> {
    let problem = |problem: String| ManifestsError::CertDir {
        dir: dir.display().to_string(),
        problem,
    };
    let present: Vec<&str> = FILES.into_iter().filter(|f| dir.join(f).exists()).collect();
    if present.is_empty() {
        return Ok(None);
    }
    if present.len() < FILES.len() {
        let missing: Vec<&str> = FILES.into_iter().filter(|f| !present.contains(f)).collect();
        return Err(problem(format!(
            "has {} but not {}",
            present.join(", "),
            missing.join(", ")
        )));
    }
    let read =
        |f: &str| std::fs::read_to_string(dir.join(f)).map_err(|e| problem(format!("{f}: {e}")));
    let (ca, cert, key) = (read("ca.crt")?, read("tls.crt")?, read("tls.key")?);
    crate::certs::verify::verify(ca.as_bytes(), cert.as_bytes(), host)
        .map_err(|e| problem(format!("ca.crt does not verify tls.crt for {host}: {e}")))?;
    crate::certs::verify::key_pairs(cert.as_bytes(), key.as_bytes())
        .map_err(|e| problem(format!("tls.key is not the key of tls.crt: {e}")))?;
    Ok(Some(ca))
}
