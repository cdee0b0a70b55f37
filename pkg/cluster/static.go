package cluster

// StaticDialect is the newest generation (pkg.crossplane.io, Crossplane v2)
// as it is served, for building objects without asking a cluster: a client
// dry run that writes a package object for GitOps.
func StaticDialect() Dialect {
	res := map[string]string{
		"Provider": "providers", "Configuration": "configurations", "Function": "functions",
		"ProviderRevision": "providerrevisions", "ConfigurationRevision": "configurationrevisions",
		"FunctionRevision": "functionrevisions",
	}
	v1 := ServedVersion{Version: "v1", Resources: res}
	for k := range res {
		v1.Kinds = append(v1.Kinds, k)
	}
	v1beta1 := ServedVersion{Version: "v1beta1", Kinds: []string{"ImageConfig", "Lock"}, Resources: map[string]string{"ImageConfig": "imageconfigs", "Lock": "locks"}}
	gen, _ := GenerationOf("pkg.crossplane.io")
	return newPkgDialect(ServedAPI{Generation: gen, PreferredVersion: "v1", Versions: []ServedVersion{v1, v1beta1}})
}
