//! AdmissionReview in → AdmissionReview out. Pure: no I/O, no clock, no globals, so the
//! webhook's decisions are unit-testable and benchable without a server.
//!
//! * `/validate` ([`Endpoint::Validate`]): CREATE and UPDATE of pods and pod-bearing workloads.
//!   Error findings deny (`allowed: false`, `status.code: 403`, a message listing rule IDs,
//!   names, fixes and a link to each rule's documentation page); warnings become
//!   `response.warnings` (one line each, rule ID first, shaped by [`warnings`] for what the API
//!   server does with them: at most 256 runes, the remedy kept whole); info findings are not
//!   reported. On UPDATE an error
//!   the old object already had is reported as a warning only, so `kubectl label` on an old
//!   pod keeps working.
//! * A workload is judged by the pods it will create (issue 8 §1, `Webhook::judge`): when
//!   its template as written has errors and the pod mutating webhook is registered
//!   (`webhook.mutate`, default true), the template is judged after the mutations that webhook
//!   will apply to its pods in that namespace (the same [`engine::mutation`], configuration and
//!   opt-outs, on a copy); only the errors that survive deny, and one warning says what the pods
//!   will get (`winlint: at pod creation the mutating webhook adds nodeSelector, tolerations,
//!   os`). Workloads themselves stay unmutated unless `mutation.workloads`.
//! * Warn mode (`webhook.enforcement: warn`, or a namespace labelled
//!   `winlint.io/enforcement=warn`; `=deny` overrides a `warn` configuration): what would be
//!   denied is admitted, and the denial comes back as warnings (`would deny: WIN007: …` after
//!   one line naming the object), recorded in [`Outcome::would_deny`]
//!   (`winlint_would_deny_total`). `/mutate` is the same in both modes: a mutation is a fix that
//!   makes a pod run and never refuses one (Kyverno's `Audit` mutates too); `webhook.mutate:
//!   false` is the switch for a rollout that must change nothing.
//! * `/mutate` ([`Endpoint::Mutate`]): CREATE of Pods (workloads only with
//!   `mutation.workloads`), never UPDATE (`spec.os` and `nodeSelector` are immutable) and never a
//!   subresource (`pods/ephemeralcontainers`). Mutation is fixing (shared/rules.md §3):
//!   [`engine::mutation`] says which pods, applies the allowed fixes through the one fixer and
//!   the mutation steps (Hyper-V, pod OS label, Linux guard) and records what changed.
//! * Cluster facts: [`Webhook::with_context`] holds the RuntimeClasses and namespace labels of
//!   the live facts (`winlint serve` rebuilds the webhook when they change). From a namespace's
//!   labels: its Pod Security level (WIN107, WIN207), `winlint.io/default-os=windows` (pods only
//!   probably Windows are mutated there too) and the exempt label (`winlint.io/ignore=true`,
//!   `webhook.exemptNamespaceLabel`: nothing is evaluated or mutated; the webhooks'
//!   namespaceSelector normally keeps such requests away). Without facts
//!   ([`Webhook::new`]) the rules that need them do not fire.
//! * Exemptions: the `winlint.io/ignore` annotation is honoured by the engine.
//! * `dryRun` requests get the same answer as real ones: winlint has no side effects
//!   (`sideEffects: None`), so honouring dryRun means nothing else happens; it is reported in
//!   [`Outcome::dry_run`] for logs.
//! * An object the engine cannot evaluate (no object, not a JSON object, a rule that panics)
//!   is answered per `webhook.onError`: allow with a warning (default) or deny.
//! * `admission.k8s.io/v1beta1` requests are answered in v1beta1.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use base64::Engine as _;
use serde::de::value::SeqAccessDeserializer;
use serde::de::{Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value, json};

use crate::config::{Config, Enforcement, OnError};
use crate::engine::{self, mutation};
use crate::model::labels::{DEFAULT_OS_LABEL, ENFORCEMENT_NAMESPACE_LABEL};
use crate::model::placement;
use crate::model::workload::{self, Lookup};
use crate::model::{Context, Finding, Operation, Severity};

pub mod scan;
pub mod warnings;

pub use warnings::MAX_WARNING_CHARS;
use warnings::truncate;

/// The warning that the rules needing node facts did not deny because the cluster shows no
/// Windows node ([`placement::UNOBSERVED_NOTE`] on their findings).
const NO_WINDOWS_NODE: &str = "winlint: no Windows node is in the cluster yet: node rules checked against the configured target, not denied";
/// Why a body with too many JSON values for its size was not evaluated.
pub const TOO_DENSE: &str = "the request has more JSON values than its size allows";
/// Why an object past its deadline was not evaluated.
pub const DEADLINE_EXCEEDED: &str = "its evaluation passed the request's deadline";
/// The most warnings returned for one object.
pub const MAX_WARNINGS: usize = 20;
/// The head of the warning that says why `mutation.linuxGuard: auto` pinned a pod to Linux.
const LINUX_GUARD_HEAD: &str = "WIN011: linuxGuard pinned it to Linux";

/// Which webhook was called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endpoint {
    Mutate,
    Validate,
}

impl Endpoint {
    /// Its path: `/mutate` or `/validate`.
    pub fn path(self) -> &'static str {
        match self {
            Endpoint::Mutate => "/mutate",
            Endpoint::Validate => "/validate",
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Endpoint::Mutate => "mutate",
            Endpoint::Validate => "validate",
        }
    }
}

/// What happened to a request, for metrics and logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Decision {
    /// Allowed without findings worth reporting (or not evaluated: DELETE, other kinds, …).
    Allowed,
    /// Allowed with warnings.
    Warned,
    /// Denied because of error findings.
    Denied,
    /// Error findings, admitted with them as warnings: the namespace or the configuration is in
    /// warn mode (`webhook.enforcement: warn`, label `winlint.io/enforcement=warn`).
    WouldDeny,
    /// Allowed with a patch.
    Patched,
    /// The object could not be evaluated; answered per `onError`.
    Error,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allowed => "allowed",
            Decision::Warned => "warned",
            Decision::Denied => "denied",
            Decision::WouldDeny => "would_deny",
            Decision::Patched => "patched",
            Decision::Error => "error",
        }
    }
}

/// The answer to one AdmissionReview plus what the server logs and counts about it. No object
/// contents here beyond kind, namespace and name.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The serialized response AdmissionReview.
    pub body: Vec<u8>,
    pub uid: String,
    pub api_version: String,
    pub operation: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    /// `name` is the object's `generateName` (a CREATE that lets the API server pick the
    /// name): the warnings show it as `iis-7d9c5-*`.
    pub generated: bool,
    pub dry_run: bool,
    pub allowed: bool,
    pub decision: Decision,
    /// Every finding reported to the engine (rule ID, severity), before filtering.
    pub findings: Vec<(&'static str, Severity)>,
    /// What the patch changed: mutation names (`nodeSelector`, `tolerations`, `os`, …).
    pub patched: Vec<String>,
    /// The rule IDs whose fixes are in the patch.
    pub patched_rules: Vec<&'static str>,
    /// Why the object could not be evaluated, if it could not.
    pub error: Option<String>,
    /// The rules of the findings exempted by `winlint.io/ignore` (`/validate`).
    pub exempted: Vec<&'static str>,
    /// In warn mode: the rule IDs whose errors would have denied it (one per finding).
    pub would_deny: Vec<&'static str>,
}

impl Outcome {
    /// The outcome of the review `uid` before anything is known of its object: allowed, no
    /// findings, no patch. One constructor, so that a field added to `Outcome` is set once
    /// (the evaluated and the unevaluated answers both start here).
    fn new(uid: String, api_version: String, decision: Decision) -> Self {
        Outcome {
            body: Vec::new(),
            uid,
            api_version,
            operation: String::new(),
            kind: String::new(),
            namespace: String::new(),
            name: String::new(),
            generated: false,
            dry_run: false,
            allowed: true,
            decision,
            findings: Vec::new(),
            patched: Vec::new(),
            patched_rules: Vec::new(),
            error: None,
            exempted: Vec::new(),
            would_deny: Vec::new(),
        }
    }
}

