//! The webhook's routes and the admission handler.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::admission::Endpoint;

use super::AppState;
use super::blocking::{Job, Waited};
use super::limits::{self, BodyError, BodyLimits};

pub(super) fn webhook_router(state: Arc<AppState>) -> Router {
    // No body limit or timeout layer: `admit` reads the body itself under the request's
    // budgets (limits.rs) and answers what it cannot evaluate per `webhook.onError`.
    Router::new()
        .route("/mutate", post(mutate))
        .route("/validate", post(validate))
        .route("/validate/pss/{level}", post(legacy))
        .route("/mutate/windows-namespace", post(legacy))
        .route("/healthz", get(|| async { "ok" }))
        .with_state(state)
}

async fn mutate(State(state): State<Arc<AppState>>, req: Request) -> Response {
    admit(state, Endpoint::Mutate, req).await
}

async fn validate(State(state): State<Arc<AppState>>, req: Request) -> Response {
    admit(state, Endpoint::Validate, req).await
}

/// Whether the deprecated namespace paths were called (logged once).
static LEGACY_PATH_LOGGED: AtomicBool = AtomicBool::new(false);

/// `/validate/pss/{level}` and `/mutate/windows-namespace`: the per-namespace webhooks an older
/// chart or `winlint manifests` registered, answered as `/validate` and `/mutate` (the
/// namespace's labels come from the cluster facts now), so that an upgrade never meets a 404.
async fn legacy(State(state): State<Arc<AppState>>, req: Request) -> Response {
    let uri = req.uri().clone();
    let endpoint = if uri.path().starts_with("/mutate") {
        Endpoint::Mutate
    } else {
        Endpoint::Validate
    };
    if !LEGACY_PATH_LOGGED.swap(true, Ordering::Relaxed) {
        tracing::warn!(
            uid = "",
            path = uri.path(),
            "a webhook registered by an older winlint calls {}: answered as {}, with the \
             namespace's labels from the cluster facts; re-apply the chart or `winlint manifests` \
             to register the current webhooks",
            uri.path(),
            endpoint.path()
        );
    }
    admit(state, endpoint, req).await
}

/// Counts and logs a request whose client went away before its answer (the API server gave
/// up, or the connection broke): the handler is dropped mid-way and `finish` was never called.
struct Abandoned<'a> {
    state: &'a AppState,
    endpoint: &'static str,
    arrived: tokio::time::Instant,
    /// What the request was waiting for when it was dropped.
    phase: &'static str,
    done: bool,
}

impl Abandoned<'_> {
    fn finish(&mut self) {
        self.done = true;
    }
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.state.metrics.request(self.endpoint, "abandoned");
            tracing::warn!(
                uid = "",
                endpoint = self.endpoint,
                phase = self.phase,
                millis = self.arrived.elapsed().as_millis() as u64,
                "request abandoned by the client before its answer (while {})",
                self.phase
            );
        }
    }
}

/// The largest body whose images `registry.mode: sync` looks up before the evaluation: the
/// lookup parses the whole review, which must not happen to a large one before the
/// evaluation's own density check (its images are then judged by their names).
const SYNC_LOOKUP_MAX_BODY: usize = 32 * 1024;

