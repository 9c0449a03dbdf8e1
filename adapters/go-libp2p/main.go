// Command adapter is the fixturegen harness adapter for go-libp2p's p2p/security/tls.
//
// It reads one JSON request per line on stdin and writes one JSON result per line on stdout
// (the protocol is in fixturegen's README). Each certificate request runs the
// VerifyPeerCertificate callback of the tls.Config that (*libp2ptls.Identity).ConfigForPeer
// builds for a real handshake: the library's own closure parses the raw chain, extracts the
// host key with PubKeyFromCertChain and matches the expected PeerId. Nothing is re-implemented.
// A generate request returns the certificate NewIdentity made for a fresh host key. A handshake
// request runs the real secure-channel upgrade over TCP (handshake.go).
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

	ic "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2ptls "github.com/libp2p/go-libp2p/p2p/security/tls"
)

type request struct {
	ID           string   `json:"id"`
	Kind         string   `json:"kind"`
	Certificates []string `json:"certificates"`
	ExpectPeerID *string  `json:"expect_peer_id"`
	HostKeyType  string   `json:"host_key_type"`
	// handshake only
	Transport string `json:"transport"`
	Direction string `json:"direction"`
	Address   string `json:"address"`
	TimeoutMS int    `json:"timeout_ms"`
}

type reply struct {
	ID      string  `json:"id"`
	Verdict string  `json:"verdict"`
	PeerID  *string `json:"peer_id"`
	Error   *string `json:"error"`
	// generate only
	Certificates   []string `json:"certificates,omitempty"`
	CertificateKey *string  `json:"certificate_key,omitempty"`
	// handshake only: the CPU time (user+system) of this process while it ran the request
	CPUSeconds *float64 `json:"cpu_seconds,omitempty"`
}

func text(s string) *string { return &s }

// cpuSeconds is the CPU time (user+system) this process has used so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// expected is the PeerId the caller dialled ("" when it names none: any is accepted).
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
	return reply{ID: req.ID, Verdict: "accept", PeerID: text(id.String())}
}

// generate makes the certificate go-libp2p's TLS transport presents: NewIdentity for a fresh
// host key, and the tls.Certificate of the config ConfigForPeer hands to crypto/tls.
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
	return reply{ID: req.ID, Verdict: "accept", PeerID: text(id.String()), Certificates: chain, CertificateKey: key}
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
	go func() { // one reader, so that a listening handshake can see a cancel line
		for in.Scan() {
			lines <- append([]byte(nil), in.Bytes()...)
		}
		close(lines)
	}()
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for line := range lines {
		if len(line) == 0 || isCancel(line, "") {
			continue // a cancel that came after its answer
		}
		started := cpuSeconds()
		var req request
		var rep reply
		if err := json.Unmarshal(line, &req); err != nil {
			rep = reply{Verdict: "skip", Error: text("adapter: unreadable request: " + err.Error())}
		} else if req.Kind == "generate" {
			rep = generate(req)
		} else if req.Kind == "handshake" {
			rep = handshake(priv, req, announcer(out, out.Flush))
			cpu := cpuSeconds() - started
			rep.CPUSeconds = &cpu
		} else if req.Kind != "" && req.Kind != "certificate" {
			rep = reply{ID: req.ID, Verdict: "skip", Error: text("go-libp2p has no public API that checks a CertificateVerify (crypto/tls does it inside the handshake)")}
		} else {
			rep = check(identity, req)
			cpu := cpuSeconds() - started // the check's own CPU time, in this process
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
