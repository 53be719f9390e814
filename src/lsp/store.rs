//! The open documents: their text (full sync: each change sends the whole text), the file they
//! are, and their last lint.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use lsp_types::{Diagnostic, Uri};

use super::Linted;
use crate::source::Document;

pub struct Doc {
    pub uri: Uri,
    pub version: i32,
    pub text: String,
    /// The file, for `file:` URIs (configuration discovery and the findings' file name).
    pub path: Option<PathBuf>,
    /// The lint of `text`; `None` until linted.
    pub lint: Option<Lint>,
}

pub struct Lint {
    pub linted: Linted,
    /// One per finding, in the same order, then one per input error.
    pub diagnostics: Vec<Diagnostic>,
    /// The documents of `text` with their source maps (`None`: it is not valid YAML).
    pub docs: Option<Vec<Document>>,
}

#[derive(Default)]
pub struct Store {
    docs: HashMap<String, Doc>,
}

impl Store {
    pub fn open(&mut self, uri: Uri, version: i32, text: String) {
        let path = file_path(&uri);
        let key = uri.as_str().to_string();
        (self.docs).insert(
            key,
            Doc {
                uri,
                version,
                text,
                path,
                lint: None,
            },
        );
    }

    /// The new text of an open document (`false`: not open).
    pub fn change(&mut self, uri: &Uri, version: i32, text: String) -> bool {
        match self.docs.get_mut(uri.as_str()) {
            Some(d) => {
                (d.version, d.text, d.lint) = (version, text, None);
                true
            }
            None => false,
        }
    }

    pub fn close(&mut self, uri: &Uri) -> Option<Doc> {
        self.docs.remove(uri.as_str())
    }

    pub fn get(&self, uri: &Uri) -> Option<&Doc> {
        self.docs.get(uri.as_str())
    }

    pub fn get_mut(&mut self, uri: &Uri) -> Option<&mut Doc> {
        self.docs.get_mut(uri.as_str())
    }
}

/// The open document of the file at `path`.
impl Store {
    pub fn by_path(&self, path: &Path) -> Option<&Doc> {
        self.docs.values().find(|d| d.path.as_deref() == Some(path))
    }
}

/// The `file:` URI of an absolute path (percent-encoded but for `/`); `file:///C:/x` on Windows.
pub fn file_uri(path: &Path) -> Option<Uri> {
    let s = path.to_str()?;
    let s = if cfg!(windows) {
        s.replace('\\', "/")
    } else {
        s.to_string()
    };
    let s = if s.starts_with('/') {
        s
    } else {
        format!("/{s}")
    };
    const KEEP: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'/')
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~')
        .remove(b':');
    let encoded = percent_encoding::utf8_percent_encode(&s, KEEP);
    Uri::from_str(&format!("file://{encoded}")).ok()
}

/// The path of a `file:` URI (percent-decoded); `None` for other schemes (`untitled:`).
pub fn file_path(uri: &Uri) -> Option<PathBuf> {
    if !uri
        .scheme()
        .is_some_and(|s| s.as_str().eq_ignore_ascii_case("file"))
    {
        return None;
    }
    let raw = uri.path().as_str();
    let decoded = percent_encoding::percent_decode_str(raw)
        .decode_utf8()
        .ok()?;
    // file:///C:/x on Windows: the path is /C:/x.
    let p = decoded.as_ref();
    let p = match p.as_bytes() {
        [b'/', d, b':', ..] if cfg!(windows) && d.is_ascii_alphabetic() => &p[1..],
        _ => p,
    };
    Some(PathBuf::from(p))
}