/// The findings `/validate` decides on ([`Webhook::judge`]).
#[derive(Default)]
struct Judged {
    findings: Vec<Finding>,
    /// What the pod mutating webhook will add to the pods (mutation names, as recorded in
    /// `winlint.io/mutated`); empty when the object is judged as written.
    added: Vec<String>,
    /// The rules of the findings `winlint.io/ignore` exempted (as written).
    exempted: Vec<&'static str>,
    /// Why `winlint.io/ignore` was not honoured (the `exemptions:` policy).
    refused: Option<String>,
    /// The mutations of the pods the user must hear of ([`mutation::Mutated::notices`]).
    notices: Vec<(&'static str, String)>,
}

/// The request cannot be answered with an AdmissionReview (HTTP 400).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRequest(pub String);

impl std::fmt::Display for BadRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadRequest {}

/// The webhook's evaluation state: the configuration, the variants of it used for mutation, and
/// the cluster facts every evaluation shares (built once per configuration and facts snapshot,
/// never per request; `winlint serve` swaps a whole new one in when the facts change).
#[derive(Debug, Clone)]
pub struct Webhook {
    pub config: Config,
    /// The pod mutation's configurations (one for `winlint.io/default-os=windows` namespaces).
    mutation: engine::judge::MutationConfigs,
    /// RuntimeClasses and namespace labels (the live facts of `winlint serve`; empty without).
    context: Arc<Context>,
}

/// What the webhook knows of a request's namespace (from the facts' namespace labels).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct NamespaceFacts {
    /// Labelled with the exempt label (`webhook.exemptNamespaceLabel`, `winlint.io/ignore`)
    /// `=true`: nothing is evaluated or mutated.
    exempt: bool,
    /// Labelled `winlint.io/default-os=windows`: Windows-probable pods are mutated too.
    windows_default: bool,
    /// Labelled `winlint.io/enforcement=warn|deny`: overrides `webhook.enforcement`.
    enforcement: Option<Enforcement>,
}

impl Webhook {
    /// The webhook with no cluster facts (namespace-dependent rules do not fire).
    pub fn new(config: Config) -> Self {
        Webhook::with_context(config, Arc::new(Context::default()))
    }

    /// The webhook with the cluster facts of `context` (RuntimeClasses, namespace labels).
    pub fn with_context(config: Config, context: Arc<Context>) -> Self {
        Webhook {
            mutation: engine::judge::MutationConfigs::new(&config),
            config,
            context,
        }
    }

    /// The cluster facts every evaluation shares.
    pub fn context(&self) -> &Context {
        &self.context
    }

    fn namespace_facts(&self, namespace: &str) -> NamespaceFacts {
        let Some(labels) = self.context.namespaces.get(namespace) else {
            return NamespaceFacts::default();
        };
        let is = |k: &str, v: &str| labels.get(k).is_some_and(|x| x == v);
        NamespaceFacts {
            exempt: is(&self.config.policy.exempt_namespace_label, "true"),
            windows_default: is(DEFAULT_OS_LABEL, "windows"),
            enforcement: labels
                .get(ENFORCEMENT_NAMESPACE_LABEL)
                .and_then(|v| Enforcement::from_label(v)),
        }
    }

    /// The configuration the pod mutation uses in a namespace.
    fn mutate_config_for(&self, ns: NamespaceFacts) -> &Config {
        self.mutation.for_namespace(ns.windows_default)
    }

    /// Answer one AdmissionReview (`body` as received).
    pub fn review(&self, body: &[u8], endpoint: Endpoint) -> Result<Outcome, BadRequest> {
        self.review_until(body, endpoint, None)
    }

    /// [`Webhook::review`] that stops evaluating at `deadline` (checked by the engine between
    /// sites, rules and fix passes) and then answers per `webhook.onError`. A body with more
    /// JSON values than its size warrants ([`scan::within_value_budget`]) is not parsed: it
    /// is answered per `webhook.onError` too.
    pub fn review_until(
        &self,
        body: &[u8],
        endpoint: Endpoint,
        deadline: Option<Instant>,
    ) -> Result<Outcome, BadRequest> {
        if !scan::within_value_budget(body) {
            // Denied whatever `webhook.onError` says: no object a user writes is this dense
            // (real reviews average 17-22 bytes per value), while padding a bad pod with a few
            // hundred KiB of `"",` would otherwise admit it unevaluated under `onError: allow`.
            let why = format!(
                "{TOO_DENSE} (at least {} bytes per value on average; real objects have 17-22): denied whatever webhook.onError says, so that padding cannot switch winlint off for an object",
                scan::MIN_BYTES_PER_VALUE
            );
            return self
                .unevaluated_with(body, &why, OnError::Deny)
                .ok_or(BadRequest(why));
        }
        let mut review =
            parse_review(body).map_err(|e| BadRequest(format!("malformed JSON: {e}")))?;
        let api_version = review
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !matches!(
            api_version,
            "admission.k8s.io/v1" | "admission.k8s.io/v1beta1"
        ) {
            return Err(BadRequest(format!(
                "apiVersion {api_version:?}: expected admission.k8s.io/v1 (or v1beta1)"
            )));
        }
        let kind = review.get("kind").and_then(Value::as_str).unwrap_or("");
        if kind != "AdmissionReview" {
            return Err(BadRequest(format!(
                "kind {kind:?}: expected AdmissionReview"
            )));
        }
        let Some(req) = review.get("request").filter(|r| r.is_object()) else {
            return Err(BadRequest("AdmissionReview without a request".into()));
        };
        let uid = match req.get("uid").and_then(Value::as_str) {
            Some(u) if !u.is_empty() => u.to_string(),
            _ => return Err(BadRequest("request.uid missing".into())),
        };
        let s = |p: &str| req.lookup(p).and_then(Value::as_str).unwrap_or("");
        let mut out = Outcome {
            operation: s("/operation").to_string(),
            kind: s("/kind/kind").to_string(),
            namespace: s("/namespace").to_string(),
            name: s("/name").to_string(),
            dry_run: req.get("dryRun").and_then(Value::as_bool).unwrap_or(false),
            ..Outcome::new(uid, api_version.to_string(), Decision::Allowed)
        };
        if out.name.is_empty() {
            // generateName: the mutating webhook sees no name yet.
            out.name = req
                .lookup("/object/metadata/generateName")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            out.generated = !out.name.is_empty();
        }
        let ns = self.namespace_facts(&out.namespace);
        let response = if ns.exempt {
            // The webhooks' namespaceSelector normally keeps these requests away.
            base_response(&out.uid)
        } else {
            let evaluated = engine::deadline::within(deadline, || match endpoint {
                Endpoint::Validate => {
                    let req = review.get("request").expect("the request was found above");
                    self.validate(req, &mut out, ns)
                }
                Endpoint::Mutate => {
                    // The request is ours: mutation patches its object in place.
                    let req = review
                        .get_mut("request")
                        .expect("the request was found above");
                    self.mutate(req, &mut out, ns)
                }
            });
            match evaluated {
                Ok(r) => r,
                Err(engine::deadline::Exceeded) => {
                    // What the unwinding left in `out` is partial: start from the request.
                    out.findings.clear();
                    out.patched.clear();
                    out.patched_rules.clear();
                    out.allowed = true;
                    let resp = base_response(&out.uid);
                    self.on_error(resp, &mut out, DEADLINE_EXCEEDED.into())
                }
            }
        };
        out.body = serde_json::to_vec(&json!({
            "apiVersion": out.api_version,
            "kind": "AdmissionReview",
            "response": response,
        }))
        .expect("a Value serializes");
        Ok(out)
    }

