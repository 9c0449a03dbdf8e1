package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quic-go/quic-go"
)

// quic is QUIC v1 on 127.0.0.1 with the same tls.Config (ALPN "libp2p"): quic-go runs
// crypto/tls's QUIC handshake, so the chain still goes out raw and the signer still signs.
func (c *attempt) quic() error {
	conf := &quic.Config{HandshakeIdleTimeout: remaining(c.ctx), MaxIdleTimeout: remaining(c.ctx)}
	var conn *quic.Conn
	if c.req.Role == "server" {
		ln, err := quic.ListenAddr("127.0.0.1:0", c.conf, conf)
		if err != nil {
			return fmt.Errorf("fixture-peer: listen: %w", err)
		}
		defer ln.Close()
		c.emit(event{ID: c.req.ID, Event: "listening", Address: ln.Addr().String()})
		// Accept returns a connection whose handshake completed on this side; one that fails
		// (the implementation refused us) never comes: a stop from the harness ends the wait.
		err = c.timed(func() error {
			var err error
			conn, err = ln.Accept(c.ctx)
			return err
		})
		if err != nil {
			return fmt.Errorf("fixture-peer: no QUIC handshake completed: %w", err)
		}
	} else {
		address, err := c.addressToDial()
		if err != nil {
			return err
		}
		err = c.timed(func() error {
			var err error
			conn, err = quic.DialAddr(c.ctx, address, c.conf, conf)
			return err
		})
		if err != nil {
			return err
		}
	}
	// Complete on this side: wait for the implementation to close (or to refuse us after our
	// Finished), or for a stop.
	select {
	case <-conn.Context().Done():
		cause := context.Cause(conn.Context())
		var closed *quic.ApplicationError
		if errors.As(cause, &closed) && closed.ErrorCode == 0 {
			cause = nil // the implementation closed normally after its verdict
		}
		return c.complete(cause)
	case <-c.ctx.Done():
		_ = conn.CloseWithError(0, "")
		return c.complete(nil)
	}
}

func remaining(ctx context.Context) time.Duration {
	if deadline, ok := ctx.Deadline(); ok {
		return time.Until(deadline)
	}
	return 10 * time.Second
}
