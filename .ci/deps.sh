#!/usr/bin/env bash
# Installs what `make test` needs beyond Go (.ci/test-packages) through the
# system's package manager, when it may: as root, or with sudo that needs no
# password. Otherwise it stops, before any test runs, with the one command
# that installs them. Nothing to do when everything is there.
# (MAILGATE_DEPS_LIST names another list and MAILGATE_DEPS_NO_INSTALL=1
# never installs: the test of this script, cmd/mailgate/deps_test.go.)
set -euo pipefail
list=${MAILGATE_DEPS_LIST:-$(dirname "$0")/test-packages}

has() {
  case $1 in
  initdb) # Debian keeps the server binaries off PATH
    command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 ;;
  *) command -v "$1" >/dev/null 2>&1 ;;
  esac
}

missing=()
while read -r pkg cmd _; do
  case $pkg in '' | '#'*) continue ;; esac
  has "$cmd" || missing+=("$pkg")
done <"$list"
[ ${#missing[@]} -eq 0 ] && exit 0

install="apt-get install -y ${missing[*]}"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "make test needs: ${missing[*]} (Debian package names; see .ci/test-packages). Install them with your system's package manager, then run make test again." >&2
  exit 1
fi
sudo=""
if [ "${MAILGATE_DEPS_NO_INSTALL:-}" = 1 ]; then
  may=no
elif [ "$(id -u)" = 0 ]; then
  may=yes
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  may=yes sudo="sudo -n"
else
  may=no
fi
if [ $may = no ]; then
  echo "make test needs: ${missing[*]} (see .ci/test-packages). Install them, then run make test again:" >&2
  echo "  sudo apt-get update && sudo $install" >&2
  exit 1
fi
echo "installing what make test needs: ${missing[*]}" >&2
$sudo apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
# Debian's postgresql starts its own cluster on 5432; the tests do not use it.
