import Foundation
import XCTest

/// The run's own Hub credential is masked in everything the run shows, whatever the
/// profile reads it from (`api_key_env`, `api_key`, as `api_key_ref` always was): a
/// parameter or a value equal to it prints as `<secret NAME>`.
final class HubCredentialMaskingCLITests: XCTestCase {
    private var cli: CLIHarness!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
    }

    override func tearDown() {
        cli = nil
        super.tearDown()
    }

    func testTheProfilesAPIKeyIsMaskedInARunsOutputWhereverItComesFrom() throws {
        let key = "satk_live_Masked0123456789"
        try cli.file("echo.lua", """
            recipe { name = "echo", params = { note = { type = "string" } } }
            print("note: " .. params.note)
            log.info("note " .. params.note)
            """)
        let cases = [(#"api_key_env = "HUB_KEY""#, "<secret $HUB_KEY>"), (#"api_key = "\#(key)""#, "<secret api_key of profile 'prod'>")]
        for (auth, mask) in cases {
            try cli.file("hubscript.config.lua", """
                return { profiles = { prod = { hub_url = "https://hub.example.com", \(auth), api_key_permissions = { "users.list" } } } }
                """)
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-mask-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: scratch) }
            let environment = try CLIHarness.isolatedEnvironment(scratch: scratch, sandboxConfig: false, extra: ["HUB_KEY": key])
            let run = try CLIHarness.run(["echo.lua", "--config", "hubscript.config.lua", "--param", "note=[\(key)]"],
                                               in: cli.root, environment: environment)
            XCTAssertEqual(run.status, 0, auth + ": " + run.stdout + run.stderrWithoutRunStart)
            XCTAssertEqual(run.stdout, "note: [\(mask)]\n", auth)
            XCTAssertFalse((run.stdout + run.stderr).contains("Masked0123456789"), auth + ": " + run.stderr)
        }
    }
}
