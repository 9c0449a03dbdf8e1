//! fixturegen harness adapter for litep2p (Parity), handshake mode only.
//!
//! litep2p 0.16.0 has TLS only in its QUIC transport (its TCP transport secures with Noise),
//! and its certificate module (`crypto::tls::certificate`) is crate-private: certificate,
//! certificate_verify and generate requests are answered `skip` with that reason. A handshake
//! request builds a fresh `Litep2p` node with the QUIC transport only and either dials the
//! fixture peer (`dial_address` of `/ip4/H/udp/P/quic-v1/p2p/EXPECTED`: litep2p requires the
//! PeerId in a dialled address) or listens on `127.0.0.1:0` and waits for
//! `Litep2pEvent::ConnectionEstablished`. A failed inbound handshake gives no event, so a
//! listen request also ends on the harness's cancel line, after its `grace_ms`.

use std::io::{self, BufRead, Write};
use std::time::Duration;

use litep2p::config::ConfigBuilder;
use litep2p::crypto::ed25519::Keypair;
use litep2p::transport::quic::config::Config as QuicConfig;
use litep2p::{Litep2p, Litep2pEvent};
use multiaddr::{Multiaddr, Protocol};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc::UnboundedReceiver;

const NO_API: &str = "litep2p 0.16.0: the certificate module (crypto::tls::certificate) is \
crate-private, so only handshakes (QUIC) can be run";

#[derive(Deserialize)]
struct Request {
    id: String,
    #[serde(default = "default_kind")]
    kind: String,
    #[serde(default)]
    expect_peer_id: Option<String>,
    #[serde(default)]
    transport: Option<String>,
    #[serde(default)]
    direction: Option<String>,
    #[serde(default)]
    address: Option<String>,
    #[serde(default)]
    timeout_ms: Option<u64>,
    #[serde(default)]
    cancel: Option<String>,
    #[serde(default)]
    grace_ms: Option<u64>,
}

fn default_kind() -> String {
    "certificate".to_string()
}

#[derive(Serialize)]
struct Reply {
    id: String,
    verdict: &'static str,
    peer_id: Option<String>,
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cpu_seconds: Option<f64>,
}

fn reply(id: &str, verdict: &'static str, peer_id: Option<String>, error: Option<String>) -> Reply {
    Reply { id: id.to_string(), verdict, peer_id, error, cpu_seconds: None }
}

