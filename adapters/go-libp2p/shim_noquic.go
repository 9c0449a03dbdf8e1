//go:build go_libp2p_noquic

// A build without QUIC (go-libp2p before v0.30.0: its quic-go refuses to build with this Go);
// build-info.json says why.
package main

import ic "github.com/libp2p/go-libp2p/core/crypto"

func handshakeQUIC(_ ic.PrivKey, req request, _ func(any) error) reply {
	return reply{ID: req.ID, Verdict: "skip", Error: text("adapter: this build of go-libp2p has no QUIC transport (see its build-info.json)")}
}
