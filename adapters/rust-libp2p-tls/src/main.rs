//! fixturegen harness adapter for rust-libp2p's `libp2p-tls` crate.
//!
//! Reads one JSON request per line on stdin and writes one JSON result per line on stdout
//! (the protocol is in fixturegen's README and `fixturegen/schemas/harness-*.schema.json`).
//!
//! Certificates go through the crate's public API, in the order its rustls verifier
//! (`verify_presented_certs`, crate-private) applies it in a handshake: exactly one certificate,
//! `libp2p_tls::certificate::parse`, `P2pCertificate::peer_id`, and, when the caller names a
//! PeerId, the comparison `verify_server_cert` makes. CertificateVerify vectors go through
//! `parse` and `P2pCertificate::verify_signature`, which is what the crate's
//! `verify_tls13_signature` does. A generate request returns what
//! `libp2p_tls::certificate::generate` makes for a fresh host key. A handshake request runs the
//! crate's real upgrade over TCP (`handshake.rs`).

mod compat;
mod handshake;
mod quic;

use std::io::{self, BufRead, Write};

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use compat::{Keypair, PeerId};
use rustls::SignatureScheme;
use serde::{Deserialize, Serialize};

#[derive(Deserialize)]
struct Request {
    id: String,
    #[serde(default = "default_kind")]
    kind: String,
    #[serde(default)]
    certificates: Vec<String>,
    #[serde(default)]
    expect_peer_id: Option<String>,
    #[serde(default)]
    signature_scheme: Option<u16>,
    #[serde(default)]
    signed_content: Option<String>,
    #[serde(default)]
    signature: Option<String>,
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
    /// A control line of the harness (`{"id": ..., "cancel": ...}`), not a request: this
    /// library reports a refused inbound handshake itself, so it needs none and skips them.
    #[serde(default)]
    cancel: Option<String>,
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
    certificate_key: Option<String>,
    /// handshake only: the CPU time (user + system) of this process while it ran the request
    #[serde(skip_serializing_if = "Option::is_none")]
    cpu_seconds: Option<f64>,
}

fn accept(id: String, peer_id: Option<String>) -> Reply {
    Reply {
        id,
        verdict: "accept",
        peer_id,
        error: None,
        certificates: None,
        certificate_key: None,
        cpu_seconds: None,
    }
}

fn reject(id: String, error: String) -> Reply {
    Reply {
        id,
        verdict: "reject",
        peer_id: None,
        error: Some(error),
        certificates: None,
        certificate_key: None,
        cpu_seconds: None,
    }
}

impl Reply {
    fn with_cpu(self, seconds: f64) -> Reply {
        Reply { cpu_seconds: Some(seconds), ..self }
    }
}

fn skip(id: String, error: String) -> Reply {
    Reply { verdict: "skip", ..reject(id, error) }
}

fn pem(label: &str, der: &[u8]) -> String {
    let body = B64.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for chunk in body.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(chunk).expect("base64 is ASCII"));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// `libp2p_tls::certificate::generate`, what the transport calls when it starts, for a fresh
/// host key of the requested type.
fn generate(req: Request) -> Reply {
    let keypair = match req.host_key_type.as_deref() {
        Some("ed25519") => Keypair::generate_ed25519(),
        Some("secp256k1") => Keypair::generate_secp256k1(),
        Some("ecdsa") => Keypair::generate_ecdsa(),
        Some("rsa") => {
            return skip(req.id, "libp2p-identity cannot generate RSA keys (only load them)".into())
        }
        other => return skip(req.id, format!("adapter: unknown host key type {other:?}")),
    };
    let (cert, key) = match compat::generate(&keypair) {
        Ok(made) => made,
        Err(e) => return reject(req.id, format!("{e} ({e:?})")),
    };
    let key = key.map(|k| pem("PRIVATE KEY", &k));
    Reply {
        certificates: Some(vec![B64.encode(&cert)]),
        certificate_key: key,
        ..accept(req.id, Some(keypair.public().to_peer_id().to_base58()))
    }
}

