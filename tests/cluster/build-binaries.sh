#!/usr/bin/env bash
# Builds (once) and caches the control-plane binaries the local test cluster runs:
# kube-apiserver, kube-controller-manager and kube-scheduler 1.20.2 from Debian's
# bookworm source package, compiled with Go 1.15 in GOPATH mode (newer Go builds an
# apiserver that panics on its first create), plus etcd from Debian's etcd-server.
#
# Idempotent: when the cache holds all binaries it only prints where they are.
# Prints the cache directory on its last line of stdout; progress goes to stderr.
set -euo pipefail

CACHE="${DASHBOARD_KUBE_CACHE:-$HOME/.cache/dashboard-api/kube-1.20.2}"
BIN="$CACHE/bin"
WANT=(kube-apiserver kube-controller-manager kube-scheduler)

say() { echo "[build-binaries] $*" >&2; }
die() { echo "[build-binaries] FATAL: $*" >&2; exit 1; }

have_all() {
  local b
  for b in "${WANT[@]}"; do [ -x "$BIN/$b" ] || return 1; done
  command -v etcd >/dev/null 2>&1 || [ -x /usr/bin/etcd ] || return 1
}

# Debian's packages are taken by name, not by exact version: a security update replaces the
# old version on the mirror, so an exact pin would break. What the cluster depends on is checked
# instead, so that a package that moved on fails here, by name, rather than in the tests.
#   expect WHAT GLOB OUTPUT: fails unless OUTPUT matches GLOB.
expect() {
  # shellcheck disable=SC2053
  [[ "$3" == $2 ]] || die "$1 is '$3', expected $2 (the local cluster is Kubernetes 1.20.2)"
}
check_versions() {
  expect "etcd (Debian's etcd-server)" "*etcd Version: 3.4.*" "$(etcd --version 2>&1 | head -n 1)"
  expect kube-apiserver "Kubernetes v1.20.2" "$("$BIN/kube-apiserver" --version 2>&1)"
}

if have_all; then
  check_versions
  say "cached binaries present in $BIN"
  echo "$CACHE"
  exit 0
fi

[ "$(id -u)" = 0 ] || die "needs root to install Debian packages (apt-get)"

# Only bookworm deb-src and bullseye deb are added: never trixie or sid, whose
# packages would upgrade the system Python. Bullseye is pinned low so that it can
# only supply packages bookworm lacks (golang-1.15-go).
src_list=/etc/apt/sources.list.d/dashboard-kube-build.sources
if [ ! -f "$src_list" ]; then
  say "adding apt sources: bookworm deb-src, bullseye deb (pinned low)"
  cat > "$src_list" <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian
Suites: bullseye
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  cat > /etc/apt/preferences.d/dashboard-bullseye-low <<'PIN'
Package: *
Pin: release n=bullseye
Pin-Priority: 100
PIN
fi

export DEBIAN_FRONTEND=noninteractive
say "apt-get update"
apt-get update -qq >&2 || die "apt-get update failed"
say "installing etcd-server, golang-1.15-go, dpkg-dev, rsync"
apt-get install -y -qq --no-install-recommends etcd-server golang-1.15-go dpkg-dev rsync >&2 \
  || die "apt-get install of build prerequisites failed"

GO=/usr/lib/go-1.15/bin/go
[ -x "$GO" ] || die "Go 1.15 not found at $GO after installing golang-1.15-go"
expect "Go (bullseye's golang-1.15-go)" "go version go1.15.* linux/*" "$("$GO" version)"

WORK="$CACHE/build"
mkdir -p "$WORK"
srcdir=$(find "$WORK" -maxdepth 1 -type d -name 'kubernetes-*' ! -name '*.tar*' | head -n 1)
if [ -z "$srcdir" ]; then
  say "fetching the kubernetes source package (bookworm) into $WORK"
  (cd "$WORK" && apt-get source -qq kubernetes >&2) || die "apt-get source kubernetes failed"
  srcdir=$(find "$WORK" -maxdepth 1 -type d -name 'kubernetes-*' ! -name '*.tar*' | head -n 1)
fi
[ -n "$srcdir" ] && [ -d "$srcdir/vendor" ] || die "kubernetes source with vendor/ not found under $WORK"
# The version stamped into the binaries below is set by hand (KUBE_GIT_VERSION), so the source
# itself must be 1.20.2: bookworm's package is 1.20.5+really1.20.2 (an upstream 1.20.2).
expect "the kubernetes source package (bookworm)" "*1.20.2-*" \
  "$(dpkg-parsechangelog -l "$srcdir/debian/changelog" -S Version)"

export GOPATH="$WORK/gopath"
mkdir -p "$GOPATH/src/k8s.io"
ln -sfn "$srcdir" "$GOPATH/src/k8s.io/kubernetes"
export GO111MODULE=off GOCACHE="$WORK/gocache"
export PATH="/usr/lib/go-1.15/bin:$PATH"
export KUBE_GIT_VERSION=v1.20.2 KUBE_GIT_TREE_STATE=clean KUBE_GIT_MAJOR=1 KUBE_GIT_MINOR=20
say "building ${WANT[*]} with $($GO version) (several minutes)"
(cd "$GOPATH/src/k8s.io/kubernetes" && \
  make WHAT="cmd/kube-apiserver cmd/kube-controller-manager cmd/kube-scheduler" >&2) \
  || die "make of the control-plane binaries failed"

mkdir -p "$BIN"
for b in "${WANT[@]}"; do
  f=$(find "$srcdir/_output" -type f -name "$b" -perm -u+x | head -n 1)
  [ -n "$f" ] || die "built binary $b not found under $srcdir/_output"
  cp "$f" "$BIN/$b"
done
have_all || die "binaries missing after build"
check_versions
say "built; cached in $BIN"
echo "$CACHE"
