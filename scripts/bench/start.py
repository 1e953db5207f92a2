"""Driver for scripts/bench-start: what each start-up device of the release build buys.

Usage: python3 start.py HUBSCRIPT_BIN RELEASE_YAML

HUBSCRIPT_BIN is the release binary as scripts/lib/bootstrap.sh makes it. RELEASE_YAML is
SwiftPM's build manifest (.build/release.yaml), from which the binary's link command is
read: every variant below is the same objects linked again with one device taken out,
so the only difference between two rows is that device. All of them, and lua5.4, are
timed in one session, their runs interleaved so that the machine's load falls on each
alike.

Devices that are not in the link command are not varied here: the compiler flags of the
release build, and the static Swift runtime and Foundation (objects compiled for it name
static-only libraries, so they cannot be linked against the shared runtime); see
docs/performance.md.
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BIN, MANIFEST = sys.argv[1], sys.argv[2]
RUNS = int(os.environ.get("BENCH_RUNS", "300"))
RSS_RUNS = 10

# The libraries the release build drops from the binary's needed list (bootstrap.sh,
# drop_lazy_libraries), each with the prefixes of its symbols: a variant drops one only
# when it imports none of them, as the build script does.
DROPPABLE = {
    "libcurl.so.4": ("curl_",),
    "libpq.so.5": ("PQ",),
    "liblua5.4.so.0": ("lua_", "luaL_", "luaopen_"),
    "libsqlite3.so.0": ("sqlite3_",),
    "libsodium.so.23": ("sodium_", "crypto_", "randombytes_"),
}


def link_arguments():
    """The swiftc command that links the hubscript executable, from the build manifest."""
    with open(MANIFEST) as manifest:
        lines = manifest.read().split("\n")
    for k, line in enumerate(lines):
        # "C.hubscript-<arch>-<vendor>-<os>-<env>-release.exe": (not hubscript-bench's)
        if re.fullmatch(r'"C\.hubscript-\w+-\w+-\w+-\w+-release\.exe":', line.strip()):
            for following in lines[k + 1:k + 8]:
                if following.strip().startswith("args: "):
                    return json.loads(following.strip()[len("args: "):])
    sys.exit(f"bench-start: no link command for hubscript in {MANIFEST}; build the release binary first")


def without(args, *pieces):
    """args less each run of consecutive arguments in pieces (each a list)."""
    out = list(args)
    for piece in pieces:
        for k in range(len(out) - len(piece) + 1):
            if out[k:k + len(piece)] == piece:
                del out[k:k + len(piece)]
                break
        else:
            sys.exit(f"bench-start: the link command has no {' '.join(piece)}; update scripts/bench/start.py")
    return out


def matching(args, predicate):
    """The -Xlinker pairs (or single arguments) whose value satisfies predicate."""
    pieces = []
    for k, arg in enumerate(args):
        if predicate(arg):
            pieces.append(["-Xlinker", arg] if k > 0 and args[k - 1] == "-Xlinker" else [arg])
    return pieces


def variants(args):
    """(name, link arguments, drop libraries and RUNPATH as the build script does)."""
    lib_dir = next((a[2:] for a in args if a.startswith("-L") and a.endswith("-linux-gnu")), "")
    archives = lambda *names: [["-Xlinker", "--whole-archive"] + sum((["-Xlinker", f"{lib_dir}/{n}"] for n in names), [])
                               + ["-Xlinker", "--no-whole-archive"]]
    order = matching(args, lambda a: a.startswith("--symbol-ordering-file=")) + [["-Xlinker", "--no-warn-symbol-ordering"]]
    relr = [["-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"]]
    return [
        ("Lua, SQLite, libsodium shared", without(args, *archives("liblua5.4.a"),
                                                  *archives("libsqlite3.a", "libsodium.a")), True),
        ("libstdc++ shared", without(args, *matching(args, lambda a: a.startswith("-L") and a.endswith("static-libstdcxx"))), True),
        ("no patchelf: libcurl, libpq, ... loaded at start", args, False),
        ("no start-up symbol order", without(args, *order), True),
        ("relocations not packed", without(args, *relr), True),
        ("every symbol exported", without(args, ["-Xlinker", "--no-export-dynamic"]), True),
        ("the toolchain's default linker", without(args, *matching(args, lambda a: a.startswith("-ld-path=")), *order, *relr), True),
    ]


def drop_libraries(binary):
    needed = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, check=True).stdout
    imported = subprocess.run(["nm", "-D", "--undefined-only", binary], capture_output=True, text=True,
                              check=True).stdout.split()
    command = ["patchelf"]
    for library, prefixes in DROPPABLE.items():
        if f"[{library}]" in needed and not any(s.startswith(prefixes) for s in imported):
            command += ["--remove-needed", library]
    subprocess.run(command + ["--remove-rpath", binary], check=True)  # as the build script does


def link(name, args, drop, folder):
    out = os.path.join(folder, re.sub(r"[^A-Za-z0-9+]+", "-", name).strip("-"))
    k = args.index("-o")
    command = args[:k + 1] + [out] + args[k + 2:]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"  ({name}: the link failed: {done.stderr.strip().splitlines()[-1:]})", file=sys.stderr)
        return None
    if drop:
        drop_libraries(out)
    return out


def spawn_ms(argv, devnull):
    """Wall time of one run, fork to exit, in ms; fails loudly if the command fails."""
    t0 = time.perf_counter()
    pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=[
        (os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)])
    _, status = os.waitpid(pid, 0)
    elapsed = (time.perf_counter() - t0) * 1000
    if status != 0:
        sys.exit(f"bench-start: {' '.join(argv)} failed (status {status})")
    return elapsed


def peak_rss_mib(argv):
    """Median peak resident set, from GNU time's %M (a child spawned from this Python
    would report Python's own size: ru_maxrss counts from before the exec)."""
    peaks = []
    for _ in range(RSS_RUNS):
        out = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True).stderr.strip().splitlines()
        peaks.append(int(out[-1]) / 1024)
    return statistics.median(peaks)


