package main

import (
	"crypto/tls"
	"fmt"
)

// A protocol fault: a rule of the handshake (not of the certificate) the fixture peer breaks on
// purpose, through crypto/tls's and quic-go's own configuration. Each is produced by changing the
// tls.Config the handshake runs with; none touches the certificate or the CertificateVerify.
type protocolFault struct {
	describe string
	// roles and transports where the fault can be produced; a request elsewhere is
	// cannot_present (the harness never sends one: its catalogue says the same).
	roles, transports []string
	apply             func(conf *tls.Config)
}

var (
	both     = []string{"server", "client"}
	tcpOnly  = []string{"tcp"}
	anyWire  = []string{"tcp", "quic"}
	muxers   = []string{"/yamux/1.0.0", "/mplex/6.7.0"}
	asClient = []string{"client"}
)

var protocolFaults = map[string]protocolFault{
	"": {"every rule kept", both, anyWire, func(*tls.Config) {}},
	// QUIC carries TLS 1.3 only (RFC 9001 section 4.2): quic-go refuses anything else.
	"tls12-only": {"TLS 1.2 is the only version offered or accepted", both, tcpOnly,
		func(c *tls.Config) { c.MinVersion, c.MaxVersion = tls.VersionTLS12, tls.VersionTLS12 }},
	"tls12-and-tls13": {"TLS 1.2 offered or accepted beside TLS 1.3", both, tcpOnly,
		func(c *tls.Config) { c.MinVersion, c.MaxVersion = tls.VersionTLS12, tls.VersionTLS13 }},
	// Server: it selects no protocol, whatever the client offered. Client: no ALPN extension.
	"alpn-absent": {"no ALPN: the client offers none, the server selects none", both, anyWire,
		func(c *tls.Config) { c.NextProtos = nil }},
	"alpn-without-libp2p": {"the client offers one protocol, not libp2p (h2)", asClient, anyWire,
		func(c *tls.Config) { c.NextProtos = []string{"h2"} }},
	"alpn-muxers-only": {"the client offers muxer ids only, no libp2p", asClient, anyWire,
		func(c *tls.Config) { c.NextProtos = append([]string(nil), muxers...) }},
	"alpn-muxers-then-libp2p": {"the client offers muxer ids, then libp2p last (inlined muxer negotiation)",
		asClient, anyWire, func(c *tls.Config) { c.NextProtos = append(append([]string(nil), muxers...), "libp2p") }},
	"alpn-libp2p-first": {"the client offers libp2p first, a muxer id after it", asClient, anyWire,
		func(c *tls.Config) { c.NextProtos = []string{"libp2p", muxers[0]} }},
	// A listener that holds the dialler to the ALPN rule: its ClientHello must offer ALPN,
	// "libp2p" last (muxer ids before it); otherwise crypto/tls ends the handshake with an
	// internal_error alert. It keeps every rule itself.
	"strict-listener": {"the server refuses a ClientHello whose ALPN list does not end with libp2p",
		[]string{"server"}, anyWire, func(c *tls.Config) {
			c.GetConfigForClient = func(h *tls.ClientHelloInfo) (*tls.Config, error) {
				if n := len(h.SupportedProtos); n == 0 || h.SupportedProtos[n-1] != "libp2p" {
					return nil, fmt.Errorf("fixture-peer: strict listener: the ClientHello's ALPN list %q does not end with libp2p", h.SupportedProtos)
				}
				return nil, nil
			}
		}},
	"no-certificate-request": {"the server does not request the client's certificate", []string{"server"},
		anyWire, func(c *tls.Config) { c.ClientAuth = tls.NoClientCert }},
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// applyProtocolFault breaks the named rule in conf, or says why it cannot here.
func applyProtocolFault(conf *tls.Config, name, role, transport string) error {
	f, ok := protocolFaults[name]
	if !ok {
		return fmt.Errorf("fixture-peer: unknown protocol fault %q", name)
	}
	if !has(f.roles, role) || !has(f.transports, transport) {
		return fmt.Errorf("fixture-peer: protocol fault %q (%s) cannot be produced as %s over %s", name, f.describe, role, transport)
	}
	f.apply(conf)
	return nil
}

// negotiated is what a finished handshake agreed, for the done event.
func negotiated(done *event, st tls.ConnectionState) {
	if st.Version == 0 {
		return
	}
	v := st.Version
	done.Version = &v
	p := st.NegotiatedProtocol
	done.ALPN = &p
}
