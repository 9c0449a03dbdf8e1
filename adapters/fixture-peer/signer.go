package main

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
)

// The faults a CertificateVerify can carry, named as the corpus's transcript vectors name them.
var faults = map[string]string{
	"":                        "an honest signature",
	"signature-corrupted":     "one bit of the last signature byte flipped",
	"wrong-context":           "signed with the other side's context string",
	"transcript-hash-changed": "signed over another transcript hash (all 0xff)",
	"other-key":               "signed by a fresh key of the same type, not the certificate's",
	"wrong-length":            "the signature cut by one byte",
	"scheme-mismatch":         "announces a scheme that does not fit the key, signs with the key's own",
}

var (
	serverContext = []byte("TLS 1.3, server CertificateVerify")
	clientContext = []byte("TLS 1.3, client CertificateVerify")
)

// The schemes crypto/tls can sign a TLS 1.3 CertificateVerify with (no PKCS#1 v1.5, no Ed448).
var sendable = map[uint16]string{
	0x0403: "ecdsa_secp256r1_sha256", 0x0503: "ecdsa_secp384r1_sha384",
	0x0603: "ecdsa_secp521r1_sha512", 0x0804: "rsa_pss_rsae_sha256",
	0x0805: "rsa_pss_rsae_sha384", 0x0806: "rsa_pss_rsae_sha512", 0x0807: "ed25519",
}

func parseKey(text string) (crypto.Signer, error) {
	block, _ := pem.Decode([]byte(text))
	if block == nil {
		return nil, errors.New("the certificate key is not PEM")
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("crypto/tls cannot sign with this key (x509.ParsePKCS8PrivateKey: %v)", err)
	}
	switch k := key.(type) {
	case *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey:
		return k.(crypto.Signer), nil
	}
	return nil, fmt.Errorf("crypto/tls cannot sign a CertificateVerify with a %T", key)
}

// freshLike makes a throwaway key of the same type and size as key.
func freshLike(pub crypto.PublicKey) (crypto.Signer, error) {
	switch p := pub.(type) {
	case *rsa.PublicKey:
		return rsa.GenerateKey(rand.Reader, p.N.BitLen())
	case *ecdsa.PublicKey:
		return ecdsa.GenerateKey(p.Curve, rand.Reader)
	case ed25519.PublicKey:
		_, k, err := ed25519.GenerateKey(rand.Reader)
		return k, err
	}
	return nil, fmt.Errorf("no fresh key of type %T", pub)
}

// publicFor makes a public key that crypto/tls would sign the given scheme with.
func publicFor(scheme uint16) (crypto.PublicKey, error) {
	var key crypto.Signer
	var err error
	switch scheme {
	case 0x0403:
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case 0x0503:
		key, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case 0x0603:
		key, err = ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	case 0x0804, 0x0805, 0x0806:
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	case 0x0807:
		_, key, err = ed25519.GenerateKey(rand.Reader)
	default:
		return nil, fmt.Errorf("crypto/tls cannot announce scheme 0x%04x", scheme)
	}
	if err != nil {
		return nil, err
	}
	return key.Public(), nil
}

// ownOptions are the signing options of the key's natural scheme: the one the corpus's
// scheme-mismatch vectors sign with.
func ownOptions(pub crypto.PublicKey) crypto.SignerOpts {
	switch p := pub.(type) {
	case *rsa.PublicKey:
		return &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: crypto.SHA256}
	case *ecdsa.PublicKey:
		switch p.Curve {
		case elliptic.P384():
			return crypto.SHA384
		case elliptic.P521():
			return crypto.SHA512
		}
		return crypto.SHA256
	}
	return crypto.Hash(0)
}

