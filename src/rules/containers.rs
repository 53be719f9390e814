//! WIN4xx: containers, environment, resources and identity (shared/rules.md §2.5).

use std::cmp::Ordering;

use serde_json::{Value, json};

use super::Rule;
use crate::model::labels::HYPERV_ANNOTATION;
use crate::model::meta::{Fact, Mutation, RuleOs};
use crate::model::pod::{effective_run_as_non_root, effective_run_as_user_name, is_host_process};
use crate::model::quantity;
use crate::model::windows;
use crate::model::workload::Lookup;
use crate::model::workload::{ContainerRef, PodSite};
use crate::model::{Eval, escape};
use crate::model::{Finding, Fix, FixSafety, RuleMeta, Severity, ops};
use crate::model::{KubeVersion, Runtime, Target};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            meta: &WIN401,
            check: multi_container_ws2016,
        },
        Rule {
            meta: &WIN402,
            check: hyperv_annotation,
        },
        Rule {
            meta: &WIN403,
            check: env_name_invalid,
        },
        Rule {
            meta: &WIN404,
            check: envfrom_prefix_or_keys,
        },
        Rule {
            meta: &WIN405,
            check: env_case_collision,
        },
        Rule {
            meta: &WIN406,
            check: resources_ignored_legacy,
        },
        Rule {
            meta: &WIN407,
            check: hugepages,
        },
        Rule {
            meta: &WIN408,
            check: memory_request_limit,
        },
        Rule {
            meta: &WIN409,
            check: runasnonroot_admin,
        },
        Rule {
            meta: &WIN410,
            check: udp_userspace_proxy,
        },
        Rule {
            meta: &WIN411,
            check: termination_grace_docker,
        },
    ]
}

// ---------------------------------------------------------------------------------------------
// Helpers

fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| a.as_slice())
        .unwrap_or(&[])
}

fn cptr(site: &PodSite, c: &ContainerRef, rel: &str) -> String {
    site.ptr(&format!("{}{rel}", c.rel()))
}

/// The pod's namespace for context lookups (ConfigMaps/Secrets): its own, else `default`.
fn namespace<'a>(site: &PodSite<'a>) -> &'a str {
    site.namespace
        .or_else(|| site.meta.get("namespace").and_then(Value::as_str))
        .filter(|n| !n.is_empty())
        .unwrap_or("default")
}

// ---------------------------------------------------------------------------------------------
// Environment variable names (WIN403, WIN404)

/// How the target's API server validates `env[].name` and `envFrom[].prefix`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvRegime {
    /// Before 1.8: C identifier `[A-Za-z_][A-Za-z0-9_]*`.
    CIdentifier,
    /// 1.8 – 1.29 (and 1.30 – 1.33 with the gate off): `[-._a-zA-Z][-._a-zA-Z0-9]*`, not `.`,
    /// `..` nor starting with `..` (apimachinery `IsEnvVarName`).
    Strict,
    /// `RelaxedEnvironmentVariableValidation` (1.30 alpha, 1.32 beta on by default, 1.34 GA):
    /// any printable ASCII character except `=` (`IsRelaxedEnvVarName`).
    Relaxed,
}

impl EnvRegime {
    pub fn of(target: &Target) -> EnvRegime {
        let k = target.kubernetes;
        if k.at_least(1, 34)
            || (k.at_least(1, 30) && target.gate("RelaxedEnvironmentVariableValidation"))
        {
            EnvRegime::Relaxed
        } else if k.at_least(1, 8) {
            EnvRegime::Strict
        } else {
            EnvRegime::CIdentifier
        }
    }

    /// Whether the API server accepts `name` (non-empty) under this regime.
    pub fn accepts(self, name: &str) -> bool {
        match self {
            EnvRegime::CIdentifier => is_c_identifier(name),
            EnvRegime::Strict => is_strict_env_name(name),
            EnvRegime::Relaxed => is_relaxed_env_name(name),
        }
    }

    fn rule_text(self) -> &'static str {
        match self {
            EnvRegime::CIdentifier => "must be a C identifier ([A-Za-z_][A-Za-z0-9_]*)",
            EnvRegime::Strict => {
                "must consist of alphabetic characters, digits, '_', '-' or '.', and must not start with a digit"
            }
            EnvRegime::Relaxed => "must consist only of printable ASCII characters other than '='",
        }
    }
}

fn is_c_identifier(s: &str) -> bool {
    let mut b = s.bytes();
    matches!(b.next(), Some(c) if c == b'_' || c.is_ascii_alphabetic())
        && b.all(|c| c == b'_' || c.is_ascii_alphanumeric())
}

/// apimachinery `IsEnvVarName`: `^[-._a-zA-Z][-._a-zA-Z0-9]*$` and no `.`/`..`/`..`-prefix.
pub fn is_strict_env_name(s: &str) -> bool {
    let mut b = s.bytes();
    let ok_first =
        matches!(b.next(), Some(c) if c.is_ascii_alphabetic() || matches!(c, b'-' | b'.' | b'_'));
    ok_first
        && b.all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_'))
        && s != "."
        && !s.starts_with("..")
}

/// apimachinery `IsRelaxedEnvVarName`: non-empty, printable ASCII (space included), no `=`.
pub fn is_relaxed_env_name(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|c| (0x20..=0x7e).contains(&c) && c != b'=')
}

fn gate_hint(k: KubeVersion) -> &'static str {
    if k.at_least(1, 30) && !k.at_least(1, 32) {
        " (it accepts them with the RelaxedEnvironmentVariableValidation feature gate)"
    } else if k.at_least(1, 32) && !k.at_least(1, 34) {
        " (the RelaxedEnvironmentVariableValidation gate is switched off)"
    } else {
        ""
    }
}

/// Does the container reference `$(name)` in its command, args or env values? Renaming the
/// variable would silently break the expansion.
fn referenced(c: &ContainerRef, name: &str) -> bool {
    let needle = format!("$({name})");
    let strs = |key: &str| -> bool {
        list(c.value, key)
            .iter()
            .filter_map(Value::as_str)
            .any(|s| s.contains(&needle))
    };
    strs("command")
        || strs("args")
        || list(c.value, "env").iter().any(|e| {
            e.get("value")
                .and_then(Value::as_str)
                .is_some_and(|v| v.contains(&needle))
        })
}

