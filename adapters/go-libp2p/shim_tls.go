//go:build !go_libp2p_tls_legacy

// Per-version shims: without build tags (the pinned build) each shim_*.go is the plain call;
// versions.py picks the tags that swap in a shim_*_legacy.go for an older go-libp2p.
package main

import (
	ic "github.com/libp2p/go-libp2p/core/crypto"
	libp2ptls "github.com/libp2p/go-libp2p/p2p/security/tls"
)

// newTLS is the security transport the upgrader makes (no stream muxer is negotiated).
func newTLS(priv ic.PrivKey) (*libp2ptls.Transport, error) {
	return libp2ptls.New(libp2ptls.ID, priv, nil)
}
