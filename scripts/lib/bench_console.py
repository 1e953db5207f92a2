"""The console measured over a large journal (run by scripts/bench-console).

Fills a state folder's SQLite journal with RUNS runs (2 writes each; every 7th failed,
every 50th a fire of job "nightly"; one run of 400 writes) by SQL in the journal's own
schema (made by a first real run), starts `hubscript console` on it, and measures over
HTTP on loopback, as a browser asks:
  - the runs page (first page, a status filter, a job filter): median and p90 of LOADS;
  - a run's page (first and second page of its writes): median and p90 of LOADS;
  - the live view: a real run writing against the built-in sandbox while an
    event-stream client follows it as the console's script does (reconnecting after the
    `retry` the console sends); for each write, the time from its journal entry to the
    first event that shows it;
  - the console's resident memory (VmRSS) every 1,000 of PAGES page loads.
Prints one line per figure."""

import http.client
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

BIN = sys.argv[1]
RUNS = int(os.environ.get("RUNS_IN_JOURNAL", "100000"))
LOADS = int(os.environ.get("LOADS", "200"))
PAGES = int(os.environ.get("PAGES", "10000"))
LIVE_WRITES = int(os.environ.get("LIVE_WRITES", "40"))


def fill(journal_path):
    db = sqlite3.connect(journal_path)
    base = int(time.time() * 1000) - RUNS * 60_000
    sha = "ab" * 32
    runs, writes, fires = [], [], []
    for n in range(RUNS):
        run_id = "run_bench_%06d" % n
        started = base + n * 60_000
        failed = n % 7 == 0
        count = 400 if n == RUNS // 2 else 2
        runs.append((run_id, "/srv/recipes/%s.lua" % ("bulk-grant" if n % 2 else "offboard"), sha,
                     '{"user":"usr_%06d"}' % n, "prod" if n % 3 else "sandbox", "plan" if n % 11 == 0 else "run",
                     "failed" if failed else "succeeded", started, started + 900, 1, count, 0, 1 if failed else 0,
                     1 if failed else 0))
        for seq in range(1, count + 1):
            writes.append((run_id, seq, "hs1-%060d" % (n * 1000 + seq), "POST", "/users/usr_%06d/entitlements" % n,
                           "%064d" % seq, "failed" if failed and seq == count else "done",
                           422 if failed and seq == count else 201, "{}",
                           "validation_failed: Invalid fields: application_id." if failed and seq == count else None,
                           started + seq, started + seq))
        if n % 50 == 0:
            fires.append(("nightly", started, "schedule", run_id, "failed" if failed else "succeeded", started,
                          started + 900, 900, 1 if failed else 0, started + 900))
    with db:
        db.executemany("""INSERT INTO runs (id, recipe_path, recipe_sha256, params, profile, mode, status, started_at,
                          finished_at, reads, writes, replayed, failed, exit_code) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)""", runs)
        db.executemany("""INSERT INTO writes (run_id, seq, key, method, path, body_sha256, state, http_status, response,
                          error, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)""", writes)
        db.executemany("""INSERT INTO fires (job, scheduled_at, trigger, run_id, status, started_at, finished_at,
                          duration_ms, exit_code, recorded_at) VALUES (?,?,?,?,?,?,?,?,?,?)""", fires)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return len(writes)


class Client:
    def __init__(self, base):
        host, port = base.split("//")[1].split(":")
        self.connection = http.client.HTTPConnection(host, int(port), timeout=30)
        self.cookie = None

    def get(self, path, headers=None):
        fields = dict(headers or {})
        if self.cookie:
            fields["Cookie"] = self.cookie
        start = time.perf_counter()
        self.connection.request("GET", path, headers=fields)
        response = self.connection.getresponse()
        body = response.read()
        elapsed = (time.perf_counter() - start) * 1000
        if response.getheader("Connection", "").lower() == "close":
            self.connection.close()
        cookie = response.getheader("Set-Cookie")
        if cookie:
            self.cookie = cookie.split(";")[0]
        return response.status, body.decode("utf-8", "replace"), elapsed


