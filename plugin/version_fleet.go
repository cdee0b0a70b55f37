package plugin

import (
	"context"
	"fmt"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/version"
)

// FleetVersionReport is version -o json|yaml across several clusters.
type FleetVersionReport struct {
	ClientVersion version.Info   `json:"clientVersion"`
	Clusters      []fleetVersion `json:"clusters"`
	Errors        []fleetFailure `json:"errors,omitempty"`
}

type fleetVersion struct {
	Cluster string `json:"cluster"`
	*action.VersionReport
}

// runFleet is version on several clusters: the client's version, then a
// row per cluster with its server version and the package APIs it serves
// (each group's preferred version).
func (o *VersionOptions) runFleet(ctx context.Context, f *action.Fleet) error {
	answers := askFleet(ctx, f, func(_ context.Context, cfg *action.Config) (*action.VersionReport, error) {
		r := &action.VersionReport{}
		return r, action.ServerVersion(cfg, r)
	})
	failed := map[string]error{}
	rep := FleetVersionReport{ClientVersion: version.Get(), Clusters: []fleetVersion{}}
	for _, a := range answers {
		if a.Err != nil {
			failed[a.Context] = a.Err
			rep.Errors = append(rep.Errors, newFleetFailure(a.Context, a.Err))
			continue
		}
		a.Value.ClientVersion = rep.ClientVersion
		rep.Clusters = append(rep.Clusters, fleetVersion{a.Context, a.Value})
	}
	if o.Output != "" {
		if err := printers.PrintObject(o.Out, o.Output, rep); err != nil {
			return err
		}
		return action.FleetError(failed)
	}
	if err := o.printHuman(action.VersionReport{ClientVersion: rep.ClientVersion}, false); err != nil {
		return err
	}
	t := printers.NewTable("CLUSTER", "SERVER-VERSION", "PACKAGE-APIS")
	for _, a := range answers {
		if a.Err != nil {
			t.Row(failedRow(a.Context, a.Err, 3)...)
			continue
		}
		t.Row(a.Context, a.Value.ServerVersion.GitVersion, servedAPIs(a.Value))
	}
	if err := t.Render(o.Out); err != nil {
		return err
	}
	return action.FleetError(failed)
}

// servedAPIs names each package API group served at its preferred
// version, or says none is.
func servedAPIs(r *action.VersionReport) string {
	if len(r.PackageAPIs) == 0 {
		return "none (is Crossplane installed?)"
	}
	var out []string
	for _, api := range r.PackageAPIs {
		out = append(out, fmt.Sprintf("%s/%s", api.Group, api.PreferredVersion))
	}
	return strings.Join(out, ", ")
}
