import Foundation
import XCTest

/// Issue 9 part 4: an uncaught error points at the recipe (file:line, recipe frames
/// only), `check` knows the permission catalogue, and usage mistakes are caught early.
final class RecipeErrorCLITests: CLITestCase {
    /// `stderr` with the run id (random) replaced by `RUN`.
    func stable(_ text: String) -> String {
        text.replacingOccurrences(of: #"run_[0-9TZ]+_[0-9a-f]+"#, with: "RUN", options: .regularExpression)
            .replacingOccurrences(of: #" in [0-9.]+ s\n"#, with: " in T s\n", options: .regularExpression)
    }

    func testHubErrorShowsTheRecipeLineAndTraceback() throws {
        try folder.write("nf.lua", """
        recipe { name = "nf", needs = { "users.list" } }
        local function find(id)
          return hub.users.get(id)
        end
        print("before")
        find("u_nope")
        """)
        let result = try hubscript("run", "nf.lua")
        XCTAssertEqual(result.stdout, "before\n")
        XCTAssertEqual(stable(result.stderr), """
        error: nf.lua:3: not_found: User u_nope does not exist or is not visible to the caller.
        stack traceback:
        \t[C]: in function 'hub.users.get'
        \tnf.lua:3: in local 'find'
        \tnf.lua:6: in main chunk
        \t[C]: in ?
        stopped: run RUN — 1 reads, 0 writes in T s

        """)
        XCTAssertEqual(result.exitCode, 1)
    }

    func testUndeclaredPermissionShowsTheRecipeLineWithoutWrapperFrames() throws {
        try folder.write("nd.lua", """
        recipe { name = "nd" }
        local n = 0
        for u in hub.users.list() do n = n + 1 end
        """)
        assertResult(try hubscript("run", "nd.lua"), stdout: "", stderr: """
        error: nd.lua:3: permission_not_declared: hub.users.list needs 'users.list', which this recipe's manifest does not declare; add "users.list" to needs
        stack traceback:
        \t[C]: in function 'hub.users.list'
        \tnd.lua:3: in main chunk
        \t[C]: in ?

        """, exitCode: 1)
    }

    func testHubErrorLocationInJSON() throws {
        try folder.write("nf.lua", "recipe { name = \"nf\", needs = { \"users.list\" } }\nhub.users.get('u_nope')\n")
        let result = try hubscript("run", "nf.lua", "--json")
        let errorLine = try XCTUnwrap(result.stdout.split(separator: "\n").first { $0.contains("\"type\":\"error\"") })
        let event = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(errorLine.utf8)) as? [String: Any])
        XCTAssertEqual(event["location"] as? String, "nf.lua:2")
        XCTAssertEqual(event["traceback"] as? String,
                       "stack traceback:\n\t[C]: in function 'hub.users.get'\n\tnf.lua:2: in main chunk\n\t[C]: in ?")
    }

    func testTracebackThroughRequireHasNoInternalFrames() throws {
        try folder.write("lib/bad.lua", "local function boom() error('mod failed') end\nboom()\n")
        try folder.write("rq.lua", "recipe { name = \"rq\" }\nrequire('bad')\n")
        let result = try hubscript("run", "rq.lua", "--lib", "lib")
        XCTAssertEqual(result.exitCode, 1)
        XCTAssertFalse(result.stderr.contains("hubscript:"), result.stderr)
        XCTAssertEqual(result.stderr, """
        error: lib/bad.lua:1: mod failed
        stack traceback:
        \t[C]: in function 'error'
        \tlib/bad.lua:1: in local 'boom'
        \tlib/bad.lua:2: in local 'fn'
        \trq.lua:2: in main chunk
        \t[C]: in ?

        """)
    }
}
