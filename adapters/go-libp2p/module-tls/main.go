// Command adapter (module-tls) is the fixturegen harness adapter for go-libp2p releases before
// v0.20.0, whose TLS security transport was the separate module github.com/libp2p/go-libp2p-tls
// and whose keys and PeerIds were github.com/libp2p/go-libp2p-core's. versions.py builds it
// with go.mod requiring that go-libp2p release alone, so the go-libp2p-tls and go-libp2p-core
// it links are the ones the release required. API mode only (certificate and generate): the
// handshakes of those releases are not built (build-info.json says so).
//
// As in the pinned adapter (../main.go), a certificate request runs the VerifyPeerCertificate
// callback of the tls.Config that (*libp2ptls.Identity).ConfigForPeer builds for a real
// handshake, and a generate request returns the certificate NewIdentity made.
package main

import (
	"bufio"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"syscall"

	ic "github.com/libp2p/go-libp2p-core/crypto"
	"github.com/libp2p/go-libp2p-core/peer"
	libp2ptls "github.com/libp2p/go-libp2p-tls"
)

type request struct {
	ID           string   `json:"id"`
	Kind         string   `json:"kind"`
	Certificates []string `json:"certificates"`
	ExpectPeerID *string  `json:"expect_peer_id"`
	HostKeyType  string   `json:"host_key_type"`
}

type reply struct {
	ID             string   `json:"id"`
	Verdict        string   `json:"verdict"`
	PeerID         *string  `json:"peer_id"`
	Error          *string  `json:"error"`
	Certificates   []string `json:"certificates,omitempty"`
	CertificateKey *string  `json:"certificate_key,omitempty"`
	CPUSeconds     *float64 `json:"cpu_seconds,omitempty"`
}

func text(s string) *string { return &s }

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// expected is the PeerId the caller dialled ("" when it names none). peer.Decode is in every
// go-libp2p-core from v0.5.0 (go-libp2p v0.8.0 requires v0.5.1).
func expected(req request) (peer.ID, error) {
	if req.ExpectPeerID == nil {
		return "", nil
	}
	id, err := peer.Decode(*req.ExpectPeerID)
	if err != nil {
		return "", fmt.Errorf("adapter: expected PeerId unparsable: %w", err)
	}
	return id, nil
}

func check(identity *libp2ptls.Identity, req request) reply {
	raw := make([][]byte, len(req.Certificates))
	for i, c := range req.Certificates {
		der, err := base64.StdEncoding.DecodeString(c)
		if err != nil {
			return reply{ID: req.ID, Verdict: "reject", Error: text("adapter: bad base64: " + err.Error())}
		}
		raw[i] = der
	}
	remote, err := expected(req)
	if err != nil {
		return reply{ID: req.ID, Verdict: "reject", Error: text(err.Error())}
	}
	conf, keyCh := identity.ConfigForPeer(remote)
	if err := conf.VerifyPeerCertificate(raw, nil); err != nil {
		return reply{ID: req.ID, Verdict: "reject", Error: text(err.Error())}
	}
	pub, ok := <-keyCh
	if !ok || pub == nil {
		return reply{ID: req.ID, Verdict: "reject", Error: text("adapter: no key on the channel")}
	}
	id, err := peer.IDFromPublicKey(pub)
	if err != nil {
		return reply{ID: req.ID, Verdict: "reject", Error: text("peer.IDFromPublicKey: " + err.Error())}
	}
	return reply{ID: req.ID, Verdict: "accept", PeerID: text(id.Pretty())}
}

func generate(req request) reply {
	types := map[string]int{"ed25519": ic.Ed25519, "secp256k1": ic.Secp256k1, "ecdsa": ic.ECDSA, "rsa": ic.RSA}
	typ, ok := types[req.HostKeyType]
	if !ok {
		return reply{ID: req.ID, Verdict: "skip", Error: text("adapter: unknown host key type " + req.HostKeyType)}
	}
	priv, _, err := ic.GenerateKeyPair(typ, 2048)
	if err != nil {
		return reply{ID: req.ID, Verdict: "reject", Error: text("crypto.GenerateKeyPair: " + err.Error())}
	}
	identity, err := libp2ptls.NewIdentity(priv)
	if err != nil {
		return reply{ID: req.ID, Verdict: "reject", Error: text("libp2ptls.NewIdentity: " + err.Error())}
	}
	conf, _ := identity.ConfigForPeer("")
	if len(conf.Certificates) != 1 {
		return reply{ID: req.ID, Verdict: "reject", Error: text("adapter: the config holds no certificate")}
	}
	cert := conf.Certificates[0]
	chain := make([]string, len(cert.Certificate))
	for i, der := range cert.Certificate {
		chain[i] = base64.StdEncoding.EncodeToString(der)
	}
	var key *string
	if pkcs8, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey); err == nil {
		key = text(string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})))
	}
	id, err := peer.IDFromPrivateKey(priv)
	if err != nil {
		return reply{ID: req.ID, Verdict: "reject", Error: text("peer.IDFromPrivateKey: " + err.Error())}
	}
	return reply{ID: req.ID, Verdict: "accept", PeerID: text(id.Pretty()), Certificates: chain, CertificateKey: key}
}

func main() {
	priv, _, err := ic.GenerateEd25519Key(nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "adapter: cannot make a local key:", err)
		os.Exit(3)
	}
	identity, err := libp2ptls.NewIdentity(priv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "adapter: cannot make an identity:", err)
		os.Exit(3)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for in.Scan() {
		line := in.Bytes()
		if len(line) == 0 {
			continue
		}
		started := cpuSeconds()
		var req request
		var rep reply
		if err := json.Unmarshal(line, &req); err != nil {
			rep = reply{Verdict: "skip", Error: text("adapter: unreadable request: " + err.Error())}
		} else if req.Kind == "generate" {
			rep = generate(req)
		} else if req.Kind == "handshake" {
			rep = reply{ID: req.ID, Verdict: "skip", Error: text("adapter: this build of go-libp2p (before v0.20.0, go-libp2p-tls) runs API mode only")}
		} else if req.Kind != "" && req.Kind != "certificate" {
			rep = reply{ID: req.ID, Verdict: "skip", Error: text("go-libp2p has no public API that checks a CertificateVerify (crypto/tls does it inside the handshake)")}
		} else {
			rep = check(identity, req)
			cpu := cpuSeconds() - started
			rep.CPUSeconds = &cpu
		}
		if err := enc.Encode(rep); err != nil {
			os.Exit(1)
		}
		if err := out.Flush(); err != nil {
			os.Exit(1)
		}
	}
}
