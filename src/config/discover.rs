//! Find the configuration file when none is named: `.winlint.yaml`, then `winlint.yaml`, in the
//! working directory and each parent up to the repository root (the first directory holding
//! `.git`, a directory or a worktree's file) or the filesystem root, as ruff and kube-linter do.
//! The nearest file wins; files are never merged.

use std::path::{Path, PathBuf};

/// The names looked for in each directory, in order.
pub const NAMES: [&str; 2] = [".winlint.yaml", "winlint.yaml"];

/// The nearest configuration file from `start` upward, if any.
pub fn find_from(start: &Path) -> Option<PathBuf> {
    for dir in start.ancestors() {
        if let Some(found) = NAMES.iter().map(|n| dir.join(n)).find(|p| p.is_file()) {
            return Some(found);
        }
        // The repository root: a configuration above it belongs to something else.
        if dir.join(".git").exists() {
            return None;
        }
    }
    None
}

/// [`find_from`] the working directory, named relative to it when it is below it (`./x`,
/// `../x`): the summary names it the way the user would.
pub fn find() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    let found = find_from(&cwd)?;
    let rel = found.strip_prefix(&cwd).map(|r| Path::new(".").join(r));
    Some(rel.unwrap_or_else(|_| {
        let up = cwd
            .ancestors()
            .position(|a| found.parent() == Some(a))
            .unwrap_or(0);
        let mut p = PathBuf::new();
        for _ in 0..up {
            p.push("..");
        }
        p.join(found.file_name().unwrap_or_default())
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(p: &Path) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "").unwrap();
    }

    #[test]
    fn nearest_file_up_to_the_repository_root() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        let deep = root.join("a/b/c");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        // Above the repository: never found.
        touch(&tmp.path().join("winlint.yaml"));
        assert_eq!(find_from(&deep), None);
        // At the root.
        touch(&root.join("winlint.yaml"));
        assert_eq!(find_from(&deep), Some(root.join("winlint.yaml")));
        // The dotted name first in one directory.
        touch(&root.join(".winlint.yaml"));
        assert_eq!(find_from(&deep), Some(root.join(".winlint.yaml")));
        // The nearest directory wins.
        touch(&root.join("a/winlint.yaml"));
        assert_eq!(find_from(&deep), Some(root.join("a/winlint.yaml")));
        // A directory named like the file is not it.
        std::fs::create_dir_all(root.join("a/b/winlint.yaml")).unwrap();
        assert_eq!(find_from(&deep), Some(root.join("a/winlint.yaml")));
    }

    #[test]
    fn a_worktree_git_file_marks_the_root_too() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("wt");
        touch(&root.join(".git"));
        touch(&tmp.path().join(".winlint.yaml"));
        assert_eq!(find_from(&root.join("sub")), None);
    }
}
