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
//! * Rate: from its first byte on, after a grace second, a body must keep up `--min-body-rate`
//!   bytes per second on average, and it must arrive before the engine's deadline: slow
//!   uploads are cut instead of holding bytes and slots until the timeout. The clock starts at
//!   the first body byte, not at the headers, and a body that has not started is waited for
//!   until the engine's deadline, not half the budget: a CPU-starved API server sends a body
//!   seconds after its headers (under 500 concurrent creates on 2 cores: 89 creates failed
//!   and 3 pods were admitted unevaluated with the clock at the headers; with half the budget
//!   for the body, 408s), then sends it at once, and a 5 KB pod is judged in a millisecond.
//!   Cutting it early only turns a late answer into a sure failure. A client that sends
//!   headers and nothing else holds a connection and no bytes, which the connection cap
//!   bounds. And a body behind the floor is cut only while more than half the byte budget is
//!   taken: the floor exists to keep slow senders from holding the bytes others need, and a
//!   loaded API server still stalled a body mid-way for over a second (1 in 1 000 admissions
//!   at 500 concurrent creates), which, cut, was admitted unevaluated.
//! * Slots: `--max-concurrency` bounds evaluations, not uploads; a slot is taken once the
//!   body is complete.
//!
//! A request that cannot be evaluated within these is answered per `webhook.onError` when its
//! uid can be read from what arrived ([`crate::admission::Webhook::unevaluated`]).

use std::sync::Arc;
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

/// The margin kept at the end of a budget to build and send the answer: a tenth of the budget,
/// at most 200 ms.
fn margin(budget: Duration) -> Duration {
    (budget / 10).min(Duration::from_millis(200))
}

/// When the engine must stop: the end of the budget less the [`margin`].
pub(super) fn engine_deadline(arrived: Instant, budget: Duration) -> Instant {
    arrived + budget - margin(budget)
}

/// When the handler stops waiting for the evaluation and answers per `webhook.onError`:
/// halfway through the margin, after the engine's own deadline. An engine that honours its
/// deadline answers first (with its own verdict or its timeout answer); one stuck in a loop
/// without a check is overtaken here, and the API server still gets an answer in time.
pub(super) fn answer_deadline(arrived: Instant, budget: Duration) -> Instant {
    arrived + budget - margin(budget) / 2
}

/// Until when `registry.mode: sync` may wait for a request's image facts: a quarter of the
/// budget before the engine's deadline, so that a slow registry never leaves the evaluation
/// without time (the facts it did not wait for are judged by the images' names).
pub(super) fn lookup_deadline(arrived: Instant, budget: Duration) -> Instant {
    engine_deadline(arrived, budget) - budget / 4
}

/// Bytes of the in-flight budget held by one request, given back on drop. It owns its
/// semaphore so that an evaluation the handler stopped waiting for keeps the body's bytes
/// counted until it really ends.
pub(super) struct Reserved {
    sem: Arc<Semaphore>,
    held: usize,
}

impl Drop for Reserved {
    fn drop(&mut self) {
        self.sem.add_permits(self.held);
    }
}

/// Why a body was not read to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BodyError {
    /// Larger than `--max-body-bytes` (announced or sent).
    TooLarge,
    /// Below the read-rate floor, or not complete by the engine's deadline.
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
                "the request body arrived too slowly (under {min_rate} bytes/s after its first \
                 byte, or not complete in time to be evaluated within the request's budget)"
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
    pub(super) budget: &'a Arc<Semaphore>,
    pub(super) budget_bytes: usize,
    pub(super) max_body: usize,
    pub(super) min_rate: u64,
}

impl BodyLimits<'_> {
    /// More than half the in-flight byte budget is taken: slow bodies now keep others out.
    fn under_pressure(&self) -> bool {
        self.budget.available_permits() < self.budget_bytes / 2
    }
}

/// How often a body behind the rate floor looks again whether the byte budget is under
/// pressure.
const PRESSURE_RECHECK: Duration = Duration::from_millis(100);