def figures(name, client, path, loads):
    times = []
    for _ in range(loads):
        status, body, ms = client.get(path)
        assert status == 200, (path, status, body[:300])
        times.append(ms)
    times.sort()
    print("bench-console: %-34s median %6.1f ms  p90 %6.1f ms  max %6.1f ms  (%d loads, %d KB)"
          % (name, statistics.median(times), times[int(len(times) * 0.9)], times[-1], loads, len(body) // 1024))
    return statistics.median(times)


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def live_lag(client, state, journal_path, folder):
    recipe = os.path.join(folder, "live.lua")
    with open(recipe, "w") as f:
        f.write("""recipe { name = "live", needs = { "users.manage" } }
for i = 1, %d do
  local t = os.clock()
  while os.clock() - t < 0.05 do end
  hub.users.update("usr_ada", { display_name = "Ada " .. i })
end
""" % LIVE_WRITES)
    run = subprocess.Popen([BIN, recipe, "--run-id", "live", "--state-dir", state, "--quiet"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shown = {}  # write count -> wall time (ms) of the first event that showed it
    last_id, retry = None, 0.25
    while True:
        status, body, _ = client.get("/runs/live/events", {"Last-Event-ID": last_id} if last_id else {})
        now = time.time() * 1000
        if status == 404:  # not journalled yet
            time.sleep(0.01)
            continue
        event = re.search(r"^event: (\w+)$", body, re.M)
        if event:
            last_id = re.search(r"^id: (.*)$", body, re.M).group(1)
            total = re.search(r" of (\d+), in the order", body)
            count = int(total.group(1)) if total else 0
            for k in range(1, count + 1):
                shown.setdefault(k, now)
            if event.group(1) == "done":
                break
        retry_field = re.search(r"^retry: (\d+)$", body, re.M)
        retry = int(retry_field.group(1)) / 1000 if retry_field else retry
        time.sleep(retry)
    run.wait()
    db = sqlite3.connect(journal_path)
    created = dict(db.execute("SELECT seq, created_at FROM writes WHERE run_id = 'live'"))
    db.close()
    lags = sorted(shown[k] - created[k] for k in created if k in shown)
    print("bench-console: %-34s median %6.0f ms  p90 %6.0f ms  max %6.0f ms  (%d writes, each from its journal entry to "
          "the first event showing it)" % ("live view lag", statistics.median(lags), lags[int(len(lags) * 0.9)], lags[-1], len(lags)))


def main():
    folder = tempfile.mkdtemp(prefix="bench-console-")
    state = os.path.join(folder, "state")
    first = os.path.join(folder, "first.lua")
    with open(first, "w") as f:
        f.write('recipe { name = "first" }\n')
    subprocess.run([BIN, first, "--state-dir", state, "--quiet"], check=True, stdout=subprocess.DEVNULL)
    journal_path = os.path.join(state, "journal", "journal.sqlite")
    start = time.monotonic()
    writes = fill(journal_path)
    print("bench-console: journal of %d runs, %d writes (%.0f MiB), filled in %.1f s"
          % (RUNS + 1, writes, os.path.getsize(journal_path) / 1048576, time.monotonic() - start))
    console = subprocess.Popen([BIN, "console", "--port", "0", "--state-dir", state],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = console.stdout.readline().strip()
        base, token = url.split("/?token=")
        client = Client(base)
        assert client.get("/?token=" + token)[0] == 303
        middle = "run_bench_%06d" % (RUNS // 2)
        day = time.strftime("%Y-%m-%d", time.gmtime(time.time() - RUNS * 30))
        figures("runs page (/runs)", client, "/runs", LOADS)
        figures("runs page, status=failed", client, "/runs?status=failed", LOADS)
        figures("runs page, job=nightly", client, "/runs?job=nightly", LOADS)
        figures("runs page, recipe=offboard", client, "/runs?recipe=offboard", LOADS)
        # Filters few runs match: the page reads until it has 50 or the runs end.
        figures("runs page, status=running (none)", client, "/runs?status=running", LOADS)
        figures("runs page, recipe=nowhere (none)", client, "/runs?recipe=nowhere", LOADS)
        figures("runs page, job=nightly&status=failed", client, "/runs?job=nightly&status=failed", LOADS)
        figures("runs page, one day (from=to)", client, "/runs?from=%s&to=%s" % (day, day), LOADS)
        figures("a run's page (400 writes)", client, "/runs/" + middle, LOADS)
        figures("a run's page, writes 51-100", client, "/runs/%s?wpage=2" % middle, LOADS)
        figures("a run's page (2 writes)", client, "/runs/run_bench_000123", LOADS)
        live_lag(client, state, journal_path, folder)
        paths = ["/runs", "/runs/" + middle, "/runs?status=failed", "/runs/run_bench_%06d" % 77]
        print("bench-console: RSS before %d page loads: %d KiB" % (PAGES, rss_kib(console.pid)))
        for n in range(1, PAGES + 1):
            status, _, _ = client.get(paths[n % len(paths)])
            assert status == 200
            if n % 1000 == 0:
                print("bench-console: RSS after %5d page loads: %d KiB" % (n, rss_kib(console.pid)))
    finally:
        console.terminate()
        console.wait()
        subprocess.run(["rm", "-rf", folder])


main()
