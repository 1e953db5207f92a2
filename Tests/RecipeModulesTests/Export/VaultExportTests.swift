import Foundation
import ScriptHost
import Vault
import XCTest
import RecipeModules

/// `export.jsonl("vault:NAME", …)` and `export.csv("vault:NAME", …)`: streamed into a
/// vault object, stored only when complete, never by a plan.
final class VaultExportTests: VaultTestCase {
    func exportHarness(_ target: VaultExportTarget?) throws -> RecipeHarness {
        let h = try RecipeHarness()
        h.exports.vault = target
        return h
    }

    func objectText(_ name: String) throws -> String {
        var data = Data()
        try Vault.open(at: folder, key: try keySource()).readObject(name) { data.append(contentsOf: $0) }
        return String(decoding: data, as: UTF8.self)
    }

    func testAnExportStreamsIntoAVaultObject() throws {
        try createVault()
        let h = try exportHarness(.store(resolver()))
        h.runOK("""
        local rows = {}
        for i = 1, 500 do rows[i] = {id = i, email = "user" .. i .. "@example.com"} end
        local s = export.jsonl("vault:audit/ada.jsonl", rows)
        print(s.name, s.rows, s.path, s.object_id == nil)
        export.csv("vault:audit/ada", {{a = 1, b = "x"}})
        """)
        var expected = ""
        for i in 1...500 { expected += "{\"email\":\"user\(i)@example.com\",\"id\":\(i)}\n" }
        XCTAssertEqual(try objectText("audit/ada.jsonl"), expected)
        XCTAssertEqual(try objectText("audit/ada.csv"), "a,b\r\n1,x\r\n")
        let vault = try Vault.open(at: folder, key: try keySource())
        XCTAssertEqual(h.output.lines, ["vault:audit/ada.jsonl\t500\tvault:audit/ada.jsonl\tfalse"])
        XCTAssertEqual(h.exports.files.map(\.name), ["vault:audit/ada.jsonl", "vault:audit/ada.csv"])
        XCTAssertEqual(h.exports.files.map(\.objectID), [try vault.objectID(named: "audit/ada.jsonl"), try vault.objectID(named: "audit/ada.csv")])
        XCTAssertNil(h.exports.summaryLine)
        XCTAssertFalse(FileManager.default.fileExists(atPath: h.outFolder.path))
    }

    func testAnExportThatFailsMidwayLeavesNoObject() throws {
        try createVault()
        let h = try exportHarness(.store(resolver()))
        let message = h.runFailing("""
        local i = 0
        export.jsonl("vault:audit/partial.jsonl", function()
          i = i + 1
          if i > 300 then error("the source broke") end
          return {i = i, pad = string.rep("x", 100)}
        end)
        """)
        XCTAssertTrue(message.contains("the source broke"), message)
        let vault = try Vault.open(at: folder, key: try keySource())
        XCTAssertEqual(try vault.list().map(\.name), [])
        let objects = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("objects").path)
        XCTAssertEqual(objects, [], "no object file, not even a temporary one")
    }

    func testAPlanWritesNothingToTheVault() throws {
        try createVault()
        let h = try exportHarness(.discard)
        h.runOK(#"local s = export.jsonl("vault:audit/ada.jsonl", {{a = 1}}); print(s.rows, s.object_id)"#)
        XCTAssertEqual(h.output.lines, ["1\tnil"])
        XCTAssertEqual(h.exports.files, [ExportedFile(name: "vault:audit/ada.jsonl", rows: 1, bytes: 8, path: "vault:audit/ada.jsonl")])
        XCTAssertEqual(try Vault.open(at: folder, key: try keySource()).list().map(\.name), [])
    }

    func testVaultExportErrorsSayWhatToDo() throws {
        XCTAssertEqual(try exportHarness(nil).runFailing(#"export.jsonl("vault:a.jsonl", {})"#),
                       "recipes/test.lua:1: export.jsonl: cannot export vault:a.jsonl: this run has no vault")
        XCTAssertEqual(try exportHarness(.store(resolver())).runFailing(#"export.jsonl("vault:a.jsonl", {})"#),
                       "recipes/test.lua:1: export.jsonl: cannot export vault:a.jsonl: no vault in \(folder.path): create one with `hubscript vault init`, then `hubscript vault set NAME`")
        try createVault()
        XCTAssertEqual(try exportHarness(.store(resolver(locked: true))).runFailing(#"export.jsonl("vault:a.jsonl", {})"#),
                       "recipes/test.lua:1: export.jsonl: cannot export vault:a.jsonl: the vault in \(folder.path) is locked: set HUBSCRIPT_VAULT_KEY (or HUBSCRIPT_VAULT_KEY_FILE, or HUBSCRIPT_VAULT_PASSPHRASE)")
        XCTAssertEqual(try exportHarness(.store(resolver())).runFailing(#"export.jsonl("vault:../x.jsonl", {})"#),
                       "recipes/test.lua:1: bad argument #1 to 'export.jsonl' (vault exports are named like 'vault:audit/events.jsonl': invalid name '../x.jsonl': use 1–255 letters, digits and . _ - / @ : + = starting with a letter or digit)")
        XCTAssertEqual(try exportHarness(.store(resolver())).runFailing(#"export.jsonl("vault:audit/x.lua", {})"#),
                       "recipes/test.lua:1: bad argument #1 to 'export.jsonl' (export.jsonl writes only .jsonl or .ndjson files, got 'vault:audit/x.lua'; a name without an extension gets .jsonl)")
    }
}
