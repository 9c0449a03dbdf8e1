//! The calls whose shape changed across libp2p-tls releases, in one place. A build of another
//! version (`versions.py`, its table) enables the cargo features that version needs; the pinned
//! build enables none, so each item below is the plain libp2p-tls 0.7.0 call.
//!
//! * `identity-in-core`: libp2p-tls 0.1.0-alpha/.2 take `libp2p_core::identity::Keypair` and
//!   return `libp2p_core::PeerId` (no libp2p-identity crate yet).
//! * `rustls-legacy`: up to 0.3.0, rustls 0.20/0.21: `parse(&rustls::Certificate)` and
//!   `generate` returning `(rustls::Certificate, rustls::PrivateKey)`.
//! * `upgrade-legacy`: up to 0.2.1 the Config implements `InboundUpgrade`/`OutboundUpgrade`.
//! * `listen-legacy` (libp2p-core 0.39) and `dial-legacy` (up to 0.41): see quic.rs.
//! * `catch-panics`: before 0.7.0, `parse` can panic on a hostile certificate
//!   (GHSA-5hq8-qhww-jm7q); the panic becomes a `reject` verdict instead of a crash.

#[cfg(feature = "identity-in-core")]
pub use libp2p_core::{identity::Keypair, PeerId};
#[cfg(not(feature = "identity-in-core"))]
pub use libp2p_identity::{Keypair, PeerId};

#[cfg(feature = "upgrade-legacy")]
pub use libp2p_core::upgrade::{
    InboundUpgrade as InboundConnectionUpgrade, OutboundUpgrade as OutboundConnectionUpgrade,
};
#[cfg(not(feature = "upgrade-legacy"))]
pub use libp2p_core::upgrade::{InboundConnectionUpgrade, OutboundConnectionUpgrade};

use libp2p_tls::certificate::{GenError, P2pCertificate, ParseError};

/// `libp2p_tls::certificate::generate`: the certificate's DER and, when the crate hands over a
/// PKCS#8 key, its DER.
pub fn generate(keypair: &Keypair) -> Result<(Vec<u8>, Option<Vec<u8>>), GenError> {
    let (cert, key) = libp2p_tls::certificate::generate(keypair)?;
    #[cfg(feature = "rustls-legacy")]
    return Ok((cert.0, Some(key.0)));
    #[cfg(not(feature = "rustls-legacy"))]
    {
        let key = match &key {
            rustls::pki_types::PrivateKeyDer::Pkcs8(k) => Some(k.secret_pkcs8_der().to_vec()),
            _ => None,
        };
        Ok((cert.as_ref().to_vec(), key))
    }
}

/// `libp2p_tls::certificate::parse` of `der`, handed to `then` (the certificate borrows it).
pub fn parse<R>(der: &[u8], then: impl for<'a> FnOnce(Result<P2pCertificate<'a>, ParseError>) -> R) -> R {
    #[cfg(feature = "rustls-legacy")]
    let cert = rustls::Certificate(der.to_vec());
    #[cfg(not(feature = "rustls-legacy"))]
    let cert = rustls::pki_types::CertificateDer::from(der);
    then(libp2p_tls::certificate::parse(&cert))
}

/// Runs a certificate check; with `catch-panics`, a panic in the crate is its verdict.
pub fn guarded<T>(check: impl FnOnce() -> T, panicked: impl FnOnce(String) -> T) -> T {
    #[cfg(feature = "catch-panics")]
    {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(check)) {
            Ok(out) => out,
            Err(payload) => {
                let text = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic without a message".to_string());
                panicked(format!("panicked: {text}"))
            }
        }
    }
    #[cfg(not(feature = "catch-panics"))]
    {
        let _ = panicked;
        check()
    }
}

/// The CPU time (user + system) this process has used so far, from getrusage(RUSAGE_SELF).
pub fn cpu_seconds() -> f64 {
    // struct rusage on 64-bit Linux: ru_utime and ru_stime (struct timeval: two longs each),
    // then 14 longs. Declared here rather than through the libc crate, which would change the
    // pinned Cargo.lock.
    extern "C" {
        fn getrusage(who: i32, usage: *mut [i64; 18]) -> i32;
    }
    let mut usage = [0i64; 18];
    // SAFETY: the buffer is as large as struct rusage, which getrusage fills.
    if unsafe { getrusage(0, &mut usage) } != 0 {
        return 0.0;
    }
    (usage[0] + usage[2]) as f64 + (usage[1] + usage[3]) as f64 / 1e6
}
