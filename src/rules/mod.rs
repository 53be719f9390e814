//! The rule registry and the rule modules.
//!
//! A rule is a pure function of a [`PodSite`] and an [`Eval`] context that returns [`Finding`]s,
//! plus its [`RuleMeta`]: documentation (the single source for `winlint rules`, `winlint
//! explain` and the SARIF rule descriptions) and everything a front end needs to know about it.

use crate::model::{Eval, Finding, PodSite, RuleMeta};

/// A rule's check function.
pub type CheckFn = for<'a> fn(&PodSite<'a>, &Eval<'a>) -> Vec<Finding>;

/// A registered rule: metadata plus the function that checks a pod site.
#[derive(Clone, Copy)]
pub struct Rule {
    pub meta: &'static RuleMeta,
    pub check: CheckFn,
}

// The rule modules: one folder per family (`common.rs`, what several of its rules share; one
// file per rule, ending in the rule's `pub const RULE`).
pub mod scheduling {
    //! WIN0xx: OS identification and scheduling.
    pub mod common;
    pub mod win001_missing_os_selector;
    pub mod win002_deprecated_beta_os_label;
    pub mod win003_missing_spec_os;
    pub mod win004_os_signal_conflict;
    pub mod win005_missing_windows_build_selector;
    pub mod win006_windows_build_selector_mismatch;
    pub mod win007_missing_windows_toleration;
    pub mod win008_mixed_os_images;
    pub mod win009_runtimeclass_selector_conflict;
    pub mod win010_selects_no_node;
    pub mod win011_linux_pod_can_land_on_windows;
}

pub mod security {
    //! WIN1xx: Linux security settings on Windows pods, Pod Security, fields newer than the target.
    pub mod common;
    pub mod win101_pod_securitycontext_linux_only;
    pub mod win102_host_namespaces;
    pub mod win103_container_securitycontext_linux_only;
    pub mod win104_windowsoptions_on_linux_pod;
    pub mod win107_psa_restricted_windows;
    pub mod win109_field_newer_than_target;
}

pub mod hostprocess {
    //! WIN2xx: HostProcess containers and host networking.
    pub mod common;
    pub mod win201_hostprocess_requires_hostnetwork;
    pub mod win202_hostprocess_mixed;
    pub mod win203_hostprocess_unavailable;
    pub mod win204_hostprocess_runasnonroot;
    pub mod win205_hostprocess_user;
    pub mod win206_hostprocess_pipe_or_socket_mount;
    pub mod win207_hostprocess_needs_privileged_pss;
    pub mod win208_hostnetwork_without_hostprocess;
    pub mod win209_dns_clusterfirstwithhostnet;
}

pub mod volumes {
    //! WIN3xx: volumes and mounts.
    pub mod common;
    pub mod win301_unsupported_volume_type;
    pub mod win302_configmap_secret_volume_legacy;
    pub mod win303_emptydir_memory;
    pub mod win304_mount_propagation;
    pub mod win305_volume_devices;
    pub mod win306_subpath;
    pub mod win307_file_mode_ignored;
    pub mod win308_mountpath_not_windows_style;
    pub mod win309_mountpath_case_collision;
    pub mod win310_unc_path;
    pub mod win311_named_pipe_mismatch;
    pub mod win312_linux_hostpath;
    pub mod win313_termination_message_file;
    pub mod win314_secret_volume_cleartext;
    pub mod win315_containeruser_volume_root;
}

pub mod identity {
    //! Who the containers run as: `runAsUserName`, gMSA, `runAsNonRoot` with an administrator.
    pub mod common;
    pub mod win105_runasusername_invalid;
    pub mod win106_gmsa_spec_invalid;
    pub mod win108_gmsa_webhook_required;
    pub mod win110_gmsa_spec_not_found;
    pub mod win409_runasnonroot_admin;
}

pub mod env {
    //! WIN403–WIN405: environment variable names and `envFrom`.
    pub mod common;
    pub mod win403_env_name_invalid;
    pub mod win404_envfrom_prefix_or_keys;
    pub mod win405_env_case_collision;
}

pub mod resources {
    //! WIN406–WIN408, WIN412: resources on Windows.
    pub mod common;
    pub mod win406_resources_ignored_legacy;
    pub mod win407_hugepages;
    pub mod win408_memory_request_limit;
    pub mod win412_pod_level_resources;
}

