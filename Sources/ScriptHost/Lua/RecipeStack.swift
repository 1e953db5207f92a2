import CLua

/// Where an error happened, in the recipe's terms: its `file:line` and a traceback of
/// the recipe's frames. Frames of hubscript's own Lua chunks (the prelude `hubscript`,
/// a plugin's Lua wrapper such as `hub`) are left out: they mean nothing to a recipe's
/// author.
struct RecipeStack {
    /// The first recipe frame with a line, as `file:line`.
    var location: String?
    /// `stack traceback:` and one `\t…` line per frame, in `luaL_traceback`'s format.
    var traceback: String

    /// Most frames a traceback lists; deeper stacks end with `\t…`.
    static let frameLimit = 20

    /// Reads the stack of `state` while a Swift binding named `bindingName` runs
    /// (level 0). Uses only `lua_getstack`/`lua_getinfo` with `Slnt`, which neither
    /// allocate nor raise, so it is safe inside a binding call.
    static func capture(_ state: OpaquePointer, bindingName: String, internalChunks: Set<String>) -> RecipeStack {
        capture(state, from: 1, raisedBy: bindingName, internalChunks: internalChunks)
    }

    /// Reads the stack of `state` in the message handler (level 0) of an error value
    /// raised by the function at level 1 — `error` or `assert` called by the recipe with
    /// a table, or a binding. Same rules and format as `capture(_:bindingName:…)`.
    static func captureInHandler(_ state: OpaquePointer, internalChunks: Set<String>) -> RecipeStack {
        var ar = lua_Debug()
        guard lua_getstack(state, 1, &ar) != 0, lua_getinfo(state, "Sn", &ar) != 0,
              let what = ar.what.map({ String(cString: $0) }), what == "C" else {
            return capture(state, from: 1, raisedBy: nil, internalChunks: internalChunks)
        }
        return capture(state, from: 2, raisedBy: ar.name.map { String(cString: $0) } ?? "?", internalChunks: internalChunks)
    }

    /// The frames from `level` up; `raisedBy`: the C function that raised, listed first.
    private static func capture(_ state: OpaquePointer, from first: Int32, raisedBy: String?,
                                internalChunks: Set<String>) -> RecipeStack {
        var frames: [(line: String, internal: Bool, what: String, position: String?)] = []
        var level = first
        var ar = lua_Debug()
        while frames.count <= frameLimit * 2, lua_getstack(state, level, &ar) != 0 {
            level += 1
            guard lua_getinfo(state, "Slnt", &ar) != 0 else { continue }
            let source = ar.source.map { String(cString: $0) } ?? "?"
            let shortSource = withUnsafeBytes(of: ar.short_src) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            let what = ar.what.map { String(cString: $0) } ?? ""
            var line = "\t" + shortSource + (ar.currentline > 0 ? ":\(ar.currentline)" : "") + ": in "
            let namewhat = ar.namewhat.map { String(cString: $0) } ?? ""
            if !namewhat.isEmpty, let name = ar.name {
                // A global is one of the base functions (a recipe's _ENV takes no new
                // globals), which luaL_traceback names as it finds them: "function 'pcall'".
                line += "\(namewhat == "global" ? "function" : namewhat) '\(String(cString: name))'"
            } else if what == "main" {
                line += "main chunk"
            } else if what != "C" {
                line += "function <\(shortSource):\(ar.linedefined)>"
            } else {
                line += "?"
            }
            if ar.istailcall != 0 { line += "\n\t(...tail calls...)" }
            let position = what != "C" && ar.currentline > 0 ? "\(shortSource):\(ar.currentline)" : nil
            frames.append((line, isInternal(source: source, internalChunks: internalChunks), what, position))
        }
        // Internal frames go, and so do C functions an internal frame called (the
        // wrapper's own pcall).
        var lines = raisedBy.map { ["\t[C]: in function '\($0)'"] } ?? []
        var location: String?
        for (k, frame) in frames.enumerated() where !frame.internal {
            if frame.what == "C", k + 1 < frames.count, frames[k + 1].internal { continue }
            if lines.count > frameLimit { lines.append("\t…"); break }
            lines.append(frame.line)
            if location == nil { location = frame.position }
        }
        return RecipeStack(location: location, traceback: "stack traceback:\n" + lines.joined(separator: "\n"))
    }

    /// `traceback` (from `luaL_traceback`) without the lines of internal chunks.
    static func filter(traceback: String, internalChunks: Set<String>) -> String {
        let lines = traceback.split(separator: "\n", omittingEmptySubsequences: false)
        return lines.filter { line in
            guard line.hasPrefix("\t") else { return true }
            return !internalChunks.contains { line.hasPrefix("\t\($0):") }
        }.joined(separator: "\n")
    }

    /// A `=name` chunk that hubscript itself loaded.
    static func isInternal(source: String, internalChunks: Set<String>) -> Bool {
        source.hasPrefix("=") && internalChunks.contains(String(source.dropFirst()))
    }
}
