package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"
)

const (
	multistream = "/multistream/1.0.0"
	protocolTLS = "/tls/1.0.0"
	maxMessage  = 1024
)

var errNotOffered = errors.New("fixture-peer: the other side offers no signature scheme this case can send")

// stdinLines is shared with main: a client-role request waits for its address line.
var stdinLines *bufio.Scanner

func text(s string) *string { return &s }

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// handshake runs one request: validate, then listen (role server) or wait for the address
// (role client), then multistream-select and TLS 1.3. The returned event is "done".
func handshake(req request, emit func(event)) event {
	done := event{ID: req.ID, Event: "done"}
	fail := func(outcome, msg string) event {
		done.Outcome, done.Error = outcome, text(msg)
		return done
	}
	if req.Transport != "tcp" {
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
	key, err := parseKey(req.Key)
	if err != nil {
		return fail("cannot_present", err.Error())
	}
	sig, err := newSigner(key, req.Fault, req.Scheme)
	if err != nil {
		return fail("cannot_present", err.Error())
	}
	cert := &tls.Certificate{Certificate: chain, PrivateKey: sig}
	if req.Scheme != nil {
		cert.SupportedSignatureAlgorithms = []tls.SignatureScheme{tls.SignatureScheme(*req.Scheme)}
	}
	var offered []tls.SignatureScheme
	choose := func(schemes []tls.SignatureScheme) (*tls.Certificate, error) {
		offered = schemes
		if !sig.offers(cert, schemes) {
			return nil, errNotOffered
		}
		return cert, nil
	}
	conf := &tls.Config{
		MinVersion: tls.VersionTLS13, MaxVersion: tls.VersionTLS13,
		NextProtos:         []string{"libp2p"},
		InsecureSkipVerify: true, // the implementation is judged, not judged by us
		ClientAuth:         tls.RequireAnyClientCert,
		VerifyPeerCertificate: func([][]byte, [][]*x509.Certificate) error {
			return nil
		},
		GetCertificate: func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
			return choose(h.SignatureSchemes)
		},
		GetClientCertificate: func(r *tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return choose(r.SignatureSchemes)
		},
		SessionTicketsDisabled: true,
	}
	deadline := time.Now().Add(timeout)
	var conn net.Conn
	if req.Role == "server" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fail("failed", "fixture-peer: listen: "+err.Error())
		}
		emit(event{ID: req.ID, Event: "listening", Address: ln.Addr().String()})
		_ = ln.(*net.TCPListener).SetDeadline(deadline)
		conn, err = ln.Accept()
		ln.Close()
		if err != nil {
			return fail("failed", "fixture-peer: nobody connected: "+err.Error())
		}
	} else {
		emit(event{ID: req.ID, Event: "ready"})
		if !stdinLines.Scan() {
			os.Exit(0)
		}
		var where struct {
			ID      string `json:"id"`
			Address string `json:"address"`
		}
		if err := json.Unmarshal(stdinLines.Bytes(), &where); err != nil || where.ID != req.ID {
			return fail("failed", "fixture-peer: expected the address line of "+req.ID)
		}
		if where.Address == "" { // the implementation could not listen: nothing to do
			return fail("failed", "fixture-peer: no address given")
		}
		conn, err = net.DialTimeout("tcp", where.Address, time.Until(deadline))
		if err != nil {
			return fail("failed", "fixture-peer: dial: "+err.Error())
		}
	}
	defer conn.Close()
	_ = conn.SetDeadline(deadline)
	if req.Role == "server" {
		err = respond(conn)
	} else {
		err = initiate(conn)
	}
	if err != nil {
		return fail("failed", "multistream-select: "+err.Error())
	}
	var tconn *tls.Conn
	if req.Role == "server" {
		tconn = tls.Server(conn, conf)
	} else {
		tconn = tls.Client(conn, conf)
	}
	start, cpu := time.Now(), cpuSeconds()
	err = tconn.Handshake()
	done.Seconds, done.CPUSeconds = time.Since(start).Seconds(), cpuSeconds()-cpu
	done.Sent = sig.sent
	for _, o := range offered {
		done.Offered = append(done.Offered, uint16(o))
	}
	if errors.Is(err, errNotOffered) || (err != nil && offered != nil && !sig.offers(cert, offered)) {
		return fail("not_offered", fmt.Sprintf("the implementation offers no scheme this case sends (it offered %s)", schemeList(offered)))
	}
	if err != nil {
		return fail("failed", err.Error())
	}
	// Complete on this side. Wait until the implementation closes or alerts (its verdict on
	// our certificate may come after our Finished), so that nothing it still reads is reset.
	_, err = io.Copy(io.Discard, tconn)
	done.Outcome = "complete"
	if err != nil && !errors.Is(err, io.EOF) {
		var ne net.Error
		if !(errors.As(err, &ne) && ne.Timeout()) {
			done.Error = text(err.Error())
		}
	}
	return done
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
