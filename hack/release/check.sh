#!/usr/bin/env bash
# Release check: builds the release tools (cached), checks .goreleaser.yaml,
# builds a snapshot release into dist/, renders the Krew manifest for it,
# validates the manifest with krew's validator, installs every archive with
# krew offline, and runs `kubectl xpkg version --client` and the completion
# helper through kubectl's plugin discovery, and looks the man pages up as
# the manifest's caveats install them. Temporary files go to one temp
# directory, removed on exit; dist/ stays for inspection.
#
#   hack/release/check.sh              all six targets, as a release builds them
#   HOST_ONLY=1 hack/release/check.sh  only the host's target: the others get
#                                      an all-zero sha256 and are not installed
#   KUBECTL=/path/to/kubectl           use this kubectl instead of the one
#                                      hack/build-k8s.sh builds (or caches)
#
# GoReleaser (OSS) has no option to restrict `release` to one target, so
# HOST_ONLY feeds it, through `-f -`, .goreleaser.yaml with goos/goarch cut to
# the host's.
set -Eeuo pipefail
cd "$(dirname "$0")/../.."

step_no=0 step_name="" step_start=0 start=$(date +%s)
step() {
  local now
  now=$(date +%s)
  [ -z "$step_name" ] || echo "    ok ($((now - step_start))s)"
  step_no=$((step_no + 1)) step_name=$1 step_start=$now
  printf '\n==> [%d/9] %s\n' "$step_no" "$1"
}
fail() {
  echo "release-check: FAILED in [$step_no/9] $step_name: $*" >&2
  exit 1
}
# Report once, from the script's own shell, not from each $(...) it unwinds.
trap '[ "$BASH_SUBSHELL" -gt 0 ] || echo "release-check: FAILED in [$step_no/9] $step_name (a command exited $?)" >&2' ERR
work=$(mktemp -d "${TMPDIR:-/tmp}/release-check.XXXXXX")
trap 'rm -rf "$work"' EXIT

# krew runs in a network namespace with only loopback when unshare allows it,
# which proves the install needs no network (no index, no git, no download).
offline=()
if unshare -n true 2>/dev/null; then
  offline=(unshare -n --)
elif unshare -rn true 2>/dev/null; then
  offline=(unshare -rn --)
fi

# krew_in ROOT CMD...: CMD with a clean environment: KREW_ROOT=ROOT, PATH =
# ROOT/bin, kubectl, and /usr/bin:/bin for the helper's sh.
krew_in() {
  local root=$1
  shift
  "${offline[@]}" env -i HOME="$work/home" KREW_ROOT="$root" KREW_NO_UPGRADE_CHECK=1 \
    PATH="$root/bin:$work/path:/usr/bin:/bin" "$@" </dev/null
}

build_release() {
  if [ "${HOST_ONLY:-0}" != 1 ]; then
    "$goreleaser" release --snapshot --clean
    return
  fi
  local os arch cfg
  os=$(go env GOOS) arch=$(go env GOARCH)
  cfg=$(sed -e "s/^    goos: \[.*\]$/    goos: [$os]/" -e "s/^    goarch: \[.*\]$/    goarch: [$arch]/" .goreleaser.yaml)
  [ "$(grep -cxE "    goos: \[$os\]|    goarch: \[$arch\]" <<<"$cfg")" = 2 ] ||
    fail "could not cut the goos/goarch lines of .goreleaser.yaml to $os/$arch"
  "$goreleaser" release --snapshot --clean -f - <<<"$cfg"
}

