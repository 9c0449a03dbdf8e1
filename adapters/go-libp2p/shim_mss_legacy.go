//go:build go_libp2p_mss_legacy

// go-libp2p before v0.25.0: go-multistream v0.3, before v0.4.0 made it generic over the
// protocol type, takes and returns plain strings.
package main

import (
	"net"

	libp2ptls "github.com/libp2p/go-libp2p/p2p/security/tls"
	mss "github.com/multiformats/go-multistream"
)

func selectTLS(conn net.Conn) error {
	_, err := mss.SelectOneOf([]string{libp2ptls.ID}, conn)
	return err
}

func negotiateTLS(conn net.Conn) error {
	muxer := mss.NewMultistreamMuxer()
	muxer.AddHandler(libp2ptls.ID, nil)
	_, _, err := muxer.Negotiate(conn)
	return err
}
