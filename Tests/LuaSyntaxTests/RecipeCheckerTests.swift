import XCTest
import LuaSyntax
@testable import RecipeCheck

final class RecipeCheckerTests: XCTestCase {
    static let suspend = CheckedFunction(qualifiedName: "hub.users.suspend", capability: "users.manage",
                                         arity: Arity(minimum: 1, maximum: 2, parameters: "id, {reason?, key?}"))
    static let get = CheckedFunction(qualifiedName: "hub.users.get", capability: "users.list",
                                     arity: Arity(minimum: 1, maximum: 1, parameters: "id_or_email"))
    static let globals: [String: GlobalShape] = [
        "print": .function(nil), "pairs": .function(nil), "require": .function(nil), "recipe": .function(nil),
        "params": .table([:]),
        "string": .table(["format": .function(nil)]),
        "hub": .table(["users": .table(["suspend": .function(suspend), "get": .function(get), "list": .function(nil)]),
                       "available": .function(nil), "_next_page": .function(nil)]),
    ]
    static let manifest = ManifestFacts(needs: ["users.list"], params: ["days", "user"])

    private func findings(_ source: String, manifest: ManifestFacts? = manifest) throws -> [String] {
        try RecipeChecker(globals: Self.globals).check(LuaParser.parse(source), file: "r.lua", manifest: manifest)
            .findings.map(\.description)
    }

    func testUndeclaredGlobalWriteSaysHowToDeclareIt() throws {
        XCTAssertEqual(try findings("count = 0"),
                       ["r.lua:1:1: error: undeclared global 'count' (declare it local: local count = 0)"])
        XCTAssertEqual(try findings("function helper() end"),
                       ["r.lua:1:10: error: undeclared global 'helper' (declare it local: local function helper(…) … end)"])
        XCTAssertEqual(try findings("print = nil"),
                       ["r.lua:1:1: error: assignment to the global 'print': a recipe cannot change its globals (use a local: local print = nil)"])
    }

    func testUndeclaredGlobalReadHasADidYouMean() throws {
        XCTAssertEqual(try findings("prnt('x')"), ["r.lua:1:1: error: undeclared global 'prnt' (did you mean 'print'?)"])
        XCTAssertEqual(try findings("local total = 1\nprint(totl)"), [
            "r.lua:1:7: warning: unused local 'total' (remove it, or name it _total if it is meant to be unused)",
            "r.lua:2:7: error: undeclared global 'totl' (did you mean 'total'?)",
        ])
        XCTAssertEqual(try findings("print(zzz)"), ["r.lua:1:7: error: undeclared global 'zzz'"])
    }

    func testUnknownModuleField() throws {
        XCTAssertEqual(try findings("hub.users.lst{}"), ["r.lua:1:11: error: unknown field 'lst' in 'hub.users' (did you mean 'list'?)"])
        XCTAssertEqual(try findings("return string.fromat"), ["r.lua:1:15: error: unknown field 'fromat' in 'string' (did you mean 'format'?)"])
        // Internal fields are not suggested; what follows a function or a call is not judged.
        XCTAssertEqual(try findings("hub.next_page()"), ["r.lua:1:5: error: unknown field 'next_page' in 'hub'"])
        XCTAssertEqual(try findings("return hub.users.get('a').name.first"), [])
    }

    func testCallWhosePermissionNeedsLacks() throws {
        XCTAssertEqual(try findings("hub.users.suspend('usr_1')"), [
            "r.lua:1:11: error: hub.users.suspend needs 'users.manage', which the manifest's needs does not declare; add \"users.manage\" to needs",
        ])
        XCTAssertEqual(try findings("hub.users.get('usr_1')"), [])
        // A module serves several recipes: its calls are judged by none.
        XCTAssertEqual(try findings("hub.users.suspend('usr_1')", manifest: nil), [])
    }

    func testArgumentCounts() throws {
        XCTAssertEqual(try findings("hub.users.get()"), ["r.lua:1:11: error: hub.users.get(id_or_email) takes at least 1 argument, given 0"])
        XCTAssertEqual(try findings("hub.users.get('a', 'b')"), ["r.lua:1:11: error: hub.users.get(id_or_email) takes at most 1 argument, given 2"])
        // An open list (a call or ... last) is counted only as a minimum.
        XCTAssertEqual(try findings("hub.users.get(pairs({}))"), [])
        XCTAssertEqual(try findings("hub.users.get('a', 'b', pairs({}))"),
                       ["r.lua:1:11: error: hub.users.get(id_or_email) takes at most 1 argument, given at least 2"])
    }

    func testParams() throws {
        let result = RecipeChecker(globals: Self.globals).check(
            try LuaParser.parse("print(params.days, params['dayz'])"), file: "r.lua", manifest: Self.manifest)
        XCTAssertEqual(result.findings.map(\.description), [
            "r.lua:1:27: error: unknown parameter 'params.dayz': the manifest declares days, user (did you mean 'days'?)",
        ])
        XCTAssertEqual(result.paramsRead, ["days", "dayz"])
        XCTAssertFalse(result.readsAllParams)
        XCTAssertTrue(RecipeChecker(globals: Self.globals).check(try LuaParser.parse("for k in pairs(params) do end"), file: "r.lua",
                                                                 manifest: Self.manifest).readsAllParams)
    }