fn decode_chain(req: &Request) -> Result<Vec<Vec<u8>>, String> {
    req.certificates
        .iter()
        .map(|c| B64.decode(c).map_err(|e| format!("adapter: bad base64: {e}")))
        .collect()
}

fn check_certificate(req: Request) -> Reply {
    let chain = match decode_chain(&req) {
        Ok(chain) => chain,
        Err(e) => return reject(req.id, e),
    };
    // verify_presented_certs: "libp2p-tls requires exactly one certificate".
    if chain.len() != 1 {
        return reject(req.id, "libp2p-tls requires exactly one certificate".to_string());
    }
    let peer_id = match compat::parse(&chain[0], |parsed| parsed.map(|cert| cert.peer_id())) {
        Ok(peer_id) => peer_id,
        Err(e) => return reject(req.id, format!("{e} ({e:?})")),
    };
    if let Some(expected) = &req.expect_peer_id {
        match expected.parse::<PeerId>() {
            Ok(want) if want == peer_id => {}
            Ok(_) => {
                return reject(
                    req.id,
                    "invalid peer certificate: ApplicationVerificationFailure (PeerId mismatch)"
                        .to_string(),
                )
            }
            Err(e) => return reject(req.id, format!("adapter: expected PeerId unparsable: {e}")),
        }
    }
    accept(req.id, Some(peer_id.to_base58()))
}

fn check_certificate_verify(req: Request) -> Reply {
    let chain = match decode_chain(&req) {
        Ok(chain) => chain,
        Err(e) => return reject(req.id, e),
    };
    let (Some(scheme), Some(content), Some(signature)) =
        (req.signature_scheme, req.signed_content.as_ref(), req.signature.as_ref())
    else {
        return reject(req.id, "adapter: certificate_verify request is incomplete".to_string());
    };
    let (content, signature) = match (B64.decode(content), B64.decode(signature)) {
        (Ok(c), Ok(s)) => (c, s),
        _ => return reject(req.id, "adapter: bad base64".to_string()),
    };
    let Some(first) = chain.first() else {
        return reject(req.id, "adapter: no certificate".to_string());
    };
    compat::parse(first, |parsed| {
        let cert = match parsed {
            Ok(cert) => cert,
            Err(e) => return reject(req.id, format!("{e} ({e:?})")),
        };
        match cert.verify_signature(SignatureScheme::from(scheme), &content, &signature) {
            Ok(()) => accept(req.id, Some(cert.peer_id().to_base58())),
            Err(e) => reject(req.id, format!("{e} ({e:?})")),
        }
    })
}

fn main() {
    let stdin = io::stdin();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let local = Keypair::generate_ed25519(); // this side's host key in handshakes
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let started = compat::cpu_seconds();
        let reply = match serde_json::from_str::<Request>(&line) {
            Ok(req) if req.cancel.is_some() => continue,
            Ok(req) => match req.kind.as_str() {
                "certificate" => {
                    let id = req.id.clone();
                    compat::guarded(|| check_certificate(req), |e| reject(id, e))
                        .with_cpu(compat::cpu_seconds() - started)
                }
                "certificate_verify" => {
                    let id = req.id.clone();
                    compat::guarded(|| check_certificate_verify(req), |e| reject(id, e))
                        .with_cpu(compat::cpu_seconds() - started)
                }
                "generate" => generate(req),
                "handshake" => handshake::handshake(&local, req, &mut |line: String| {
                    writeln!(out, "{line}")?;
                    out.flush()
                })
                .with_cpu(compat::cpu_seconds() - started),
                _ => {
                    let text = format!("adapter: unknown request kind {}", req.kind);
                    skip(req.id, text)
                }
            },
            Err(e) => skip(String::new(), format!("adapter: unreadable request: {e}")),
        };
        let text = serde_json::to_string(&reply).expect("a reply serialises");
        if writeln!(out, "{text}").and_then(|_| out.flush()).is_err() {
            break;
        }
    }
}
