import Foundation
import XCTest
import ScriptHost

/// Keeps the last values a test binding received (bindings run on the run's thread).
final class Received: @unchecked Sendable {
    private let lock = NSLock()
    private var _values: [ScriptValue] = []
    func append(_ v: ScriptValue) { lock.withLock { _values.append(v) } }
    var values: [ScriptValue] { lock.withLock { _values } }
}

/// Lua ⇄ Swift value bridging through a plugin registered by the test, structured
/// and limit errors thrown by bindings, argument errors, and the gate.
final class BridgingTests: RecipeTestCase {
    let received = Received()

    /// `t.*`: a test plugin exercising every kind of value and error.
    func testPlugin() -> Plugin {
        let received = self.received
        let echo = ScriptFunction("echo") { call in .value(try call.value(1)) }
        return Plugin(module: "t", functions: [
            echo,
            ScriptFunction("kinds") { _ in
                .values([.nilValue, .null, .bool(true), .integer(42), .number(1.0), .string("héllo"),
                         .bytes([0xFF, 0x00, 0x41]), .array([1, 2]), .array([]), .object(["a": 1, "b": ["c": 2.5]]),
                         .object([:]), .function(echo)])
            },
            ScriptFunction("keep") { call in
                for n in 1...max(call.count, 1) { received.append(try call.value(n)) }
                return .none
            },
            ScriptFunction("args") { call in
                .values([.string(try call.string(1)), .integer(try call.integer(2)), .bool(try call.boolean(3)),
                         try call.table(4)])
            },
            ScriptFunction("number") { call in .value(.number(try call.number(1))) },
            ScriptFunction("optional") { call in
                .values([(try call.optionalString(1)).map { .string($0) } ?? .string("none"),
                         (try call.optionalInteger(2)).map { .integer($0) } ?? .string("none")])
            },
            ScriptFunction("fail") { _ in
                throw ScriptStructuredError(code: "not_found", message: "no user usr_1",
                                            fields: ["id": "usr_1", "status": 404])
            },
            ScriptFunction("message") { _ in throw ScriptMessageError("something went wrong; try again") },
            ScriptFunction("stop") { _ in throw ScriptLimitError("writes (2) exhausted; raise limits.writes") },
            ScriptFunction("users.delete", capability: "users.manage", writes: true) { _ in .value("deleted") },
            ScriptFunction("users.list", capability: "users.view") { _ in .value(["a", "b"]) },
        ])
    }

    override func setUp() {
        super.setUp()
        harness.plugins = [JSONPlugin.make(), testPlugin()]
    }

    // MARK: Swift → Lua

    func testEveryKindReachesLua() {
        let source = """
        local v = table.pack(t.kinds())
        print(v.n)
        for i = 1, v.n do
          local x = v[i]
          local extra = type(x) == "number" and math.type(x) or ""
          if type(x) == "string" and not utf8.len(x) then x = "bytes " .. #x .. " " .. x:byte(1) end
          print(i, type(x), extra, tostring(x))
        end
        """
        XCTAssertEqual(lines(source), [
            "12",
            "1\tnil\t\tnil",
            "2\ttable\t\tnull",
            "3\tboolean\t\ttrue",
            "4\tnumber\tinteger\t42",
            "5\tnumber\tfloat\t1.0",
            "6\tstring\t\théllo",
            "7\tstring\t\tbytes 3 255",
            "8\ttable\t\tarray",
            "9\ttable\t\tarray",
            "10\ttable\t\ttable",
            "11\ttable\t\ttable",
            "12\tfunction\t\tfunction: builtin",
        ])
    }

    func testSwiftArraysObjectsAndFunctionsAreUsableInLua() {
        let source = """
        local _, null, _, _, _, s, bytes, arr, empty, obj, emptyObj, fn = t.kinds()
        print(null == json.null, #s, #bytes, bytes:byte(1), bytes:byte(2), #arr, arr[1] + arr[2], #empty)
        print(obj.a, obj.b.c, math.type(obj.b.c), next(emptyObj))
        print(fn(7), math.type(fn(7)), fn("x"))
        print(json.encode(arr), json.encode(empty), json.encode(obj), json.encode(emptyObj))
        """
        XCTAssertEqual(lines(source), [
            "true\t6\t3\t255\t0\t2\t3\t0",
            "1\t2.5\tfloat\tnil",
            "7\tinteger\tx",
            #"[1,2]\#t[]\#t{"a":1,"b":{"c":2.5}}\#t{}"#,
        ])
    }

