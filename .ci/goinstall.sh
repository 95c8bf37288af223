#!/usr/bin/env bash
# Checks README's first install line, `go install
# github.com/mailgate/mailgate/cmd/mailgate@latest`, the way a user runs it:
# a clean module cache, a temporary GOBIN, the module fetched through a module
# proxy. The module is served from a file:// proxy made from the committed
# tree (HEAD) as a release tag would publish it; its dependencies come from
# the ordinary module proxy. Then the installed binary must run.
set -euo pipefail
cd "$(dirname "$0")/.."

mod=github.com/mailgate/mailgate
ver=v0.0.0-ci
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

dir="$tmp/proxy/$mod/@v"
mkdir -p "$dir"
git archive --format=zip --prefix="$mod@$ver/" -o "$dir/$ver.zip" HEAD
git show HEAD:go.mod > "$dir/$ver.mod"
printf '{"Version":"%s","Time":"%s"}\n' "$ver" "$(git show -s --format=%cI HEAD)" > "$dir/$ver.info"
echo "$ver" > "$dir/list"

upstream=$(go env GOPROXY)
env -u GOFLAGS \
  GOPATH="$tmp/gopath" GOMODCACHE="$tmp/modcache" GOBIN="$tmp/bin" \
  GOPROXY="file://$tmp/proxy,$upstream" GONOSUMDB="$mod" GOTOOLCHAIN=local \
  go install "$mod/cmd/mailgate@latest"

out=$("$tmp/bin/mailgate" --version)
echo "go install $mod/cmd/mailgate@latest: $out"
case "$out" in
  "mailgate $ver"*) ;;
  *) echo "unexpected version line: $out" >&2; exit 1 ;;
esac
