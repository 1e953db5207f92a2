import Foundation

/// Evaluates a data-only Lua file — a configuration file, say — in an empty sandbox
/// and returns the value it returns.
///
/// The file sees no globals at all and strings have no methods: it can hold literal
/// values, operators and its own local functions, under small limits (`limits`: 8 MiB,
/// 10 million instructions counted exactly, 2 s). With no C function in reach, nothing
/// can run past those limits: the count hook checks the deadline every 100
/// instructions, so even instructions that each compare megabyte strings stop in time.
/// Recipe manifests are evaluated the same way (`RecipeManifest.load`).
public enum LuaDataFile {
    /// The limits of every data-only evaluation.
    public static let memoryBytes = 8 << 20
    public static let instructions: Int64 = 10_000_000
    public static let seconds = 2.0

    /// A fresh data-only state under the limits above (its deadline starts now).
    static func makeVM() throws -> LuaVM {
        try LuaVM(
            limits: VMLimits(memoryBytes: memoryBytes, instructions: instructions,
                             deadline: MonotonicClock.now() + seconds, buildBytes: 1 << 20, hookInterval: 100),
            host: [], dataOnly: true)
    }

    public static func load(_ url: URL, displayPath: String? = nil) throws -> ScriptValue {
        let file = try RecipeFile(path: url.path)
        return try evaluate(source: file.source, displayPath: displayPath ?? DisplayPath.relative(url))
    }

    /// The value `source` returns. A file that only returns a table of plain literals
    /// (`return { … }`, as configuration files do) is read without a Lua state
    /// (`LiteralTable`, which gives the same value or leaves the file to Lua): a Lua
    /// state of its own, set up and torn down, costs far more than the reading, and a run
    /// reads the file more than once. `displayPath` is made only when Lua evaluates the file.
    public static func evaluate(source: String, displayPath: @autoclosure () -> String) throws -> ScriptValue {
        if let literal = LiteralTable.parseReturnedTable(source) { return literal }
        return try evaluateInLua(source: source, displayPath: displayPath())
    }

    /// `evaluate` without the fast path: always in a data-only Lua state (tests compare
    /// the two).
    static func evaluateInLua(source: String, displayPath: String) throws -> ScriptValue {
        try makeVM().evaluate(source: source, chunkName: "@" + displayPath)
    }
}
