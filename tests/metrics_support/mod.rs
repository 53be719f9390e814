//! Reading a Prometheus text exposition (`/metrics` of `winlint serve`): the one parser of the
//! tests (k8s_support and webhook_support re-export it).
#![allow(dead_code)]

/// The value of the metric lines of `text` that start with `prefix`, added up (a name alone
/// adds every label set; `name{result="ok"}` one of them); `None` when no line matches. A
/// prefix that ends inside a name matches only that name (`winlint_leader` is not
/// `winlint_leader_x`). Comments are skipped.
pub fn metric(text: &str, prefix: &str) -> Option<f64> {
    let values: Vec<f64> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let rest = l.strip_prefix(prefix)?;
            let whole = prefix.ends_with([' ', '}']) || rest.starts_with([' ', '{']);
            whole.then(|| l.rsplit(' ').next()?.parse::<f64>().ok())?
        })
        .collect();
    (!values.is_empty()).then(|| values.iter().sum())
}