/// Read `body` under `limits`: bytes reserved as they arrive, the rate floor, the body
/// deadline. On error, what did arrive (for the uid) with why.
pub(super) async fn read_body(
    body: Body,
    announced: Option<usize>,
    limits: &BodyLimits<'_>,
    deadline: Instant,
) -> Result<(Bytes, Reserved), (BodyError, Vec<u8>)> {
    let mut reserved = Reserved {
        sem: Arc::clone(limits.budget),
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
    // When the first body byte arrived: the rate floor's clock (see the module's docs).
    let mut first_byte: Option<Instant> = None;
    loop {
        // The floor: `received` bytes must have arrived by grace + received / rate, counted
        // from the first byte; before it, only the body deadline applies. A body behind the
        // floor is cut only while the byte budget is under pressure, checked again now and
        // then while it stays behind.
        let floor_at = first_byte.map(|first| first + floor_after(buf.len(), limits.min_rate));
        let now = Instant::now();
        let wait_until = match floor_at {
            Some(at) if at > now => at,
            Some(_) => now + PRESSURE_RECHECK,
            None => deadline,
        }
        .min(deadline);
        let next = tokio::time::timeout_at(wait_until, stream.next()).await;
        let chunk = match next {
            Err(_) => {
                let now = Instant::now();
                let behind = floor_at.is_some_and(|at| now >= at);
                if now >= deadline || behind && limits.under_pressure() {
                    return Err((BodyError::TooSlow, buf));
                }
                continue;
            }
            Ok(None) => break,
            Ok(Some(Err(_))) => return Err((BodyError::Broken, buf)),
            Ok(Some(Ok(c))) => c,
        };
        if first_byte.is_none() && !chunk.is_empty() {
            first_byte = Some(Instant::now());
        }
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

/// How long after the first body byte `received` bytes may take at the floor `rate`: the
/// grace second, then `received + 1` bytes at `rate` (the next byte is the one waited for).
fn floor_after(received: usize, rate: u64) -> Duration {
    RATE_GRACE + Duration::from_secs_f64((received as f64 + 1.0) / rate.max(1) as f64)
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

    /// A body fed by the test: each item is sent after its delay.
    fn timed_body(parts: Vec<(Duration, &'static [u8])>) -> Body {
        let stream = futures::stream::unfold(parts.into_iter(), |mut parts| async move {
            let (after, bytes) = parts.next()?;
            tokio::time::sleep(after).await;
            Some((Ok::<_, std::io::Error>(Bytes::from_static(bytes)), parts))
        });
        Body::from_stream(stream)
    }

    fn limits(budget: &Arc<Semaphore>) -> BodyLimits<'_> {
        BodyLimits {
            budget,
            budget_bytes: 1 << 20,
            max_body: 1 << 20,
            min_rate: 64 * 1024,
        }
    }

    /// Issue 30: a loaded API server sends the body well after its headers, then at once. The
    /// rate floor counts from the first body byte, so it is not cut.
    #[tokio::test]
    async fn a_body_that_starts_late_and_then_arrives_at_once_is_read() {
        let sem = Arc::new(Semaphore::new(1 << 20));
        let body = timed_body(vec![
            (Duration::from_millis(1500), b"{\"kind\":"),
            (Duration::ZERO, b"\"AdmissionReview\"}"),
        ]);
        let deadline = Instant::now() + Duration::from_secs(5);
        let (bytes, reserved) = read_body(body, None, &limits(&sem), deadline)
            .await
            .expect("read");
        assert_eq!(&bytes[..], br#"{"kind":"AdmissionReview"}"#);
        assert_eq!(reserved.held, bytes.len());
        drop(reserved);
        assert_eq!(sem.available_permits(), 1 << 20, "the bytes are given back");
    }

    /// Under pressure (more than half the byte budget taken), a body that starts and then
    /// trickles below the floor is cut before the body deadline.
    #[tokio::test]
    async fn under_pressure_a_body_below_the_floor_after_its_first_byte_is_cut() {
        let sem = Arc::new(Semaphore::new(1 << 18));
        let body = timed_body(vec![
            (Duration::ZERO, b"{"),
            (Duration::from_secs(3), b"\"kind\""),
        ]);
        let deadline = Instant::now() + Duration::from_secs(60);
        let err = read_body(body, None, &limits(&sem), deadline)
            .await
            .err()
            .expect("cut");
        assert_eq!(err.0, BodyError::TooSlow);
        assert_eq!(err.1, b"{");
    }

    /// Without pressure, a body that stalls after its first byte (as a CPU-starved API server's
    /// does) is waited for until the body deadline.
    #[tokio::test]
    async fn without_pressure_a_stalled_body_is_waited_for() {
        let sem = Arc::new(Semaphore::new(1 << 20));
        let body = timed_body(vec![
            (Duration::ZERO, b"{"),
            (Duration::from_millis(1500), b"}"),
        ]);
        let deadline = Instant::now() + Duration::from_secs(60);
        let (bytes, _reserved) = read_body(body, None, &limits(&sem), deadline)
            .await
            .expect("read");
        assert_eq!(&bytes[..], b"{}");
    }

    /// Headers and no body: held until the body deadline, then cut as too slow.
    #[tokio::test]
    async fn a_body_that_never_starts_is_cut_at_the_body_deadline() {
        let sem = Arc::new(Semaphore::new(1 << 20));
        let body = timed_body(vec![(Duration::from_secs(60), b"{")]);
        let deadline = Instant::now() + Duration::from_millis(300);
        let err = read_body(body, None, &limits(&sem), deadline)
            .await
            .err()
            .expect("cut");
        assert_eq!(err.0, BodyError::TooSlow);
    }

    #[test]
    fn the_answer_deadline_falls_between_the_engines_and_the_budgets_end() {
        let t = Instant::now();
        for budget in [Duration::from_millis(500), Duration::from_secs(8)] {
            let engine = engine_deadline(t, budget);
            let answer = answer_deadline(t, budget);
            assert!(engine < answer && answer < t + budget, "{budget:?}");
            assert!(lookup_deadline(t, budget) < engine);
        }
    }
}
