//! TLS accept loop and per-connection deadlines (header, idle), the connection cap.
//!
//! Connections are capped (`--max-connections`): at the cap a new connection closes the
//! longest-idle one (no request in progress: in its TLS handshake, or between requests), or
//! is refused when every connection is answering; an idle flood cannot lock the API server
//! out, and the process stays clear of its open-file limit. Accept errors (EMFILE) close an
//! idle connection, back off up to a second and are logged at most every 10 s with a count
//! (they were logged 20 times a second).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tower::Service;

use super::{AppState, handshake};

/// The open connections, oldest first (by accept order), for the cap.
#[derive(Default)]
pub(super) struct Conns {
    open: std::sync::Mutex<BTreeMap<u64, Arc<ConnGuard>>>,
    next: std::sync::atomic::AtomicU64,
}

impl Conns {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Arc<ConnGuard>>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Register a new connection under `max`: closing the longest-idle one when at the cap.
    /// `None`: at the cap with every connection busy (refuse the new one).
    fn admit(&self, max: usize, state: &AppState) -> Option<(u64, Arc<ConnGuard>)> {
        let mut open = self.lock();
        if open.len() >= max {
            self.evict_idle(&mut open, state)?;
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let guard = Arc::new(ConnGuard::new());
        open.insert(id, guard.clone());
        state.metrics.connections.set(open.len() as i64);
        Some((id, guard))
    }

    /// Close the longest-idle connection; whether there was one.
    fn evict_idle(&self, open: &mut BTreeMap<u64, Arc<ConnGuard>>, state: &AppState) -> Option<()> {
        let id = open
            .iter()
            .find(|(_, g)| g.lock().active == 0)
            .map(|(id, _)| *id)?;
        if let Some(g) = open.remove(&id) {
            g.evict();
            state.metrics.connections_evicted.inc();
        }
        Some(())
    }

    fn remove(&self, id: u64, state: &AppState) {
        let mut open = self.lock();
        open.remove(&id);
        state.metrics.connections.set(open.len() as i64);
    }
}

/// Removes a connection from [`Conns`] when its task ends, however it ends.
struct Registered {
    id: u64,
    conns: Arc<Conns>,
    state: Arc<AppState>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.conns.remove(self.id, &self.state);
    }
}

/// Descriptors kept for everything but client connections: the listeners, the metrics
/// scrapes, the Kubernetes API (watches, pull secrets, certificates), registry lookups, files
/// (certificate reloads, the disk cache), the log.
pub(super) const FD_RESERVE: u64 = 256;

/// The connection cap under the open-file limit: the soft `RLIMIT_NOFILE` is first raised to
/// the hard one (a container's soft limit is often 1 024, the default cap: connections past
/// the limit failed in `accept` and new clients starved while the cap was never reached), then
/// the cap is `configured` or the limit less [`FD_RESERVE`], whichever is lower. Both facts are
/// logged.
pub(super) fn connection_cap(configured: usize) -> usize {
    let (soft, hard) = match raise_nofile() {
        Ok(limits) => limits,
        Err(e) => {
            tracing::warn!(uid = "", "the open-file limit could not be read: {e}");
            return configured;
        }
    };
    let cap = cap_under(configured, soft);
    if cap < configured {
        tracing::warn!(
            uid = "",
            "--max-connections {configured} lowered to {cap}: the open-file limit is {soft} \
             (hard limit {hard}), {FD_RESERVE} kept for files, the API server and registries"
        );
    } else {
        tracing::info!(
            uid = "",
            "open-file limit {soft} (hard {hard}): up to {cap} connections"
        );
    }
    cap
}

/// `configured`, or `soft` less [`FD_RESERVE`] when that is lower (at least 1).
pub(super) fn cap_under(configured: usize, soft: u64) -> usize {
    let room = usize::try_from(soft.saturating_sub(FD_RESERVE)).unwrap_or(usize::MAX);
    configured.min(room.max(1))
}

/// Raise the soft `RLIMIT_NOFILE` to the hard limit; the limits after.
#[cfg(not(unix))]
fn raise_nofile() -> std::io::Result<(u64, u64)> {
    // Windows has no such limit (issue 28: the binary builds there; the webhook runs on Linux).
    Err(std::io::ErrorKind::Unsupported.into())
}

/// Raise the soft `RLIMIT_NOFILE` to the hard limit; the limits after.
#[cfg(unix)]
fn raise_nofile() -> std::io::Result<(u64, u64)> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if lim.rlim_cur < lim.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: lim.rlim_max,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: setrlimit reads the struct it is given.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            lim = raised;
        } else {
            tracing::warn!(
                uid = "",
                "the open-file limit could not be raised from {} to {}: {}",
                lim.rlim_cur,
                lim.rlim_max,
                std::io::Error::last_os_error()
            );
        }
    }
    Ok((lim.rlim_cur, lim.rlim_max))
}

pub(super) struct Timeouts {
    pub(super) handshake: Duration,
    pub(super) header: Duration,
    pub(super) idle: Duration,
    pub(super) delay: Duration,
    pub(super) drain: Duration,
    pub(super) max_connections: usize,
}

