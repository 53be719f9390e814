//! WIN406–WIN408, WIN412: resources on Windows (shared/rules.md §2.5): requests and limits
//! before 1.10, hugepages, memory requests below limits, pod-level resources.
//!
//! What several rules of the family share.

#[cfg(test)]
pub(crate) mod tests {

    /// The WIN3xx/WIN4xx rules (other modules' rules are asserted by their tests).
    pub(crate) const OWN: &[&str] = &["WIN3", "WIN4"];
}
