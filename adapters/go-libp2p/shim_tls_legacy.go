//go:build go_libp2p_tls_legacy

// go-libp2p v0.20.0 to v0.23.x: libp2ptls.New(key); v0.24.0 added the protocol ID and the
// stream muxers.
package main

import (
	ic "github.com/libp2p/go-libp2p/core/crypto"
	libp2ptls "github.com/libp2p/go-libp2p/p2p/security/tls"
)

func newTLS(priv ic.PrivKey) (*libp2ptls.Transport, error) {
	return libp2ptls.New(priv)
}