# check_archive ARCHIVE: install it with krew as its platform would, check the
# files krew extracted and the binary's build settings.
check_archive() {
  local archive=$1 name os arch root store bin helper info f
  name=$(basename "$archive") && name=${name%.tar.gz} && name=${name%.zip}
  arch=${name##*_} && os=${name%_*} && os=${os##*_}
  root="$work/krew-$os-$arch"
  krew_in "$root" env KREW_OS="$os" KREW_ARCH="$arch" "$krew" install \
    --manifest="$manifest" --archive="$archive" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log"; fail "krew could not install $archive"; }
  store="$root/store/xpkg/$tag" bin=kubectl-xpkg helper=kubectl_complete-xpkg
  [ "$os" != windows ] || bin+=.exe helper+=.cmd
  for f in "$bin" "$helper" LICENSE README.md man/man1/kubectl-xpkg.1 man/man1/kubectl-xpkg-upgrade.1; do
    [ -f "$store/$f" ] || fail "$archive: krew installed no $f in $store"
  done
  [ -e "$root/bin/$bin" ] || fail "$archive: krew linked no $bin into $root/bin"
  info=$(go version -m "$store/$bin")
  for f in "GOOS=$os" "GOARCH=$arch" CGO_ENABLED=0 -trimpath=true; do
    grep -qxF "$(printf '\tbuild\t%s' "$f")" <<<"$info" || fail "$archive: $bin was not built with $f"
  done
  grep -q "^\.TH \"KUBECTL-XPKG\" \"1\" .*\"kubectl-xpkg $tag\"" "$store/man/man1/kubectl-xpkg.1" ||
    fail "$archive: man/man1/kubectl-xpkg.1 is not headed with $tag"
  echo "    $os/$arch: installed; $bin, $helper, LICENSE, README.md, man/man1/ ($(ls "$store/man/man1" | wc -l) pages); static, trimmed"
}

step "build the release tools (hack/release/tools.sh, cached in hack/bin/)"
goreleaser=$(hack/release/tools.sh goreleaser)
krew=$(hack/release/tools.sh krew)
validate=$(hack/release/tools.sh validate-krew-manifest)
echo "    goreleaser $("$goreleaser" --version | sed -n 's/^GitVersion: *//p'), krew and validate-krew-manifest from hack/tools/go.mod"

step "goreleaser check"
"$goreleaser" check

step "goreleaser release --snapshot --clean ($([ "${HOST_ONLY:-0}" = 1 ] && echo "host target only" || echo "all targets"))"
build_release
version=$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' dist/metadata.json)
[ -n "$version" ] || fail "no version in dist/metadata.json"
tag=v$version
ls -l dist/*.tar.gz dist/*.zip 2>/dev/null || true

step "render krew/xpkg.yaml for $tag from dist/"
missing=()
[ "${HOST_ONLY:-0}" != 1 ] || missing=(-allow-missing)
manifest=$(go run ./hack/release/krew-manifest -tag "$tag" -dist dist "${missing[@]}")

step "validate-krew-manifest $manifest"
# Its install step downloads every uri; the next step installs offline instead.
"$validate" -manifest "$manifest" -skip-install 2>&1 | sed 's/^/    /'

step "krew install --manifest --archive, each archive, offline${offline:+ (${offline[*]})}"
[ ${#offline[@]} -gt 0 ] || echo "    unshare is not permitted here: krew runs with the host's network"
kubectl=${KUBECTL:-}
[ -n "$kubectl" ] || kubectl="$(hack/build-k8s.sh)/kubectl"
[ -x "$kubectl" ] || fail "no kubectl at $kubectl"
mkdir -p "$work/home" "$work/path"
ln -s "$kubectl" "$work/path/kubectl"
for archive in dist/*.tar.gz dist/*.zip; do
  [ -e "$archive" ] || continue # no match: the pattern itself
  check_archive "$archive"
done

host="$work/krew-$(go env GOOS)-$(go env GOARCH)"
step "kubectl xpkg version --client, through kubectl's plugin discovery"
out=$(krew_in "$host" kubectl xpkg version --client) || fail "kubectl xpkg version --client failed: $out"
echo "    $out"
[[ "$out" == *"$tag"* ]] || fail "the version is not $tag"

step "completion helper, installed as the manifest's caveats say"
grep -q "cp \"\${KREW_ROOT:-\$HOME/.krew}/store/xpkg/$tag/kubectl_complete-xpkg\"" "$manifest" ||
  fail "the caveats no longer give the cp line this step follows"
cp "$host/store/xpkg/$tag/kubectl_complete-xpkg" "$host/bin/"
out=$(krew_in "$host" kubectl __complete xpkg vers 2>/dev/null) || fail "kubectl __complete xpkg failed"
grep -q '^version' <<<"$out" || fail "kubectl did not complete 'kubectl xpkg vers' to version: $out"
echo "    kubectl __complete xpkg vers: $(grep -c '^vers' <<<"$out") candidates (version, versions)"

step "man pages, installed as the manifest's caveats say"
grep -q "cp \"\${KREW_ROOT:-\$HOME/.krew}/store/xpkg/$tag/man/man1/\"\*.1 \"\${KREW_ROOT:-\$HOME/.krew}/share/man/man1/\"" "$manifest" ||
  fail "the caveats no longer give the cp line of the man pages this step follows"
mkdir -p "$host/share/man/man1"
cp "$host/store/xpkg/$tag/man/man1/"*.1 "$host/share/man/man1/"
if command -v man >/dev/null; then
  out=$(krew_in "$host" man -w kubectl-xpkg-upgrade 2>&1) || fail "man found no kubectl-xpkg-upgrade beside Krew's bin/: $out"
  echo "    man -w kubectl-xpkg-upgrade: $out"
else
  echo "    no man here: the pages are in place, not looked up"
fi

echo "    ok ($(($(date +%s) - step_start))s)"
echo
echo "release-check: OK in $(($(date +%s) - start))s (dist/ holds the archives and krew/xpkg.yaml)"
