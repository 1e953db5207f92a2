import XCTest
import ShellCompletion

/// Sources with fixed names, recording the context each question was asked with.
final class FixedSources: CompletionSources {
    var profileNames = ["prod", "staging", "sandbox"]
    var jobNames = ["nightly-offboard", "weekly-review"]
    var runs: [String] = []
    var recipes = ["ops:offboard", "ops:users.suspend", "reports:audit"]
    var libraryNames = ["ops", "reports"]
    var params: [String: [CompletionParameter]] = [:]
    private(set) var contexts: [CompletionContext] = []

    func profiles(_ context: CompletionContext) -> [String] { contexts.append(context); return profileNames }
    func jobs(_ context: CompletionContext) -> [String] { contexts.append(context); return jobNames }
    func runIDs(_ context: CompletionContext) -> [String] { contexts.append(context); return runs }
    func libraryRecipes(_ context: CompletionContext) -> [String] { contexts.append(context); return recipes }
    func libraries(_ context: CompletionContext) -> [String] { contexts.append(context); return libraryNames }
    func parameters(_ context: CompletionContext) -> [CompletionParameter] {
        contexts.append(context)
        return context.recipe.flatMap { params[$0] } ?? []
    }
}

/// Which candidates each kind of word gets: subcommands, a group's subcommands,
/// options not yet given, option values by kind, positionals by kind, recipe
/// parameters of the recipe on the line, and the `--name=value` form.
final class CompleterTests: XCTestCase {
    let tree = CompletionTree(
        commands: [
            CompletionNode(word: "run", options: [
                CompletionOption(name: "param", value: .recipeParams, repeatable: true),
                CompletionOption(name: "profile", value: .profiles),
                CompletionOption(name: "config", value: .luaFiles),
                CompletionOption(name: "state-dir", value: .directories),
                CompletionOption(name: "params-file", value: .files),
                CompletionOption(name: "json", value: nil),
                CompletionOption(name: "timeout", value: CompletionValue.none),
            ], positionals: [.recipes]),
            CompletionNode(word: "runs", subcommands: [
                CompletionNode(word: "list", options: [CompletionOption(name: "limit", value: CompletionValue.none)]),
                CompletionNode(word: "show", options: [CompletionOption(name: "json", value: nil)], positionals: [.runIDs]),
                CompletionNode(word: "resume", positionals: [.runIDs]),
            ]),
            CompletionNode(word: "jobs", subcommands: [CompletionNode(word: "run", positionals: [.jobs])]),
            CompletionNode(word: "check", positionals: [.recipes], repeatsLastPositional: true),
            CompletionNode(word: "trust", positionals: [.librariesOrFiles], repeatsLastPositional: true),
            CompletionNode(word: "completion", positionals: [.words(["bash", "zsh", "fish"])]),
            CompletionNode(word: "new"),
        ],
        topOptions: ["--help", "--version"], shorthand: (value: .recipes, command: "run"))
    var sources = FixedSources()

    func complete(_ words: String...) -> CompletionResult {
        Completer(tree: tree, sources: sources).complete(words)
    }

    func testTheFirstWordIsASubcommandALibraryRecipeOrALuaFile() {
        XCTAssertEqual(complete(""), CompletionResult(
            candidates: ["run", "runs", "jobs", "check", "trust", "completion", "new", "ops:offboard", "ops:users.suspend", "reports:audit"],
            files: .lua))
        XCTAssertEqual(complete("ru"), CompletionResult(candidates: ["run", "runs"], files: .lua))
        XCTAssertEqual(complete("ops:"), CompletionResult(candidates: ["ops:offboard", "ops:users.suspend"], files: .lua))
        XCTAssertEqual(complete("-"), CompletionResult(candidates: ["--help", "--version"]))
        XCTAssertEqual(complete(), complete(""), "no words at all is the empty first word")
    }

    func testAGroupOffersItsSubcommandsThenTheirArguments() {
        XCTAssertEqual(complete("runs", ""), CompletionResult(candidates: ["list", "show", "resume", "--help"]))
        XCTAssertEqual(complete("runs", "re"), CompletionResult(candidates: ["resume"]))
        XCTAssertEqual(complete("runs", "nope", ""), CompletionResult(candidates: []))
        XCTAssertEqual(complete("jobs", "run", ""), CompletionResult(candidates: ["nightly-offboard", "weekly-review"]))
        XCTAssertEqual(complete("jobs", "run", "w"), CompletionResult(candidates: ["weekly-review"]))
        XCTAssertEqual(complete("jobs", "run", "weekly-review", ""), CompletionResult(candidates: []), "one job only")
    }

    func testRunIDsComeMostRecentFirstAndAreBounded() {
        sources.runs = (0..<80).map { String(format: "run_%03d", 79 - $0) }
        let all = complete("runs", "show", "")
        XCTAssertEqual(all.candidates.count, Completer.maxRunIDs)
        XCTAssertEqual(all.candidates.first, "run_079")
        XCTAssertEqual(all.candidates.last, "run_030")
        XCTAssertEqual(complete("runs", "resume", "run_07").candidates,
                       ["run_079", "run_078", "run_077", "run_076", "run_075", "run_074", "run_073", "run_072", "run_071", "run_070"])
        XCTAssertEqual(complete("runs", "show", "--json", "run_03").candidates.count, 10, "options before the id do not move it")
    }

