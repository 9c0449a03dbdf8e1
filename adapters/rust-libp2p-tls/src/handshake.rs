//! A `handshake` request: rust-libp2p's own secure-channel upgrade against fixturegen's fixture
//! peer, over TCP, as `libp2p_core::transport::upgrade::Builder::authenticate` runs it: the
//! dialer `multistream_select::dialer_select_proto` with the Config's protocol (`V1Lazy`, what
//! the SwarmBuilder uses), then `OutboundConnectionUpgrade::upgrade_outbound`; the listener
//! `listener_select_proto`, then `upgrade_inbound`. The swarm's last check on a dial (the
//! authenticated PeerId is the dialled one, else `WrongPeerId`) is made here too.
//!
//! One connection at a time, on a current-thread tokio runtime (tokio's TCP behind the futures
//! I/O traits the upgrade takes); `tokio::time::timeout` bounds the whole handshake.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use libp2p_core::upgrade::UpgradeInfo;
use multistream_select::{dialer_select_proto, listener_select_proto, Version};
use tokio::net::{TcpListener, TcpStream};

use crate::compat::{InboundConnectionUpgrade, Keypair, OutboundConnectionUpgrade, PeerId};
use crate::{accept, reject, skip, Reply, Request};

/// tokio's TcpStream as a futures AsyncRead + AsyncWrite (what tokio-util's compat does).
struct Compat(TcpStream);

impl futures::AsyncRead for Compat {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let mut filled = tokio::io::ReadBuf::new(buf);
        match tokio::io::AsyncRead::poll_read(Pin::new(&mut self.get_mut().0), cx, &mut filled) {
            Poll::Ready(Ok(())) => Poll::Ready(Ok(filled.filled().len())),
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl futures::AsyncWrite for Compat {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        tokio::io::AsyncWrite::poll_write(Pin::new(&mut self.get_mut().0), cx, buf)
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        tokio::io::AsyncWrite::poll_flush(Pin::new(&mut self.get_mut().0), cx)
    }
    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        tokio::io::AsyncWrite::poll_shutdown(Pin::new(&mut self.get_mut().0), cx)
    }
}

pub fn handshake(keypair: &Keypair, req: Request, announce: &mut dyn FnMut(String) -> io::Result<()>) -> Reply {
    if req.transport.as_deref() == Some("quic") {
        return crate::quic::handshake(keypair, req, announce);
    }
    if req.transport.as_deref() != Some("tcp") {
        return skip(req.id, format!("adapter: transport {:?} is not built into this adapter", req.transport));
    }
    let config = match libp2p_tls::Config::new(keypair) {
        Ok(config) => config,
        Err(e) => return reject(req.id, format!("libp2p_tls::Config::new: {e:?}")),
    };
    let timeout = Duration::from_millis(req.timeout_ms.unwrap_or(10_000).max(1));
    let listen = req.direction.as_deref() == Some("listen");
    let outcome = bounded(timeout, async {
        let stream = if listen {
            let listener = TcpListener::bind("127.0.0.1:0").await.map_err(|e| format!("adapter: listen: {e}"))?;
            let address = listener.local_addr().map_err(|e| format!("adapter: listen: {e}"))?;
            announce(serde_json::json!({"id": req.id, "listening": address.to_string()}).to_string())
                .map_err(|e| format!("adapter: {e}"))?;
            listener.accept().await.map_err(|e| format!("adapter: nobody connected: {e}"))?.0
        } else {
            let address = req.address.clone().ok_or("adapter: a dial request without an address")?;
            TcpStream::connect(address).await.map_err(|e| format!("adapter: dial: {e}"))?
        };
        // libp2p-tcp's Config sets TCP_NODELAY by default; without it, a small write
        // waits for a delayed ACK (~40 ms on loopback).
        stream.set_nodelay(true).map_err(|e| format!("adapter: nodelay: {e}"))?;
        let protocols: Vec<_> = config.protocol_info().collect(); // &str; &[u8] before 0.2.0
        let io = Compat(stream);
        if listen {
            let (info, negotiated) = listener_select_proto(io, protocols)
                .await
                .map_err(|e| format!("multistream-select: {e:?}"))?;
            let (peer, _tls) = config.upgrade_inbound(negotiated, info).await.map_err(|e| format!("{e}: {e:?}"))?;
            Ok::<PeerId, String>(peer)
        } else {
            let (info, negotiated) = dialer_select_proto(io, protocols, Version::V1Lazy)
                .await
                .map_err(|e| format!("multistream-select: {e:?}"))?;
            let (peer, _tls) = config.upgrade_outbound(negotiated, info).await.map_err(|e| format!("{e}: {e:?}"))?;
            Ok(peer)
        }
    });
    verdict(req, listen, outcome)
}

/// Runs one handshake on a fresh current-thread tokio runtime, within `timeout`.
pub fn bounded<F>(timeout: Duration, handshake: F) -> Result<PeerId, String>
where
    F: std::future::Future<Output = Result<PeerId, String>>,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| format!("adapter: no tokio runtime: {e}"))?;
    runtime.block_on(async {
        match tokio::time::timeout(timeout, handshake).await {
            Ok(outcome) => outcome,
            Err(_) => Err(format!("adapter: no verdict within {} ms (the handshake hung)", timeout.as_millis())),
        }
    })
}

/// The reply: the upgrade's error, or, for a dial, the swarm's check that the authenticated
/// PeerId is the dialled one (`WrongPeerId`), then accept.
pub fn verdict(req: Request, listen: bool, outcome: Result<PeerId, String>) -> Reply {
    let peer = match outcome {
        Ok(peer) => peer,
        Err(e) => return reject(req.id, e),
    };
    if let (false, Some(expected)) = (listen, &req.expect_peer_id) {
        match expected.parse::<PeerId>() {
            Ok(want) if want == peer => {}
            Ok(want) => {
                return reject(req.id, format!("WrongPeerId {{ obtained: {peer}, endpoint: dialed {want} }} (the swarm's check after the upgrade)"))
            }
            Err(e) => return reject(req.id, format!("adapter: expected PeerId unparsable: {e}")),
        }
    }
    accept(req.id, Some(peer.to_base58()))
}