pub mod legacy {
    //! WIN401, WIN402, WIN410, WIN411: limits of legacy platforms.
    pub mod common;
    pub mod win401_multi_container_ws2016;
    pub mod win402_hyperv_annotation;
    pub mod win410_udp_userspace_proxy;
    pub mod win411_termination_grace_docker;
}

pub mod commands {
    //! WIN413–WIN414: what the containers of Windows pods run: commands, exec probes, hooks.
    pub mod common;
    pub mod win413_linux_command;
    pub mod win414_shell_probe_timeout;
}

pub mod network {
    //! WIN415: how Windows pods resolve names.
    pub mod common;
    pub mod win415_partial_service_name;
}

pub mod platform {
    //! WIN7xx: contracts of managed platforms (their admission webhooks and controllers).
    pub mod common;
    pub mod win701_eks_windows_node_selector;
}

pub mod images {
    //! WIN5xx: container images against the target's Windows builds.
    pub mod common;
    pub mod image_registry;
    pub mod win501_image_untagged_or_latest;
    pub mod win502_image_build_incompatible;
    pub mod win503_image_build_unknown;
    pub mod win504_legacy_dockerhub_microsoft;
    pub mod win505_tag_case;
    pub mod win506_eol_windows_build;
    pub mod win507_linux_image_in_windows_pod;
    pub mod win508_pod_mixed_windows_builds;
    pub mod win509_image_reference_invalid;
    pub mod win510_image_revision_newer_than_host;
}

pub mod kinds {
    //! WIN6xx: workload kinds.
    pub mod common;
    pub mod win601_statefulset_legacy;
    pub mod win602_hpa_legacy;
    pub mod win603_os_unpinned_daemonset;
    pub mod win604_api_version_not_served;
}

pub mod api {
    //! WIN8xx: what the API server's validation refuses in pod specs and workload wrappers.
    pub mod common;
    pub mod win801_selector_mismatch;
    pub mod win802_required_field_missing;
    pub mod win803_container_name_invalid;
    pub mod win804_container_port_invalid;
    pub mod win805_resource_quantity_invalid;
    pub mod win806_label_invalid;
    pub mod win807_object_name_invalid;
    pub mod win808_restart_policy_invalid;
}

