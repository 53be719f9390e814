//! Connecting to the API server, errors that say what to do, and paged lists.

use std::fmt;
use std::path::PathBuf;

use k8s_openapi::api::core::v1::{Namespace, Node};
use k8s_openapi::api::node::v1::RuntimeClass;
use kube::api::{Api, ListParams, ObjectList};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde::de::DeserializeOwned;

use super::facts::ClusterFacts;

/// Where the client's configuration comes from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ClientSource {
    /// `--kubeconfig PATH` (else `$KUBECONFIG` / `~/.kube/config`), optionally `--context`.
    Kubeconfig {
        path: Option<PathBuf>,
        context: Option<String>,
    },
    /// The pod's ServiceAccount (`KUBERNETES_SERVICE_HOST`, the mounted token and CA).
    InCluster,
    /// In-cluster when running in a pod, else the default kubeconfig (kube's `Config::infer`).
    #[default]
    Infer,
}

/// What went wrong talking to the API server, classified for a clear message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// No usable configuration (kubeconfig missing or invalid, not in a pod).
    Config,
    /// Connection refused, DNS, TLS, timeout: the API server cannot be reached.
    Unreachable,
    /// 401: the credentials are not accepted.
    Unauthorized,
    /// 403: RBAC does not allow the request.
    Forbidden,
    /// 404: the API (or resource) does not exist on this server.
    NotFound,
    /// 410: the resource version is too old (watches recover by listing again).
    Gone,
    /// Anything else the API server answered.
    Api(u16),
    Other,
}

/// An error with what was being done (`listing nodes`) and, where it helps, what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterError {
    pub kind: ErrorKind,
    /// What was being done: `listing nodes`, `reading the server version`, …
    pub doing: String,
    pub message: String,
}

impl ClusterError {
    pub fn new(kind: ErrorKind, doing: impl Into<String>, message: impl Into<String>) -> Self {
        ClusterError {
            kind,
            doing: doing.into(),
            message: message.into(),
        }
    }

    /// Classify a kube client error.
    pub fn from_kube(doing: impl Into<String>, e: &kube::Error) -> ClusterError {
        let doing = doing.into();
        match e {
            kube::Error::Api(s) => {
                let kind = match s.code {
                    401 => ErrorKind::Unauthorized,
                    403 => ErrorKind::Forbidden,
                    404 => ErrorKind::NotFound,
                    410 => ErrorKind::Gone,
                    c => ErrorKind::Api(c),
                };
                let msg = if s.message.is_empty() {
                    format!("{} ({})", s.reason, s.code)
                } else {
                    s.message.clone()
                };
                ClusterError::new(kind, doing, msg)
            }
            kube::Error::HyperError(_)
            | kube::Error::Service(_)
            | kube::Error::RustlsTls(_)
            | kube::Error::TlsRequired => {
                ClusterError::new(ErrorKind::Unreachable, doing, error_chain(e))
            }
            kube::Error::InferConfig(_)
            | kube::Error::InferKubeconfig(_)
            | kube::Error::Auth(_) => ClusterError::new(ErrorKind::Config, doing, error_chain(e)),
            _ => ClusterError::new(ErrorKind::Other, doing, error_chain(e)),
        }
    }

    /// A hint for the operator, if there is an obvious one.
    pub fn hint(&self) -> Option<&'static str> {
        match self.kind {
            ErrorKind::Forbidden
                if self.doing.starts_with("watching ")
                    || matches!(
                        self.doing.as_str(),
                        "listing nodes"
                            | "listing runtimeclasses"
                            | "listing namespaces"
                            | "reading the server version"
                    ) =>
            {
                Some(
                    "winlint needs get, list and watch on nodes, namespaces and \
                     runtimeclasses.node.k8s.io: the ClusterRole of the chart and of `winlint \
                     manifests` grants them",
                )
            }
            ErrorKind::Forbidden => Some("the user may not list this kind"),
            ErrorKind::Unauthorized => Some(
                "the credentials were refused: check the kubeconfig user or the ServiceAccount token",
            ),
            ErrorKind::Unreachable => Some(
                "check the server address of the kubeconfig (or the in-cluster service) and the network",
            ),
            ErrorKind::Config => Some(
                "pass --kubeconfig PATH (and --context NAME) or run in a pod with a ServiceAccount",
            ),
            _ => None,
        }
    }
}

/// `e` and its sources, `: `-joined (kube's errors nest the useful part).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let m = c.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        cur = c.source();
    }
    s
}

impl ClusterError {
    /// The error without its hint: `listing nodes: forbidden: …`, for a front end that gives
    /// its own.
    pub fn without_hint(&self) -> String {
        let what = match self.kind {
            ErrorKind::Forbidden => "forbidden: ",
            ErrorKind::Unauthorized => "unauthorized: ",
            ErrorKind::Unreachable => "API server unreachable: ",
            _ => "",
        };
        format!("{}: {what}{}", self.doing, self.message)
    }
}

impl fmt::Display for ClusterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.without_hint())?;
        if let Some(h) = self.hint() {
            write!(f, " ({h})")?;
        }
        Ok(())
    }
}

impl std::error::Error for ClusterError {}

/// Which cluster a client talks to, for reports and messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The kubeconfig context; `None` in a pod (the ServiceAccount's own cluster).
    pub context: Option<String>,
    /// The API server's URL.
    pub server: String,
    /// The context's namespace (the pod's in a pod): kubectl's namespace when none is given.
    pub namespace: String,
}

/// A client for `source`.
pub async fn client(source: &ClientSource) -> Result<kube::Client, ClusterError> {
    connect(source).await.map(|(c, _)| c)
}

