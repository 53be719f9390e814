//! `winlint lsp`: a Language Server on stdin/stdout (LSP 3.17, through rust-analyzer's
//! `lsp-server` and the `lsp-types` crate), so that an editor shows winlint's findings while a
//! manifest is written:
//!
//! * [`server`]: the message loop (initialize, the requests and notifications, debounced lints,
//!   shutdown and exit);
//! * [`store`]: the open documents, their text and their last lint;
//! * [`position`]: byte offsets of the text ↔ LSP positions (lines and UTF-16 code units);
//! * [`diagnostics`]: the findings as diagnostics (range, severity, rule ID and its page);
//! * [`actions`]: the engine's fixes as quick fixes (text edits planned by [`crate::textedit`]);
//! * [`hover`]: a rule's documentation (`winlint explain`) over its findings.
//!
//! The lint itself is not here: it is the command line's, handed in as a [`Linter`] by the
//! subcommand dispatch (`cli/editor.rs`), so a buffer is linted exactly as `winlint FILE` lints
//! the file, with the same configuration discovery. A file of a Helm chart or a kustomization is
//! linted through its render when it is opened or saved, as `winlint DIR` lints it: on a
//! thread of its own (the tool runs within `--render-timeout`), the findings published on the
//! templates the command line names.

mod actions;
mod diagnostics;
mod hover;
mod position;
mod server;
mod store;

use std::path::Path;
use std::sync::Arc;

use crate::config::Config;
use crate::model::Context;
use crate::render::Source;
use crate::report::{InputError, Located};

pub use server::run;

/// One buffer's lint, as the command line makes it.
pub struct Linted {
    pub findings: Vec<Located>,
    /// Why the text could not be linted (invalid YAML, not UTF-8, …).
    pub errors: Vec<InputError>,
    /// The configuration the buffer was linted with (its fixes are allowed by its policy).
    pub config: Config,
    /// The context objects the lint saw.
    pub context: Context,
}

/// The linter the server runs, shared with its render thread.
pub type SharedLinter = Arc<dyn Linter + Send + Sync>;

/// The command line's lint of one buffer, and of a chart or kustomization through its render.
pub trait Linter {
    /// Lint `text`, the buffer of the file at `path` (`None`: not a file), named `name`.
    /// `Err`: the configuration could not be read.
    fn lint(&self, name: &str, path: Option<&Path>, text: &str) -> Result<Linted, String>;
    /// `text` with every fix `linted`'s policy allows applied, as `winlint --fix` writes it
    /// (`None`: nothing to change, or it could not be fixed).
    fn fix_all(&self, text: &str, linted: &Linted) -> Option<String>;
    /// The chart or kustomization that renders the file at `path`, if any.
    fn source_of(&self, path: &Path) -> Option<Source>;
    /// `source` rendered and linted as `winlint DIR` lints it: each finding's `file` is the
    /// template (or kustomization file) its object comes from, with no line; a tool that could
    /// not render is an error. `Err`: the configuration could not be read.
    fn lint_rendered(&self, source: &Source) -> Result<Linted, String>;
}
