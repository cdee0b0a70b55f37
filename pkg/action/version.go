package action

import (
	"fmt"

	apimachineryversion "k8s.io/apimachinery/pkg/version"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/version"
)

// VersionReport is the plugin's version and, from the cluster, the API
// server's and the package APIs it serves.
type VersionReport struct {
	ClientVersion version.Info              `json:"clientVersion"`
	ServerVersion *apimachineryversion.Info `json:"serverVersion,omitempty"`
	PackageAPIs   []cluster.ServedAPI       `json:"packageAPIs,omitempty"`
}

// ServerVersion fills in what the cluster of cfg says of itself: its
// version and the package APIs it serves (discovered afresh when the
// cached discovery knows none).
func ServerVersion(cfg *Config, report *VersionReport) error {
	dc, err := cfg.apiClients().Discovery()
	if err != nil {
		return err
	}
	sv, err := dc.ServerVersion()
	if err != nil {
		return fmt.Errorf("read server version: %w", err)
	}
	report.ServerVersion = sv
	apis, err := cluster.DiscoverPackageAPIsFresh(dc)
	if err != nil {
		return err
	}
	report.PackageAPIs = apis
	return nil
}
