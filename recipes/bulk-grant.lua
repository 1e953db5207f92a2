-- Grant one application to every user listed in a CSV file.
--
-- The file has a header row with an `email` column, or an `id` / `user_id` column
-- (or both: the id wins). Quoted fields, CRLF line ends and a UTF-8 byte order mark
-- are fine. Each data row is resolved to a user, skipped if the user already holds a
-- live entitlement to the app, and granted otherwise. Users and the app's entitlements
-- are read with paged lists first (lib/directory.lua), so a granted row costs about one
-- request (its grant) and an already-held row about 0.02. A failure on one row is reported
-- and the next row goes on. Every row gets one line on stdout and one row in
-- bulk-grant-report.csv.
--
-- Idempotency: each grant carries the key hubscript derives from the run id and the
-- request (no explicit `key`). A resumed run (`hubscript runs resume`, `--run-id`)
-- has the same run id, so an interrupted grant is sent with the same key and the
-- Hub replays it instead of granting twice. A *new* run gets new keys, and that is
-- what we want: it checks every user again before granting, so a second run over the
-- same file grants nothing ("already held"), yet a user whose entitlement was revoked
-- meanwhile is granted again. A fixed key per (user, app) would make that regrant
-- replay the old answer for 24 hours and silently do nothing.
--
-- Resuming: the resumed run is served the Hub reads the stopped pass made (the journal
-- records them), so a row the stopped pass granted is reported `granted` again, not
-- `already held`, and the report is the one a run that never stopped writes. A pass
-- that stops keeps its report so far as bulk-grant-report.csv.incomplete.
--
-- Memory: about 600 bytes of Lua memory a row (the users and entitlements read up
-- front, at most one page per 40 rows each), so 50,000 rows need about 36 MiB, well
-- under the default 256 MiB; the process's peak RSS grows about 1 KB a row
-- (scripts/bench-recorded-reads).
recipe {
  name = "bulk-grant",
  version = "1.0.0",
  description = "Grant an application to every user of a CSV file (email or id column); report per row.",
  params = {
    file = { type = "file", required = true,
             description = "CSV with a header row and an email, id or user_id column" },
    app = { type = "string", required = true, description = "application id to grant, e.g. app_wiki" },
    source = { type = "string", default = "admin_grant",
               description = "entitlement source: admin_grant, trial or purchase" },
    include_inactive = { type = "boolean", default = false,
                         description = "also grant to suspended users (skipped by default; deleted users are not found)" },
  },
  needs = { "users.list", "entitlements.manage" },
  -- At most one write a row: 200,000 fits an ordinary file of 50,000 rows with room to
  -- spare. A pass may last the host's ceiling of 24 hours (at the Hub's 20 grants a
  -- minute, about 28,800 grants); a larger file is finished by `hubscript runs resume`.
  limits = { writes = 200000, timeout = 86400 },
}

local util = require("lib.util")
local directory = require("lib.directory")

local app = util.trim(params.app)
if app == nil then util.fail("parameter 'app' must be an application id such as app_wiki") end

-- Refuse an unknown application once, up front, instead of failing every row.
local known = {}
for _, a in ipairs(hub.applications.list()) do known[#known + 1] = a.id end
local found = false
for _, id in ipairs(known) do if id == app then found = true end end
if not found then
  util.fail("unknown application '%s' (the Hub has: %s)", app, table.concat(known, ", "))
end

-- Counting the rows first costs one more read of a local file (constant memory) and
-- gives the progress bar a total.
local total = util.count(csv.rows(params.file))
local bar = progress(total, "granting " .. app)

-- The header as written by people: "Email", " user_id ", "ID" all work.
local function normalized(row)
  local out = {}
  for k, v in pairs(row) do out[k:lower():match("^%s*(.-)%s*$")] = util.trim(v) end
  return out
end

-- The users and the app's live entitlements, read with paged lists up front (about
-- one read per 100 rows, where one lookup per row would cost two requests a row), up
-- to one page per 40 rows each; beyond that, rows are looked up one by one.
local pages = directory.budget(total, 40)
local users = directory.users(pages)
local holders = directory.entitlements(app, pages)

local counts = { granted = 0, ["already held"] = 0, ["not found"] = 0, skipped = 0, error = 0 }
local rows = csv.rows(params.file)
local n = 0

-- One CSV row in, one report row out; prints the row's line.
local function process(row)
  local r = normalized(row)
  local input = r.id or r.user_id or r.email
  local report = { row = n, input = input or "" }
  local outcome

  local ok, err = pcall(function()
    if input == nil then
      local e = { code = "missing_identifier", message = "the row has no id, user_id or email value" }
      error(setmetatable(e, { __tostring = function(t) return t.code .. ": " .. t.message end }))
    end
    local user = users:find(input)
    if user == nil then outcome = "not found"; return end
    report.user_id, report.email, report.user_status = user.id, user.email, user.status
    if not params.include_inactive and (user.status == "suspended" or user.status == "deleted") then
      outcome = "skipped"
      report.message = "user is " .. user.status
      return
    end
    local existing = holders:get(user.id)
    if existing then
      outcome, report.entitlement_id = "already held", existing.id
      -- worth a look in the report: held, but not necessarily usable
      if existing.status ~= "active" then
        report.message = ("entitlement is %s (%s)"):format(existing.status, util.value(existing.disabled_reason) or "no reason given")
      elseif existing.source == "org_seat" then
        report.message = "through a seat of " .. (util.value(existing.organization_id) or "an organization")
      end
      return
    end
    local granted, result = pcall(hub.entitlements.grant, user.id, { application_id = app, source = params.source })
    if granted and result.planned then
      -- hubscript plan / --dry-run: nothing was sent
      outcome, report.message = "granted", "planned (dry run): nothing was sent"
    elseif granted then
      outcome, report.entitlement_id = "granted", result.id
      holders:add(user.id, result)
    elseif util.error_code(result) == "entitlement_already_exists" then
      -- granted by someone else between our check and our write
      outcome = "already held"
      report.entitlement_id = util.field(result.details, "existing_entitlement_id")
    else
      error(result, 0)
    end
  end)

  if not ok then
    outcome = "error"
    report.error_code, report.message = util.error_code(err), util.error_message(err)
  end
  counts[outcome] = counts[outcome] + 1
  report.outcome = outcome

  local who = input or "(no id or email)"
  if report.user_id and report.user_id ~= input then who = ("%s (%s)"):format(who, report.user_id) end
  local shown = outcome
  if outcome == "error" then shown = "error: " .. report.error_code
  elseif outcome == "skipped" then shown = "skipped: " .. report.message
  elseif outcome == "granted" and report.entitlement_id == nil then shown = "granted (planned)" end
  print(("row %d %s: %s"):format(n, who, shown))
  return report
end

local report = export.csv("bulk-grant-report.csv", function()
  local row = rows()
  if row == nil then return nil end
  n = n + 1
  local out = process(row)
  bar:advance()
  return out
end, { columns = { "row", "input", "user_id", "email", "user_status", "outcome", "entitlement_id", "error_code", "message" },
       excel_safe = true })
bar:done()

print(("bulk-grant %s: %d granted, %d already held, %d not found, %d skipped, %d errors (%d rows)"):format(
  app, counts.granted, counts["already held"], counts["not found"], counts.skipped, counts.error, n))
print(("report: %s (%d rows)"):format(report.name, report.rows))

-- Rows that failed make the run fail (exit code 1) once every row has been tried and
-- the report written, so a scheduled job notices; "not found" and "skipped" do not.
if counts.error > 0 then
  util.fail("%d of %d rows failed; see %s", counts.error, n, report.name)
end