    fn validate(&self, req: &Value, out: &mut Outcome, ns: NamespaceFacts) -> Value {
        let mut resp = base_response(&out.uid);
        let operation = match out.operation.as_str() {
            "CREATE" => Operation::Create,
            "UPDATE" => Operation::Update,
            _ => return resp, // DELETE, CONNECT: nothing to check.
        };
        let sub = req.get("subResource").and_then(Value::as_str).unwrap_or("");
        if !sub.is_empty() && sub != "ephemeralcontainers" {
            return resp; // pods/status, pods/binding, …: not the pod's spec.
        }
        let object = match evaluable(req, "object", &out.kind) {
            Ok(Some(o)) => self.in_namespace(o, &out.namespace),
            Ok(None) => return resp, // not a pod-bearing kind
            Err(e) => return self.on_error(resp, out, e),
        };
        let Some(judged) = self.judge(&object, operation, ns) else {
            return self.on_error(resp, out, "the engine failed on this object".into());
        };
        let findings = judged.findings;
        out.findings = findings.iter().map(|f| (f.rule.id, f.severity)).collect();
        out.exempted = judged.exempted;
        let old = match operation {
            Operation::Update => evaluable(req, "oldObject", &out.kind).ok().flatten(),
            _ => None,
        };
        // An UPDATE that leaves the pod specs as they were (a label, a scale, a rollout
        // restart's annotation) is not warned again of what its creation was warned of.
        let spec_untouched = old.as_ref().is_some_and(|old| same_pod_specs(old, &object));
        // On UPDATE an error the old object already had is not the change's fault: warn only.
        // A set: one lookup per finding (a list was findings × old errors on a pod of
        // thousands of mounts, each an error in both objects).
        let old_errors: std::collections::HashSet<(&'static str, String)> = match operation {
            Operation::Update => old
                .map(|old| self.in_namespace(old, &out.namespace))
                .and_then(|old| self.judge(&old, operation, ns))
                .map(|j| j.findings)
                .unwrap_or_default()
                .into_iter()
                .filter(|f| f.severity == Severity::Error)
                .map(|f| (f.rule.id, f.pointer))
                .collect(),
            _ => Default::default(),
        };
        let mut errors = Vec::new();
        let mut warnings = Vec::new();
        // Each line is named by its object at the end: made within the room that leaves.
        let label = object_name(out);
        let room = warnings::room_after(&label);
        let finding_line = |head: &str, message: &str, f: &Finding| {
            warnings::finding_line_within(head, message, f, room)
        };
        if let Some(refused) = &judged.refused {
            warnings.push(truncate(&format!("winlint: {refused}"), MAX_WARNING_CHARS));
        }
        // What the pods will get, said only when pods will be created: a denied workload
        // creates none, and "the webhook adds nodeSelector" above a denial for that very
        // selector (a DaemonSet's) contradicts it.
        let mut creation = Vec::new();
        if !judged.added.is_empty() {
            creation.push(pod_creation_line(&judged.added));
        }
        for (id, what) in &judged.notices {
            creation.push(warnings::mutation_line(id, what, true));
        }
        for f in &findings {
            match f.severity {
                Severity::Error if old_errors.contains(&(f.rule.id, f.pointer.clone())) => {
                    warnings.push(finding_line(
                        f.rule.id,
                        &format!("(already present) {}", f.message),
                        f,
                    ));
                }
                Severity::Error => errors.push(f),
                Severity::Warning => match f.message.split_once(placement::UNOBSERVED_NOTE) {
                    // The note would be cut off the short line: said once, first.
                    Some((before, after)) => {
                        if warnings.first().is_none_or(|w| *w != NO_WINDOWS_NODE) {
                            warnings.insert(0, NO_WINDOWS_NODE.to_string());
                        }
                        warnings.push(finding_line(f.rule.id, &format!("{before}{after}"), f));
                    }
                    None => warnings.push(finding_line(f.rule.id, &f.message, f)),
                },
                Severity::Info => {}
            }
        }
        if spec_untouched {
            // What warn mode would deny (a new error) is still said below.
            warnings.clear();
            creation.clear();
        }
        let enforcement = ns.enforcement.unwrap_or(self.config.policy.enforcement);
        if !errors.is_empty() && enforcement == Enforcement::Warn {
            // Warn mode: admitted; the denial, said first so no truncation drops it.
            out.decision = Decision::WouldDeny;
            out.would_deny = errors.iter().map(|f| f.rule.id).collect();
            let mut lines = vec![would_deny_line(&errors)];
            lines.extend(
                errors
                    .iter()
                    .map(|f| finding_line(&format!("{WOULD_DENY} {}", f.rule.id), &f.message, f)),
            );
            warnings.splice(0..0, lines);
            errors.clear();
        }
        if errors.is_empty() {
            let at = warnings
                .iter()
                .take_while(|w| w.starts_with("winlint:") || w.starts_with(WOULD_DENY))
                .count();
            warnings.splice(at..at, creation);
        }
        dedup_in_order(&mut warnings);
        warnings.truncate(MAX_WARNINGS);
        let warnings = warnings
            .iter()
            .map(|w| warnings::named(&label, w))
            .collect();
        let warnings: Vec<String> = crate::admission::warnings::within_budget(warnings)
            .into_iter()
            .map(|w| {
                if w.starts_with(&label) {
                    w
                } else {
                    warnings::named(&label, &w) // the budget's own last line
                }
            })
            .collect();
        if !errors.is_empty() {
            out.allowed = false;
            out.decision = Decision::Denied;
            resp["allowed"] = false.into();
            resp["status"] = json!({
                "status": "Failure",
                "code": 403,
                "reason": "Forbidden",
                "message": denial_message(out, &errors),
            });
        } else if !warnings.is_empty() && out.decision != Decision::WouldDeny {
            out.decision = Decision::Warned;
        }
        if !warnings.is_empty() {
            resp["warnings"] = warnings.into();
        }
        resp
    }

    /// How `/validate` judges a pod-bearing object: a Pod as written (the mutating webhook ran
    /// before); a workload by the pods it will create (issue 8 §1). When the template as
    /// written has errors that the pod mutation can take away and the pod mutating webhook is
    /// registered (`webhook.mutate`), the
    /// template is judged after the mutations that webhook will apply to its pods in this
    /// namespace (same engine, configuration and opt-outs, on a copy): only the errors that
    /// survive them count, and [`Judged::added`] says what the pods will get. A template
    /// without errors is judged as written (its pods are admitted either way), which keeps
    /// the common request at one evaluation.
    fn judge(&self, object: &Value, op: Operation, ns: NamespaceFacts) -> Option<Judged> {
        let report = engine::deadline::catch(|| {
            engine::lint_object(object, &self.config, &self.context, op)
        })?;
        let mut judged = self.judge_from(object, op, ns, &report)?;
        judged.exempted = report.exempted;
        judged.refused = report.exemption_refused;
        Some(judged)
    }

    /// [`Webhook::judge`] given the report of `object` as written: [`engine::judge::as_pods`]
    /// under this webhook's configurations for the namespace (the same function `winlint
    /// audit` judges a running workload with when it finds this webhook registered).
    fn judge_from(
        &self,
        object: &Value,
        op: Operation,
        ns: NamespaceFacts,
        report: &engine::ObjectReport,
    ) -> Option<Judged> {
        let j = engine::judge::as_pods(
            object,
            op,
            &self.config,
            self.mutate_config_for(ns),
            &self.context,
            report,
        )?;
        Some(Judged {
            findings: j.findings,
            added: j.added,
            notices: j.notices,
            ..Judged::default()
        })
    }

