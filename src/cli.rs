//! The `winlint` command line: `winlint [lint] FILES`, `rules`, `explain`, `audit`, `serve`,
//! `manifests`, `lsp`. This file is the dispatch; each job is a module of its own:
//!
//! * [`args`]: the arguments (subcommands, `lint`'s flags, [`TargetArgs`]);
//! * [`lint`]: the lint run, on the inputs [`collect`] expands and [`input`] reads, pass 1 cheap
//!   ([`prescan`]), pass 2 on all cores ([`parallel`]), `--fix` ([`fix`], written back by
//!   [`write`]), the report ([`output`]);
//! * [`catalog`]: `rules` and `explain`; [`cluster`]: a live cluster (`--cluster`, `audit`);
//!   [`plan`]: `plan`, a move of the Windows nodes judged ([`crate::plan`]);
//!   [`registry`]: `--registry`; [`editor`]: one buffer's lint for `winlint lsp` ([`crate::lsp`]).

mod args;
mod catalog;
mod cluster;
mod collect;
mod editor;
mod fix;
mod input;
mod lint;
mod output;
mod parallel;
mod plan;
mod plan_fix;
mod prescan;
mod registry;
mod write;

use clap::Parser;

/// Exit codes CI can trust.
pub use crate::process::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE};
pub use args::TargetArgs;
use args::{Cli, Command};
use catalog::{explain, list_rules};
pub use fix::{FixError, FixedText, fix_text};
use lint::lint;

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
        Some(Command::Plan(a)) => plan::plan(a),
        Some(Command::Serve(a)) => crate::server::serve(a),
        Some(Command::Manifests(a)) => crate::manifests::manifests(a),
        Some(Command::Lsp(a)) => match editor::EditorLinter::new(a.target, a.render) {
            Ok(linter) => crate::lsp::run(std::sync::Arc::new(linter)),
            Err(e) => {
                eprintln!("winlint lsp: {e}");
                EXIT_USAGE
            }
        },
    }
}
