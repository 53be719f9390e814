//! The flags that say which cluster to ask: `--kubeconfig PATH` and `--context NAME`, shared by
//! every command that reads the cluster (`winlint serve`, `winlint --cluster`).

use std::path::PathBuf;

use super::client::ClientSource;

/// Which cluster to ask. Neither flag: in-cluster configuration when running in a pod, else the
/// default kubeconfig (kube's inference).
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args)]
pub struct ClusterArgs {
    /// Kubeconfig file of the cluster to read facts from (outside the cluster; in a pod the
    /// ServiceAccount is used when neither this nor --context is given).
    #[arg(long, env = "KUBECONFIG", value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
    /// Context of the kubeconfig to use (default: its current context).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
}

impl ClusterArgs {
    /// Where the client's configuration comes from. `KUBECONFIG` may list several files
    /// (`a:b`, as kubectl merges them): such a list is left to kube, which merges it too.
    pub fn source(&self) -> ClientSource {
        let given = self
            .kubeconfig
            .as_ref()
            .filter(|p| !p.as_os_str().is_empty());
        let path = given
            .filter(|p| p.is_file() || std::env::split_paths(p).nth(1).is_none())
            .cloned();
        let list = given.is_some() && path.is_none();
        match (path, &self.context) {
            (None, None) if !list => ClientSource::Infer,
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
    fn sources() {
        let a = |k: Option<&str>, c: Option<&str>| ClusterArgs {
            kubeconfig: k.map(PathBuf::from),
            context: c.map(str::to_string),
        };
        assert_eq!(a(None, None).source(), ClientSource::Infer);
        assert_eq!(
            a(Some("/no/such/kubeconfig"), None).source(),
            ClientSource::Kubeconfig {
                path: Some("/no/such/kubeconfig".into()),
                context: None
            }
        );
        assert_eq!(
            a(None, Some("prod")).source(),
            ClientSource::Kubeconfig {
                path: None,
                context: Some("prod".into())
            }
        );
        // A KUBECONFIG list: kube reads and merges the files itself.
        assert_eq!(
            a(Some("/no/a:/no/b"), None).source(),
            ClientSource::Kubeconfig {
                path: None,
                context: None
            }
        );
        assert_eq!(a(Some(""), None).source(), ClientSource::Infer);
    }
}
