//! Per-request budgets (issue 15): time, body bytes, read rate, evaluation slots.
//!
//! * Time: a request's budget is `--request-timeout`, and less when the API server says it
//!   waits less (`?timeout=5s`, which it derives from the webhook's `timeoutSeconds`): 80 % of
//!   that, so the answer arrives before the API server gives up. The engine's deadline is
//!   the end of the budget less a margin to serialize and send the answer.
//! * Bytes: the in-flight byte budget (`--max-inflight-bytes`) is taken as the body is READ,
//!   never from `Content-Length` (a client announcing 100 MiB and sending one byte held the
//!   whole budget before), and given back when the answer is sent. A body larger than the
//!   whole budget may take all of it and go alone.
//! * Rate: after a grace second a body must keep up `--min-body-rate` bytes per second on
//!   average, and arrive within half the budget (the other half is the evaluation's): slow
//!   uploads are cut instead of holding bytes and slots until the timeout.
//! * Slots: `--max-concurrency` bounds evaluations, not uploads; a slot is taken once the
//!   body is complete.
//!
//! A request that cannot be evaluated within these is answered per `webhook.onError` when its
//! uid can be read from what arrived ([`crate::admission::Webhook::unevaluated`]).

use std::time::Duration;

use axum::body::{Body, Bytes};
use futures::StreamExt;
use tokio::sync::Semaphore;
use tokio::time::Instant;

/// Time given to a body before the rate floor applies (TLS records, slow starts).
const RATE_GRACE: Duration = Duration::from_secs(1);
/// Bytes read of an announced-too-large body, to find its uid.
const HEAD_BYTES: usize = 64 * 1024;

/// The time budget of one request: `--request-timeout`, or 80 % of the API server's
/// `?timeout=` when that is shorter.
pub(super) fn budget(request_timeout: Duration, query: Option<&str>) -> Duration {
    let asked = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|kv| kv.strip_prefix("timeout="))
        .and_then(parse_go_duration);
    match asked {
        Some(t) if t.mul_f64(0.8) < request_timeout => t.mul_f64(0.8),
        _ => request_timeout,
    }
}

/// `10s`, `5s`, `1500ms`, `1m30s`: the durations the API server writes.
fn parse_go_duration(s: &str) -> Option<Duration> {
    let mut total = Duration::ZERO;
    let mut rest = s;
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let v: f64 = rest[..n].parse().ok()?;
        rest = &rest[n..];
        let u = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..u] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return None,
        };
        rest = &rest[u..];
        total += Duration::try_from_secs_f64(v * scale).ok()?;
    }
    (!total.is_zero()).then_some(total)
}

/// When the engine must stop: the end of the budget less a margin (a tenth of the budget, at
/// most 200 ms) to build and send the answer.
pub(super) fn engine_deadline(arrived: Instant, budget: Duration) -> Instant {
    arrived + budget - (budget / 10).min(Duration::from_millis(200))
}

/// Bytes of the in-flight budget held by one request, given back on drop.
pub(super) struct Reserved<'a> {
    sem: &'a Semaphore,
    held: usize,
}

impl Drop for Reserved<'_> {
    fn drop(&mut self) {
        self.sem.add_permits(self.held);
    }
}

/// Why a body was not read to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BodyError {
    /// Larger than `--max-body-bytes` (announced or sent).
    TooLarge,
    /// Below the read-rate floor, or not complete within half the budget.
    TooSlow,
    /// No room in the in-flight byte budget before the deadline.
    Overloaded,
    /// The connection failed or the client went away.
    Broken,
}

