#!/usr/bin/env bash
# Builds the real kube-apiserver and etcd that the integration tier (spec/e2e) runs against,
# from the Go modules pinned in spec/e2e/kube/go.mod and spec/e2e/etcd/go.mod, through the Go
# module proxy. Nothing is downloaded as a prebuilt binary and nothing is written into the clone.
# It also installs promtool (spec/e2e/prometheus.sh, from Debian's prometheus package) when missing.
#
# Binaries land in a cache outside the clone, keyed by component and version:
#   ${RXKUBE_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rxkube-e2e}/<component>-<version>/<binary>
# A binary that is already there is not rebuilt, so only the first run on a machine pays for the
# build. The Go module and build caches live in the same folder, so a fresh clone re-uses them.
#
# Usage: spec/e2e/build.sh            build what is missing, then print the binaries' paths
#        spec/e2e/build.sh --paths    print the paths only (exit 1 if one is missing)
# Environment: RXKUBE_E2E_CACHE (cache root), RXKUBE_E2E_BUILD_JOBS (go build -p, default 2),
#              GO (the go command, default: go on PATH, else /usr/local/go/bin/go).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
cache="${RXKUBE_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rxkube-e2e}"
jobs="${RXKUBE_E2E_BUILD_JOBS:-2}"

if [[ -n "${GO:-}" ]]; then
  go_cmd="$GO"
elif command -v go >/dev/null 2>&1; then
  go_cmd="$(command -v go)"
elif [[ -x /usr/local/go/bin/go ]]; then
  go_cmd=/usr/local/go/bin/go
else
  echo "e2e build: no go toolchain found (set GO=/path/to/go)" >&2
  exit 1
fi

# The version a module's go.mod requires of a dependency (a one-line require or a line in a block).
required_version() { # <go.mod> <module path>
  awk -v mod="$2" '
    $1 == "require" && $2 == mod { print $3; found = 1; exit }
    $1 == mod && $2 ~ /^v[0-9]/ { print $2; found = 1; exit }
    END { exit !found }' "$1"
}

kube_version="$(required_version "$here/kube/go.mod" k8s.io/kubernetes)"
etcd_version="$(required_version "$here/etcd/go.mod" go.etcd.io/etcd/server/v3)"
kube_bin="$cache/kube-apiserver-$kube_version/kube-apiserver"
etcd_bin="$cache/etcd-$etcd_version/etcd"

print_paths() {
  echo "KUBE_APISERVER=$kube_bin"
  echo "ETCD=$etcd_bin"
}

if [[ "${1:-}" == "--paths" ]]; then
  print_paths
  [[ -x "$kube_bin" && -x "$etcd_bin" ]]
  exit
fi

mkdir -p "$cache"
# Two CI runs or a developer and CI on one machine must not build into the same cache at once.
exec 9>"$cache/.build.lock"
if command -v flock >/dev/null 2>&1; then
  flock 9
fi

export GOPATH="$cache/go"
export GOMODCACHE="$cache/go/pkg/mod"
export GOCACHE="$cache/go-build"
export GOTOOLCHAIN=local
export CGO_ENABLED=0
# The committed go.sum must already cover the build: a missing checksum is an error, not a fetch.
# VCS stamping is off: the module sits inside rxkube's git checkout, which says nothing about the binary.
# -modcacherw leaves the module cache writable, so the whole cache folder can be removed with rm -rf.
export GOFLAGS="-mod=readonly -buildvcs=false -modcacherw"

# Builds one main package into <out>, atomically: a half-written binary is never at <out>.
build() { # <module dir> <package> <out> [go build flags...]
  local dir="$1" pkg="$2" out="$3"
  shift 3
  if [[ -x "$out" ]]; then
    echo "e2e build: $out is cached"
    return
  fi
  mkdir -p "$(dirname "$out")"
  local tmp="$out.tmp.$$"
  echo "e2e build: building $pkg into $out"
  local start=$SECONDS
  (cd "$dir" && nice -n 10 "$go_cmd" build -p "$jobs" -trimpath -o "$tmp" "$@" "$pkg")
  mv -f "$tmp" "$out"
  echo "e2e build: built $pkg in $((SECONDS - start))s"
}

# Stamp the release into the binary the way the release build does, so /version reports it.
kube_minor="$(echo "$kube_version" | cut -d. -f2)"
kube_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kube_ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$kube_minor"
  kube_ldflags+=" -X $pkg.gitTreeState=clean"
done

# promtool, which the metrics spec runs rxkube/metrics' output through (a Debian package, not a Go build).
# Its absence fails that one spec, with a message saying so; the binaries are still built.
if ! bash "$here/prometheus.sh" >/dev/null; then
  echo "e2e build: promtool could not be installed; metrics.e2e.spec.ts will fail until it is" >&2
fi

build "$here/etcd" go.etcd.io/etcd/server/v3 "$etcd_bin" -ldflags "-s -w"
build "$here/kube" k8s.io/kubernetes/cmd/kube-apiserver "$kube_bin" -ldflags "$kube_ldflags"

print_paths