def p90(samples):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, (9 * len(ordered)) // 10)]


def main():
    args = link_arguments()
    hello = os.path.join(HERE, "hello_recipe.lua")
    with tempfile.TemporaryDirectory() as folder:
        state = os.path.join(folder, "state")
        cases = [
            ("lua5.4 -e ''", ["lua5.4", "-e", ""]),
            ("lua5.4 hello.lua", ["lua5.4", os.path.join(HERE, "hello.lua")]),
            ("hubscript --version", [BIN, "--version"]),
            ("hubscript run hello (release build)", [BIN, "run", hello, "--state-dir", state]),
        ]
        print(f"bench-start: linking {len(variants(args))} variants of the release binary", file=sys.stderr, flush=True)
        for name, variant_args, drop in variants(args):
            binary = link(name, variant_args, drop, folder)
            if binary is not None:
                cases.append((f"  {name}", [binary, "run", hello, "--state-dir", state]))
        load_before = os.getloadavg()[0]
        with open(os.devnull, "w") as devnull:
            for _, argv in cases:  # warm the page cache; the state folder exists, as on every later run
                for _ in range(3):
                    spawn_ms(argv, devnull.fileno())
            samples = [[] for _ in cases]
            for _ in range(RUNS):
                for k, (_, argv) in enumerate(cases):
                    samples[k].append(spawn_ms(argv, devnull.fileno()))
            load_after = os.getloadavg()[0]
        release = statistics.median(samples[3])
        print(f"Start-up, wall clock from spawn to exit: {RUNS} runs each, interleaved; peak RSS median of {RSS_RUNS}")
        print(f"  load average {load_before:.1f} before the runs, {load_after:.1f} after, on {os.cpu_count()} cores")
        print(f"  {'case (indented: the release build without one device)':<58} {'median':>8} {'p90':>8} {'vs release':>11} {'peak RSS':>9}")
        for k, (name, argv) in enumerate(cases):
            median = statistics.median(samples[k])
            delta = f"{median - release:+8.2f} ms" if k > 3 else ""
            print(f"  {name:<58} {median:5.2f} ms {p90(samples[k]):5.2f} ms {delta:>11} {peak_rss_mib(argv):5.1f} MiB")


main()
