import Foundation
import HTTPKit
import Vault
import XCTest

/// `hub.api_keys.create{…, store = NAME}` keeps a new key's secret away from the recipe
/// (the Hub's API-key contract: the recipe never holds it): a recipe must not be able to
/// send the secret anywhere through the handle it gets back, nor write into a vault entry
/// its manifest does not name.
final class APIKeyStoreSecrecyTests: XCTestCase {
    var vault: VaultCLI!
    var cli: CLIHarness { vault.harness }
    var served: ServedSandbox!
    var config: String!

    /// A vault, a served sandbox and a signed-in session profile `me` (keys can be
    /// created only with a user session).
    override func setUpWithError() throws {
        vault = try VaultCLI(testCase: self)
        try vault.initialise()
        cli.extraEnvironment = ["HUBSCRIPT_VAULT_KEY_FILE": vault.keyFile]
        served = try ServedSandbox(cli, state: cli.root.appendingPathComponent("served-state"), faults: "none")
        config = try cli.file("me.config.lua", """
            return { profiles = { me = { hub_url = "\(served.url)", email = "admin@example.com", rate_limit_per_minute = 0 } } }
            """)
        let login = try cli.run(["login", "--config", config, "--password-stdin", "--mfa-code", "123456"], input: "any password\n")
        XCTAssertEqual(login.status, 0, login.stderr)
    }

    override func tearDown() {
        served?.stop()
    }

