/// The Lua side of the `hub` module: lazy list objects over `_next_page`, and helpers
/// built from single bindings (no Swift code calls back into Lua).
enum HubModuleLua {
    /// Dotted names of the bindings that return list handles.
    static let listBindings = ["users.list", "users.roles", "entitlements.list", "entitlements.for_user",
                               "sessions.list", "api_keys.list", "organizations.list", "organizations.members",
                               "audit.query", "inbox.list", "webhooks.list", "webhooks.deliveries"]

    /// Built once per process (a string built from `listBindings`).
    static let source: String = {
        // A loop, not `joined(separator:)`: the generic join's first call resolves its
        // associated types at run time, a cost every start would pay.
        var lists = ""
        for name in listBindings { lists += (lists.isEmpty ? "" : ", ") + "[\"" + name + "\"] = true" }
        return """
        local raw, support = ...
        local next_page, close_list = raw._next_page, raw._close_list
        local setmetatable, pairs, type, pcall, error = setmetatable, pairs, type, pcall, error
        local sub = string.sub   -- the library's (see Prelude: no method calls on strings here)
        local is_list = { \(lists) }

        -- A lazy list: call it (or use it in a generic for) for the next item; pages are
        -- fetched on demand.
        local List = { __name = "hub.list" }
        List.__index = List
        -- A list the recipe lets go of (garbage, or a `local l <close>`) frees its pages.
        local function release(self)
          if not self._done then
            self._done, self._page = true, nil
            pcall(close_list, self._handle)
          end
        end
        List.__gc = release
        List.__close = release
        function List.__call(self)
          local page, i = self._page, self._i
          while page == nil or i >= #page do
            if self._done then return nil end
            page = next_page(self._handle)
            if page == nil then self._done, self._page = true, nil; return nil end
            self._page, i = page, 0
          end
          i = i + 1
          self._i = i
          return page[i]
        end
        -- Every remaining item, as an array.
        function List:collect()
          local out = support.array_mt and setmetatable({}, support.array_mt) or {}
          for item in self do out[#out + 1] = item end
          return out
        end
        -- How many items remain (fetches them).
        function List:count()
          local n = 0
          for _ in self do n = n + 1 end
          return n
        end
        -- The next item, or nil.
        function List:first() return self() end

        -- Argument errors are raised at the recipe's line, not this wrapper's.
        local function lister(open)
          return function(...)
            local ok, handle = pcall(open, ...)
            if not ok then error(handle, 2) end
            return setmetatable({ _handle = handle, _i = 0 }, List)
          end
        end

        local hub = {}
        for group, entries in pairs(raw) do
          if type(entries) == "table" then
            local out = {}
            for name, fn in pairs(entries) do
              out[name] = is_list[group .. "." .. name] and lister(fn) or fn
            end
            hub[group] = out
          elseif sub(group, 1, 1) ~= "_" then
            hub[group] = entries
          end
        end

        -- hub.sessions.revoke_all(user_id): revokes every live session; returns how many.
        hub.sessions.revoke_all = function(user_id)
          local n = 0
          for session in hub.sessions.list(user_id) do
            hub.sessions.revoke(user_id, session.id)
            n = n + 1
          end
          return n
        end
        return hub
        """
    }()
}
