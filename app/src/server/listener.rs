//! Sockets: binding the loopback addresses, accepting from several listeners as one, and closing
//! idle connections.
//!
//! `127.0.0.1` and `::1` are both bound on one port, because `localhost` resolves to either
//! depending on the system and the client. axum's `serve` sets no timeouts, so every connection
//! is wrapped in [`IdleStream`]: a connection with no request in flight for the idle limit is
//! closed. "No request in flight" matters: a queued speech job may wait minutes for the model
//! without a byte on the wire, and must not be cut off.
//!
//! Nobody without the token may hold the server: bytes that arrive while no request is in
//! flight (a request's head, trickled a byte at a time) do not keep a connection open; a new
//! connection must bring a whole request head within [`HEADER_TIMEOUT`]; and at most
//! [`MAX_FRESH`] connections that have not yet made a request are held at once: a new one
//! closes the oldest of them, so trickling sockets cannot use up the file descriptors that
//! `/health` and the owner's requests need, and a real client, which sends its request at once,
//! is never the one turned away.

use std::future::{poll_fn, Future};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::extract::{ConnectInfo, Request};
use axum::middleware::Next;
use axum::response::Response;
use axum::serve::IncomingStream;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};

/// A new connection has this long to bring a complete request head.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections held at once that have not yet made a request.
pub const MAX_FRESH: usize = 64;

/// Several bound sockets accepted from as one.
pub struct Listeners {
    sockets: Vec<TcpListener>,
    idle: Duration,
    next: usize,
    /// Connections accepted that had not yet made a request, oldest first (some may have made
    /// one or closed since).
    waiting: std::collections::VecDeque<std::sync::Weak<Shared>>,
}

impl Listeners {
    /// Binds `listen` on `port`, or (no `listen`) 127.0.0.1 and, when the system has it, ::1 on
    /// the same port (`port` 0 picks a free one for both).
    pub async fn bind(listen: Option<IpAddr>, port: u16, idle: Duration) -> io::Result<Self> {
        if let Some(addr) = listen {
            let listener = TcpListener::bind(SocketAddr::new(addr, port)).await?;
            return Ok(Self::new(vec![listener], idle));
        }
        // With port 0 the kernel picks for 127.0.0.1; ::1 may have that port taken: try again.
        let mut last_err = None;
        for _ in 0..8 {
            let v4 = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
            let chosen = v4.local_addr()?.port();
            match TcpListener::bind((Ipv6Addr::LOCALHOST, chosen)).await {
                Ok(v6) => return Ok(Self::new(vec![v4, v6], idle)),
                Err(e) if e.kind() == io::ErrorKind::AddrInUse && port == 0 => last_err = Some(e),
                Err(e) if e.kind() == io::ErrorKind::AddrInUse => {
                    tracing::warn!("[::1]:{chosen} is in use; serving on 127.0.0.1 only");
                    return Ok(Self::new(vec![v4], idle));
                }
                Err(e) => {
                    tracing::info!("no IPv6 loopback ({e}); serving on 127.0.0.1 only");
                    return Ok(Self::new(vec![v4], idle));
                }
            }
        }
        Err(last_err.unwrap_or_else(|| io::Error::other("could not bind the loopback port")))
    }

    fn new(listeners: Vec<TcpListener>, idle: Duration) -> Self {
        Self {
            sockets: listeners,
            idle,
            next: 0,
            waiting: std::collections::VecDeque::new(),
        }
    }

    /// The addresses actually bound.
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.sockets
            .iter()
            .filter_map(|l| l.local_addr().ok())
            .collect()
    }

    /// With [`MAX_FRESH`] connections still waiting for their first request, closes the oldest.
    fn make_room(&mut self) {
        // Forget the ones that have made a request or closed.
        self.waiting.retain(|w| {
            w.upgrade()
                .is_some_and(|s| s.started.load(Ordering::Acquire) == 0)
        });
        while self.waiting.len() >= MAX_FRESH {
            if let Some(oldest) = self.waiting.pop_front().and_then(|w| w.upgrade()) {
                tracing::warn!(
                    "{MAX_FRESH} connections have not made a request; closing the oldest"
                );
                oldest.evicted.store(true, Ordering::Release);
                oldest.waker.wake();
            }
        }
    }

    fn poll_accept(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<(TcpStream, SocketAddr)>> {
        // Start at a rotating index so one busy listener cannot starve the other.
        let n = self.sockets.len();
        for i in 0..n {
            let index = (self.next + i) % n;
            if let Poll::Ready(result) = self.sockets[index].poll_accept(cx) {
                self.next = (index + 1) % n;
                return Poll::Ready(result);
            }
        }
        Poll::Pending
    }
}

