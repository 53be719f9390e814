//! Per-request limits: concurrency, in-flight bytes, the request timeout.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::AppState;
use super::handlers::endpoint_of;

/// Concurrency limit and request timeout around every webhook request.
pub(super) async fn limits(
    State(state): State<Arc<AppState>>,
    req: Request,
    next: Next,
) -> Response {
    let deadline = tokio::time::Instant::now() + state.request_timeout;
    let path = req.uri().path().to_string();
    // Memory: reserve the body's size (Content-Length, else the largest allowed body) from the
    // in-flight byte budget; a body larger than the whole budget takes all of it.
    let want = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .map_or(state.max_body_kib, kib)
        .clamp(1, state.bytes_kib);
    let permits = tokio::time::timeout_at(deadline, async {
        let count = state.limit.acquire().await.ok()?;
        let bytes = state.bytes.acquire_many(want).await.ok()?;
        Some((count, bytes))
    })
    .await;
    let Ok(Some(permits)) = permits else {
        state.metrics.request(endpoint_of(&path), "overloaded");
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "winlint: too many requests\n",
        )
            .into_response();
    };
    let resp = match tokio::time::timeout_at(deadline, next.run(req)).await {
        Ok(r) => r,
        Err(_) => {
            state.metrics.request(endpoint_of(&path), "timeout");
            (StatusCode::REQUEST_TIMEOUT, "winlint: request timed out\n").into_response()
        }
    };
    drop(permits);
    resp
}

/// Bytes → KiB permits (rounded up, at least 1, saturating).
pub(super) fn kib(bytes: usize) -> u32 {
    u32::try_from(bytes.div_ceil(1024).max(1)).unwrap_or(u32::MAX >> 3)
}
