package plugin

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
)

// TestMemberGetterAsConfigFlags: a fleet member's getter, over the
// kubeconfig loaded once, resolves every kubectl flag to the REST
// configuration and namespace ConfigFlags resolves them to when it loads
// the kubeconfig itself: the two are one behaviour.
func TestMemberGetterAsConfigFlags(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), []byte("not read"), 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "config")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
current-context: a
clusters:
- name: a
  cluster: {server: "https://a.example.org:6443", certificate-authority: ca.crt}
- name: b
  cluster: {server: "https://b.example.org", insecure-skip-tls-verify: true}
users:
- name: token
  user: {token: secret}
- name: exec
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: get-token, args: [--cluster, b], interactiveMode: Never}
contexts:
- name: a
  context: {cluster: a, user: token, namespace: team-a}
- name: b
  context: {cluster: b, user: exec}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	for name, set := range map[string]func(f *genericclioptions.ConfigFlags){
		"no flags": func(*genericclioptions.ConfigFlags) {},
		"identity": func(f *genericclioptions.ConfigFlags) {
			f.Impersonate, f.ImpersonateUID = str("jane"), str("42")
			f.ImpersonateGroup = &[]string{"ops", "dev"}
			f.ImpersonateUserExtra = &[]string{"scope=a", "scope=b", "broken"}
			f.BearerToken = str("other")
		},
		"cluster": func(f *genericclioptions.ConfigFlags) {
			f.APIServer, f.TLSServerName, f.CAFile = str("https://c.example.org"), str("c.internal"), str(filepath.Join(dir, "ca.crt"))
			f.Namespace, f.Timeout = str("team-b"), str("7s")
			disable := true
			f.DisableCompression = &disable
		},
		"context parts": func(f *genericclioptions.ConfigFlags) {
			f.ClusterName, f.AuthInfoName = str("b"), str("token")
			f.CertFile, f.KeyFile = str("/tls/client.crt"), str("/tls/client.key")
		},
		"basic auth": func(f *genericclioptions.ConfigFlags) {
			f.Username, f.Password = str("admin"), str("pw")
			insecure := true
			f.Insecure = &insecure
		},
	} {
		for _, context := range []string{"a", "b"} {
			t.Run(name+"/"+context, func(t *testing.T) {
				root := genericclioptions.NewConfigFlags(true)
				root.KubeConfig = &kubeconfig
				raw, err := root.ToRawKubeConfigLoader().RawConfig()
				if err != nil {
					t.Fatal(err)
				}
				r := &Root{ConfigFlags: root}
				set(root)
				want := r.memberFlags(context)
				got := newMemberGetter(r.memberFlags(context), raw)
				wantCfg, wantErr := want.ToRESTConfig()
				gotCfg, gotErr := got.ToRESTConfig()
				if (wantErr == nil) != (gotErr == nil) {
					t.Fatalf("errors: %v, ConfigFlags %v", gotErr, wantErr)
				}
				if wantErr == nil && !reflect.DeepEqual(rest.CopyConfig(gotCfg), rest.CopyConfig(wantCfg)) {
					t.Errorf("REST configuration\n got %+v\nwant %+v", gotCfg, wantCfg)
				}
				gotNS, gotExplicit, _ := got.ToRawKubeConfigLoader().Namespace()
				wantNS, wantExplicit, _ := want.ToRawKubeConfigLoader().Namespace()
				if gotNS != wantNS || gotExplicit != wantExplicit {
					t.Errorf("namespace %q (explicit %v), ConfigFlags %q (%v)", gotNS, gotExplicit, wantNS, wantExplicit)
				}
			})
		}
	}
}
