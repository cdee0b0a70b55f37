package plugin

import (
	"strings"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// memberGetter is a fleet member's kubectl flags: the user's, with the
// member's context, over the kubeconfig the fleet loaded once. Each
// ConfigFlags would load and parse the whole kubeconfig again, which for
// twenty contexts holds twenty sets of credentials: after the reads
// themselves, the largest share of a fleet read's CPU. Discovery and the
// REST mapper stay ConfigFlags' (its disk cache); a fleet discovers each
// API server once.
type memberGetter struct {
	*genericclioptions.ConfigFlags
	loader clientcmd.ClientConfig
}

// newMemberGetter is flags (a member's, its Context set) over raw, the
// kubeconfig as loaded (its files' relative paths resolved).
func newMemberGetter(flags *genericclioptions.ConfigFlags, raw clientcmdapi.Config) *memberGetter {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if flags.KubeConfig != nil {
		rules.ExplicitPath = *flags.KubeConfig
	}
	return &memberGetter{ConfigFlags: flags, loader: clientcmd.NewNonInteractiveClientConfig(raw, "", configOverrides(flags), rules)}
}

func (m *memberGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig { return m.loader }

func (m *memberGetter) ToRESTConfig() (*rest.Config, error) {
	c, err := m.loader.ClientConfig()
	if err != nil {
		return nil, err
	}
	if m.WrapConfigFn != nil {
		return m.WrapConfigFn(c), nil
	}
	return c, nil
}

// configOverrides are the kubeconfig overrides f's flags make, as
// ConfigFlags makes them (TestMemberGetterAsConfigFlags holds the two
// together).
func configOverrides(f *genericclioptions.ConfigFlags) *clientcmd.ConfigOverrides {
	o := &clientcmd.ConfigOverrides{ClusterDefaults: clientcmd.ClusterDefaults}
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	if f.CertFile != nil {
		o.AuthInfo.ClientCertificate, o.AuthInfo.ClientCertificateData = *f.CertFile, nil
	}
	if f.KeyFile != nil {
		o.AuthInfo.ClientKey, o.AuthInfo.ClientKeyData = *f.KeyFile, nil
	}
	if f.BearerToken != nil {
		o.AuthInfo.Token, o.AuthInfo.TokenFile = *f.BearerToken, ""
	}
	set(&o.AuthInfo.Impersonate, f.Impersonate)
	if f.ImpersonateUserExtra != nil && len(*f.ImpersonateUserExtra) > 0 {
		extra := map[string][]string{}
		for _, e := range *f.ImpersonateUserExtra {
			if k, v, ok := strings.Cut(e, "="); ok {
				extra[k] = append(extra[k], v)
			}
		}
		o.AuthInfo.ImpersonateUserExtra = extra
	}
	set(&o.AuthInfo.ImpersonateUID, f.ImpersonateUID)
	if f.ImpersonateGroup != nil {
		o.AuthInfo.ImpersonateGroups = *f.ImpersonateGroup
	}
	set(&o.AuthInfo.Username, f.Username)
	set(&o.AuthInfo.Password, f.Password)
	set(&o.ClusterInfo.Server, f.APIServer)
	set(&o.ClusterInfo.TLSServerName, f.TLSServerName)
	set(&o.ClusterInfo.CertificateAuthority, f.CAFile)
	if f.Insecure != nil {
		o.ClusterInfo.InsecureSkipTLSVerify = *f.Insecure
	}
	if f.DisableCompression != nil {
		o.ClusterInfo.DisableCompression = *f.DisableCompression
	}
	set(&o.CurrentContext, f.Context)
	set(&o.Context.Cluster, f.ClusterName)
	set(&o.Context.AuthInfo, f.AuthInfoName)
	set(&o.Context.Namespace, f.Namespace)
	set(&o.Timeout, f.Timeout)
	return o
}