/// A client for `source`, and which cluster (context, server) it talks to.
pub async fn connect(source: &ClientSource) -> Result<(kube::Client, Origin), ClusterError> {
    let doing = "loading the cluster configuration";
    let (config, context) = match source {
        ClientSource::Kubeconfig { path, context } => {
            from_kubeconfig(path.as_deref(), context.clone()).await?
        }
        ClientSource::InCluster => (
            kube::Config::incluster()
                .map_err(|e| ClusterError::new(ErrorKind::Config, doing, error_chain(&e)))?,
            None,
        ),
        // kube's `Config::infer`: the kubeconfig (`$KUBECONFIG`, else `~/.kube/config`), else
        // the pod's ServiceAccount; done here to know the context's name.
        ClientSource::Infer => match from_kubeconfig(None, None).await {
            Ok(c) => c,
            Err(kubeconfig) => match kube::Config::incluster() {
                Ok(c) => (c, None),
                Err(in_cluster) => {
                    return Err(ClusterError::new(
                        ErrorKind::Config,
                        doing,
                        format!(
                            "no usable kubeconfig ({}) and not in a pod ({})",
                            kubeconfig.message,
                            error_chain(&in_cluster)
                        ),
                    ));
                }
            },
        },
    };
    let origin = Origin {
        context,
        server: config
            .cluster_url
            .to_string()
            .trim_end_matches('/')
            .to_string(),
        namespace: config.default_namespace.clone(),
    };
    let client = kube::Client::try_from(config).map_err(|e| ClusterError::from_kube(doing, &e))?;
    Ok((client, origin))
}

/// The configuration of a kubeconfig (`path`, else `$KUBECONFIG` merged, else
/// `~/.kube/config`) for `context` (else its current context), and the context's name.
async fn from_kubeconfig(
    path: Option<&std::path::Path>,
    context: Option<String>,
) -> Result<(kube::Config, Option<String>), ClusterError> {
    let doing = "loading the cluster configuration";
    let kc = match path {
        Some(p) => Kubeconfig::read_from(p).map_err(|e| {
            let why = error_chain(&e);
            // Name the file, once (kube names it when it cannot read it).
            let name = p.display().to_string();
            let message = if why.contains(&name) {
                why
            } else {
                format!("{name}: {why}")
            };
            ClusterError::new(ErrorKind::Config, doing, message)
        })?,
        None => Kubeconfig::read()
            .map_err(|e| ClusterError::new(ErrorKind::Config, doing, error_chain(&e)))?,
    };
    let name = context.clone().or_else(|| kc.current_context.clone());
    let options = KubeConfigOptions {
        context,
        ..Default::default()
    };
    let config = kube::Config::from_custom_kubeconfig(kc, &options)
        .await
        .map_err(|e| ClusterError::new(ErrorKind::Config, doing, error_chain(&e)))?;
    Ok((config, name))
}

/// Default page size of lists (client-go's).
pub const PAGE_SIZE: u32 = 500;

/// Every object of `api`, `page_size` at a time (`limit` + `continue`), so that 50 000 Nodes or
/// 10 000 Pods never arrive as one response.
pub async fn list_paged<K>(api: &Api<K>, page_size: u32, what: &str) -> Result<Vec<K>, ClusterError>
where
    K: Clone + DeserializeOwned + fmt::Debug,
{
    let mut out = Vec::new();
    list_paged_each(api, page_size, what, |item| {
        out.push(item);
        Ok(())
    })
    .await?;
    Ok(out)
}

/// [`list_paged`], handing each object to `each` as its page arrives, so that a caller that
/// keeps less than the whole object never holds every page at once.
pub async fn list_paged_each<K>(
    api: &Api<K>,
    page_size: u32,
    what: &str,
    mut each: impl FnMut(K) -> Result<(), ClusterError>,
) -> Result<(), ClusterError>
where
    K: Clone + DeserializeOwned + fmt::Debug,
{
    let mut token: Option<String> = None;
    loop {
        let mut lp = ListParams::default().limit(page_size.max(1));
        if let Some(t) = &token {
            lp = lp.continue_token(t);
        }
        let page: ObjectList<K> = api
            .list(&lp)
            .await
            .map_err(|e| ClusterError::from_kube(format!("listing {what}"), &e))?;
        for item in page.items {
            each(item)?;
        }
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(t) => token = Some(t),
            None => return Ok(()),
        }
    }
}

/// The facts of the cluster now, read once (paged lists of Nodes, RuntimeClasses and
/// Namespaces, `/version`, and GMSACredentialSpec names where the CRD is installed and may be
/// listed): `winlint --cluster`.
pub async fn read_once(
    client: &kube::Client,
    page_size: u32,
) -> Result<ClusterFacts, ClusterError> {
    let nodes = list_paged(&Api::<Node>::all(client.clone()), page_size, "nodes").await?;
    let rcs = list_paged(
        &Api::<RuntimeClass>::all(client.clone()),
        page_size,
        "runtimeclasses",
    )
    .await?;
    let nss = list_paged(
        &Api::<Namespace>::all(client.clone()),
        page_size,
        "namespaces",
    )
    .await?;
    let version = client
        .apiserver_version()
        .await
        .map_err(|e| ClusterError::from_kube("reading the server version", &e))?;
    let gmsa = super::gmsa::read_names(client, page_size).await?;
    Ok(ClusterFacts::derive(&nodes, &rcs, &nss, Some(&version)).with_gmsa_credential_specs(gmsa))
}
