import Foundation
import XCTest

/// The git that fetches and checks libraries gets an environment built from an
/// allow-list: hubscript's vault key and passphrase, PGPASSWORD and API keys in the
/// caller's environment never reach it (nor ssh or a credential helper it runs).
final class GitEnvironmentCLITests: XCTestCase {
    func testGitSeesNoSecretOfTheCallersEnvironmentButWhatItNeedsToConnect() throws {
        let cli = try CLIHarness(testCase: self)
        let upstream = try GitFixture(in: cli.root)
        let commit = try upstream.commit(["greeting.lua": "return { text = 'v1' }\n"])
        try cli.file("hubscript.config.lua", """
            return { profiles = { local_sandbox = { sandbox = true } }, libraries = { sec = "\(upstream.source)@\(commit)" } }
            """)
        // A `git` first on PATH that writes each environment it is given, then runs git.
        let bin = cli.root.appendingPathComponent("bin", isDirectory: true)
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let log = cli.root.appendingPathComponent("git-environments.txt").path
        let wrapper = try cli.file("bin/git", "#!/bin/sh\nenv >> '\(log)'\necho --- >> '\(log)'\nexec /usr/bin/git \"$@\"\n")
        chmod(wrapper, 0o755)
        let secrets = [
            "HUBSCRIPT_VAULT_KEY": String(repeating: "ab", count: 32), "HUBSCRIPT_VAULT_PASSPHRASE": "passphrase-value-1",
            "HUBSCRIPT_VAULT_KEY_FILE": "/secret/key-file-path", "PGPASSWORD": "pg-password-value-2",
            "HUB_API_KEY": "hub-api-key-value-3", "OPS_TOKEN": "ops-token-value-4", "GIT_DIR": "/elsewhere/.git",
            "AWS_SECRET_ACCESS_KEY": "aws-secret-value-5",
        ]
        cli.extraEnvironment = secrets.merging([
            "PATH": bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
            "GIT_SSH_COMMAND": "ssh -i /home/me/.ssh/deploy", "HTTPS_PROXY": "http://proxy.example:3128", "LC_TIME": "C",
        ]) { $1 }
        let trusted = try cli.run(["trust", "--config", cli.root.appendingPathComponent("hubscript.config.lua").path])
        XCTAssertEqual(trusted.status, 0, trusted.output)
        let environments = try String(contentsOfFile: log, encoding: .utf8).components(separatedBy: "---\n").filter { !$0.isEmpty }
        XCTAssertGreaterThanOrEqual(environments.count, 2, "git ran for the fetch and the checkout")
        for environment in environments {
            let names = Set(environment.split(separator: "\n").compactMap { $0.split(separator: "=", maxSplits: 1).first.map(String.init) })
            for (name, value) in secrets {
                XCTAssertFalse(names.contains(name), "\(name) reached git")
                XCTAssertFalse(environment.contains(value), "the value of \(name) reached git")
            }
            XCTAssertTrue(environment.contains("PATH=" + bin.path), environment)
            XCTAssertTrue(environment.contains("GIT_TERMINAL_PROMPT=0\n"), environment)
            XCTAssertTrue(environment.contains("LC_ALL=C\n"), environment)
            XCTAssertTrue(environment.contains("LC_TIME=C\n"), environment)
        }
        // A fetch keeps what connecting needs; a hermetic step (init, checkout) does not
        // read the user's ssh settings at all.
        let fetches = environments.filter { $0.contains("GIT_CONFIG_NOSYSTEM=1") == false }
        XCTAssertFalse(fetches.isEmpty)
        for fetch in fetches {
            XCTAssertTrue(fetch.contains("GIT_SSH_COMMAND=ssh -i /home/me/.ssh/deploy\n"), fetch)
            XCTAssertTrue(fetch.contains("HTTPS_PROXY=http://proxy.example:3128\n"), fetch)
        }
        for hermetic in environments where hermetic.contains("GIT_CONFIG_NOSYSTEM=1") {
            XCTAssertFalse(hermetic.contains("GIT_SSH_COMMAND="), hermetic)
        }
    }
}