/// The registry: every rule, in ID order (`registry_is_the_catalogue` checks the order). The single
/// list the CLI, the webhook and the docs read.
static RULES: &[Rule] = &[
    scheduling::win001_missing_os_selector::RULE,
    scheduling::win002_deprecated_beta_os_label::RULE,
    scheduling::win003_missing_spec_os::RULE,
    scheduling::win004_os_signal_conflict::RULE,
    scheduling::win005_missing_windows_build_selector::RULE,
    scheduling::win006_windows_build_selector_mismatch::RULE,
    scheduling::win007_missing_windows_toleration::RULE,
    scheduling::win008_mixed_os_images::RULE,
    scheduling::win009_runtimeclass_selector_conflict::RULE,
    scheduling::win010_selects_no_node::RULE,
    scheduling::win011_linux_pod_can_land_on_windows::RULE,
    security::win101_pod_securitycontext_linux_only::RULE,
    security::win102_host_namespaces::RULE,
    security::win103_container_securitycontext_linux_only::RULE,
    security::win104_windowsoptions_on_linux_pod::RULE,
    identity::win105_runasusername_invalid::RULE,
    identity::win106_gmsa_spec_invalid::RULE,
    security::win107_psa_restricted_windows::RULE,
    identity::win108_gmsa_webhook_required::RULE,
    security::win109_field_newer_than_target::RULE,
    identity::win110_gmsa_spec_not_found::RULE,
    hostprocess::win201_hostprocess_requires_hostnetwork::RULE,
    hostprocess::win202_hostprocess_mixed::RULE,
    hostprocess::win203_hostprocess_unavailable::RULE,
    hostprocess::win204_hostprocess_runasnonroot::RULE,
    hostprocess::win205_hostprocess_user::RULE,
    hostprocess::win206_hostprocess_pipe_or_socket_mount::RULE,
    hostprocess::win207_hostprocess_needs_privileged_pss::RULE,
    hostprocess::win208_hostnetwork_without_hostprocess::RULE,
    hostprocess::win209_dns_clusterfirstwithhostnet::RULE,
    volumes::win301_unsupported_volume_type::RULE,
    volumes::win302_configmap_secret_volume_legacy::RULE,
    volumes::win303_emptydir_memory::RULE,
    volumes::win304_mount_propagation::RULE,
    volumes::win305_volume_devices::RULE,
    volumes::win306_subpath::RULE,
    volumes::win307_file_mode_ignored::RULE,
    volumes::win308_mountpath_not_windows_style::RULE,
    volumes::win309_mountpath_case_collision::RULE,
    volumes::win310_unc_path::RULE,
    volumes::win311_named_pipe_mismatch::RULE,
    volumes::win312_linux_hostpath::RULE,
    volumes::win313_termination_message_file::RULE,
    volumes::win314_secret_volume_cleartext::RULE,
    volumes::win315_containeruser_volume_root::RULE,
    legacy::win401_multi_container_ws2016::RULE,
    legacy::win402_hyperv_annotation::RULE,
    env::win403_env_name_invalid::RULE,
    env::win404_envfrom_prefix_or_keys::RULE,
    env::win405_env_case_collision::RULE,
    resources::win406_resources_ignored_legacy::RULE,
    resources::win407_hugepages::RULE,
    resources::win408_memory_request_limit::RULE,
    identity::win409_runasnonroot_admin::RULE,
    legacy::win410_udp_userspace_proxy::RULE,
    legacy::win411_termination_grace_docker::RULE,
    resources::win412_pod_level_resources::RULE,
    commands::win413_linux_command::RULE,
    commands::win414_shell_probe_timeout::RULE,
    network::win415_partial_service_name::RULE,
    images::win501_image_untagged_or_latest::RULE,
    images::win502_image_build_incompatible::RULE,
    images::win503_image_build_unknown::RULE,
    images::win504_legacy_dockerhub_microsoft::RULE,
    images::win505_tag_case::RULE,
    images::win506_eol_windows_build::RULE,
    images::win507_linux_image_in_windows_pod::RULE,
    images::win508_pod_mixed_windows_builds::RULE,
    images::win509_image_reference_invalid::RULE,
    images::win510_image_revision_newer_than_host::RULE,
    kinds::win601_statefulset_legacy::RULE,
    kinds::win602_hpa_legacy::RULE,
    kinds::win603_os_unpinned_daemonset::RULE,
    kinds::win604_api_version_not_served::RULE,
    platform::win701_eks_windows_node_selector::RULE,
    api::win801_selector_mismatch::RULE,
    api::win802_required_field_missing::RULE,
    api::win803_container_name_invalid::RULE,
    api::win804_container_port_invalid::RULE,
    api::win805_resource_quantity_invalid::RULE,
    api::win806_label_invalid::RULE,
    api::win807_object_name_invalid::RULE,
    api::win808_restart_policy_invalid::RULE,
];

/// Every rule, in ID order.
pub fn all() -> &'static [Rule] {
    RULES
}

/// Look a rule up by ID (`WIN403`, case-insensitive) or name (`env-name-invalid`).
pub fn find(key: &str) -> Option<&'static Rule> {
    all()
        .iter()
        .find(|r| r.meta.id.eq_ignore_ascii_case(key) || r.meta.name == key)
}

/// Test helpers for rule modules: lint a JSON object and list what fired.
#[cfg(test)]
pub mod testutil {
    use serde_json::{Value, json};

    use crate::config::Config;
    use crate::engine::lint_object;
    use crate::model::Context;
    use crate::model::Finding;
    use crate::model::KubeVersion;
    use crate::model::Operation;

    /// The test-vector target of rules.md §6: kubernetes 1.30, otherwise the defaults.
    pub fn cfg() -> Config {
        let mut c = Config::default();
        c.target.kubernetes = KubeVersion::new(1, 30);
        c
    }

    /// The LEGACY target of rules.md §6: Kubernetes 1.9, Windows Server 1709, untainted nodes,
    /// Docker.
    pub fn legacy() -> Config {
        let mut c = cfg();
        c.target.kubernetes = KubeVersion::new(1, 9);
        c.target.windows_builds = vec![crate::model::windows::V1709];
        c.target.windows_taints = Vec::new();
        c.target.runtime = crate::model::Runtime::Docker;
        c
    }

    /// (severity, pointer) of the findings of one rule.
    pub fn hits(obj: &Value, cfg: &Config, id: &str) -> Vec<(crate::model::Severity, String)> {
        findings(obj, cfg)
            .into_iter()
            .filter(|f| f.rule.id == id)
            .map(|f| (f.severity, f.pointer))
            .collect()
    }

