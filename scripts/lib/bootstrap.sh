# Shared set-up for scripts/*: installs the Debian packages hubscript needs when they
# are missing, and puts the Swift toolchain on PATH. Source it; it is idempotent.
#   HUBSCRIPT_PACKAGES  extra packages to ensure (space-separated)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# The C libraries the package links (see Package.swift) and the tools scripts use.
required_packages="pkg-config liblua5.4-dev libsqlite3-dev libsodium-dev libpq-dev curl ${HUBSCRIPT_PACKAGES:-}"

ensure_packages() {
  local missing=()
  for pkg in $required_packages; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  ((${#missing[@]} == 0)) && return 0
  echo "hubscript: installing missing Debian packages: ${missing[*]}" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "hubscript: need root (or sudo) to apt-get install ${missing[*]}" >&2; exit 2; }
    sudo="sudo"
  fi
  if ! $sudo apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1; then
    $sudo apt-get update -qq >/dev/null
    $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

ensure_swift() {
  if ! command -v swift >/dev/null 2>&1; then
    for dir in /opt/swift/usr/bin /usr/share/swift/usr/bin; do
      [ -x "$dir/swift" ] && export PATH="$dir:$PATH" && break
    done
  fi
  command -v swift >/dev/null 2>&1 || { echo "hubscript: Swift 6 toolchain not found (expected at /opt/swift)" >&2; exit 2; }
}

# build_hubscript CONFIG: builds the CLI quietly; shows the log only if it fails.
build_hubscript() {
  local config="${1:-release}"
  local log="$repo_root/.build/hubscript-build-$config.log"
  mkdir -p "$repo_root/.build"
  if ! (cd "$repo_root" && swift build -c "$config" --product hubscript) >"$log" 2>&1; then
    echo "hubscript: build failed; the end of $log:" >&2
    tail -n 40 "$log" >&2
    exit 2
  fi
  hubscript_bin="$(cd "$repo_root" && swift build -c "$config" --show-bin-path)/hubscript"
}

ensure_packages
ensure_swift