pub(super) async fn accept_loop(
    listener: TcpListener,
    tls: Arc<rustls::ServerConfig>,
    router: Router,
    state: Arc<AppState>,
    mut shutdown: watch::Receiver<bool>,
    t: Timeouts,
) {
    let acceptor = tokio_rustls::TlsAcceptor::from(tls);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut h1 = auto::Builder::new(TokioExecutor::new()).http1_only();
    // hyper's own header_read_timeout also runs while a keep-alive connection is idle, so it
    // would close the API server's pooled connections; ConnGuard times headers from their
    // first byte instead.
    h1.http1()
        .timer(TokioTimer::new())
        .header_read_timeout(None)
        .keep_alive(true);
    let mut h2 = auto::Builder::new(TokioExecutor::new()).http2_only();
    h2.http2().timer(TokioTimer::new());
    let (h1, h2) = (Arc::new(h1), Arc::new(h2));
    let mut stop_at: Option<tokio::time::Instant> = None;
    let conns = Arc::new(Conns::default());
    let mut backoff = Duration::ZERO;
    let mut unlogged_errors = 0u64;
    let mut last_logged: Option<tokio::time::Instant> = None;
    loop {
        let accepted = tokio::select! {
            r = listener.accept() => r,
            _ = shutdown.wait_for(|s| *s), if stop_at.is_none() => {
                state.ready.store(false, Ordering::SeqCst);
                stop_at = Some(tokio::time::Instant::now() + t.delay);
                continue;
            }
            _ = tokio::time::sleep_until(stop_at.unwrap_or_else(tokio::time::Instant::now)), if stop_at.is_some() => break,
        };
        let (tcp, peer) = match accepted {
            Ok(x) => {
                backoff = Duration::ZERO;
                x
            }
            Err(e) => {
                // EMFILE and friends: free a descriptor (the longest-idle connection), back
                // off (doubling, up to 1 s) instead of spinning, count, and log now and then.
                state.metrics.accept_errors.inc();
                conns.evict_idle(&mut conns.lock(), &state);
                unlogged_errors += 1;
                if last_logged.is_none_or(|t| t.elapsed() >= Duration::from_secs(10)) {
                    tracing::warn!(
                        uid = "",
                        "accept failed ({unlogged_errors} time(s) since the last report): {e}; \
                         closing idle connections and backing off"
                    );
                    unlogged_errors = 0;
                    last_logged = Some(tokio::time::Instant::now());
                }
                backoff = (backoff * 2).clamp(Duration::from_millis(10), Duration::from_secs(1));
                tokio::time::sleep(backoff).await;
                continue;
            }
        };
        let Some((id, guard)) = conns.admit(t.max_connections, &state) else {
            state.metrics.connections_refused.inc();
            drop(tcp);
            continue;
        };
        let registered = Registered {
            id,
            conns: conns.clone(),
            state: state.clone(),
        };
        let _ = tcp.set_nodelay(true);
        let acceptor = acceptor.clone();
        let watcher = graceful.watcher();
        let (h1, h2) = (h1.clone(), h2.clone());
        let router = router.clone();
        let state = state.clone();
        let (handshake, header, idle) = (t.handshake, t.header, t.idle);
        tokio::spawn(async move {
            let _registered = registered;
            let handshaking = tokio::time::timeout(handshake, acceptor.accept(tcp));
            let done = tokio::select! {
                r = handshaking => r,
                _ = guard.evicted() => return,
            };
            let stream = match done {
                Ok(Ok(s)) => s,
                Ok(Err(e)) => {
                    handshake::failed(&state.metrics, peer, handshake::reason(&e), &e.to_string());
                    return;
                }
                Err(_) => {
                    handshake::failed(&state.metrics, peer, "timeout", "timed out");
                    return;
                }
            };
            let is_h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
            // HTTP/2 streams have no header deadline here (frames interleave); the idle
            // deadline still closes connections that carry no request for --idle-timeout.
            guard.set_deadlines((!is_h2).then_some(header), idle);
            let g = guard.clone();
            let svc = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                let active = ActiveRequest::new(g.clone());
                let fut = router.clone().call(req);
                async move {
                    let r = fut.await;
                    drop(active);
                    r
                }
            });
            let io = TokioIo::new(GuardedIo::new(stream, guard));
            let result = if is_h2 {
                watcher
                    .watch(h2.serve_connection(io, svc).into_owned())
                    .await
            } else {
                watcher
                    .watch(h1.serve_connection(io, svc).into_owned())
                    .await
            };
            if let Err(e) = result {
                tracing::debug!(uid = "", %peer, "connection ended: {e}");
            }
        });
    }
    drop(listener);
    tracing::info!(uid = "", "listener closed, draining in-flight requests");
    if tokio::time::timeout(t.drain, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(uid = "", "shutdown timeout: closing remaining connections");
    }
}

