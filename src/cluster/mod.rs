//! Cluster facts (issue 8 §2, §4, §6): what the cluster really runs, read from the API server
//! with the `kube` crate, so that the rules can ask "can some Windows node this pod can select
//! run it?" instead of trusting a configured guess.
//!
//! The engine stays pure: this module does the I/O and hands out immutable snapshots.
//!
//! ```text
//!  API server ──watch (paged lists, backoff)──> stores ──debounced rebuild──> Arc<ClusterFacts>
//!                                                           (off the request path, swapped whole)
//!  request path: ClusterWatch::facts() = an Arc clone; never an API call
//! ```
//!
//! # Pieces
//!
//! * [`facts`], pure: [`ClusterFacts`] from Nodes, RuntimeClasses, Namespaces and `/version`
//!   ([`ClusterFacts::derive`]). Nodes are grouped into [`NodeGroup`]s keyed by OS, Windows build
//!   (`node.kubernetes.io/windows-build`, else `status.nodeInfo.kernelVersion`, else `osImage`),
//!   scheduling taints (not the [`CONDITION_TAINTS`] the node lifecycle controller manages, but
//!   e.g. GKE's `node.kubernetes.io/os=windows:NoSchedule`), labels without
//!   `kubernetes.io/hostname` and `containerRuntimeVersion`; each group keeps its node names and
//!   hostnames, so a hostname selector matches exactly. A Windows node of unknown build (garbage
//!   label, no nodeInfo) is grouped with build `None` and listed in
//!   [`ClusterFacts::unknown_builds`]. RuntimeClasses keep handler, scheduling and isolation
//!   ([`RuntimeClassFacts::is_hyperv`]: containerd's `runhcs-wcow-hypervisor[-BUILD]`);
//!   namespaces their labels. [`ClusterFacts::changes_from`] describes what changed.
//! * [`schedule`], pure: [`fit`] tells whether a pod spec (a `serde_json::Value`, e.g. a
//!   template's spec after the pod mutations) can land on a group: `nodeSelector`, required
//!   node affinity and NoSchedule/NoExecute taints with upstream semantics, RuntimeClass
//!   scheduling merged. [`ClusterFacts::placements`] runs it over every group.
//! * [`live`]: [`ClusterWatch`] for `winlint serve`. kube-runtime watchers on the three
//!   resources (paged initial lists, 500 a page; `default_backoff` on errors, 403s and
//!   `410 Gone`; a relist replaces a store only once complete), `/version` read at start and
//!   every [`WatchOptions::version_refresh`]. Node heartbeats that change no fact are ignored;
//!   real changes are gathered for [`WatchOptions::debounce`] and the snapshot rebuilt and
//!   swapped. Facts changes are logged (`tracing`); errors are logged (first, new kind, every
//!   tenth) and the last good snapshot is kept. [`ClusterWatch::wait_synced`] is the bounded
//!   readiness wait, [`ClusterWatch::status`] the health, [`ClusterWatch::metrics`] the values to
//!   export (Windows nodes per build, snapshot age, staleness, sync state, error count).
//! * [`client`]: [`client::client`] from `--kubeconfig PATH` (+ `--context`: [`ClusterArgs`]),
//!   in-cluster config, or kube's inference ([`connect`] also says which context and server);
//!   [`ClusterError`] classifies failures (unreachable, 401, 403 with the RBAC
//!   it needs, …); [`read_once`] is the one-shot paged read of `winlint --cluster`;
//!   [`list_paged`] the pager.
//! * [`audit`]: [`list_workloads`] lists Pods and Deployments, ReplicaSets, StatefulSets,
//!   DaemonSets, Jobs, CronJobs and ReplicationControllers (paged, as JSON values) and keeps
//!   the top owners, each Pod counted under its topmost controller ([`top_owners`]), with
//!   the Pods the scheduler has not placed ([`pending`]).
//!   [`audit::stream_workloads`] is the same listing in bounded memory (each top owner judged
//!   as its page arrives), for `winlint serve`'s audit loop.
//! * [`judge`]: one audited object judged (lint, judged as the pods winlint's webhook gives
//!   it, Pending Pods joined), for `winlint audit` and serve's audit loop alike.
//! * [`policy_results`]: the audit as wgpolicyk8s.io PolicyReports (built as objects are
//!   judged, split in parts); [`policy_report`]: them server-side applied, the stale ones
//!   deleted (`winlint audit --policy-report=apply`, serve's audit loop).
//!
//! # RBAC
//!
//! The live facts need `get`, `list`, `watch` on `nodes`, `namespaces` (core) and
//! `runtimeclasses` (`node.k8s.io`); `winlint audit` needs `list` on pods,
//! replicationcontrollers, deployments, replicasets, statefulsets, daemonsets, jobs, cronjobs;
//! `--policy-report=apply` also `get`, `list`, `create`, `patch`, `delete` on
//! `policyreports.wgpolicyk8s.io` (and `clusterpolicyreports` with `-A`).
//!
//! # Users
//!
//! `winlint serve` (src/server.rs) runs a [`ClusterWatch`] and turns each snapshot into its
//! evaluation state with [`effective`]; the CLI reads the facts once (`winlint --cluster`,
//! `winlint audit`: src/cli/cluster.rs). All three connect with [`connect`] from the flags of
//! [`ClusterArgs`]. The engine never calls this module.

pub mod args;
pub mod audit;
pub mod client;
pub mod effective;
pub mod facts;
pub mod gmsa;
pub mod judge;
pub mod live;
pub mod pending;
pub mod policy_report;
pub mod policy_results;
pub mod webhooks;

pub use crate::model::schedule::{self, Fit, Toleration, fit};
pub use args::ClusterArgs;
pub use audit::{AuditObject, Inventory, Scope, list_workloads, top_owners};
pub use client::{
    ClientSource, ClusterError, ErrorKind, Origin, PAGE_SIZE, client, connect, list_paged,
    read_once,
};
pub use effective::Effective;
pub use facts::{
    CONDITION_TAINTS, ClusterFacts, FactChange, NodeGroup, NodeIndex, NodeObservation, NodeOs,
    NodeShape, RuntimeClassFacts, ServerVersion, Synced,
};
pub use live::{ClusterWatch, FactsMetrics, ResourceStatus, WatchOptions, WatchStatus};
