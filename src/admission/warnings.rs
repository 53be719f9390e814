//! The text of the webhook's warnings, shaped for what the API server does with them.
//!
//! The API server hands a webhook's `response.warnings` to the client as `Warning` headers
//! through its warning recorder (kubernetes `staging/src/k8s.io/apiserver/pkg/endpoints/filters/
//! warning.go`, `recorder.AddWarning`): the warnings of one response pass unchanged while they
//! total at most 4096 runes (`truncateAtTotalRunes`); past that every warning is cut to 256 runes
//! (`truncateItemRunes`), and those that come after the total is reached are dropped. A warning
//! with a control character (a newline) is dropped whole (`k8s.io/apimachinery/pkg/util/net`
//! `NewWarningHeader`). kubectl prints each one as `Warning: <text>` without cutting it.
//!
//! kubectl writes warnings through client-go's `rest.NewWarningWriter` with `Deduplicate: true`
//! (kubernetes `staging/src/k8s.io/kubectl/pkg/cmd/cmd.go`, `NewKubectlCommand`): a text it has
//! printed once in the process is not printed again, so the same warning about two objects of
//! one `kubectl apply -R` shows once, under whichever object came first. Each warning therefore
//! starts with its object ([`named`]: `Deployment shop/iis: WIN502: …`), which also tells the
//! warnings of a denied object from the next object's `created` line.
//!
//! So each warning is one line of at most [`MAX_WARNING_CHARS`] runes, and winlint's warnings
//! to one request total at most [`BUDGET_CHARS`] (room is left for Pod Security and deprecation
//! warnings). A finding's warning keeps its remedy whole ([`remedy`]): when the message does
//! not fit, its beginning is shortened, never the fix.

use crate::model::Finding;

/// The most runes of one warning: the API server's `truncateItemRunes`, so that no warning is
/// ever cut by it, even in a response whose warnings pass its total.
pub const MAX_WARNING_CHARS: usize = 256;

/// The most runes winlint's warnings to one request total: under the API server's 4096
/// (`truncateAtTotalRunes`), leaving room for the warnings of other admission plugins.
pub const BUDGET_CHARS: usize = 3072;

/// The remedy of a finding, as its warning must keep it: the fix's description when it has
/// one, else the last clause of its message (messages say what is wrong, why, then what to
/// do: `…; the pod will stay Pending. Add a toleration`).
pub fn remedy(f: &Finding) -> String {
    match &f.fix {
        Some(fix) => fix.description.clone(),
        None => split_remedy(&one_line(&f.message)).1.to_string(),
    }
}

