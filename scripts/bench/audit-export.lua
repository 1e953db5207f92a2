-- Benchmark fixture (scripts/bench-recipes): stream every audit event into
-- export.jsonl without holding them in memory.
recipe {
  name = "bench-audit-export",
  version = "1.0.0",
  description = "Export the whole audit log to JSONL.",
  needs = { "audit.view" },
}

local summary = export.jsonl("export.jsonl", hub.audit.query {})
print(("exported %d events to %s"):format(summary.rows, summary.name))