impl BodyError {
    pub(super) fn outcome(self) -> &'static str {
        match self {
            BodyError::TooLarge => "too_large",
            BodyError::TooSlow => "slow_body",
            BodyError::Overloaded => "overloaded",
            BodyError::Broken => "abandoned",
        }
    }
    pub(super) fn why(self, max_body: usize, min_rate: u64) -> String {
        match self {
            BodyError::TooLarge => {
                format!("the request body is larger than --max-body-bytes ({max_body} bytes)")
            }
            BodyError::TooSlow => format!(
                "the request body arrived too slowly (under {min_rate} bytes/s, or not within \
                 half the request's time budget)"
            ),
            BodyError::Overloaded => {
                "the webhook is overloaded (no room for the request body in time)".to_string()
            }
            BodyError::Broken => "the request body could not be read".to_string(),
        }
    }
}

/// The limits a body is read under.
pub(super) struct BodyLimits<'a> {
    pub(super) budget: &'a Semaphore,
    pub(super) budget_bytes: usize,
    pub(super) max_body: usize,
    pub(super) min_rate: u64,
}

/// Read `body` under `limits`: bytes reserved as they arrive, the rate floor, the body
/// deadline. On error, what did arrive (for the uid) with why.
pub(super) async fn read_body<'a>(
    body: Body,
    announced: Option<usize>,
    limits: &BodyLimits<'a>,
    started: Instant,
    deadline: Instant,
) -> Result<(Bytes, Reserved<'a>), (BodyError, Vec<u8>)> {
    let mut reserved = Reserved {
        sem: limits.budget,
        held: 0,
    };
    let announced_too_large = announced.is_some_and(|n| n > limits.max_body);
    let cap = if announced_too_large {
        HEAD_BYTES
    } else {
        limits.max_body
    };
    // Capacity for the announced size (within the cap): untouched capacity is address space,
    // not memory, and growing by doubling would copy the body and hold it twice.
    let mut buf: Vec<u8> = Vec::with_capacity(announced.unwrap_or(0).min(cap));
    let mut stream = body.into_data_stream();
    loop {
        // The floor: `received` bytes must have arrived by grace + received / rate.
        let floor_at = started
            + RATE_GRACE
            + Duration::from_secs_f64((buf.len() as f64 + 1.0) / limits.min_rate.max(1) as f64);
        let wait_until = floor_at.min(deadline);
        let chunk = match tokio::time::timeout_at(wait_until, stream.next()).await {
            Err(_) => return Err((BodyError::TooSlow, buf)),
            Ok(None) => break,
            Ok(Some(Err(_))) => return Err((BodyError::Broken, buf)),
            Ok(Some(Ok(c))) => c,
        };
        // Reserve what arrived (a body larger than the whole budget takes all of it).
        let want = chunk
            .len()
            .min(limits.budget_bytes.saturating_sub(reserved.held));
        if want > 0 {
            let permits = u32::try_from(want).unwrap_or(u32::MAX);
            match tokio::time::timeout_at(deadline, limits.budget.acquire_many(permits)).await {
                Ok(Ok(p)) => {
                    p.forget();
                    reserved.held += permits as usize;
                }
                _ => return Err((BodyError::Overloaded, buf)),
            }
        }
        let room = cap.saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if chunk.len() > room || announced_too_large && buf.len() >= cap {
            return Err((BodyError::TooLarge, buf));
        }
    }
    if announced_too_large {
        return Err((BodyError::TooLarge, buf));
    }
    Ok((Bytes::from(buf), reserved))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_servers_timeout_shortens_the_budget() {
        let ten = Duration::from_secs(10);
        assert_eq!(budget(ten, Some("timeout=5s")), Duration::from_secs(4));
        assert_eq!(budget(ten, Some("x=1&timeout=30s")), ten);
        assert_eq!(budget(ten, Some("timeout=1m")), ten);
        assert_eq!(
            budget(ten, Some("timeout=2500ms")),
            Duration::from_millis(2000)
        );
        assert_eq!(budget(ten, Some("timeout=garbage")), ten);
        assert_eq!(budget(ten, None), ten);
    }

    #[test]
    fn go_durations() {
        assert_eq!(parse_go_duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_go_duration("0s"), None);
        assert_eq!(parse_go_duration("5"), None);
        assert_eq!(parse_go_duration(""), None);
    }
}
