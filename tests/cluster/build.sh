#!/usr/bin/env bash
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
#
# Build the binaries of the cluster test harness from source with the Go toolchain, fetching
# modules only through the Go module proxy (GOPROXY), into a cache outside the repository:
#
#   ${GPUFABRIC_CLUSTER_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/gpufabric/cluster-bin/<versions-hash>}/
#       kube-apiserver kube-controller-manager kube-scheduler kubectl etcd kwok helm
#       kwok-stages/ kwok-crds/   (kwok's default stages and its ClusterLogs CRD, from the same release)
#
# <versions-hash> is the first 16 hex digits of sha256(versions.env); a directory holding the
# `.complete` stamp is reused as it is, so only a change of versions.env rebuilds.
# `build.sh --print-dir` prints that directory and builds nothing.
#
# Why not `go install k8s.io/kubernetes/cmd/kube-apiserver@v1.35.4`: k8s.io/kubernetes's go.mod
# requires its staging modules (k8s.io/api, k8s.io/client-go, ...) at v0.0.0 and replaces them
# with ./staging/src/k8s.io/<name>; `go install pkg@version` refuses a main module with replace
# directives. So the build writes a small Go module of its own (in the cache, generated from
# versions.env so that the versions live in one file) that requires k8s.io/kubernetes and adds
#   replace k8s.io/<name> => k8s.io/<name> v0.<minor>.<patch>
# for every staging module named in k8s.io/kubernetes's own go.mod (the staging modules are
# published under the same tag, v1.35.4 -> v0.35.4). etcd is alike: its root module
# go.etcd.io/etcd/v3 uses replace directives, so the etcd binary is a three-line main of ours
# calling go.etcd.io/etcd/server/v3/etcdmain.Main. kwok and helm have no replace directives
# and are built with plain `go install pkg@version`.
#
# Everything is built with CGO_ENABLED=0 -trimpath -ldflags='-s -w'; the Kubernetes binaries
# get their version stamped (-X k8s.io/component-base/version.gitVersion=...) because helm
# checks a chart's kubeVersion against the version the API server reports.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
versions_file="$here/versions.env"

die() { echo "cluster build: error: $*" >&2; exit 1; }

[ -r "$versions_file" ] || die "cannot read $versions_file"
# shellcheck source=/dev/null
. "$versions_file"
for var in KUBERNETES_VERSION ETCD_VERSION KWOK_VERSION HELM_VERSION DRA_DRIVER_VERSION; do
    [ -n "${!var:-}" ] || die "$var is not set in $versions_file"
done

hash="$(sha256sum "$versions_file" | cut -c1-16)"
out="${GPUFABRIC_CLUSTER_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/gpufabric/cluster-bin/$hash}"
binaries=(kube-apiserver kube-controller-manager kube-scheduler kubectl etcd kwok helm compute-domain-controller)

if [ "${1:-}" = "--print-dir" ]; then
    echo "$out"
    exit 0
fi

complete() {
    local binary
    for binary in "${binaries[@]}"; do [ -x "$out/$binary" ] || return 1; done
    [ -f "$out/kwok-stages/pod-ready.yaml" ] && [ -f "$out/kwok-crds/kwok.x-k8s.io_clusterlogs.yaml" ] \
        && [ -f "$out/compute-domain-controller-templates/compute-domain-workload-claim-template.tmpl.yaml" ] \
        && [ -f "$out/.complete" ]
}
if complete; then
    echo "cluster build: binaries present in $out (delete it to rebuild)"
    exit 0
fi

GO="${GO:-}"
if [ -z "$GO" ]; then
    GO="$(command -v go || true)"
    if [ -z "$GO" ] && [ -x /usr/local/go/bin/go ]; then GO=/usr/local/go/bin/go; fi
fi
if [ -z "$GO" ] || [ ! -x "$GO" ]; then
    die "no Go toolchain found${GO:+ at GO=$GO}: install Go (>= 1.26) and put 'go' on PATH, or set GO=/path/to/go"
fi
echo "cluster build: using $("$GO" version) from $GO"

export CGO_ENABLED=0
export GOFLAGS="${GOFLAGS:-} -trimpath"
# Use the toolchain we were given; never download another one.
export GOTOOLCHAIN=local
ldflags_base="-s -w"

