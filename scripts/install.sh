#!/usr/bin/env bash
# install.sh: puts the warden binary that matches this action's ref on the
# runner. Run by action.yml's install step; safe to run by hand.
#
# Where the binary comes from, in order:
#   1. the runner's tool cache ($RUNNER_TOOL_CACHE/warden/<version>/<arch>),
#      when an earlier run installed and verified that version;
#   2. the GitHub release of the action's repository for that version:
#      warden_<version>_<os>_<arch>.tar.gz (.zip on Windows), verified against
#      the release's checksums.txt (SHA-256) and its build provenance
#      (provenance.sigstore.jsonl: GitHub's artifact attestation, signed with
#      the identity of the repository's release workflow, checked with
#      `gh attestation verify`) before it is unpacked;
#   3. `go build` of the action's own source ($GITHUB_ACTION_PATH), when the
#      ref has no release (a branch, a SHA no release tag points at, a local
#      `uses: ./`, or a release without an asset for this OS/arch). This needs
#      Go on the runner (actions/setup-go).
#
# Which version: WARDEN_VERSION when set (then a missing release is an error,
# never a silent build of other source); else the action's ref: a full version
# tag (v1.2.3) is used as is; a moving tag (v1, v1.2) or a commit SHA is
# resolved with `git ls-remote --tags` to the highest vX.Y.Z tag on the same
# commit; anything else builds from source. The ref and repository come from
# $GITHUB_ACTION_PATH when it has the runner's layout
# (.../_actions/<owner>/<repo>/<ref>), else from WARDEN_ACTION_REF and
# WARDEN_ACTION_REPOSITORY (the action passes github.action_ref and
# github.action_repository, which are empty inside nested composite actions:
# actions/runner#2473).
#
# Environment:
#   WARDEN_VERSION            version to install (1.2.3 or v1.2.3); empty: the ref's
#   WARDEN_ACTION_REF         the action's ref (github.action_ref)
#   WARDEN_ACTION_REPOSITORY  the action's owner/repo (github.action_repository)
#   WARDEN_DOWNLOAD_BASE_URL  base of the release downloads, for mirrors and tests;
#                             files are fetched from <base>/<tag>/<file>. Default:
#                             $GITHUB_SERVER_URL/<owner>/<repo>/releases/download
#   WARDEN_GIT_URL            repository that `git ls-remote` resolves moving tags
#                             and SHAs against, for mirrors and tests. Default:
#                             $GITHUB_SERVER_URL/<owner>/<repo>.git
#   WARDEN_VERIFY_PROVENANCE  true (default) or false: verify the release's build
#                             provenance; false is for a mirror that cannot serve it
#   WARDEN_GH                 the GitHub CLI that verifies it (default: gh)
#   GITHUB_SERVER_URL, GITHUB_ACTION_PATH, GITHUB_PATH, GITHUB_OUTPUT,
#   RUNNER_OS, RUNNER_ARCH, RUNNER_TOOL_CACHE, RUNNER_TEMP: as set by the runner.
#
# Outputs (to $GITHUB_OUTPUT when set): path (the binary), version, source
# (cache, release or source). The binary's directory is appended to
# $GITHUB_PATH. No token is read or printed: releases are fetched anonymously,
# and the provenance is verified against the bundle the release carries (no
# attestations API call).
set -euo pipefail

log() { printf 'warden-install: %s\n' "$*" >&2; }

die() {
	if [ "${GITHUB_ACTIONS:-}" = true ]; then
		printf '::error title=warden install::%s\n' "$*" >&2
	else
		printf 'warden-install: error: %s\n' "$*" >&2
	fi
	exit 1
}

emit_output() {
	if [ -n "${GITHUB_OUTPUT:-}" ]; then
		printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
	fi
}

detect_os() {
	case "${RUNNER_OS:-$(uname -s)}" in
	Linux | linux) echo linux ;;
	macOS | Darwin | darwin) echo darwin ;;
	Windows | windows | MINGW* | MSYS* | CYGWIN*) echo windows ;;
	*) echo unknown ;;
	esac
}

detect_arch() {
	case "${RUNNER_ARCH:-$(uname -m)}" in
	X64 | x86_64 | amd64 | AMD64) echo amd64 ;;
	ARM64 | arm64 | aarch64) echo arm64 ;;
	*) echo unknown ;;
	esac
}

# sha256_of FILE prints the file's SHA-256 in lower-case hex.
sha256_of() {
	if command -v sha256sum >/dev/null 2>&1; then
		sha256sum "$1" | awk '{print tolower($1)}'
	else
		shasum -a 256 "$1" | awk '{print tolower($1)}'
	fi
}