/// Header and idle deadlines of one connection (header deadline: HTTP/1.1 only). A request's header must arrive within
/// `header` of its first byte (slow-loris clients are cut off); between requests the connection
/// may be idle for `idle`. While a request is being answered neither applies.
struct ConnGuard {
    state: std::sync::Mutex<GuardState>,
    /// Wakes a connection evicted in its TLS handshake.
    evict_notify: tokio::sync::Notify,
}

struct GuardState {
    active: usize,
    /// Bytes of a new request arrived and its header is not parsed yet: the header deadline.
    head_deadline: Option<tokio::time::Instant>,
    idle_since: tokio::time::Instant,
    /// Set after the handshake (HTTP/1.1 only for the header deadline).
    header: Option<Duration>,
    idle: Duration,
    /// Closed for a newer connection at the cap: ends when next idle.
    evicted: bool,
    /// The task reading the connection, woken on eviction.
    reader: Option<std::task::Waker>,
}

impl ConnGuard {
    fn new() -> Self {
        ConnGuard {
            state: std::sync::Mutex::new(GuardState {
                active: 0,
                head_deadline: None,
                idle_since: tokio::time::Instant::now(),
                header: None,
                // Set with the header deadline once the handshake is done.
                idle: Duration::from_secs(3600),
                evicted: false,
                reader: None,
            }),
            evict_notify: tokio::sync::Notify::new(),
        }
    }
    fn set_deadlines(&self, header: Option<Duration>, idle: Duration) {
        let mut s = self.lock();
        s.header = header;
        s.idle = idle;
        s.idle_since = tokio::time::Instant::now();
    }
    fn lock(&self) -> std::sync::MutexGuard<'_, GuardState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn evict(&self) {
        let reader = {
            let mut s = self.lock();
            s.evicted = true;
            s.reader.take()
        };
        self.evict_notify.notify_one();
        if let Some(w) = reader {
            w.wake();
        }
    }
    async fn evicted(&self) {
        self.evict_notify.notified().await;
    }
    fn on_bytes(&self) {
        let mut s = self.lock();
        if let Some(header) = s.header
            && s.active == 0
            && s.head_deadline.is_none()
        {
            s.head_deadline = Some(tokio::time::Instant::now() + header);
        }
    }
    /// When the connection must close if nothing arrives (`None`: a request is in progress),
    /// remembering who to wake on eviction.
    fn deadline(&self, waker: Option<&std::task::Waker>) -> Option<tokio::time::Instant> {
        let mut s = self.lock();
        if let Some(w) = waker {
            s.reader = Some(w.clone());
        }
        if s.active > 0 {
            None
        } else if s.evicted {
            Some(tokio::time::Instant::now())
        } else {
            Some(s.head_deadline.unwrap_or(s.idle_since + s.idle))
        }
    }
}

/// Marks a request as being answered for as long as it lives.
struct ActiveRequest(Arc<ConnGuard>);

impl ActiveRequest {
    fn new(g: Arc<ConnGuard>) -> Self {
        {
            let mut s = g.lock();
            s.active += 1;
            s.head_deadline = None;
        }
        ActiveRequest(g)
    }
}

impl Drop for ActiveRequest {
    fn drop(&mut self) {
        let mut s = self.0.lock();
        s.active = s.active.saturating_sub(1);
        s.idle_since = tokio::time::Instant::now();
    }
}

/// The connection's IO with [`ConnGuard`]'s deadlines applied to reads.
struct GuardedIo<S> {
    inner: S,
    guard: Arc<ConnGuard>,
    sleep: std::pin::Pin<Box<tokio::time::Sleep>>,
}

impl<S> GuardedIo<S> {
    fn new(inner: S, guard: Arc<ConnGuard>) -> Self {
        let first = guard
            .deadline(None)
            .unwrap_or_else(tokio::time::Instant::now);
        GuardedIo {
            inner,
            guard,
            sleep: Box::pin(tokio::time::sleep_until(first)),
        }
    }
}

impl<S: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for GuardedIo<S> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        use std::task::Poll;
        let before = buf.filled().len();
        match std::pin::Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    self.guard.on_bytes();
                }
                return Poll::Ready(Ok(()));
            }
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => {}
        }
        let Some(deadline) = self.guard.deadline(Some(cx.waker())) else {
            return Poll::Pending;
        };
        if self.sleep.deadline() != deadline {
            self.sleep.as_mut().reset(deadline);
        }
        if self.sleep.as_mut().poll(cx).is_ready() {
            let s = self.guard.lock();
            let what = if s.evicted {
                "closed for a newer connection (--max-connections)"
            } else if s.head_deadline.is_some() {
                "request header timeout"
            } else {
                "idle timeout"
            };
            drop(s);
            return Poll::Ready(Err(std::io::Error::new(std::io::ErrorKind::TimedOut, what)));
        }
        Poll::Pending
    }
}

impl<S: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for GuardedIo<S> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_cap_stays_under_the_open_file_limit() {
        assert_eq!(cap_under(1024, 1024), 1024 - FD_RESERVE as usize);
        assert_eq!(cap_under(1024, 1 << 20), 1024);
        assert_eq!(cap_under(1024, 100), 1);
        assert_eq!(cap_under(50, 4096), 50);
    }
}
