//go:build !go_libp2p_noquic

package main

import (
	"context"
	"fmt"
	"time"

	ic "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/network"
	libp2pquic "github.com/libp2p/go-libp2p/p2p/transport/quic"
	ma "github.com/multiformats/go-multiaddr"
)

// handshakeQUIC runs go-libp2p's QUIC transport (p2p/transport/quic, over quicreuse) as a node
// does: Dial(ctx, /ip4/.../udp/PORT/quic-v1, expected PeerId), or Listen and Accept. The
// listener drops a failed inbound handshake without a word, so a listen request also ends
// when the harness sends {"id": ..., "cancel": WHY} (the fixture peer's side is over): after a
// short grace for a connection still on its way, the answer is that none was accepted.
func handshakeQUIC(priv ic.PrivKey, req request, announce func(any) error) reply {
	if req.Direction == "listen" && quicListenBroken != "" {
		return reply{ID: req.ID, Verdict: "skip", Error: text(quicListenBroken)}
	}
	timeout := time.Duration(req.TimeoutMS) * time.Millisecond
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	reuse, err := newConnManager()
	if err != nil {
		return reply{ID: req.ID, Verdict: "reject", Error: text("quicreuse.NewConnManager: " + err.Error())}
	}
	defer reuse.Close()
	tpt, err := libp2pquic.NewTransport(priv, reuse, nil, nil, &network.NullResourceManager{})
	if err != nil {
		return reply{ID: req.ID, Verdict: "reject", Error: text("libp2pquic.NewTransport: " + err.Error())}
	}
	defer tpt.(interface{ Close() error }).Close()
	if req.Direction != "listen" {
		host, port, err := splitAddress(req.Address)
		if err != nil {
			return reply{ID: req.ID, Verdict: "reject", Error: text(err.Error())}
		}
		remote, err := expected(req)
		if err != nil {
			return reply{ID: req.ID, Verdict: "reject", Error: text(err.Error())}
		}
		conn, err := tpt.Dial(ctx, ma.StringCast(fmt.Sprintf("/ip4/%s/udp/%s/quic-v1", host, port)), remote)
		if err != nil {
			return reply{ID: req.ID, Verdict: "reject", Error: text(err.Error())}
		}
		defer conn.Close()
		return reply{ID: req.ID, Verdict: "accept", PeerID: text(conn.RemotePeer().String())}
	}
	ln, err := tpt.Listen(ma.StringCast("/ip4/127.0.0.1/udp/0/quic-v1"))
	if err != nil {
		return reply{ID: req.ID, Verdict: "reject", Error: text("Listen: " + err.Error())}
	}
	defer ln.Close()
	where, err := ln.Multiaddr().ValueForProtocol(ma.P_UDP)
	if err != nil {
		return reply{ID: req.ID, Verdict: "reject", Error: text("adapter: " + err.Error())}
	}
	if err := announce(map[string]string{"id": req.ID, "listening": "127.0.0.1:" + where}); err != nil {
		return reply{ID: req.ID, Verdict: "reject", Error: text("adapter: " + err.Error())}
	}
	type accepted struct {
		peer string
		err  error
	}
	got := make(chan accepted, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			got <- accepted{err: err}
			return
		}
		defer conn.Close()
		got <- accepted{peer: conn.RemotePeer().String()}
	}()
	stop, finish := watchCancel(req.ID)
	defer finish()
	answer := func(a accepted) reply {
		if a.err != nil {
			return reply{ID: req.ID, Verdict: "reject", Error: text("Accept: " + a.err.Error())}
		}
		return reply{ID: req.ID, Verdict: "accept", PeerID: text(a.peer)}
	}
	select {
	case a := <-got:
		return answer(a)
	case c := <-stop:
		select { // a connection already accepted wins over a grace of 0
		case a := <-got:
			return answer(a)
		default:
		}
		select {
		case a := <-got:
			return answer(a)
		case <-time.After(c.Grace):
			return reply{ID: req.ID, Verdict: "reject", Error: text("adapter: the QUIC listener accepted no connection (go-libp2p drops a failed inbound handshake silently); " + c.Why)}
		}
	case <-ctx.Done():
		return reply{ID: req.ID, Verdict: "reject", Error: text(fmt.Sprintf("adapter: the QUIC listener accepted no connection within %v (go-libp2p drops a failed inbound handshake silently)", timeout))}
	}
}

func splitAddress(address string) (string, string, error) {
	for i := len(address) - 1; i >= 0; i-- {
		if address[i] == ':' {
			return address[:i], address[i+1:], nil
		}
	}
	return "", "", fmt.Errorf("adapter: bad address %q", address)
}
