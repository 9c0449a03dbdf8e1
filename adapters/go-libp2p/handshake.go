package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"time"

	ic "github.com/libp2p/go-libp2p/core/crypto"
)

// handshake runs go-libp2p's own secure-channel upgrade against the fixture peer, as its
// upgrader does: the dialer picks /tls/1.0.0 with mss.SelectOneOf and calls SecureOutbound with
// the PeerId it dialled; the listener negotiates with a MultistreamMuxer and calls
// SecureInbound. A listen request first announces its address (one line with "listening").
func handshake(priv ic.PrivKey, req request, announce func(any) error) reply {
	if req.Transport == "quic" {
		return handshakeQUIC(priv, req, announce)
	}
	if req.Transport != "tcp" {
		return reply{ID: req.ID, Verdict: "skip", Error: text("adapter: transport " + req.Transport + " is not built into this adapter")}
	}
	transport, err := newTLS(priv)
	if err != nil {
		return reply{ID: req.ID, Verdict: "reject", Error: text("libp2ptls.New: " + err.Error())}
	}
	timeout := time.Duration(req.TimeoutMS) * time.Millisecond
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var conn net.Conn
	if req.Direction == "listen" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return reply{ID: req.ID, Verdict: "reject", Error: text("adapter: listen: " + err.Error())}
		}
		defer ln.Close()
		if err := announce(map[string]string{"id": req.ID, "listening": ln.Addr().String()}); err != nil {
			return reply{ID: req.ID, Verdict: "reject", Error: text("adapter: " + err.Error())}
		}
		_ = ln.(*net.TCPListener).SetDeadline(time.Now().Add(timeout))
		conn, err = ln.Accept()
		if err != nil {
			return reply{ID: req.ID, Verdict: "reject", Error: text("adapter: nobody connected: " + err.Error())}
		}
	} else {
		var d net.Dialer
		conn, err = d.DialContext(ctx, "tcp", req.Address)
		if err != nil {
			return reply{ID: req.ID, Verdict: "reject", Error: text("adapter: dial: " + err.Error())}
		}
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	if req.Direction == "listen" {
		if err := negotiateTLS(conn); err != nil {
			return reply{ID: req.ID, Verdict: "reject", Error: text("multistream Negotiate: " + err.Error())}
		}
		// A listener that knows whom it expects (a request naming a PeerId) passes it as
		// go-libp2p's upgrader does for a known peer; otherwise "" (anyone).
		remote, err := expected(req)
		if err != nil {
			return reply{ID: req.ID, Verdict: "reject", Error: text(err.Error())}
		}
		sconn, err := transport.SecureInbound(ctx, conn, remote)
		if err != nil {
			return reply{ID: req.ID, Verdict: "reject", Error: text(err.Error())}
		}
		defer sconn.Close()
		return reply{ID: req.ID, Verdict: "accept", PeerID: text(sconn.RemotePeer().String())}
	}
	if err := selectTLS(conn); err != nil {
		return reply{ID: req.ID, Verdict: "reject", Error: text("multistream SelectOneOf: " + err.Error())}
	}
	remote, err := expected(req)
	if err != nil {
		return reply{ID: req.ID, Verdict: "reject", Error: text(err.Error())}
	}
	sconn, err := transport.SecureOutbound(ctx, conn, remote)
	if err != nil {
		return reply{ID: req.ID, Verdict: "reject", Error: text(err.Error())}
	}
	defer sconn.Close()
	return reply{ID: req.ID, Verdict: "accept", PeerID: text(sconn.RemotePeer().String())}
}

// announcer writes one interim line before the reply.
func announcer(w io.Writer, flush func() error) func(any) error {
	return func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
			return err
		}
		return flush()
	}
}

// lines carries stdin (read by one goroutine in main).
var lines = make(chan []byte, 16)

// isCancel reports whether line is the harness's cancel for case id ("" for any case).
func isCancel(line []byte, id string) bool {
	var c struct {
		ID     string `json:"id"`
		Cancel string `json:"cancel"`
	}
	return json.Unmarshal(line, &c) == nil && c.Cancel != "" && (id == "" || c.ID == id)
}

// cancelLine is the harness's cancel for a listen request: why it ends the wait, and how long
// a connection still on its way gets (0: the fixture peer was refused, none is coming).
type cancelLine struct {
	Why   string
	Grace time.Duration
}

// watchCancel delivers the harness's cancel line for id, if one comes; finish
// stops the watch and waits for it, so that it never takes the next request.
func watchCancel(id string) (got <-chan cancelLine, finish func()) {
	out := make(chan cancelLine, 1)
	stop := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for {
			select {
			case <-stop:
				return
			case line, ok := <-lines:
				if !ok {
					out <- cancelLine{Why: "stdin closed"}
					return
				}
				var c struct {
					ID      string `json:"id"`
					Cancel  string `json:"cancel"`
					GraceMS *int   `json:"grace_ms"`
				}
				if json.Unmarshal(line, &c) == nil && c.Cancel != "" && c.ID == id {
					grace := 250 * time.Millisecond // what the harness gave before grace_ms
					if c.GraceMS != nil {
						grace = time.Duration(*c.GraceMS) * time.Millisecond
					}
					out <- cancelLine{Why: c.Cancel, Grace: grace}
					return
				}
			}
		}
	}()
	return out, func() {
		close(stop)
		<-ended
	}
}