/// `message` split before its remedy: after its last sentence's start (`. ` and a capital),
/// else after its last clause's (`; `), else after its last `: ` (`…(no updates since): use
/// mcr.microsoft.com/…`); only outside parentheses and quotes (an API server error quoted in
/// a message has its own sentences). `("", message)` when it has one clause.
fn split_remedy(message: &str) -> (&str, &str) {
    let bytes = message.as_bytes();
    let mut depth = 0i32;
    let mut quoted = false;
    // The last boundary of each kind: sentence, clause, colon.
    let mut cuts: [Option<usize>; 3] = [None; 3];
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b'(' | b'[' if !quoted => depth += 1,
            b')' | b']' if !quoted => depth -= 1,
            b'.' | b';' | b':' if !quoted && depth == 0 && bytes.get(i + 1) == Some(&b' ') => {
                let capital = message[i + 2..]
                    .chars()
                    .next()
                    .is_some_and(char::is_uppercase);
                match b {
                    b'.' if capital => cuts[0] = Some(i),
                    b';' => cuts[1] = Some(i),
                    b':' => cuts[2] = Some(i),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    match cuts.into_iter().flatten().next() {
        Some(i) => (&message[..=i], message[i + 2..].trim()),
        None => ("", message),
    }
}

/// The first line of `s` (the API server drops a warning with a control character).
fn one_line(s: &str) -> String {
    s.lines()
        .next()
        .unwrap_or("")
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The warning for finding `f`: `head: message` (`head` is `WIN007`, `would deny: WIN007`, …),
/// one line, at most [`MAX_WARNING_CHARS`] runes, its remedy whole: a message too long keeps
/// its beginning, shortened, and then its remedy (`… Fix: <the fix>` for a fixable finding).
pub fn finding_line(head: &str, message: &str, f: &Finding) -> String {
    finding_line_within(head, message, f, MAX_WARNING_CHARS)
}

/// [`finding_line`] within `max` runes (the room a [`named`] line leaves after its object).
/// A message too long gives up its details first: the middle of each long token (an image
/// reference, a quoted path: the user wrote them and knows them) is shortened to `…` before
/// the problem's end is cut, so the cause and the remedy stay.
pub fn finding_line_within(head: &str, message: &str, f: &Finding, max: usize) -> String {
    let message = one_line(message);
    let full = format!("{head}: {message}");
    if full.chars().count() <= max {
        return full;
    }
    let (problem, tail) = match &f.fix {
        Some(fix) => (
            message.as_str(),
            format!(" Fix: {}", one_line(&fix.description)),
        ),
        None => {
            let (problem, remedy) = split_remedy(&message);
            (problem, format!(" {remedy}"))
        }
    };
    // The details of the problem go first (never the remedy's: the image to use is whole).
    let problem = &elide_details(problem, full.chars().count() - max);
    let lead = format!("{head}: ");
    let room = max.saturating_sub(lead.chars().count() + tail.chars().count());
    // Less than a few words of the problem would say nothing: then the line is cut plainly.
    if room < 20 {
        return truncate(&full, max);
    }
    format!("{lead}{}{tail}", truncate(problem.trim_end(), room))
}

/// The longest token kept whole when a message must shrink; longer ones keep their ends.
const LONG_TOKEN: usize = 32;

/// `message` with the middles of its long tokens (whitespace-separated, longer than
/// [`LONG_TOKEN`] runes: image references, paths, quoted values) replaced by `…`, longest
/// first, until `excess` runes are saved or none is left to shorten.
fn elide_details(message: &str, excess: usize) -> String {
    let mut tokens: Vec<String> = message.split(' ').map(str::to_string).collect();
    let mut order: Vec<usize> = (0..tokens.len())
        .filter(|&i| tokens[i].chars().count() > LONG_TOKEN)
        .collect();
    order.sort_by_key(|&i| std::cmp::Reverse(tokens[i].chars().count()));
    let mut saved = 0;
    for i in order {
        if saved >= excess {
            break;
        }
        let chars: Vec<char> = tokens[i].chars().collect();
        let keep = LONG_TOKEN / 2;
        let short: String = chars[..keep]
            .iter()
            .chain(std::iter::once(&'…'))
            .chain(&chars[chars.len() - keep + 1..])
            .collect();
        saved += chars.len() - short.chars().count();
        tokens[i] = short;
    }
    tokens.join(" ")
}

/// The most runes of an object's name in [`named`] (a name may have 253).
const MAX_LABEL_CHARS: usize = 80;

/// The object a warning is about, as it starts each line: `Deployment shop/iis` (kind,
/// namespace/name, as `kubectl get` spells them), shortened to [`MAX_LABEL_CHARS`].
pub fn label(kind: &str, namespace: &str, name: &str) -> String {
    let full = match (namespace.is_empty(), name.is_empty()) {
        (_, true) => kind.to_string(),
        (true, false) => format!("{kind} {name}"),
        (false, false) => format!("{kind} {namespace}/{name}"),
    };
    truncate(&full, MAX_LABEL_CHARS)
}

/// The room a [`named`] line of `label` leaves for the warning itself.
pub fn room_after(label: &str) -> usize {
    MAX_WARNING_CHARS.saturating_sub(label.chars().count() + 2)
}

/// `line` named by its object: `Deployment shop/iis: WIN502: …`, within
/// [`MAX_WARNING_CHARS`] (a line made within [`room_after`] is never cut here).
pub fn named(label: &str, line: &str) -> String {
    if label.is_empty() {
        return truncate(line, MAX_WARNING_CHARS);
    }
    truncate(&format!("{label}: {line}"), MAX_WARNING_CHARS)
}

/// A warning without its object's name ([`named`]'s inverse, for readers that match on the
/// rule): `WIN502: …` of `Deployment shop/iis: WIN502: …`; the line itself when it names none.
pub fn unnamed(line: &str) -> &str {
    const HEADS: [&str; 3] = ["WIN", "winlint", "would deny"];
    if HEADS.iter().any(|h| line.starts_with(h)) {
        return line;
    }
    HEADS
        .iter()
        .filter_map(|h| line.find(&format!(": {h}")))
        .min()
        .map_or(line, |i| &line[i + 2..])
}

/// The warning for a mutation the user must hear of ([`crate::engine::mutation::Mutated::notices`]):
/// `WIN201: the mutating webhook set spec.hostNetwork=true` (on `/mutate`), or what it will do
/// at pod creation (`/validate` of a workload, `future`).
pub fn mutation_line(rule_id: &str, description: &str, future: bool) -> String {
    let when = if future {
        "at pod creation the mutating webhook will"
    } else {
        "the mutating webhook did:"
    };
    truncate(
        &format!("{rule_id}: {when} {}", one_line(description)),
        MAX_WARNING_CHARS,
    )
}

/// `s` cut to `max` runes, `…` marking the cut.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
    t.push('…');
    t
}

/// `warnings` (each within [`MAX_WARNING_CHARS`]) cut to [`BUDGET_CHARS`] in total: those that
/// do not fit are counted in a last line rather than left for the API server to drop silently.
pub fn within_budget(warnings: Vec<String>) -> Vec<String> {
    // The last line's own room.
    const NOTE: usize = 100;
    let total: usize = warnings.iter().map(|w| w.chars().count()).sum();
    if total <= BUDGET_CHARS {
        return warnings;
    }
    let mut out = Vec::new();
    let mut used = 0;
    for (i, w) in warnings.iter().enumerate() {
        let n = w.chars().count();
        if used + n + NOTE > BUDGET_CHARS {
            let rest = warnings.len() - i;
            out.push(format!(
                "winlint: {rest} more warning{} not shown (the API server limits the size of warnings)",
                if rest == 1 { "" } else { "s" }
            ));
            break;
        }
        used += n;
        out.push(w.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Fix, FixSafety};
    use crate::rules::resources::win408_memory_request_limit::WIN408;

    fn finding(message: &str) -> Finding {
        Finding::new(&WIN408, "/spec", message)
    }

    #[test]
    fn the_remedy_is_the_last_clause_outside_quotes() {
        let m = r#"container "app" mounts subPath "a.json": Docker cannot ("invalid mount. Source path must be a directory; really"), so it fails. Mount the whole volume instead"#;
        assert_eq!(remedy(&finding(m)), "Mount the whole volume instead");
        assert_eq!(
            remedy(&finding("no spec.os; add spec.os.name: windows")),
            "add spec.os.name: windows"
        );
        // A period before a lower-case word (`e.g. x`, `1.36`) ends no sentence.
        assert_eq!(
            remedy(&finding("use e.g. busybox 1.36")),
            "use e.g. busybox 1.36"
        );
        let mut fixable = finding("x; y");
        fixable.fix = Some(Fix {
            safety: FixSafety::Safe,
            description: "set requests.memory to 1Gi".into(),
            ops: Vec::new(),
        });
        assert_eq!(remedy(&fixable), "set requests.memory to 1Gi");
    }

    #[test]
    fn a_long_message_keeps_its_remedy_and_fits() {
        let m = format!(
            "container \"app\" requests 512Mi {}; Windows has no OOM killer. Set requests.memory equal to limits.memory (1Gi) or remove the request",
            "of memory ".repeat(40)
        );
        let f = finding(&m);
        let w = finding_line("WIN408", &m, &f);
        assert!(w.chars().count() <= MAX_WARNING_CHARS, "{w}");
        assert!(
            w.starts_with("WIN408: container \"app\" requests 512Mi"),
            "{w}"
        );
        assert!(
            w.ends_with("… Set requests.memory equal to limits.memory (1Gi) or remove the request"),
            "{w}"
        );
        // A message that fits is left whole, newlines and all control characters taken out.
        assert_eq!(finding_line("WIN408", "a\nb", &f), "WIN408: a");
    }

    #[test]
    fn details_go_before_the_cause() {
        let image = format!(
            "mcr.microsoft.com/dotnet/framework/aspnet:4.8-{}",
            "x".repeat(60)
        );
        let m = format!(
            "container \"app\" image {image} is built for Windows Server 2019 and the nodes run Windows Server 2022 {}; process isolation needs the same build. Use a 2022 image",
            "(detail) ".repeat(10)
        );
        let f = finding(&m);
        let shop = label("Deployment", "shop", "iis");
        let w = named(
            &shop,
            &finding_line_within("WIN502", &m, &f, room_after(&shop)),
        );
        assert!(w.chars().count() <= MAX_WARNING_CHARS, "{w}");
        assert!(
            w.starts_with("Deployment shop/iis: WIN502: container"),
            "{w}"
        );
        assert!(
            w.contains("built for Windows Server 2019 and the nodes run"),
            "{w}"
        );
        assert!(w.ends_with("Use a 2022 image"), "{w}");
        assert!(w.contains("mcr.microsoft.co…"), "{w}");
        assert_eq!(unnamed(&w), &w["Deployment shop/iis: ".len()..]);
        assert_eq!(unnamed("WIN001: x"), "WIN001: x");
        assert_eq!(
            unnamed("Pod p: would deny: WIN004: x"),
            "would deny: WIN004: x"
        );
        // Kind and name as kubectl shows them; a generated name keeps its prefix.
        assert_eq!(label("Pod", "", "p"), "Pod p");
        assert_eq!(label("Pod", "a", ""), "Pod");
        assert!(label("Pod", "a", &"n".repeat(253)).chars().count() <= MAX_LABEL_CHARS);
    }

    #[test]
    fn the_budget_counts_what_it_leaves_out() {
        let w = vec!["x".repeat(250); 20];
        let kept = within_budget(w.clone());
        let total: usize = kept.iter().map(|w| w.chars().count()).sum();
        assert!(total <= BUDGET_CHARS, "{total}");
        assert_eq!(
            kept.last().unwrap(),
            &format!(
                "winlint: {} more warnings not shown (the API server limits the size of warnings)",
                20 - (kept.len() - 1)
            )
        );
        assert_eq!(within_budget(w[..3].to_vec()), w[..3].to_vec());
    }
}
