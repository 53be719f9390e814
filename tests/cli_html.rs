//! `-o html`: the exact page for two inputs, against the golden files in testdata/html/
//! (`WINLINT_BLESS=1` rewrites them; open them in a browser to see what a user gets), and what
//! the page must never do: load anything, or turn a name from a manifest into markup. What a
//! browser shows of it is tests/html_chromium.rs's.

mod cli_support;

use cli_support::winlint;

fn golden(name: &str, actual: &str) {
    cli_support::golden(&format!("testdata/html/{name}"), actual);
}

/// The Deployment and Pod of tests/cli_text.rs: fixable, opt-in and unfixable findings, a
/// namespace given and one not.
#[test]
fn lint_page_is_exact() {
    let out = winlint(&["-o", "html", "testdata/text/input/"]);
    out.assert_code(1);
    assert_eq!(out.stderr, "");
    golden("shop.html", &out.stdout);
    let page = &out.stdout;
    for want in [
        "<p class=\"summary\">2 errors, 4 warnings, 1 info in 1 file (2 objects, 2 pod \
         templates checked); 4 fixable with --fix</p>",
        "<tr><td>shop</td><td class=\"num\">2</td><td class=\"num\">2</td><td \
         class=\"num\">1</td></tr>",
        "<tr><td><i>(not given)</i></td>",
        "<h3>shop/Deployment/iis-frontend</h3>\n<p class=\"where\">testdata/text/input/shop.yaml</p>",
        "<h3>Pod/agent</h3>",
        "<p class=\"fix\"><b>fix:</b> add nodeSelector kubernetes.io/os=windows <span \
         class=\"tag\">[fixable]</span></p>",
        "<a class=\"rule\" href=\"https://github.com/winlint/winlint/blob/main/docs/rules/WIN001.md\">WIN001</a>",
        "<span class=\"n\">50%</span> workloads without errors (1 of 2)",
    ] {
        assert!(page.contains(want), "{want:?} not in the page\n{page}");
    }
}

/// Names and messages that are markup are text on the page.
#[test]
fn markup_in_manifests_is_text() {
    let out = winlint(&["-o", "html", "testdata/html/input/"]);
    out.assert_code(1);
    golden("hostile.html", &out.stdout);
    let page = &out.stdout;
    // The score counts the Deployment, not the ConfigMap beside it.
    assert!(
        page.contains("(2 objects, 1 pod template checked)")
            && page.contains("<span class=\"n\">0%</span> workloads without errors (0 of 1)"),
        "{page}"
    );
    // The page itself has no script: any `<script` or `<img` would be the input's.
    assert!(!page.contains("<script"), "{page}");
    assert!(!page.contains("<img"), "{page}");
    assert!(
        page.contains(
            "<h3>&lt;img src=x onerror=alert(1)&gt;/Deployment/web&lt;script&gt;\
             document.title=&#39;pwned&#39;&lt;/script&gt;</h3>"
        ),
        "{page}"
    );
    assert!(
        page.contains(
            "container &quot;&lt;script&gt;alert(&#39;container&#39;)&lt;/script&gt;&quot;"
        ),
        "{page}"
    );
}

/// Nothing on the page is fetched: no script, stylesheet, font or image from anywhere; the
/// only URLs are the rules' pages, as links. The same run gives the same bytes.
#[test]
fn the_page_is_self_contained_and_deterministic() {
    let out = winlint(&[
        "-o",
        "html",
        "testdata/text/input/",
        "testdata/formats/input/",
    ]);
    out.assert_code(2);
    let page = &out.stdout;
    for banned in ["<script", "<link", "<img", "@import", "url(", "src="] {
        assert!(!page.contains(banned), "{banned} in\n{page}");
    }
    let links: Vec<&str> = page.split("href=\"").skip(1).collect();
    assert!(!links.is_empty());
    for l in links {
        assert!(
            l.starts_with("https://github.com/winlint/winlint/blob/main/docs/rules"),
            "{l}"
        );
    }
    // An unreadable input is listed, and counted as the text report counts it.
    assert!(page.contains("<h2>Could not be read</h2>"), "{page}");
    assert!(page.contains("1 input could not be read"), "{page}");
    let again = winlint(&[
        "-o",
        "html",
        "testdata/text/input/",
        "testdata/formats/input/",
    ]);
    assert_eq!(again.stdout, out.stdout);
}

/// --severity hides findings from the lists and tables, not from the counts; --statistics is
/// accepted (the page always has the tables).
#[test]
fn severity_filters_the_lists_not_the_counts() {
    let out = winlint(&[
        "-o",
        "html",
        "--severity",
        "error",
        "--statistics",
        "testdata/text/input/",
    ]);
    out.assert_code(1);
    let page = &out.stdout;
    assert!(
        page.contains("<span class=\"n\">4</span> warnings"),
        "{page}"
    );
    assert!(page.contains("5 findings below --severity"), "{page}");
    assert!(!page.contains("<li class=\"finding warning\">"), "{page}");
    assert!(!page.contains("<td class=\"warning\">"), "{page}");
    assert_eq!(page.matches("<li class=\"finding error\">").count(), 2);
}
