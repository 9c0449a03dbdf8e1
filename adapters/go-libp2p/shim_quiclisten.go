//go:build !go_libp2p_quic_nolisten

package main

// quicListenBroken says why this build cannot listen over QUIC ("": it can).
const quicListenBroken = ""
