package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	multistream = "/multistream/1.0.0"
	protocolTLS = "/tls/1.0.0"
	maxMessage  = 1024
)

var errNotOffered = errors.New("fixture-peer: the other side offers no signature scheme this case can send")

func text(s string) *string { return &s }

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// handshake runs one request: validate, then listen (role server) or wait for the address
// (role client), then (TCP) multistream-select and TLS 1.3, or QUIC. The returned event is
// "done".
func handshake(req request, emit func(event)) event {
	done := event{ID: req.ID, Event: "done"}
	fail := func(outcome, msg string) event {
		done.Outcome, done.Error = outcome, text(msg)
		return done
	}
	if req.Transport != "tcp" && req.Transport != "quic" {
		return fail("cannot_present", fmt.Sprintf("fixture-peer: transport %q is not built", req.Transport))
	}
	if req.Role != "server" && req.Role != "client" {
		return fail("cannot_present", fmt.Sprintf("fixture-peer: role %q is neither server nor client", req.Role))
	}
	timeout := time.Duration(req.TimeoutMS) * time.Millisecond
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	chain := make([][]byte, len(req.Certificates))
	for i, c := range req.Certificates {
		der, err := base64.StdEncoding.DecodeString(c)
		if err != nil {
			return fail("cannot_present", "fixture-peer: bad base64: "+err.Error())
		}
		chain[i] = der
	}
	// "no-certificate": a dialer whose Certificate message is empty (it proves no identity).
	none := req.Fault == "no-certificate"
	if none && req.Role != "client" {
		return fail("cannot_present", "fixture-peer: only the dialer can present no certificate (a TLS 1.3 server must send one)")
	}
	var sig *signer
	cert := &tls.Certificate{}
	if !none {
		key, err := parseKey(req.Key)
		if err != nil {
			return fail("cannot_present", err.Error())
		}
		if sig, err = newSigner(key, req.Fault, req.Scheme); err != nil {
			return fail("cannot_present", err.Error())
		}
		cert = &tls.Certificate{Certificate: chain, PrivateKey: sig}
	}
	if req.Scheme != nil && !none {
		cert.SupportedSignatureAlgorithms = []tls.SignatureScheme{tls.SignatureScheme(*req.Scheme)}
	}
	var offered []tls.SignatureScheme
	var requested atomic.Bool // a CertificateRequest came (role client)
	presented := &peerChain{}
	var quit context.CancelFunc // set below: ends the attempt
	choose := func(schemes []tls.SignatureScheme) (*tls.Certificate, error) {
		offered = schemes
		if none {
			return cert, nil
		}
		if !sig.offers(cert, schemes) {
			if req.Transport == "quic" && req.Role == "server" {
				// quic-go ends this handshake itself and never hands it to Accept.
				quit()
			}
			return nil, errNotOffered
		}
		return cert, nil
	}
	conf := &tls.Config{
		MinVersion: tls.VersionTLS13, MaxVersion: tls.VersionTLS13,
		NextProtos:         []string{"libp2p"},
		InsecureSkipVerify: true, // the implementation is judged, not judged by us
		ClientAuth:         tls.RequireAnyClientCert,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			presented.keep(raw)
			return nil
		},
		GetCertificate: func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
			return choose(h.SignatureSchemes)
		},
		GetClientCertificate: func(r *tls.CertificateRequestInfo) (*tls.Certificate, error) {
			requested.Store(true)
			return choose(r.SignatureSchemes)
		},
		SessionTicketsDisabled: true,
	}
	if err := applyProtocolFault(conf, req.Protocol, req.Role, req.Transport); err != nil {
		return fail("cannot_present", err.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	quit = cancel
	c := &attempt{req: req, ctx: ctx, conf: conf, emit: emit, done: &done, cancel: cancel}
	stopWatching := watchForStop(req.ID, cancel, c)
	defer stopWatching()
	var sideErr error
	if req.Transport == "quic" {
		sideErr = c.quic()
	} else {
		sideErr = c.tcp()
	}
	if sig != nil {
		done.Sent = sig.sent
	}
	if req.Role == "client" && done.Version != nil {
		r := requested.Load()
		done.Requested = &r
	}
	for _, o := range offered {
		done.Offered = append(done.Offered, uint16(o))
	}
	done.Peer = presented.get()
	if done.Outcome == "" && sig != nil && (errors.Is(sideErr, errNotOffered) || (sideErr != nil && offered != nil && !sig.offers(cert, offered))) {
		return fail("not_offered", fmt.Sprintf("the implementation offers no scheme this case sends (it offered %s)", schemeList(offered)))
	}
	if done.Outcome == "" && sideErr != nil {
		return fail("failed", sideErr.Error())
	}
	return done
}

// attempt is one request's connection, whatever the transport.
type attempt struct {
	req     request
	ctx     context.Context
	conf    *tls.Config
	emit    func(event)
	done    *event
	address chan string // role client: the address line, from watchForStop
	// handshaken: this side's TLS handshake is over, so a stop ends the wait at once
	handshaken atomic.Bool
	// stopped: a stop came while the handshake still ran; ending it waits for the handshake
	// (accepted: the implementation had accepted us, so nothing is left to read after it)
	stopped, accepted atomic.Bool
	cancel            context.CancelFunc
}

// watchForStop reads the control lines of this request while it runs: the address (role
// client) and stop, which cancels whatever still waits. It must end before the next request
// is read, so the returned function waits for it.
func watchForStop(id string, cancel context.CancelFunc, c *attempt) func() {
	c.address = make(chan string, 1)
	quit := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-quit:
				return
			case line, ok := <-lines:
				if !ok {
					cancel()
					return
				}
				var ctl control
				if json.Unmarshal(line, &ctl) != nil || ctl.ID != id {
					continue // not for this request: a late line of an earlier one
				}
				if ctl.Stop && c.handshaken.Load() && ctl.Verdict == "accept" {
					cancel() // it accepted us: no alert can follow
				} else if ctl.Stop && c.handshaken.Load() {
					// The implementation answered. Its alert or close may already be
					// in our socket, unread: a short grace to read it before the stop
					// breaks the read (an expired deadline refuses even buffered bytes).
					time.AfterFunc(25*time.Millisecond, cancel)
				} else if ctl.Stop {
					// Our side's handshake still runs (its last flight is in the air):
					// it ends the wait when it finishes (timed).
					// After an accept our side completes as soon as its last flight is
					// read (a busy machine may take a while: the bound is generous); after
					// a refusal the alert ends it, or 150 ms do.
					c.accepted.Store(ctl.Verdict == "accept")
					c.stopped.Store(true)
					if ctl.Verdict == "accept" {
						time.AfterFunc(3*time.Second, cancel)
					} else {
						time.AfterFunc(150*time.Millisecond, cancel)
					}
				} else {
					select {
					case c.address <- ctl.Address:
					default:
					}
				}
			}
		}
	}()
	return func() {
		close(quit)
		<-finished
	}
}

