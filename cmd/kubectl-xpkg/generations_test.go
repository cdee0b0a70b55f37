package main

import (
	"context"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// TestCrossplaneV1Generations: on Crossplane v1.14 Functions are served only
// at v1beta1, on v1.20 at v1 too; discovery picks the version to write.
func TestCrossplaneV1Generations(t *testing.T) {
	testenv.Get(t)
	bin, err := testenv.DefaultBinDir()
	if err != nil {
		t.Fatal(err)
	}
	for version, fnAPI := range map[string]string{"v1.14.0": "pkg.crossplane.io/v1beta1", "v1.20.0": "pkg.crossplane.io/v1"} {
		t.Run(version, func(t *testing.T) {
			env, err := testenv.Start(context.Background(), testenv.Options{Dir: t.TempDir(), BinDir: bin, NoRegistry: true, CrossplaneVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = env.Stop() })
			x := clitest.New(t).WithEnv(env)
			r := x.Run("install", "function", "xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform:v0.9.0", "--dry-run=server", "-o", "yaml").Succeeds(t)
			contains(t, "function", r.Stdout, "apiVersion: "+fnAPI+"\nkind: Function\n")
			r = x.Run("install", "provider", "xpkg.crossplane.io/crossplane-contrib/provider-nop:v0.4.0", "--dry-run=server", "-o", "yaml").Succeeds(t)
			contains(t, "provider", r.Stdout, "apiVersion: pkg.crossplane.io/v1\nkind: Provider\n", "revisionHistoryLimit: 1")
		})
	}
}
