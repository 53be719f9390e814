//! `--fix` and the file system (src/cli/write.rs): owner, group and mode kept; a read-only
//! file, a symlink out of the tree, a hard-linked file (unless asked: then its links are kept)
//! and a file changed meanwhile refused, each with its reason in the report; CR-only line
//! endings kept.
//!
//! CI runs as root, where EACCES never happens: the read-only refusal is by mode, and the cases
//! that need another user run winlint through `setpriv` as nobody (skipped with a message when
//! that is not possible).

mod cli_support;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use cli_support::{Out, Run, bin, fixture, is_root};

/// A Windows deployment with safe fixes (the mount paths, the OS selector).
const FIXABLE: &str = "testdata/examples/iis-deployment.yaml";

fn copy(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, fixture(FIXABLE)).unwrap();
    p
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn fix(args: &[&str]) -> Out {
    let mut a = vec!["--fix"];
    a.extend_from_slice(args);
    Run::new(&a).run()
}

/// The text fixed in another directory: what a successful --fix writes.
fn fixed_text() -> String {
    let dir = tempfile::tempdir().unwrap();
    let p = copy(dir.path(), "ref.yaml");
    fix(&[s(&p)]).assert_clean_exit();
    let t = std::fs::read_to_string(&p).unwrap();
    assert_ne!(t, fixture(FIXABLE), "the example has fixable findings");
    t
}

/// A file with another hard link is not written (issue 30): its other name may lie outside
/// the tree (`ln /etc/x repo/x.yaml`), and a fix would change it there too, or, replacing the
/// file, split the two silently. `--fix-follow-symlinks` writes it in place, one file still.
#[test]
fn a_hard_link_is_refused_unless_asked_then_stays_one_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("tree")).unwrap();
    std::fs::create_dir(dir.path().join("elsewhere")).unwrap();
    let outside = copy(&dir.path().join("elsewhere"), "b.yaml");
    let a = dir.path().join("tree/a.yaml");
    std::fs::hard_link(&outside, &a).unwrap();
    let ino = std::fs::metadata(&a).unwrap().ino();
    let tree = dir.path().join("tree");
    // Walking the tree, and naming the file: both leave it, and say which file and why.
    for arg in [&tree, &a] {
        let out = fix(&[s(arg)]);
        out.assert_code(2);
        assert!(
            out.stdout
                .contains(&format!("{} has 2 hard links", a.display()))
                && out.stdout.contains("--fix-follow-symlinks"),
            "{out}"
        );
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), fixture(FIXABLE));
        assert_eq!(std::fs::metadata(&a).unwrap().ino(), ino);
    }
    fix(&["--fix-follow-symlinks", s(&a)]).assert_clean_exit();
    let (ma, mb) = (
        std::fs::metadata(&a).unwrap(),
        std::fs::metadata(&outside).unwrap(),
    );
    assert_eq!(
        (ma.ino(), mb.ino(), ma.nlink()),
        (ino, ino, 2),
        "the link is kept"
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), fixed_text());
}

#[test]
fn owner_group_and_mode_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy(dir.path(), "app.yaml");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
    // As root, the file belongs to nobody: the replacement must be given back to nobody.
    let owner = if is_root() {
        std::os::unix::fs::chown(&p, Some(65534), Some(65534)).unwrap();
        (65534, 65534)
    } else {
        let m = std::fs::metadata(&p).unwrap();
        (m.uid(), m.gid())
    };
    fix(&[s(&p)]).assert_clean_exit();
    let m = std::fs::metadata(&p).unwrap();
    assert_eq!((m.uid(), m.gid()), owner);
    assert_eq!(m.mode() & 0o7777, 0o640);
    assert_eq!(std::fs::read_to_string(&p).unwrap(), fixed_text());
}

#[test]
fn another_users_writable_file_keeps_its_owner() {
    // nobody may write root's 0666 file but not give a new file to root: written in place.
    if !is_root() {
        eprintln!("note: not root: cannot make a file of another user; case skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let p = copy(dir.path(), "app.yaml");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o666)).unwrap();
    let via = [
        "setpriv",
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
    ];
    let probe = std::process::Command::new(via[0])
        .args(&via[1..])
        .args([bin(), "--version"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!(
            "note: cannot run winlint as nobody (setpriv missing or binary not readable); case skipped"
        );
        return;
    }
    let out = Run::new(&["--fix", s(&p)]).via(&via).run();
    out.assert_clean_exit();
    let m = std::fs::metadata(&p).unwrap();
    assert_eq!((m.uid(), m.gid()), (0, 0), "still root's\n{out}");
    assert_eq!(std::fs::read_to_string(&p).unwrap(), fixed_text(), "{out}");
}

#[test]
fn a_read_only_file_is_refused_even_for_root() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy(dir.path(), "app.yaml");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444)).unwrap();
    let out = fix(&[s(&p)]);
    out.assert_code(2);
    assert_eq!(std::fs::read_to_string(&p).unwrap(), fixture(FIXABLE));
    // The error, and each fixable finding's reason, say it.
    assert!(
        out.stdout
            .contains("--fix did not write the file: the file is read-only (mode 0444)"),
        "{out}"
    );
    assert!(
        out.stdout
            .contains("[not fixed: the file is read-only (mode 0444); not written]"),
        "{out}"
    );
}

/// tree/ with a link to a file outside it.
fn link_out_of_tree() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("tree")).unwrap();
    std::fs::create_dir(dir.path().join("elsewhere")).unwrap();
    let target = copy(&dir.path().join("elsewhere"), "app.yaml");
    std::os::unix::fs::symlink(&target, dir.path().join("tree/app.yaml")).unwrap();
    let tree = dir.path().join("tree");
    (dir, tree, target)
}

#[test]
fn a_symlink_out_of_the_tree_is_refused_unless_asked() {
    let (_dir, tree, target) = link_out_of_tree();
    // Walking the tree, and naming the link: both leave it.
    for arg in [tree.clone(), tree.join("app.yaml")] {
        let out = fix(&[s(&arg)]);
        out.assert_code(2);
        assert!(
            out.stdout.contains("a symlink leads out of")
                && out.stdout.contains("--fix-follow-symlinks"),
            "{out}"
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), fixture(FIXABLE));
    }
    let out = fix(&["--fix-follow-symlinks", s(&tree)]);
    out.assert_clean_exit();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), fixed_text());
    assert!(
        std::fs::symlink_metadata(tree.join("app.yaml"))
            .unwrap()
            .is_symlink()
    );
}

#[test]
fn cr_only_line_endings_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("mac.yaml");
    std::fs::write(&p, fixture(FIXABLE).replace('\n', "\r")).unwrap();
    fix(&[s(&p)]).assert_clean_exit();
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(!text.contains('\n'), "a LF in a CR-only file:\n{text:?}");
    assert_eq!(text, fixed_text().replace('\n', "\r"));
}

#[test]
fn data_appended_while_it_runs_is_not_lost() {
    // The hook appends between winlint's read and its write, as an editor or a generator would.
    let dir = tempfile::tempdir().unwrap();
    let p = copy(dir.path(), "app.yaml");
    let appended = "# added meanwhile\n";
    let out = Run::new(&["--fix", s(&p)])
        .env("WINLINT_TEST_APPEND_BEFORE_FIX", appended)
        .run();
    out.assert_code(2);
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        format!("{}{appended}", fixture(FIXABLE)),
        "the file is as the other writer left it\n{out}"
    );
    assert!(
        out.stdout
            .contains("[not fixed: the file changed while winlint ran"),
        "{out}"
    );
}
