//! fixturegen harness adapter for litep2p (Parity), handshake mode only.
//!
//! litep2p 0.16.0 has TLS only in its QUIC transport (its TCP transport secures with Noise),
//! and its certificate module (`crypto::tls::certificate`) is crate-private: certificate and
//! certificate_verify requests are answered `skip` with that reason. A generate request (an
//! Ed25519 host key, litep2p's only type) starts a litep2p QUIC listener and reads the
//! certificate it presents with a bare quinn client (no certificate key in the reply). A handshake
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
    host_key_type: Option<String>,
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
    certificates: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cpu_seconds: Option<f64>,
}

fn reply(id: &str, verdict: &'static str, peer_id: Option<String>, error: Option<String>) -> Reply {
    Reply { id: id.to_string(), verdict, peer_id, error, certificates: None, cpu_seconds: None }
}

fn cpu_seconds() -> f64 {
    // /proc/self/stat fields 14 and 15: utime and stime in clock ticks (100 a second on Linux)
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let tick = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

/// Keeps the end-entity certificate a server presents, then refuses it (the handshake needs
/// go no further).
struct Capture(std::sync::Mutex<Option<Vec<u8>>>);

impl rustls::client::ServerCertVerifier for Capture {
    fn verify_server_cert(
        &self,
        end_entity: &rustls::Certificate,
        _intermediates: &[rustls::Certificate],
        _server_name: &rustls::ServerName,
        _scts: &mut dyn Iterator<Item = &[u8]>,
        _ocsp_response: &[u8],
        _now: std::time::SystemTime,
    ) -> Result<rustls::client::ServerCertVerified, rustls::Error> {
        *self.0.lock().expect("not poisoned") = Some(end_entity.0.clone());
        Err(rustls::Error::General("adapter: certificate captured".into()))
    }
}

async fn generate(req: &Request) -> Reply {
    let id = req.id.as_str();
    if req.host_key_type.as_deref() != Some("ed25519") {
        return reply(id, "skip", None, Some(format!(
            "litep2p 0.16.0 has Ed25519 host keys only (asked for {:?})", req.host_key_type)));
    }
    let keypair = Keypair::generate();
    let peer = litep2p::PeerId::from_public_key(&litep2p::crypto::PublicKey::Ed25519(keypair.public()));
    let config = ConfigBuilder::new()
        .with_keypair(keypair)
        .with_quic(QuicConfig::default())
        .build();
    let mut litep2p = match Litep2p::new(config) {
        Ok(n) => n,
        Err(e) => return reply(id, "reject", None, Some(format!("Litep2p::new: {e}"))),
    };
    let port = litep2p.listen_addresses().find_map(|a| a.iter().find_map(|p| match p {
        Protocol::Udp(port) => Some(port),
        _ => None,
    }));
    let Some(port) = port else {
        return reply(id, "reject", None, Some("adapter: litep2p listens on no UDP port".into()));
    };
    let capture = std::sync::Arc::new(Capture(std::sync::Mutex::new(None)));
    let mut crypto = rustls::ClientConfig::builder()
        .with_safe_default_cipher_suites()
        .with_safe_default_kx_groups()
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3 is supported")
        .with_custom_certificate_verifier(capture.clone())
        .with_no_client_auth();
    crypto.alpn_protocols = vec![b"libp2p".to_vec()];
    let endpoint = match quinn::Endpoint::client("127.0.0.1:0".parse().expect("an address")) {
        Ok(e) => e,
        Err(e) => return reply(id, "reject", None, Some(format!("adapter: quinn endpoint: {e}"))),
    };
    let server = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let attempt = async {
        match endpoint.connect_with(quinn::ClientConfig::new(std::sync::Arc::new(crypto)), server, "l") {
            Ok(connecting) => { let _ = connecting.await; }
            Err(e) => return Some(format!("adapter: quinn connect: {e}")),
        }
        None
    };
    // litep2p's side must run while the client handshakes.
    let failed = tokio::select! {
        failed = attempt => failed,
        _ = async { loop { litep2p.next_event().await; } } => None,
        _ = tokio::time::sleep(Duration::from_secs(10)) => Some("adapter: no certificate within 10 s".into()),
    };
    endpoint.close(0u32.into(), b"done");
    let captured = capture.0.lock().expect("not poisoned").take();
    match captured {
        Some(der) => {
            use base64::Engine;
            let cert = base64::engine::general_purpose::STANDARD.encode(der);
            Reply { certificates: Some(vec![cert]), ..reply(id, "accept", Some(peer.to_base58()), None) }
        }
        None => reply(id, "reject", None, Some(failed.unwrap_or_else(|| "adapter: litep2p presented no certificate".into()))),
    }
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
                "generate" => generate(&req).await,
                "certificate" | "certificate_verify" => reply(&req.id, "skip", None, Some(NO_API.into())),
                other => reply(&req.id, "skip", None, Some(format!("adapter: unknown request kind {other}"))),
            },
            Err(e) => reply("", "skip", None, Some(format!("adapter: unreadable request: {e}"))),
        };
        write(serde_json::to_string(&answer).expect("a reply serialises"));
    }
}
