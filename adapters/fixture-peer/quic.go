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
		// An early listener hands the connection over once our first flight is out, so a
		// handshake the implementation refuses (its CONNECTION_CLOSE with the TLS alert) is
		// seen when it happens, not when a timer ends the wait for one that completed.
		ln, err := quic.ListenAddrEarly("127.0.0.1:0", c.conf, conf)
		if err != nil {
			return fmt.Errorf("fixture-peer: listen: %w", err)
		}
		defer ln.Close()
		c.emit(event{ID: c.req.ID, Event: "listening", Address: ln.Addr().String()})
		err = c.timed(func() error {
			var err error
			if conn, err = ln.Accept(c.ctx); err != nil {
				return fmt.Errorf("fixture-peer: no QUIC connection: %w", err)
			}
			select {
			case <-conn.HandshakeComplete(): // closed when it completes, and when it fails
			case <-conn.Context().Done():
			case <-c.ctx.Done():
				return fmt.Errorf("fixture-peer: no QUIC handshake completed: %w", c.ctx.Err())
			}
			if conn.ConnectionState().TLS.HandshakeComplete {
				return nil // complete (a close right behind it is what came after)
			}
			cause := context.Cause(conn.Context())
			var closed *quic.ApplicationError
			if errors.As(cause, &closed) && closed.Remote && closed.ErrorCode == 0 {
				// The client closed normally before its Finished reached us: a client sends an
				// application close only in 1-RTT packets, whose keys it has once it has
				// checked our Certificate, CertificateVerify and Finished. So it accepted us;
				// its Finished was still queued when it closed (quic-go's Dial returns, and a
				// quick caller closes, before that packet is out).
				return nil
			}
			return cause
		})
		if err != nil {
			return err
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
	negotiated(c.done, conn.ConnectionState().TLS)
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
