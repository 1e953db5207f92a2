import RecipeModules

/// `types.lua`: the Hub objects (`HubObjectTypes`), their lazy lists, and the other
/// tables bindings return or take (manifest, export summary, progress bar, …).
enum LuaLSTypes {
    static var text: String {
        var out = "---@meta hubscript-types\n" + LuaLSDefinitions.header + "\n"
        out += support
        for object in HubObjectTypes.all {
            out += "\n" + LuaLSDefinitions.comment(object.summary)
            if let section = object.documentedAs { out += "---Fields: docs/hub-objects.md, \"\(section)\".\n" }
            out += "---@class \(object.className)\n"
            for field in object.fields {
                var type = field.type
                if field.nullable { type += "|json.Null" }
                let note = field.note.isEmpty ? "" : " " + field.note
                out += "---@field \(field.name)\(field.extra ? "?" : "") \(type)\(note)\n"
            }
            if object.open { out += "---@field [string] any\n" }
        }
        let listed = Set(HubObjectTypes.returns.filter { HubObjectTypes.isList($0.key) }.values)
        for item in listed.sorted() {
            let local = item.replacingOccurrences(of: ".", with: "_") + "List"
            out += """

                ---A lazy list of \(item): call it, or loop over it (`for x in list do … end`); pages are fetched as the loop goes.
                ---@class \(item)List
                ---@overload fun(): \(item)?
                local \(local) = {}
                ---Every remaining item, as an array.
                ---@return \(item)[]
                function \(local):collect() end
                ---How many items remain (fetches them).
                ---@return integer
                function \(local):count() end
                ---The next item, or nil.
                ---@return \(item)?
                function \(local):first() end

                """
        }
        return out
    }

    static let support = """
        ---The JSON null value, `json.null`: a table, so it is truthy; test it with json.isnull(v).
        ---@class json.Null

        ---An opaque handle for a vault entry: no text, refused by `..`, `#`, string.format and json.encode.
        ---@class vault.Secret

        ---An error a binding raises (`local ok, err = pcall(…)`; `err.code`).
        ---@class hub.Error
        ---@field code string
        ---@field message string
        ---@field status integer?
        ---@field request_id string?
        ---@field details table?
        ---@field hint string?

        ---What export.jsonl and export.csv return.
        ---@class export.Summary
        ---@field name string
        ---@field rows integer
        ---@field bytes integer
        ---@field path string
        ---@field object_id? string set for a `vault:` export

        ---A progress bar (drawn on stderr when it is a terminal).
        ---@class progress.Bar
        local progress_Bar = {}
        ---@param n? integer how many steps (default 1)
        function progress_Bar:advance(n) end
        function progress_Bar:done() end

        ---A connection to a configured Dispatch target (dispatch.connect).
        ---@class dispatch.Connection
        local dispatch_Connection = {}
        ---Sends a notification through the target: a write.
        ---@param message {title: string, body: string, key?: string}
        ---@return table
        function dispatch_Connection:send(message) end

        ---A parameter of the manifest.
        ---@class hubscript.Param
        ---@field type "string"|"integer"|"number"|"boolean"|"list"|"file"|"table"
        ---@field required? boolean
        ---@field default? any
        ---@field description? string

        ---The manifest's limits.
        ---@class hubscript.Limits
        ---@field writes? integer
        ---@field timeout? number seconds
        ---@field memory_mb? integer
        ---@field instructions? integer

        ---The manifest: `recipe { … }`, first in every recipe.
        ---@class hubscript.Manifest
        ---@field name string
        ---@field version? string
        ---@field description? string
        ---@field params? table<string, hubscript.Param>
        ---@field needs? string[] the permissions the recipe's bindings use
        ---@field secrets? string[] the vault entries vault.secret may open
        ---@field targets? string[] the Dispatch targets dispatch.connect may reach
        ---@field limits? hubscript.Limits

        """
}

/// `globals.lua`: the globals a recipe has besides its modules (docs/recipe-sandbox.md,
/// "What a recipe can see").
enum LuaLSGlobals {
    static let text = """
        ---@meta hubscript-globals
        \(LuaLSDefinitions.header)
        ---The manifest; must come first in a recipe (README, "Recipes").
        ---@param manifest hubscript.Manifest
        function recipe(manifest) end

        ---The only parts of `os` a recipe has: time, clock and date.
        os = {}

        ---@param t? table
        ---@return integer
        function os.time(t) end

        ---@return number
        function os.clock() end

        ---@param format? string
        ---@param time? integer
        ---@return string|table
        function os.date(format, time) end

        """
}
