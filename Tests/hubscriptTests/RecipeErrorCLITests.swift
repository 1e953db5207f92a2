import Foundation
import XCTest

/// An uncaught error points at the recipe (file:line, recipe frames
/// only), `check` knows the permission catalogue, and usage mistakes are caught early.
final class RecipeErrorCLITests: XCTestCase {
    private var cli: CLIHarness!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
    }

    override func tearDown() {
        cli = nil
        super.tearDown()
    }

    /// `stderr` with the run id (random) replaced by `RUN`.
    func stable(_ text: String) -> String {
        text.replacingOccurrences(of: #"run_[0-9TZ]+_[0-9a-f]+"#, with: "RUN", options: .regularExpression)
            .replacingOccurrences(of: #" in [0-9.]+ s\n"#, with: " in T s\n", options: .regularExpression)
    }

    func testHubErrorShowsTheRecipeLineAndTraceback() throws {
        try cli.file("nf.lua", """
        recipe { name = "nf", needs = { "users.list" } }
        local function find(id)
          return hub.users.get(id)
        end
        print("before")
        find("u_nope")
        """)
        let result = try cli.hubscript("run", "nf.lua")
        XCTAssertEqual(result.stdout, "before\n")
        XCTAssertEqual(stable(result.stderrWithoutRunStart), """
        error: nf.lua:3: not_found: User u_nope does not exist or is not visible to the caller.
        stack traceback:
        \t[C]: in function 'hub.users.get'
        \tnf.lua:3: in local 'find'
        \tnf.lua:6: in main chunk
        \t[C]: in ?
        stopped: run RUN — 1 reads, 0 writes in T s

        """)
        XCTAssertEqual(result.status, 1)
    }

    func testUndeclaredPermissionShowsTheRecipeLineWithoutWrapperFrames() throws {
        try cli.file("nd.lua", """
        recipe { name = "nd" }
        local n = 0
        for u in hub.users.list() do n = n + 1 end
        """)
        assertResult(try cli.hubscript("run", "nd.lua"), stdout: "", stderr: """
        error: nd.lua:3: permission_not_declared: hub.users.list needs 'users.list', which this recipe's manifest does not declare; add "users.list" to needs
        stack traceback:
        \t[C]: in function 'hub.users.list'
        \tnd.lua:3: in main chunk
        \t[C]: in ?

        """, exitCode: 1)
    }

    func testHubErrorLocationInJSON() throws {
        try cli.file("nf.lua", "recipe { name = \"nf\", needs = { \"users.list\" } }\nhub.users.get('u_nope')\n")
        let result = try cli.hubscript("run", "nf.lua", "--json")
        let errorLine = try XCTUnwrap(result.stdout.split(separator: "\n").first { $0.contains("\"type\":\"error\"") })
        let event = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(errorLine.utf8)) as? [String: Any])
        XCTAssertEqual(event["location"] as? String, "nf.lua:2")
        XCTAssertEqual(event["traceback"] as? String,
                       "stack traceback:\n\t[C]: in function 'hub.users.get'\n\tnf.lua:2: in main chunk\n\t[C]: in ?")
    }

    /// `error({ code = …, message = … })` raised by the recipe itself points at the
    /// recipe's line, as a string error does.
    func testRecipeStructuredErrorShowsTheRecipeLineAndTraceback() throws {
        try cli.file("se.lua", """
        recipe { name = "se" }
        local function check(n)
          if n > 1 then
            error({ code = "too_many", message = "found " .. n .. " admins" })
          end
        end
        print("before")
        check(3)
        """)
        assertResult(try cli.hubscript("run", "se.lua"), stdout: "before\n", stderr: """
        error: se.lua:4: too_many: found 3 admins
        stack traceback:
        \t[C]: in function 'error'
        \tse.lua:4: in local 'check'
        \tse.lua:8: in main chunk
        \t[C]: in ?

        """, exitCode: 1)
        // A string error, for comparison: the same place, the same shape.
        try cli.file("st.lua", """
        recipe { name = "st" }
        local function check(n)
          if n > 1 then
            error("found " .. n .. " admins")
          end
        end
        print("before")
        check(3)
        """)
        assertResult(try cli.hubscript("run", "st.lua"), stdout: "before\n", stderr: """
        error: st.lua:4: found 3 admins
        stack traceback:
        \t[C]: in function 'error'
        \tst.lua:4: in local 'check'
        \tst.lua:8: in main chunk
        \t[C]: in ?

        """, exitCode: 1)
    }

    func testRecipeStructuredErrorLocationInJSONThroughAssertAndRequire() throws {
        try cli.file("lib/guard.lua", "return function(ok) assert(ok, { code = \"denied\", message = \"not allowed\" }) end\n")
        try cli.file("as.lua", "recipe { name = \"as\" }\nlocal guard = require('guard')\nguard(false)\n")
        let result = try cli.hubscript("run", "as.lua", "--lib", "lib", "--json")
        XCTAssertEqual(result.status, 1)
        let errorLine = try XCTUnwrap(result.stdout.split(separator: "\n").first { $0.contains("\"type\":\"error\"") })
        XCTAssertEqual(JSONLines.withoutTimestamps(String(errorLine)), [
            #"{"error":{"code":"denied","message":"not allowed"},"kind":"runtime","location":"lib/guard.lua:1","message":"denied: not allowed","traceback":"stack traceback:\n\t[C]: in function 'assert'\n\tlib/guard.lua:1: in local 'guard'\n\tas.lua:3: in main chunk\n\t[C]: in ?","type":"error"}"#,
        ])
    }

    /// A Hub error caught and raised again keeps the binding's position (where it
    /// happened), not the re-raise's.
    func testAReRaisedHubErrorKeepsWhereItHappened() throws {
        try cli.file("rr.lua", """
        recipe { name = "rr", needs = { "users.list" } }
        local ok, err = pcall(hub.users.get, "u_nope")
        print(ok)
        error(err)
        """)
        let events = try cli.hubscript("run", "rr.lua", "--json").stdout.split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let error = try XCTUnwrap(events.first { $0["type"] as? String == "error" })
        XCTAssertEqual(error["location"] as? String, "rr.lua:2")
        XCTAssertEqual(error["traceback"] as? String,
                       "stack traceback:\n\t[C]: in function 'hub.users.get'\n\t[C]: in function 'pcall'\n\trr.lua:2: in main chunk\n\t[C]: in ?")
        XCTAssertEqual(events.first { $0["type"] as? String == "print" }?["text"] as? String, "false")
    }

    func testTracebackThroughRequireHasNoInternalFrames() throws {
        try cli.file("lib/bad.lua", "local function boom() error('mod failed') end\nboom()\n")
        try cli.file("rq.lua", "recipe { name = \"rq\" }\nrequire('bad')\n")
        let result = try cli.hubscript("run", "rq.lua", "--lib", "lib")
        XCTAssertEqual(result.status, 1)
        XCTAssertFalse(result.stderrWithoutRunStart.contains("hubscript:"), result.stderrWithoutRunStart)
        XCTAssertEqual(result.stderrWithoutRunStart, """
        error: lib/bad.lua:1: mod failed
        stack traceback:
        \t[C]: in function 'error'
        \tlib/bad.lua:1: in local 'boom'
        \tlib/bad.lua:2: in local 'fn'
        \trq.lua:2: in main chunk
        \t[C]: in ?

        """)
    }

    static let catalogue = "known permissions: users.list, users.manage, entitlements.manage, applications.manage, "
        + "roles.manage, organizations.manage, billing.manage, audit.view, webhooks.manage, api_keys.manage, "
        + "tenants.manage, notifications.send, dispatch.send"

    func testCheckRejectsAnUnknownPermissionWithDidYouMean() throws {
        try cli.file("typo.lua", """
        recipe {
          name = "typo",
          needs = { "audit.view", "users.lst" },
        }
        """)
        try cli.file("fine.lua", "recipe { name = \"fine\", needs = { \"users.list\" } }\n")
        assertResult(try cli.hubscript("check", "typo.lua", "fine.lua"), stdout: """
        FAIL typo.lua
             typo.lua:3: manifest: needs: unknown permission 'users.lst' (did you mean 'users.list'?)
             \(Self.catalogue)
        ok   fine.lua
        1 passed, 1 failed

        """, stderr: "", exitCode: 2)
    }

    func testRunRefusesAnUnknownPermissionBeforeConnecting() throws {
        try cli.file("typo.lua", "recipe { name = \"typo\", needs = { \"billing.mange\" } }\nprint('BODY RAN')\n")
        assertResult(try cli.hubscript("run", "typo.lua"), stdout: "", stderr: """
        error: typo.lua:1: manifest: needs: unknown permission 'billing.mange' (did you mean 'billing.manage'?)
        \(Self.catalogue)

        """, exitCode: 2)
    }

    func testRepeatedParamThatIsNotAListIsRefused() throws {
        try cli.file("off.lua", """
        recipe { name = "off", params = { user = { type = "string", required = true }, tags = { type = "list" } } }
        print(params.user, table.concat(params.tags or {}, "|"))
        """)
        assertResult(try cli.hubscript("run", "off.lua", "--param", "user=ada@example.com", "--param", "user=support@example.com"),
                     stdout: "", stderr: """
        error: parameter 'user' given twice (--param user=ada@example.com and --param user=support@example.com); it takes one value (string)

        """, exitCode: 2)
        assertResult(try cli.hubscript("run", "off.lua", "--param", "user=a", "--param", "tags=x,y", "--param", "tags=z"),
                     stdout: "a\tx|y|z\n", stderr: "", exitCode: 0)
    }

    func testUnknownParamSuggestsTheClosest() throws {
        try cli.file("u.lua", "recipe { name = \"u\", params = { user = { type = \"string\" } } }\n")
        assertResult(try cli.hubscript("run", "u.lua", "--param", "usr=a"), stdout: "",
                     stderr: "error: unknown parameter 'usr' (did you mean 'user'?) (this recipe takes: user)\n", exitCode: 2)
    }
}
