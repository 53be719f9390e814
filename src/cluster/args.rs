//! The command-line flags that say which cluster to talk to, shared by the front ends that read
//! one (`winlint --cluster`, `winlint audit`, `winlint serve`).

use std::path::PathBuf;

use clap::Args;
use clap::builder::TypedValueParser as _;

use super::client::ClientSource;

/// `--kubeconfig PATH` and `--context NAME`.
#[derive(Args, Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterArgs {
    /// Kubeconfig file (default: $KUBECONFIG, else ~/.kube/config; in a pod without either,
    /// its ServiceAccount).
    // Any value parses (an empty `$KUBECONFIG` means none, as for kubectl): the flag is also
    // on `winlint FILES`, which must not fail on its environment.
    #[arg(long, value_name = "PATH", env = "KUBECONFIG",
          value_parser = clap::builder::OsStringValueParser::new().map(PathBuf::from))]
    pub kubeconfig: Option<PathBuf>,
    /// Kubeconfig context (default: its current context).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
}

impl ClusterArgs {
    /// Where the client's configuration comes from. Neither flag: the kubeconfig, else the
    /// pod's ServiceAccount (kube's inference). A `--kubeconfig` that only repeats
    /// `$KUBECONFIG` is left to kube, which reads a `:`-separated list there and merges it; an
    /// empty one is none.
    pub fn client_source(&self) -> ClientSource {
        let path = self.kubeconfig.clone().filter(|p| {
            !p.as_os_str().is_empty()
                && std::env::var_os("KUBECONFIG").is_none_or(|env| env != p.as_os_str())
        });
        match (path, &self.context) {
            (None, None) => ClientSource::Infer,
            (path, context) => ClientSource::Kubeconfig {
                path,
                context: context.clone(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_choose_the_client_source() {
        let args = |kubeconfig: Option<&str>, context: Option<&str>| ClusterArgs {
            kubeconfig: kubeconfig.map(PathBuf::from),
            context: context.map(str::to_string),
        };
        assert_eq!(args(None, None).client_source(), ClientSource::Infer);
        // An empty `$KUBECONFIG` is none.
        assert_eq!(args(Some(""), None).client_source(), ClientSource::Infer);
        let path = "/nonexistent/winlint-test-kubeconfig";
        assert_eq!(
            args(Some(path), Some("prod")).client_source(),
            ClientSource::Kubeconfig {
                path: Some(PathBuf::from(path)),
                context: Some("prod".into())
            }
        );
        assert_eq!(
            args(None, Some("prod")).client_source(),
            ClientSource::Kubeconfig {
                path: None,
                context: Some("prod".into())
            }
        );
    }
}