    func testOptionsAreThoseOfTheCommandNotYetGiven() {
        XCTAssertEqual(complete("run", "x.lua", "--p").candidates, ["--param", "--profile", "--params-file"])
        XCTAssertEqual(complete("run", "x.lua", "--profile", "prod", "--p").candidates, ["--param", "--params-file"],
                       "a given option is not offered again")
        XCTAssertEqual(complete("run", "x.lua", "--param", "a=1", "--pa").candidates, ["--param", "--params-file"],
                       "a repeatable option is")
        XCTAssertEqual(complete("x.lua", "--j").candidates, ["--json"], "FILE.lua is run")
        XCTAssertEqual(complete("run", "--", "--j"), CompletionResult(candidates: [], files: .lua),
                       "after --, a word is a positional even when it starts with -")
    }

    func testOptionValuesByKind() {
        XCTAssertEqual(complete("run", "x.lua", "--profile", ""), CompletionResult(candidates: ["prod", "sandbox", "staging"]))
        XCTAssertEqual(complete("run", "x.lua", "--profile", "st"), CompletionResult(candidates: ["staging"]))
        XCTAssertEqual(complete("run", "x.lua", "--config", "c"), CompletionResult(candidates: [], files: .lua))
        XCTAssertEqual(complete("run", "x.lua", "--state-dir", ""), CompletionResult(candidates: [], files: .directories))
        XCTAssertEqual(complete("run", "x.lua", "--params-file", ""), CompletionResult(candidates: [], files: .all))
        XCTAssertEqual(complete("run", "x.lua", "--timeout", ""), CompletionResult(candidates: [], files: .none))
        XCTAssertEqual(complete("run", "x.lua", "--profile=st"), CompletionResult(candidates: ["--profile=staging"]))
        XCTAssertEqual(complete("run", "x.lua", "--config=c"), CompletionResult(candidates: [], files: .none),
                       "the shell cannot complete a path inside --name=")
        XCTAssertEqual(complete("run", "x.lua", "--nope=x"), CompletionResult(candidates: []))
    }

    func testParametersAreThoseOfTheRecipeOnTheLine() {
        sources.params["x.lua"] = [CompletionParameter(name: "days"), CompletionParameter(name: "dry", values: ["true", "false"])]
        sources.params["ops:offboard"] = [CompletionParameter(name: "email")]
        XCTAssertEqual(complete("run", "x.lua", "--param", ""), CompletionResult(candidates: ["days=", "dry="]))
        XCTAssertEqual(complete("x.lua", "--param", "da"), CompletionResult(candidates: ["days="]))
        XCTAssertEqual(complete("x.lua", "--param", "dry="), CompletionResult(candidates: ["dry=true", "dry=false"]))
        XCTAssertEqual(complete("x.lua", "--param", "dry=f"), CompletionResult(candidates: ["dry=false"]))
        XCTAssertEqual(complete("x.lua", "--param", "days="), CompletionResult(candidates: []))
        XCTAssertEqual(complete("run", "ops:offboard", "--param", ""), CompletionResult(candidates: ["email="]))
        XCTAssertEqual(complete("run", "--param", ""), CompletionResult(candidates: []), "no recipe yet: no parameters")
        XCTAssertEqual(complete("run", "--param=d"), CompletionResult(candidates: []))
        XCTAssertEqual(complete("run", "x.lua", "--param=d"), CompletionResult(candidates: ["--param=days=", "--param=dry="]))
    }

    func testTheContextCarriesConfigStateFolderAndRecipe() {
        _ = complete("run", "--config", "other.lua", "--state-dir=/tmp/s", "x.lua", "--profile", "")
        XCTAssertEqual(sources.contexts.last, CompletionContext(config: "other.lua", stateDirectory: "/tmp/s", recipe: "x.lua"))
    }

    func testPositionalsByKind() {
        XCTAssertEqual(complete("run", ""), CompletionResult(candidates: ["ops:offboard", "ops:users.suspend", "reports:audit"], files: .lua))
        XCTAssertEqual(complete("run", "x.lua", ""), CompletionResult(candidates: []), "run takes one recipe")
        XCTAssertEqual(complete("check", "a.lua", "re"), CompletionResult(candidates: ["reports:audit"], files: .lua), "check takes many")
        XCTAssertEqual(complete("trust", ""), CompletionResult(candidates: ["ops", "reports"], files: .all))
        XCTAssertEqual(complete("completion", ""), CompletionResult(candidates: ["bash", "zsh", "fish"]))
        XCTAssertEqual(complete("completion", "f"), CompletionResult(candidates: ["fish"]))
        XCTAssertEqual(complete("new", ""), CompletionResult(candidates: []))
        XCTAssertEqual(complete("nosuch", ""), CompletionResult(candidates: []))
        XCTAssertEqual(complete("--json", ""), CompletionResult(candidates: []))
    }

    func testTheOutputIsTheDirectiveThenOneCandidateALine() {
        XCTAssertEqual(CompletionResult(candidates: ["a", "b c"], files: .lua).text, ":lua\na\nb c\n")
        XCTAssertEqual(CompletionResult(candidates: []).text, ":none\n")
        XCTAssertEqual(CompletionResult(candidates: ["x\ny", "ok", "z\r", "n\0"], files: .all).text, ":all\nok\n",
                       "a name with a line break would read as two candidates")
    }
}
