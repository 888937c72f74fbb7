package testutil

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// TCPProxy forwards the TCP connections it accepts on 127.0.0.1 to a
// target address, copying bytes both ways: TLS stays end to end, so a
// client verifies the target's certificate as if it had dialled it (the
// certificate must cover 127.0.0.1 or the name the client is told to
// expect). Tests use it to break the network between two parties: Cut
// closes every open connection at once, as a dropped link does, and
// Refuse makes it reset new connections as soon as it accepts them.
type TCPProxy struct {
	ln     net.Listener
	target string

	mu       sync.Mutex
	open     map[net.Conn]struct{} // both ends of every forwarded connection
	refusing bool
	closed   bool

	accepted, refused atomic.Int64
	wg                sync.WaitGroup
}

// NewTCPProxy listens on a free port of 127.0.0.1 and forwards to target
// (host:port). Close it when done.
func NewTCPProxy(target string) (*TCPProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &TCPProxy{ln: ln, target: target, open: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr is the host:port clients dial instead of the target.
func (p *TCPProxy) Addr() string { return p.ln.Addr().String() }

// Port is the port of Addr.
func (p *TCPProxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// Accepted counts the connections forwarded so far.
func (p *TCPProxy) Accepted() int64 { return p.accepted.Load() }

// Refused counts the connections reset while refusing.
func (p *TCPProxy) Refused() int64 { return p.refused.Load() }

// Refuse switches refusing on or off. While on, every new connection is
// reset at once (the client sees the connection reset during its TLS
// handshake); the connections already open are left alone: Cut them too
// for an outage.
func (p *TCPProxy) Refuse(on bool) {
	p.mu.Lock()
	p.refusing = on
	p.mu.Unlock()
}

// Cut closes every open connection, both ends, and returns how many
// client connections it closed. Clients see their requests and watches
// fail and must dial again.
func (p *TCPProxy) Cut() int {
	p.mu.Lock()
	conns := make([]net.Conn, 0, len(p.open))
	for c := range p.open {
		conns = append(conns, c)
	}
	clear(p.open)
	p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
	return len(conns) / 2
}

// Close stops listening, cuts every connection and waits for the copying
// to end.
func (p *TCPProxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.Cut()
	p.wg.Wait()
	return err
}

func (p *TCPProxy) serve() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.mu.Lock()
		refusing := p.refusing
		p.mu.Unlock()
		if refusing {
			p.refused.Add(1)
			reset(in)
			continue
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			// The target is away (restarting): the client sees the
			// connection dropped, as it would without the proxy.
			reset(in)
			continue
		}
		if !p.track(in, out) {
			_ = in.Close()
			_ = out.Close()
			return
		}
		p.accepted.Add(1)
		p.wg.Add(2)
		go p.copy(out, in)
		go p.copy(in, out)
	}
}

// track records a forwarded pair, unless the proxy is closing.
func (p *TCPProxy) track(in, out net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.open[in], p.open[out] = struct{}{}, struct{}{}
	return true
}

// copy forwards src to dst until either side ends, then closes both, so
// that a half-closed pair does not linger.
func (p *TCPProxy) copy(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src) // ends with EOF, or an error after a Cut
	_ = dst.Close()
	_ = src.Close()
	p.mu.Lock()
	delete(p.open, dst)
	delete(p.open, src)
	p.mu.Unlock()
}

// reset closes c with an RST instead of a FIN, as a refusing host does.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}
