package testutil

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// echoServer answers every line with the same line.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

func roundTrip(c net.Conn, line string) (string, error) {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return "", err
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	return got, err
}

func TestTCPProxyForwardsCutsAndRefuses(t *testing.T) {
	p, err := NewTCPProxy(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := roundTrip(c, "hello"); err != nil || got != "hello\n" {
		t.Fatalf("through the proxy: %q, %v; want the echo", got, err)
	}
	if n := p.Cut(); n != 1 {
		t.Errorf("Cut closed %d connections, want 1", n)
	}
	if _, err := roundTrip(c, "again"); err == nil {
		t.Errorf("a cut connection still answered")
	}

	p.Refuse(true)
	r, err := net.Dial("tcp", p.Addr())
	if err == nil {
		defer r.Close()
		if _, err := roundTrip(r, "refused?"); err == nil {
			t.Errorf("a connection made while refusing answered")
		}
	}
	if p.Refused() != 1 {
		t.Errorf("Refused() = %d, want 1", p.Refused())
	}

	p.Refuse(false)
	c2, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if got, err := roundTrip(c2, "back"); err != nil || got != "back\n" {
		t.Fatalf("after refusing ended: %q, %v; want the echo", got, err)
	}
	if p.Accepted() != 2 {
		t.Errorf("Accepted() = %d, want 2", p.Accepted())
	}
}