# fetch URL FILE downloads URL to FILE and prints the HTTP status (000 when
# no answer came). Transient failures (timeouts, 408, 429, 5xx) are retried.
fetch() {
	local code
	code=$(curl -sSL --proto-redir '=https' --retry 3 --retry-delay 2 \
		--connect-timeout 20 --max-time 300 -o "$2" -w '%{http_code}' "$1") || true
	printf '%s' "${code:-000}"
}

# tag_of_ref REF prints the highest vX.Y.Z tag on the commit REF names (a
# moving tag such as v1 or v1.2, or a full commit SHA), or fails.
tag_of_ref() {
	local ref=$1 url refs target prefix=""
	url=${WARDEN_GIT_URL:-}
	if [ -z "$url" ]; then
		[ -n "$repo" ] || return 1
		url="$server/$repo.git"
	fi
	command -v git >/dev/null 2>&1 || return 1
	refs=$(GIT_TERMINAL_PROMPT=0 git ls-remote --tags "$url" 2>/dev/null) || return 1
	if [[ $ref =~ ^[0-9a-f]{40}$ ]]; then
		target=$ref
	else
		prefix="$ref."
		target=$(printf '%s\n' "$refs" | awk -v r="refs/tags/$ref" '
			$2 == r { c = $1 } $2 == r "^{}" { p = $1 }
			END { if (p != "") print p; else print c }')
	fi
	[ -n "$target" ] || return 1
	printf '%s\n' "$refs" | awk -v t="$target" -v pre="$prefix" '
		{
			name = $2; sub(/^refs\/tags\//, "", name)
			if (sub(/\^\{\}$/, "", name)) peeled[name] = $1; else raw[name] = $1
		}
		END {
			for (name in raw) {
				c = (name in peeled) ? peeled[name] : raw[name]
				if (c != t || name !~ /^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$/) continue
				if (pre != "" && index(name, pre) != 1) continue
				split(substr(name, 2), v, /[.-]/)
				print v[1], v[2], v[3], (index(name, "-") == 0), name
			}
		}' | sort -k1,1n -k2,2n -k3,3n -k4,4n | tail -n 1 | awk '{print $5}' | grep .
}

# unpack ARCHIVE DIR extracts a release archive into DIR.
unpack() {
	case "$1" in
	*.zip)
		if command -v unzip >/dev/null 2>&1; then
			unzip -q -o "$1" -d "$2"
		elif command -v 7z >/dev/null 2>&1; then
			7z x -y -bd -o"$2" "$1" >/dev/null
		else
			powershell -NoProfile -Command "Expand-Archive -Force -LiteralPath '$1' -DestinationPath '$2'"
		fi
		;;
	*) tar -xzf "$1" -C "$2" ;;
	esac
}

# install_release TAG installs the release TAG's binary into the tool cache
# and sets bin and source. It sets missing to the reason instead when the
# release or its asset for this platform does not exist; any other failure is
# fatal.
install_release() {
	local tag=$1 version asset base dir code want got
	version=${tag#v}
	asset="warden_${version}_${os}_${arch}.tar.gz"
	[ "$os" = windows ] && asset="warden_${version}_${os}_${arch}.zip"
	dir="$cache_root/$version/$arch"
	if [ -f "$dir.complete" ] && [ -x "$dir/warden$exe" ]; then
		bin="$dir/warden$exe" source=cache
		log "using warden $version from the tool cache: $bin (verified when it was installed)"
		return 0
	fi
	if [ -n "${WARDEN_DOWNLOAD_BASE_URL:-}" ]; then
		base=${WARDEN_DOWNLOAD_BASE_URL%/}
	elif [ -n "$repo" ]; then
		base="$server/$repo/releases/download"
	else
		missing="no repository known for the action to download a release from"
		log "$missing"
		return 0
	fi
	if ! command -v curl >/dev/null 2>&1; then
		missing="curl is not installed, so no release can be downloaded"
		log "$missing"
		return 0
	fi
	if ! command -v sha256sum >/dev/null 2>&1 && ! command -v shasum >/dev/null 2>&1; then
		die "neither sha256sum nor shasum is installed: cannot verify $asset"
	fi

	mkdir -p "$cache_root"
	work=$(mktemp -d "$cache_root/.download.XXXXXX")
	code=$(fetch "$base/$tag/checksums.txt" "$work/checksums.txt")
	case "$code" in
	200) ;;
	404)
		missing="no release $tag at $base/$tag (checksums.txt: HTTP 404)"
		log "$missing"
		return 0
		;;
	*) die "downloading $base/$tag/checksums.txt failed (HTTP $code)" ;;
	esac
	code=$(fetch "$base/$tag/$asset" "$work/$asset")
	case "$code" in
	200) ;;
	404)
		missing="release $tag has no $asset (HTTP 404)"
		log "$missing"
		return 0
		;;
	*) die "downloading $base/$tag/$asset failed (HTTP $code)" ;;
	esac

	want=$(awk -v f="$asset" '{ n = $2; sub(/^\*/, "", n) } n == f { print tolower($1); exit }' "$work/checksums.txt")
	[ -n "$want" ] || die "checksums.txt of release $tag has no entry for $asset: refusing to install it"
	got=$(sha256_of "$work/$asset")
	if [ "$got" != "$want" ]; then
		die "SHA-256 mismatch for $asset from $base/$tag: checksums.txt says $want, the download is $got; refusing to install it"
	fi
	log "verified SHA-256 of $asset: $got"
	verify_provenance "$tag" "$base" "$work/$asset"

	mkdir "$work/unpacked"
	unpack "$work/$asset" "$work/unpacked" || die "cannot unpack $asset"
	[ -f "$work/unpacked/warden$exe" ] || die "$asset holds no warden$exe at its root"
	chmod +x "$work/unpacked/warden$exe"
	rm -rf "$dir" "$dir.complete"
	mkdir -p "$(dirname "$dir")"
	mv "$work/unpacked" "$dir"
	: >"$dir.complete"
	bin="$dir/warden$exe" source=release
	log "installed warden $version ($os/$arch) from $base/$tag/$asset into $dir"
}

