//! The harness's input: the lines the runtime sends it (calls, aborts, answers).
//!
//! A line goes straight to the socket from the sender when nothing is queued ahead of it,
//! which is a warm call's line almost always: no task is woken for it. Otherwise (the
//! socket is full, or lines are waiting already) it is queued, in order, for a task that
//! writes when the socket can take more. Before this, every line went through that task,
//! and each warm call paid for waking it (issue 58).

use std::io::ErrorKind;
use std::sync::{Arc, Mutex};

use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::mpsc;

use crate::lock::Locked;

/// Where a worker's lines go. Clones share the socket and the queue; when the last is
/// dropped, the queue drains and the socket's write side closes (the harness then kills
/// its own group and exits).
#[derive(Clone)]
pub(super) struct Input {
    pipe: Arc<Pipe>,
    queue: mpsc::UnboundedSender<Vec<u8>>,
}

struct Pipe {
    write: OwnedWriteHalf,
    /// Whether lines wait for the writing task (or it is writing them): a sender then
    /// queues its line behind them. Held while a sender writes itself, so lines never mix.
    state: Mutex<State>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Idle,
    Queued,
    /// A write failed or the writing task ended (its runtime shut down): what is sent now
    /// is dropped.
    Broken,
}

impl Input {
    /// Takes over the socket's write side; spawns the task that writes what is queued.
    pub(super) fn new(write: OwnedWriteHalf) -> Input {
        let pipe = Arc::new(Pipe {
            write,
            state: Mutex::new(State::Idle),
        });
        let (queue, rx) = mpsc::unbounded_channel();
        tokio::spawn(write_queued(pipe.clone(), rx));
        Input { pipe, queue }
    }

