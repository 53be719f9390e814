//! WIN6xx: workload kinds (shared/rules.md §2.7).
//!
//! What several rules of the family share.

#[cfg(test)]
mod tests {
    use crate::model::KubeVersion;

    use crate::rules::kinds::win604_api_version_not_served::not_served;
    use crate::rules::kinds::win604_api_version_not_served::use_instead;

    #[test]
    fn served_ranges() {
        let v = KubeVersion::new;
        assert_eq!(
            not_served("Deployment", "extensions/v1beta1", v(1, 16)).as_deref(),
            Some("no longer served since 1.16")
        );
        assert_eq!(
            not_served("Deployment", "extensions/v1beta1", v(1, 15)),
            None
        );
        assert_eq!(
            not_served("CronJob", "batch/v1", v(1, 20)).as_deref(),
            Some("served only from 1.21")
        );
        assert_eq!(not_served("CronJob", "batch/v1beta1", v(1, 24)), None);
        assert_eq!(not_served("Pod", "v1", v(1, 9)), None);
        assert_eq!(not_served("Job", "batch/v1", v(1, 9)), None);
        assert_eq!(use_instead("CronJob", v(1, 9)), "Write it as batch/v1beta1");
        assert_eq!(use_instead("Deployment", v(1, 34)), "Write it as apps/v1");
    }
}
