//! The node budget: what one text may cost to load, in proportion to its length (issue 30).
//!
//! A loaded node costs far more than its text: a `serde_json::Value` is 32 bytes, its source
//! map entry ([`super::NodeInfo`] and where its pointer ends) about 120, and its pointer the
//! pointer's length, however short the node's text (`0,` is two bytes; every element of an
//! array under a long key repeats that key in its pointer). Under the 64 MiB input cap a JSON
//! pod with one `[0,0,…]` field peaked at 15.3 GB, 60 MB of `[],` at 7.5 GB. So a text may
//! have at most one node (keys count) per [`MIN_BYTES_PER_NODE`] bytes and at most
//! [`MAX_POINTER_BYTES_PER_BYTE`] bytes of recorded pointers per byte, plus allowances that
//! small texts, dense in brackets, always get.
//!
//! Real manifests spend 5.8 bytes per node at the densest (testdata's 526 files, anchors and
//! flow style included; minified JSON such as `{"name":"A","value":"1"}` about 4.8), and
//! their pointers are a few times their text. The budget is checked twice: by [`precount`],
//! which runs the parser over the text before anything is built (the parser's own memory is
//! its nesting), so that a text over the budget is refused at about its own size in memory;
//! and by the loader as it builds, which also covers the text as relaxed for kubectl's quirks.

use saphyr_parser::{Event, Marker, Parser};

use super::{LoadError, MAX_DEPTH};

/// The fewest bytes of text per node (scalar, key, collection or alias) a text may average.
pub const MIN_BYTES_PER_NODE: usize = 4;
/// Nodes every text may have whatever its length.
pub const NODE_ALLOWANCE: usize = 4096;
/// The most bytes of recorded JSON pointers per byte of text.
pub const MAX_POINTER_BYTES_PER_BYTE: usize = 16;
/// Pointer bytes every text may record whatever its length.
pub const POINTER_ALLOWANCE: usize = 1 << 20;

/// What a text of a given length may still spend.
#[derive(Debug, Clone)]
pub(super) struct Budget {
    text_len: usize,
    nodes_left: usize,
    pointer_bytes_left: usize,
}

impl Budget {
    pub(super) fn new(text_len: usize) -> Self {
        Budget {
            text_len,
            nodes_left: text_len / MIN_BYTES_PER_NODE + NODE_ALLOWANCE,
            pointer_bytes_left: text_len
                .saturating_mul(MAX_POINTER_BYTES_PER_BYTE)
                .saturating_add(POINTER_ALLOWANCE),
        }
    }

    /// One more node, at `m`.
    pub(super) fn node(&mut self, m: Marker) -> Result<(), LoadError> {
        match self.nodes_left.checked_sub(1) {
            Some(left) => {
                self.nodes_left = left;
                Ok(())
            }
            None => Err(self.refuse(
                m,
                format!(
                    "more than {} values in {} bytes (at most one per {MIN_BYTES_PER_NODE} bytes \
                     on average)",
                    self.text_len / MIN_BYTES_PER_NODE + NODE_ALLOWANCE,
                    self.text_len
                ),
            )),
        }
    }

    /// A recorded pointer of `len` bytes, at `m`.
    pub(super) fn pointer(&mut self, len: usize, m: Marker) -> Result<(), LoadError> {
        match self.pointer_bytes_left.checked_sub(len) {
            Some(left) => {
                self.pointer_bytes_left = left;
                Ok(())
            }
            None => Err(self.refuse(
                m,
                format!(
                    "its values' paths add up to more than {MAX_POINTER_BYTES_PER_BYTE} times \
                     its {} bytes (long keys over many values)",
                    self.text_len
                ),
            )),
        }
    }

    fn refuse(&self, m: Marker, why: String) -> LoadError {
        LoadError {
            line: m.line(),
            column: m.col() + 1,
            message: format!(
                "too dense to load: {why}; a manifest this dense would take far more memory \
                 than its size, not loaded"
            ),
        }
    }
}

/// One open collection of [`precount`]: the length of its pointer, and of its next entry's.
struct Open {
    is_map: bool,
    /// A mapping's next scalar is a key.
    key_next: bool,
    /// Next index of a sequence.
    index: usize,
    /// Its own pointer's length.
    base: usize,
    /// The pending key's token length, `/` included.
    key_len: usize,
}