    func testSettingAFieldOfASharedTableIsAWarning() throws {
        // The field the file adds is then known to it.
        XCTAssertEqual(try findings("string.shout = print\nstring.shout('x')\nhub.users.lst = nil"), [
            "r.lua:1:8: warning: setting the field 'shout' of 'string', a table every module of the run shares (keep the value in a local table instead)",
            "r.lua:3:11: warning: setting the field 'lst' of 'hub.users', a table every module of the run shares (keep the value in a local table instead)",
        ])
        XCTAssertEqual(try findings("hub.user.x = 1"), ["r.lua:1:5: error: unknown field 'user' in 'hub' (did you mean 'users'?)"])
    }

    func testUsesThroughALocalAliasAreJudgedAtTheUse() throws {
        XCTAssertEqual(try findings("""
            local users = hub.users
            local suspend = users.suspend
            users.lst()
            suspend()
            local s = string
            return s.fromat
            """), [
            "r.lua:3:7: error: unknown field 'lst' in 'hub.users' (did you mean 'list'?)",
            "r.lua:4:1: error: hub.users.suspend needs 'users.manage', which the manifest's needs does not declare; add \"users.manage\" to needs",
            "r.lua:4:1: error: hub.users.suspend(id, {reason?, key?}) takes at least 1 argument, given 0",
            "r.lua:6:10: error: unknown field 'fromat' in 'string' (did you mean 'format'?)",
        ])
        // A bad path is reported once, where the alias is declared; a reassigned alias is no alias.
        XCTAssertEqual(try findings("local u = hub.usrs\nu.list()\nlocal g = hub.users\ng = {}\ng.lst()"),
                       ["r.lua:1:15: error: unknown field 'usrs' in 'hub' (did you mean 'users'?)"])
        // An alias of an undeclared global is reported once.
        XCTAssertEqual(try findings("local x = nope\nreturn x.y, x()"), ["r.lua:1:11: error: undeclared global 'nope'"])
        // A local named like the global it aliases.
        XCTAssertEqual(try findings("local hub = hub\nhub.users.lst()"), ["r.lua:2:11: error: unknown field 'lst' in 'hub.users' (did you mean 'list'?)"])
        // params through an alias.
        let result = RecipeChecker(globals: Self.globals).check(try LuaParser.parse("local p = params\nreturn p.days"), file: "r.lua",
                                                                manifest: Self.manifest)
        XCTAssertEqual(result.paramsRead, ["days"])
    }

    func testUnusedLocalIsAWarning() throws {
        XCTAssertEqual(try findings("local unused = 1"),
                       ["r.lua:1:7: warning: unused local 'unused' (remove it, or name it _unused if it is meant to be unused)"])
    }

    func testRequiresAreListed() throws {
        let result = RecipeChecker(globals: Self.globals).check(try LuaParser.parse("local u = require('lib.util')\nreturn u"),
                                                                file: "r.lua", manifest: nil)
        XCTAssertEqual(result.requires.map { "\($0.name)@\($0.position)" }, ["lib.util@1:11"])
    }

    func testAritiesComeFromDocumentedSignatures() {
        func arity(_ summary: String, _ name: String) -> String {
            Arity.parse(summary: summary, qualifiedName: name).map { "\($0.minimum)-\($0.maximum.map(String.init) ?? "n"): \($0.parameters)" } ?? "none"
        }
        XCTAssertEqual(arity("hub.users.get(id_or_email) -> user", "hub.users.get"), "1-1: id_or_email")
        XCTAssertEqual(arity("hub.users.suspend(id, {reason?, key?}) -> user", "hub.users.suspend"), "1-2: id, {reason?, key?}")
        XCTAssertEqual(arity("hub.roles.assign(user_id, role_id, opts) -> true", "hub.roles.assign"), "2-3: user_id, role_id, opts")
        XCTAssertEqual(arity(#"time.format(epoch [, "date" or "datetime"]) -> text"#, "time.format"), #"1-2: epoch, "date" or "datetime""#)
        XCTAssertEqual(arity("export.csv(name, rows [, {columns = {…}, excel_safe = false}])", "export.csv"),
                       "2-3: name, rows, {columns = {…}, excel_safe = false}")
        XCTAssertEqual(arity("hub.capabilities() -> {…}", "hub.capabilities"), "0-0: ")
        XCTAssertEqual(arity("log.info(message, …)", "log.info"), "none")
        XCTAssertEqual(arity("internal: the next page", "hub._next_page"), "none")
        XCTAssertEqual(arity("hub.users.update(id, {field = value, …}, opts)", "hub.users.update"), "1-3: id, {field = value, …}, opts")
    }
}
