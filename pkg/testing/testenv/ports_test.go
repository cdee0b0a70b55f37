package testenv

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tests here start this test binary again as a helper process: one
// that holds port reservations, or a fake server.
const (
	helperEnvVar = "XPKG_TESTENV_PORTS_HELPER" // hold, serve or fail
	helperPool   = "XPKG_TESTENV_PORTS_POOL"   // hold: DIR:LOW:HIGH:COUNT
	helperPort   = "XPKG_TESTENV_PORTS_PORT"   // serve: the port to listen on
)

// runHelper acts as the helper process $XPKG_TESTENV_PORTS_HELPER names,
// if any, and exits.
func runHelper() {
	switch os.Getenv(helperEnvVar) {
	case "":
		return
	case "hold":
		// Reserve COUNT ports, print them, hold them until stdin closes.
		var pool portPool
		var count int
		f := strings.Split(os.Getenv(helperPool), ":")
		pool.dir = f[0]
		pool.low, _ = strconv.Atoi(f[1])
		pool.high, _ = strconv.Atoi(f[2])
		count, _ = strconv.Atoi(f[3])
		for range count {
			p, err := pool.reserve()
			if err != nil {
				fmt.Println("error", err)
				os.Exit(1)
			}
			fmt.Println("port", p.Number())
		}
		fmt.Println("held")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	case "serve":
		// A server: 200 on /readyz, or exit 1 with the error of its bind.
		l, err := net.Listen("tcp", "127.0.0.1:"+os.Getenv(helperPort))
		if err != nil {
			fmt.Fprintln(os.Stderr, "fake server:", err)
			os.Exit(1)
		}
		_ = http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
		os.Exit(1)
	case "fail":
		fmt.Fprintln(os.Stderr, "fake server: the configuration is broken")
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "unknown helper", os.Getenv(helperEnvVar))
	os.Exit(2)
}

func TestDrawRange(t *testing.T) {
	for _, c := range []struct {
		ephemeralLow, ephemeralHigh int
		low, high                   int
	}{
		{32768, 60999, 10000, 32767}, // Linux's default
		{49152, 65535, 10000, 49151}, // IANA's
		{10500, 60999, 1024, 10499},  // too little room above 10000
		{1500, 60000, 60001, 65535},  // none below
		{1024, 65000, 1024, 65535},   // none anywhere
	} {
		low, high := drawRange(c.ephemeralLow, c.ephemeralHigh)
		if low != c.low || high != c.high {
			t.Errorf("drawRange(%d, %d) = %d-%d, want %d-%d",
				c.ephemeralLow, c.ephemeralHigh, low, high, c.low, c.high)
		}
	}
}

// TestReservePortOutsideEphemeralRange: the ports drawn are ones the
// kernel never hands out as source ports, and free on every interface.
func TestReservePortOutsideEphemeralRange(t *testing.T) {
	ephemeralLow, ephemeralHigh := ephemeralRange()
	low, high := drawRange(ephemeralLow, ephemeralHigh)
	if high >= ephemeralLow && low <= ephemeralHigh {
		t.Skipf("the ephemeral range %d-%d leaves no room outside it", ephemeralLow, ephemeralHigh)
	}
	for range 20 {
		p, err := ReservePort()
		if err != nil {
			t.Fatal(err)
		}
		n := p.Number()
		if n < low || n > high || (n >= ephemeralLow && n <= ephemeralHigh) {
			t.Errorf("port %d: want one in %d-%d, outside the ephemeral range %d-%d",
				n, low, high, ephemeralLow, ephemeralHigh)
		}
		if !bindable(n) {
			t.Errorf("port %d was handed out, but does not bind", n)
		}
		p.Release()
	}
}

// testPool is a pool of width ports with a lock directory of its own.
func testPool(t *testing.T, width int) *portPool {
	low, _ := drawRange(ephemeralRange())
	return &portPool{dir: t.TempDir(), low: low, high: low + width - 1}
}

func distinct(t *testing.T, ports []*Port) {
	t.Helper()
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p.Number()] {
			t.Errorf("port %d handed out twice while reserved", p.Number())
		}
		seen[p.Number()] = true
	}
}

// TestConcurrentReservationsDiffer: goroutines reserving at once from a
// pool hardly larger than their number never get the same port, and once
// the ports are released they can all be drawn again.
func TestConcurrentReservationsDiffer(t *testing.T) {
	const n = 48
	pool := testPool(t, n+16)
	for round := range 2 {
		ports := make([]*Port, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { ports[i], errs[i] = pool.reserve() })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		distinct(t, ports)
		releasePorts(ports)
	}
}