impl axum::serve::Listener for Listeners {
    type Io = IdleStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match poll_fn(|cx| self.poll_accept(cx)).await {
                Ok((stream, addr)) => {
                    self.make_room();
                    let _ = stream.set_nodelay(true);
                    let io = IdleStream::new(stream, self.idle);
                    self.waiting.push_back(Arc::downgrade(&io.shared));
                    return (io, addr);
                }
                Err(e) => {
                    // Out of file descriptors and the like: wait instead of spinning.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.sockets
            .first()
            .ok_or_else(|| io::Error::other("no listener"))?
            .local_addr()
    }
}

/// What a connection and the requests on it share.
#[derive(Debug, Default)]
struct Shared {
    /// Requests being served.
    busy: AtomicUsize,
    /// Requests started on the connection so far (none: the connection is still fresh).
    started: AtomicUsize,
    /// Closed to make room for a newer connection (see [`Listeners::make_room`]).
    evicted: std::sync::atomic::AtomicBool,
    /// Wakes the connection's pending read when it is evicted.
    waker: futures_util::task::AtomicWaker,
}

/// A TCP connection that fails its pending read once it has been idle too long, or (new) has
/// not brought a request head in time.
pub struct IdleStream {
    inner: TcpStream,
    idle: Duration,
    deadline: Pin<Box<Sleep>>,
    shared: Arc<Shared>,
}

impl IdleStream {
    fn new(inner: TcpStream, idle: Duration) -> Self {
        Self {
            inner,
            idle,
            deadline: Box::pin(tokio::time::sleep(idle.min(HEADER_TIMEOUT))),
            shared: Arc::default(),
        }
    }

    /// No request has reached a handler on this connection yet.
    fn is_fresh(&self) -> bool {
        self.shared.started.load(Ordering::Acquire) == 0
    }

    fn touch(&mut self) {
        let at = Instant::now() + self.idle;
        self.deadline.as_mut().reset(at);
    }

    /// Registers the idle timer; an error once it has run out with no request in flight.
    fn poll_idle(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        self.shared.waker.register(cx.waker());
        if self.is_fresh() && self.shared.evicted.load(Ordering::Acquire) {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "closed to make room: too many connections without a request",
            ));
        }
        loop {
            if self.deadline.as_mut().poll(cx).is_pending() {
                return Ok(());
            }
            if self.shared.busy.load(Ordering::Acquire) == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    if self.is_fresh() {
                        "no request head in time"
                    } else {
                        "connection idle for too long"
                    },
                ));
            }
            self.touch(); // a request is being served: look again later
        }
    }
}

impl AsyncRead for IdleStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(result) => {
                // Bytes keep a connection open only while a request is in flight (a body
                // being uploaded); a head trickled byte by byte does not.
                if buf.filled().len() > before && this.shared.busy.load(Ordering::Acquire) > 0 {
                    this.touch();
                }
                Poll::Ready(result)
            }
            Poll::Pending => match this.poll_idle(cx) {
                Ok(()) => Poll::Pending,
                Err(e) => Poll::Ready(Err(e)),
            },
        }
    }
}

impl AsyncWrite for IdleStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.inner).poll_write(cx, data);
        if matches!(result, Poll::Ready(Ok(n)) if n > 0) {
            this.touch();
        }
        result
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        if matches!(result, Poll::Ready(Ok(n)) if n > 0) {
            this.touch();
        }
        result
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// Per-connection facts handed to handlers: the connection's in-flight counter.
#[derive(Debug, Clone)]
pub struct Connection {
    shared: Arc<Shared>,
}

impl Connection {
    /// Marks the connection busy (never idle-closed) until the guard is dropped.
    pub fn busy(&self) -> BusyGuard {
        self.shared.busy.fetch_add(1, Ordering::AcqRel);
        self.shared.started.fetch_add(1, Ordering::AcqRel);
        BusyGuard(Arc::clone(&self.shared))
    }
}

impl Connected<IncomingStream<'_, Listeners>> for Connection {
    fn connect_info(stream: IncomingStream<'_, Listeners>) -> Self {
        Self {
            shared: Arc::clone(&stream.io().shared),
        }
    }
}

#[derive(Debug)]
pub struct BusyGuard(Arc<Shared>);

impl Drop for BusyGuard {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Middleware: the connection is busy while its handler runs (streaming bodies hold their own
/// guard until the last byte).
pub async fn mark_busy(request: Request, next: Next) -> Response {
    let guard = request
        .extensions()
        .get::<ConnectInfo<Connection>>()
        .map(|c| c.0.busy());
    let response = next.run(request).await;
    drop(guard);
    response
}
