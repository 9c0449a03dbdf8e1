// Command fixture-peer (built by adapters/build fixture-peer; crypto/tls and quic-go) is the harness's side of a real libp2p secure-channel handshake.
//
// It reads one JSON request per line on stdin and answers with JSON events on stdout, one per
// line: "listening" (role server: the address it accepts one connection on), then "done" (the
// handshake's end as this side saw it). Over TCP it speaks multistream-select
// (/multistream/1.0.0, then /tls/1.0.0; read byte by byte, since a lazy dialer sends its
// ClientHello right behind its proposal), then TLS 1.3 with ALPN "libp2p", presenting the
// fixture's chain as raw bytes, never parsed, and signing its CertificateVerify with the
// fixture's key, or with one fault (see signer.go). Over QUIC v1 (quic-go, which hands
// crypto/tls the same config) the same, with ALPN "libp2p" (quic.go). A request's "protocol"
// breaks one rule of the handshake on purpose instead (TLS 1.2, ALPN lists, no
// CertificateRequest: rules.go). It never judges the other side: it accepts any certificate,
// so the verdict is the implementation's.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

type request struct {
	ID           string   `json:"id"`
	Transport    string   `json:"transport"` // tcp | quic
	Role         string   `json:"role"`      // server (the implementation dials) | client
	Address      string   `json:"address"`   // role client: where the implementation listens
	Certificates []string `json:"certificates"`
	Key          string   `json:"key"`      // PKCS#8 PEM of the leaf's key
	Scheme       *uint16  `json:"scheme"`   // the CertificateVerify scheme to send; null: any that fits
	Fault        string   `json:"fault"`    // "", one of faults (signer.go), or "no-certificate" (a dialer with none)
	Protocol     string   `json:"protocol"` // "", or a rule of the handshake broken on purpose (rules.go)
	TimeoutMS    int      `json:"timeout_ms"`
}

type event struct {
	ID      string   `json:"id"`
	Event   string   `json:"event"` // listening | done
	Address string   `json:"address,omitempty"`
	Outcome string   `json:"outcome,omitempty"` // done: complete | failed | not_offered | cannot_present
	Error   *string  `json:"error"`
	Offered []uint16 `json:"offered,omitempty"` // the signature_algorithms the other side offered
	Sent    *uint16  `json:"sent,omitempty"`    // the scheme this side's CertificateVerify carried
	// The certificates the implementation presented (base64 DER), for the harness's reference
	// verdict on them; omitted when it presented none or more than peerChainLimit bytes.
	Peer [][]byte `json:"peer_certificates,omitempty"`
	// What the finished handshake agreed (this side's view): the TLS version and the ALPN
	// protocol ("" when none); absent when it did not finish.
	Version *uint16 `json:"version,omitempty"`
	ALPN    *string `json:"alpn,omitempty"`
	// Role client: whether the implementation's server asked for this side's certificate
	// (a CertificateRequest came); absent in role server.
	Requested *bool `json:"certificate_requested,omitempty"`
	// Wall and CPU time of this side's TLS handshake (multistream excluded).
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`
}

// control is a line the harness sends while a request runs: the address to dial (role
// client), or stop (the implementation has answered: end what is still waiting).
type control struct {
	ID      string `json:"id"`
	Address string `json:"address"`
	Stop    bool   `json:"stop"`
	// Verdict: with stop, what the implementation answered. After an accept no alert can
	// follow, so a stop ends the wait at once.
	Verdict string `json:"verdict"`
}

// lines carries stdin, read by one goroutine, so that a running request can see a stop.
var lines = make(chan []byte, 16)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	go func() {
		for in.Scan() {
			lines <- append([]byte(nil), in.Bytes()...)
		}
		if err := in.Err(); err != nil {
			fmt.Fprintln(os.Stderr, "fixture-peer:", err)
		}
		close(lines)
	}()
	out := json.NewEncoder(os.Stdout)
	emit := func(e event) {
		if err := out.Encode(e); err != nil {
			os.Exit(1)
		}
	}
	for line := range lines {
		if len(line) == 0 {
			continue
		}
		var ctl control
		if json.Unmarshal(line, &ctl) == nil && (ctl.Stop || ctl.Address != "") {
			continue // a control line for a request already done
		}
		var req request
		if err := json.Unmarshal(line, &req); err != nil {
			msg := "fixture-peer: unreadable request: " + err.Error()
			emit(event{Event: "done", Outcome: "cannot_present", Error: &msg})
			continue
		}
		emit(handshake(req, emit))
	}
}