    /// `object` with `metadata.namespace` filled in from the request when it lacks one and the
    /// facts know namespaces (the rules look namespace labels up by the object's namespace).
    fn in_namespace<'o>(&self, mut object: Cow<'o, Value>, namespace: &str) -> Cow<'o, Value> {
        let meta = object.get("metadata");
        // The rules look namespace labels up by it, `exemptions.namespaces` reads it, and the
        // registry's facts are those the namespace's pull secrets could read.
        let needed = !self.context.namespaces.is_empty()
            || !self.config.policy.exemptions.namespaces.is_empty()
            || self.context.images.is_some();
        if namespace.is_empty()
            || !needed
            || meta.is_some_and(|m| !m.is_object() || m.get("namespace").is_some())
        {
            return object;
        }
        object.to_mut()["metadata"]["namespace"] = namespace.into();
        object
    }

    fn mutate(&self, req: &mut Value, out: &mut Outcome, ns: NamespaceFacts) -> Value {
        let resp = base_response(&out.uid);
        let cfg = self.mutate_config_for(ns);
        if out.operation != "CREATE" {
            return resp; // MV9: spec.os and nodeSelector are immutable after creation.
        }
        let sub = req.get("subResource").and_then(Value::as_str).unwrap_or("");
        if !sub.is_empty() {
            return resp; // pods/ephemeralcontainers and other subresources: never.
        }
        if out.kind != "Pod" && !cfg.policy.mutation.workloads {
            return resp;
        }
        let object = match evaluable_mut(req, "object", &out.kind) {
            Ok(Some(o)) => o,
            Ok(None) => return resp,
            Err(e) => return self.on_error(resp, out, e),
        };
        let result = engine::deadline::catch(|| mutation::mutate_with(object, cfg, &self.context));
        let Some(m) = result else {
            return self.on_error(resp, out, "the engine failed on this object".into());
        };
        out.findings = m.findings;
        if m.patch.is_empty() {
            return resp;
        }
        out.patched = m.changed;
        out.patched_rules = m.rules;
        out.decision = Decision::Patched;
        let bytes = serde_json::to_vec(&m.patch).expect("patch operations serialize");
        let mut resp = resp;
        // A mutation that moves a pod the author did not ask to move (the Linux guard's pin)
        // says why; what rewrote the user's values or changed the pod's posture is said, not
        // silent.
        let label = object_name(out);
        let room = warnings::room_after(&label);
        let said: Vec<String> = m
            .pins
            .iter()
            .map(|f| warnings::finding_line_within(LINUX_GUARD_HEAD, &f.message, f, room))
            .chain(
                m.notices
                    .iter()
                    .map(|(id, what)| warnings::mutation_line(id, what, false)),
            )
            .map(|w| warnings::named(&label, &w))
            .collect();
        if !said.is_empty() {
            let mut said = said;
            said.truncate(MAX_WARNINGS);
            resp["warnings"] = warnings::within_budget(said).into();
        }
        resp["patchType"] = "JSONPatch".into();
        resp["patch"] = base64::engine::general_purpose::STANDARD
            .encode(bytes)
            .into();
        resp
    }

    /// The answer to a request that is not evaluated (its body too large, too slow, too dense,
    /// or no room for it): per `webhook.onError`, addressed to the uid read from the head of
    /// `body` ([`scan::identity`]). `None` when no uid can be read: then only an HTTP error is
    /// possible, and the API server's failurePolicy decides.
    pub fn unevaluated(&self, body: &[u8], why: &str) -> Option<Outcome> {
        self.unevaluated_with(body, why, self.config.policy.on_error)
    }

    /// [`Webhook::unevaluated`] answered per `policy` instead of `webhook.onError`.
    fn unevaluated_with(&self, body: &[u8], why: &str, policy: OnError) -> Option<Outcome> {
        let (api_version, uid) = scan::identity(body)?;
        let mut out = Outcome::new(uid, api_version, Decision::Error);
        let response =
            self.answer_error(base_response(&out.uid), &mut out, why.to_string(), policy);
        out.body = serde_json::to_vec(&json!({
            "apiVersion": out.api_version,
            "kind": "AdmissionReview",
            "response": response,
        }))
        .expect("a Value serializes");
        Some(out)
    }

    fn on_error(&self, resp: Value, out: &mut Outcome, why: String) -> Value {
        self.answer_error(resp, out, why, self.config.policy.on_error)
    }

    /// The answer to an object that was not evaluated, per `policy`.
    fn answer_error(
        &self,
        mut resp: Value,
        out: &mut Outcome,
        why: String,
        policy: OnError,
    ) -> Value {
        out.decision = Decision::Error;
        let msg = format!("winlint could not evaluate this object: {why}");
        match policy {
            OnError::Allow => {
                resp["warnings"] = json!([warnings::named(&object_name(out), &msg)]);
            }
            OnError::Deny => {
                out.allowed = false;
                resp["allowed"] = false.into();
                resp["status"] = json!({
                    "status": "Failure",
                    "code": 403,
                    "reason": "Forbidden",
                    "message": format!("{msg} (webhook.onError: deny)"),
                });
            }
        }
        out.error = Some(why);
        resp
    }
}

/// `body` as a [`Value`], exactly as `serde_json::from_slice` would parse it (same errors at the
/// same positions, keys in order, the last of duplicate keys), except that
/// `request.object.metadata.managedFields` and `request.oldObject.metadata.managedFields` are
/// left out: no rule reads them and no patch touches them, yet they are about 30 % of a
/// captured review's bytes. They are still parsed (and so rejected if malformed) by [`Skip`].
fn parse_review(body: &[u8]) -> serde_json::Result<Value> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let review = DeserializeSeed::deserialize(At::Review, &mut de)?;
    de.end()?;
    Ok(review)
}

/// Where a value sits on the way to a `managedFields` that [`parse_review`] skips.
#[derive(Clone, Copy)]
enum At {
    Review,
    Request,
    Object,
    Metadata,
}

impl At {
    /// What the member `key` of an object here is: `Ok(Some(at))` on the way on, `Ok(None)` a
    /// plain [`Value`], `Err(())` skipped.
    fn member(self, key: &str) -> Result<Option<At>, ()> {
        match (self, key) {
            (At::Review, "request") => Ok(Some(At::Request)),
            (At::Request, "object" | "oldObject") => Ok(Some(At::Object)),
            (At::Object, "metadata") => Ok(Some(At::Metadata)),
            (At::Metadata, "managedFields") => Err(()),
            _ => Ok(None),
        }
    }
}

impl<'de> DeserializeSeed<'de> for At {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(self)
    }
}

/// Builds the same [`Value`] as `Value::deserialize`; only objects differ (see [`At::member`]).
impl<'de> Visitor<'de> for At {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            let value = match self.member(&key) {
                Ok(Some(at)) => access.next_value_seed(at)?,
                Ok(None) => access.next_value()?,
                Err(()) => {
                    access.next_value_seed(Skip)?;
                    continue;
                }
            };
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}

/// Parses any JSON value as strictly as [`Value`] does (UTF-8, escapes, number range, nesting
/// depth) but keeps nothing. Unlike [`serde::de::IgnoredAny`], for which serde_json only skips
/// tokens and so would accept strings and numbers that `from_slice` rejects.
struct Skip;

impl<'de> DeserializeSeed<'de> for Skip {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Skip)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key_seed(Skip)?.is_some() {
            map.next_value_seed(Skip)?;
        }
        Ok(())
    }
}

fn base_response(uid: &str) -> Value {
    json!({"uid": uid, "allowed": true})
}

/// The request's `object`/`oldObject` if it is a pod-bearing kind (`Ok(None)` if not), with
/// `kind` filled in from the request when the object lacks it.
fn evaluable<'r>(
    req: &'r Value,
    field: &str,
    kind: &str,
) -> Result<Option<Cow<'r, Value>>, String> {
    let object = match req.get(field) {
        None | Some(Value::Null) => {
            return if workload::is_pod_kind(kind) {
                Err(format!("request.{field} is missing"))
            } else {
                Ok(None)
            };
        }
        Some(o) => o,
    };
    let Some(map) = object.as_object() else {
        return Err(format!("request.{field} is not an object"));
    };
    let okind = map.get("kind").and_then(Value::as_str).unwrap_or(kind);
    if !workload::is_pod_kind(okind) {
        return Ok(None);
    }
    let mut object = Cow::Borrowed(object);
    if map.get("kind").is_none() {
        object.to_mut()["kind"] = okind.into();
    }
    for site in workload::pod_sites(&object) {
        if !site.spec.is_object() {
            return Err(format!("{okind} without a pod spec"));
        }
    }
    Ok(Some(object))
}

/// [`evaluable`] for a request the caller owns: the object itself (`kind` filled in).
fn evaluable_mut<'r>(
    req: &'r mut Value,
    field: &str,
    kind: &str,
) -> Result<Option<&'r mut Value>, String> {
    let filled = match evaluable(req, field, kind)? {
        None => return Ok(None),
        Some(Cow::Borrowed(_)) => None,
        Some(Cow::Owned(object)) => Some(object),
    };
    let slot = req.get_mut(field).expect("evaluable found the object");
    if let Some(object) = filled {
        *slot = object;
    }
    Ok(Some(slot))
}

/// Whether two versions of an object have the same pod specs (each pod site's `spec`, in
/// order): what the rules judge of the pods beyond their labels.
fn same_pod_specs(old: &Value, new: &Value) -> bool {
    let (old, new) = (workload::pod_sites(old), workload::pod_sites(new));
    old.len() == new.len() && old.iter().zip(&new).all(|(a, b)| a.spec == b.spec)
}

/// The warning that says what the pod mutating webhook will do to a workload's pods: the
/// mutations by name (`nodeSelector`, `tolerations`, `os`, …), then the rules whose fixes have
/// no name of their own.
fn pod_creation_line(added: &[String]) -> String {
    let is_rule = |n: &str| {
        n.strip_prefix("WIN")
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
    };
    let (fixes, named): (Vec<&str>, Vec<&str>) =
        added.iter().map(String::as_str).partition(|n| is_rule(n));
    // What the mutations do to the pod: most add a field; the others rewrite or remove one
    // (the beta OS label, Linux-only fields, env names, an image, a medium, a propagation).
    const ADDS: [&str; 7] = [
        "nodeSelector",
        "tolerations",
        "os",
        "windowsBuild",
        "runtimeClassName",
        "runAsUserName",
        "hostNetwork",
    ];
    let (adds, changes): (Vec<&str>, Vec<&str>) = named.iter().partition(|n| ADDS.contains(n));
    let mut parts = Vec::new();
    if !adds.is_empty() {
        parts.push(format!("adds {}", adds.join(", ")));
    }
    if !changes.is_empty() {
        parts.push(format!("changes {}", changes.join(", ")));
    }
    if !fixes.is_empty() {
        parts.push(format!("applies the fixes of {}", fixes.join(", ")));
    }
    let mut line = "winlint: at pod creation the mutating webhook".to_string();
    if !parts.is_empty() {
        line.push(' ');
        line.push_str(&parts.join(" and "));
    }
    truncate(&line, MAX_WARNING_CHARS)
}

