//! The `winlint` command line: `winlint [lint] FILES`, `rules`, `explain`, `audit`, `serve`,
//! `manifests`. A live cluster (`--cluster`, `audit`) is [`cluster`]'s.

mod args;
mod catalog;
mod cluster;
mod collect;
mod fix;
mod input;
mod lint;
mod output;
mod parallel;
mod prescan;
mod registry;
mod write;

use clap::Parser;

/// Exit codes CI can trust.
pub use crate::process::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE};
pub use args::TargetArgs;
use args::{Cli, ColorChoice, Command, FailOn, Format, LintArgs, RulesFormat};
use catalog::{explain, list_rules};
use collect::{Input, collect_inputs};
pub use fix::{FixError, FixedText, fix_text};
use fix::{diff_name, fix_loaded, not_fixed_reason, with_bom};
use lint::lint;
use output::{Sink, exit_code, write_styled};
use prescan::{context_values, image_references, may_hold_context};

/// Entry point; returns the exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
        }
    };
    match cli.command {
        None => lint(cli.lint),
        Some(Command::Lint(a)) => lint(a),
        Some(Command::Rules { output }) => list_rules(output),
        Some(Command::Explain { rule }) => explain(&rule),
        Some(Command::Audit(a)) => cluster::audit(a),
        Some(Command::Serve(a)) => crate::server::serve(a),
        Some(Command::Manifests(a)) => crate::manifests::manifests(a),
    }
}
