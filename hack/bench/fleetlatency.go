package main

import (
	"io"
	"net"
	"time"
)

// latencyProxy is a TCP proxy on 127.0.0.1 in front of a server that
// delays every byte by half a round trip in each direction, as a cluster
// in another region would (bandwidth is not limited): the API server's TLS
// passes through it untouched.
type latencyProxy struct {
	l      net.Listener
	target string
	oneWay time.Duration
}

func startLatencyProxy(target string, rtt time.Duration) (*latencyProxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &latencyProxy{l: l, target: target, oneWay: rtt / 2}
	go p.serve()
	return p, nil
}

func (p *latencyProxy) addr() string { return p.l.Addr().String() }

// Close stops accepting; open connections end with the process's servers.
func (p *latencyProxy) Close() { p.l.Close() }

func (p *latencyProxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

func (p *latencyProxy) forward(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	done := make(chan struct{}, 2)
	go func() { p.delayed(s, c); done <- struct{}{} }()
	go func() { p.delayed(c, s); done <- struct{}{} }()
	<-done
	c.Close()
	s.Close()
	<-done
}

// delayed copies from src to dst, each chunk oneWay after it was read, in
// order.
func (p *latencyProxy) delayed(dst io.Writer, src io.Reader) {
	type chunk struct {
		at   time.Time
		data []byte
	}
	q := make(chan chunk, 256)
	go func() {
		defer close(q)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				q <- chunk{time.Now().Add(p.oneWay), buf[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	for ch := range q {
		time.Sleep(time.Until(ch.at))
		if _, err := dst.Write(ch.data); err != nil {
			for range q {
			}
			return
		}
	}
}