fn dedup_in_order(v: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    v.retain(|s| seen.insert(s.clone()));
}

/// The prefix of a warning that stands for an error in warn mode.
pub const WOULD_DENY: &str = "would deny:";

/// The first warning in warn mode: what would have been denied, and why it was not.
/// (The object is named at the start of the line, [`warnings::named`].)
fn would_deny_line(errors: &[&Finding]) -> String {
    truncate(
        &format!(
            "winlint: warn mode: admitted; enforcement deny would refuse it ({} error{})",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" }
        ),
        MAX_WARNING_CHARS,
    )
}

/// `Pod ns/name`, `Deployment name`, `Pod ns/iis-7d9c5-*` (a generated name: its prefix),
/// or the kind alone: what starts each warning ([`warnings::named`]).
fn object_name(out: &Outcome) -> String {
    let name = if out.generated {
        format!("{}*", out.name)
    } else {
        out.name.clone()
    };
    warnings::label(&out.kind, &out.namespace, &name)
}

fn denial_message(out: &Outcome, errors: &[&Finding]) -> String {
    let what = object_name(out);
    let mut msg = format!(
        "winlint: {what} cannot run on Windows as written ({} error{}):",
        errors.len(),
        if errors.len() == 1 { "" } else { "s" }
    );
    for f in errors.iter().take(MAX_DENIAL_LINES) {
        let fix = match &f.fix {
            // The link stays whole: a long description is what is shortened.
            Some(fix) => format!(
                "{}; see {}",
                truncate(&fix.description, MAX_DENIAL_PART_CHARS),
                f.rule.docs_url()
            ),
            None => format!("see {}", f.rule.docs_url()),
        };
        msg.push_str(&format!(
            "\n- {} {} at {}: {} (fix: {})",
            f.rule.id,
            f.rule.name,
            truncate(&f.pointer, MAX_DENIAL_PART_CHARS),
            truncate(f.message.trim(), MAX_DENIAL_PART_CHARS),
            fix
        ));
    }
    // A pod with thousands of bad containers was denied with 6 MB of text (issue 15): the
    // rest is summarised per rule.
    if errors.len() > MAX_DENIAL_LINES {
        let mut per_rule: Vec<(&str, usize)> = Vec::new();
        for f in &errors[MAX_DENIAL_LINES..] {
            match per_rule.iter_mut().find(|(id, _)| *id == f.rule.id) {
                Some((_, n)) => *n += 1,
                None => per_rule.push((f.rule.id, 1)),
            }
        }
        let rules: Vec<String> = per_rule
            .iter()
            .map(|(id, n)| format!("{id} x{n}"))
            .collect();
        msg.push_str(&format!(
            "\n- … and {} more: {}",
            errors.len() - MAX_DENIAL_LINES,
            rules.join(", ")
        ));
    }
    msg
}

