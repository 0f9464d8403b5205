//! stdin and stdout for the MCP stdio transport, read and written on the async runtime
//! itself when they are pipes or sockets (what every MCP client gives a server).
//!
//! `tokio::io::stdin()` / `stdout()` hand every read and write to a blocking thread: each
//! request line and each response paid two thread hand-offs, which the serve benchmark
//! (BENCHMARKS.md) showed as most of a call's cost. A pipe or socket is put in
//! non-blocking mode and polled like any other descriptor instead. Anything else (a
//! terminal, a file) keeps tokio's blocking handles: making a terminal non-blocking would
//! change it for the shell that shares it.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::UnixStream;
use tokio::net::unix::pipe;

/// The server's stdin.
pub enum Input {
    Pipe(pipe::Receiver),
    Socket(UnixStream),
    Blocking(tokio::io::Stdin),
}

/// The server's stdout.
pub enum Output {
    Pipe(pipe::Sender),
    Socket(UnixStream),
    Blocking(tokio::io::Stdout),
}

enum Kind {
    Pipe(std::fs::File),
    Socket(std::os::unix::net::UnixStream),
}

/// A duplicate of `fd` when it is a pipe or a socket, in non-blocking mode. Not when
/// stderr is the same pipe or socket: non-blocking mode belongs to the open file, and
/// `eprintln!` must not see `EAGAIN`.
fn classify(fd: std::os::fd::BorrowedFd<'_>) -> Option<Kind> {
    use std::os::unix::fs::MetadataExt;
    let owned: OwnedFd = fd.try_clone_to_owned().ok()?;
    let file = std::fs::File::from(owned);
    let meta = file.metadata().ok()?;
    let stderr = io::stderr()
        .as_fd()
        .try_clone_to_owned()
        .ok()
        .and_then(|e| std::fs::File::from(e).metadata().ok());
    if stderr.is_some_and(|e| (e.dev(), e.ino()) == (meta.dev(), meta.ino())) {
        return None;
    }
    let kind = meta.file_type();
    if kind.is_fifo() {
        Some(Kind::Pipe(file))
    } else if kind.is_socket() {
        let s = std::os::unix::net::UnixStream::from(OwnedFd::from(file));
        s.set_nonblocking(true).ok()?;
        Some(Kind::Socket(s))
    } else {
        None
    }
}

/// stdin, polled on the runtime when it is a pipe or socket.
pub fn stdin() -> Input {
    let polled = match classify(io::stdin().as_fd()) {
        Some(Kind::Pipe(f)) => pipe::Receiver::from_file(f).ok().map(Input::Pipe),
        Some(Kind::Socket(s)) => UnixStream::from_std(s).ok().map(Input::Socket),
        None => None,
    };
    polled.unwrap_or_else(|| Input::Blocking(tokio::io::stdin()))
}

/// stdout, polled on the runtime when it is a pipe or socket.
pub fn stdout() -> Output {
    let polled = match classify(io::stdout().as_fd()) {
        Some(Kind::Pipe(f)) => pipe::Sender::from_file(f).ok().map(Output::Pipe),
        Some(Kind::Socket(s)) => UnixStream::from_std(s).ok().map(Output::Socket),
        None => None,
    };
    polled.unwrap_or_else(|| Output::Blocking(tokio::io::stdout()))
}

impl AsyncRead for Input {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Input::Pipe(p) => Pin::new(p).poll_read(cx, buf),
            Input::Socket(s) => Pin::new(s).poll_read(cx, buf),
            Input::Blocking(b) => Pin::new(b).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Output {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Output::Pipe(p) => Pin::new(p).poll_write(cx, buf),
            Output::Socket(s) => Pin::new(s).poll_write(cx, buf),
            Output::Blocking(b) => Pin::new(b).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Output::Pipe(p) => Pin::new(p).poll_flush(cx),
            Output::Socket(s) => Pin::new(s).poll_flush(cx),
            Output::Blocking(b) => Pin::new(b).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Output::Pipe(p) => Pin::new(p).poll_shutdown(cx),
            Output::Socket(s) => Pin::new(s).poll_shutdown(cx),
            Output::Blocking(b) => Pin::new(b).poll_shutdown(cx),
        }
    }
}