/// Run the parser over `text` (the whole text, its length the budget's) and spend the budget
/// as the loader would, building nothing. Stops quietly at a parse error and at nesting deeper
/// than [`MAX_DEPTH`]: the loader reports them (or relaxes the text and counts as it builds).
pub(super) fn precount(text: &str, full_len: usize, with_map: bool) -> Result<(), LoadError> {
    let mut budget = Budget::new(full_len);
    let mut stack: Vec<Open> = Vec::new();
    let mut parser = Parser::new_from_str(text);
    while let Some(Ok((ev, span))) = parser.next_event() {
        let m = span.start;
        // The pointer length of a value starting now, and the parent moved past it.
        let value = |stack: &mut Vec<Open>| -> usize {
            let Some(top) = stack.last_mut() else {
                return 0;
            };
            if top.is_map {
                top.key_next = true;
                top.base + top.key_len
            } else {
                top.index += 1;
                top.base + 1 + decimal_digits(top.index - 1)
            }
        };
        match ev {
            Event::StreamEnd => break,
            Event::DocumentStart(_) | Event::DocumentEnd => stack.clear(),
            Event::Scalar(v, ..) => {
                budget.node(m)?;
                match stack.last_mut() {
                    Some(top) if top.is_map && top.key_next => {
                        top.key_next = false;
                        top.key_len = 1 + v.len();
                    }
                    _ => {
                        let len = value(&mut stack);
                        if with_map {
                            budget.pointer(len, m)?;
                        }
                    }
                }
            }
            Event::Alias(_) => {
                budget.node(m)?;
                match stack.last_mut() {
                    Some(top) if top.is_map && top.key_next => {
                        top.key_next = false;
                        top.key_len = 1;
                    }
                    _ => {
                        let len = value(&mut stack);
                        if with_map {
                            budget.pointer(len, m)?;
                        }
                    }
                }
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                if stack.len() >= MAX_DEPTH {
                    break;
                }
                budget.node(m)?;
                let base = value(&mut stack);
                if with_map {
                    budget.pointer(base, m)?;
                }
                stack.push(Open {
                    is_map: matches!(ev, Event::MappingStart(..)),
                    key_next: true,
                    index: 0,
                    base,
                    key_len: 0,
                });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                stack.pop();
            }
            Event::StreamStart | Event::Nothing => {}
        }
    }
    Ok(())
}

fn decimal_digits(n: usize) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_digits_counts() {
        assert_eq!(decimal_digits(0), 1);
        assert_eq!(decimal_digits(9), 1);
        assert_eq!(decimal_digits(10), 2);
        assert_eq!(decimal_digits(12345), 5);
    }

    #[test]
    fn small_texts_get_the_allowance_and_dense_ones_are_refused() {
        // 2 000 nodes in 4 000 bytes: within the allowance.
        let small = format!("[{}0]", "0,".repeat(2_000));
        precount(&small, small.len(), true).unwrap();
        // 200 000 nodes in 400 000 bytes: two bytes per node.
        let dense = format!("x: [{}0]", "0,".repeat(200_000));
        let e = precount(&dense, dense.len(), true).unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("too dense to load"), "{e}");
        assert!(e.message.contains("one per 4 bytes"), "{e}");
        // The same count of nodes written sparsely is fine.
        let sparse = format!("x: [{}0]", "100000,".repeat(200_000));
        precount(&sparse, sparse.len(), true).unwrap();
    }

    #[test]
    fn long_keys_over_many_values_are_refused() {
        // Every element's pointer repeats 200 levels of a 1 000-byte key (200 KB): 300 elements
        // of 8 bytes each record 60 MB of pointers from 240 KB of text.
        let key = "k".repeat(1000);
        let mut text = String::new();
        for d in 0..200 {
            text.push_str(&" ".repeat(d * 2));
            text.push_str(&key);
            text.push_str(":\n");
        }
        text.push_str(&" ".repeat(400));
        text.push_str(&format!("[{}0]\n", "1234567,".repeat(300)));
        let e = precount(&text, text.len(), true).unwrap_err();
        assert!(e.message.contains("paths add up"), "{e}");
        // Without a source map no pointer is recorded.
        precount(&text, text.len(), false).unwrap();
    }
}
