#!/usr/bin/env bash
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
#
# Build the binaries of the cluster test harness from source with the Go toolchain, fetching
# modules only through the Go module proxy (GOPROXY), into a cache outside the repository.
#
# The binaries come in components (the table `components` below): each is built once per value of
# its own pins in versions.env into
#
#   ${XDG_CACHE_HOME:-$HOME/.cache}/gpufabric/cluster-bin/components/<name>-<pins-hash>/
#
# (<pins-hash>: the first 16 hex digits of sha256 of the component's name and its "VAR=value" pins),
# so adding or changing one pin builds that component only. The directory the harness uses is
#
#   ${GPUFABRIC_CLUSTER_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/gpufabric/cluster-bin/<versions-hash>}/
#       kube-apiserver kube-controller-manager kube-scheduler kubectl etcd kwok helm mpi-operator
#       compute-domain-controller compute-domain-controller-templates/ (the module's object templates)
#       kwok-stages/ kwok-crds/   (kwok's default stages and its ClusterLogs CRD, from the same release)
#
# (<versions-hash>: the first 16 hex digits of sha256(versions.env)), holding symbolic links into
# the component directories, a copy of versions.env and the `.complete` stamp; a directory with the
# stamp is reused as it is. `build.sh --print-dir` prints that directory and builds nothing.
# A component is built in a scratch directory and moved into place when complete, so an
# interrupted build resumes at the first component missing.
#
# To add a binary: pin its version in versions.env, add a line "name|PIN_VARIABLES|entries" to
# `components` and a function build_<name, '-' as '_'> that builds the entries into "$dest"
# (and add the binary to BINARIES in cluster_harness/common.py).
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
# and are built with plain `go install pkg@version`. The MPI operator: see build_mpi_operator.
#
# Everything is built with CGO_ENABLED=0 -trimpath -ldflags='-s -w'; the Kubernetes binaries
# get their version stamped (-X k8s.io/component-base/version.gitVersion=...) because helm
# checks a chart's kubeVersion against the version the API server reports.
set -Eeuo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
versions_file="$here/versions.env"

die() { echo "cluster build: error: $*" >&2; exit 1; }

[ -r "$versions_file" ] || die "cannot read $versions_file"
# shellcheck source=/dev/null
. "$versions_file"

# name | the versions.env variables it is built from | what it puts into the binary directory
components=(
    "kubernetes|KUBERNETES_VERSION|kube-apiserver kube-controller-manager kube-scheduler kubectl"
    "etcd|ETCD_VERSION|etcd"
    "kwok|KWOK_VERSION|kwok kwok-stages kwok-crds"
    "helm|HELM_VERSION|helm"
    "mpi-operator|MPI_OPERATOR_VERSION|mpi-operator"
    "compute-domain-controller|DRA_DRIVER_VERSION|compute-domain-controller compute-domain-controller-templates"
)

cache="${XDG_CACHE_HOME:-$HOME/.cache}/gpufabric/cluster-bin"
hash="$(sha256sum "$versions_file" | cut -c1-16)"
out="${GPUFABRIC_CLUSTER_BIN:-$cache/$hash}"

# component_dir NAME VARS: where the component built from those pins lives.
component_dir() {
    local name="$1" var pins="$1"
    for var in $2; do
        [ -n "${!var:-}" ] || die "$var is not set in $versions_file"
        pins+=$'\n'"$var=${!var}"
    done
    echo "$cache/components/$name-$(printf '%s\n' "$pins" | sha256sum | cut -c1-16)"
}

# present DIR ENTRIES...: every entry is there (a directory, or an executable file).
present() {
    local dir="$1" entry
    shift
    for entry in "$@"; do [ -d "$dir/$entry" ] || [ -x "$dir/$entry" ] || return 1; done
}

if [ "${1:-}" = "--print-dir" ]; then
    echo "$out"
    exit 0
fi

