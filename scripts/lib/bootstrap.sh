# Shared set-up for scripts/*: installs the Debian packages hubscript needs when they
# are missing, and puts the Swift toolchain on PATH. Source it; it is idempotent.
#   HUBSCRIPT_PACKAGES  extra packages to ensure (space-separated)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# The C libraries the package links (see Package.swift) and the tools scripts use (git:
# library sources `git+file://…@commit` are fetched with it). libcurl4-openssl-dev and
# patchelf: the release build links Foundation statically (build_hubscript), which names
# -lcurl at link time.
required_packages="pkg-config liblua5.4-dev libsqlite3-dev libsodium-dev libpq-dev curl git libcurl4-openssl-dev patchelf ${HUBSCRIPT_PACKAGES:-}"

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

# The release build starts fast (docs/performance.md, "Start-up"): the Swift runtime and
# Foundation are linked statically (--static-swift-stdlib), so is Lua (Debian's
# liblua5.4.a, whole, so the interpreter is not position-independent shared code), and
# neither libcurl nor libpq is loaded at start-up: Sources/CLazyLibraries resolves each
# on first use (an HTTPS request, a PostgreSQL journal). The link still names
# libcurl.so.4, libpq.so.5 and liblua5.4.so.0 (autolink entries of FoundationNetworking
# and of the module maps); nothing refers to them any more, so patchelf drops them,
# after checking that no symbol of theirs is left undefined.
#
# Then the layout (docs/performance.md, "Start-up"): linked by lld, with relative
# relocations packed (-z pack-relative-relocs: 16 KiB instead of 2 MiB of .rela.dyn to read
# at every start), and every function the start-up path runs placed first, together, in
# the order of scripts/lib/startup-order.txt (made by scripts/startup-order), so a start
# faults in a few hundred KiB of code instead of pages scattered over 18 MiB. Our modules
# are compiled with one section per function so the order reaches them too. Without lld
# beside the toolchain's swift, the default linker builds the same program, unordered.
ensure_packages
ensure_swift
lib_dir="/usr/lib/$(uname -m)-linux-gnu"
lua_archive="$lib_dir/liblua5.4.a"
release_flags=(--static-swift-stdlib -Xlinker --whole-archive -Xlinker "$lua_archive" -Xlinker --no-whole-archive)
# SQLite and libsodium too, from Debian's archives (each shared library the loader maps
# costs its relocations and page faults at every start), linked whole like Lua, so the
# module maps' -lsqlite3 and -lsodium find nothing left to resolve.
release_flags+=(-Xlinker --whole-archive -Xlinker "$lib_dir/libsqlite3.a" -Xlinker "$lib_dir/libsodium.a" -Xlinker --no-whole-archive)
# And the C++ library the Swift runtime uses, from GCC's archive: the toolchain names
# -lstdc++, which finds the linker script below (INPUT of libstdc++.a) before GCC's
# shared library. Loaded as a shared library it made the loader bind thousands of
# symbols at every start (LD_DEBUG=bindings; docs/performance.md, "Start-up").
libstdcxx_archive="$(gcc -print-file-name=libstdc++.a 2>/dev/null || true)"
if [ -f "$libstdcxx_archive" ]; then
  mkdir -p "$repo_root/.build/static-libstdcxx"
  script_text="INPUT($libstdcxx_archive)"
  [ "$(cat "$repo_root/.build/static-libstdcxx/libstdc++.so" 2>/dev/null)" = "$script_text" ] ||
    echo "$script_text" >"$repo_root/.build/static-libstdcxx/libstdc++.so"
  release_flags+=(-Xlinker -L"$repo_root/.build/static-libstdcxx")
fi
release_lld="$(dirname "$(readlink -f "$(command -v swift)")")/ld.lld"
if [ -x "$release_lld" ]; then
  mkdir -p "$repo_root/.build"
  release_toolset="$repo_root/.build/lld-toolset.json"
  toolset_text="{ \"schemaVersion\": \"1.0\", \"linker\": { \"path\": \"$release_lld\" } }"
  # Rewritten only when it changes: SwiftPM relinks when the file does.
  [ "$(cat "$release_toolset" 2>/dev/null)" = "$toolset_text" ] || echo "$toolset_text" >"$release_toolset"
  release_flags+=(--toolset "$release_toolset"
    -Xswiftc -Xfrontend -Xswiftc -function-sections
    -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors
    -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --no-export-dynamic
    # Our C functions 64-byte aligned, which aligns .text to a cache line: the order file
    # puts the Lua interpreter's loop (lvm.o, then ldo.o, from liblua5.4.a) first in .text,
    # so luaV_execute and luaD_precall then start at the same offsets in a cache line in
    # every build, not wherever the size of what precedes .text leaves them. Either at
    # offset 0 made the interpreter measurably slower (docs/performance.md).
    -Xcc -falign-functions=64
    -Xlinker "--symbol-ordering-file=$repo_root/scripts/lib/startup-order.txt" -Xlinker --no-warn-symbol-ordering)
fi

# build_hubscript CONFIG: builds the CLI quietly; shows the log only if it fails.
build_hubscript() {
  local config="${1:-release}"
  local log="$repo_root/.build/hubscript-build-$config.log"
  local flags=()
  [ "$config" = release ] && flags=("${release_flags[@]}")
  mkdir -p "$repo_root/.build"
  if ! (cd "$repo_root" && swift build -c "$config" --product hubscript ${flags[@]+"${flags[@]}"}) >"$log" 2>&1; then
    echo "hubscript: build failed; the end of $log:" >&2
    tail -n 40 "$log" >&2
    exit 2
  fi
  hubscript_bin="$(cd "$repo_root" && swift build -c "$config" --show-bin-path ${flags[@]+"${flags[@]}"})/hubscript"
  [ "$config" = release ] && drop_lazy_libraries "$hubscript_bin"
  return 0
}

# drop_lazy_libraries BIN: removes libcurl.so.4, libpq.so.5 (loaded on first use),
# liblua5.4.so.0, libsqlite3.so.0 and libsodium.so.23 (linked in) from BIN's needed
# libraries, refusing if BIN still imports a symbol of any of them.
drop_lazy_libraries() {
  local undefined
  undefined="$(nm -D --undefined-only "$1" | awk '{print $NF}' | grep -E '^(curl_|PQ|lua_|luaL_|luaopen_|sqlite3_|sodium_|crypto_|randombytes_)' || true)"
  if [ -n "$undefined" ]; then
    echo "hubscript: the release binary still imports $(echo "$undefined" | head -3 | tr '\n' ' ')…; not dropping its libraries" >&2
    exit 2
  fi
  # No RUNPATH either: every library left is a system one, and $ORIGIN made the loader
  # try a dozen folders beside the binary for each before the system's.
  patchelf --remove-needed libcurl.so.4 --remove-needed libpq.so.5 --remove-needed liblua5.4.so.0 \
    --remove-needed libsqlite3.so.0 --remove-needed libsodium.so.23 --remove-rpath "$1"
}
