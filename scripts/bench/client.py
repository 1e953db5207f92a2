"""Python peer of hubscript-bench: the same reads and writes with requests.Session
(keep-alive), printing the same figures.  python3 client.py URL READS WRITES"""
import sys
import time

import requests

url, reads, writes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = requests.Session()
s.headers.update({"Substratal-Version": "1", "Accept": "application/json",
                  "Authorization": "Bearer satk_test_jobs_sandbox_0000000000000000"})


def get(path, params):
    r = s.get(url + path, params=params, timeout=30)
    r.raise_for_status()
    return r.json()


users, cursor = [], None
while len(users) < writes:
    params = {"status": "active", "limit": 100}
    if cursor:
        params["cursor"] = cursor
    page = get("/users", params)
    users += [u["id"] for u in page["data"]]
    cursor = page["page"]["next_cursor"]
    if not page["page"]["has_more"]:
        break
users = users[:writes]

t0 = time.perf_counter()
done = 0
while done < reads:
    cursor = None
    while done < reads:
        params = {"limit": 25}
        if cursor:
            params["cursor"] = cursor
        page = get("/audit-events", params)
        done += 1
        cursor = page["page"]["next_cursor"]
        if not page["page"]["has_more"]:
            break
read_s = time.perf_counter() - t0

t0 = time.perf_counter()
for n, uid in enumerate(users):
    r = s.post(f"{url}/users/{uid}/entitlements", json={"application_id": "app_chat", "source": "admin_grant"},
               headers={"Idempotency-Key": f"bench-grant-{n}"}, timeout=30)
    if r.status_code not in (201, 409):
        r.raise_for_status()
write_s = time.perf_counter() - t0
print(f"{read_s:.4f} {write_s:.4f} {len(users)}")
