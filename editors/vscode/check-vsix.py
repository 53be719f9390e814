#!/usr/bin/env python3
"""Check a packaged winlint .vsix (a zip): what VS Code installs from it is there.

    python3 check-vsix.py winlint-0.1.0.vsix

The manifest (extension/package.json) starts ./out/extension.js and declares the settings
the README lists (winlint.path, winlint.args); the compiled extension.js starts `winlint lsp`
with winlint.path; the language client it requires is shipped; nothing else of this folder is
(sources, source maps, this script). Exit 1 with what is wrong.
"""
import json
import sys
import zipfile


def main(path):
    problems = []
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())

        def need(name):
            if name not in names:
                problems.append(f"missing {name}")
                return None
            return z.read(name).decode("utf-8")

        manifest = need("extension/package.json")
        if manifest is not None:
            m = json.loads(manifest)
            if m.get("main") != "./out/extension.js":
                problems.append(f"package.json main is {m.get('main')!r}, not ./out/extension.js")
            props = m.get("contributes", {}).get("configuration", {}).get("properties", {})
            for setting, default in (("winlint.path", "winlint"), ("winlint.args", [])):
                if setting not in props:
                    problems.append(f"package.json declares no {setting} setting")
                elif props[setting].get("default") != default:
                    problems.append(f"{setting}'s default is not {default!r}")
        js = need("extension/out/extension.js")
        if js is not None:
            for needle in ('getConfiguration("winlint")', 'get("path", "winlint")', '"lsp"',
                           "vscode-languageclient/node"):
                if needle not in js:
                    problems.append(f"out/extension.js lacks {needle}")
        need("extension/readme.md")
        need("extension/node_modules/vscode-languageclient/package.json")
        # Besides the runtime dependencies, only these: no sources, maps, scripts or tests.
        shipped = {"extension/package.json", "extension/readme.md", "extension/out/extension.js"}
        for n in sorted(names):
            inside = n.startswith("extension/") and not n.startswith("extension/node_modules/")
            if inside and n not in shipped:
                problems.append(f"shipped but not needed: {n}")
        files = len(names)
    if problems:
        for p in problems:
            print(f"{path}: {p}", file=sys.stderr)
        return 1
    print(f"{path}: ok ({files} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
