//! WIN401, WIN402, WIN410, WIN411: limits of legacy platforms (shared/rules.md §2.5): one
//! container per pod on Windows Server 2016, the pre-1.21 Hyper-V annotation, the pre-1.14
//! userspace kube-proxy and UDP, the Docker runtime's termination grace period.
//!
//! What several rules of the family share.

#[cfg(test)]
pub(crate) mod tests {

    use crate::rules::testutil::{cfg, ids_in, second_container, winok};

    /// The WIN3xx/WIN4xx rules (other modules' rules are asserted by their tests).
    pub(crate) const OWN: &[&str] = &["WIN3", "WIN4"];

    #[test]
    fn t34_two_containers_modern() {
        let pod = second_container(winok(), "mcr.microsoft.com/windows/servercore:ltsc2022");
        assert_eq!(ids_in(&pod, &cfg(), OWN), Vec::<&str>::new());
    }
}
