package action

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/ocicopy"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/faultproxy"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// drippingSource is a package behind a proxy that sends the first KiB of
// its layer, then the rest one byte every tenth of a second: its reference
// there. The package opens, and its meta object (64 KiB of it, which gzip
// cannot shrink much) is read from the drip.
func drippingSource(t *testing.T) string {
	t.Helper()
	reg := fixture.NewRegistry(t)
	r := rand.New(rand.NewPCG(4, 0))
	noise := make([]byte, 64<<10)
	for i := range noise {
		noise[i] = byte('a' + r.IntN(26))
	}
	meta := "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: provider\n  annotations:\n    meta.crossplane.io/description: " + string(noise) + "\n"
	img, err := fixture.Image([]byte(meta))
	if err != nil {
		t.Fatal(err)
	}
	if err := fixture.Push(reg.Host+"/drip/provider:v1", img); err != nil {
		t.Fatal(err)
	}
	p, err := faultproxy.Start(reg.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	p.Add(faultproxy.Fault{Match: "GET /v2/drip/provider/blobs/", Drip: 100 * time.Millisecond, StallAfter: 1 << 10})
	return p.Host + "/drip/provider:v1"
}

// planWithin plans a mirror of ref, failing the test if that takes longer
// than a bound far beyond the budgets the tests set.
func planWithin(t *testing.T, ctx context.Context, ref string, retry source.Retry) error {
	t.Helper()
	cfg := &Config{Limits: xpkg.DefaultLimits, Source: source.Options{Keychain: authn.NewMultiKeychain(), Retry: retry}}
	mr := NewMirror(cfg)
	mr.To = "mirror.example.com/xp"
	done := make(chan error, 1)
	go func() {
		_, err := mr.Plan(ctx, []string{ref})
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatalf("still planning the mirror of %s after a minute", ref)
		return nil
	}
}

// TestMirrorOfADrippingSource: a source that drips the package it is
// asked for is refused within the budget (so generous, 10s, that the
// tries end the read, each cut for its rate, however loaded the machine),
// naming the source and its rate;
// interrupted meanwhile, the mirror says it did not read the package, not
// that the package cannot be installed.
func TestMirrorOfADrippingSource(t *testing.T) {
	t.Run("budget", func(t *testing.T) {
		ref := drippingSource(t)
		err := planWithin(t, context.Background(), ref, source.Retry{Attempts: 3, MaxTime: 10 * time.Second, Stall: time.Second})
		t.Log(err)
		if err == nil || !strings.Contains(err.Error(), ref+" cannot be read") || !strings.Contains(err.Error(), "slower than") {
			t.Errorf("err = %v, want %s refused for its rate", err, ref)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		ref := drippingSource(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		time.AfterFunc(time.Second, cancel)
		err := planWithin(t, ctx, ref, source.Retry{})
		t.Log(err)
		if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "is not a package Crossplane can install") {
			t.Errorf("err = %v, want it interrupted", err)
		}
	})
}

// TestMirrorErrorOfACorruptSource: a package not mirrored because its
// source serves a blob unlike its digest does not offer a run again,
// which would fail the same way.
func TestMirrorErrorOfACorruptSource(t *testing.T) {
	p := &MirrorPackage{Package: "example.com/provider", Version: "v1"}
	corrupt := &ocicopy.SourceError{Source: "example.com/provider@sha256:1", Blob: v1.Hash{Algorithm: "sha256", Hex: "2"}, Corrupt: true, Err: errors.New("got sha256:3")}
	msg := (&MirrorError{Total: 1, Failed: []MirrorFailure{{Package: p, Err: corrupt}}}).Error()
	if strings.Contains(msg, "run the command again") || !strings.Contains(msg, "the source example.com/provider@sha256:1") {
		t.Errorf("a corrupt source: %s", msg)
	}
	msg = (&MirrorError{Total: 1, Failed: []MirrorFailure{{Package: p, Err: errors.New("the destination refused it")}}}).Error()
	if !strings.Contains(msg, "run the command again to finish") {
		t.Errorf("a destination's fault: %s", msg)
	}
}