    /// `WINOK` of rules.md §6: spec.os windows, OS selector, toleration, servercore:ltsc2022.
    pub fn winok() -> Value {
        json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"ok"},"spec":{
            "os":{"name":"windows"},
            "nodeSelector":{"kubernetes.io/os":"windows"},
            "tolerations":[{"key":"os","operator":"Equal","value":"windows","effect":"NoSchedule"}],
            "containers":[{"name":"app","image":"mcr.microsoft.com/windows/servercore:ltsc2022"}]}})
    }

    /// Set `value` at `pointer` (creating objects on the way).
    pub fn set(mut obj: Value, pointer: &str, value: Value) -> Value {
        let mut cur = &mut obj;
        let toks: Vec<String> = pointer
            .split('/')
            .skip(1)
            .map(|t| crate::model::pointer::unescape(t).into_owned())
            .collect();
        for (i, t) in toks.iter().enumerate() {
            let last = i + 1 == toks.len();
            if let Value::Array(a) = cur {
                let idx: usize = t.parse().expect("array index");
                while a.len() <= idx {
                    a.push(json!({}));
                }
                if last {
                    a[idx] = value;
                    return obj;
                }
                cur = &mut a[idx];
            } else {
                if !cur.is_object() {
                    *cur = json!({});
                }
                let m = cur.as_object_mut().expect("object");
                if last {
                    m.insert(t.clone(), value);
                    return obj;
                }
                cur = m.entry(t.clone()).or_insert(json!({}));
            }
        }
        obj
    }

    /// Remove the field at `pointer`.
    pub fn unset(mut obj: Value, pointer: &str) -> Value {
        let (parent, key) = pointer.rsplit_once('/').expect("pointer");
        if let Some(Value::Object(m)) = obj.pointer_mut(parent) {
            m.remove(&*crate::model::pointer::unescape(key));
        }
        obj
    }

    pub fn findings(obj: &Value, cfg: &Config) -> Vec<Finding> {
        lint_object(obj, cfg, &Context::default(), Operation::Lint).findings
    }

    /// Sorted, deduplicated rule IDs that fired.
    pub fn ids(obj: &Value, cfg: &Config) -> Vec<&'static str> {
        let mut v: Vec<&'static str> = findings(obj, cfg).iter().map(|f| f.rule.id).collect();
        v.sort();
        v.dedup();
        v
    }

    /// [`ids`] of the rules whose IDs start with one of `prefixes` (`["WIN3", "WIN4"]`: a
    /// module's own rules; other modules' rules are asserted by their tests).
    pub fn ids_in(obj: &Value, cfg: &Config, prefixes: &[&str]) -> Vec<&'static str> {
        ids(obj, cfg)
            .into_iter()
            .filter(|id| prefixes.iter().any(|p| id.starts_with(p)))
            .collect()
    }

    /// The findings of one rule.
    pub fn only(obj: &Value, cfg: &Config, id: &str) -> Vec<Finding> {
        findings(obj, cfg)
            .into_iter()
            .filter(|f| f.rule.id == id)
            .collect()
    }

    /// Assert that the message of `f` contains `part`, showing the whole message when it does not.
    #[track_caller]
    pub fn assert_says(f: &Finding, part: &str) {
        assert!(f.message.contains(part), "{part:?} not in: {}", f.message);
    }

    /// The [`cfg`] target at Kubernetes `1.minor`.
    pub fn at(minor: u32) -> Config {
        let mut c = cfg();
        c.target.kubernetes = KubeVersion::new(1, minor);
        c
    }

    /// `obj` with the fix of finding `f` applied.
    pub fn apply(obj: &Value, f: &Finding) -> Value {
        let mut out = obj.clone();
        json_patch::patch(&mut out, &f.fix.as_ref().expect("a fix").ops).expect("fix applies");
        out
    }

    /// `obj` with the fix of the first finding of rule `id` applied.
    pub fn fixed(obj: &Value, cfg: &Config, id: &str) -> Value {
        let f = only(obj, cfg, id).into_iter().next().expect("finding");
        apply(obj, &f)
    }

    /// A [`hits`] result of one finding.
    pub fn hit(
        sev: crate::model::Severity,
        pointer: &str,
    ) -> Vec<(crate::model::Severity, String)> {
        vec![(sev, pointer.to_string())]
    }

    /// `pod` with a second container running `image`.
    pub fn second_container(pod: Value, image: &str) -> Value {
        set(
            pod,
            "/spec/containers/1",
            json!({"name":"side","image":image}),
        )
    }

    /// A node group of `n` nodes (`g0`, `g1`, … prefixed by `name`): OS `os`, Windows build
    /// `build` (`""`: none), taints like `os=windows:NoSchedule`, extra labels. The OS and
    /// build labels are set as the kubelet sets them.
    pub fn group(
        name: &str,
        os: &str,
        build: &str,
        taints: &[&str],
        labels: &[(&str, &str)],
        n: usize,
    ) -> crate::model::nodes::NodeGroup {
        use crate::model::nodes::{NodeGroup, NodeOs};
        let mut l: std::collections::BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        l.insert("kubernetes.io/os".into(), os.into());
        l.insert("beta.kubernetes.io/os".into(), os.into());
        // `10.0.20348.2849`: the build label is `10.0.20348`, the revision the kernel's.
        let revision = crate::model::windows::parse_revision(build);
        let build = match revision {
            Some(_) => &build[..build.rfind('.').expect("four parts")],
            None => build,
        };
        if !build.is_empty() {
            l.insert("node.kubernetes.io/windows-build".into(), build.into());
        }
        NodeGroup {
            os: NodeOs::parse(os),
            build: crate::model::windows::parse_build(build),
            revision,
            taints: taints
                .iter()
                .map(|t| crate::model::Taint::parse(t).expect("taint"))
                .collect(),
            labels: l,
            runtime: Some("containerd://1.7.20".into()),
            nodes: (0..n)
                .map(|i| (format!("{name}{i}"), Some(format!("{name}{i}"))))
                .collect(),
        }
    }

    /// `cfg` with observed nodes.
    pub fn observed(mut cfg: Config, groups: Vec<crate::model::nodes::NodeGroup>) -> Config {
        cfg.target.nodes = Some(groups.into());
        cfg
    }

    /// Whether a finding of rule `id` offers a fix.
    pub fn has_fix(obj: &Value, cfg: &Config, id: &str) -> bool {
        findings(obj, cfg)
            .iter()
            .any(|f| f.rule.id == id && f.fix.is_some())
    }
}

