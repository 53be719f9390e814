//! The configuration file is found from the working directory upward (`.winlint.yaml`,
//! `winlint.yaml`, up to the repository root), named in the summary, and skipped with
//! `--no-config`. `testdata/config-discovery/.winlint.yaml` names GKE, whose Windows nodes are
//! tainted: a configured taint, so WIN007 is an error; without the file the taint is assumed
//! and WIN007 is a warning that says so.

mod cli_support;

use cli_support::*;

const DIR: &str = "testdata/config-discovery/deploy";

#[test]
fn the_file_above_the_working_directory_is_found_and_named() {
    let out = Run::new(&["pod.yaml"]).cwd(root().join(DIR)).run();
    out.assert_code(1);
    golden("testdata/config-discovery/found.txt", &out.stdout);
    let json = Run::new(&["-o", "json", "pod.yaml"])
        .cwd(root().join(DIR))
        .run();
    assert_eq!(
        json.json()["summary"]["config"],
        "../.winlint.yaml",
        "{json}"
    );
}

#[test]
fn no_config_skips_it_and_the_assumed_taint_is_a_warning() {
    let out = Run::new(&["--no-config", "pod.yaml"])
        .cwd(root().join(DIR))
        .run();
    out.assert_code(0);
    golden("testdata/config-discovery/no-config.txt", &out.stdout);
}

#[test]
fn an_explicit_config_wins_and_is_not_called_found() {
    let out = Run::new(&["--config", "../aks.yaml", "pod.yaml"])
        .cwd(root().join(DIR))
        .run();
    out.assert_code(0);
    assert!(!out.stdout.contains("(found)"), "{out}");
    let both = Run::new(&["--config", "x.yaml", "--no-config", "pod.yaml"])
        .cwd(root().join(DIR))
        .run();
    both.assert_code(2);
}