complete() {
    local row name vars entries
    [ -f "$out/.complete" ] || return 1
    for row in "${components[@]}"; do
        IFS='|' read -r name vars entries <<< "$row"
        # shellcheck disable=SC2086 # entries is a list of names
        present "$out" $entries || return 1
    done
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

current="setting up"
step() { current="$*"; echo "cluster build: $* ($(date +%T))"; }
# A failing command (go get, go build, ...) names the step and the command; go printed the cause above.
trap 'echo "cluster build: error: building $current failed (exit $?) at: $BASH_COMMAND" >&2' ERR

# Each build_<component> builds its entries into "$dest", with "$work" as its scratch directory.

# --- Kubernetes: kube-apiserver, kube-controller-manager, kube-scheduler, kubectl -------------
build_kubernetes() {
    local kube="$KUBERNETES_VERSION" staging_version kube_gomod go_directive module cmd minor kube_ldflags pkg
    local kube_cmds=(kube-apiserver kube-controller-manager kube-scheduler kubectl) kube_pkgs=() staging=()
    staging_version="v0.${kube#v1.}"
    step "k8s.io/kubernetes $kube (staging modules at $staging_version)"
    cd "$work"
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
    for cmd in "${kube_cmds[@]}"; do kube_pkgs+=("k8s.io/kubernetes/cmd/$cmd"); done
    "$GO" get "${kube_pkgs[@]/%/@$kube}"
    minor="${kube#v1.}"; minor="${minor%%.*}"
    kube_ldflags="$ldflags_base"
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        kube_ldflags+=" -X $pkg.gitVersion=$kube -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
        kube_ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.gitCommit=0000000000000000000000000000000000000000"
    done
    "$GO" build -ldflags="$kube_ldflags" -o "$dest/" "${kube_pkgs[@]}"
}

# --- etcd -----------------------------------------------------------------------------------
build_etcd() {
    step "go.etcd.io/etcd/server/v3 $ETCD_VERSION"
    cd "$work"
    printf '%s\n' "// Generated by tests/cluster/build.sh from versions.env." \
        "module gpufabric.invalid/cluster-bin/etcd" "" "go 1.25.0" "" \
        "require go.etcd.io/etcd/server/v3 $ETCD_VERSION" > go.mod
    # The etcd binary: go.etcd.io/etcd/v3's own main.go does the same.
    printf '%s\n' "package main" "" 'import (' '	"os"' "" '	"go.etcd.io/etcd/server/v3/etcdmain"' ')' "" \
        "func main() { etcdmain.Main(os.Args) }" > main.go
    "$GO" mod tidy
    "$GO" build -ldflags="$ldflags_base" -o "$dest/etcd" .
}

# --- kwok -----------------------------------------------------------------------------------
build_kwok() {
    local kwok_dir stage_file
    step "sigs.k8s.io/kwok $KWOK_VERSION"
    cd "$work"
    GOBIN="$dest" "$GO" install \
        -ldflags="$ldflags_base -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" \
        "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
    # kwok's own default stages (the ones `kwokctl` configures) from the same release; the harness
    # passes them to kwok with --config, with pod-complete selected by a pod annotation.
    kwok_dir="$("$GO" mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')"
    mkdir -p "$dest/kwok-stages"
    for stage_file in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease \
            pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
        cp "$kwok_dir/kustomize/stage/$stage_file.yaml" "$dest/kwok-stages/" \
            || die "kwok $KWOK_VERSION has no default stage $stage_file.yaml"
    done
    # kwok's CRDs for what the harness serves through kwok's kubelet endpoint (ClusterLogs: pod logs from
    # a file); the harness applies them before kwok starts, which watches them (--enable-crds).
    mkdir -p "$dest/kwok-crds"
    cp "$kwok_dir/kustomize/crd/bases/kwok.x-k8s.io_clusterlogs.yaml" "$dest/kwok-crds/" \
        || die "kwok $KWOK_VERSION has no CRD kwok.x-k8s.io_clusterlogs.yaml"
}

# --- helm -----------------------------------------------------------------------------------
build_helm() {
    local helm_major="${HELM_VERSION%%.*}"
    step "helm.sh/helm $HELM_VERSION"
    cd "$work"
    GOBIN="$dest" "$GO" install \
        -ldflags="$ldflags_base -X helm.sh/helm/$helm_major/internal/version.version=$HELM_VERSION" \
        "helm.sh/helm/$helm_major/cmd/helm@$HELM_VERSION"
}

# --- the Kubeflow MPI operator --------------------------------------------------------------
# `go install github.com/kubeflow/mpi-operator/cmd/mpi-operator@v0.6.0` is refused: it lists the
# module's versions for deprecations and the proxy answers that list with "403 Forbidden: This module
# version is not available". The module itself downloads (`go mod download module@version`, checked
# against go.sum and the checksum database) and has no replace directives, so it is built as the main
# module from a copy of it. One line of the copy is changed: the health server of v0.6.0 listens on
# the fixed ":8080" (all interfaces; cmd/mpi-operator/app/server.go), which two harnesses on one
# machine, or anything else on 8080, would fight over; the copy takes the address from
# GPUFABRIC_MPI_OPERATOR_HEALTH_ADDR when set (the harness passes 127.0.0.1:<free port>). The
# controller itself is unchanged.
build_mpi_operator() {
    local module=github.com/kubeflow/mpi-operator version="$MPI_OPERATOR_VERSION" info src commit server
    local listen='Addr:    fmt.Sprintf(":%d", healthCheckPort),'
    step "$module $version"
    cd "$work"
    info="$("$GO" mod download -json "$module@$version")"
    src="$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p' <<< "$info")"
    commit="$(sed -n 's/^[[:space:]]*"Hash": "\(.*\)",*$/\1/p' <<< "$info")"
    [ -r "$src/go.mod" ] || die "could not download $module@$version through the Go module proxy"
    grep -q '^replace' "$src/go.mod" && die "$module@$version now has replace directives; see build.sh"
    cp -R "$src/go.mod" "$src/go.sum" "$src/cmd" "$src/pkg" "$work/"
    chmod -R u+w "$work"
    server="$work/cmd/mpi-operator/app/server.go"
    [ "$(grep -cF "$listen" "$server")" = 1 ] || die "$module@$version: the health server line to patch is not in $server"
    sed -i "s|$listen|Addr:    func() string { if addr := os.Getenv(\"GPUFABRIC_MPI_OPERATOR_HEALTH_ADDR\"); addr != \"\" { return addr }; return fmt.Sprintf(\":%d\", healthCheckPort) }(),|" \
        "$server"
    "$GO" build -ldflags="$ldflags_base -X $module/pkg/version.Version=$version -X $module/pkg/version.GitSHA=${commit:-unknown}" \
        -o "$dest/mpi-operator" ./cmd/mpi-operator
}

# --- the DRA driver's compute-domain controller ----------------------------------------------
# sigs.k8s.io/dra-driver-nvidia-gpu (the module of the dra-driver-nvidia-gpu chart, same version) has no replace
# directives, but `go install <pkg>@$DRA_DRIVER_VERSION` stops at its deprecation check: the proxy refuses the
# module's version list (`@v/list: 403 Forbidden`, "This module version is not available") while it serves the
# version itself. So, as for etcd, a module of ours requires it. The controller imports no NVML (CGO_ENABLED=0).
# It reads its object templates from /templates, the image's path: the two constants declaring it are made
# relative (templates/) in a copy of the module, and the module's templates/ are copied beside the binary for
# the harness to put in the controller's working directory (cluster_harness/compute_domain_controller.py).
build_compute_domain_controller() {
    local cdc_pkg=sigs.k8s.io/dra-driver-nvidia-gpu/cmd/compute-domain-controller dra_dir file path
    step "sigs.k8s.io/dra-driver-nvidia-gpu $DRA_DRIVER_VERSION (compute-domain-controller)"
    cd "$work"
    printf '%s\n' "// Generated by tests/cluster/build.sh from versions.env." \
        "module gpufabric.invalid/cluster-bin/dra-driver" "" "go 1.26.0" "" \
        "require sigs.k8s.io/dra-driver-nvidia-gpu $DRA_DRIVER_VERSION" > go.mod
    "$GO" get "$cdc_pkg@$DRA_DRIVER_VERSION"
    dra_dir="$("$GO" list -m -f '{{.Dir}}' sigs.k8s.io/dra-driver-nvidia-gpu)"
    # go build -overlay may not replace files in the module cache: build a copy of the module (the proxy's zip,
    # checked against go.sum) with the two constants changed, through a directory replace of our module.
    cp -r "$dra_dir" "$work/dra-driver-nvidia-gpu"
    chmod -R u+w "$work/dra-driver-nvidia-gpu"
    for file in daemonset.go resourceclaimtemplate.go; do
        path="$work/dra-driver-nvidia-gpu/cmd/compute-domain-controller/$file"
        grep -q '= "/templates/' "$path" \
            || die "$file of sigs.k8s.io/dra-driver-nvidia-gpu $DRA_DRIVER_VERSION declares no /templates/ path"
        sed -i 's#= "/templates/#= "templates/#' "$path"
    done
    "$GO" mod edit -replace "sigs.k8s.io/dra-driver-nvidia-gpu=./dra-driver-nvidia-gpu"
    "$GO" build -o "$dest/compute-domain-controller" \
        -ldflags="$ldflags_base -X sigs.k8s.io/dra-driver-nvidia-gpu/internal/info.version=$DRA_DRIVER_VERSION" \
        "$cdc_pkg"
    cp -r "$dra_dir/templates" "$dest/compute-domain-controller-templates"
    chmod -R u+w "$dest/compute-domain-controller-templates"
}

# --- build what is missing, then link the binary directory ------------------------------------
mkdir -p "$cache/components" "$out"
scratch=""
trap 'if [ -n "$scratch" ]; then rm -rf "$scratch"; fi' EXIT
for row in "${components[@]}"; do
    IFS='|' read -r name vars entries <<< "$row"
    dir="$(component_dir "$name" "$vars")"
    # shellcheck disable=SC2086 # entries is a list of names
    if ! { [ -f "$dir/.complete" ] && present "$dir" $entries; }; then
        scratch="$(mktemp -d "$cache/components/.build-$name.XXXXXX")"
        dest="$scratch/out"
        work="$scratch/src"
        mkdir -p "$dest" "$work"
        "build_${name//-/_}"
        # shellcheck disable=SC2086
        present "$dest" $entries || die "building $name left out one of: $entries"
        for var in $vars; do echo "$var=${!var}"; done > "$dest/pins.env"
        touch "$dest/.complete"
        rm -rf "$dir"
        mv "$dest" "$dir"
        rm -rf "$scratch"
        scratch=""
    fi
    # (rm first: a directory of an older layout holds real files and directories there)
    for entry in $entries; do rm -rf "${out:?}/$entry"; ln -s "$dir/$entry" "$out/$entry"; done
done
cp "$versions_file" "$out/versions.env"
touch "$out/.complete"
step "done: $out"
