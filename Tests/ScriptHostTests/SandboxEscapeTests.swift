import Foundation
import XCTest
@testable import ScriptHost

/// The sandbox rules of docs/design.md ("The runtime") and docs/recipe-sandbox.md, one test per rule, each asserting
/// the exact message a recipe sees (the Redis `scripting.tcl` style).
final class SandboxEscapeTests: RecipeTestCase {
    // MARK: Loading code

    func testLoadRefusesBinaryMode() {
        assertFails(#"load("\27LuaT\0", nil, "b")"#, kind: .runtime,
                    message: "recipes/t.lua:1: load: only text chunks can be loaded in recipes (mode must be 't')")
    }

    func testLoadRefusesTextAndBinaryMode() {
        assertFails(#"load("return 1", nil, "bt")"#, kind: .runtime,
                    message: "recipes/t.lua:1: load: only text chunks can be loaded in recipes (mode must be 't')")
    }

    func testLoadOfStringStartingWithEscapeIsRefusedAsBinary() {
        XCTAssertEqual(lines(#"print(load("\27LuaT\0\25\147\r\n\26\n"))"#),
                       ["nil\tattempt to load a binary chunk (mode is 't')"])
    }

    func testLoadOfReaderFunctionYieldingBytecodeIsRefused() {
        let source = #"""
        local parts = { "\27Lua", "T\0" }
        local i = 0
        print(load(function() i = i + 1 return parts[i] end))
        """#
        XCTAssertEqual(lines(source), ["nil\tattempt to load a binary chunk (mode is 't')"])
    }

    func testLoadRefusesForeignEnvironment() {
        assertFails(#"load("return 1", "x", "t", {})"#, kind: .runtime,
                    message: "recipes/t.lua:1: load: a custom environment is not allowed in recipes")
    }

    func testLoadedTextChunkGetsStrictEnvironment() {
        assertFails(#"load("return undefined_thing")()"#, kind: .runtime,
                    message: #"[string "return undefined_thing"]:1: recipe attempted to access nonexistent global 'undefined_thing'"#)
    }

    func testHostRefusesBinaryRecipeSource() {
        let outcome = harness.run("\u{1B}LuaT\u{0}")
        XCTAssertEqual(outcome.failure?.kind, .load)
        XCTAssertEqual(outcome.message, "attempt to load a binary chunk (mode is 't')")
        XCTAssertEqual(outcome.report.exitCode, 2)
    }

    func testRecipeFileRefusesBinaryFile() throws {
        let url = harness.folder.appendingPathComponent("compiled.lua")
        try Data([0x1B, 0x4C, 0x75, 0x61, 0x54, 0x00]).write(to: url)
        XCTAssertThrowsError(try RecipeFile(path: url.path)) { error in
            let failure = error as? ScriptFailure
            XCTAssertEqual(failure?.kind, .load)
            XCTAssertEqual(failure?.message,
                           "\(url.path): is a binary (precompiled) chunk; hubscript runs Lua source text only")
        }
    }

    // MARK: Removed functions and libraries

    func testStringDumpIsAbsent() {
        XCTAssertEqual(lines(#"print(string.dump, ("").dump, type(string.dump))"#), ["nil\tnil\tnil"])
    }

    func testStringDumpCannotBeCalled() {
        assertFails("string.dump(print)", kind: .runtime,
                    message: "recipes/t.lua:1: attempt to call a nil value (field 'dump')")
    }

    func testIoIsAbsent() {
        assertFails(#"io.open("/etc/passwd")"#, kind: .runtime,
                    message: "recipes/t.lua:1: recipe attempted to access nonexistent global 'io'")
    }

    func testOsExecuteIsAbsent() {
        assertFails(#"os.execute("true")"#, kind: .runtime,
                    message: "recipes/t.lua:1: attempt to call a nil value (field 'execute')")
    }

    func testOsGetenvIsAbsent() {
        assertFails(#"os.getenv("HOME")"#, kind: .runtime,
                    message: "recipes/t.lua:1: attempt to call a nil value (field 'getenv')")
    }

    func testOsExitIsAbsent() {
        assertFails("os.exit(0)", kind: .runtime,
                    message: "recipes/t.lua:1: attempt to call a nil value (field 'exit')")
    }

    func testOsKeepsOnlyTimeClockDate() {
        let source = """
        local names = {}
        for k in pairs(os) do names[#names + 1] = k end
        table.sort(names)
        print(table.concat(names, ","))
        """
        XCTAssertEqual(lines(source), ["clock,date,time"])
    }

    /// Every global a recipe can reach and every field of each library table, against
    /// the allow-list in docs/recipe-sandbox.md ("What a recipe can see"). A recipe
    /// cannot list its globals (they sit behind the locked `_ENV`), so the test probes
    /// every candidate name: the documented ones, Lua 5.4's (and 5.1's) standard
    /// globals, and every name the prelude's source puts into `base` — so a global
    /// added there shows up here. Library tables can be listed, so they are, in full.
    func testEveryGlobalAndLibraryFieldIsOnTheAllowList() throws {
        let allowed = try Self.documentedAllowList()
        let documentedGlobals = try XCTUnwrap(allowed["globals"], "the allow-list has no 'globals' line")
        let plugins = Set(harness.plugins.map(\.module))
        let fromPrelude = Self.preludeBaseNames()
        XCTAssertTrue(fromPrelude.isSuperset(of: ["assert", "print", "require", "load", "recipe", "os"]),
                      "the prelude's base names were not found in its source: \(fromPrelude.sorted())")
        let candidates = Set(documentedGlobals).union(Self.standardLuaGlobals).union(fromPrelude).union(plugins).sorted()
        let quoted = candidates.map { "\"\($0)\"" }.joined(separator: ", ")
        let globals = lines("""
            local present = {}
            for _, name in ipairs { \(quoted) } do
              local ok, value = pcall(function() return _ENV[name] end)
              if ok and value ~= nil then present[#present + 1] = name end
            end
            print(table.concat(present, " "))
            """)
        XCTAssertEqual(globals.first?.split(separator: " ").map(String.init),
                       Set(documentedGlobals).union(plugins).sorted(), "globals a recipe can reach")

        for (library, fields) in allowed.sorted(by: { $0.key < $1.key }) where library != "globals" {
            let seen = lines("""
                local names = {}
                for k in pairs(\(library)) do names[#names + 1] = tostring(k) end
                table.sort(names)
                print(table.concat(names, " "))
                """)
            XCTAssertEqual(seen.first?.split(separator: " ").map(String.init), fields.sorted(), "fields of \(library)")
        }
        let tables = documentedGlobals.filter { name in lines("print(type(\(name)))").first == "table" }
        XCTAssertEqual(Set(tables), Set(allowed.keys).subtracting(["globals"]),
                       "every global table a recipe sees has its own line in the allow-list")
    }

    struct AllowListMissing: Error, CustomStringConvertible { let description: String }

    /// Lua 5.4's standard globals, and the 5.1–5.3 ones a build might still carry.
    static let standardLuaGlobals: Set<String> = [
        "_G", "_VERSION", "assert", "collectgarbage", "coroutine", "debug", "dofile", "error", "getmetatable", "io",
        "ipairs", "load", "loadfile", "math", "next", "os", "package", "pairs", "pcall", "print", "rawequal", "rawget",
        "rawlen", "rawset", "require", "select", "setmetatable", "string", "table", "tonumber", "tostring", "type",
        "utf8", "warn", "xpcall", "loadstring", "unpack", "setfenv", "getfenv", "module", "gcinfo", "newproxy", "bit32",
    ]

    /// The ```allow-list block of docs/recipe-sandbox.md: `name: field field …` lines.
    static func documentedAllowList() throws -> [String: [String]] {
        let doc = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/recipe-sandbox.md")
        let text = try String(contentsOf: doc, encoding: .utf8)
        guard let start = text.range(of: "```allow-list\n"),
              let end = text.range(of: "\n```", range: start.upperBound..<text.endIndex) else {
            throw AllowListMissing(description: "\(doc.path) has no ```allow-list block")
        }
        var list: [String: [String]] = [:]
        for line in text[start.upperBound..<end.lowerBound].split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            list[String(parts[0])] = parts[1].split(separator: " ").map(String.init)
        }
        return list
    }

    /// Names the prelude's Lua source puts into `base`: its copy list and `base.name = …`.
    static func preludeBaseNames() -> Set<String> {
        let source = Prelude.source
        var names = Set<String>()
        if let copy = source.range(of: "for _, name in ipairs{"), let end = source.range(of: "} do", range: copy.upperBound..<source.endIndex) {
            for match in source[copy.upperBound..<end.lowerBound].split(separator: "\"").enumerated() where match.offset % 2 == 1 {
                names.insert(String(match.element))
            }
        }
        let assignment = try! NSRegularExpression(pattern: #"base\.([A-Za-z_][A-Za-z0-9_]*)\s*="#)
        for m in assignment.matches(in: source, range: NSRange(source.startIndex..., in: source)) {
            names.insert(String(source[Range(m.range(at: 1), in: source)!]))
        }
        return names
    }

    func testPackageIsAbsentSoLoadlibIsUnreachable() {
        assertFails(#"package.loadlib("libc.so.6", "system")"#, kind: .runtime,
                    message: "recipes/t.lua:1: recipe attempted to access nonexistent global 'package'")
    }

    func testDebugIsAbsent() {
        assertFails("debug.sethook()", kind: .runtime,
                    message: "recipes/t.lua:1: recipe attempted to access nonexistent global 'debug'")
    }

    func testDofileIsAbsent() {
        assertFails(#"dofile("/etc/passwd")"#, kind: .runtime,
                    message: "recipes/t.lua:1: recipe attempted to access nonexistent global 'dofile'")
    }

    func testLoadfileIsAbsent() {
        assertFails(#"loadfile("/etc/passwd")"#, kind: .runtime,
                    message: "recipes/t.lua:1: recipe attempted to access nonexistent global 'loadfile'")
    }

    func testGlobalTableIsAbsent() {
        assertFails("print(_G.io)", kind: .runtime,
                    message: "recipes/t.lua:1: recipe attempted to access nonexistent global '_G'")
    }

    // MARK: require

    /// The part of a require message after the location prefix (see the BUG test below
    /// for where the location points).
    private func assertRequireRefused(_ source: String, _ message: String,
                                      file: StaticString = #filePath, line: UInt = #line) {
        let outcome = harness.run(source)
        XCTAssertEqual(outcome.failure?.kind, .runtime, file: file, line: line)
        let text = outcome.message
        guard let range = text.range(of: "require: ") else {
            return XCTFail("not a require error: \(text)", file: file, line: line)
        }
        XCTAssertEqual(String(text[range.lowerBound...]), message, file: file, line: line)
    }

    func testRequireRefusesParentPath() {
        assertRequireRefused(#"require("../x")"#,
            "require: '../x' is not a module name (use dot-separated names like 'lib.users'; paths are not allowed)")
    }

    func testRequireRefusesAbsolutePath() {
        assertRequireRefused(#"require("/etc/passwd")"#,
            "require: '/etc/passwd' is not a module name (use dot-separated names like 'lib.users'; paths are not allowed)")
    }

    func testRequireRefusesSymlinkPointingOutsideTheFolder() throws {
        try FileManager.default.createSymbolicLink(
            at: harness.folder.appendingPathComponent("evil.lua"), withDestinationURL: URL(fileURLWithPath: "/etc/passwd"))
        assertRequireRefused(#"require("evil")"#,
            "require: 'evil' resolves outside the library folder \(harness.resolvedFolder)")
    }

    func testRequireRefusesSymlinkedFolderPointingOutside() throws {
        let outside = try RecipeHarness()
        defer { outside.cleanUp() }
        try outside.write("secret.lua", "return 'secret'")
        try FileManager.default.createSymbolicLink(at: harness.folder.appendingPathComponent("lib"),
                                                   withDestinationURL: outside.folder)
        assertRequireRefused(#"require("lib.secret")"#,
            "require: 'lib.secret' resolves outside the library folder \(harness.resolvedFolder)")
    }

    func testRequireRefusesBinaryModule() throws {
        try Data([0x1B, 0x4C, 0x75, 0x61]).write(to: harness.folder.appendingPathComponent("compiled.lua"))
        let outcome = harness.run(#"require("compiled")"#)
        XCTAssertEqual(outcome.failure?.kind, .runtime)
        XCTAssertTrue(outcome.message.hasSuffix(
            "require: 'compiled' (\(harness.resolvedFolder)/compiled.lua) is a binary chunk; only Lua source text can be loaded"),
            outcome.message)
    }

    func testRequireReportsWhereItSearched() {
        let f = harness.resolvedFolder
        assertRequireRefused(#"require("nope")"#,
            "require: module 'nope' not found; searched:\n\t\(f)/nope.lua\n\t\(f)/nope/init.lua")
    }

    func testRequireLoadsModuleFromRecipeFolderWithStrictEnvironment() throws {
        try harness.write("lib/util.lua", """
        local M = {}
        function M.double(x) return 2 * x end
        return M
        """)
        try harness.write("lib/leaky.lua", "leaked = true\nreturn {}")
        XCTAssertEqual(lines(#"print(require("lib.util").double(21), require("lib.util") == require("lib.util"))"#),
                       ["42\ttrue"])
        let outcome = harness.run(#"require("lib.leaky")"#)
        XCTAssertEqual(outcome.failure?.kind, .runtime)
        XCTAssertTrue(outcome.message.hasSuffix(
            "lib/leaky.lua:1: recipe attempted to assign to undeclared global 'leaked' (declare it with 'local')"),
            outcome.message)
    }

    func testRequireErrorsNameTheRecipeLine() throws {
        // Regression: errors of the host searcher were positioned in the prelude.
        assertFails("local a = 1\nrequire(\"../x\")", kind: .runtime, message:
            "recipes/t.lua:2: require: '../x' is not a module name (use dot-separated names like 'lib.users'; paths are not allowed)")
    }

    // MARK: Metatables and the environment

    func testStringMetatableIsHidden() {
        XCTAssertEqual(lines(#"print(getmetatable(""), getmetatable("abc") == "string")"#), ["string\ttrue"])
    }

    func testStringMetatableCannotBeModified() {
        assertFails(#"getmetatable("").__index = {}"#, kind: .runtime,
                    message: "recipes/t.lua:1: attempt to index a string value")
    }

    func testStringMetatableCannotBeReplaced() {
        assertFails(#"setmetatable("", {})"#, kind: .runtime,
                    message: "recipes/t.lua:1: bad argument #1 to 'setmetatable' (table expected, got string)")
    }

    func testStringMetatableCannotBeReachedWithRawget() {
        assertFails(#"rawset(getmetatable(""), "__index", {})"#, kind: .runtime,
                    message: "recipes/t.lua:1: bad argument #1 to 'rawset' (table expected, got string)")
    }

    func testEnvironmentMetatableIsLocked() {
        XCTAssertEqual(lines("print(getmetatable(_ENV))"), ["the recipe environment is locked"])
    }

    func testSetmetatableOnEnvironmentIsRefused() {
        assertFails("setmetatable(_ENV, nil)", kind: .runtime,
                    message: "recipes/t.lua:1: cannot change a protected metatable")
    }

    // MARK: collectgarbage

    func testCollectgarbageCountIsAllowed() {
        XCTAssertEqual(lines(#"print(math.type(collectgarbage("count")), collectgarbage("count") > 0)"#),
                       ["float\ttrue"])
    }

    func testCollectgarbageStopIsRefused() {
        assertFails(#"collectgarbage("stop")"#, kind: .runtime,
                    message: "recipes/t.lua:1: collectgarbage('stop') is not allowed in recipes; only collectgarbage('count') is")
    }

    func testCollectgarbageWithoutArgumentIsRefused() {
        assertFails("collectgarbage()", kind: .runtime,
                    message: "recipes/t.lua:1: collectgarbage('collect') is not allowed in recipes; only collectgarbage('count') is")
    }

    func testCollectgarbageGenerationalIsRefused() {
        assertFails(#"collectgarbage("generational")"#, kind: .runtime,
                    message: "recipes/t.lua:1: collectgarbage('generational') is not allowed in recipes; only collectgarbage('count') is")
    }

    // MARK: Memory bombs

    func testStringRepOverBuildCapIsRefused() {
        assertFails(#"local s = string.rep("x", 1 << 40)"#, kind: .runtime,
                    message: "recipes/t.lua:1: string.rep would build 1099511627776 bytes, over the 8 MiB cap on one string")
        assertFreshRunWorks()
    }

    func testStringRepWithSeparatorCountsTheSeparator() {
        assertFails(#"local s = string.rep("", 5 << 20, "xx")"#, kind: .runtime,
                    message: "recipes/t.lua:1: string.rep would build 10485758 bytes, over the 8 MiB cap on one string")
    }

    func testStringFormatOverBuildCapIsRefused() {
        assertFails(#"local s = string.rep("x", 3 << 20) local t = string.format("%s", s)"#, kind: .runtime,
                    message: "recipes/t.lua:1: string.format would build 12583344 bytes, over the 8 MiB cap on one string")
    }

    func testTableConcatOverBuildCapIsRefused() {
        assertFails(#"local s = string.rep("x", 1 << 20) local t = {} for i = 1, 9 do t[i] = s end print(#table.concat(t))"#,
                    kind: .runtime,
                    message: "recipes/t.lua:1: table.concat would build 9437184 bytes, over the 8 MiB cap on one string")
    }

    func testDoublingConcatenationHitsMemoryLimit() {
        let outcome = assertFails(#"local t = { "x" } while true do t[#t + 1] = t[#t] .. t[#t] end"#,
                                  kind: .limit(.memory), message: LimitMessages.memory32)
        XCTAssertEqual(outcome.report.exitCode, 4)
        assertFreshRunWorks()
    }

    func testTableGrowthHitsMemoryLimit() {
        let outcome = assertFails("local t = {} local i = 0 while true do i = i + 1 t[i] = { i } end",
                                  kind: .limit(.memory), message: LimitMessages.memory32)
        XCTAssertEqual(outcome.report.exitCode, 4)
        assertFreshRunWorks()
    }

    func testMemoryLimitCannotBeCaughtByPcall() {
        let source = """
        local keep = {}
        while true do
          local ok, err = pcall(function() keep[#keep + 1] = string.rep("y", 1 << 20) .. #keep end)
          if not ok then print("caught", err) end
        end
        """
        let outcome = assertFails(source, kind: .limit(.memory), message: LimitMessages.memory32)
        XCTAssertEqual(outcome.report.exitCode, 4)
        assertFreshRunWorks()
    }

    // MARK: Instruction and time limits

    func testBusyLoopHitsTimeout() {
        harness.limits.timeoutSeconds = 0.5
        let start = Date()
        let outcome = assertFails("while true do end", kind: .limit(.timeout), message: LimitMessages.timeout("0.5 s"))
        XCTAssertEqual(outcome.report.exitCode, 4)
        XCTAssertLessThan(Date().timeIntervalSince(start), 2.5)
        assertFreshRunWorks()
    }

    func testBusyLoopHitsInstructionBudget() {
        harness.limits.instructions = 2_000_000
        let outcome = assertFails("while true do end", kind: .limit(.instructions),
                                  message: LimitMessages.instructions(2_000_000))
        XCTAssertEqual(outcome.report.exitCode, 4)
        XCTAssertGreaterThan(outcome.report.instructions, 2_000_000)
        assertFreshRunWorks()
    }

    func testBusyLoopInsideCoroutineIsStopped() {
        harness.limits.instructions = 2_000_000
        assertFails("local co = coroutine.wrap(function() while true do end end) co()",
                    kind: .limit(.instructions), message: LimitMessages.instructions(2_000_000))
        assertFreshRunWorks()
    }

    func testCoroutineResumeCannotSwallowTheLimit() {
        harness.limits.timeoutSeconds = 0.5
        let source = """
        while true do
          local co = coroutine.create(function() while true do end end)
          local ok, err = coroutine.resume(co)
        end
        """
        assertFails(source, kind: .limit(.timeout), message: LimitMessages.timeout("0.5 s"))
        assertFreshRunWorks()
    }

    func testPcallLoopCannotSwallowTheLimit() {
        harness.limits.instructions = 2_000_000
        let source = """
        local caught = 0
        while true do
          local ok = pcall(function() while true do end end)
          caught = caught + 1
        end
        """
        assertFails(source, kind: .limit(.instructions), message: LimitMessages.instructions(2_000_000))
        assertFreshRunWorks()
    }

    func testXpcallHandlerCannotSwallowTheLimit() {
        harness.limits.timeoutSeconds = 0.5
        let source = """
        while true do
          xpcall(function() while true do end end, function(e) return "swallowed" end)
        end
        """
        assertFails(source, kind: .limit(.timeout), message: LimitMessages.timeout("0.5 s"))
        assertFreshRunWorks()
    }

    func testErrorHandlerThatReturnsCannotSwallowTheLimit() {
        harness.limits.instructions = 2_000_000
        let source = """
        local handled = 0
        xpcall(function() while true do end end, function(e) handled = handled + 1 return "swallowed" end)
        print("not reached", handled)
        """
        let outcome = assertFails(source, kind: .limit(.instructions), message: LimitMessages.instructions(2_000_000))
        XCTAssertEqual(outcome.lines, [])
        assertFreshRunWorks()
    }

    func testErrorHandlerThatLoopsCannotEscapeTheLimit() throws {
        // The stop is raised from inside the count hook, where Lua has set
        // `allowhook = 0`; luaG_errormsg then calls the xpcall message handler
        // before unwinding, so the handler runs with hooks disabled and is never
        // stopped. In-process (no watchdog action) the run never returns; the CLI is
        // only rescued by its watchdog at timeout + 2 s (see CLITests).
        //   xpcall(function() while true do end end, function(e) while true do end end)
        // Regression: the stop is now raised as a memory error, for which Lua runs no
        // message handler.
        harness.limits.timeoutSeconds = 0.5
        let outcome = runWithin(seconds: 5, "xpcall(function() while true do end end, function(e) while true do end end)")
        XCTAssertEqual(outcome?.failure?.kind, .limit(.timeout))
        XCTAssertEqual(outcome?.message, LimitMessages.timeout("0.5 s"))
    }

    func testErrorHandlerOfAnOrdinaryErrorThatLoopsCannotEscapeTheLimit() throws {
        // Same cause: the handler of an ordinary error is interrupted by the hook, and
        // the stop error re-enters the handler with hooks disabled.
        //   xpcall(function() error("boom") end, function(e) while true do end end)
        harness.limits.instructions = 2_000_000
        let outcome = runWithin(seconds: 5, "xpcall(function() error('boom') end, function(e) while true do end end)")
        XCTAssertEqual(outcome?.failure?.kind, .limit(.instructions))
        XCTAssertEqual(outcome?.message, LimitMessages.instructions(2_000_000))
    }

    func testDeepRecursionIsAStackOverflowNotACrash() {
        harness.limits.memoryBytes = 256 << 20
        let outcome = harness.run("local function f(n) return 1 + f(n + 1) end\nf(1)")
        XCTAssertEqual(outcome.failure?.kind, .runtime)
        XCTAssertEqual(outcome.message, "recipes/t.lua:1: stack overflow")
        XCTAssertTrue(outcome.failure?.traceback.hasPrefix("stack traceback:") ?? false)
        assertFreshRunWorks()
    }

    func testDeepRecursionThroughPcallIsAStackOverflow() {
        let outcome = harness.run("local function f() local ok, e = pcall(f) error(e, 0) end\nf()")
        XCTAssertEqual(outcome.failure?.kind, .runtime)
        XCTAssertEqual(outcome.message, "C stack overflow")
        assertFreshRunWorks()
    }

    // MARK: No addresses

    func testTostringShowsNoAddress() {
        let source = """
        print(tostring({}), tostring(print), tostring(function() end), tostring(coroutine.create(print)))
        print(string.format("%s|%s", {}, print))
        print({}, print)
        """
        let output = lines(source)
        XCTAssertEqual(output, [
            "table\tfunction: builtin\tfunction: recipes/t.lua:1\tthread",
            "table|function: builtin",
            "table\tfunction: builtin",
        ])
        for line in output { XCTAssertFalse(line.contains("0x"), line) }
    }

    func testTostringUsesNameAndTostringMetafields() {
        XCTAssertEqual(lines("""
        print(setmetatable({}, { __name = "Point" }), setmetatable({}, { __tostring = function() return "P(1,2)" end }))
        """), ["Point\tP(1,2)"])
    }

    func testStringFormatPercentPIsRefused() {
        assertFails(#"print(string.format("%p", {}))"#, kind: .runtime,
                    message: "recipes/t.lua:1: string.format: '%p' is not allowed in recipes (it reveals memory addresses)")
    }

    func testStringFormatPercentPWithFlagsIsRefused() {
        assertFails(#"print(("%-20p"):format(print))"#, kind: .runtime,
                    message: "recipes/t.lua:1: string.format: '%p' is not allowed in recipes (it reveals memory addresses)")
    }

    func testEscapedPercentIsNotMistakenForPercentP() {
        XCTAssertEqual(lines(#"print(string.format("100%%p %d", 3))"#), ["100%p 3"])
    }

    // MARK: Strict globals

    func testReadingUndeclaredGlobalFails() {
        assertFails("local a = 1\nprint(undeclared)", kind: .runtime,
                    message: "recipes/t.lua:2: recipe attempted to access nonexistent global 'undeclared'")
    }

    func testWritingUndeclaredGlobalFails() {
        assertFails("local a = 1\n\ncounter = 1", kind: .runtime,
                    message: "recipes/t.lua:3: recipe attempted to assign to undeclared global 'counter' (declare it with 'local')")
    }

    func testDeclaringGlobalFunctionFails() {
        assertFails("function helper() end", kind: .runtime,
                    message: "recipes/t.lua:1: recipe attempted to assign to undeclared global 'helper' (declare it with 'local')")
    }

    func testRecipeCannotReplaceSharedBaseFunctions() {
        assertFails("print = function() end", kind: .runtime,
                    message: "recipes/t.lua:1: recipe attempted to assign to undeclared global 'print' (declare it with 'local')")
    }

    func testManifestMayAppearOnlyOnce() {
        assertFails(#"recipe { name = "a" }\#nrecipe { name = "b" }"#, kind: .runtime,
                    message: "recipes/t.lua:2: recipe { … } may appear only once, at the top of the recipe")
    }

    func testStructuredRuntimeErrorsKeepTheirKind() {
        let outcome = assertFails(#"error("plain")"#, kind: .runtime, message: "recipes/t.lua:1: plain")
        XCTAssertEqual(outcome.report.exitCode, 1)
        XCTAssertTrue(outcome.failure!.traceback.contains("recipes/t.lua:1: in main chunk"), outcome.failure!.traceback)
    }

    func testSyntaxErrorIsALoadFailure() {
        let outcome = assertFails("local x = \nprint(", kind: .load,
                                  message: "recipes/t.lua:2: unexpected symbol near <eof>")
        XCTAssertEqual(outcome.report.exitCode, 2)
    }
}

extension SandboxEscapeTests {
    func testMemoryLimitSwallowedByPcallNearTheEndOfTheRunStillStopsIt() throws {
        // Regression: the allocator now arms the hook at once, and a chunk that
        // returns after a limit was hit is still a limit failure.
        harness.limits.buildBytes = 64 << 20
        let outcome = harness.run(#"local ok, e = pcall(string.rep, "x", 40 << 20) print(ok, e)"#)
        XCTAssertEqual(outcome.failure?.kind, .limit(.memory))
        XCTAssertEqual(outcome.message, LimitMessages.memory32)
        XCTAssertEqual(outcome.lines, [])
    }
}