pub static WIN403: RuleMeta = RuleMeta {
    id: "WIN403",
    name: "env-name-invalid",
    severity: Severity::Error,
    summary: "env var name the API server rejects (typically ':' from .NET configuration keys)",
    docs: r#"## What it does
Checks `env[].name` of every container against the target API server's rule:

* before 1.30, and 1.30–1.31 without the `RelaxedEnvironmentVariableValidation` gate:
  `[-._a-zA-Z][-._a-zA-Z0-9]*` (not `.`, not starting with `..`) → **error**;
* 1.32+ (gate on by default; GA in 1.34) or 1.30–1.31 with the gate: any printable ASCII character
  except `=`. A name that only the relaxed rule accepts (`ConnectionStrings:Default`) is
  **info**: it works on this cluster but not on older ones; a name with `=` or non-ASCII
  characters stays an **error**.

## Why is this bad?
.NET / ASP.NET Core configuration keys use `:` (`Logging:LogLevel:Default`), and the seed-era
Windows guides tell users to pass them as environment variables. Older API servers reject the
whole pod ("a valid environment variable name must consist of alphabetic characters, digits, '_',
'-', or '.'"); a Deployment then never creates its pods.

## Example
```yaml
env:
- name: ConnectionStrings:Default
  valueFrom: {secretKeyRef: {name: db, key: conn}}
```

## Fix
Opt-in (`--fix-opt-in WIN403`, or the webhook's fix policy): rename `:` to `__`
(`ConnectionStrings__Default`). .NET configuration binding maps `__` to `:`, so ASP.NET Core
applications read the same key; other applications read exact names, so the rename is never
applied silently. Not offered when `$(NAME)` references to the variable exist or the new name
is taken.
"#,
    fix: Some(FixSafety::OptIn),
    source: "seed, K-OLD11, KEP4369, VAL, VAL-T",
    applies: "all (error K<1.30 or 1.30–1.31 without the gate; info with relaxed validation)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn env_name_invalid(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let regime = EnvRegime::of(eval.target);
    let k = eval.target.kubernetes;
    let mut out = Vec::new();
    for c in site.containers() {
        let env = list(c.value, "env");
        for (i, e) in env.iter().enumerate() {
            let Some(name) = e.get("name").and_then(Value::as_str) else {
                continue;
            };
            // Empty names are a generic API error ("Required value"), not this rule's business.
            if name.is_empty() {
                continue;
            }
            let accepted = regime.accepts(name);
            // Accepted names are reported (info) only where the relaxed rule is what accepts
            // them: they break on every API server with the strict rule.
            if accepted && (regime != EnvRegime::Relaxed || is_strict_env_name(name)) {
                continue;
            }
            let p = cptr(site, &c, &format!("/env/{i}/name"));
            let (sev, mut msg) = if !accepted {
                (
                    Severity::Error,
                    format!(
                        "{} env var name {name:?} is rejected by the Kubernetes {k} API server: a name {}{}",
                        c.label(),
                        regime.rule_text(),
                        if regime == EnvRegime::Relaxed {
                            ""
                        } else {
                            gate_hint(k)
                        }
                    ),
                )
            } else {
                (
                    Severity::Info,
                    format!(
                        "{} env var name {name:?} is accepted by Kubernetes {k} (relaxed env var validation) but rejected by API servers before 1.32 (1.30-1.31 without the RelaxedEnvironmentVariableValidation gate)",
                        c.label()
                    ),
                )
            };
            let mut fix = None;
            if name.contains(':') {
                let new = name.replace(':', "__");
                let taken = env.iter().enumerate().any(|(j, o)| {
                    j != i
                        && o.get("name")
                            .and_then(Value::as_str)
                            .is_some_and(|n| n.eq_ignore_ascii_case(&new))
                });
                let valid = is_strict_env_name(&new)
                    && (regime != EnvRegime::CIdentifier || is_c_identifier(&new));
                if valid && !taken && !referenced(&c, name) && eval.fix_possible(site) {
                    msg.push_str(&format!(
                        "; rename it to {new:?} (.NET configuration reads `__` as `:`)"
                    ));
                    fix = Some(Fix {
                        safety: FixSafety::OptIn,
                        description: format!("rename env var {name:?} to {new:?}"),
                        ops: vec![ops::replace(&p, json!(new))],
                    });
                } else if taken {
                    msg.push_str(&format!(
                        "; {new:?} already exists in this container, rename it by hand"
                    ));
                } else if referenced(&c, name) {
                    msg.push_str(&format!(
                        "; rename it to {new:?} and update the $({name}) references"
                    ));
                } else {
                    msg.push_str("; rename it");
                }
            } else {
                msg.push_str("; rename it");
            }
            let mut f = Finding::new(&WIN403, p, msg).severity(sev);
            if let Some(fx) = fix {
                f = f.with_fix(fx);
            }
            out.push(f);
        }
    }
    out
}

pub static WIN404: RuleMeta = RuleMeta {
    id: "WIN404",
    name: "envfrom-prefix-or-keys",
    severity: Severity::Error,
    summary: "envFrom prefix the API server rejects, or ConfigMap/Secret keys the kubelet will skip",
    docs: r#"## What it does
Checks `envFrom[].prefix` of every container against the target API server's env var name rule
(as WIN403): an invalid prefix is an **error**. When the referenced ConfigMap or Secret is known
(same CLI input, or the webhook's cluster view; namespace of the pod, else `default`), reports as
a **warning** the keys that, with the prefix, are not valid env var names.

## Why is this bad?
An invalid prefix makes the API server reject the pod. Invalid keys are worse: the kubelet
silently skips them (event `InvalidEnvironmentVariableNames`) and the application starts without
the setting.

## Example
```yaml
envFrom:
- prefix: "App:"
  configMapRef: {name: cfg}
```

## Fix
Use a prefix such as `App__` (.NET maps `__` to `:`), and rename the offending keys.
"#,
    fix: None,
    source: "VAL, KEP4369, kubelet",
    applies: "as WIN403",
    os: RuleOs::Windows,
    context: &[Fact::ConfigMapAndSecretKeys],
    mutation: Mutation::DEFAULT,
};

fn envfrom_prefix_or_keys(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let regime = EnvRegime::of(eval.target);
    let k = eval.target.kubernetes;
    let ns = namespace(site);
    let mut out = Vec::new();
    for c in site.containers() {
        for (j, ef) in list(c.value, "envFrom").iter().enumerate() {
            let prefix = ef.get("prefix").and_then(Value::as_str).unwrap_or("");
            if !prefix.is_empty() && !regime.accepts(prefix) {
                let hint = if prefix.contains(':') {
                    format!(
                        "; use {:?} (.NET configuration reads `__` as `:`)",
                        prefix.replace(':', "__")
                    )
                } else {
                    String::new()
                };
                out.push(Finding::new(
                    &WIN404,
                    cptr(site, &c, &format!("/envFrom/{j}/prefix")),
                    format!(
                        "{} envFrom prefix {prefix:?} is rejected by the Kubernetes {k} API server: an env var name {}{}{hint}",
                        c.label(),
                        regime.rule_text(),
                        if regime == EnvRegime::Relaxed { "" } else { gate_hint(k) }
                    ),
                ));
                continue;
            }
            for (field, what) in [("configMapRef", "ConfigMap"), ("secretRef", "Secret")] {
                let Some(name) = ef.lookup(&format!("/{field}/name")).and_then(Value::as_str)
                else {
                    continue;
                };
                let store = if field == "configMapRef" {
                    &eval.context.config_maps
                } else {
                    &eval.context.secrets
                };
                let Some(keys) = store.get(&(ns.to_string(), name.to_string())) else {
                    continue;
                };
                let bad: Vec<String> = keys
                    .iter()
                    .map(|key| format!("{prefix}{key}"))
                    .filter(|n| !regime.accepts(n))
                    .collect();
                if bad.is_empty() {
                    continue;
                }
                out.push(
                    Finding::new(
                        &WIN404,
                        cptr(site, &c, &format!("/envFrom/{j}/{field}")),
                        format!(
                            "{} imports {what} {ns}/{name}, but {} {} not valid env var names on Kubernetes {k} and the kubelet skips {} (event InvalidEnvironmentVariableNames): {}. Rename the keys{}",
                            c.label(),
                            bad.len(),
                            if bad.len() == 1 { "is" } else { "are" },
                            if bad.len() == 1 { "it" } else { "them" },
                            bad.iter().map(|b| format!("{b:?}")).collect::<Vec<_>>().join(", "),
                            if prefix.is_empty() { "" } else { " or the prefix" }
                        ),
                    )
                    .severity(Severity::Warning),
                );
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// WIN405

pub static WIN405: RuleMeta = RuleMeta {
    id: "WIN405",
    name: "env-case-collision",
    severity: Severity::Warning,
    summary: "Two env vars of one container that differ only in case (Windows env names are case-insensitive)",
    docs: r#"## What it does
Reports `env[].name` entries of a container that equal an earlier entry when case is ignored
(`Path` and `PATH`).

## Why is this bad?
Kubernetes treats the names as different variables; Windows environment names are
case-insensitive, so one value silently overwrites the other — and overriding `PATH` with a
differently-cased `Path` can replace the system search path.

## Example
```yaml
env:
- {name: Path, value: 'C:\app'}
- {name: PATH, value: 'C:\tools'}
```

## Fix
Keep one of the two entries.
"#,
    fix: None,
    source: "Windows semantics",
    applies: "all",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn env_case_collision(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    for c in site.containers() {
        // Case-folded name → the distinct spellings seen so far, in order (linear: a container
        // may carry thousands of env vars).
        let mut seen: std::collections::HashMap<String, Vec<&str>> =
            std::collections::HashMap::new();
        for (i, e) in list(c.value, "env").iter().enumerate() {
            let Some(name) = e.get("name").and_then(Value::as_str) else {
                continue;
            };
            let spellings = seen.entry(name.to_lowercase()).or_default();
            if let Some(first) = spellings.iter().find(|raw| **raw != name) {
                out.push(Finding::new(
                    &WIN405,
                    cptr(site, &c, &format!("/env/{i}/name")),
                    format!(
                        "{} sets env vars {first:?} and {name:?}, which are the same variable on Windows (names are case-insensitive); one overwrites the other. Keep one",
                        c.label()
                    ),
                ));
            }
            if !spellings.contains(&name) {
                spellings.push(name);
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Resources (WIN406–WIN408)

fn nonempty_map(v: Option<&Value>) -> bool {
    v.and_then(Value::as_object).is_some_and(|m| !m.is_empty())
}

pub static WIN406: RuleMeta = RuleMeta {
    id: "WIN406",
    name: "resources-ignored-legacy",
    severity: Severity::Warning,
    summary: "Container CPU/memory resources are ignored on Windows before Kubernetes 1.10",
    docs: r#"## What it does
On targets older than Kubernetes 1.10, reports containers with `resources.limits` or
`resources.requests`.

## Why is this bad?
Windows nodes honour container CPU and memory settings only from Kubernetes 1.10. Before, the
limits are not enforced: a container can use the whole node, and requests only affect
scheduling.

## Example
```yaml
resources:
  limits: {cpu: 500m, memory: 512Mi}
```

## Fix
Upgrade to Kubernetes 1.10 or newer, or size the nodes for unbounded containers.
"#,
    fix: None,
    source: "seed",
    applies: "K<1.10",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn resources_ignored_legacy(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let k = eval.target.kubernetes;
    if k.at_least(1, 10) {
        return Vec::new();
    }
    site.containers()
        .filter(|c| {
            let r = c.value.get("resources");
            nonempty_map(r.and_then(|r| r.get("limits")))
                || nonempty_map(r.and_then(|r| r.get("requests")))
        })
        .map(|c| {
            Finding::new(
                &WIN406,
                cptr(site, &c, "/resources"),
                format!(
                    "{} sets CPU/memory resources, which Windows nodes on Kubernetes {k} do not enforce (supported from 1.10); the container is unbounded",
                    c.label()
                ),
            )
        })
        .collect()
}

pub static WIN407: RuleMeta = RuleMeta {
    id: "WIN407",
    name: "hugepages",
    severity: Severity::Error,
    summary: "hugepages-* resources (not supported on Windows)",
    docs: r#"## What it does
Reports `hugepages-*` keys in `resources.limits` / `resources.requests` of every container and of
the pod-level `spec.resources`.

## Why is this bad?
Windows nodes do not support HugePages: the node advertises no `hugepages-*` capacity, so the pod
never schedules (or the kubelet rejects it).

## Example
```yaml
resources:
  limits: {hugepages-2Mi: 100Mi, memory: 200Mi}
```

## Fix
Remove the hugepages resources.
"#,
    fix: None,
    source: "K-INTRO",
    applies: "all",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn hugepages(site: &PodSite, _eval: &Eval) -> Vec<Finding> {
    let mut out = Vec::new();
    // `base` and `who` (pointer and words) are only built for resources that have HugePages.
    let mut scan = |res: Option<&Value>, base: &dyn Fn() -> String, who: &dyn Fn() -> String| {
        for part in ["limits", "requests"] {
            let Some(m) = res.and_then(|r| r.get(part)).and_then(Value::as_object) else {
                continue;
            };
            for key in m.keys().filter(|k| k.starts_with("hugepages-")) {
                out.push(Finding::new(
                    &WIN407,
                    format!("{}/{part}/{}", base(), escape(key)),
                    format!(
                        "{} {part} {key}; Windows nodes do not support HugePages, so the pod cannot be scheduled. Remove it",
                        who()
                    ),
                ));
            }
        }
    };
    scan(site.get("/resources"), &|| site.ptr("/resources"), &|| {
        "the pod's resources".into()
    });
    for c in site.containers() {
        scan(
            c.value.get("resources"),
            &|| cptr(site, &c, "/resources"),
            &|| format!("{} resources", c.label()),
        );
    }
    out
}

pub static WIN408: RuleMeta = RuleMeta {
    id: "WIN408",
    name: "memory-request-limit",
    severity: Severity::Warning,
    summary: "Memory request lower than the memory limit (Windows pages instead of OOM-killing)",
    docs: r#"## What it does
Reports containers whose `resources.requests.memory` is set and lower than
`resources.limits.memory` (quantities compared exactly: `512Mi` < `1Gi`, `1G` = `1000M`,
`1e9` = `1G`). A container without a memory limit is not reported.

## Why is this bad?
Windows has no OOM killer: a container that uses more than its request is not killed, the node
pages to disk and every pod on it slows down. The scheduler packs nodes by requests, so a request
below the limit over-commits memory that Windows cannot reclaim. The Windows resource management
guidance is to "set a limit and leave the memory request unspecified, or set the request equal to
the limit".

## Example
```yaml
resources:
  requests: {memory: 512Mi}
  limits: {memory: 1Gi}
```

## Fix
Set `requests.memory` equal to `limits.memory`, or remove the request (it then defaults to the
limit).
"#,
    fix: None,
    source: "K-INTRO (resource management)",
    applies: "K≥1.10",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn memory_request_limit(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !eval.target.kubernetes.at_least(1, 10) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for c in site.containers() {
        let req = c.value.lookup("/resources/requests/memory");
        let lim = c.value.lookup("/resources/limits/memory");
        let (Some((rq, rs)), Some((lq, ls))) = (
            req.and_then(quantity::of_value),
            lim.and_then(quantity::of_value),
        ) else {
            continue;
        };
        if rq.cmp(&lq) != Ordering::Less {
            continue;
        }
        out.push(Finding::new(
            &WIN408,
            cptr(site, &c, "/resources/requests/memory"),
            format!(
                "{} requests {rs} of memory but is limited to {ls}; Windows has no OOM killer and pages to disk when nodes over-commit. Set requests.memory equal to limits.memory ({ls}) or remove the request",
                c.label()
            ),
        ));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// WIN409

/// Whether the image's default user is `ContainerAdministrator`: Windows Server Core, Server and
/// the full Windows base images and images built on them (`*windowsservercore*`, .NET Framework).
/// Nano Server's default user is `ContainerUser`; anything else is unknown (`false`).
pub fn image_default_user_is_admin(image: &str) -> bool {
    let img = image.to_ascii_lowercase();
    let name = img.split('@').next().unwrap_or(&img);
    // Drop the tag (a ':' after the last '/').
    let repo = match name.rfind(':') {
        Some(i) if i > name.rfind('/').unwrap_or(0) => &name[..i],
        _ => name,
    };
    if img.contains("nanoserver") {
        return false;
    }
    img.contains("servercore")
        || repo.contains("dotnet/framework/")
        || matches!(
            repo,
            "mcr.microsoft.com/windows" | "mcr.microsoft.com/windows/server"
        )
}

pub static WIN409: RuleMeta = RuleMeta {
    id: "WIN409",
    name: "runasnonroot-admin",
    severity: Severity::Error,
    summary: "runAsNonRoot: true with the ContainerAdministrator user (the kubelet refuses to start it)",
    docs: r#"## What it does
For every container with effective `runAsNonRoot: true` (its own `securityContext`, else the
pod's):

* effective `windowsOptions.runAsUserName` equal to `ContainerAdministrator` (any case) →
  **error**;
* no `runAsUserName` at all and a Server Core / Server / Windows based image, whose default user
  is `ContainerAdministrator` → **warning**. Nano Server images run as `ContainerUser` and are
  fine.

HostProcess containers are left to WIN204.

## Why is this bad?
The kubelet's `verifyRunAsNonRoot` on Windows treats `ContainerAdministrator` as root: the
container never starts ("container's runAsUserName (ContainerAdministrator) which will be
regarded as root identity and will break non-root policy").

## Example
```yaml
securityContext:
  runAsNonRoot: true
  windowsOptions: {runAsUserName: ContainerAdministrator}
```

## Fix
Opt-in: set `windowsOptions.runAsUserName: ContainerUser` (check that the application can run
without administrator rights).
"#,
    fix: Some(FixSafety::OptIn),
    source: "KL-SC",
    applies: "all",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

/// Ops that set `securityContext.windowsOptions.runAsUserName` of container `c`, creating the
/// objects on the way.
fn set_container_user_ops(
    site: &PodSite,
    c: &ContainerRef,
    user: &str,
) -> Vec<json_patch::PatchOperation> {
    let sc = c.value.get("securityContext").filter(|v| v.is_object());
    let wo = sc
        .and_then(|s| s.get("windowsOptions"))
        .filter(|v| v.is_object());
    let op = match (sc, wo) {
        (_, Some(_)) => ops::add(
            &cptr(site, c, "/securityContext/windowsOptions/runAsUserName"),
            json!(user),
        ),
        (Some(_), None) => ops::add(
            &cptr(site, c, "/securityContext/windowsOptions"),
            json!({"runAsUserName": user}),
        ),
        (None, None) => ops::add(
            &cptr(site, c, "/securityContext"),
            json!({"windowsOptions": {"runAsUserName": user}}),
        ),
    };
    vec![op]
}

fn runasnonroot_admin(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    for c in site.containers() {
        if is_host_process(site, &c) {
            continue;
        }
        let Some(rnr) = effective_run_as_non_root(site, &c).filter(|e| e.value) else {
            continue;
        };
        match effective_run_as_user_name(site, &c) {
            Some(user) if user.value.eq_ignore_ascii_case("ContainerAdministrator") => {
                if out.iter().any(|f| f.pointer == user.pointer) {
                    continue;
                }
                let mut f = Finding::new(
                    &WIN409,
                    user.pointer.clone(),
                    format!(
                        "{} runs as {:?} with runAsNonRoot: true; the kubelet regards ContainerAdministrator as root and refuses to start the container. Use runAsUserName: ContainerUser, or drop runAsNonRoot",
                        c.label(),
                        user.value
                    ),
                );
                if eval.fix_possible(site) {
                    f = f.with_fix(Fix {
                        safety: FixSafety::OptIn,
                        description: format!(
                            "set runAsUserName to ContainerUser at {}",
                            crate::model::pod::dotted(&user.pointer)
                        ),
                        ops: vec![ops::replace(&user.pointer, json!("ContainerUser"))],
                    });
                }
                out.push(f);
            }
            Some(_) => {}
            None => {
                let image = c.image().unwrap_or("");
                if !image_default_user_is_admin(image) {
                    continue;
                }
                let mut f = Finding::new(
                    &WIN409,
                    cptr(site, &c, "/image"),
                    format!(
                        "{} sets runAsNonRoot: true ({}) without runAsUserName, and image {image} runs as ContainerAdministrator by default; the kubelet will refuse to start it. Set windowsOptions.runAsUserName: ContainerUser",
                        c.label(),
                        crate::model::pod::dotted(&rnr.pointer)
                    ),
                )
                .severity(Severity::Warning);
                if eval.fix_possible(site) {
                    f = f.with_fix(Fix {
                        safety: FixSafety::OptIn,
                        description: format!("set runAsUserName: ContainerUser in {}", c.label()),
                        ops: set_container_user_ops(site, &c, "ContainerUser"),
                    });
                }
                out.push(f);
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// WIN401, WIN402 (legacy platform limits)

pub static WIN401: RuleMeta = RuleMeta {
    id: "WIN401",
    name: "multi-container-ws2016",
    severity: Severity::Error,
    summary: "More than one container per pod on Windows Server 2016 nodes",
    docs: r#"## What it does
When the target has Windows Server 2016 (10.0.14393) nodes, reports pods with more than one
container (error) and pods with init containers (warning).

## Why is this bad?
"Only Windows Server 1709 or later versions support running multiple containers in a Pod": on
WS2016 the containers of a pod cannot share the pod's network namespace, so the pod fails.

## Example
```yaml
spec:
  containers:
  - {name: web, image: microsoft/iis:windowsservercore-ltsc2016}
  - {name: logger, image: microsoft/windowsservercore:ltsc2016}
```

## Fix
Split the containers into separate pods, or move to Windows Server 1709/2019 or newer nodes.
"#,
    fix: None,
    source: "seed, K-OLD11",
    applies: "W=14393",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn multi_container_ws2016(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if !eval.target.windows_builds.contains(&windows::WS2016) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let n = list(site.spec, "containers").len();
    if n > 1 {
        out.push(Finding::new(
            &WIN401,
            site.ptr("/containers"),
            format!(
                "pod has {n} containers, but Windows Server 2016 (10.0.14393) runs only one container per pod; split them into separate pods or use 1709/2019+ nodes"
            ),
        ));
    }
    if !list(site.spec, "initContainers").is_empty() {
        out.push(
            Finding::new(
                &WIN401,
                site.ptr("/initContainers"),
                "pod has init containers, but Windows Server 2016 (10.0.14393) supports only one container per pod; init containers may fail there. Move the init step into the image or use 1709/2019+ nodes",
            )
            .severity(Severity::Warning),
        );
    }
    out
}

pub static WIN402: RuleMeta = RuleMeta {
    id: "WIN402",
    name: "hyperv-annotation",
    severity: Severity::Warning,
    summary: "experimental.windows.kubernetes.io/isolation-type: hyperv (ignored, single-container only, or removed)",
    docs: r#"## What it does
Checks the annotation `experimental.windows.kubernetes.io/isolation-type: hyperv`:

* Kubernetes < 1.10: not implemented, ignored → warning;
* 1.10–1.20: needs the kubelet gate `HyperVContainer=true` (warning when the target does not
  enable it) and supports exactly one container → **error** with more than one;
* ≥ 1.21: removed, no effect → warning.

## Why is this bad?
The pod silently runs with process isolation (the image build must then match the host), or is
rejected for having several containers.

## Example
```yaml
metadata:
  annotations:
    experimental.windows.kubernetes.io/isolation-type: hyperv
```

## Fix
Kubernetes ≥ 1.21, opt-in: replace the annotation with `runtimeClassName` of the configured
Hyper-V RuntimeClass (handler `runhcs-wcow-hypervisor`, containerd ≥ 1.7).
"#,
    fix: Some(FixSafety::OptIn),
    source: "PR58751, PR95505, PR97141, WT, E2E-HV",
    applies: "all (error K1.10–1.20 with >1 container)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn hyperv_annotation(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if site.annotation(HYPERV_ANNOTATION) != Some("hyperv") {
        return Vec::new();
    }
    let k = eval.target.kubernetes;
    let p = site.meta_ptr(&format!("/annotations/{}", escape(HYPERV_ANNOTATION)));
    let n = list(site.spec, "containers").len();
    if !k.at_least(1, 10) {
        return vec![Finding::new(
            &WIN402,
            p,
            format!(
                "the Hyper-V isolation annotation is ignored before Kubernetes 1.10 (target {k}); the pod runs with process isolation, so its image must match the host build"
            ),
        )];
    }
    if !k.at_least(1, 21) {
        if n > 1 {
            return vec![
                Finding::new(
                    &WIN402,
                    p,
                    format!(
                        "Hyper-V isolation via annotation supports exactly one container per pod on Kubernetes 1.10-1.20, this pod has {n}; split the pod or remove the annotation"
                    ),
                )
                .severity(Severity::Error),
            ];
        }
        if !eval.target.gate("HyperVContainer") {
            return vec![Finding::new(
                &WIN402,
                p,
                "the Hyper-V isolation annotation only works with the kubelet feature gate HyperVContainer=true, which the target does not enable; without it the pod runs with process isolation",
            )];
        }
        return Vec::new();
    }
    let rc = &eval.target.hyperv_runtime_class;
    let mut f = Finding::new(
        &WIN402,
        p.clone(),
        format!(
            "the Hyper-V isolation annotation was removed in Kubernetes 1.21 and has no effect on {k}; the pod runs with process isolation. Use runtimeClassName: {rc} (handler runhcs-wcow-hypervisor, containerd 1.7+)"
        ),
    );
    let current = site.str("/runtimeClassName");
    if eval.fix_possible(site) && site.spec.is_object() && current.is_none_or(|c| c == rc) {
        let mut fix_ops = vec![ops::remove(&p)];
        if current.is_none() {
            fix_ops.push(ops::add(&site.ptr("/runtimeClassName"), json!(rc)));
        }
        f = f.with_fix(Fix {
            safety: FixSafety::OptIn,
            description: format!("replace the Hyper-V annotation with runtimeClassName {rc}"),
            ops: fix_ops,
        });
    }
    vec![f]
}

// ---------------------------------------------------------------------------------------------
// WIN410, WIN411

pub static WIN410: RuleMeta = RuleMeta {
    id: "WIN410",
    name: "udp-userspace-proxy",
    severity: Severity::Warning,
    summary: "UDP container ports with the userspace kube-proxy of Kubernetes ≤ 1.13 (netsh portproxy is TCP-only)",
    docs: r#"## What it does
On Kubernetes ≤ 1.13 targets, reports container ports with `protocol: UDP`.

## Why is this bad?
The seed-era Windows kube-proxy ran in userspace mode on `netsh portproxy`, which forwards TCP
only: Services cannot reach UDP ports of Windows pods.

## Example
```yaml
ports:
- {containerPort: 53, protocol: UDP}
```

## Fix
Use TCP, or move to Kubernetes 1.14+ (kernel-mode kube-proxy on Windows).
"#,
    fix: None,
    source: "seed",
    applies: "K≤1.13 (userspace kube-proxy)",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn udp_userspace_proxy(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if eval.target.kubernetes.at_least(1, 14) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for c in site.containers() {
        for (i, port) in list(c.value, "ports").iter().enumerate() {
            if port.get("protocol").and_then(Value::as_str) != Some("UDP") {
                continue;
            }
            out.push(Finding::new(
                &WIN410,
                cptr(site, &c, &format!("/ports/{i}/protocol")),
                format!(
                    "{} exposes UDP port {}; the userspace kube-proxy of Kubernetes {} on Windows forwards TCP only (netsh portproxy), so Services cannot reach it",
                    c.label(),
                    port.get("containerPort").map(Value::to_string).unwrap_or_default(),
                    eval.target.kubernetes
                ),
            ));
        }
    }
    out
}

/// The API server's default `terminationGracePeriodSeconds`.
const DEFAULT_GRACE: i64 = 30;

pub static WIN411: RuleMeta = RuleMeta {
    id: "WIN411",
    name: "termination-grace-docker",
    severity: Severity::Info,
    summary: "terminationGracePeriodSeconds is not honoured on Windows with the Docker runtime",
    docs: r#"## What it does
With the Docker runtime, reports `spec.terminationGracePeriodSeconds` when set to a value other
than the API server's default (30).

## Why is this bad?
Docker on Windows sends `CTRL_SHUTDOWN_EVENT` and kills the container after its own timeout
(5 seconds by registry default), whatever the pod asks for: graceful shutdown longer than that
does not happen.

## Example
```yaml
spec:
  terminationGracePeriodSeconds: 120
```

## Fix
Use containerd (which honours the grace period), or make shutdown complete within 5 seconds.
"#,
    fix: None,
    source: "K-INTRO, KEP116",
    applies: "runtime=docker",
    os: RuleOs::Windows,
    context: &[],
    mutation: Mutation::DEFAULT,
};

fn termination_grace_docker(site: &PodSite, eval: &Eval) -> Vec<Finding> {
    if eval.target.runtime != Runtime::Docker {
        return Vec::new();
    }
    let Some(g) = site
        .get("/terminationGracePeriodSeconds")
        .and_then(Value::as_i64)
    else {
        return Vec::new();
    };
    if g == DEFAULT_GRACE {
        return Vec::new();
    }
    vec![Finding::new(
        &WIN411,
        site.ptr("/terminationGracePeriodSeconds"),
        format!(
            "terminationGracePeriodSeconds {g} is not honoured by Docker on Windows (containers get CTRL_SHUTDOWN_EVENT and are killed after about 5 s); use containerd or shut down within 5 s"
        ),
    )]
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::config::Config;
    use crate::engine::fix::apply_fixes;
    use crate::engine::lint_object;
    use crate::model::Context;
    use crate::model::Operation;
    use crate::rules::testutil::{
        at, cfg, findings, fixed, has_fix, hits, ids_in, legacy, set, unset, winok,
    };

    /// This module's rules and volumes.rs' (other modules' rules are asserted by their tests).
    const OWN: &[&str] = &["WIN3", "WIN4"];

    fn hit(sev: Severity, p: &str) -> Vec<(Severity, String)> {
        vec![(sev, p.to_string())]
    }

    fn with_env(env: Value) -> Value {
        set(winok(), "/spec/containers/0/env", env)
    }

    fn second_container(pod: Value, image: &str) -> Value {
        set(
            pod,
            "/spec/containers/1",
            json!({"name":"side","image":image}),
        )
    }

    // --- §6 vectors -------------------------------------------------------------------------

    #[test]
    fn t29_colon_env_name_by_version() {
        let pod = with_env(json!([{"name":"ConnectionStrings:Default","value":"x"}]));
        let p = "/spec/containers/0/env/0/name";
        assert_eq!(ids_in(&pod, &cfg(), OWN), vec!["WIN403"]);
        assert_eq!(hits(&pod, &cfg(), "WIN403"), hit(Severity::Error, p));
        assert_eq!(hits(&pod, &at(32), "WIN403"), hit(Severity::Info, p));
        let mut gated = cfg();
        gated
            .target
            .feature_gates
            .insert("RelaxedEnvironmentVariableValidation".into(), true);
        assert_eq!(hits(&pod, &gated, "WIN403"), hit(Severity::Info, p));
        // Opt-in fix `:` → `__`, offered in both regimes.
        let f = fixed(&pod, &cfg(), "WIN403");
        assert_eq!(
            f["spec"]["containers"][0]["env"][0]["name"],
            "ConnectionStrings__Default"
        );
        assert_eq!(ids_in(&f, &cfg(), OWN), Vec::<&str>::new());
        assert!(has_fix(&pod, &at(32), "WIN403"));
        // Never applied silently; applied with --fix-opt-in WIN403.
        let c = cfg();
        let fs = findings(&pod, &c);
        let mut obj = pod.clone();
        assert!(apply_fixes(&mut obj, &fs, &c).1.is_empty());
        let mut opt = cfg();
        opt.policy.fix_opt_in.insert("WIN403".into());
        let mut obj = pod.clone();
        assert_eq!(apply_fixes(&mut obj, &fs, &opt).1, vec!["WIN403"]);
        assert_eq!(obj, f);
    }

    #[test]
    fn t30_double_underscore_is_fine() {
        let pod = with_env(json!([{"name":"ConnectionStrings__Default",
            "valueFrom":{"secretKeyRef":{"name":"db","key":"conn"}}}]));
        assert_eq!(ids_in(&pod, &cfg(), OWN), Vec::<&str>::new());
        assert_eq!(ids_in(&pod, &legacy(), OWN), Vec::<&str>::new());
    }

    #[test]
    fn t31_envfrom_prefix() {
        let pod = set(
            winok(),
            "/spec/containers/0/envFrom",
            json!([{"prefix":"App:","configMapRef":{"name":"cfg"}}]),
        );
        assert_eq!(ids_in(&pod, &cfg(), OWN), vec!["WIN404"]);
        assert_eq!(
            hits(&pod, &cfg(), "WIN404"),
            hit(Severity::Error, "/spec/containers/0/envFrom/0/prefix")
        );
        // Accepted by relaxed validation.
        assert!(hits(&pod, &at(32), "WIN404").is_empty());
        // `=` is never accepted.
        let eq = set(pod, "/spec/containers/0/envFrom/0/prefix", json!("A="));
        assert_eq!(hits(&eq, &at(34), "WIN404")[0].0, Severity::Error);
    }

    #[test]
    fn t32_case_collision() {
        let pod = with_env(json!([{"name":"Path","value":"a"},{"name":"PATH","value":"b"}]));
        assert_eq!(ids_in(&pod, &cfg(), OWN), vec!["WIN405"]);
        assert_eq!(
            hits(&pod, &cfg(), "WIN405"),
            hit(Severity::Warning, "/spec/containers/0/env/1/name")
        );
        // Exact duplicates and different names are not Windows findings.
        let dup = with_env(json!([{"name":"PATH","value":"a"},{"name":"PATH","value":"b"}]));
        assert!(hits(&dup, &cfg(), "WIN405").is_empty());
        // Across containers no collision.
        let two = set(
            with_env(json!([{"name":"Path","value":"a"}])),
            "/spec/containers/1",
            json!({"name":"b","image":"mcr.microsoft.com/windows/servercore:ltsc2022",
                "env":[{"name":"PATH","value":"b"}]}),
        );
        assert!(hits(&two, &cfg(), "WIN405").is_empty());
    }

    fn t33_pod() -> Value {
        json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"two"},"spec":{
            "nodeSelector":{"beta.kubernetes.io/os":"windows"},
            "containers":[
                {"name":"a","image":"microsoft/windowsservercore:ltsc2016"},
                {"name":"b","image":"microsoft/windowsservercore:ltsc2016"}]}})
    }

    #[test]
    fn t33_two_containers_on_ws2016() {
        let mut t = legacy();
        t.target.windows_builds = vec![windows::WS2016];
        // Expected [WIN401, WIN504]; WIN504 belongs to the image rules.
        assert_eq!(ids_in(&t33_pod(), &t, OWN), vec!["WIN401"]);
        assert_eq!(
            hits(&t33_pod(), &t, "WIN401"),
            hit(Severity::Error, "/spec/containers")
        );
        // 1709 runs several containers per pod.
        assert!(hits(&t33_pod(), &legacy(), "WIN401").is_empty());
        // Init containers: warning.
        let init = set(
            unset(t33_pod(), "/spec/containers/1"),
            "/spec/initContainers",
            json!([{"name":"i","image":"microsoft/windowsservercore:ltsc2016"}]),
        );
        let init = set(
            init,
            "/spec/containers",
            json!([{"name":"a","image":"microsoft/windowsservercore:ltsc2016"}]),
        );
        assert_eq!(
            hits(&init, &t, "WIN401"),
            hit(Severity::Warning, "/spec/initContainers")
        );
    }

    #[test]
    fn t34_two_containers_modern() {
        let pod = second_container(winok(), "mcr.microsoft.com/windows/servercore:ltsc2022");
        assert_eq!(ids_in(&pod, &cfg(), OWN), Vec::<&str>::new());
    }

    fn hyperv(pod: Value) -> Value {
        set(
            pod,
            "/metadata/annotations",
            json!({HYPERV_ANNOTATION: "hyperv"}),
        )
    }

    #[test]
    fn t35_hyperv_annotation() {
        let pod = hyperv(
            json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"hv"},"spec":{
            "nodeSelector":{"beta.kubernetes.io/os":"windows"},
            "containers":[
                {"name":"a","image":"mcr.microsoft.com/windows/servercore:1803"},
                {"name":"b","image":"mcr.microsoft.com/windows/servercore:1803"}]}}),
        );
        let mut t = at(12);
        t.target.windows_builds = vec![windows::V1803];
        t.target.windows_taints = Vec::new();
        let p = "/metadata/annotations/experimental.windows.kubernetes.io~1isolation-type";
        assert_eq!(ids_in(&pod, &t, OWN), vec!["WIN402"]);
        assert_eq!(hits(&pod, &t, "WIN402"), hit(Severity::Error, p));
        // Same annotation on WINOK with two containers, default target: removed → warning.
        let modern = hyperv(second_container(
            winok(),
            "mcr.microsoft.com/windows/servercore:ltsc2022",
        ));
        assert_eq!(ids_in(&modern, &cfg(), OWN), vec!["WIN402"]);
        assert_eq!(hits(&modern, &cfg(), "WIN402"), hit(Severity::Warning, p));
    }

    #[test]
    fn win402_versions_and_fix() {
        let one = hyperv(winok());
        let p = "/metadata/annotations/experimental.windows.kubernetes.io~1isolation-type";
        // < 1.10: ignored.
        assert_eq!(hits(&one, &at(9), "WIN402"), hit(Severity::Warning, p));
        // 1.10–1.20, one container: needs the kubelet gate.
        assert_eq!(hits(&one, &at(12), "WIN402"), hit(Severity::Warning, p));
        let mut gate = at(12);
        gate.target
            .feature_gates
            .insert("HyperVContainer".into(), true);
        assert!(hits(&one, &gate, "WIN402").is_empty());
        assert!(!has_fix(&one, &at(12), "WIN402"));
        // ≥ 1.21: opt-in replacement by the Hyper-V RuntimeClass.
        let f = fixed(&one, &cfg(), "WIN402");
        assert_eq!(f["spec"]["runtimeClassName"], "runhcs-wcow-hypervisor");
        assert_eq!(f["metadata"]["annotations"], json!({}));
        // Another RuntimeClass already chosen: no fix.
        let other = set(one.clone(), "/spec/runtimeClassName", json!("windows-2019"));
        assert!(!has_fix(&other, &cfg(), "WIN402"));
        // Not "hyperv": nothing.
        let proc = set(
            winok(),
            "/metadata/annotations",
            json!({HYPERV_ANNOTATION: "process"}),
        );
        assert!(hits(&proc, &cfg(), "WIN402").is_empty());
        // Deployment template: pointer into the template metadata.
        let dep = json!({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
            "spec":{"template":{"metadata":one["metadata"].clone(),"spec":one["spec"].clone()}}});
        assert_eq!(
            hits(&dep, &cfg(), "WIN402")[0].1,
            "/spec/template/metadata/annotations/experimental.windows.kubernetes.io~1isolation-type"
        );
        let fd = fixed(&dep, &cfg(), "WIN402");
        assert_eq!(
            fd["spec"]["template"]["spec"]["runtimeClassName"],
            "runhcs-wcow-hypervisor"
        );
    }

    #[test]
    fn t44_runasnonroot_containeradministrator() {
        let pod = set(
            winok(),
            "/spec/securityContext",
            json!({"runAsNonRoot":true,"windowsOptions":{"runAsUserName":"containeradministrator"}}),
        );
        assert_eq!(ids_in(&pod, &cfg(), OWN), vec!["WIN409"]);
        assert_eq!(
            hits(&pod, &cfg(), "WIN409"),
            hit(
                Severity::Error,
                "/spec/securityContext/windowsOptions/runAsUserName"
            )
        );
        let f = fixed(&pod, &cfg(), "WIN409");
        assert_eq!(
            f["spec"]["securityContext"]["windowsOptions"]["runAsUserName"],
            "ContainerUser"
        );
        assert_eq!(ids_in(&f, &cfg(), OWN), Vec::<&str>::new());
        // One finding for the pod-level field even with several containers.
        let two = second_container(pod.clone(), "mcr.microsoft.com/windows/nanoserver:ltsc2022");
        assert_eq!(hits(&two, &cfg(), "WIN409").len(), 1);
        // A container-level user overrides the pod's.
        let own_user = set(
            pod.clone(),
            "/spec/containers/0/securityContext",
            json!({"windowsOptions":{"runAsUserName":"ContainerUser"}}),
        );
        assert!(hits(&own_user, &cfg(), "WIN409").is_empty());
        // A container-level runAsNonRoot: false overrides the pod's.
        let off = set(
            pod,
            "/spec/containers/0/securityContext",
            json!({"runAsNonRoot":false}),
        );
        assert!(hits(&off, &cfg(), "WIN409").is_empty());
    }

    #[test]
    fn t45_nanoserver_runasnonroot_is_fine() {
        let pod = set(
            winok(),
            "/spec/containers/0/image",
            json!("mcr.microsoft.com/windows/nanoserver:ltsc2022"),
        );
        let pod = set(pod, "/spec/securityContext", json!({"runAsNonRoot":true}));
        assert_eq!(ids_in(&pod, &cfg(), OWN), Vec::<&str>::new());
    }

    #[test]
    fn win409_servercore_default_user_warning_and_fix() {
        let pod = set(
            winok(),
            "/spec/securityContext",
            json!({"runAsNonRoot":true}),
        );
        assert_eq!(
            hits(&pod, &cfg(), "WIN409"),
            hit(Severity::Warning, "/spec/containers/0/image")
        );
        let f = fixed(&pod, &cfg(), "WIN409");
        assert_eq!(
            f["spec"]["containers"][0]["securityContext"],
            json!({"windowsOptions":{"runAsUserName":"ContainerUser"}})
        );
        assert!(hits(&f, &cfg(), "WIN409").is_empty());
        // Existing container securityContext / windowsOptions objects are kept.
        let sc = set(
            pod.clone(),
            "/spec/containers/0/securityContext",
            json!({"windowsOptions":{"gmsaCredentialSpecName":"gmsa"}}),
        );
        let f = fixed(&sc, &cfg(), "WIN409");
        assert_eq!(
            f["spec"]["containers"][0]["securityContext"]["windowsOptions"],
            json!({"gmsaCredentialSpecName":"gmsa","runAsUserName":"ContainerUser"})
        );
        // HostProcess containers are WIN204's business.
        let hp = set(
            pod.clone(),
            "/spec/securityContext/windowsOptions",
            json!({"hostProcess":true,"runAsUserName":"NT AUTHORITY\\SYSTEM"}),
        );
        assert!(hits(&hp, &cfg(), "WIN409").is_empty());
        // Fixes are not offered when an existing Pod is updated (its spec is immutable).
        let upd = lint_object(&pod, &cfg(), &Context::default(), Operation::Update);
        assert!(upd.findings.iter().all(|f| f.fix.is_none()));
        assert!(image_default_user_is_admin(
            "mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2022"
        ));
        assert!(image_default_user_is_admin(
            "mcr.microsoft.com/windows/server:ltsc2025"
        ));
        assert!(!image_default_user_is_admin(
            "mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022"
        ));
        assert!(!image_default_user_is_admin("contoso/app:1.0-ltsc2019"));
    }

    #[test]
    fn t47_hugepages() {
        let pod = set(
            winok(),
            "/spec/containers/0/resources",
            json!({"limits":{"hugepages-2Mi":"100Mi","memory":"200Mi"}}),
        );
        assert_eq!(ids_in(&pod, &cfg(), OWN), vec!["WIN407"]);
        assert_eq!(
            hits(&pod, &cfg(), "WIN407"),
            hit(
                Severity::Error,
                "/spec/containers/0/resources/limits/hugepages-2Mi"
            )
        );
        let podlevel = set(
            winok(),
            "/spec/resources",
            json!({"requests":{"hugepages-1Gi":"1Gi"}}),
        );
        assert_eq!(
            hits(&podlevel, &cfg(), "WIN407"),
            hit(Severity::Error, "/spec/resources/requests/hugepages-1Gi")
        );
    }

    // --- per-rule -----------------------------------------------------------------------------

    #[test]
    fn win403_regimes() {
        let pod = |n: &str| with_env(json!([{"name":n,"value":"x"}]));
        let sev = |n: &str, c: &Config| hits(&pod(n), c, "WIN403").first().map(|h| h.0);
        // `=` and non-ASCII: error even with relaxed validation (1.34 GA).
        assert_eq!(sev("A=B", &at(34)), Some(Severity::Error));
        assert_eq!(sev("Grüße", &at(34)), Some(Severity::Error));
        // Starting with a digit: strict error, relaxed info.
        assert_eq!(sev("1VAR", &cfg()), Some(Severity::Error));
        assert_eq!(sev("1VAR", &at(34)), Some(Severity::Info));
        assert_eq!(sev("..x", &cfg()), Some(Severity::Error));
        // Gate explicitly off on 1.32: strict; on 1.34 (GA) the gate cannot be turned off.
        let mut off = at(32);
        off.target
            .feature_gates
            .insert("RelaxedEnvironmentVariableValidation".into(), false);
        assert_eq!(sev("a:b", &off), Some(Severity::Error));
        off.target.kubernetes = KubeVersion::new(1, 34);
        assert_eq!(sev("a:b", &off), Some(Severity::Info));
        // The gate does not exist before 1.30.
        let mut early = at(29);
        early
            .target
            .feature_gates
            .insert("RelaxedEnvironmentVariableValidation".into(), true);
        assert_eq!(sev("a:b", &early), Some(Severity::Error));
        // Valid names everywhere.
        for n in ["my.env-name", "MY_ENV.NAME", "MyEnvName1", "_x", "-x"] {
            assert_eq!(sev(n, &cfg()), None, "{n}");
        }
        // Before 1.8: C identifiers only.
        assert_eq!(sev("my.env-name", &at(7)), Some(Severity::Error));
        assert_eq!(sev("MY_ENV", &at(7)), None);
        // Init and ephemeral containers too.
        let init = set(
            winok(),
            "/spec/initContainers",
            json!([{"name":"i","image":"mcr.microsoft.com/windows/servercore:ltsc2022",
                "env":[{"name":"a:b","value":"x"}]}]),
        );
        assert_eq!(
            hits(&init, &cfg(), "WIN403"),
            hit(Severity::Error, "/spec/initContainers/0/env/0/name")
        );
    }

    #[test]
    fn win403_fix_only_when_safe_to_rename() {
        // The new name is taken (case-insensitively).
        let taken = with_env(json!([{"name":"a:b","value":"1"},{"name":"A__B","value":"2"}]));
        assert!(!has_fix(&taken, &cfg(), "WIN403"));
        // $(a:b) referenced by args.
        let refd = set(
            with_env(json!([{"name":"a:b","value":"1"}])),
            "/spec/containers/0/args",
            json!(["--x=$(a:b)"]),
        );
        assert!(!has_fix(&refd, &cfg(), "WIN403"));
        // The rename would not make it valid.
        let eq = with_env(json!([{"name":"a:b=c","value":"1"}]));
        assert!(!has_fix(&eq, &cfg(), "WIN403"));
        // No `:` — nothing to rename.
        assert!(!has_fix(
            &with_env(json!([{"name":"1VAR","value":"1"}])),
            &cfg(),
            "WIN403"
        ));
    }

    #[test]
    fn win404_keys_only_with_known_context() {
        let pod = set(
            winok(),
            "/spec/containers/0/envFrom",
            json!([{"configMapRef":{"name":"cfg"}},{"prefix":"App_","secretRef":{"name":"s"}}]),
        );
        // No context: nothing.
        assert!(hits(&pod, &cfg(), "WIN404").is_empty());
        let mut cx = Context::default();
        cx.add(
            &json!({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"},
            "data":{"1st":"x","good":"y",".hidden":"z"}}),
        );
        cx.add(
            &json!({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},
            "stringData":{"1st":"x"}}),
        );
        let run = |c: &Config| -> Vec<(Severity, String)> {
            lint_object(&pod, c, &cx, Operation::Lint)
                .findings
                .into_iter()
                .filter(|f| f.rule.id == "WIN404")
                .map(|f| (f.severity, f.pointer))
                .collect()
        };
        // "1st" is skipped by the kubelet; ".hidden" is valid; "App_1st" is valid.
        assert_eq!(
            run(&cfg()),
            hit(
                Severity::Warning,
                "/spec/containers/0/envFrom/0/configMapRef"
            )
        );
        // Relaxed validation accepts every ConfigMap key.
        assert!(run(&at(34)).is_empty());
        // Another namespace: unknown, nothing.
        let other = set(pod.clone(), "/metadata/namespace", json!("prod"));
        assert!(
            lint_object(&other, &cfg(), &cx, Operation::Lint)
                .findings
                .iter()
                .all(|f| f.rule.id != "WIN404")
        );
    }

    #[test]
    fn win406_resources_before_1_10() {
        let pod = set(
            winok(),
            "/spec/containers/0/resources",
            json!({"limits":{"cpu":"500m","memory":"512Mi"}}),
        );
        assert_eq!(
            hits(&pod, &legacy(), "WIN406"),
            hit(Severity::Warning, "/spec/containers/0/resources")
        );
        assert!(hits(&pod, &at(10), "WIN406").is_empty());
        let empty = set(winok(), "/spec/containers/0/resources", json!({}));
        assert!(hits(&empty, &legacy(), "WIN406").is_empty());
    }

    #[test]
    fn win408_request_below_limit() {
        let pod = |req: Value, lim: Value| {
            set(
                winok(),
                "/spec/containers/0/resources",
                json!({"requests":{"memory":req},"limits":{"memory":lim}}),
            )
        };
        let p = "/spec/containers/0/resources/requests/memory";
        assert_eq!(
            hits(&pod(json!("512Mi"), json!("1Gi")), &cfg(), "WIN408"),
            hit(Severity::Warning, p)
        );
        assert_eq!(
            ids_in(&pod(json!("512Mi"), json!("1Gi")), &cfg(), OWN),
            vec!["WIN408"]
        );
        // Equal in different spellings.
        for (r, l) in [
            ("1Gi", "1024Mi"),
            ("1G", "1000M"),
            ("1e9", "1G"),
            ("1073741824", "1Gi"),
            ("0.5Gi", "512Mi"),
            ("1E3", "1k"),
        ] {
            assert!(
                hits(&pod(json!(r), json!(l)), &cfg(), "WIN408").is_empty(),
                "{r} {l}"
            );
        }
        // Request above limit (API error) or no limit: not this rule.
        assert!(hits(&pod(json!("2Gi"), json!("1Gi")), &cfg(), "WIN408").is_empty());
        let nolimit = set(
            winok(),
            "/spec/containers/0/resources",
            json!({"requests":{"memory":"1Gi"}}),
        );
        assert!(hits(&nolimit, &cfg(), "WIN408").is_empty());
        let noreq = set(
            winok(),
            "/spec/containers/0/resources",
            json!({"limits":{"memory":"1Gi"}}),
        );
        assert!(hits(&noreq, &cfg(), "WIN408").is_empty());
        // Decimal vs binary: 1G < 1Gi, 500M < 512Mi, bare numbers.
        assert_eq!(
            hits(&pod(json!("1G"), json!("1Gi")), &cfg(), "WIN408").len(),
            1
        );
        assert_eq!(
            hits(&pod(json!("500M"), json!("512Mi")), &cfg(), "WIN408").len(),
            1
        );
        assert_eq!(
            hits(&pod(json!(1000), json!("1Ki")), &cfg(), "WIN408").len(),
            1
        );
        // Unparseable quantities are left to the API server.
        assert!(hits(&pod(json!("lots"), json!("1Gi")), &cfg(), "WIN408").is_empty());
        // Not before 1.10 (WIN406 applies).
        assert!(hits(&pod(json!("512Mi"), json!("1Gi")), &legacy(), "WIN408").is_empty());
    }

    #[test]
    fn win410_udp_before_1_14() {
        let pod = set(
            winok(),
            "/spec/containers/0/ports",
            json!([{"containerPort":80,"protocol":"TCP"},{"containerPort":53,"protocol":"UDP"}]),
        );
        assert_eq!(
            hits(&pod, &legacy(), "WIN410"),
            hit(Severity::Warning, "/spec/containers/0/ports/1/protocol")
        );
        assert!(hits(&pod, &at(14), "WIN410").is_empty());
    }

    #[test]
    fn win411_grace_with_docker() {
        let pod = set(winok(), "/spec/terminationGracePeriodSeconds", json!(120));
        let mut docker = cfg();
        docker.target.runtime = Runtime::Docker;
        assert_eq!(
            hits(&pod, &docker, "WIN411"),
            hit(Severity::Info, "/spec/terminationGracePeriodSeconds")
        );
        assert!(hits(&pod, &cfg(), "WIN411").is_empty());
        // The API server's default is not the user's choice.
        let dflt = set(winok(), "/spec/terminationGracePeriodSeconds", json!(30));
        assert!(hits(&dflt, &docker, "WIN411").is_empty());
    }

    #[test]
    fn nothing_on_linux_pods() {
        // (No Hyper-V annotation: it is Windows evidence itself.)
        let linux = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"l"},"spec":{
            "securityContext":{"runAsNonRoot":true},
            "containers":[{"name":"a","image":"alpine","env":[{"name":"Logging:Level","value":"x"},
                {"name":"path","value":"a"},{"name":"PATH","value":"b"}],
                "resources":{"requests":{"memory":"1Mi"},"limits":{"memory":"1Gi","hugepages-2Mi":"1Gi"}},
                "ports":[{"containerPort":53,"protocol":"UDP"}]},{"name":"b","image":"nginx"}]}});
        assert_eq!(ids_in(&linux, &cfg(), OWN), Vec::<&str>::new());
        assert_eq!(ids_in(&linux, &legacy(), OWN), Vec::<&str>::new());
    }
}
