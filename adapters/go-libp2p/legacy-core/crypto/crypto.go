// Package crypto aliases go-libp2p-core/crypto for go-libp2p v0.20.x and v0.21.x.
package crypto

import c "github.com/libp2p/go-libp2p-core/crypto"

type (
	PrivKey = c.PrivKey
	PubKey  = c.PubKey
)

const (
	RSA       = c.RSA
	Ed25519   = c.Ed25519
	Secp256k1 = c.Secp256k1
	ECDSA     = c.ECDSA
)

var (
	GenerateKeyPair    = c.GenerateKeyPair
	GenerateEd25519Key = c.GenerateEd25519Key
)
