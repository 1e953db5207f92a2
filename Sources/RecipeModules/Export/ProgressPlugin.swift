import Foundation
import ScriptHost
import Synchronization

/// `progress(total [, label])` (or `progress.start(total [, label])`) returns a bar with
/// `bar:advance([n])` and `bar:done()`; the bars go to a `ProgressReporter`.
///
/// `total` is a non-negative integer, or nil when unknown; `n` defaults to 1 and must
/// be a non-negative integer. Advancing a bar after `done()` is an error; `done()`
/// twice is harmless. Progress never affects the recipe's output on stdout.
public enum ProgressPlugin {
    public static func make(reporter: any ProgressReporter) -> Plugin {
        let board = ProgressBoard(reporter: reporter)
        return Plugin(
            module: "progress",
            summary: "Progress bars for long work, drawn on stderr when it is a terminal (nothing otherwise; never on stdout): `local p = progress(total [, label])`, then `p:advance([n])` (n defaults to 1) and `p:done()`. `total` may be nil when unknown.",
            functions: [
                ScriptFunction("start", summary: "progress(total [, label]) or progress.start(total [, label]) -> bar with bar:advance([n]) and bar:done(); total is a non-negative integer or nil") { call in
                    try SoftFailure.wrap {
                        let total = try readCount(call, 1, function: "progress", allowNil: true, what: "total")
                        let label: String
                        do { label = try call.optionalString(2) ?? "" } catch let e as ScriptMessageError {
                            throw ScriptMessageErrorFactory.argument(2, "progress", SoftFailure.detail(of: e))
                        }
                        return .value(.integer(Int64(board.start(total: total, label: label))))
                    }
                },
            ],
            values: [
                "_advance": .function(ScriptFunction("progress.advance", summary: "internal: _advance(id [, n]) -> nothing | nil, message") { call in
                    try SoftFailure.wrap {
                        let n = try readCount(call, 2, function: "advance", allowNil: true, what: "n", publicIndex: 1) ?? 1
                        try board.advance(Int(try call.integer(1)), by: n)
                        return .none
                    }
                }),
                "_done": .function(ScriptFunction("progress.done", summary: "internal: _done(id)") { call in
                    board.done(Int(try call.integer(1)))
                    return .none
                }),
            ],
            luaWrapper: ProgressWrapper.source)
    }

    /// A non-negative integer argument (or nil when allowed).
    private static func readCount(_ call: BindingCall, _ n: Int, function: String, allowNil: Bool, what: String,
                                  publicIndex: Int? = nil) throws -> Int64? {
        let index = publicIndex ?? n
        if call.isNil(n) {
            if allowNil { return nil }
            throw ScriptMessageErrorFactory.argument(index, function, "number expected, got no value")
        }
        guard call.typeName(n) == "number" else {
            throw ScriptMessageErrorFactory.argument(index, function, "number expected, got \(call.typeName(n))")
        }
        if let value = try? call.optionalInteger(n), value >= 0 { return value }
        let number: Double = (try? call.number(n)) ?? 0
        let shown: String = number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        throw ScriptMessageErrorFactory.argument(index, function, "\(what) must be a non-negative integer, got \(shown)")
    }
}

/// The bars of one run, by id. Thread-safe.
final class ProgressBoard: Sendable {
    private let reporter: any ProgressReporter
    /// The bars by id, and the id the next bar gets.
    private struct Bars {
        var byID: [Int: ProgressState] = [:]
        var nextID = 1
    }
    private let state = Mutex(Bars())
    /// Bars kept at most, done or not (a recipe starting bars in a loop must not grow
    /// memory without bound): past it the oldest are let go, finishing any still open.
    static let maxBars = 256
    /// Longest label kept, in bytes (longer ones are cut at a character boundary).
    static let maxLabelBytes = 256

    init(reporter: any ProgressReporter) { self.reporter = reporter }

    func start(total: Int64?, label: String) -> Int {
        let (bar, evicted) = state.withLock { state in
            var evicted: [ProgressState] = []
            while state.byID.count >= Self.maxBars, let oldest = state.byID.keys.min(),
                  var gone = state.byID.removeValue(forKey: oldest) {
                if !gone.isDone {
                    gone.isDone = true
                    evicted.append(gone)
                }
            }
            let bar = ProgressState(id: state.nextID, label: Self.cut(label), total: total)
            state.nextID += 1
            state.byID[bar.id] = bar
            return (bar, evicted)
        }
        for gone in evicted { reporter.finished(gone) }
        reporter.started(bar)
        return bar.id
    }

    /// `label` cut to `maxLabelBytes` of UTF-8, at a character boundary, marked with "…".
    static func cut(_ label: String) -> String {
        guard label.utf8.count > maxLabelBytes else { return label }
        var out = ""
        for c in label {
            if out.utf8.count + c.utf8.count > maxLabelBytes - 3 { break }
            out.append(c)
        }
        return out + "…"
    }

    func advance(_ id: Int, by n: Int64) throws {
        let bar: ProgressState = try state.withLock { state in
            guard var bar = state.byID[id] else {
                throw ScriptMessageError("progress: this bar was let go: more than \(Self.maxBars) bars were started; call done() on bars you finish")
            }
            guard !bar.isDone else {
                throw ScriptMessageError("progress: \(bar.label.isEmpty ? "the bar" : SoftFailure.quoted(bar.label)) is already done; advance it before calling done()")
            }
            bar.count = bar.count.addingReportingOverflow(n).overflow ? Int64.max : bar.count + n
            state.byID[id] = bar
            return bar
        }
        reporter.advanced(bar)
    }

    func done(_ id: Int) {
        let bar: ProgressState? = state.withLock { state in
            guard var bar = state.byID[id], !bar.isDone else { return nil }
            bar.isDone = true
            state.byID[id] = bar
            return bar
        }
        if let bar { reporter.finished(bar) }
    }
}

/// The Lua side of `progress`: a callable module and bar objects with methods.
enum ProgressWrapper {
    static let source = #"""
local raw = ...
local setmetatable, error, pcall = setmetatable, error, pcall
local start, advance, done = raw.start, raw._advance, raw._done
local ids = setmetatable({}, { __mode = "k" })

local methods = {}
function methods.advance(self, n)
  local id = ids[self]
  if not id then error("progress: call advance with a colon: p:advance(n)", 2) end
  local _, err = advance(id, n)
  if err then error(err, 2) end
  return self
end
function methods.done(self)
  local id = ids[self]
  if not id then error("progress: call done with a colon: p:done()", 2) end
  done(id)
  return self
end
-- A bar the recipe lets go of is finished (and freed on the Swift side).
local function release(self)
  local id = ids[self]
  if id then pcall(done, id) end
end
local bar_mt = { __index = methods, __name = "progress bar", __metatable = "progress bar", __gc = release }

local function new(total, label)
  local id, err = start(total, label)
  if not id then return nil, err end
  local bar = setmetatable({}, bar_mt)
  ids[bar] = id
  return bar
end

local module = {}
function module.start(total, label)
  local bar, err = new(total, label)
  if not bar then error(err, 2) end
  return bar
end
return setmetatable(module, {
  __call = function(_, total, label)
    local bar, err = new(total, label)
    if not bar then error(err, 2) end
    return bar
  end,
  __metatable = "progress",
})
"""#
}