/// The errors a denial lists one per line; the rest are counted per rule.
const MAX_DENIAL_LINES: usize = 20;
/// The longest pointer, message or fix in a denial line (a message can quote a long value).
const MAX_DENIAL_PART_CHARS: usize = 600;

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::model::labels::{HYPERV_ANNOTATION, MUTATED_ANNOTATION};

    #[test]
    fn parse_review_skips_only_managed_fields_and_rejects_as_before() {
        let mf = r#"[{"manager":"kubectl","fieldsV1":{"f:spec":{}}}]"#;
        let body = format!(
            r#"{{"kind":"AdmissionReview","request":{{"uid":"u","object":{{"metadata":
            {{"name":"a","managedFields":{mf},"labels":{{"managedFields":"kept"}}}},
            "spec":{{"metadata":{{"managedFields":[]}}}}}},"oldObject":{{"metadata":
            {{"managedFields":{mf},"name":"b","name":"c"}}}},"managedFields":1}},"z":[1.5,-2]}}"#
        );
        let mut want: Value = serde_json::from_slice(body.as_bytes()).unwrap();
        for o in ["object", "oldObject"] {
            let meta = want["request"][o]["metadata"].as_object_mut().unwrap();
            meta.shift_remove("managedFields").unwrap();
        }
        let got = parse_review(body.as_bytes()).unwrap();
        assert_eq!(got, want);
        // Same key order (`preserve_order`), the last of duplicate keys.
        assert_eq!(got.to_string(), want.to_string());
        assert_eq!(got["request"]["oldObject"]["metadata"]["name"], "c");

        // Malformed inside a skipped managedFields: the error `from_slice` gives, where it does.
        let bad: [&[u8]; 5] = [b"\"\xff\"", b"\"\\ud800\"", b"1e400", b"[1,]", b"{\"a\" 1}"];
        for bad in bad {
            let body = [
                &br#"{"request":{"object":{"metadata":{"managedFields":["#[..],
                bad,
                b"]}}}}",
            ]
            .concat();
            let want = serde_json::from_slice::<Value>(&body)
                .unwrap_err()
                .to_string();
            let got = parse_review(&body).unwrap_err().to_string();
            assert_eq!(got, want, "{}", String::from_utf8_lossy(bad));
        }
    }

    fn review(op: &str, object: Value) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "u-1",
                "kind": {"group": "", "version": "v1", "kind": object["kind"].clone()},
                "resource": {"group": "", "version": "v1", "resource": "pods"},
                "operation": op,
                "namespace": "default",
                "object": object,
            }
        }))
        .unwrap()
    }

    fn answer(w: &Webhook, body: &[u8], ep: Endpoint) -> Value {
        let out = w.review(body, ep).unwrap();
        serde_json::from_slice(&out.body).unwrap()
    }

    fn decoded_patch(resp: &Value) -> Option<Vec<Value>> {
        let b64 = resp.lookup("/response/patch")?.as_str()?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        Some(serde_json::from_slice(&bytes).unwrap())
    }

    fn linux_pod() -> Value {
        json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"l"},
            "spec":{"containers":[{"name":"web","image":"nginx:1.25"}]}})
    }

    #[test]
    fn bad_requests() {
        let w = Webhook::new(Config::default());
        for body in [
            &b"garbage"[..],
            b"{\"apiVersion\":\"admission.k8s.io/v1\",",
            b"{\"apiVersion\":\"v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"x\"}}",
            b"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"Pod\",\"request\":{\"uid\":\"x\"}}",
            b"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}",
            b"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{}}",
        ] {
            assert!(w.review(body, Endpoint::Validate).is_err());
        }
    }

    #[test]
    fn linux_pod_is_left_alone() {
        let w = Webhook::new(Config::default());
        let a = answer(&w, &review("CREATE", linux_pod()), Endpoint::Mutate);
        assert_eq!(a["response"]["uid"], "u-1");
        assert_eq!(a["response"]["allowed"], true);
        assert!(a["response"].get("patch").is_none());
        let a = answer(&w, &review("CREATE", linux_pod()), Endpoint::Validate);
        assert_eq!(a["response"]["allowed"], true);
        assert!(a["response"].get("warnings").is_none());
    }

    /// The answer of `/mutate` under `cfg` for a pod running `image`, and the pod patched by
    /// it.
    fn mutated_pod(cfg: Config, image: &str) -> (Value, Value) {
        let w = Webhook::new(cfg);
        let pod = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},
            "spec":{"containers":[{"name":"a","image":image}]}});
        let a = answer(&w, &review("CREATE", pod.clone()), Endpoint::Mutate);
        let mut obj = pod;
        if let Some(patch) = decoded_patch(&a) {
            let p: json_patch::Patch = serde_json::from_value(Value::Array(patch)).unwrap();
            json_patch::patch(&mut obj, &p).unwrap();
        }
        (a, obj)
    }

    #[test]
    fn linux_guard_pins_unknown_pods() {
        let mut cfg = Config::default();
        cfg.policy.mutation.linux_guard = crate::config::LinuxGuard::On;
        let (_, obj) = mutated_pod(cfg, "registry.example/app:1");
        assert_eq!(obj["spec"]["nodeSelector"]["kubernetes.io/os"], "linux");
        assert_eq!(
            obj["metadata"]["annotations"][MUTATED_ANNOTATION],
            "linuxGuard"
        );
    }

    /// `mutation.linuxGuard: auto` (the default): a Linux-only image on untainted Windows nodes
    /// is pinned, and the answer says so in a warning.
    #[test]
    fn linux_guard_auto_pins_and_warns() {
        let mut cfg = Config::default();
        cfg.target
            .set_platform(crate::model::platform::Platform::Aks);
        let (a, obj) = mutated_pod(cfg.clone(), "nginx:1.27");
        assert_eq!(obj["spec"]["nodeSelector"]["kubernetes.io/os"], "linux");
        assert_eq!(
            obj["metadata"]["annotations"][MUTATED_ANNOTATION],
            "linuxGuard"
        );
        let warning = a["response"]["warnings"][0].as_str().unwrap_or_default();
        assert!(
            warnings::unnamed(warning)
                .starts_with("WIN011: linuxGuard pinned it to Linux: nginx:1.27 is a Linux-only"),
            "{a}"
        );
        // Within what the API server passes on, the fix kept whole.
        assert!(warning.chars().count() <= 256, "{warning}");
        assert!(
            warning.ends_with("Fix: add nodeSelector kubernetes.io/os=linux"),
            "{warning}"
        );
        // An image winlint knows nothing about: left alone.
        let (a, _) = mutated_pod(cfg, "registry.example/app:1");
        assert!(a["response"].get("patch").is_none(), "{a}");
    }

    /// `mutation.stripLinuxOnlyFields`: a Windows pod whose Linux-only fields keep `spec.os`
    /// out gets them removed and `spec.os` added; without it, neither.
    #[test]
    fn strip_linux_only_fields_lets_spec_os_in() {
        let pod = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},
            "spec":{"nodeSelector":{"kubernetes.io/os":"windows"},
                "tolerations":[{"key":"os","operator":"Equal","value":"windows","effect":"NoSchedule"}],
                "containers":[{"name":"a","image":"mcr.microsoft.com/windows/servercore:ltsc2022",
                    "securityContext":{"runAsUser":1000}}]}});
        let mutated = |strip: bool| {
            let mut cfg = Config::default();
            cfg.policy.mutation.strip_linux_only_fields = strip;
            let w = Webhook::new(cfg);
            let a = answer(&w, &review("CREATE", pod.clone()), Endpoint::Mutate);
            let mut obj = pod.clone();
            if let Some(patch) = decoded_patch(&a) {
                let p: json_patch::Patch = serde_json::from_value(Value::Array(patch)).unwrap();
                json_patch::patch(&mut obj, &p).unwrap();
            }
            obj
        };
        let kept = mutated(false);
        assert_eq!(
            kept["spec"]["containers"][0]["securityContext"]["runAsUser"],
            1000
        );
        assert!(kept["spec"].get("os").is_none(), "{kept:#}");
        let stripped = mutated(true);
        assert!(
            stripped["spec"]["containers"][0]
                .lookup("/securityContext/runAsUser")
                .is_none(),
            "{stripped:#}"
        );
        assert_eq!(stripped["spec"]["os"]["name"], "windows");
        let recorded = stripped["metadata"]["annotations"][MUTATED_ANNOTATION]
            .as_str()
            .unwrap();
        assert!(
            recorded.contains("linuxOnlyFields") && recorded.contains("os"),
            "{recorded}"
        );
    }

    #[test]
    fn update_and_delete_are_not_mutated() {
        let w = Webhook::new(Config::default());
        let mut pod = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"w"},
            "spec":{"containers":[{"name":"a","image":"mcr.microsoft.com/windows/servercore:ltsc2022"}]}});
        pod["spec"]["os"] = json!({"name": "windows"});
        let a = answer(&w, &review("UPDATE", pod), Endpoint::Mutate);
        assert!(a["response"].get("patch").is_none());
        let a = answer(&w, &review("DELETE", Value::Null), Endpoint::Validate);
        assert_eq!(a["response"]["allowed"], true);
    }

    #[test]
    fn v1beta1_is_answered_in_v1beta1() {
        let w = Webhook::new(Config::default());
        let mut body: Value = serde_json::from_slice(&review("CREATE", linux_pod())).unwrap();
        body["apiVersion"] = "admission.k8s.io/v1beta1".into();
        let a = answer(&w, &serde_json::to_vec(&body).unwrap(), Endpoint::Validate);
        assert_eq!(a["apiVersion"], "admission.k8s.io/v1beta1");
        assert_eq!(a["kind"], "AdmissionReview");
    }

    #[test]
    fn unevaluable_object_follows_on_error() {
        let body = serde_json::to_vec(&json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "u", "kind": {"group":"","version":"v1","kind":"Pod"},
                "operation": "CREATE", "object": "not an object"}}))
        .unwrap();
        let w = Webhook::new(Config::default());
        let a = answer(&w, &body, Endpoint::Validate);
        assert_eq!(a["response"]["allowed"], true);
        assert!(
            a["response"]["warnings"][0]
                .as_str()
                .unwrap()
                .contains("could not evaluate")
        );
        let mut cfg = Config::default();
        cfg.policy.on_error = OnError::Deny;
        let a = answer(&Webhook::new(cfg), &body, Endpoint::Validate);
        assert_eq!(a["response"]["allowed"], false);
        assert_eq!(a["response"]["status"]["code"], 403);
    }

    fn mutated(cfg: Config, pod: Value) -> Option<Value> {
        let w = Webhook::new(cfg);
        let a = answer(&w, &review("CREATE", pod.clone()), Endpoint::Mutate);
        let patch = decoded_patch(&a)?;
        let p: json_patch::Patch = serde_json::from_value(Value::Array(patch)).unwrap();
        let mut obj = pod;
        json_patch::patch(&mut obj, &p).unwrap();
        Some(obj)
    }

    fn win_pod(image: &str) -> Value {
        json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"w"},
            "spec":{"containers":[{"name":"a","image": image}]}})
    }

    #[test]
    fn mv4_digest_image_gets_no_build_pin() {
        let mut cfg = Config::default();
        cfg.target.cluster_mixed_builds = true;
        let digest = format!(
            "mcr.microsoft.com/windows/servercore@sha256:{}",
            "a".repeat(64)
        );
        let p = mutated(cfg, win_pod(&digest)).expect("M1+M3+M4");
        assert_eq!(p["spec"]["nodeSelector"]["kubernetes.io/os"], "windows");
        assert!(
            p["spec"]["nodeSelector"]
                .get("node.kubernetes.io/windows-build")
                .is_none()
        );
        assert_eq!(p["spec"]["os"]["name"], "windows");
    }

    #[test]
    fn m2_build_pin_with_mixed_builds() {
        let mut cfg = Config::default();
        cfg.target.cluster_mixed_builds = true;
        let p = mutated(
            cfg,
            win_pod("mcr.microsoft.com/windows/servercore:ltsc2022"),
        )
        .unwrap();
        let pinned = p["spec"]["nodeSelector"]
            .get("node.kubernetes.io/windows-build")
            .is_some()
            || p.lookup("/spec/affinity/nodeAffinity").is_some();
        assert!(pinned, "{p}");
        let p = mutated(
            Config::default(),
            win_pod("mcr.microsoft.com/windows/servercore:ltsc2022"),
        )
        .unwrap();
        assert!(
            p["spec"]["nodeSelector"]
                .get("node.kubernetes.io/windows-build")
                .is_none()
        );
    }

    #[test]
    fn mv5_hostprocess_never_gets_hyperv() {
        let mut cfg = Config::default();
        cfg.policy.mutation.hyperv = crate::config::HyperV::On;
        let pod = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"hp"},
            "spec":{"hostNetwork": true,
                "securityContext":{"windowsOptions":{"hostProcess":true,"runAsUserName":"NT AUTHORITY\\SYSTEM"}},
                "containers":[{"name":"a","image":"mcr.microsoft.com/windows/nanoserver:ltsc2022"}]}});
        let p = mutated(cfg, pod).expect("M1/M3/M4");
        assert!(p["spec"].get("runtimeClassName").is_none());
        assert!(
            p["spec"]["nodeSelector"]
                .get("node.kubernetes.io/windows-build")
                .is_none()
        );
    }

    #[test]
    fn mv7_legacy_hyperv_annotation_and_beta_selector() {
        let mut cfg = Config::default();
        cfg.target.kubernetes = crate::model::KubeVersion::new(1, 12);
        cfg.target.windows_builds = vec![crate::model::windows::parse_build("1803").unwrap()];
        cfg.target.windows_taints = vec![];
        cfg.policy.mutation.hyperv = crate::config::HyperV::On;
        let p = mutated(cfg, win_pod("mcr.microsoft.com/windows/servercore:1803")).unwrap();
        assert_eq!(p["metadata"]["annotations"][HYPERV_ANNOTATION], "hyperv");
        assert_eq!(
            p["spec"]["nodeSelector"]["beta.kubernetes.io/os"],
            "windows"
        );
        assert!(p["spec"]["nodeSelector"].get("kubernetes.io/os").is_none());
    }

    #[test]
    fn mv8_hyperv_runtime_class() {
        let mut cfg = Config::default();
        cfg.target.kubernetes = crate::model::KubeVersion::new(1, 30);
        cfg.policy.mutation.hyperv = crate::config::HyperV::On;
        let p = mutated(
            cfg.clone(),
            win_pod("mcr.microsoft.com/windows/servercore:ltsc2022"),
        )
        .unwrap();
        assert_eq!(p["spec"]["runtimeClassName"], "runhcs-wcow-hypervisor");
        let mutated_by = p["metadata"]["annotations"][MUTATED_ANNOTATION]
            .as_str()
            .unwrap();
        assert!(mutated_by.contains("runtimeClassName"), "{mutated_by}");
        // Never with hostNetwork.
        let mut hn = win_pod("mcr.microsoft.com/windows/servercore:ltsc2022");
        hn["spec"]["hostNetwork"] = true.into();
        let p = mutated(cfg, hn).unwrap_or_default();
        assert!(p.lookup("/spec/runtimeClassName").is_none());
    }

    #[test]
    fn m6_pod_os_label_and_annotations_map_creation() {
        let mut cfg = Config::default();
        cfg.policy.mutation.pod_os_label = true;
        let mut pod = win_pod("mcr.microsoft.com/windows/servercore:ltsc2022");
        pod["metadata"]["annotations"] = json!({"keep": "me"});
        let p = mutated(cfg, pod).unwrap();
        assert_eq!(p["metadata"]["labels"]["kubernetes.io/os"], "windows");
        assert_eq!(p["metadata"]["annotations"]["keep"], "me");
        assert!(
            p["metadata"]["annotations"][MUTATED_ANNOTATION]
                .as_str()
                .unwrap()
                .contains("osLabel")
        );
    }

    #[test]
    fn workloads_are_mutated_only_by_policy() {
        let dep = json!({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
            "spec":{"template":{"spec":{"containers":[{"name":"a","image":"mcr.microsoft.com/windows/servercore:ltsc2022"}]}}}});
        assert!(mutated(Config::default(), dep.clone()).is_none());
        let mut cfg = Config::default();
        cfg.policy.mutation.workloads = true;
        let p = mutated(cfg, dep).expect("a patch with mutation.workloads");
        assert_eq!(
            p["spec"]["template"]["spec"]["nodeSelector"]["kubernetes.io/os"],
            "windows"
        );
        assert!(p["metadata"]["annotations"][MUTATED_ANNOTATION].is_string());
    }

    #[test]
    fn update_denies_only_new_errors() {
        let w = Webhook::new(Config::default());
        let mut old = win_pod("mcr.microsoft.com/windows/servercore:ltsc2022");
        old["spec"]["os"] = json!({"name": "windows"});
        old["spec"]["nodeSelector"] = json!({"kubernetes.io/os": "windows"});
        old["spec"]["securityContext"] = json!({"runAsUser": 1000});
        let update = |new: &Value| {
            let mut body: Value = serde_json::from_slice(&review("UPDATE", new.clone())).unwrap();
            body["request"]["oldObject"] = old.clone();
            answer(&w, &serde_json::to_vec(&body).unwrap(), Endpoint::Validate)
        };
        // A change to the spec (an image update) is admitted, the old error said again.
        let mut new = old.clone();
        new["spec"]["containers"][0]["image"] =
            "mcr.microsoft.com/windows/nanoserver:ltsc2022".into();
        let a = update(&new);
        assert_eq!(a["response"]["allowed"], true, "{a}");
        let warnings = a["response"]["warnings"].as_array().unwrap();
        assert!(warnings.iter().any(|w| {
            warnings::unnamed(w.as_str().unwrap()).starts_with("WIN101: (already present)")
        }));
        // Issue 20 §5: `kubectl label` leaves the spec as it was: admitted, nothing repeated.
        let mut labelled = old.clone();
        labelled["metadata"]["labels"] = json!({"team": "web"});
        let a = update(&labelled);
        assert_eq!(a["response"]["allowed"], true, "{a}");
        assert!(a["response"].get("warnings").is_none(), "{a}");
        // A new error still denies, whatever else stayed.
        let mut worse = labelled.clone();
        worse["spec"]["securityContext"]["runAsGroup"] = 1000.into();
        let a = update(&worse);
        assert_eq!(a["response"]["allowed"], false, "{a}");
        // A new error from a label alone denies, and in warn mode is said.
        let mut relabelled = old.clone();
        relabelled["metadata"]["labels"] = json!({"kubernetes.io/os": "linux"});
        let a = update(&relabelled);
        assert_eq!(a["response"]["allowed"], false, "{a}");
        let mut warn = Config::default();
        warn.policy.enforcement = Enforcement::Warn;
        let mut body: Value = serde_json::from_slice(&review("UPDATE", relabelled)).unwrap();
        body["request"]["oldObject"] = old.clone();
        let body = serde_json::to_vec(&body).unwrap();
        let a = answer(&Webhook::new(warn), &body, Endpoint::Validate);
        assert_eq!(a["response"]["allowed"], true, "{a}");
        let said = a["response"]["warnings"].as_array().unwrap();
        assert!(
            said.iter()
                .any(|w| warnings::unnamed(w.as_str().unwrap()).starts_with(WOULD_DENY)),
            "{a}"
        );
        assert!(
            !said
                .iter()
                .any(|w| w.as_str().unwrap().contains("already present")),
            "{a}"
        );
        // The same error on CREATE denies.
        let a = answer(&w, &review("CREATE", old), Endpoint::Validate);
        assert_eq!(a["response"]["allowed"], false);
    }

    #[test]
    fn mv6_runtime_class_already_merged_gets_only_spec_os() {
        // RuntimeClass admission (an in-tree plugin) merges the RuntimeClass's nodeSelector and
        // tolerations into the pod before mutating webhooks run: this is what winlint sees.
        let pod = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"rc"},
            "spec":{"runtimeClassName":"windows-2022",
                "nodeSelector":{"kubernetes.io/os":"windows","node.kubernetes.io/windows-build":"10.0.20348"},
                "tolerations":[{"key":"os","operator":"Equal","value":"windows","effect":"NoSchedule"}],
                "containers":[{"name":"a","image":"mcr.microsoft.com/windows/servercore:ltsc2022"}]}});
        let w = Webhook::new(Config::default());
        let a = answer(&w, &review("CREATE", pod), Endpoint::Mutate);
        let ops = decoded_patch(&a).expect("M4");
        let paths: Vec<&str> = ops.iter().map(|o| o["path"].as_str().unwrap()).collect();
        assert_eq!(paths, ["/spec/os", "/metadata/annotations"], "{ops:?}");
    }

    fn deployment(ns: &str, image: &str, extra: Value) -> Value {
        let mut spec = json!({"containers": [{"name": "web", "image": image}]});
        for (k, v) in extra.as_object().into_iter().flatten() {
            spec[k] = v.clone();
        }
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": ns},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": spec}}})
    }

    fn in_ns(body: Vec<u8>, ns: &str) -> Vec<u8> {
        let mut v: Value = serde_json::from_slice(&body).unwrap();
        v["request"]["namespace"] = ns.into();
        serde_json::to_vec(&v).unwrap()
    }

    fn warnings(a: &Value) -> Vec<String> {
        a["response"]["warnings"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|w| w.as_str().unwrap().to_string())
            .collect()
    }

    fn denied_rules(a: &Value) -> Vec<String> {
        a["response"]["status"]["message"]
            .as_str()
            .unwrap_or("")
            .lines()
            .filter_map(|l| l.strip_prefix("- "))
            .map(|l| l[..6].to_string())
            .collect()
    }

    const IIS_2022: &str = "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022";
    const IIS_2019: &str = "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2019";

    /// The default target with its Windows taint configured, not assumed (an assumed taint
    /// makes WIN007 a warning, which no mutation needs to take away).
    fn tainted() -> Config {
        let mut c = Config::default();
        c.target.pinned.windows_taints = true;
        c
    }

    /// Issue 8 §1: a workload is judged by the pods it will create. The fresh-install
    /// Deployment (OS selector, no toleration) is admitted because the pod mutating webhook adds
    /// the toleration at pod creation, and says so; without that webhook it is denied.
    #[test]
    fn workloads_are_judged_by_the_pods_they_will_create() {
        let os = json!({"nodeSelector": {"kubernetes.io/os": "windows"}});
        let body = review("CREATE", deployment("default", IIS_2022, os.clone()));
        let a = answer(&Webhook::new(tainted()), &body, Endpoint::Validate);
        assert_eq!(a["response"]["allowed"], true, "{a}");
        let w = warnings(&a);
        assert!(
            w.iter().any(|w| warnings::unnamed(w)
                == "winlint: at pod creation the mutating webhook adds os, tolerations"),
            "{w:?}"
        );
        assert!(
            !w.iter().any(|w| warnings::unnamed(w).starts_with("WIN003")),
            "{w:?}"
        );

        let mut no_pod_webhook = tainted();
        no_pod_webhook.policy.pod_mutation = false;
        let a = answer(&Webhook::new(no_pod_webhook), &body, Endpoint::Validate);
        assert_eq!(a["response"]["allowed"], false, "{a}");
        assert!(denied_rules(&a).contains(&"WIN007".to_string()), "{a}");

        // What the mutation cannot fix still denies, alone.
        let body = review("CREATE", deployment("default", IIS_2019, os));
        let a = answer(&Webhook::new(tainted()), &body, Endpoint::Validate);
        assert_eq!(a["response"]["allowed"], false, "{a}");
        assert_eq!(denied_rules(&a), ["WIN502"], "{a}");

        // A Pod is judged as written: the mutating webhook already ran on it.
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"nodeSelector": {"kubernetes.io/os": "windows"},
                "containers": [{"name": "a", "image": IIS_2022}]}});
        let a = answer(
            &Webhook::new(tainted()),
            &review("CREATE", pod),
            Endpoint::Validate,
        );
        assert_eq!(denied_rules(&a), ["WIN007"], "{a}");
    }

    /// A DaemonSet's controller places its pods from the template (`NodeShouldRunDaemonPod`:
    /// the template's nodeSelector, affinity and tolerations), before the pod webhook sees any
    /// of them: a toleration added at pod creation puts no pod on a tainted Windows node, and a
    /// nodeSelector added then does not keep pods off Linux nodes. Its placement errors are
    /// judged as written; the rest as its pods will be.
    #[test]
    fn a_daemonset_is_placed_by_its_template() {
        let daemonset = |extra: Value| {
            let mut d = deployment("default", IIS_2022, extra);
            d["kind"] = "DaemonSet".into();
            d
        };
        let w = Webhook::new(Config::default());
        let os = json!({"nodeSelector": {"kubernetes.io/os": "windows"}});
        // No pod of it is ever Pending: it is admitted, warned that it creates none on the
        // tainted nodes, and not told that its pods will get the toleration.
        let a = answer(&w, &review("CREATE", daemonset(os)), Endpoint::Validate);
        assert_eq!(a["response"]["allowed"], true, "{a}");
        let w7 = warnings(&a);
        assert!(
            w7.iter()
                .any(|l| warnings::unnamed(l).starts_with("WIN007") && l.contains("creates no pod")),
            "{w7:?}"
        );
        assert!(!w7.iter().any(|l| l.contains("tolerations")), "{w7:?}");
        // Without an OS selector its controller puts a pod on every Linux node, where the
        // Windows image never runs: what the webhook adds to those pods cannot move them.
        let a = answer(
            &w,
            &review("CREATE", daemonset(json!({}))),
            Endpoint::Validate,
        );
        assert_eq!(a["response"]["allowed"], false, "{a}");
        assert_eq!(denied_rules(&a), ["WIN001"], "{a}");

        // Placed by its template, it is admitted.
        let placed = json!({"nodeSelector": {"kubernetes.io/os": "windows"},
            "tolerations": [{"key": "os", "operator": "Equal", "value": "windows",
                "effect": "NoSchedule"}]});
        let a = answer(&w, &review("CREATE", daemonset(placed)), Endpoint::Validate);
        assert_eq!(a["response"]["allowed"], true, "{a}");
    }

    /// The pod mutation's opt-outs hold in the simulation too: a template that ignores the
    /// toleration rule gets no toleration (and no denial for it: the rule is ignored); an
    /// UPDATE still denies only errors it introduces.
    #[test]
    fn workload_judgement_keeps_opt_outs_and_update_rules() {
        let w = Webhook::new(Config::default());
        let mut d = deployment(
            "default",
            IIS_2022,
            json!({"nodeSelector": {"kubernetes.io/os": "windows"}}),
        );
        d["spec"]["template"]["metadata"]["annotations"] = json!({"winlint.io/ignore": "WIN007"});
        let a = answer(&w, &review("CREATE", d), Endpoint::Validate);
        assert_eq!(a["response"]["allowed"], true, "{a}");
        assert!(
            !warnings(&a).iter().any(|w| w.contains("tolerations")),
            "{a}"
        );

        // UPDATE: an ltsc2019 template already denied before the change stays a warning.
        let old = deployment("default", IIS_2019, json!({}));
        let update = |new: &Value| {
            let mut body: Value = serde_json::from_slice(&review("UPDATE", new.clone())).unwrap();
            body["request"]["oldObject"] = old.clone();
            answer(&w, &serde_json::to_vec(&body).unwrap(), Endpoint::Validate)
        };
        let mut new = old.clone();
        new["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 60.into();
        let a = update(&new);
        assert_eq!(a["response"]["allowed"], true, "{a}");
        assert!(
            warnings(&a)
                .iter()
                .any(|w| warnings::unnamed(w).starts_with("WIN502: (already present)")),
            "{a}"
        );
        // A label or a scale leaves the pods' spec alone: nothing said again (issue 20 §5).
        let mut scaled = old.clone();
        scaled["metadata"]["labels"] = json!({"team": "web"});
        scaled["spec"]["replicas"] = 5.into();
        let a = update(&scaled);
        assert_eq!(a["response"]["allowed"], true, "{a}");
        assert!(warnings(&a).is_empty(), "{a}");
    }

    /// Namespace facts (the live watch's labels): an exempt namespace is not evaluated; in a
    /// `winlint.io/default-os=windows` namespace probable pods are mutated, so a probable
    /// workload is judged after that mutation there and as written elsewhere.
    #[test]
    fn namespace_facts_from_the_context() {
        let mut cx = Context::default();
        let labels = |k: &str, v: &str| BTreeMap::from([(k.to_string(), v.to_string())]);
        cx.namespaces
            .insert("skip".into(), labels("winlint.io/ignore", "true"));
        cx.namespaces
            .insert("win".into(), labels("winlint.io/default-os", "windows"));
        cx.namespaces.insert("plain".into(), BTreeMap::new());
        let w = Webhook::with_context(Config::default(), Arc::new(cx));
        let denied = deployment("skip", IIS_2019, json!({}));
        let a = answer(
            &w,
            &in_ns(review("CREATE", denied), "skip"),
            Endpoint::Validate,
        );
        assert_eq!(a["response"]["allowed"], true, "{a}");
        assert!(a["response"].get("warnings").is_none(), "{a}");
        let pod = win_pod(IIS_2022);
        let a = answer(&w, &in_ns(review("CREATE", pod), "skip"), Endpoint::Mutate);
        assert!(a["response"].get("patch").is_none(), "{a}");

        // Probable only: the pod label kubernetes.io/os=windows and an image of unknown OS.
        let mut probable = deployment("plain", "registry.contoso.com/app:1.0", json!({}));
        probable["spec"]["template"]["metadata"]["labels"]["kubernetes.io/os"] = "windows".into();
        let plain = answer(
            &w,
            &in_ns(review("CREATE", probable.clone()), "plain"),
            Endpoint::Validate,
        );
        probable["metadata"]["namespace"] = "win".into();
        let win = answer(
            &w,
            &in_ns(review("CREATE", probable), "win"),
            Endpoint::Validate,
        );
        assert_eq!(plain["response"]["allowed"], false, "{plain}");
        assert_eq!(win["response"]["allowed"], true, "{win}");
        assert!(
            warnings(&win)
                .iter()
                .any(|w| warnings::unnamed(w).starts_with("winlint: at pod creation")),
            "{win}"
        );
    }

    #[test]
    fn pod_creation_lines() {
        let l =
            |v: &[&str]| pod_creation_line(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            l(&["os", "tolerations"]),
            "winlint: at pod creation the mutating webhook adds os, tolerations"
        );
        assert_eq!(
            l(&["WIN002", "os", "WIN308"]),
            "winlint: at pod creation the mutating webhook adds os and applies the fixes of WIN002, WIN308"
        );
        assert_eq!(
            l(&["WIN002"]),
            "winlint: at pod creation the mutating webhook applies the fixes of WIN002"
        );
        // The beta label is rewritten and Linux-only fields removed, not added.
        assert_eq!(
            l(&["betaOsLabel", "os", "linuxOnlyFields"]),
            "winlint: at pod creation the mutating webhook adds os and changes betaOsLabel, linuxOnlyFields"
        );
    }
}
