/// Why a run did not succeed. Kinds are kept apart as docs/design.md asks: a chunk that
/// does not load, an error while running, a limit, and a host problem.
public struct ScriptFailure: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The recipe (or its manifest) did not load: nothing of the body ran.
        case load
        /// An error raised while the recipe ran.
        case runtime
        /// A limit stopped the run.
        case limit(LimitKind)
        /// The host could not run the recipe (I/O, setup).
        case host
    }

    public var kind: Kind
    /// The message, starting with `file:line:` where Lua knows it.
    public var message: String
    /// Lua's stack traceback, when there is one.
    public var traceback: String
    /// A structured error table (`code`, `message`, …) when the recipe raised one.
    public var structured: ScriptValue?
    /// The recipe's `file:line` where a binding raised `structured` (a Hub error); the
    /// message of such an error does not start with it.
    public var location: String?

    public init(kind: Kind, message: String, traceback: String = "", structured: ScriptValue? = nil,
                location: String? = nil) {
        self.kind = kind
        self.message = message
        self.traceback = traceback
        self.structured = structured
        self.location = location
    }

    public var description: String { message }

    /// docs/design.md's exit codes: 1 recipe failed, 2 usage/configuration (incl. a recipe
    /// that does not load), 4 a limit stopped the run.
    public var exitCode: Int32 {
        switch kind {
        case .load, .host: 2
        case .runtime: 1
        case .limit: 4
        }
    }
}

/// What a finished run reports.
public struct RunReport: Sendable {
    public var failure: ScriptFailure?
    public var durationSeconds: Double
    /// Peak bytes held by the Lua state.
    public var memoryPeakBytes: Int
    /// Lua instructions executed, counted in hook intervals (1,000).
    public var instructions: Int64

    public var succeeded: Bool { failure == nil }
    public var exitCode: Int32 { failure?.exitCode ?? 0 }
}
