-- Forward security-relevant Hub activity to Dispatch (phones), exactly once.
--
-- Reads the audit events of the chosen actions, and the caller's inbox notifications
-- of a category (security.* by default), that arrived since the last checkpoint,
-- oldest first; sends each to Dispatch with a key derived from the event's id; and
-- moves the checkpoint past it (state.set). Every send and every checkpoint is a
-- journalled write, so:
--   * a crash, then `hubscript runs resume RUN`, replays what was done and goes on;
--   * a crash, then a NEW run, reads from the last checkpoint and may meet an alert
--     already sent: its key is the same, so Dispatch answers with the first send
--     (Idempotent-Replayed) and the phone is not notified twice.
-- The first run starts from now (nothing old is forwarded) unless given `since`.
--
-- As a trigger (push; `hubscript listen`, docs/webhooks.md) it gets the webhook event
-- as params.event and forwards that one audit event at once, with the same message
-- and key as polling would: a poller and a trigger running side by side, or a
-- redelivered event, still notify the phone once. Checkpoints are not touched.
recipe {
  name = "forward-alerts",
  version = "1.0.0",
  description = "Forward security-relevant audit events and security.* inbox notifications to Dispatch, exactly once, from a checkpoint.",
  params = {
    actions = { type = "list",
                default = { "user.suspended", "role.assigned", "api_key.created", "session.revoked" },
                description = "audit actions to forward (comma-separated)" },
    inbox   = { type = "string", default = "security.",
                description = "inbox category prefix to forward; empty: do not read the inbox" },
    since   = { type = "string", description = "first run only: start here (RFC 3339) instead of now" },
    max     = { type = "integer", default = 500, description = "most alerts forwarded in one run (the rest wait for the next)" },
    event   = { type = "table", description = "set by a trigger (hubscript listen): forward this webhook event now instead of reading from the checkpoint" },
  },
  needs   = { "audit.view", "dispatch.send" },
  limits  = { writes = 2200, timeout = 1800 },
}

local util = require("lib.util")

if params.max < 1 or params.max > 1000 then util.fail("parameter 'max' must be from 1 to 1000, got %d", params.max) end
if params.since ~= nil and not pcall(time.parse, params.since) then
  util.fail("parameter 'since' must be an RFC 3339 timestamp such as 2026-12-01T00:00:00Z, got '%s'", params.since)
end

local function clip(text, n)
  if utf8.len(text) and utf8.len(text) > n then return text:sub(1, utf8.offset(text, n - 1) - 1) .. "…" end
  return text
end

local function message(p)
  local e = p.item
  if p.source == "audit" then
    local actor = util.field(e.actor, "id") or "system"
    local target = util.field(e.target, "id") or "?"
    return "Hub: " .. e.action,
      ("%s on %s %s by %s at %s (event %s)"):format(e.action, util.field(e.target, "type") or "object", target,
                                                   actor, e.timestamp, e.id)
  end
  return "Hub: " .. clip(util.value(e.title) or e.category, 90),
    ("%s\n(%s, %s, notification %s)"):format(util.value(e.body) or "", e.category, e.created_at, e.id)
end

-- Push: one webhook event, forwarded now (its audit event read back, so the message
-- and key are the ones polling would use).
if params.event ~= nil then
  local event = params.event
  local audit_id = type(event.data) == "table" and event.data.audit_event_id or nil
  local wanted = false
  for _, action in ipairs(params.actions) do
    if action == event.type then wanted = true end
  end
  if not wanted or type(audit_id) ~= "string" then
    print(("event %s (%s) is not one of the actions to forward: nothing sent"):format(tostring(event.id), tostring(event.type)))
    return
  end
  local title, body = message { source = "audit", item = hub.audit.get(audit_id) }
  local r = dispatch.send { title = clip(title, 100), body = clip(body, 1000), key = "alert-" .. audit_id }
  print(("forwarded event %s (%s, audit event %s)%s"):format(event.id, event.type, audit_id,
    r.replayed and ", already sent before" or ""))
  return
end

-- A checkpoint: the timestamp of the last alert forwarded and the ids forwarded at
-- that very second (a source's `since` is inclusive, so they are read again).
local function checkpoint(name)
  local c = state.get(name)
  if c == nil then
    c = { ts = params.since or time.now(), ids = json.array {} }
    state.set(name, c)
    print(("%s: first run, starting from %s"):format(name, c.ts))
  end
  local seen = {}
  for _, id in ipairs(c.ids) do seen[id] = true end
  return c, seen
end

-- Reads one source since its checkpoint into `pending`, skipping what was forwarded.
local function collect(pending, source, list, ts_field)
  local c, seen = checkpoint(source .. "_since")
  for item in list(c.ts) do
    local ts = item[ts_field]
    if not (ts == c.ts and seen[item.id]) then
      pending[#pending + 1] = { source = source, ts = ts, item = item }
    end
  end
end

local pending = {}
collect(pending, "audit", function(since)
  return hub.audit.query { action = params.actions, since = since }
end, "timestamp")
local category = util.trim(params.inbox)
if category and util.isnull(hub.capabilities().user_id) then
  log.info("inbox skipped: this profile signs in with an API key, which has no inbox (sign in as a user to forward " .. category .. "* notifications)")
  category = nil
end
if category then
  collect(pending, "inbox", function(since)
    return hub.inbox.list { category = category, since = since }
  end, "created_at")
end

-- Oldest first, so each checkpoint only moves forward.
table.sort(pending, function(a, b)
  if a.ts ~= b.ts then return time.parse(a.ts) < time.parse(b.ts) end
  return a.item.id < b.item.id
end)

local sent, replayed = 0, 0
local checkpoints = {}
for n, p in ipairs(pending) do
  if n > params.max then break end
  local title, body = message(p)
  local r = dispatch.send { title = clip(title, 100), body = clip(body, 1000), key = "alert-" .. p.item.id }
  if r.replayed then replayed = replayed + 1 else sent = sent + 1 end
  -- Move this source's checkpoint past the alert (ids of the same second kept).
  local name = p.source .. "_since"
  local c = checkpoints[name] or state.get(name)
  if c.ts ~= p.ts then c = { ts = p.ts, ids = json.array {} } end
  c.ids[#c.ids + 1] = p.item.id
  checkpoints[name] = c
  state.set(name, c)
end

local left = math.max(0, #pending - params.max)
print(("forwarded %d alerts (%d already sent before)%s"):format(sent + replayed, replayed,
  left > 0 and (", %d left for the next run"):format(left) or ""))
