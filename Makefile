# kubectl-xpkg. `make help` lists the targets.

VERSION    ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
GIT_COMMIT ?= $(shell git rev-parse --short HEAD 2>/dev/null)
BUILD_DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
VERSION_PKG = github.com/kubectl-xpkg/kubectl-xpkg/pkg/version
LDFLAGS    := -s -w -X $(VERSION_PKG).version=$(VERSION) -X $(VERSION_PKG).gitCommit=$(GIT_COMMIT) -X $(VERSION_PKG).buildDate=$(BUILD_DATE)
BIN        := bin/kubectl-xpkg
# Where make install puts the man pages: beside the bin/ directory go install
# writes to, where man finds them for a directory on PATH (GOPATH/bin ->
# GOPATH/share/man).
GOBIN_DIR   = $(or $(shell go env GOBIN),$(shell go env GOPATH)/bin)
MANDIR     ?= $(GOBIN_DIR)/../share/man/man1
# Extra flags for go test, e.g. make test GOTESTFLAGS='-run TestVersion'
GOTESTFLAGS ?=
# The Crossplane releases the end-to-end tests run against, each built from
# its module in hack/crossplane/, e.g. make e2e CROSSPLANE_VERSIONS=v2.4.2
CROSSPLANE_VERSIONS ?= v2.3.4 v2.4.2
export CROSSPLANE_VERSIONS

export CGO_ENABLED ?= 0

.PHONY: help build install test e2e demo fuzz bench bench-extract bench-diff release-tools release-snapshot krew-manifest release-check docs lint fmt dev-env dev-env-down k8s-bins e2e-bins registry-bin clean distclean

help: ## Show this help.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-17s %s\n", $$1, $$2}'

build: ## Build bin/kubectl-xpkg, version-stamped.
	go build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/kubectl-xpkg

install: ## Install kubectl-xpkg into $(go env GOBIN) (or GOPATH/bin), where kubectl finds plugins on PATH, and its man pages into MANDIR.
	go install -trimpath -ldflags "$(LDFLAGS)" ./cmd/kubectl-xpkg
	go run -ldflags "$(LDFLAGS)" ./hack/docgen -man "$(MANDIR)"
	@echo "man pages in $(MANDIR) (man kubectl-xpkg; MANDIR=... to put them elsewhere)"

docs: ## Generate docs/reference/ (a page per command), docs/rules.md and docs/exit-codes.md from the command tree and the rule and exit-code tables.
	go run ./hack/docgen

k8s-bins: ## Build (or reuse cached) kube-apiserver, etcd, kubectl and kube-controller-manager for the local cluster.
	hack/build-k8s.sh >/dev/null

e2e-bins: ## Build (or reuse cached) the real Crossplane binaries the end-to-end tests run (CROSSPLANE_VERSIONS).
	for v in $(CROSSPLANE_VERSIONS); do CROSSPLANE_VERSION=$$v hack/build-crossplane.sh >/dev/null || exit 1; done

registry-bin: ## Build (or reuse cached) the OCI registry (CNCF distribution v3) the tests, the demo and dev-env run.
	hack/build-registry.sh >/dev/null

test: build k8s-bins e2e-bins registry-bin ## Run every test: unit, integration and end-to-end, each package against a local cluster and registry of its own (TEST_TIMEOUT per go test run, default 30m).
	GOTESTFLAGS="$(GOTESTFLAGS)" hack/test.sh $(BIN)

e2e: build k8s-bins e2e-bins registry-bin ## Run only the end-to-end tests against the real Crossplane package manager (make test runs them too).
	E2E_ONLY=1 GOTESTFLAGS="$(GOTESTFLAGS)" hack/test.sh $(BIN)

demo: build k8s-bins e2e-bins registry-bin ## A narrated, self-checking session of every verb against a local cluster, registry and the real Crossplane (DEMOFLAGS=-keep leaves them running).
	go run ./hack/demo -bin $(BIN) $(DEMOFLAGS)

fuzz: ## Run every fuzz target's engine for FUZZTIME each (default 10s); make test runs their seed corpora and saved inputs.
	hack/fuzz.sh

bench: build k8s-bins registry-bin ## Run every benchmark (startup, extract, diff, describe round trips, outdated on 50 packages and on a family of 150 members, plans at cluster scale, upgrade --all on 50 to 200 providers, doctor on 500 to 2,000 CRDs, plan -f on 50 and 200 package manifests, mirror of a 4-package closure against crane copy) and write BENCHMARKS.md; BENCHFLAGS=-quick for 3 runs.
	go run ./hack/bench -bin $(BIN) -k8s-bin $$(hack/build-k8s.sh) $(BENCHFLAGS)

bench-extract: build ## Time and peak RSS of extract against fetch+gunzip, on provider-aws and a 10x package.
	go run ./hack/bench/extract -bin $(BIN)

bench-diff: build ## Time and peak RSS of diff against GNU diff -u, on provider-aws v0.50.0..v0.58.0 and a 10x pair.
	go run ./hack/bench/diff -bin $(BIN)

# The Krew manifest's tag: by default the version of the release in dist/.
TAG ?= v$(shell sed -n 's/.*"version":"\([^"]*\)".*/\1/p' dist/metadata.json 2>/dev/null)

release-tools: ## Build (or reuse cached) goreleaser, krew and validate-krew-manifest, pinned in hack/tools/go.mod.
	hack/release/tools.sh >/dev/null

release-snapshot: ## Build every release archive and checksums.txt into dist/ with goreleaser, publishing nothing.
	"$$(hack/release/tools.sh goreleaser)" release --snapshot --clean

krew-manifest: ## Render krew/xpkg.yaml from dist/'s archives into dist/krew/xpkg.yaml (TAG=v0.1.0 for a release).
	go run ./hack/release/krew-manifest -tag $(TAG) -dist dist

release-check: ## goreleaser check, a snapshot release, the Krew manifest validated and installed offline, kubectl xpkg through kubectl (HOST_ONLY=1: host target only).
	hack/release/check.sh

lint: ## gofmt and go vet.
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt wants changes in:"; echo "$$out"; exit 1; fi
	go vet ./...

fmt: ## Format the Go sources.
	gofmt -w $$(git ls-files '*.go')

dev-env: build k8s-bins registry-bin ## Start a local cluster + registry with the sample packages, run the plugin against it, print the exports.
	hack/dev-env.sh $(BIN)

dev-env-down: ## Stop the environment dev-env started.
	go run ./hack/devenv down -dir _output/devenv

clean: dev-env-down ## Stop the dev environment and remove build outputs.
	go run ./hack/devenv down -dir _output/testenv
	go run ./hack/devenv down -dir _output/testenv-crossplane
	go run ./hack/devenv down -dir _output/demo/env
	rm -rf bin dist _output

distclean: clean ## Also remove the cached kube-apiserver, etcd, kubectl, kube-controller-manager, crossplane, registry and the release tools.
	rm -rf hack/bin
