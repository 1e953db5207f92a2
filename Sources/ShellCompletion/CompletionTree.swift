/// What the shell completes for a word: fixed words, names only the program can list
/// at completion time (profiles, jobs, run ids, recipes), or files.
public enum CompletionValue: Sendable, Equatable {
    /// Nothing to offer (free text, a number): the shell offers nothing either.
    case none
    case words([String])
    case files
    /// `*.lua` files (and folders, to walk into).
    case luaFiles
    case directories
    case profiles
    case jobs
    /// Run ids of the journal, most recent first.
    case runIDs
    /// A recipe to run: `*.lua` files and the libraries' `LIB:RECIPE` names.
    case recipes
    /// A library name or a path (`hubscript trust LIB|PATH`).
    case librariesOrFiles
    /// `NAME=` for each parameter of the recipe already on the command line.
    case recipeParams
}

/// One option of a command, as completion sees it.
public struct CompletionOption: Sendable, Equatable {
    public let name: String
    /// What its value is; nil: a flag, which takes no value.
    public let value: CompletionValue?
    public let repeatable: Bool

    public init(name: String, value: CompletionValue?, repeatable: Bool = false) {
        self.name = name
        self.value = value
        self.repeatable = repeatable
    }
}

/// A command (or a group of commands) of the program: its word, its options, what its
/// positional arguments are, and its subcommands when it is a group.
public struct CompletionNode: Sendable, Equatable {
    public let word: String
    public let options: [CompletionOption]
    /// What each positional argument is, in order.
    public let positionals: [CompletionValue]
    /// Whether the last of `positionals` stands for every later one too (`check FILE…`).
    public let repeatsLastPositional: Bool
    public let subcommands: [CompletionNode]

    public init(word: String, options: [CompletionOption] = [], positionals: [CompletionValue] = [],
                repeatsLastPositional: Bool = false, subcommands: [CompletionNode] = []) {
        self.word = word
        self.options = options
        self.positionals = positionals
        self.repeatsLastPositional = repeatsLastPositional
        self.subcommands = subcommands
    }

    /// What positional argument number `index` (from 0) is.
    public func positional(_ index: Int) -> CompletionValue {
        if index < positionals.count { return positionals[index] }
        return repeatsLastPositional ? positionals.last ?? .none : .none
    }
}

/// The program's command line as completion sees it.
public struct CompletionTree: Sendable, Equatable {
    /// The top-level commands.
    public let commands: [CompletionNode]
    /// The options accepted before any subcommand (`--help`, `--version`).
    public let topOptions: [String]
    /// What a first word that is not a subcommand is (a recipe: `hubscript FILE.lua`),
    /// and the command it stands for then (`run`).
    public let shorthand: (value: CompletionValue, command: String)?

    public init(commands: [CompletionNode], topOptions: [String], shorthand: (value: CompletionValue, command: String)?) {
        self.commands = commands
        self.topOptions = topOptions
        self.shorthand = shorthand
    }

    public static func == (a: CompletionTree, b: CompletionTree) -> Bool {
        a.commands == b.commands && a.topOptions == b.topOptions
            && a.shorthand?.value == b.shorthand?.value && a.shorthand?.command == b.shorthand?.command
    }
}
