//go:build !go_libp2p_noquic && !go_libp2p_quicreuse_legacy

package main

import (
	"github.com/libp2p/go-libp2p/p2p/transport/quicreuse"
	"github.com/quic-go/quic-go"
)

// newConnManager is the quicreuse connection manager a QUIC transport runs over.
func newConnManager() (*quicreuse.ConnManager, error) {
	return quicreuse.NewConnManager(quic.StatelessResetKey{}, quic.TokenGeneratorKey{})
}
