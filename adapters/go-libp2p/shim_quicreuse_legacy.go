//go:build !go_libp2p_noquic && go_libp2p_quicreuse_legacy

// go-libp2p v0.30.x and v0.31.x: quicreuse.NewConnManager takes no token generator key
// (added in v0.32.0).
package main

import (
	"github.com/libp2p/go-libp2p/p2p/transport/quicreuse"
	"github.com/quic-go/quic-go"
)

func newConnManager() (*quicreuse.ConnManager, error) {
	return quicreuse.NewConnManager(quic.StatelessResetKey{})
}
