package clitest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// RunTTY runs kubectl-xpkg with stdout on a pseudo-terminal, as a user's
// shell does, so that terminal-only behaviour (colour) shows; stderr is
// collected apart. Stdout holds what the terminal received.
func (x *Test) RunTTY(args ...string) *Result {
	x.t.Helper()
	return x.RunTTYColumns(0, args...)
}

// RunTTYColumns is RunTTY on a terminal cols columns wide (0: a terminal
// that reports no size, as a fresh pseudo-terminal does).
func (x *Test) RunTTYColumns(cols uint16, args ...string) *Result {
	x.t.Helper()
	master, slave, err := openPTY()
	if err != nil {
		x.t.Fatalf("open a pseudo-terminal: %v", err)
	}
	defer master.Close()
	if err := unix.IoctlSetWinsize(int(master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: cols, Row: 50}); err != nil {
		x.t.Fatalf("size the pseudo-terminal: %v", err)
	}
	r := x.prepare(Binary(x.t), args)
	r.cmd.Stdout = slave
	if err := r.cmd.Start(); err != nil {
		x.t.Fatalf("run %v: %v", args, err)
	}
	r.reap()
	slave.Close()
	var out bytes.Buffer
	_, err = io.Copy(&out, master)
	if err != nil && !errors.Is(err, syscall.EIO) { // EIO: the other end closed
		x.t.Fatalf("read the terminal: %v", err)
	}
	res := r.Wait()
	res.Stdout = out.String()
	return res
}

// openPTY opens a pseudo-terminal pair through /dev/ptmx.
func openPTY() (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("unlock: %w", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("number: %w", err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, nil, err
	}
	return master, slave, nil
}