// TestReservationsDifferAcrossProcesses: another process reserving from
// the same lock directory at the same time never gets a port this one
// holds.
func TestReservationsDifferAcrossProcesses(t *testing.T) {
	const each = 24
	pool := testPool(t, 2*each+16)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnvVar+"=hold",
		fmt.Sprintf("%s=%s:%d:%d:%d", helperPool, pool.dir, pool.low, pool.high, each))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Wait() }()
	defer stdin.Close() // the helper releases its ports and exits

	ours := make([]*Port, each)
	errs := make([]error, each)
	var wg sync.WaitGroup
	for i := range each {
		wg.Go(func() { ours[i], errs[i] = pool.reserve() })
	}
	var theirs []int
	lines := bufio.NewScanner(stdout)
	for lines.Scan() && lines.Text() != "held" {
		n, ok := strings.CutPrefix(lines.Text(), "port ")
		if !ok {
			t.Fatalf("helper: %s", lines.Text())
		}
		p, _ := strconv.Atoi(n)
		theirs = append(theirs, p)
	}
	wg.Wait()
	defer releasePorts(ours)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(theirs) != each {
		t.Fatalf("the helper reserved %d ports, want %d", len(theirs), each)
	}
	distinct(t, ours)
	held := map[int]bool{}
	for _, p := range ours {
		held[p.Number()] = true
	}
	for _, p := range theirs {
		if held[p] {
			t.Errorf("port %d reserved by both processes", p)
		}
	}
}

// onePortPool is a pool of one port, free when the test starts.
func onePortPool(t *testing.T) *portPool {
	wide := testPool(t, 200)
	p, err := wide.reserve()
	if err != nil {
		t.Fatal(err)
	}
	p.Release()
	return &portPool{dir: wide.dir, low: p.Number(), high: p.Number()}
}

// TestHeldLockIsSkipped: a port whose lock file another process (here: an
// open file of our own) holds is not handed out until the lock is gone.
func TestHeldLockIsSkipped(t *testing.T) {
	pool := onePortPool(t)
	f, err := os.OpenFile(filepath.Join(pool.dir, strconv.Itoa(pool.low)+".lock"), os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if p, err := pool.reserve(); err == nil {
		t.Fatalf("reserved port %d while its lock was held", p.Number())
	}
	f.Close()
	p, err := pool.reserve()
	if err != nil {
		t.Fatalf("after the lock was dropped: %v", err)
	}
	p.Release()
}

// TestReleaseMakesPortDrawable: a reserved port is not drawn again until
// it is released; releasing twice is harmless.
func TestReleaseMakesPortDrawable(t *testing.T) {
	pool := onePortPool(t)
	p, err := pool.reserve()
	if err != nil {
		t.Fatal(err)
	}
	if q, err := pool.reserve(); err == nil {
		t.Fatalf("port %d reserved twice", q.Number())
	}
	p.Release()
	p.Release()
	q, err := pool.reserve()
	if err != nil {
		t.Fatalf("after Release: %v", err)
	}
	if q.Number() != p.Number() {
		t.Fatalf("got port %d, want %d again", q.Number(), p.Number())
	}
	q.Release()
}

// TestPortInUseIsSkipped: a port another program listens on, on loopback
// or on every interface, is not handed out.
func TestPortInUseIsSkipped(t *testing.T) {
	for _, host := range []string{"127.0.0.1", ""} {
		t.Run("listen on "+host+":port", func(t *testing.T) {
			pool := onePortPool(t)
			l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(pool.low)))
			if err != nil {
				t.Fatal(err)
			}
			if p, err := pool.reserve(); err == nil {
				t.Errorf("reserved port %d, which is in use", p.Number())
				p.Release()
			}
			l.Close()
			p, err := pool.reserve()
			if err != nil {
				t.Fatalf("once the listener closed: %v", err)
			}
			p.Release()
		})
	}
}

// fakeServer starts this binary as the helper mode names, on ports[0],
// and waits until it serves.
func fakeServer(dir, mode string, ports []int) (*process, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	env := append(os.Environ(), helperEnvVar+"="+mode, helperPort+"="+strconv.Itoa(ports[0]))
	p, err := startProcessEnv(dir, "fake", exe, []string{"-test.run=^$"}, env, false)
	if err != nil {
		return nil, err
	}
	url := "http://127.0.0.1:" + strconv.Itoa(ports[0]) + "/readyz"
	// A listener that stole the port accepts connections and never
	// answers: each probe gives up soon, as the environment's do.
	httpc := &http.Client{Timeout: time.Second}
	return p, p.waitReady(context.Background(), 5*time.Minute, func(ctx context.Context) bool {
		return httpOK(ctx, httpc, url)
	})
}

// stealFirst has something else listen on the first port before the fake
// server starts, for the first steals attempts.
func stealFirst(t *testing.T, steals int, attempts *[][]int, start func([]int) (*process, error)) func([]int) (*process, error) {
	return func(ports []int) (*process, error) {
		*attempts = append(*attempts, ports)
		if len(*attempts) <= steals {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(ports[0]))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
		}
		return start(ports)
	}
}

func stopFake(t *testing.T, p *process, ports []*Port) {
	t.Cleanup(func() {
		if p != nil {
			exe, _ := os.Executable()
			_ = stopPID(p.pid, exe)
		}
		releasePorts(ports)
	})
}

