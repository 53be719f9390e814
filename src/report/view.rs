//! What a person asks to see of a report (`--layout`, `--statistics`, `--severity`), shared by
//! `winlint` and `winlint audit`. None of it changes the verdict: the exit code counts every
//! finding against `--fail-on`.

use std::io::IsTerminal;

use clap::{Args, ValueEnum};

use super::Counts;
use crate::model::Severity;

/// The view flags, flattened into the linter's and audit's arguments.
#[derive(Args, Debug, Clone, Default)]
pub struct ViewArgs {
    /// Text layout: grouped (findings under one header line per object, messages wrapped to the
    /// terminal width, COLUMNS or 100, the fix on its own line), lines (one record per finding,
    /// for grep and scripts), auto (grouped when stdout is a terminal, lines through a pipe).
    #[arg(long, value_enum, default_value_t = Layout::Auto)]
    pub layout: Layout,
    /// Counts per rule and per severity (and per namespace in `winlint audit`): in -o text
    /// instead of the findings, in -o json as a "statistics" object beside them (-o html always
    /// shows them).
    #[arg(long)]
    pub statistics: bool,
    /// Show only findings of this severity or higher (warning: warnings and errors). A display
    /// filter: the exit code still counts every finding against --fail-on.
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub severity: Option<MinSeverity>,
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq, Default)]
pub enum Layout {
    #[default]
    Auto,
    Grouped,
    Lines,
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum MinSeverity {
    Error,
    Warning,
    Info,
}

impl From<MinSeverity> for Severity {
    fn from(m: MinSeverity) -> Severity {
        match m {
            MinSeverity::Error => Severity::Error,
            MinSeverity::Warning => Severity::Warning,
            MinSeverity::Info => Severity::Info,
        }
    }
}

/// How the text report lays findings out.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum TextLayout {
    /// One record per finding: what pipes, CI logs and `grep` get.
    #[default]
    Lines,
    /// Per object, wrapped to `width` columns.
    Grouped { width: usize },
}

/// The width when neither COLUMNS nor the terminal says (and the narrowest wrapped to: below it
/// the indented messages would be a word per line).
const DEFAULT_WIDTH: usize = 100;
const MIN_WIDTH: usize = 40;

impl ViewArgs {
    /// `Err` is the line to print when the flags ask what the format cannot show.
    pub fn check(&self, text_or_json: bool) -> Result<(), &'static str> {
        if self.statistics && !text_or_json {
            return Err("--statistics is shown by -o text, -o json and -o html");
        }
        Ok(())
    }

    /// The counters of a run with these flags.
    pub fn counts(&self) -> Counts {
        Counts::showing(
            self.severity.map_or(Severity::Info, Severity::from),
            self.statistics,
        )
    }

    /// The layout of the text report on stdout.
    pub fn text_layout(&self) -> TextLayout {
        let grouped = match self.layout {
            Layout::Grouped => true,
            Layout::Lines => false,
            Layout::Auto => std::io::stdout().is_terminal(),
        };
        if grouped {
            TextLayout::Grouped { width: width() }
        } else {
            TextLayout::Lines
        }
    }
}

/// COLUMNS (as ls and git read it), else the terminal's width, else [`DEFAULT_WIDTH`].
fn width() -> usize {
    let w = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
        .or_else(terminal_width)
        .unwrap_or(DEFAULT_WIDTH);
    w.max(MIN_WIDTH)
}

/// The width of the terminal on stdout, if it is one.
#[cfg(unix)]
fn terminal_width() -> Option<usize> {
    let mut ws = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize` through the pointer, which is valid for the call;
    // on a descriptor that is not a terminal it fails and writes nothing.
    let r = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) };
    (r == 0 && ws.ws_col > 0).then_some(usize::from(ws.ws_col))
}

/// Elsewhere (Windows) only COLUMNS tells the width: the console's would need its API.
#[cfg(not(unix))]
fn terminal_width() -> Option<usize> {
    None
}
