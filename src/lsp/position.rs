//! LSP positions are a line and a character offset counted in UTF-16 code units (the protocol's
//! default `positionEncoding`, the only one every client supports); the engine counts bytes.

use lsp_types::{Position, Range};

/// Where each line of a text starts, to convert between byte offsets and positions.
pub struct LineIndex<'a> {
    text: &'a str,
    /// Byte offset of the start of each line (after `\n`; a lone `\r` ends a line too in YAML,
    /// but editors that send such text count lines by `\n`, `\r\n` and `\r` alike).
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        let b = text.as_bytes();
        for (i, &c) in b.iter().enumerate() {
            if c == b'\n' || (c == b'\r' && b.get(i + 1) != Some(&b'\n')) {
                starts.push(i + 1);
            }
        }
        LineIndex { text, starts }
    }

    /// The position of byte `offset` (clamped to the text and to a character boundary).
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let units: usize = self.text[self.starts[line]..offset]
            .chars()
            .map(char::len_utf16)
            .sum();
        Position::new(line as u32, units as u32)
    }

    pub fn range(&self, start: usize, end: usize) -> Range {
        Range::new(self.position(start), self.position(end.max(start)))
    }

    /// Byte offset of line `line`'s end, before its line break.
    pub fn line_end(&self, line: usize) -> usize {
        let next = self
            .starts
            .get(line + 1)
            .copied()
            .unwrap_or(self.text.len());
        let s = &self.text[self.starts[line].min(next)..next];
        next - (s.len() - s.trim_end_matches(['\n', '\r']).len())
    }

    /// Byte offset of the start of 1-based line `line` and 1-based character column `column`
    /// (the engine's places: `winlint FILE`'s `file:line:column`).
    pub fn line_column(&self, line: usize, column: usize) -> usize {
        let Some(&start) = self.starts.get(line.saturating_sub(1)) else {
            return self.text.len();
        };
        let end = self.line_end(line.saturating_sub(1));
        self.text[start..end]
            .char_indices()
            .nth(column.saturating_sub(1))
            .map_or(end, |(i, _)| start + i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_units_and_back() {
        // "é" is 2 bytes and 1 unit; "😀" 4 bytes and 2 units.
        let t = "a: é😀x\r\nb: 1\n";
        let ix = LineIndex::new(t);
        let x = t.find('x').unwrap();
        assert_eq!(ix.position(x), Position::new(0, 6));
        assert_eq!(ix.position(t.find('b').unwrap()), Position::new(1, 0));
        // A line's end is before its CRLF.
        assert_eq!(ix.line_end(0), x + 1);
        assert_eq!(ix.line_column(9, 1), t.len());
        assert_eq!(ix.line_column(2, 4), t.find('1').unwrap());
        // Inside a character: its start.
        assert_eq!(ix.position(t.find('é').unwrap() + 1), Position::new(0, 3));
    }
}
