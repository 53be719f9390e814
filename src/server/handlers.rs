//! The webhook's routes and the admission handler.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{StatusCode, header};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::admission::Endpoint;

use super::AppState;
use super::limits::limits;

pub(super) fn webhook_router(state: Arc<AppState>, max_body: usize) -> Router {
    Router::new()
        .route("/mutate", post(mutate))
        .route("/validate", post(validate))
        .route("/validate/pss/{level}", post(legacy))
        .route("/mutate/windows-namespace", post(legacy))
        .route("/healthz", get(|| async { "ok" }))
        .layer(middleware::from_fn_with_state(state.clone(), limits))
        .layer(DefaultBodyLimit::max(max_body))
        .with_state(state)
}

pub(super) fn endpoint_of(path: &str) -> &'static str {
    match path {
        p if p == "/mutate" || p.starts_with("/mutate/") => "mutate",
        p if p == "/validate" || p.starts_with("/validate/") => "validate",
        _ => "other",
    }
}

async fn mutate(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    admit(state, Endpoint::Mutate, body).await
}

async fn validate(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    admit(state, Endpoint::Validate, body).await
}

/// Whether the deprecated namespace paths were called (logged once).
static LEGACY_PATH_LOGGED: AtomicBool = AtomicBool::new(false);

/// `/validate/pss/{level}` and `/mutate/windows-namespace`: the per-namespace webhooks an older
/// chart or `winlint manifests` registered, answered as `/validate` and `/mutate` (the
/// namespace's labels come from the cluster facts now), so that an upgrade never meets a 404.
async fn legacy(
    State(state): State<Arc<AppState>>,
    uri: axum::http::Uri,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
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
    admit(state, endpoint, body).await
}

/// Bodies above this size are evaluated on the blocking pool, so parsing megabytes never stalls
/// the workers that run handshakes and other connections.
const BLOCKING_THRESHOLD: usize = 256 * 1024;

async fn admit(
    state: Arc<AppState>,
    endpoint: Endpoint,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    let ep = endpoint.as_str();
    let body = match body {
        Ok(b) => b,
        Err(rej) => {
            let status = rej.status();
            let outcome = if status == StatusCode::PAYLOAD_TOO_LARGE {
                "too_large"
            } else {
                "bad_request"
            };
            state.metrics.request(ep, outcome);
            tracing::warn!(uid = "", endpoint = ep, %status, "request body rejected: {}", rej.body_text());
            return (status, format!("winlint: {}\n", rej.body_text())).into_response();
        }
    };
    let started = Instant::now();
    let eval = state.evaluation();
    let result = if body.len() > BLOCKING_THRESHOLD {
        match tokio::task::spawn_blocking(move || eval.webhook.review(&body, endpoint)).await {
            Ok(r) => r,
            Err(e) => Err(crate::admission::BadRequest(format!(
                "evaluation failed: {e}"
            ))),
        }
    } else {
        eval.webhook.review(&body, endpoint)
    };
    let elapsed = started.elapsed();
    match result {
        Err(bad) => {
            state.metrics.request(ep, "bad_request");
            tracing::warn!(uid = "", endpoint = ep, "bad request: {bad}");
            (
                StatusCode::BAD_REQUEST,
                format!("winlint: bad AdmissionReview: {bad}\n"),
            )
                .into_response()
        }
        Ok(out) => {
            let m = &state.metrics;
            m.request(ep, out.decision.as_str());
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
                uid = %out.uid,
                endpoint = ep,
                operation = %out.operation,
                kind = %out.kind,
                namespace = %out.namespace,
                name = %out.name,
                dry_run = out.dry_run,
                allowed = out.allowed,
                decision = out.decision.as_str(),
                rules = ?rules,
                patched = ?out.patched,
                micros = elapsed.as_micros() as u64,
                "admission"
            );
            if let Some(e) = &out.error {
                tracing::warn!(uid = %out.uid, endpoint = ep, "object not evaluated: {e}");
            }
            Response::builder()
                .status(StatusCode::OK)
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(out.body))
                .expect("valid response")
        }
    }
}
