"""Python peer of scripts/bench-recipes: the same bulk grant and audit export with
requests.Session (keep-alive).
  python3 recipes.py grant URL USERS.csv APP    -> prints seconds and the grant count
  python3 recipes.py export URL OUT.jsonl       -> prints seconds and the event count
  python3 recipes.py fetch URL                  -> the same pages with no decoding or writing (the
                                                   server's floor); prints seconds and the page count"""
import csv
import json
import re
import sys
import time

import requests


def session():
    s = requests.Session()
    s.headers.update({"Substratal-Version": "1", "Accept": "application/json",
                      "Authorization": "Bearer satk_test_jobs_sandbox_0000000000000000"})
    return s


def grant(url, path, app):
    s = session()
    t0 = time.perf_counter()
    n = 0
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            uid = row["user_id"]
            r = s.post(f"{url}/users/{uid}/entitlements", json={"application_id": app, "source": "admin_grant"},
                       headers={"Idempotency-Key": f"py-bench-grant-{uid}-{app}"}, timeout=30)
            r.raise_for_status()
            n += 1
    print(f"{time.perf_counter() - t0:.4f} {n}")


def export(url, out):
    s = session()
    t0 = time.perf_counter()
    n, cursor = 0, None
    with open(out, "w") as f:
        while True:
            params = {"limit": 100}
            if cursor:
                params["cursor"] = cursor
            r = s.get(f"{url}/audit-events", params=params, timeout=30)
            r.raise_for_status()
            page = r.json()
            for event in page["data"]:
                f.write(json.dumps(event, sort_keys=True, separators=(",", ":")) + "\n")
                n += 1
            if not page["page"]["has_more"]:
                break
            cursor = page["page"]["next_cursor"]
    print(f"{time.perf_counter() - t0:.4f} {n}")


def fetch(url):
    s = session()
    t0 = time.perf_counter()
    pages, cursor = 0, None
    next_cursor = re.compile(rb'"next_cursor":"([^"]*)"')
    while True:
        params = {"limit": 100}
        if cursor:
            params["cursor"] = cursor
        r = s.get(f"{url}/audit-events", params=params, timeout=30)
        r.raise_for_status()
        pages += 1
        m = next_cursor.search(r.content)
        if not m:
            break
        cursor = m.group(1).decode()
    print(f"{time.perf_counter() - t0:.4f} {pages}")


if __name__ == "__main__":
    if sys.argv[1] == "grant":
        grant(sys.argv[2], sys.argv[3], sys.argv[4])
    elif sys.argv[1] == "fetch":
        fetch(sys.argv[2])
    else:
        export(sys.argv[2], sys.argv[3])
