package testenv

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Servers are handed port numbers to bind, which they do a while later. Two
// things could take such a port in between: the kernel, choosing the source
// port of any outgoing connection (the suite makes thousands on loopback),
// and another process of the run (go test runs test binaries in parallel,
// each may start an environment) choosing the same number. Ports are
// therefore drawn below the kernel's ephemeral range, which it never hands
// out as source ports, and reserved with a lock file per port in a
// directory every process of the run shares (envtest reserves its ports the
// same way), held for as long as the server runs.

// Port is a TCP port reserved for a server: no other caller of ReservePort,
// in this process or another, draws it until Release.
type Port struct {
	number int
	lock   *os.File // holds an exclusive flock while the port is reserved
	once   sync.Once
}

// ReservePort reserves a port outside the kernel's ephemeral range that no
// other reservation holds and that binds both on 127.0.0.1 and on every
// interface (some servers, Crossplane's among them, listen on ":port").
// Keep the reservation while the server runs; Release it after the server
// stopped, or when it failed to start.
func ReservePort() (*Port, error) { return defaultPorts().reserve() }

// Number is the port number.
func (p *Port) Number() int { return p.number }

// Release ends the reservation; the port can be drawn again. It may be
// called more than once, and on nil.
func (p *Port) Release() {
	if p == nil {
		return
	}
	p.once.Do(func() { _ = p.lock.Close() }) // closing the file drops its flock
}

func releasePorts(ports []*Port) {
	for _, p := range ports {
		p.Release()
	}
}

func reservePorts(n int) ([]*Port, error) {
	ports := make([]*Port, 0, n)
	for range n {
		p, err := ReservePort()
		if err != nil {
			releasePorts(ports)
			return nil, err
		}
		ports = append(ports, p)
	}
	return ports, nil
}

// portPool draws ports from low to high (inclusive), with the lock files
// in dir.
type portPool struct {
	dir       string
	low, high int
}

var defaultPorts = sync.OnceValue(func() *portPool {
	low, high := drawRange(ephemeralRange())
	return &portPool{dir: filepath.Join(os.TempDir(), "kubectl-xpkg-ports"), low: low, high: high}
})

const (
	// minDrawPort is the lowest port drawn when the ephemeral range leaves
	// room below it: the ports just above 1024 are where services tend to
	// listen by default.
	minDrawPort = 10000
	// minDrawRoom is the fewest ports a range to draw from should hold.
	minDrawRoom = 1000
	// Linux's default ephemeral range, assumed when it cannot be read.
	defaultEphemeralLow, defaultEphemeralHigh = 32768, 60999
)

// ephemeralRange is the range the kernel picks source ports (and ports for
// a bind to port 0) from.
func ephemeralRange() (low, high int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return defaultEphemeralLow, defaultEphemeralHigh
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return defaultEphemeralLow, defaultEphemeralHigh
	}
	low, err1 := strconv.Atoi(f[0])
	high, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || low < 1 || high > 65535 || low > high {
		return defaultEphemeralLow, defaultEphemeralHigh
	}
	return low, high
}

// drawRange is where to draw ports from, given the kernel's ephemeral
// range: below it if there is room, else above it; if the ephemeral range
// covers (nearly) everything, from anywhere unprivileged, where the kernel
// may take a port as a source port again (the lock files still keep
// reservations apart, and a server that then fails to bind is started
// again on other ports).
func drawRange(ephemeralLow, ephemeralHigh int) (low, high int) {
	switch {
	case ephemeralLow-minDrawPort >= minDrawRoom:
		return minDrawPort, ephemeralLow - 1
	case ephemeralLow-1024 >= minDrawRoom:
		return 1024, ephemeralLow - 1
	case 65535-ephemeralHigh >= minDrawRoom:
		return ephemeralHigh + 1, 65535
	default:
		return 1024, 65535
	}
}

// reserve tries the ports of the pool from a random one on, skipping those
// whose lock another reservation holds and those that do not bind.
func (pp *portPool) reserve() (*Port, error) {
	if err := os.MkdirAll(pp.dir, 0o777); err != nil {
		return nil, fmt.Errorf("reserve a port: %w", err)
	}
	// Sticky and writable by all, like /tmp: any user's test runs can add
	// lock files, none can remove another's.
	_ = os.Chmod(pp.dir, 0o777|os.ModeSticky)
	n := pp.high - pp.low + 1
	first := rand.IntN(n)
	for i := range n {
		number := pp.low + (first+i)%n
		lock, err := pp.lock(number)
		if err != nil {
			return nil, fmt.Errorf("reserve a port: %w", err)
		}
		if lock == nil {
			continue // reserved by someone else
		}
		if !bindable(number) {
			lock.Close()
			continue
		}
		return &Port{number: number, lock: lock}, nil
	}
	return nil, fmt.Errorf("reserve a port: none of %d-%d is free", pp.low, pp.high)
}

// lock takes the lock of port, or returns nil if another holds it. Lock
// files are never removed: removing one would let two processes lock
// different files of the same name.
func (pp *portPool) lock(port int) (*os.File, error) {
	path := filepath.Join(pp.dir, strconv.Itoa(port)+".lock")
	// Read-only suffices for flock, and opens another user's lock file.
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	// Locks of flock belong to the open file, not the process: two
	// goroutines that open the file each exclude the other too.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}

// bindable reports whether a server could listen on port, on loopback and
// on every interface (":port" clashes with a listener on any address).
func bindable(port int) bool {
	for _, addr := range []string{"127.0.0.1:", ":"} {
		l, err := net.Listen("tcp", addr+strconv.Itoa(port))
		if err != nil {
			return false
		}
		l.Close()
	}
	return true
}
