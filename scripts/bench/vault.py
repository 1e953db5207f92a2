"""Driver for scripts/bench-vault: runs each case in one session and prints figures.

Usage: python3 vault.py HUBSCRIPT_BIN
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

BIN = sys.argv[1]
RUNS = int(os.environ.get("BENCH_RUNS", "30"))
OBJECT_MIB = int(os.environ.get("BENCH_OBJECT_MIB", "50"))
OBJECT_RUNS = int(os.environ.get("BENCH_OBJECT_RUNS", "3"))


def wall(cmd, env=None):
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    return time.perf_counter() - t0


def medians_ms(cmds):
    """Median wall time of each command; runs are interleaved so that load on this
    noisy machine hits every command alike."""
    for cmd in cmds:
        wall(cmd)  # warm the page cache
    samples = [[] for _ in cmds]
    for _ in range(RUNS):
        for k, cmd in enumerate(cmds):
            samples[k].append(wall(cmd))
    return [statistics.median(s) * 1000 for s in samples]


def timed(cmd):
    """Wall seconds and peak RSS (KiB, from GNU time -v) of one run."""
    t0 = time.perf_counter()
    out = subprocess.run(["/usr/bin/time", "-v"] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, check=True)
    seconds = time.perf_counter() - t0
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", out.stderr).group(1))
    return seconds, rss


def main():
    with tempfile.TemporaryDirectory() as tmp:
        key = os.path.join(tmp, "vault.key")
        vault = ["--vault-dir", os.path.join(tmp, "vault"), "--key-file", key]
        subprocess.run([BIN, "vault", "init"] + vault, check=True, stdout=subprocess.DEVNULL)
        for k in range(20):
            subprocess.run([BIN, "vault", "set", f"svc/{k}"] + vault, input=f"value-{k}".encode(), check=True,
                           stdout=subprocess.DEVNULL)

        print(f"Unlock with a key file and read one secret (20 in the vault), median of {RUNS} runs, wall clock")
        bare, unlock = medians_ms([[BIN, "--version"], [BIN, "vault", "verify", "svc/7"] + vault])
        print(f"  hubscript --version                     {bare:7.2f} ms")
        print(f"  hubscript vault verify svc/7 --key-file {unlock:7.2f} ms")
        extra = unlock - bare
        print(f"  beyond process start: {extra:.2f} ms; target <= 5 ms -> {'met' if extra <= 5 else 'MISSED'}\n")

        source = os.path.join(tmp, "object.bin")
        with open(source, "wb") as f:
            for _ in range(OBJECT_MIB):
                f.write(os.urandom(1 << 20))
        _, baseline_rss = timed([BIN, "--version"])
        puts, gets, put_rss, get_rss = [], [], [], []
        for k in range(OBJECT_RUNS):
            seconds, rss = timed([BIN, "vault", "put-object", source, "--name", f"bench/{k}"] + vault)
            puts.append(seconds)
            put_rss.append(rss)
            out = os.path.join(tmp, "object.out")
            seconds, rss = timed([BIN, "vault", "get-object", f"bench/{k}", "--out", out] + vault)
            gets.append(seconds)
            get_rss.append(rss)
            if subprocess.run(["cmp", "-s", source, out]).returncode != 0:
                sys.exit("get-object did not give back the file put")
            os.remove(out)
        put_s, get_s = statistics.median(puts), statistics.median(gets)
        print(f"{OBJECT_MIB} MiB object, median of {OBJECT_RUNS} runs (wall clock of the whole process, fsyncs included)")
        for name, s, rss in [("put-object", put_s, max(put_rss)), ("get-object", get_s, max(get_rss))]:
            rate = OBJECT_MIB / s
            print(f"  {name}  {s * 1000:7.0f} ms  {rate:6.0f} MiB/s (target >= 200: {'met' if rate >= 200 else 'MISSED'})"
                  f"   peak RSS {rss / 1024:5.1f} MiB (target <= 32: {'met' if rss <= 32 * 1024 else 'MISSED'})")
        print(f"  (hubscript --version alone: peak RSS {baseline_rss / 1024:.1f} MiB)")


main()
