#!/usr/bin/env bash
# rename.sh OWNER [REPO] publishes this repository under your own name: it
# rewrites the placeholder owner "org" (and the repository name "warden"
# when REPO is given) wherever the project names itself:
#
#   - the Go module path, github.com/org/warden, in go.mod, every import and
#     internal/browsertier's go.mod (its require and replace lines);
#   - the action's owner in every `uses: org/warden@...` (README, workflows)
#     and every other org/warden (SARIF's tool URL, tests' repository names);
#   - action.yml's `author: org`.
#
# Then it runs gofmt on the Go files it changed (an import path that sorts
# differently moves within its group) and checks that no placeholder is
# left. It edits the files git tracks, in place, and nothing else; run it at
# the top of a clean checkout, review `git diff`, commit. Running it again
# with the same names changes nothing. See README, "Publishing warden under
# your own name".
set -euo pipefail

die() {
	echo "rename.sh: $*" >&2
	exit 2
}

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	die "usage: scripts/rename.sh OWNER [REPO]   (e.g. scripts/rename.sh acme)"
fi
owner=$1
repo=${2:-warden}
# GitHub's rules for a user or organization name, and a repository name.
if ! [[ $owner =~ ^[A-Za-z0-9]([A-Za-z0-9-]{0,37}[A-Za-z0-9])?$ ]] || [[ $owner == *--* ]]; then
	die "OWNER '$owner' is not a GitHub user or organization name (letters, digits and single hyphens, at most 39, not at either end)"
fi
if ! [[ $repo =~ ^[A-Za-z0-9._-]{1,100}$ ]] || [ "$repo" = . ] || [ "$repo" = .. ]; then
	die "REPO '$repo' is not a GitHub repository name (letters, digits, '.', '_' and '-')"
fi

cd "$(dirname "$0")/.."
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	die "$(pwd) is not a git checkout: run it in a clone of warden"
fi
if [ ! -f go.mod ] || [ ! -f action.yml ]; then
	die "$(pwd) has no go.mod and action.yml: run it in a clone of warden"
fi

# What the placeholders are, as extended regular expressions (sed -E). The
# owner "org" counts only as a whole path segment: octo-org/warden, an
# example name in GitHub's payloads, is not ours.
module_re='github\.com/org/warden'
slug_re='(^|[^A-Za-z0-9_.-])org/warden([^A-Za-z0-9_.-]|$)'
author_re='^author: org$'

self=scripts/rename.sh # its patterns name the placeholder on purpose
changed=()
while IFS= read -r -d '' f; do
	changed+=("$f")
done < <(git grep -l -z -I -E -e "$module_re|$slug_re" -e "$author_re" -- . ":!$self")

if [ ${#changed[@]} -gt 0 ]; then
	# One sed for every file (-i with a suffix is the spelling GNU and BSD
	# sed share; the backups go right after).
	printf '%s\0' "${changed[@]}" | xargs -0 sed -E -i.rename-bak \
		-e "s#github\\.com/org/warden#github.com/$owner/$repo#g" \
		-e ":again" -e "s#(^|[^A-Za-z0-9_.-])org/warden([^A-Za-z0-9_.-]|\$)#\\1$owner/$repo\\2#g" -e "t again" \
		-e "s#^author: org\$#author: $owner#"
	for f in "${changed[@]}"; do
		rm -f "$f.rename-bak"
	done
fi

gofiles=()
for f in ${changed[@]+"${changed[@]}"}; do
	[[ $f == *.go ]] && gofiles+=("$f")
done
if [ ${#gofiles[@]} -gt 0 ]; then
	if command -v gofmt >/dev/null 2>&1; then
		gofmt -w "${gofiles[@]}"
	else
		echo "rename.sh: gofmt is not on PATH: run gofmt -w . before committing (imports may need re-sorting)" >&2
	fi
fi

left=$(git grep -n -I -E -e "$module_re|$slug_re" -e "$author_re" -- . ":!$self" || true)
if [ -n "$left" ]; then
	echo "$left" >&2
	die "placeholders are left (above); nothing else was wrong"
fi

echo "rename.sh: ${#changed[@]} files now name github.com/$owner/$repo (uses: $owner/$repo@v1, author: $owner)."
echo "Next: review 'git diff', commit, push to github.com/$owner/$repo, then tag the first release (README, \"Publishing warden under your own name\")."
