//! Well-known labels and annotations, each defined once.

/// The OS node label (and pod label) the scheduler and the kubelet match on (K≥1.14).
pub const OS_LABEL: &str = "kubernetes.io/os";
/// The OS label before Kubernetes 1.14 (removed from nodes in 1.18+ clusters).
pub const BETA_OS_LABEL: &str = "beta.kubernetes.io/os";
/// The architecture node label (`amd64`, `arm64`).
pub const ARCH_LABEL: &str = "kubernetes.io/arch";
/// The architecture label before Kubernetes 1.14.
pub const BETA_ARCH_LABEL: &str = "beta.kubernetes.io/arch";
/// Both OS labels, current first.
pub const OS_LABELS: [&str; 2] = [OS_LABEL, BETA_OS_LABEL];
/// The Windows build node label (`10.0.20348`).
pub const BUILD_LABEL: &str = "node.kubernetes.io/windows-build";
/// AKS's OS SKU node label: `Ubuntu`, `AzureLinux`, …, `Windows2019`, `Windows2022`,
/// `Windows2025`, `WindowsAnnual` (AKS agent pool `osSKU`; the AKS Windows Server 2025 guide's
/// `kubectl describe node` shows `kubernetes.azure.com/os-sku=Windows2025`). The LTSC values
/// imply the node's build ([`crate::model::placement::os_sku_build`]).
pub const AKS_OS_SKU_LABEL: &str = "kubernetes.azure.com/os-sku";
/// Node labels that only Windows nodes carry, with the value prefix that means Windows (empty:
/// any value): a selector on one keeps a pod off Linux nodes as surely as `kubernetes.io/os`.
/// The kubelet's build label, and AKS's OS SKU (`Windows2019`, `Windows2022`, …).
pub const WINDOWS_ONLY_NODE_LABELS: &[(&str, &str)] =
    &[(BUILD_LABEL, ""), (AKS_OS_SKU_LABEL, "Windows")];
/// The per-node label (node groups leave it out of their key and keep it per node).
pub const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";

/// The (pre-1.21) Hyper-V isolation annotation of a pod (WIN402, mutation M5).
pub const HYPERV_ANNOTATION: &str = "experimental.windows.kubernetes.io/isolation-type";

/// The namespace label with a namespace's Pod Security `enforce` level.
pub const PSA_ENFORCE_LABEL: &str = "pod-security.kubernetes.io/enforce";
/// The namespace label pinning the version of the `enforce` level's profile.
pub const PSA_ENFORCE_VERSION_LABEL: &str = "pod-security.kubernetes.io/enforce-version";

/// Annotation that exempts an object from rules (IDs or names, comma-separated, or `all`).
pub const IGNORE_ANNOTATION: &str = "winlint.io/ignore";
/// Why the object is exempted (reported with the suppressed findings).
pub const IGNORE_REASON_ANNOTATION: &str = "winlint.io/ignore-reason";
/// Namespace label that exempts a namespace from the webhook (default of
/// `webhook.exemptNamespaceLabel`).
pub const EXEMPT_NAMESPACE_LABEL: &str = "winlint.io/ignore";
/// Namespace label that overrides `webhook.enforcement` for the namespace's objects: `warn`
/// (admit, and return what would be denied as warnings) or `deny`.
pub const ENFORCEMENT_NAMESPACE_LABEL: &str = "winlint.io/enforcement";
/// The audit annotation of the webhook's mutation (M7): what it changed.
pub const MUTATED_ANNOTATION: &str = "winlint.io/mutated";
/// Annotation of a pull secret in winlint's namespace (`registry.pullSecrets`): the namespaces
/// whose pods its credentials serve, comma-separated (exact names, a prefix ending in `*`, `*`
/// for every namespace).
pub const PULL_SECRET_NAMESPACES_ANNOTATION: &str = "winlint.io/namespaces";
/// Namespace label by which a namespace declares its pods Windows by default; pods probably
/// Windows are then mutated (the webhook learns it from the path `/mutate/windows-namespace`).
pub const DEFAULT_OS_LABEL: &str = "winlint.io/default-os";