// addressToDial waits for the harness to say where the implementation listens.
func (c *attempt) addressToDial() (string, error) {
	c.emit(event{ID: c.req.ID, Event: "ready"})
	select {
	case a := <-c.address:
		if a == "" {
			return "", errors.New("fixture-peer: the implementation did not listen (no address given)")
		}
		return a, nil
	case <-c.ctx.Done():
		return "", errors.New("fixture-peer: no address before the deadline or a stop")
	}
}

func (c *attempt) timed(run func() error) error {
	start, cpu := time.Now(), cpuSeconds()
	err := run()
	c.done.Seconds, c.done.CPUSeconds = time.Since(start).Seconds(), cpuSeconds()-cpu
	c.handshaken.Store(true)
	if c.stopped.Load() && c.accepted.Load() {
		c.cancel()
	} else if c.stopped.Load() {
		// The implementation answered while our handshake ran: what is left to read (an
		// alert) is in the socket now or very soon.
		time.AfterFunc(25*time.Millisecond, c.cancel)
	}
	return err
}

// complete marks this side's handshake finished; the error is what came after (the
// implementation's alert or close), kept unless it is the expected end.
func (c *attempt) complete(after error) error {
	c.done.Outcome = "complete"
	if after != nil && !errors.Is(after, io.EOF) && !errors.Is(after, context.Canceled) &&
		!errors.Is(after, context.DeadlineExceeded) {
		var ne net.Error
		if !(errors.As(after, &ne) && ne.Timeout()) {
			c.done.Error = text(after.Error())
		}
	}
	return nil
}

