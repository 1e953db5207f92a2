import Foundation
import XCTest
@testable import HubClient
import ScriptHost
@testable import RecipeModules
@testable import Configuration

/// The text of a library source and of a `LIB:RECIPE` name comes from a configuration
/// file or a command line: each malformed shape gets its own exact refusal.
final class LibrarySourceTests: XCTestCase {
    let commit = "0123456789abcdef0123456789abcdef01234567"

    func message(_ spec: String) -> String? {
        do { _ = try GitLibrarySource.parse(spec); return nil } catch { return "\(error)" }
    }

    func testAFolderIsNotAGitSource() throws {
        XCTAssertNil(try GitLibrarySource.parse("../ops"))
        XCTAssertNil(try GitLibrarySource.parse("/srv/git+file/x@\(commit)"))
    }

    func testAGitSourceIsAURLAndAFullCommit() throws {
        XCTAssertEqual(try GitLibrarySource.parse("git+file:///srv/sec.git@\(commit)"),
                       GitLibrarySource(url: "file:///srv/sec.git", commit: commit))
        XCTAssertEqual(try GitLibrarySource.parse("git+ssh://git@host/sec.git@\(commit)"),
                       GitLibrarySource(url: "ssh://git@host/sec.git", commit: commit))
        let sha256 = String(repeating: "ab", count: 32)
        XCTAssertEqual(try GitLibrarySource.parse("git+https://h/x.git@\(sha256)")?.commit, sha256)
    }

    func testMalformedGitSourcesAreRefusedOneRuleAtATime() {
        XCTAssertEqual(message("git+file:///srv/sec.git@main"),
                       "'main' is not a full commit id: a git library is pinned to a commit, 40 lowercase hex digits (git rev-parse main in the repository shows it), never a branch, a tag or a short id, which can move")
        XCTAssertEqual(message("git+file:///srv/sec.git@\(commit.prefix(7))"),
                       "'0123456' is not a full commit id: a git library is pinned to a commit, 40 lowercase hex digits (git rev-parse 0123456 in the repository shows it), never a branch, a tag or a short id, which can move")
        XCTAssertTrue(message("git+file:///srv/sec.git@\(commit.uppercased())")?.hasPrefix("'0123456789ABCDEF") ?? false)
        XCTAssertTrue(message("git+file:///srv/sec.git@\(commit)0")?.hasSuffix("which can move") ?? false)
        XCTAssertEqual(message("git+file:///srv/sec.git"),
                       "git+file:///srv/sec.git names no commit: pin it as git+file:///srv/sec.git@COMMIT, the full commit id (git rev-parse HEAD in the repository shows it)")
        XCTAssertEqual(message("git+ssh://git@host/sec.git"),
                       "git+ssh://git@host/sec.git names no commit: pin it as git+ssh://git@host/sec.git@COMMIT, the full commit id (git rev-parse HEAD in the repository shows it)")
        XCTAssertEqual(message("git+file://@\(commit)"), "git+file://@\(commit) names no repository")
        for scheme in ["git+ext::sh -c x", "git+http://h/x", "git+-u/x", "git+/srv/x", "git+"] {
            XCTAssertEqual(message("\(scheme)@\(commit)"),
                           "\"\(scheme)@\(commit)\" is not a git source hubscript fetches (use git+file://, git+https:// or git+ssh://, then @COMMIT)")
        }
        for control in ["\u{0}", "\n", "\r", "\u{1B}", "\u{7F}"] {
            XCTAssertEqual(message("git+file:///srv/x\(control)y@\(commit)"),
                           "the git source holds a control character; write the URL on one line, without them")
        }
        let huge = "git+file:///" + String(repeating: "a", count: 1 << 20) + "@main"
        XCTAssertTrue(message(huge)?.hasPrefix("'main' is not a full commit id") ?? false)
    }

    func testLibraryRecipeNames() {
        XCTAssertEqual(LibraryRecipe.reference("ops:offboard").map { [$0.library, $0.recipe] }, ["ops", "offboard"])
        XCTAssertEqual(LibraryRecipe.reference("ops_2:users.off-board").map { [$0.library, $0.recipe] }, ["ops_2", "users.off-board"])
        for text in ["offboard.lua", "ops:", ":x", "Ops:x", "2ops:x", "ops:../x", "ops:a/b", "ops:a..b", "ops:.a", "ops:a.",
                     "ops:x y", "ops:x\u{0}", "ops:x:y", "op-s:x", "ops:é", "-ops:x", "ops:1x"] {
            XCTAssertNil(LibraryRecipe.reference(text), text)
        }
    }

    func testAnUnknownLibraryOrRecipeListsWhatExists() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-libs-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("users"), withIntermediateDirectories: true)
        try Data("recipe { name = \"a\" }\n".utf8).write(to: folder.appendingPathComponent("a.lua"))
        try Data("recipe { name = \"b\" }\n".utf8).write(to: folder.appendingPathComponent("users/b.lua"))
        try Data("return {}\n".utf8).write(to: folder.appendingPathComponent("helper.lua"))
        try Data("test.case('x', function() end)\n".utf8).write(to: folder.appendingPathComponent("a_test.lua"))
        let ops = ModuleLibrary(name: "ops", folder: folder)
        XCTAssertEqual(LibraryRecipe.recipes(in: ops), ["a", "users.b"])
        XCTAssertEqual(try LibraryRecipe.file(("ops", "users.b"), in: [ops]).lastPathComponent, "b.lua")
        func failure(_ reference: (String, String), _ libraries: [ModuleLibrary]) -> String? {
            do { _ = try LibraryRecipe.file(reference, in: libraries); return nil } catch { return "\(error)" }
        }
        XCTAssertEqual(failure(("ops", "helper"), [ops]), "library ops has no recipe 'helper' (recipes: a, users.b)")
        XCTAssertEqual(failure(("ops", "a_test"), [ops]), "library ops has no recipe 'a_test' (recipes: a, users.b)")
        XCTAssertEqual(failure(("sec", "a"), [ops]), "no library 'sec' (libraries: ops)")
        XCTAssertEqual(failure(("sec", "a"), []),
                       "sec:a names a recipe of library 'sec', and the configuration has no libraries (libraries = { sec = \"folder\" })")
    }

    func testAllowListsAndNeeds() {
        let allow = AllowedPermissions(["users.list"], caller: "job \"nightly\"")
        XCTAssertNoThrow(try allow.check(needs: ["users.list"]))
        XCTAssertNoThrow(try allow.check(needs: []))
        XCTAssertThrowsError(try allow.check(needs: ["users.manage", "users.list", "audit.view"])) { error in
            XCTAssertEqual("\(error)", "not allowed: the recipe needs users.manage, audit.view, beyond what job \"nightly\" allows (users.list); nothing ran. Add them to the allow list if the recipe should have them.")
        }
        XCTAssertThrowsError(try AllowedPermissions([], caller: "--allow").check(needs: ["users.list"])) { error in
            XCTAssertEqual("\(error)", "not allowed: the recipe needs users.list, beyond what --allow allows (nothing); nothing ran. Add it to the allow list if the recipe should have it.")
        }
        XCTAssertNil(AllowedPermissions.problem(in: ["users.list", "dispatch.send"]))
        XCTAssertTrue(AllowedPermissions.problem(in: ["users.lst"])?.hasPrefix("allow: unknown permission 'users.lst' (did you mean 'users.list'?) (known permissions: ") ?? false)
        XCTAssertTrue(AllowedPermissions.problem(in: ["users.list\u{0}"])?.hasPrefix("allow: unknown permission 'users.list\u{0}'") ?? false)
    }
}