// TestStartOnPortsRetriesBindFailure: a server that exits because its
// port was taken is started again on other ports; the log of the failed
// attempt is kept.
func TestStartOnPortsRetriesBindFailure(t *testing.T) {
	dir := t.TempDir()
	var attempts [][]int
	p, ports, err := startOnPorts(2, stealFirst(t, 1, &attempts, func(ports []int) (*process, error) {
		return fakeServer(dir, "serve", ports)
	}))
	stopFake(t, p, ports)
	if err != nil {
		t.Fatal(err)
	}
	if len(attempts) != 2 {
		t.Fatalf("%d attempts, want 2", len(attempts))
	}
	var got []int
	for _, p := range ports {
		got = append(got, p.Number())
	}
	if fmt.Sprint(got) != fmt.Sprint(attempts[1]) {
		t.Errorf("returned ports %v, want the last attempt's %v", got, attempts[1])
	}
	if attempts[1][0] == attempts[0][0] {
		t.Errorf("the second attempt drew the stolen port %d again", attempts[0][0])
	}
	failed, err := os.ReadFile(filepath.Join(dir, "fake.log.1"))
	if err != nil || !strings.Contains(string(failed), "address already in use") {
		t.Errorf("the first attempt's log: %q (%v), want its bind failure", failed, err)
	}
}

// TestStartOnPortsGivesUp: after bindAttempts bind failures the start
// fails, quoting the server's log.
func TestStartOnPortsGivesUp(t *testing.T) {
	dir := t.TempDir()
	var attempts [][]int
	p, ports, err := startOnPorts(1, stealFirst(t, 1000, &attempts, func(ports []int) (*process, error) {
		return fakeServer(dir, "serve", ports)
	}))
	stopFake(t, p, ports)
	if err == nil {
		t.Fatal("the start succeeded on a stolen port")
	}
	if len(attempts) != bindAttempts {
		t.Errorf("%d attempts, want %d", len(attempts), bindAttempts)
	}
	for _, want := range []string{"failed to bind its ports 5 times", "exited during start-up", "bind: address already in use"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestStartOnPortsNoRetryOnOtherFailure: a server that fails for another
// reason than a port is not started again.
func TestStartOnPortsNoRetryOnOtherFailure(t *testing.T) {
	dir := t.TempDir()
	var attempts [][]int
	p, ports, err := startOnPorts(1, stealFirst(t, 0, &attempts, func(ports []int) (*process, error) {
		return fakeServer(dir, "fail", ports)
	}))
	stopFake(t, p, ports)
	if err == nil || !strings.Contains(err.Error(), "the configuration is broken") {
		t.Fatalf("error %v, want the server's log", err)
	}
	if len(attempts) != 1 {
		t.Errorf("%d attempts, want 1", len(attempts))
	}
}

// TestServersStartAgainOnBindFailure: etcd, kube-apiserver and the
// registry, each finding its first port taken at the first attempt, exit
// with a bind failure and are started again on other ports.
func TestServersStartAgainOnBindFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd, kube-apiserver and the registry")
	}
	binDir, err := DefaultBinDir()
	if err != nil {
		t.Skip(err)
	}
	regBin, err := DefaultRegistryBin()
	if err != nil {
		if os.Getenv("XPKG_BINARY") != "" { // make test builds it first
			t.Fatal(err)
		}
		t.Skip(err)
	}
	var stolen int
	beforeStart = func(attempt int, ports []int) {
		if attempt > 1 {
			return
		}
		stolen = ports[0]
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(ports[0]))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
	}
	t.Cleanup(func() { beforeStart = nil })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	check := func(name, bin string, p *process, ports []*Port, address string, err error) {
		t.Helper()
		t.Cleanup(func() {
			if p != nil {
				_ = stopPID(p.pid, bin)
			}
			releasePorts(ports)
		})
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(address, ":"+strconv.Itoa(stolen)) {
			t.Errorf("%s serves at %s, the port taken at its first attempt", name, address)
		}
		failed, err := os.ReadFile(filepath.Join(dir, name+".log.1"))
		if err != nil || !strings.Contains(string(failed), "bind: ") {
			t.Errorf("%s's first attempt: log %q (%v), want its bind failure", name, failed, err)
		}
		t.Logf("%s: first attempt on port %d: %s", name, stolen, tail(filepath.Join(dir, name+".log.1"), 1))
	}

	etcdBin := filepath.Join(binDir, "etcd")
	p, ports, etcdURL, err := startEtcd(ctx, dir, etcdBin, false)
	check("etcd", etcdBin, p, ports, etcdURL, err)

	files, err := writeAPIServerFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	apiBin := filepath.Join(binDir, "kube-apiserver")
	p, ports, url, err := startAPIServer(ctx, dir, apiBin, etcdURL, files, false)
	check("kube-apiserver", apiBin, p, ports, url, err)

	p, ports, reg, err := startRegistry(ctx, dir, regBin, false)
	host := ""
	if reg != nil {
		host = reg.Host
	}
	check("registry", regBin, p, ports, host, err)
}
