import Foundation

/// Evaluates a data-only Lua file — a configuration file, say — in an empty sandbox
/// and returns the value it returns.
///
/// The file sees no globals at all and strings have no methods: it can hold literal
/// values, operators and its own local functions, under small limits (16 MiB, 10
/// million instructions, counted exactly). With no C function in reach, nothing can
/// run past those limits.
public enum LuaDataFile {
    public static func load(_ url: URL, displayPath: String? = nil) throws -> ScriptValue {
        let file = try RecipeFile(path: url.path)
        return try evaluate(source: file.source, displayPath: displayPath ?? DisplayPath.relative(url))
    }

    public static func evaluate(source: String, displayPath: String) throws -> ScriptValue {
        let vm = try LuaVM(
            limits: VMLimits(memoryBytes: 16 << 20, instructions: 10_000_000, deadline: 0, buildBytes: 1 << 20),
            host: [], dataOnly: true)
        return try vm.evaluate(source: source, chunkName: "@" + displayPath)
    }
}