    /// The handle `api_keys.create` returns is accepted by `dispatch.connect` as a token,
    /// which then goes as `Authorization: Bearer satk_live_…` to any https:// (or
    /// loopback) URL the recipe names — the secret leaves the machine, though the
    /// manifest declares no secret at all. Expected: `dispatch.connect` refuses a handle
    /// whose entry the manifest does not declare in `secrets` (or any key handle), and
    /// nothing is sent.
    /// A loopback server that records each request's Authorization header and answers 401.
    func capturingReceiver() throws -> (HTTPServer, CapturedHeaders) {
        let captured = CapturedHeaders()
        let receiver = try HTTPServer { request in
            captured.append(request.headers["Authorization"] ?? "")
            return HTTPResponseMessage(status: 401, headers: ["Content-Type": "application/json"],
                                       body: Data(#"{"error":{"code":"unauthorized","message":"no"}}"#.utf8))
        }
        receiver.start()
        return (receiver, captured)
    }

    func testANewKeysSecretCannotBeSentAnywhereThroughItsHandle() throws {
        let (receiver, captured) = try capturingReceiver()
        defer { receiver.stop() }
        try cli.file("steal.lua", """
            recipe { name = "steal", needs = { "api_keys.manage", "dispatch.send" } }
            local k = hub.api_keys.create({ name = "innocent", permissions = { "users.list" }, mode = "live" },
                                          { store = "hub/keys/innocent" })
            local ok, err = pcall(function()
              local conn = dispatch.connect { url = "http://127.0.0.1:\(receiver.port)", token = k.secret }
              return conn:send { title = "t", body = "b" }
            end)
            print("sent", ok)
            """)
        let r = try cli.run(["run", "steal.lua", "--config", config])
        XCTAssertTrue(r.stdout.contains("sent\tfalse"), r.output)
        XCTAssertEqual(captured.values.filter { $0.contains("satk_") }, [],
                       "the new key's secret reached a URL the recipe chose")
    }

    /// A second `create` with the same explicit key is replayed from the journal, and the
    /// replay hands back a handle for whatever `store` the second call names — without
    /// writing that entry. With `dispatch.connect`, the recipe sends the admin's own
    /// `dispatch/ci` (or `hub/prod-key`, `webhooks/hub`, …) to a URL of its choosing,
    /// though its manifest declares no secret. Expected: the replay is refused when its
    /// `store` differs from the journalled one (or it returns the journalled entry's
    /// handle), and no existing secret reaches the receiver.
    func testAReplayedCreateGivesNoHandleToAnotherEntry() throws {
        let set = try vault.run(["set", "dispatch/ci", "--key-file", vault.keyFile], stdin: "dsp_ADMINS_OWN_TOKEN_canary")
        XCTAssertEqual(set.status, 0, set.stderr)
        let (receiver, captured) = try capturingReceiver()
        defer { receiver.stop() }
        try cli.file("replay.lua", """
            recipe { name = "replay", needs = { "api_keys.manage", "dispatch.send" } }
            local fields = { name = "h", permissions = { "users.list" }, mode = "live" }
            hub.api_keys.create(fields, { store = "hub/keys/h", key = "same-key" })
            local ok, k = pcall(hub.api_keys.create, fields, { store = "dispatch/ci", key = "same-key" })
            if ok then
              local conn = dispatch.connect { url = "http://127.0.0.1:\(receiver.port)", token = k.secret }
              pcall(function() return conn:send { title = "t", body = "b" } end)
            end
            print("second create", ok)
            """)
        let r = try cli.run(["run", "replay.lua", "--config", config])
        XCTAssertEqual(captured.values.filter { $0.contains("ADMINS_OWN_TOKEN") }, [],
                       "a vault entry the recipe never declared reached a URL it chose: \(r.output)")
    }

    /// `store` may name any vault entry outside `sessions/`: a recipe overwrites the
    /// trigger's signing secret (`webhooks/hub`), the Dispatch token or a profile's API
    /// key without declaring it. Expected: the create is refused (before anything is
    /// sent) unless the manifest names the entry (e.g. in `secrets`), and the admin's
    /// entry keeps its value.
    func testAStoreCannotOverwriteAnEntryTheManifestDoesNotName() throws {
        let set = try vault.run(["set", "webhooks/hub", "--key-file", vault.keyFile], stdin: "whsec_the_admins_own_secret")
        XCTAssertEqual(set.status, 0, set.stderr)
        try cli.file("clobber.lua", """
            recipe { name = "clobber", needs = { "api_keys.manage" } }
            print(pcall(hub.api_keys.create, { name = "k", permissions = { "users.list" }, mode = "live" }, { store = "webhooks/hub" }))
            """)
        let r = try cli.run(["run", "clobber.lua", "--config", config])
        let opened = try Vault.open(at: vault.folder, key: .keyFile(vault.keyFile))
        let value = try opened.secret(named: "webhooks/hub").withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        XCTAssertEqual(value, "whsec_the_admins_own_secret", "the recipe replaced the vault entry webhooks/hub: \(r.output)")
        XCTAssertTrue(r.stdout.hasPrefix("false\t"), r.output)
    }
}

extension APIKeyStoreSecrecyTests {
    /// `store` naming an entry that is a vault object: the Hub creates the key, then the
    /// vault refuses the name (`'audit/q1.jsonl' is an object in the vault`), leaving a
    /// live key whose secret nobody holds and a write pending that every resume fails
    /// again. Expected: the name is refused before anything is sent (as `sessions/…` is),
    /// and no key named "orphan" exists at the Hub.
    func testAStoreThatCannotBeWrittenIsRefusedBeforeTheKeyIsCreated() throws {
        let object = try cli.file("audit.jsonl", "{\"a\":1}\n")
        let put = try vault.run(["put-object", object, "--name", "audit/q1.jsonl", "--key-file", vault.keyFile])
        XCTAssertEqual(put.status, 0, put.stderr)
        try cli.file("orphan.lua", """
            recipe { name = "orphan", needs = { "api_keys.manage" } }
            print(pcall(hub.api_keys.create, { name = "orphan", permissions = { "users.list" }, mode = "live" }, { store = "audit/q1.jsonl" }))
            """)
        let r = try cli.run(["run", "orphan.lua", "--config", config])
        XCTAssertTrue(r.stdout.hasPrefix("false\t"), r.output)
        try cli.file("count.lua", """
            recipe { name = "count", needs = { "api_keys.manage" } }
            local n = 0
            for k in hub.api_keys.list() do if k.name == "orphan" then n = n + 1 end end
            print("orphans", n)
            """)
        let count = try cli.run(["run", "count.lua", "--config", config])
        XCTAssertEqual(count.stdout, "orphans\t0\n", "the Hub holds a key whose secret went nowhere: \(r.output)")
    }
}

extension APIKeyStoreSecrecyTests {
    /// The plan says "create API key 'ps2' (live), secret into the vault entry
    /// hub/keys/ps2"; the apply's check compares key, method, path and body — not the
    /// entry — so a recipe that tells plan from apply (an earlier create's id is
    /// `key_planned_1` only in a plan) stores the secret over `webhooks/hub` instead, and
    /// the apply succeeds. Expected: the apply is refused before any write, because the
    /// write now differs from the plan (its vault entry), and `webhooks/hub` is untouched.
    func testAnApplyStoresOnlyIntoTheEntriesItsPlanNamed() throws {
        let set = try vault.run(["set", "webhooks/hub", "--key-file", vault.keyFile], stdin: "whsec_the_admins_own_secret")
        XCTAssertEqual(set.status, 0, set.stderr)
        try cli.file("planswap.lua", """
            recipe { name = "planswap", needs = { "api_keys.manage" } }
            local first = hub.api_keys.create({ name = "ps1", permissions = { "users.list" }, mode = "live" }, { store = "hub/keys/ps1" })
            local planning = first.id == "key_planned_1"
            hub.api_keys.create({ name = "ps2", permissions = { "users.list" }, mode = "live" },
                                { store = planning and "hub/keys/ps2" or "webhooks/hub" })
            """)
        let planFile = cli.root.appendingPathComponent("ps.plan.json").path
        let plan = try cli.run(["plan", "planswap.lua", "--config", config, "--out", planFile])
        XCTAssertEqual(plan.status, 0, plan.output)
        XCTAssertTrue(try String(contentsOfFile: planFile, encoding: .utf8).contains("secret into the vault entry hub/keys/ps2"))
        let apply = try cli.run(["apply", planFile, "--config", config])
        let opened = try Vault.open(at: vault.folder, key: .keyFile(vault.keyFile))
        let value = try opened.secret(named: "webhooks/hub").withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        XCTAssertEqual(value, "whsec_the_admins_own_secret", "the apply stored into an entry its plan never named: \(apply.output)")
        XCTAssertNotEqual(apply.status, 0, apply.output)
    }
}

/// Header values a test server saw, from its connection threads.
final class CapturedHeaders: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func append(_ value: String) { lock.withLock { list.append(value) } }
    var values: [String] { lock.withLock { list } }
}
