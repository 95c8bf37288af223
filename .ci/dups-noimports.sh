#!/bin/bash
# Runs the library's `duplicates --repo internal` on a copy of TREE's internal/ in which every Go
# `import ( ... )` block is blanked (line numbers kept). The tool's README says import lines are passed
# over, but it skips only lines that begin with `import`: the package paths inside a block are read, and
# on 2026-11-27 130 of its 232 pairs were two files' sorted standard-library imports and nothing else.
# Issue 34's closing note gives both counts. Usage: .ci/dups-noimports.sh [TREE] [duplicates flags...]
tree=${1:-$PWD}; [ $# -gt 0 ] && shift
set -e -o pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tree" && git ls-files internal | tar -cf - -T - ; git ls-files --others --exclude-standard internal | tar -cf - -T - ) 2>/dev/null | tar -xif - -C "$tmp"
find "$tmp" -name '*.go' -print0 | xargs -0 python3 -c '
import re,sys
for p in sys.argv[1:]:
    s=open(p).read()
    s=re.sub(r"(?ms)^import \(\n.*?^\)", lambda m: "\n"*m.group(0).count("\n"), s)
    open(p,"w").write(s)
'
cd "$tmp" && duplicates --repo internal "$@"