# Each step builds into a scratch directory and moves its binaries into $out when they are all
# built, so that an interrupted build resumes at the first missing binary; .complete comes last.
mkdir -p "$out"
stage="$(mktemp -d "$out/.build.XXXXXX")"
work="$stage/src"
mkdir -p "$stage/bin" "$work"
trap 'rm -rf "$stage"' EXIT
have() { local binary; for binary in "$@"; do [ -x "$out/$binary" ] || return 1; done; }
publish() { local binary; for binary in "$@"; do mv -f "$stage/bin/$binary" "$out/$binary"; done; }

current="setting up"
step() { current="$*"; echo "cluster build: $* ($(date +%T))"; }
# A failing command (go get, go build, ...) names the step and the command; go printed the cause above.
trap 'echo "cluster build: error: building $current failed (exit $?) at: $BASH_COMMAND" >&2' ERR

# --- Kubernetes: kube-apiserver, kube-controller-manager, kube-scheduler, kubectl -------------
kube="$KUBERNETES_VERSION"
kube_cmds=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
if ! have "${kube_cmds[@]}"; then
    staging_version="v0.${kube#v1.}"
    step "k8s.io/kubernetes $kube (staging modules at $staging_version)"
    mkdir -p "$work/kubernetes"
    cd "$work/kubernetes"
    kube_gomod="$("$GO" mod download -json "k8s.io/kubernetes@$kube" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')"
    [ -r "$kube_gomod" ] || die "could not download k8s.io/kubernetes@$kube through the Go module proxy"
    mapfile -t staging < <(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\1#p' "$kube_gomod" | sort -u)
    [ "${#staging[@]}" -gt 10 ] || die "found no staging replace directives in $kube_gomod"
    go_directive="$(sed -n 's/^go //p' "$kube_gomod")"
    {
        echo "// Generated by tests/cluster/build.sh from versions.env; see the comment at the top of build.sh."
        echo "module gpufabric.invalid/cluster-bin/kubernetes"
        echo
        echo "go $go_directive"
        echo
        echo "require k8s.io/kubernetes $kube"
        echo
        echo "replace ("
        for module in "${staging[@]}"; do echo "	$module => $module $staging_version"; done
        echo ")"
    } > go.mod
    kube_pkgs=()
    for cmd in "${kube_cmds[@]}"; do kube_pkgs+=("k8s.io/kubernetes/cmd/$cmd"); done
    "$GO" get "${kube_pkgs[@]/%/@$kube}"
    minor="${kube#v1.}"; minor="${minor%%.*}"
    kube_ldflags="$ldflags_base"
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        kube_ldflags+=" -X $pkg.gitVersion=$kube -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
        kube_ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.gitCommit=0000000000000000000000000000000000000000"
    done
    "$GO" build -ldflags="$kube_ldflags" -o "$stage/bin/" "${kube_pkgs[@]}"
    publish "${kube_cmds[@]}"
fi

# --- etcd -----------------------------------------------------------------------------------
if ! have etcd; then
    step "go.etcd.io/etcd/server/v3 $ETCD_VERSION"
    mkdir -p "$work/etcd"
    cd "$work/etcd"
    printf '%s\n' "// Generated by tests/cluster/build.sh from versions.env." \
        "module gpufabric.invalid/cluster-bin/etcd" "" "go 1.25.0" "" \
        "require go.etcd.io/etcd/server/v3 $ETCD_VERSION" > go.mod
    # The etcd binary: go.etcd.io/etcd/v3's own main.go does the same.
    printf '%s\n' "package main" "" 'import (' '	"os"' "" '	"go.etcd.io/etcd/server/v3/etcdmain"' ')' "" \
        "func main() { etcdmain.Main(os.Args) }" > main.go
    "$GO" mod tidy
    "$GO" build -ldflags="$ldflags_base" -o "$stage/bin/etcd" .
    publish etcd
fi

# --- kwok -----------------------------------------------------------------------------------
cd "$work"
if ! have kwok; then
    step "sigs.k8s.io/kwok $KWOK_VERSION"
    GOBIN="$stage/bin" "$GO" install \
        -ldflags="$ldflags_base -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" \
        "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
    publish kwok
fi
# kwok's own default stages (the ones `kwokctl` configures) from the same release; harness.py
# passes them to kwok with --config, with pod-complete selected by a pod annotation.
kwok_dir="$("$GO" mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')"
mkdir -p "$stage/kwok-stages"
for stage_file in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease \
        pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
    cp "$kwok_dir/kustomize/stage/$stage_file.yaml" "$stage/kwok-stages/" \
        || die "kwok $KWOK_VERSION has no default stage $stage_file.yaml"
done
rm -rf "$out/kwok-stages"
mv "$stage/kwok-stages" "$out/kwok-stages"
# kwok's CRDs for what harness.py serves through kwok's kubelet endpoint (ClusterLogs: pod logs from a file);
# the harness applies them before kwok starts, which watches them (--enable-crds).
mkdir -p "$stage/kwok-crds"
cp "$kwok_dir/kustomize/crd/bases/kwok.x-k8s.io_clusterlogs.yaml" "$stage/kwok-crds/" \
    || die "kwok $KWOK_VERSION has no CRD kwok.x-k8s.io_clusterlogs.yaml"
rm -rf "$out/kwok-crds"
mv "$stage/kwok-crds" "$out/kwok-crds"

# --- helm -----------------------------------------------------------------------------------
if ! have helm; then
    step "helm.sh/helm $HELM_VERSION"
    helm_major="${HELM_VERSION%%.*}"
    GOBIN="$stage/bin" "$GO" install \
        -ldflags="$ldflags_base -X helm.sh/helm/$helm_major/internal/version.version=$HELM_VERSION" \
        "helm.sh/helm/$helm_major/cmd/helm@$HELM_VERSION"
    publish helm
fi

# --- the DRA driver's compute-domain controller ----------------------------------------------
# sigs.k8s.io/dra-driver-nvidia-gpu (the module of the dra-driver-nvidia-gpu chart, same version) has no replace
# directives, but `go install <pkg>@$DRA_DRIVER_VERSION` stops at its deprecation check: the proxy refuses the
# module's version list (`@v/list: 403 Forbidden`, "This module version is not available") while it serves the
# version itself. So, as for etcd, a module of ours requires it. The controller imports no NVML (CGO_ENABLED=0).
# It reads its object templates from /templates, the image's path: the two constants declaring it are made
# relative (templates/) in a copy of the module, and the module's templates/ are copied beside the binary for
# the harness to put in the controller's working directory (cluster_harness/compute_domain_controller.py).
if ! have compute-domain-controller || [ ! -d "$out/compute-domain-controller-templates" ]; then
    step "sigs.k8s.io/dra-driver-nvidia-gpu $DRA_DRIVER_VERSION (compute-domain-controller)"
    mkdir -p "$work/dra-driver"
    cd "$work/dra-driver"
    printf '%s\n' "// Generated by tests/cluster/build.sh from versions.env." \
        "module gpufabric.invalid/cluster-bin/dra-driver" "" "go 1.26.0" "" \
        "require sigs.k8s.io/dra-driver-nvidia-gpu $DRA_DRIVER_VERSION" > go.mod
    cdc_pkg=sigs.k8s.io/dra-driver-nvidia-gpu/cmd/compute-domain-controller
    "$GO" get "$cdc_pkg@$DRA_DRIVER_VERSION"
    dra_dir="$("$GO" list -m -f '{{.Dir}}' sigs.k8s.io/dra-driver-nvidia-gpu)"
    # go build -overlay may not replace files in the module cache: build a copy of the module (the proxy's zip,
    # checked against go.sum) with the two constants changed, through a directory replace of our module.
    cp -r "$dra_dir" "$PWD/dra-driver-nvidia-gpu"
    chmod -R u+w "$PWD/dra-driver-nvidia-gpu"
    for file in daemonset.go resourceclaimtemplate.go; do
        path="$PWD/dra-driver-nvidia-gpu/cmd/compute-domain-controller/$file"
        grep -q '= "/templates/' "$path" \
            || die "$file of sigs.k8s.io/dra-driver-nvidia-gpu $DRA_DRIVER_VERSION declares no /templates/ path"
        sed -i 's#= "/templates/#= "templates/#' "$path"
    done
    "$GO" mod edit -replace "sigs.k8s.io/dra-driver-nvidia-gpu=./dra-driver-nvidia-gpu"
    "$GO" build -o "$stage/bin/compute-domain-controller" \
        -ldflags="$ldflags_base -X sigs.k8s.io/dra-driver-nvidia-gpu/internal/info.version=$DRA_DRIVER_VERSION" \
        "$cdc_pkg"
    cp -r "$dra_dir/templates" "$stage/compute-domain-controller-templates"
    chmod -R u+w "$stage/compute-domain-controller-templates"
    rm -rf "$out/compute-domain-controller-templates"
    mv "$stage/compute-domain-controller-templates" "$out/compute-domain-controller-templates"
    publish compute-domain-controller
fi

have "${binaries[@]}" || die "not every binary was built: ${binaries[*]}"
cp "$versions_file" "$out/versions.env"
touch "$out/.complete"
step "done: $out"