// schemeOf is the code point crypto/tls announces when it signs with opts for a key like pub.
func schemeOf(pub crypto.PublicKey, opts crypto.SignerOpts) uint16 {
	switch p := pub.(type) {
	case *rsa.PublicKey:
		return map[crypto.Hash]uint16{crypto.SHA256: 0x0804, crypto.SHA384: 0x0805, crypto.SHA512: 0x0806}[opts.HashFunc()]
	case *ecdsa.PublicKey:
		return map[string]uint16{"P-256": 0x0403, "P-384": 0x0503, "P-521": 0x0603}[p.Curve.Params().Name]
	}
	return 0x0807
}

// signer is the tls.Certificate's private key. crypto/tls hands a crypto.MessageSigner the
// whole signed content (64 spaces, context string, 0x00, transcript hash) unhashed, so the
// fault can change what is signed, the key, or the signature itself.
type signer struct {
	key    crypto.Signer
	public crypto.PublicKey // what crypto/tls picks the announced scheme from
	fault  string
	other  crypto.Signer
	sent   *uint16
}

func newSigner(key crypto.Signer, fault string, scheme *uint16) (*signer, error) {
	if _, ok := faults[fault]; !ok {
		return nil, fmt.Errorf("unknown fault %q", fault)
	}
	s := &signer{key: key, public: key.Public(), fault: fault}
	if scheme != nil {
		if _, ok := sendable[*scheme]; !ok {
			return nil, fmt.Errorf("crypto/tls cannot send a TLS 1.3 CertificateVerify of scheme 0x%04x (no PKCS#1 v1.5, no Ed448)", *scheme)
		}
	}
	var err error
	switch fault {
	case "other-key":
		s.other, err = freshLike(key.Public())
	case "scheme-mismatch":
		if scheme == nil {
			return nil, errors.New("scheme-mismatch needs the scheme to announce")
		}
		s.public, err = publicFor(*scheme)
	}
	return s, err
}

func (s *signer) Public() crypto.PublicKey { return s.public }

func (s *signer) Sign(rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	return nil, errors.New("fixture-peer: Sign called; only SignMessage is supported")
}

func (s *signer) SignMessage(random io.Reader, msg []byte, opts crypto.SignerOpts) ([]byte, error) {
	sent := schemeOf(s.public, opts)
	s.sent = &sent
	msg = bytes.Clone(msg)
	key := s.key
	switch s.fault {
	case "wrong-context":
		if i := bytes.Index(msg, serverContext); i >= 0 {
			copy(msg[i:], clientContext)
		} else if i := bytes.Index(msg, clientContext); i >= 0 {
			copy(msg[i:], serverContext)
		}
	case "transcript-hash-changed":
		for i := 64 + len(serverContext) + 1; i < len(msg); i++ {
			msg[i] = 0xff
		}
	case "other-key":
		key = s.other
	case "scheme-mismatch":
		opts = ownOptions(s.key.Public())
	}
	sig, err := crypto.SignMessage(key, random, msg, opts)
	if err != nil {
		return nil, err
	}
	switch s.fault {
	case "signature-corrupted":
		sig[len(sig)-1] ^= 0x01
	case "wrong-length":
		sig = sig[:len(sig)-1]
	}
	return sig, nil
}

// offers reports whether the other side's signature_algorithms hold a scheme this side sends.
func (s *signer) offers(cert *tls.Certificate, offered []tls.SignatureScheme) bool {
	for _, o := range offered {
		if cert.SupportedSignatureAlgorithms != nil {
			if o == cert.SupportedSignatureAlgorithms[0] {
				return true
			}
			continue
		}
		if name, ok := sendable[uint16(o)]; ok && fits(s.public, uint16(o), name) {
			return true
		}
	}
	return false
}

func fits(pub crypto.PublicKey, scheme uint16, name string) bool {
	switch p := pub.(type) {
	case *rsa.PublicKey:
		return name[:3] == "rsa"
	case *ecdsa.PublicKey:
		return scheme == schemeOf(p, nil)
	case ed25519.PublicKey:
		return scheme == 0x0807
	}
	return false
}
