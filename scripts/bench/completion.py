"""Driver for scripts/bench-completion: how long one Tab takes (`hubscript __complete`)
for each kind of word, beside a bare start (`hubscript --version`), in one session.

Usage: python3 completion.py HUBSCRIPT_BIN
BENCH_RUNS=N (default 30) samples per case; BENCH_JOURNAL_RUNS=N (default 200) runs in
the journal; BENCH_RECIPES=N (default 40) recipes in the library.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

BIN = sys.argv[1]
RUNS = int(os.environ.get("BENCH_RUNS", "30"))
JOURNAL_RUNS = int(os.environ.get("BENCH_JOURNAL_RUNS", "200"))
RECIPES = int(os.environ.get("BENCH_RECIPES", "40"))


def seconds(args, cwd, env):
    start = time.perf_counter()
    done = subprocess.run([BIN] + args, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    took = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{args} exited {done.returncode}")
    return took


def main():
    with tempfile.TemporaryDirectory() as root:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HUBSCRIPT_")}
        env.update(HOME=root, XDG_STATE_HOME=os.path.join(root, "state"), XDG_CONFIG_HOME=os.path.join(root, "xdg"))
        os.makedirs(os.path.join(root, "ops"))
        for i in range(RECIPES):
            with open(os.path.join(root, "ops", f"r{i:03}.lua"), "w") as f:
                f.write(f'recipe {{ name = "r{i}", needs = {{ "users.list" }}, '
                        'params = { email = { type = "string" }, dry = { type = "boolean", default = false } } }\n')
        with open(os.path.join(root, "hello.lua"), "w") as f:
            f.write('recipe { name = "hello" }\nprint("hi")\n')
        with open(os.path.join(root, "hubscript.config.lua"), "w") as f:
            f.write('return { default_profile = "sandbox", libraries = { ops = "ops" },\n'
                    '  profiles = { sandbox = { sandbox = true }, prod = { hub_url = "https://h.example.com", api_key_env = "K" } },\n'
                    '  jobs = { nightly = { recipe = "hello.lua", schedule = "@daily" } } }\n')
        subprocess.run([BIN, "trust"], cwd=root, env=env, check=True, stdout=subprocess.DEVNULL)
        for _ in range(JOURNAL_RUNS):
            subprocess.run([BIN, "hello.lua"], cwd=root, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cases = [
            ("--version (a bare start)", ["--version"]),
            ("first word (subcommands, library recipes)", ["__complete", ""]),
            ("an option (runs show --)", ["__complete", "runs", "show", "--"]),
            ("profiles (--profile)", ["__complete", "run", "hello.lua", "--profile", ""]),
            ("jobs (jobs run)", ["__complete", "jobs", "run", ""]),
            (f"run ids ({JOURNAL_RUNS} runs in the journal)", ["__complete", "runs", "show", ""]),
            ("a library recipe's parameters", ["__complete", "ops:r000", "--param", ""]),
        ]
        print(f"hubscript __complete, {RUNS} samples each (median, p95, ms); binary {BIN}")
        for name, args in cases:
            samples = sorted(seconds(args, root, env) * 1000 for _ in range(RUNS))
            p95 = samples[min(len(samples) - 1, int(len(samples) * 0.95))]
            print(f"  {name:<48} {statistics.median(samples):7.1f} {p95:7.1f}")


main()
