/// Works out the candidates for the last word of a command line, from the program's
/// `CompletionTree` and, for the names only the program knows, its `CompletionSources`.
///
/// Contracts:
/// - `words` are the words after the program's name, the last being the word under the
///   cursor (empty when the cursor follows a space).
/// - Every candidate starts with that word; the shell shows them as they are.
/// - Nothing here fails: a line completion cannot make sense of gets no candidates.
public struct Completer {
    public let tree: CompletionTree
    public let sources: any CompletionSources

    /// The most run ids offered (the most recent ones).
    public static let maxRunIDs = 50

    public init(tree: CompletionTree, sources: any CompletionSources) {
        self.tree = tree
        self.sources = sources
    }

    public func complete(_ words: [String]) -> CompletionResult {
        let current = words.last ?? ""
        let before = Array(words.dropLast())
        guard let first = before.first else { return top(current) }

        var command: CompletionNode
        var rest: ArraySlice<String>
        var context = CompletionContext()
        if let found = tree.commands.first(where: { $0.word == first }) {
            command = found
            rest = before.dropFirst()
            while !command.subcommands.isEmpty {
                guard let next = rest.first else {
                    return Self.offer(command.subcommands.map(\.word) + ["--help"], current)
                }
                guard let sub = command.subcommands.first(where: { $0.word == next }) else { return CompletionResult(candidates: []) }
                command = sub
                rest = rest.dropFirst()
            }
        } else if let shorthand = tree.shorthand, !first.hasPrefix("-"),
                  let run = tree.commands.first(where: { $0.word == shorthand.command }) {
            command = run   // `hubscript FILE.lua …`: the recipe is run's first positional
            rest = before[...]
        } else {
            return CompletionResult(candidates: [])
        }

        var positionals: [String] = []
        var given: Set<String> = []
        var pending: CompletionOption?
        var onlyPositionals = false
        func record(_ option: CompletionOption, _ value: String) {
            if option.name == "config" { context.config = value }
            if option.name == "state-dir" { context.stateDirectory = value }
        }
        for word in rest {
            if let option = pending {
                record(option, word)
                pending = nil
                continue
            }
            if onlyPositionals || !word.hasPrefix("--") {
                positionals.append(word)
                continue
            }
            if word == "--" { onlyPositionals = true; continue }
            let body = word.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            given.insert(name)
            guard let option = command.options.first(where: { $0.name == name }), option.value != nil else { continue }
            if let eq = body.firstIndex(of: "=") { record(option, String(body[body.index(after: eq)...])) } else { pending = option }
        }
        if command.positionals.first == .recipes, let recipe = positionals.first { context.recipe = recipe }

        if let option = pending, let value = option.value {
            return values(value, current, context)
        }
        if !onlyPositionals, current.hasPrefix("--"), let eq = current.firstIndex(of: "=") {
            let name = String(current[current.index(current.startIndex, offsetBy: 2)..<eq])
            guard let option = command.options.first(where: { $0.name == name }), let value = option.value else {
                return CompletionResult(candidates: [])
            }
            let prefix = String(current[...eq])
            var result = values(value, String(current[current.index(after: eq)...]), context)
            result.candidates = result.candidates.map { prefix + $0 }
            result.files = .none   // the shell would complete the whole `--name=…` word as a path
            return result
        }
        if !onlyPositionals, current.hasPrefix("-") {
            let options = command.options.filter { $0.repeatable || !given.contains($0.name) }.map { "--" + $0.name }
            return Self.offer(options + (given.contains("help") ? [] : ["--help"]), current)
        }
        return values(command.positional(positionals.count), current, context)
    }

    /// The first word: a subcommand, a recipe (`FILE.lua`, `LIB:RECIPE`), or a top option.
    private func top(_ current: String) -> CompletionResult {
        if current.hasPrefix("-") { return Self.offer(tree.topOptions, current) }
        var result = Self.offer(tree.commands.map(\.word), current)
        if let shorthand = tree.shorthand {
            let recipes = values(shorthand.value, current, CompletionContext())
            result.candidates += recipes.candidates
            result.files = recipes.files
        }
        return result
    }

    /// The candidates for a word that is a `value`.
    func values(_ value: CompletionValue, _ current: String, _ context: CompletionContext) -> CompletionResult {
        switch value {
        case .none: return CompletionResult(candidates: [])
        case .words(let words): return Self.offer(words, current)
        case .files: return CompletionResult(candidates: [], files: .all)
        case .luaFiles: return CompletionResult(candidates: [], files: .lua)
        case .directories: return CompletionResult(candidates: [], files: .directories)
        case .profiles: return Self.offer(sources.profiles(context).sorted(), current)
        case .jobs: return Self.offer(sources.jobs(context).sorted(), current)
        case .runIDs: return Self.offer(Array(sources.runIDs(context).prefix(Self.maxRunIDs)), current)
        case .recipes:
            var result = Self.offer(sources.libraryRecipes(context).sorted(), current)
            result.files = .lua
            return result
        case .librariesOrFiles:
            var result = Self.offer(sources.libraries(context).sorted(), current)
            result.files = .all
            return result
        case .recipeParams:
            let parameters = sources.parameters(context)
            if let eq = current.firstIndex(of: "=") {
                let name = String(current[..<eq])
                let values = parameters.first { $0.name == name }?.values ?? []
                return Self.offer(values.map { name + "=" + $0 }, current)
            }
            return Self.offer(parameters.map { $0.name + "=" }, current)
        }
    }

    /// `words` that start with `current`, each once, in order.
    static func offer(_ words: [String], _ current: String) -> CompletionResult {
        var seen: Set<String> = []
        return CompletionResult(candidates: words.filter { $0.hasPrefix(current) && seen.insert($0).inserted })
    }
}