async fn admit(state: Arc<AppState>, endpoint: Endpoint, req: Request) -> Response {
    let ep = endpoint.as_str();
    let arrived = tokio::time::Instant::now();
    let mut abandoned = Abandoned {
        state: &state,
        endpoint: ep,
        arrived,
        phase: "reading the body",
        done: false,
    };
    let budget = limits::budget(state.request_timeout, req.uri().query());
    let announced = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    let body_limits = BodyLimits {
        budget: &state.bytes,
        budget_bytes: state.bytes_total,
        max_body: state.max_body,
        min_rate: state.min_body_rate,
    };
    // The body may take until the engine's deadline (limits.rs says why).
    let body_deadline = limits::engine_deadline(arrived, budget);
    let read = limits::read_body(req.into_body(), announced, &body_limits, body_deadline).await;
    let (body, reserved) = match read {
        Ok(b) => b,
        Err((e, head)) => {
            let why = e.why(state.max_body, state.min_body_rate);
            let status = match e {
                BodyError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
                BodyError::TooSlow => StatusCode::REQUEST_TIMEOUT,
                BodyError::Overloaded => StatusCode::SERVICE_UNAVAILABLE,
                BodyError::Broken => StatusCode::BAD_REQUEST,
            };
            abandoned.finish();
            return unevaluated(
                &state,
                endpoint,
                e.outcome(),
                &head,
                &why,
                status,
                Connection::Close,
            );
        }
    };
    // An evaluation slot, while an answer is still on time.
    abandoned.phase = "waiting for an evaluation slot";
    let answer_by = limits::answer_deadline(arrived, budget);
    let slot = match tokio::time::timeout_at(answer_by, state.limit.clone().acquire_owned()).await {
        Ok(Ok(p)) => p,
        _ => {
            abandoned.finish();
            let why = "the webhook is overloaded (no evaluation slot in time)";
            let status = StatusCode::SERVICE_UNAVAILABLE;
            return unevaluated(
                &state,
                endpoint,
                "overloaded",
                &body,
                why,
                status,
                Connection::Keep,
            );
        }
    };
    let started = Instant::now();
    // `registry.mode: sync` waits for the request's image facts, leaving the evaluation a
    // quarter of the budget. A large body is judged by its images' names: the lookup parses
    // the whole review, which must not happen before the evaluation's own density check.
    if let Some(images) = state
        .images
        .as_ref()
        .filter(|_| body.len() <= SYNC_LOOKUP_MAX_BODY)
    {
        abandoned.phase = "waiting for image facts";
        let until = limits::lookup_deadline(arrived, budget);
        let _ = tokio::time::timeout_at(until, images.before_review(&body)).await;
    }
    abandoned.phase = "evaluating";
    let eval = state.evaluation();
    let engine_deadline = limits::engine_deadline(arrived, budget).into_std();
    let job_body = body.clone();
    let job = Job::spawn("an evaluation", (slot, reserved), move || {
        eval.webhook
            .review_until(&job_body, endpoint, Some(engine_deadline))
    });
    let result = match job.wait_until(answer_by).await {
        Waited::Done(r) => r,
        Waited::Panicked(e) => Err(crate::admission::BadRequest(format!(
            "evaluation failed: {e}"
        ))),
        Waited::Overtaken => {
            // The evaluation did not stop at its deadline (a loop without a check): the
            // API server gets its answer now, per `webhook.onError`. The evaluation keeps its
            // slot and bytes until it ends, so overload still counts it.
            abandoned.finish();
            let why = format!(
                "its evaluation had not ended at the answer deadline ({} ms into the \
                 request's budget of {} ms)",
                answer_by.duration_since(arrived).as_millis(),
                budget.as_millis()
            );
            let status = StatusCode::SERVICE_UNAVAILABLE;
            return unevaluated(
                &state,
                endpoint,
                "timeout",
                &body,
                &why,
                status,
                Connection::Keep,
            );
        }
    };
    abandoned.finish();
    let elapsed = started.elapsed();
    match result {
        Err(bad) => {
            state.metrics.request(ep, "bad_request");
            tracing::warn!(
                uid = "",
                endpoint = ep,
                "bad request: {}",
                escape(&bad.to_string())
            );
            (
                StatusCode::BAD_REQUEST,
                format!("winlint: bad AdmissionReview: {bad}\n"),
            )
                .into_response()
        }
        Ok(out) => {
            let m = &state.metrics;
            let outcome = match out.error.as_deref() {
                Some(crate::admission::DEADLINE_EXCEEDED) => "timeout",
                Some(e) if e.starts_with(crate::admission::TOO_DENSE) => "too_dense",
                _ => out.decision.as_str(),
            };
            m.request(ep, outcome);
            m.latency
                .get_or_create(&vec![("endpoint".into(), ep.into())])
                .observe(elapsed.as_secs_f64());
            if endpoint == Endpoint::Validate {
                for (rule, sev) in &out.findings {
                    m.findings
                        .get_or_create(&vec![
                            ("rule".into(), (*rule).into()),
                            ("severity".into(), sev.as_str().into()),
                        ])
                        .inc();
                }
            }
            if !out.exempted.is_empty() {
                let mut rules = out.exempted.clone();
                rules.dedup();
                for rule in &rules {
                    m.exemptions
                        .get_or_create(&vec![
                            ("rule".into(), (*rule).into()),
                            ("namespace".into(), out.namespace.clone()),
                        ])
                        .inc();
                }
                tracing::info!(
                    uid = %escape(&out.uid),
                    endpoint = ep,
                    kind = %escape(&out.kind),
                    namespace = %escape(&out.namespace),
                    name = %escape(&out.name),
                    rules = ?rules,
                    "findings exempted by winlint.io/ignore"
                );
            }
            for rule in &out.would_deny {
                m.would_deny
                    .get_or_create(&vec![
                        ("rule".into(), (*rule).into()),
                        ("namespace".into(), out.namespace.clone()),
                    ])
                    .inc();
            }
            for rule in &out.patched_rules {
                m.patches
                    .get_or_create(&vec![("rule".into(), (*rule).into())])
                    .inc();
            }
            let rules: Vec<&str> = out.findings.iter().map(|(r, _)| *r).collect();
            tracing::info!(
                uid = %escape(&out.uid),
                endpoint = ep,
                operation = %escape(&out.operation),
                kind = %escape(&out.kind),
                namespace = %escape(&out.namespace),
                name = %escape(&out.name),
                dry_run = out.dry_run,
                allowed = out.allowed,
                decision = out.decision.as_str(),
                rules = ?rules,
                patched = ?out.patched,
                micros = elapsed.as_micros() as u64,
                "admission"
            );
            if let Some(e) = &out.error {
                tracing::warn!(
                    uid = %escape(&out.uid),
                    endpoint = ep,
                    "object not evaluated: {}",
                    escape(e)
                );
            }
            Response::builder()
                .status(StatusCode::OK)
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(out.body))
                .expect("valid response")
        }
    }
}

