package testenv

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Users and contexts written to the environment's kubeconfig.
const (
	// ContextAdmin authenticates with a client certificate in system:masters.
	ContextAdmin = "xpkg-admin"
	// ContextUser authenticates as "xpkg-dev", who has no RBAC permissions
	// beyond discovery: the identity for RBAC denial tests.
	ContextUser = "xpkg-dev"
	// ContextToken authenticates as an admin with a bearer token.
	ContextToken = "xpkg-token"

	clusterName = "xpkg-test"
	userDev     = "xpkg-dev"
)

// startEtcd runs etcd on two reserved ports (client, peer); the ports are
// returned for the caller to release once etcd is stopped.
func startEtcd(ctx context.Context, dir, bin string, detached bool) (*process, []*Port, string, error) {
	var client string
	p, ports, err := startOnPorts(2, func(ports []int) (*process, error) {
		client = "http://127.0.0.1:" + strconv.Itoa(ports[0])
		peer := "http://127.0.0.1:" + strconv.Itoa(ports[1])
		// A fresh data directory for every attempt: one that an attempt
		// which failed to bind left behind would record its peer URL.
		data := filepath.Join(dir, "etcd-data")
		if err := os.RemoveAll(data); err != nil {
			return nil, err
		}
		p, err := startProcess(dir, "etcd", bin, []string{
			"--name=xpkg", "--data-dir=" + data,
			"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
			"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=xpkg=" + peer,
			"--unsafe-no-fsync", "--log-level=warn",
		}, detached)
		if err != nil {
			return nil, err
		}
		httpc := &http.Client{Timeout: time.Second}
		return p, p.waitReady(ctx, StartBound, func(ctx context.Context) bool {
			return httpOK(ctx, httpc, client+"/health")
		})
	})
	return p, ports, client, err
}

// apiserverFiles are the credentials the API server and its clients use.
type apiserverFiles struct {
	ca, serverCert, serverKey, saPub, saKey, tokens string
	caPEM                                           []byte
	admin, dev                                      *keyPair
	adminToken                                      string
}

func writeAPIServerFiles(dir string) (*apiserverFiles, error) {
	ca, err := newCA()
	if err != nil {
		return nil, err
	}
	f := &apiserverFiles{caPEM: ca.certPEM, ca: filepath.Join(dir, "ca.crt")}
	if err := os.WriteFile(f.ca, ca.certPEM, 0o600); err != nil {
		return nil, err
	}
	server, err := issue(ca, certSpec{commonName: "kube-apiserver", server: true,
		ips: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, dnsNames: []string{"localhost"}})
	if err != nil {
		return nil, err
	}
	if f.serverCert, f.serverKey, err = server.write(dir, "apiserver"); err != nil {
		return nil, err
	}
	if f.admin, err = issue(ca, certSpec{commonName: "xpkg-admin", orgs: []string{"system:masters"}, client: true}); err != nil {
		return nil, err
	}
	if f.dev, err = issue(ca, certSpec{commonName: userDev, orgs: []string{"xpkg:developers"}, client: true}); err != nil {
		return nil, err
	}
	if f.saPub, f.saKey, err = writeServiceAccountKeys(dir); err != nil {
		return nil, err
	}
	f.adminToken = randomString(32)
	f.tokens = filepath.Join(dir, "tokens.csv")
	line := fmt.Sprintf("%s,xpkg-token-admin,xpkg-token-admin,\"system:masters\"\n", f.adminToken)
	if err := os.WriteFile(f.tokens, []byte(line), 0o600); err != nil {
		return nil, err
	}
	return f, nil
}

// startAPIServer runs kube-apiserver on a reserved port, returned for the
// caller to release once the server is stopped.
func startAPIServer(ctx context.Context, dir, bin, etcdURL string, f *apiserverFiles, detached bool) (*process, []*Port, string, error) {
	httpc, err := adminHTTPClient(f)
	if err != nil {
		return nil, nil, "", err
	}
	var url string
	p, ports, err := startOnPorts(1, func(ports []int) (*process, error) {
		url = "https://127.0.0.1:" + strconv.Itoa(ports[0])
		p, err := startProcess(dir, "kube-apiserver", bin, []string{
			"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(ports[0]),
			"--etcd-servers=" + etcdURL,
			"--tls-cert-file=" + f.serverCert, "--tls-private-key-file=" + f.serverKey,
			"--client-ca-file=" + f.ca, "--token-auth-file=" + f.tokens,
			"--service-account-issuer=https://kubernetes.default.svc",
			"--service-account-key-file=" + f.saPub, "--service-account-signing-key-file=" + f.saKey,
			"--service-cluster-ip-range=10.0.0.0/24",
			"--authorization-mode=RBAC",
			"--disable-admission-plugins=ServiceAccount",
			// Nothing here runs pods or services: skip the endpoint bookkeeping.
			"--endpoint-reconciler-type=none",
			"--cert-dir=" + filepath.Join(dir, "apiserver-certs"),
		}, detached)
		if err != nil {
			return nil, err
		}
		return p, p.waitReady(ctx, StartBound, func(ctx context.Context) bool {
			return httpOK(ctx, httpc, url+"/readyz")
		})
	})
	return p, ports, url, err
}

func adminHTTPClient(f *apiserverFiles) (*http.Client, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(f.caPEM)
	cert, err := tls.X509KeyPair(f.admin.certPEM, f.admin.keyPEM)
	if err != nil {
		return nil, err
	}
	return &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}},
	}}, nil
}

func httpOK(ctx context.Context, c *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// writeKubeconfig writes one cluster and three contexts (admin by client
// certificate, non-admin by client certificate, admin by bearer token), with
// every credential embedded so the file can be copied anywhere.
func writeKubeconfig(path, server string, f *apiserverFiles) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[clusterName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: f.caPEM}
	cfg.AuthInfos[ContextAdmin] = &clientcmdapi.AuthInfo{ClientCertificateData: f.admin.certPEM, ClientKeyData: f.admin.keyPEM}
	cfg.AuthInfos[ContextUser] = &clientcmdapi.AuthInfo{ClientCertificateData: f.dev.certPEM, ClientKeyData: f.dev.keyPEM}
	cfg.AuthInfos[ContextToken] = &clientcmdapi.AuthInfo{Token: f.adminToken}
	for _, name := range []string{ContextAdmin, ContextUser, ContextToken} {
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: clusterName, AuthInfo: name, Namespace: "default"}
	}
	cfg.CurrentContext = ContextAdmin
	return clientcmd.WriteToFile(*cfg, path)
}