#[cfg(test)]
mod tests {
    /// The catalogue (shared/rules.md §2 and the "Rules added" table): every ID with its name,
    /// from `testdata/rules/catalogue.txt`.
    fn catalogue() -> Vec<(&'static str, &'static str)> {
        include_str!("../../testdata/rules/catalogue.txt")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| l.split_once(' ').expect("ID name"))
            .collect()
    }

    #[test]
    fn registry_is_the_catalogue() {
        let got: Vec<(&str, &str)> = super::all()
            .iter()
            .map(|r| (r.meta.id, r.meta.name))
            .collect();
        let catalogue = catalogue();
        assert_eq!(got, catalogue);
        for (id, name) in &catalogue {
            assert_eq!(super::find(id).map(|r| r.meta.name), Some(*name));
            assert_eq!(super::find(name).map(|r| r.meta.id), Some(*id));
            assert_eq!(
                super::find(&id.to_lowercase()).map(|r| r.meta.id),
                Some(*id)
            );
        }
    }

    /// One vocabulary for `winlint.io/mutated`: every rule whose fix the webhook may apply has a
    /// camelCase mutation name that is not a rule ID; only the rules listed here have a fix the
    /// webhook never applies.
    #[test]
    fn webhook_mutations_have_names() {
        const NEVER_BY_THE_WEBHOOK: &[&str] = &["WIN308"];
        for r in super::all() {
            let m = r.meta;
            match m.mutation.name() {
                Some(name) => {
                    assert!(m.fix.is_some(), "{} names a mutation but has no fix", m.id);
                    assert!(
                        name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                            && name.chars().all(|c| c.is_ascii_alphanumeric()),
                        "{}: {name:?} is not camelCase",
                        m.id
                    );
                    assert!(super::find(name).is_none(), "{}: {name:?} is a rule", m.id);
                }
                None => assert!(
                    m.fix.is_none() || NEVER_BY_THE_WEBHOOK.contains(&m.id),
                    "{} has a fix but no mutation name",
                    m.id
                ),
            }
        }
    }

    /// Every rule's documentation has the sections `winlint explain` and SARIF help rely on.
    #[test]
    fn every_rule_is_documented() {
        for r in super::all() {
            let m = r.meta;
            for section in [
                "## What it does",
                "## Why is this bad?",
                "## Example",
                "## Fix",
            ] {
                assert!(m.docs.contains(section), "{} lacks {section}", m.id);
            }
            assert!(m.docs.contains("```yaml"), "{} has no YAML example", m.id);
            assert!(
                !m.summary.is_empty() && !m.source.is_empty() && !m.applies.is_empty(),
                "{}",
                m.id
            );
        }
    }
}
