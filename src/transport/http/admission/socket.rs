//! One accepted connection's socket, shared without a second descriptor:
//! hyper reads and writes it through [`Shared`], and its slot keeps a
//! handle to ask the kernel whether bytes wait unread and to make its close
//! a reset. Socket options go through `socket2::SockRef`, so nothing here is
//! `unsafe`.

use std::io;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use socket2::SockRef;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::TcpStream;

/// The connection's stream as hyper uses it. It never shuts the socket
/// down itself: the socket closes when its last handle goes (hyper's and
/// the slot's), so a parked socket sends nothing, not even a FIN, until
/// then.
pub(crate) struct Shared(pub Arc<TcpStream>);

impl AsyncRead for Shared {
    /// A read that leaves room in `buf` has drained the socket, so its
    /// readiness is cleared at once, as tokio's own `TcpStream` does: the
    /// next read waits for the kernel's word instead of asking again only
    /// to hear `EAGAIN` (one system call per HTTP request).
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            ready!(self.0.poll_read_ready(cx))?;
            let room = buf.remaining();
            let mut read = None;
            // `try_io` clears the readiness when its closure answers
            // `WouldBlock`: that is how a short read says "drained". The
            // read goes into `buf`'s uninitialised room as it is (tokio's
            // `try_read_buf`), not zeroed first: zeroing hyper's 8 KiB
            // buffer cost more than the rest of the read.
            let outcome = self.0.try_io(Interest::READABLE, || {
                let n = self.0.try_read_buf(buf)?;
                read = Some(n);
                if n > 0 && n < room {
                    Err(io::ErrorKind::WouldBlock.into())
                } else {
                    Ok(())
                }
            });
            match (read, outcome) {
                (Some(_), _) => {
                    return Poll::Ready(Ok(()));
                }
                (None, Err(e)) if e.kind() != io::ErrorKind::WouldBlock => {
                    return Poll::Ready(Err(e));
                }
                (None, _) => {}
            }
        }
    }
}

impl AsyncWrite for Shared {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            ready!(self.0.poll_write_ready(cx))?;
            match self.0.try_write(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                written => return Poll::Ready(written),
            }
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        loop {
            ready!(self.0.poll_write_ready(cx))?;
            match self.0.try_write_vectored(bufs) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                written => return Poll::Ready(written),
            }
        }
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Whether unread bytes wait on `socket`, asked of the kernel without
/// consuming them (the socket is non-blocking: nothing to read is
/// `WouldBlock`; a peer that has gone reads 0).
pub(crate) fn bytes_waiting(socket: &TcpStream) -> bool {
    let mut probe = [MaybeUninit::uninit(); 1];
    matches!(SockRef::from(socket).peek(&mut probe), Ok(n) if n > 0)
}

/// Makes closing `socket` send a reset instead of a FIN (SO_LINGER 0). A
/// failure leaves an orderly close.
pub(crate) fn reset_on_close(socket: &TcpStream) {
    let _ = SockRef::from(socket).set_linger(Some(Duration::ZERO));
}
