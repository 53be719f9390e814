use super::Rule;

pub fn rules() -> Vec<Rule> {
    Vec::new()
}