    // MARK: Lua → Swift

    func testLuaValuesReachSwiftWithTheirKinds() {
        let source = #"""
        t.keep(1, 1.0, -0.5, "s", "\xff", true, false, json.null, {}, json.array{}, {1, 2}, {a = {b = {1.5}}}, nil)
        """#
        XCTAssertEqual(lines(source), [])
        XCTAssertEqual(received.values, [
            .integer(1), .number(1.0), .number(-0.5), .string("s"), .bytes([0xFF]), .bool(true), .bool(false), .null,
            .object([:]), .array([]), .array([1, 2]), .object(["a": .object(["b": .array([.number(1.5)])])]), .nilValue,
        ])
    }

    func testRoundTripLuaSwiftLua() {
        let source = #"""
        local function same(a, b)
          if type(a) ~= type(b) then return false end
          if type(a) == "number" then return math.type(a) == math.type(b) and a == b end
          if type(a) ~= "table" then return a == b end
          for k, v in pairs(a) do if not same(v, b[k]) then return false end end
          for k in pairs(b) do if a[k] == nil then return false end end
          return true
        end
        local values = { 0, -7, math.maxinteger, math.mininteger, 1.0, 0.1, -2.5e300, "", "ü", "\0\255",
          true, false, { 1, 2, { 3 } }, { a = { b = "c" }, d = json.null }, json.array{}, {} }
        for i, v in ipairs(values) do
          local back = t.echo(v)
          if not same(v, back) then print("changed", i) end
        end
        print(json.encode(t.echo(json.array{})), json.encode(t.echo({})), t.echo(json.null) == json.null)
        print(getmetatable(t.echo({ 1 })) == getmetatable(json.array{}))
        """#
        XCTAssertEqual(lines(source), ["[]\t{}\ttrue", "true"])
    }

    func testCyclicTableIsRefused() {
        assertFails("local a = {} a.self = a t.echo(a)", kind: .runtime,
                    message: "recipes/t.lua:1: bad argument #1 to 't.echo' (table contains a cycle)")
    }

    func testSharedButAcyclicTableIsAccepted() {
        XCTAssertEqual(lines("local s = { 1 } print(json.encode(t.echo({ a = s, b = s })))"), [#"{"a":[1],"b":[1]}"#])
    }

    func testNestingOver100LevelsIsRefused() {
        assertFails("local v = {} for i = 1, 100 do v = { v } end t.echo(v)", kind: .runtime,
                    message: "recipes/t.lua:1: bad argument #1 to 't.echo' (table nesting deeper than 100 levels)")
        XCTAssertEqual(lines("local v = {} for i = 1, 99 do v = { v } end print(#json.encode(t.echo(v)))"), ["200"])
    }

    func testMixedTableIsRefused() {
        assertFails("t.echo({ 1, 2, x = 3 })", kind: .runtime, message:
            "recipes/t.lua:1: bad argument #1 to 't.echo' (table mixes string keys and integer keys; use one or the other)")
    }

    func testSparseTableIsRefused() {
        assertFails("t.echo({ [1] = 'a', [3] = 'c' })", kind: .runtime, message:
            "recipes/t.lua:1: bad argument #1 to 't.echo' (table is not a sequence: key 2 is missing (keys must be 1..2))")
    }

    func testFloatKeyIsRefused() {
        assertFails("t.echo({ [1.5] = 'a' })", kind: .runtime, message:
            "recipes/t.lua:1: bad argument #1 to 't.echo' (table has a float key; only string keys or a sequence 1..n can be converted)")
    }

    func testBooleanKeyIsRefused() {
        assertFails("t.echo({ [true] = 'a' })", kind: .runtime, message:
            "recipes/t.lua:1: bad argument #1 to 't.echo' (table has a boolean key; only string keys or a sequence 1..n can be converted)")
    }

    func testFunctionValueIsRefused() {
        assertFails("t.echo({ f = print })", kind: .runtime,
                    message: "recipes/t.lua:1: bad argument #1 to 't.echo' (cannot convert a function value)")
    }

    func testArrayMarkerWithStringKeysIsRefused() {
        assertFails("local a = json.array{ 1 } a.x = 1 t.echo(a)", kind: .runtime, message:
            "recipes/t.lua:1: bad argument #1 to 't.echo' (table mixes string keys and integer keys; use one or the other)")
    }

    func testEmptyArrayMarkerWithStringKeysIsRefused() {
        assertFails("local a = json.array{} a.x = 1 t.echo(a)", kind: .runtime, message:
            "recipes/t.lua:1: bad argument #1 to 't.echo' (array marked with json.array has string keys)")
    }

    // MARK: Argument errors read like Lua's own

    func testArgumentErrors() {
        let cases: [(String, String)] = [
            ("t.args()", "bad argument #1 to 't.args' (string expected, got no value)"),
            ("t.args({})", "bad argument #1 to 't.args' (string expected, got table)"),
            (#"t.args("\xff")"#, "bad argument #1 to 't.args' (string is not valid UTF-8)"),
            (#"t.args("a")"#, "bad argument #2 to 't.args' (number expected, got no value)"),
            (#"t.args("a", "x")"#, "bad argument #2 to 't.args' (number expected, got string)"),
            (#"t.args("a", 1.5)"#, "bad argument #2 to 't.args' (number has no integer representation)"),
            (#"t.args("a", 1, nil)"#, "bad argument #3 to 't.args' (boolean expected, got nil)"),
            (#"t.args("a", 1, true, json.null)"#, "bad argument #4 to 't.args' (table expected, got null)"),
            (#"t.args("a", 1, true, 4)"#, "bad argument #4 to 't.args' (table expected, got number)"),
            (#"t.number("x")"#, "bad argument #1 to 't.number' (number expected, got string)"),
            (#"t.optional(true)"#, "bad argument #1 to 't.optional' (string expected, got boolean)"),
        ]
        for (call, message) in cases {
            let outcome = harness.run("local x = 1\n" + call)
            XCTAssertEqual(outcome.failure?.kind, .runtime, call)
            XCTAssertEqual(outcome.message, "recipes/t.lua:2: " + message, call)
        }
    }

    func testNumbersAndOptionalArgumentsConvertLikeLua() {
        let source = #"""
        local s, i, b, tb = t.args(12, "7", false, {})
        print(s, i, math.type(i), b, json.encode(tb))
        print(t.number("2.5"), t.number(3))
        print(t.optional(nil, 2.0))
        print(t.optional(1.5))
        """#
        XCTAssertEqual(lines(source), ["12\t7\tinteger\tfalse\t{}", "2.5\t3.0", "none\t2", "1.5\tnone"])
    }

    func testArgumentErrorInsidePcallHasNoPosition() {
        XCTAssertEqual(lines("print(pcall(t.args))"),
                       ["false\tbad argument #1 to 't.args' (string expected, got no value)"])
    }

    // MARK: Errors thrown by bindings

    func testStructuredErrorIsCatchableAndReadable() {
        let source = """
        local ok, err = pcall(t.fail)
        print(ok, type(err), err.code, err.message, err.id, math.type(err.status), tostring(err))
        """
        XCTAssertEqual(lines(source), ["false\ttable\tnot_found\tno user usr_1\tusr_1\tinteger\tnot_found: no user usr_1"])
    }

    func testUncaughtStructuredErrorKeepsItsFields() {
        let outcome = assertFails("t.fail()", kind: .runtime, message: "not_found: no user usr_1")
        XCTAssertEqual(outcome.failure?.structured,
                       .object(["code": "not_found", "message": "no user usr_1", "id": "usr_1", "status": 404]))
        XCTAssertEqual(outcome.report.exitCode, 1)
    }

    func testMessageErrorCarriesTheCallersPosition() {
        assertFails("local a = 1\nt.message()", kind: .runtime,
                    message: "recipes/t.lua:2: something went wrong; try again")
        XCTAssertEqual(lines("print(pcall(t.message))"), ["false\tsomething went wrong; try again"])
    }

    func testLimitErrorCannotBeCaughtByAPcallLoop() {
        let source = """
        local caught = 0
        while true do
          local ok, err = pcall(t.stop)
          caught = caught + 1
        end
        """
        let outcome = assertFails(source, kind: .limit(.host),
                                  message: "limit exceeded: writes (2) exhausted; raise limits.writes")
        XCTAssertEqual(outcome.report.exitCode, 4)
        assertFreshRunWorks()
    }

    func testLimitErrorCannotBeCaughtByAnXpcallLoop() {
        let source = "while true do xpcall(t.stop, function(e) return e end) end"
        assertFails(source, kind: .limit(.host), message: "limit exceeded: writes (2) exhausted; raise limits.writes")
    }

    func testLimitErrorSwallowedByPcallNearTheEndOfTheRunStillStopsIt() throws {
        // Regression: the trampoline arms the hook at once, and a chunk that returns
        // after a limit was hit is still a limit failure.
        let outcome = harness.run(#"local ok, err = pcall(t.stop) print("after", ok, err)"#)
        XCTAssertEqual(outcome.failure?.kind, .limit(.host))
        XCTAssertEqual(outcome.report.exitCode, 4)
        XCTAssertEqual(outcome.lines, [])
    }

    // MARK: Gate

    func testGateSeesOnlyGatedFunctionsAndCanRefuse() {
        let seen = Received()
        harness.gate = { function in
            seen.append(.string(function.name))
            if function.capability == "users.manage" {
                throw ScriptMessageError("t.\(function.name) needs 'users.manage', which the manifest does not declare")
            }
        }
        let source = """
        print(json.encode(t.users.list()), t.echo(1))
        local ok, err = pcall(t.users.delete, "usr_1")
        print(ok, err)
        t.users.delete("usr_1")
        """
        let outcome = assertFails(source, kind: .runtime, message:
            "recipes/t.lua:4: t.users.delete needs 'users.manage', which the manifest does not declare")
        XCTAssertEqual(outcome.lines, [
            #"["a","b"]\#t1"#,
            "false\tt.users.delete needs 'users.manage', which the manifest does not declare",
        ])
        XCTAssertEqual(seen.values, ["users.list", "users.delete", "users.delete"])
    }

    func testGateThrowingStructuredErrorReachesLuaAsTable() {
        harness.gate = { function in
            throw ScriptStructuredError(code: "permission_denied", message: "\(function.capability ?? "") not declared",
                                        fields: ["capability": .string(function.capability ?? "")])
        }
        XCTAssertEqual(lines("local ok, e = pcall(t.users.list) print(ok, e.code, e.capability, tostring(e))"),
                       ["false\tpermission_denied\tusers.view\tpermission_denied: users.view not declared"])
    }

    func testGateThrowingLimitStopsTheRun() {
        harness.gate = { _ in throw ScriptLimitError("write limit (0) reached before t.users.delete") }
        assertFails("while true do pcall(t.users.delete) end", kind: .limit(.host),
                    message: "limit exceeded: write limit (0) reached before t.users.delete")
        assertFreshRunWorks()
    }

    // MARK: Plugins

    func testPluginWrapperReplacesTheRawModule() {
        harness.plugins.append(Plugin(
            module: "w", functions: [ScriptFunction("raw") { call in .value(.integer(try call.integer(1) * 2)) }],
            values: ["version": "1.2"],
            luaWrapper: """
            local raw, support = ...
            return { twice = function(n) return raw.raw(n) end, version = raw.version, null = support.null }
            """))
        XCTAssertEqual(lines("print(w.twice(21), w.version, w.raw, w.null == json.null)"), ["42\t1.2\tnil\ttrue"])
    }

    func testPrintOfANonUTF8StringShowsReplacementCharacters() throws {
        // Regression: print used to fail in the prelude's internal write_stdout.
        // Like plain Lua it now prints; bytes that are not UTF-8 show as U+FFFD.
        let outcome = harness.run(#"print("ok\255")"#)
        XCTAssertNil(outcome.failure)
        XCTAssertEqual(outcome.lines, ["ok\u{FFFD}"])
    }

    func testPluginModulesAreReadOnlyGlobals() {
        assertFails("t = nil", kind: .runtime,
                    message: "recipes/t.lua:1: recipe attempted to assign to undeclared global 't' (declare it with 'local')")
    }
}