func (c *attempt) tcp() error {
	var conn net.Conn
	if c.req.Role == "server" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("fixture-peer: listen: %w", err)
		}
		c.emit(event{ID: c.req.ID, Event: "listening", Address: ln.Addr().String()})
		stop := context.AfterFunc(c.ctx, func() { ln.Close() })
		conn, err = ln.Accept()
		stop()
		ln.Close()
		if err != nil {
			return fmt.Errorf("fixture-peer: nobody connected: %w", err)
		}
	} else {
		address, err := c.addressToDial()
		if err != nil {
			return err
		}
		var d net.Dialer
		if conn, err = d.DialContext(c.ctx, "tcp", address); err != nil {
			return fmt.Errorf("fixture-peer: dial: %w", err)
		}
	}
	defer conn.Close()
	// A stop or the deadline breaks any blocking read or write at once.
	defer context.AfterFunc(c.ctx, func() { _ = conn.SetDeadline(time.Now()) })()
	if deadline, ok := c.ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	var err error
	if c.req.Role == "server" {
		err = respond(conn)
	} else {
		err = initiate(conn)
	}
	if err != nil {
		return fmt.Errorf("multistream-select: %w", err)
	}
	var tconn *tls.Conn
	if c.req.Role == "server" {
		tconn = tls.Server(conn, c.conf)
	} else {
		tconn = tls.Client(conn, c.conf)
	}
	if err := c.timed(tconn.Handshake); err != nil {
		return err
	}
	negotiated(c.done, tconn.ConnectionState())
	// Complete on this side. Wait until the implementation closes or alerts (its verdict on
	// our certificate may come after our Finished), so that nothing it still reads is reset.
	_, err = io.Copy(io.Discard, tconn)
	return c.complete(err)
}

func schemeList(schemes []tls.SignatureScheme) string {
	s := ""
	for i, o := range schemes {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("0x%04x", uint16(o))
	}
	return "[" + s + "]"
}

// writeMessages sends multistream-select messages (uvarint length, text, newline) in one write.
func writeMessages(w io.Writer, msgs ...string) error {
	var buf []byte
	for _, m := range msgs {
		buf = binary.AppendUvarint(buf, uint64(len(m)+1))
		buf = append(buf, m...)
		buf = append(buf, '\n')
	}
	_, err := w.Write(buf)
	return err
}

// readMessage reads one message byte by byte: the bytes behind it (a ClientHello) stay unread.
func readMessage(r io.Reader) (string, error) {
	var length uint64
	one := make([]byte, 1)
	for shift := 0; ; shift += 7 {
		if shift > 63 {
			return "", errors.New("message length varint too long")
		}
		if _, err := io.ReadFull(r, one); err != nil {
			return "", err
		}
		length |= uint64(one[0]&0x7f) << shift
		if one[0] < 0x80 {
			break
		}
	}
	if length == 0 || length > maxMessage {
		return "", fmt.Errorf("message of %d bytes", length)
	}
	msg := make([]byte, length)
	if _, err := io.ReadFull(r, msg); err != nil {
		return "", err
	}
	if msg[length-1] != '\n' {
		return "", fmt.Errorf("message %q has no trailing newline", msg)
	}
	return string(msg[:length-1]), nil
}

// initiate is the dialer's side: header and proposal in one go, then both answers.
func initiate(conn net.Conn) error {
	if err := writeMessages(conn, multistream, protocolTLS); err != nil {
		return err
	}
	if h, err := readMessage(conn); err != nil || h != multistream {
		return fmt.Errorf("expected %q, got %q (%v)", multistream, h, err)
	}
	if p, err := readMessage(conn); err != nil || p != protocolTLS {
		return fmt.Errorf("the implementation refused %s: %q (%v)", protocolTLS, p, err)
	}
	return nil
}

// respond is the listener's side: answer the header, accept /tls/1.0.0, refuse anything else.
func respond(conn net.Conn) error {
	if h, err := readMessage(conn); err != nil || h != multistream {
		return fmt.Errorf("expected %q, got %q (%v)", multistream, h, err)
	}
	if err := writeMessages(conn, multistream); err != nil {
		return err
	}
	for range 16 {
		p, err := readMessage(conn)
		if err != nil {
			return err
		}
		if p == protocolTLS {
			return writeMessages(conn, protocolTLS)
		}
		if err := writeMessages(conn, "na"); err != nil {
			return err
		}
	}
	return errors.New("no /tls/1.0.0 proposal in 16 messages")
}

// peerChainLimit bounds what the fixture peer reports of the implementation's certificates.
const peerChainLimit = 64 << 10

// peerChain holds the certificates the implementation presented; its TLS stack may still run
// the handshake in another goroutine when the attempt ends (a timeout), hence the lock.
type peerChain struct {
	mu    sync.Mutex
	chain [][]byte
}

func (p *peerChain) keep(raw [][]byte) {
	size := 0
	for _, c := range raw {
		size += len(c)
	}
	if len(raw) == 0 || len(raw) > 8 || size > peerChainLimit {
		return
	}
	chain := make([][]byte, len(raw))
	for i, c := range raw {
		chain[i] = append([]byte(nil), c...)
	}
	p.mu.Lock()
	p.chain = chain
	p.mu.Unlock()
}

func (p *peerChain) get() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.chain
}
