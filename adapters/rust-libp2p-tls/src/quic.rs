//! A `handshake` request over QUIC v1: rust-libp2p's `libp2p-quic` transport (quinn, with
//! `libp2p-tls`'s rustls configs inside) as a swarm drives it: `Transport::dial` with
//! `DialOpts { role: Dialer, port_use: New }`, or `listen_on` and the transport's
//! `TransportEvent`s (`NewAddress`, then `Incoming`, whose upgrade is awaited). A failed
//! inbound handshake comes back as that upgrade's error. The dial ends with the swarm's
//! PeerId check, as over TCP.

use std::io;
use std::pin::Pin;
use std::time::Duration;

use libp2p_core::multiaddr::{Multiaddr, Protocol};
use libp2p_core::transport::{Transport, TransportEvent};

use crate::compat::{Keypair, PeerId};
use crate::handshake::{bounded, verdict};
use crate::{Reply, Request};

pub fn handshake(keypair: &Keypair, req: Request, announce: &mut dyn FnMut(String) -> io::Result<()>) -> Reply {
    let timeout = Duration::from_millis(req.timeout_ms.unwrap_or(10_000).max(1));
    let listen = req.direction.as_deref() == Some("listen");
    let outcome = bounded(timeout, async {
        let mut transport = libp2p_quic::tokio::Transport::new(libp2p_quic::Config::new(keypair));
        if listen {
            let any: Multiaddr = "/ip4/127.0.0.1/udp/0/quic-v1".parse().map_err(|e| format!("{e}"))?;
            #[cfg(not(feature = "listen-legacy"))] // libp2p-core 0.40 and later
            let listening = transport.listen_on(libp2p_core::transport::ListenerId::next(), any);
            #[cfg(feature = "listen-legacy")]
            let listening = transport.listen_on(any).map(|_| ());
            listening.map_err(|e| format!("listen_on: {e:?}"))?;
            loop {
                let event = futures::future::poll_fn(|cx| Pin::new(&mut transport).poll(cx)).await;
                match event {
                    TransportEvent::NewAddress { listen_addr, .. } => {
                        let port = listen_addr.iter().find_map(|p| match p {
                            Protocol::Udp(port) => Some(port),
                            _ => None,
                        });
                        let port = port.ok_or_else(|| format!("adapter: no UDP port in {listen_addr}"))?;
                        announce(serde_json::json!({"id": req.id, "listening": format!("127.0.0.1:{port}")}).to_string())
                            .map_err(|e| format!("adapter: {e}"))?;
                    }
                    TransportEvent::Incoming { upgrade, .. } => {
                        let (peer, _connection) = upgrade.await.map_err(|e| format!("{e}: {e:?}"))?;
                        return Ok::<PeerId, String>(peer);
                    }
                    TransportEvent::ListenerError { error, .. } => return Err(format!("{error}: {error:?}")),
                    TransportEvent::ListenerClosed { reason, .. } => return Err(format!("listener closed: {reason:?}")),
                    _ => {}
                }
            }
        } else {
            let address = req.address.clone().ok_or("adapter: a dial request without an address")?;
            let (host, port) = address.rsplit_once(':').ok_or("adapter: bad address")?;
            let target: Multiaddr = format!("/ip4/{host}/udp/{port}/quic-v1").parse().map_err(|e| format!("{e}"))?;
            #[cfg(not(feature = "dial-legacy"))] // libp2p-core 0.42 and later
            let dial = {
                use libp2p_core::transport::{DialOpts, PortUse};
                transport.dial(target, DialOpts { role: libp2p_core::Endpoint::Dialer, port_use: PortUse::New })
            };
            #[cfg(feature = "dial-legacy")]
            let dial = transport.dial(target);
            let dial = dial.map_err(|e| format!("dial: {e:?}"))?;
            let (peer, _connection) = dial.await.map_err(|e| format!("{e}: {e:?}"))?;
            Ok(peer)
        }
    });
    verdict(req, listen, outcome)
}