# provenance_bundle is the release asset that holds the build provenance of
# every archive (release.yml uploads it).
provenance_bundle=provenance.sigstore.jsonl

# verify_provenance TAG BASE ARCHIVE checks, before ARCHIVE is unpacked, who
# built it: the release's provenance bundle must be a valid GitHub artifact
# attestation of ARCHIVE's digest, signed (keylessly, through Sigstore) with
# the identity of the action repository's release workflow at refs/tags/TAG.
# The checksum only proves that ARCHIVE is the one checksums.txt names, and
# both come from the same release; this proves where both came from. Any
# failure is fatal unless WARDEN_VERIFY_PROVENANCE is false.
verify_provenance() {
	local tag=$1 base=$2 archive=$3 name code out gh workflow host
	name=$(basename "$archive")
	case "${WARDEN_VERIFY_PROVENANCE:-true}" in
	true) ;;
	false)
		log "not verifying the build provenance of $name (verify-provenance: false): only its checksum was checked"
		return 0
		;;
	*) die "verify-provenance input '$WARDEN_VERIFY_PROVENANCE' is not true or false" ;;
	esac
	[ -n "$repo" ] || die "cannot verify the build provenance of $name: no repository is known for the action (a mirror without provenance: set verify-provenance: false)"
	code=$(fetch "$base/$tag/$provenance_bundle" "$work/$provenance_bundle")
	case "$code" in
	200) ;;
	404) die "release $tag has no $provenance_bundle, so where $name was built cannot be verified: refusing to install it (a release made before provenance, or a mirror without it: set the action's verify-provenance input to false)" ;;
	*) die "downloading $base/$tag/$provenance_bundle failed (HTTP $code)" ;;
	esac
	gh=${WARDEN_GH:-gh}
	if ! command -v "$gh" >/dev/null 2>&1; then
		die "verifying the build provenance of $name needs the GitHub CLI (gh), which is not on this runner (GitHub's hosted runners have it): install it, or set the action's verify-provenance input to false"
	fi
	workflow="$repo/.github/workflows/release.yml"
	host=${server#*://}
	host=${host%%/*}
	if [ "$host" = github.com ]; then host=""; fi
	if ! out=$(GH_HOST=${host:-${GH_HOST:-}} "$gh" attestation verify "$archive" --bundle "$work/$provenance_bundle" \
		--repo "$repo" --signer-workflow "$workflow" --source-ref "refs/tags/$tag" 2>&1); then
		die "the build provenance of $name does not verify (built by $workflow at refs/tags/$tag?): refusing to install it. gh attestation verify said: $(printf '%s' "$out" | tr '\n' ' ')"
	fi
	log "verified the build provenance of $name: built by $workflow at refs/tags/$tag"
}

# build_from_source WHY builds cmd/warden from the action's own source.
build_from_source() {
	local why=$1 src label out goversion
	src=${GITHUB_ACTION_PATH:-$(cd "$(dirname "$0")/.." && pwd)}
	if [ ! -f "$src/go.mod" ] || [ ! -d "$src/cmd/warden" ]; then
		die "no release binary ($why), and $src holds no warden source to build"
	fi
	if ! command -v go >/dev/null 2>&1; then
		die "no release binary ($why), and building warden from the action's source needs Go, which is not on this runner. Add a step before warden: uses: actions/setup-go (with go-version: '1.26' or newer), or use a released version of the action (@v1)."
	fi
	label=$ref
	if [ -z "$label" ]; then
		label=local
		if command -v git >/dev/null 2>&1 && git -C "$src" rev-parse --short HEAD >/dev/null 2>&1; then
			label="local-$(git -C "$src" rev-parse --short HEAD)"
		fi
	fi
	label=$(printf '%s' "$label" | tr -c 'A-Za-z0-9._+-' '_')
	out=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/warden-src.XXXXXX")
	goversion=$(go env GOVERSION 2>/dev/null || echo "go (unknown version)")
	log "building warden $label from source in $src with $goversion ($why)"
	if ! (cd "$src" && CGO_ENABLED=0 go build -trimpath -ldflags "-X main.version=$label" -o "$out/warden$exe" ./cmd/warden); then
		die "go build of warden from $src failed (warden needs Go 1.26 or newer; see the output above)"
	fi
	bin="$out/warden$exe" source=source
	log "built $bin"
}

server=${GITHUB_SERVER_URL:-https://github.com}
server=${server%/}
os=$(detect_os)
arch=$(detect_arch)
exe=""
[ "$os" = windows ] && exe=.exe
cache_root="${RUNNER_TOOL_CACHE:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}/warden-tool-cache}/warden"
work=""
trap 'if [ -n "$work" ]; then rm -rf "$work"; fi' EXIT

# The action's repository and ref: the runner's checkout path is the most
# reliable source, the expressions passed in are the fallback.
repo=${WARDEN_ACTION_REPOSITORY:-}
ref=${WARDEN_ACTION_REF:-}
action_path=${GITHUB_ACTION_PATH:-}
action_path=${action_path//\\//}
action_path=${action_path%/}
if [ -n "$action_path" ]; then
	p_ref=${action_path##*/} rest=${action_path%/*}
	p_name=${rest##*/} rest=${rest%/*}
	p_owner=${rest##*/} rest=${rest%/*}
	if [ "${rest##*/}" = _actions ] && [ -n "$p_owner" ] && [ -n "$p_name" ] && [ -n "$p_ref" ]; then
		if [ -n "$ref$repo" ] && [ "$p_owner/$p_name@$p_ref" != "$repo@$ref" ]; then
			log "the action runs from $p_owner/$p_name@$p_ref (its path) but was told $repo@$ref; using the path"
		fi
		repo="$p_owner/$p_name" ref=$p_ref
	fi
fi

bin="" source="" tag="" why=""
semver='^v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$'
if [ -n "${WARDEN_VERSION:-}" ]; then
	[[ $WARDEN_VERSION =~ $semver ]] || die "version input '$WARDEN_VERSION' is not a version such as 1.2.3 or v1.2.3"
	tag="v${WARDEN_VERSION#v}"
elif [ -z "$ref" ]; then
	why="the action has no ref: a local action (uses: ./)"
elif [[ $ref =~ $semver ]]; then
	tag=$ref
elif [[ $ref =~ ^v[0-9]+(\.[0-9]+)?$ || $ref =~ ^[0-9a-f]{40}$ ]]; then
	if tag=$(tag_of_ref "$ref"); then
		log "ref $ref is release $tag"
	else
		tag="" why="no vX.Y.Z tag found on the commit of $ref"
	fi
else
	why="ref $ref is not a release tag"
fi

if [ "$os" = unknown ] || [ "$arch" = unknown ]; then
	[ -z "${WARDEN_VERSION:-}" ] || die "no release binary for this platform ($(uname -s)/$(uname -m))"
	why="no release binary for this platform ($(uname -s)/$(uname -m))"
	tag=""
fi

if [ -n "$tag" ]; then
	missing=""
	install_release "$tag"
	if [ -n "$missing" ]; then
		[ -z "${WARDEN_VERSION:-}" ] || die "cannot install warden $tag (version input '$WARDEN_VERSION'): $missing"
		why=$missing
	fi
fi
[ -n "$bin" ] || build_from_source "$why"

if ! reported=$("$bin" version 2>&1); then
	die "the installed binary $bin does not run: $reported"
fi
log "$reported ($source) at $bin"
bindir=$(dirname "$bin")
if [ -n "${GITHUB_PATH:-}" ]; then
	printf '%s\n' "$bindir" >>"$GITHUB_PATH"
fi
emit_output path "$bin"
# "warden 1.2.3 (commit ..., go1.26.8 linux/amd64)": the version is the second word.
version=${reported#warden }
emit_output version "${version%% *}"
emit_output source "$source"
