// Package peer aliases go-libp2p-core/peer for go-libp2p v0.20.x and v0.21.x.
package peer

import p "github.com/libp2p/go-libp2p-core/peer"

type ID = p.ID

var (
	Decode           = p.Decode
	IDFromPublicKey  = p.IDFromPublicKey
	IDFromPrivateKey = p.IDFromPrivateKey
)