/// What becomes of the connection after an answer.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Connection {
    /// Closed: the rest of the body may still be on its way.
    Close,
    /// Kept: the body was read to its end, and the API server's next request may use it.
    Keep,
}

/// A request that is not evaluated: answered per `webhook.onError` when its uid can be read
/// from `head`, else with `status` (the API server's failurePolicy then decides).
fn unevaluated(
    state: &AppState,
    endpoint: Endpoint,
    outcome: &'static str,
    head: &[u8],
    why: &str,
    status: StatusCode,
    connection: Connection,
) -> Response {
    let ep = endpoint.as_str();
    state.metrics.request(ep, outcome);
    let answer = state.evaluation().webhook.unevaluated(head, why);
    match answer {
        Some(out) => {
            tracing::warn!(
                uid = %escape(&out.uid),
                endpoint = ep,
                allowed = out.allowed,
                "request not evaluated, answered per webhook.onError: {why}"
            );
            let mut answer = Response::builder()
                .status(StatusCode::OK)
                .header(header::CONTENT_TYPE, "application/json");
            if connection == Connection::Close {
                answer = answer.header(header::CONNECTION, "close");
            }
            answer.body(Body::from(out.body)).expect("valid response")
        }
        None => {
            tracing::warn!(uid = "", endpoint = ep, %status, "request rejected: {why}");
            let mut answer = (status, format!("winlint: {why}\n")).into_response();
            if connection == Connection::Close {
                answer.headers_mut().insert(
                    header::CONNECTION,
                    header::HeaderValue::from_static("close"),
                );
            }
            answer
        }
    }
}

/// `s` with control characters escaped (`\n`, `\u{1b}`): a pod name with a newline must
/// not start a forged line in the text log.
pub(super) fn escape(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn control_characters_are_escaped_in_log_fields() {
        assert_eq!(escape("web-0"), "web-0");
        assert_eq!(
            escape("x\nINFO admission allowed=true\r\u{1b}[2J"),
            "x\\nINFO admission allowed=true\\r\\u{1b}[2J"
        );
    }
}