fn cpu_seconds() -> f64 {
    // /proc/self/stat fields 14 and 15: utime and stime in clock ticks (100 a second on Linux)
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let tick = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

fn node(listen: bool) -> Result<Litep2p, String> {
    let listen_addresses: Vec<Multiaddr> = if listen {
        vec!["/ip4/127.0.0.1/udp/0/quic-v1".parse().map_err(|e| format!("{e}"))?]
    } else {
        vec![]
    };
    let config = ConfigBuilder::new()
        .with_keypair(Keypair::generate())
        .with_quic(QuicConfig { listen_addresses, ..Default::default() })
        .build();
    Litep2p::new(config).map_err(|e| format!("Litep2p::new: {e}"))
}

async fn handshake(req: &Request, lines: &mut UnboundedReceiver<String>, out: &mut dyn FnMut(String)) -> Reply {
    let id = req.id.as_str();
    if req.transport.as_deref() != Some("quic") {
        return reply(id, "skip", None, Some("litep2p 0.16.0 has no TLS over TCP (its TCP transport secures with Noise)".into()));
    }
    let timeout = Duration::from_millis(req.timeout_ms.unwrap_or(10_000).max(1));
    let listen = req.direction.as_deref() == Some("listen");
    let mut litep2p = match node(listen) {
        Ok(n) => n,
        Err(e) => return reply(id, "reject", None, Some(e)),
    };
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    if listen {
        let port = litep2p.listen_addresses().find_map(|a| a.iter().find_map(|p| match p {
            Protocol::Udp(port) => Some(port),
            _ => None,
        }));
        let Some(port) = port else {
            return reply(id, "reject", None, Some("adapter: litep2p listens on no UDP port".into()));
        };
        out(serde_json::json!({"id": id, "listening": format!("127.0.0.1:{port}")}).to_string());
        let mut grace: Option<(Duration, String)> = None;
        loop {
            if let Some((wait, why)) = grace.take() {
                let give_up = tokio::time::sleep(wait);
                tokio::pin!(give_up);
                loop {
                    tokio::select! {
                        event = litep2p.next_event() => if let Some(r) = listen_event(id, event) { return r },
                        _ = &mut give_up => return reply(id, "reject", None, Some(format!(
                            "adapter: the QUIC listener reported no connection (litep2p drops a failed inbound handshake without an event); {why}"))),
                    }
                }
            }
            tokio::select! {
                event = litep2p.next_event() => if let Some(r) = listen_event(id, event) { return r },
                line = lines.recv() => match line {
                    None => grace = Some((Duration::ZERO, "stdin closed".into())),
                    Some(line) => if let Ok(c) = serde_json::from_str::<Request>(&line) {
                        if c.id == id && c.cancel.is_some() {
                            grace = Some((Duration::from_millis(c.grace_ms.unwrap_or(250)), c.cancel.unwrap_or_default()));
                        }
                    },
                },
                _ = &mut deadline => return reply(id, "reject", None, Some(format!(
                    "adapter: the QUIC listener reported no connection within {timeout:?} (litep2p drops a failed inbound handshake without an event)"))),
            }
        }
    }
    let Some(address) = req.address.as_deref() else {
        return reply(id, "reject", None, Some("adapter: a dial request without an address".into()));
    };
    let Some((host, port)) = address.rsplit_once(':') else {
        return reply(id, "reject", None, Some("adapter: bad address".into()));
    };
    let Some(expect) = req.expect_peer_id.as_deref() else {
        return reply(id, "skip", None, Some("litep2p dials only an address with a /p2p/ PeerId; the case names none".into()));
    };
    let target: Multiaddr = match format!("/ip4/{host}/udp/{port}/quic-v1/p2p/{expect}").parse() {
        Ok(t) => t,
        Err(e) => return reply(id, "skip", None, Some(format!("adapter: the expected PeerId makes no multiaddr: {e}"))),
    };
    if let Err(e) = litep2p.dial_address(target).await {
        return reply(id, "reject", None, Some(format!("dial_address: {e} ({e:?})")));
    }
    loop {
        tokio::select! {
            event = litep2p.next_event() => match event {
                Some(Litep2pEvent::ConnectionEstablished { peer, .. }) => return reply(id, "accept", Some(peer.to_base58()), None),
                Some(Litep2pEvent::DialFailure { error, .. }) => return reply(id, "reject", None, Some(format!("DialFailure: {error} ({error:?})"))),
                Some(Litep2pEvent::ListDialFailures { errors }) => return reply(id, "reject", None, Some(format!("ListDialFailures: {errors:?}"))),
                Some(_) => {}
                None => return reply(id, "reject", None, Some("adapter: litep2p's event stream ended".into())),
            },
            _ = &mut deadline => return reply(id, "reject", None, Some(format!("adapter: no connection event within {timeout:?}"))),
        }
    }
}

fn listen_event(id: &str, event: Option<Litep2pEvent>) -> Option<Reply> {
    match event {
        Some(Litep2pEvent::ConnectionEstablished { peer, .. }) => Some(reply(id, "accept", Some(peer.to_base58()), None)),
        Some(_) => None,
        None => Some(reply(id, "reject", None, Some("adapter: litep2p's event stream ended".into()))),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let (tx, mut lines) = tokio::sync::mpsc::unbounded_channel::<String>();
    std::thread::spawn(move || {
        for line in io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut write = |line: String| {
        let mut out = io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    };
    while let Some(line) = lines.recv().await {
        if line.trim().is_empty() {
            continue;
        }
        let started = cpu_seconds();
        let answer = match serde_json::from_str::<Request>(&line) {
            Ok(req) if req.cancel.is_some() => continue, // a cancel that came after its answer
            Ok(req) => match req.kind.as_str() {
                "handshake" => {
                    let r = handshake(&req, &mut lines, &mut write).await;
                    Reply { cpu_seconds: Some(cpu_seconds() - started), ..r }
                }
                "certificate" | "certificate_verify" | "generate" => reply(&req.id, "skip", None, Some(NO_API.into())),
                other => reply(&req.id, "skip", None, Some(format!("adapter: unknown request kind {other}"))),
            },
            Err(e) => reply("", "skip", None, Some(format!("adapter: unreadable request: {e}"))),
        };
        write(serde_json::to_string(&answer).expect("a reply serialises"));
    }
}
