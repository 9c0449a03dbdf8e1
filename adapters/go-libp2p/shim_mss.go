//go:build !go_libp2p_mss_legacy

package main

import (
	"net"

	"github.com/libp2p/go-libp2p/core/protocol"
	libp2ptls "github.com/libp2p/go-libp2p/p2p/security/tls"
	mss "github.com/multiformats/go-multistream"
)

// selectTLS proposes /tls/1.0.0, as the dialing upgrader does.
func selectTLS(conn net.Conn) error {
	_, err := mss.SelectOneOf([]protocol.ID{libp2ptls.ID}, conn)
	return err
}

// negotiateTLS accepts a proposal of /tls/1.0.0, as the listening upgrader does.
func negotiateTLS(conn net.Conn) error {
	muxer := mss.NewMultistreamMuxer[protocol.ID]()
	muxer.AddHandler(libp2ptls.ID, nil)
	_, _, err := muxer.Negotiate(conn)
	return err
}