    /// Sends one line (or several, already joined): written now if nothing is ahead of
    /// it and the socket takes it, else queued. A line for a harness that is gone is
    /// dropped, as its reader tells every call why.
    pub(super) fn send(&self, mut line: Vec<u8>) {
        let mut state = self.pipe.state.locked();
        match *state {
            State::Broken => return,
            State::Queued => {}
            State::Idle => {
                match self.pipe.write.try_write(&line) {
                    Ok(n) if n == line.len() => return,
                    Ok(n) => {
                        line.drain(..n);
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(_) => {
                        *state = State::Broken;
                        return;
                    }
                }
                *state = State::Queued;
            }
        }
        // Fails only once the task has ended, and the state is `Broken` then: dropped.
        let _ = self.queue.send(line);
    }
}

/// Writes what is queued, in order, as the socket takes it; back to `Idle` (senders write
/// themselves) once the queue is empty.
async fn write_queued(pipe: Arc<Pipe>, mut rx: mpsc::UnboundedReceiver<Vec<u8>>) {
    let _ending = Ending(pipe.clone());
    while let Some(mut lines) = rx.recv().await {
        loop {
            // Lines queued meanwhile (calls that arrived together) go out in one write.
            while lines.len() < 1 << 20
                && let Ok(more) = rx.try_recv()
            {
                lines.extend_from_slice(&more);
            }
            if write_all(&pipe.write, &lines).await.is_err() {
                return;
            }
            // Under the lock, so no sender queues a line after the last look: the queue is
            // empty whenever the state is `Idle`.
            let mut state = pipe.state.locked();
            match rx.try_recv() {
                Ok(more) => lines = more,
                Err(_) => {
                    *state = State::Idle;
                    break;
                }
            }
        }
    }
}

/// Ends the input when the writing task ends, however it ends: every sender gone, a write
/// failed, or the runtime shut down with senders left (a worker outliving its runtime).
/// Later lines are dropped, and the harness reads the end of its input and exits, as when
/// the task owned the socket's write side.
struct Ending(Arc<Pipe>);

impl Drop for Ending {
    fn drop(&mut self) {
        use std::os::fd::AsRawFd;
        *self.0.state.locked() = State::Broken;
        let stream: &tokio::net::UnixStream = self.0.write.as_ref();
        // SAFETY: shutdown(2) on a descriptor the `Arc` keeps open; it only ends the
        // writing direction (the reader still reads the harness's last words).
        unsafe { libc::shutdown(stream.as_raw_fd(), libc::SHUT_WR) };
    }
}

async fn write_all(write: &OwnedWriteHalf, mut buf: &[u8]) -> std::io::Result<()> {
    while !buf.is_empty() {
        write.writable().await?;
        match write.try_write(buf) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => buf = &buf[n..],
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncBufReadExt, BufReader};
    use tokio::net::UnixStream;

    /// An input over one end of a socket pair, that end's read half (to keep open) and
    /// the other end.
    fn pair() -> (Input, tokio::net::unix::OwnedReadHalf, UnixStream) {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let (read, write) = ours.into_split();
        (Input::new(write), read, theirs)
    }

    /// Bounds a test's waiting: a bug hangs no one.
    async fn bounded<F: std::future::Future>(f: F) -> F::Output {
        tokio::time::timeout(std::time::Duration::from_secs(30), f)
            .await
            .expect("the test timed out")
    }

    /// Waits (bounded) for `input` to reach `want`.
    async fn until(input: &Input, want: State) {
        bounded(async {
            while state(input) != want {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
        })
        .await;
    }

    fn state(input: &Input) -> State {
        *input.pipe.state.locked()
    }

    /// More than the socket holds, sent without a pause, arrives whole and in order: the
    /// first lines are written by the sender, the rest queued behind the one cut short,
    /// and once the queue has drained the sender writes again.
    #[tokio::test]
    async fn lines_arrive_in_order_when_the_socket_fills() {
        let (input, _read, theirs) = pair();
        let filler = "x".repeat(10_000);
        let n = 500; // ~5 MB, far over a socket's buffer
        for i in 0..n {
            input.send(format!("{i} {filler}\n").into_bytes());
        }
        assert_eq!(state(&input), State::Queued, "the socket never filled");
        let mut lines = BufReader::new(theirs).lines();
        for i in 0..n {
            let line = bounded(lines.next_line()).await.unwrap().expect("a line");
            let (seq, rest) = line.split_once(' ').unwrap();
            assert_eq!(seq.parse::<usize>().unwrap(), i, "out of order");
            assert_eq!(rest.len(), filler.len(), "line {i} was cut or mixed");
        }
        // The queue drains, and the next line is the sender's own again.
        until(&input, State::Idle).await;
        input.send(b"last\n".to_vec());
        assert_eq!(state(&input), State::Idle);
        let last = bounded(lines.next_line()).await.unwrap();
        assert_eq!(last.as_deref(), Some("last"));
    }

    /// Senders and the writing task at once, on two threads, with a reader that keeps the
    /// socket filling and emptying: no line overtakes one queued before it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_sender_never_overtakes_the_queue() {
        let (input, _read, theirs) = pair();
        let n = 20_000;
        let sender = tokio::spawn(async move {
            let filler = "z".repeat(1000);
            for i in 0..n {
                input.send(format!("{i} {filler}\n").into_bytes());
                if i % 16 == 0 {
                    tokio::task::yield_now().await;
                }
            }
            input
        });
        let mut lines = BufReader::with_capacity(4096, theirs).lines();
        bounded(async {
            for i in 0..n {
                let line = lines.next_line().await.unwrap().expect("a line");
                let seq: usize = line.split_once(' ').unwrap().0.parse().unwrap();
                assert_eq!(seq, i, "a line overtook the queue");
            }
        })
        .await;
        drop(bounded(sender).await.unwrap());
    }

    /// A harness that is gone: what is sent is dropped, nothing blocks or panics.
    #[tokio::test]
    async fn a_closed_peer_breaks_the_input_quietly() {
        let (input, _read, theirs) = pair();
        drop(theirs);
        // Written at once, or queued for the task (a socket not known writable yet): either
        // way the write fails, and the input is broken.
        for _ in 0..3 {
            input.send(b"call\n".to_vec());
        }
        until(&input, State::Broken).await;
        input.send(b"dropped\n".to_vec());
        assert_eq!(state(&input), State::Broken);
    }

    /// Dropping the last sender closes the harness's input once the queue is written.
    #[tokio::test]
    async fn the_input_closes_after_its_queue_when_dropped() {
        let (input, _read, theirs) = pair();
        let filler = "y".repeat(100_000);
        for i in 0..20 {
            input.send(format!("{i} {filler}\n").into_bytes());
        }
        drop(input);
        let mut lines = BufReader::new(theirs).lines();
        let mut got = 0;
        while let Some(line) = bounded(lines.next_line()).await.unwrap() {
            assert!(line.starts_with(&format!("{got} ")));
            got += 1;
        }
        assert_eq!(got, 20, "end of stream before the queue was written");
    }

    /// A worker that outlives its runtime: the harness's input ends with the runtime, as
    /// it did when the task owned the socket, and what is sent after is dropped.
    #[test]
    fn the_input_ends_with_its_runtime() {
        use std::io::Read;
        let (ours, mut theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        ours.set_nonblocking(true).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (input, _read) = rt.block_on(async {
            let (read, write) = UnixStream::from_std(ours).unwrap().into_split();
            let input = Input::new(write);
            input.send(b"first\n".to_vec());
            // Written (the socket may not be known writable yet: then by the task).
            until(&input, State::Idle).await;
            (input, read)
        });
        drop(rt);
        input.send(b"after\n".to_vec());
        theirs
            .set_read_timeout(Some(std::time::Duration::from_secs(30)))
            .unwrap();
        let mut got = String::new();
        theirs
            .read_to_string(&mut got)
            .expect("the end of the input, not a timeout");
        assert_eq!(got, "first\n");
        assert_eq!(state(&input), State::Broken);
    }
}
