import Foundation

/// `hubscript completion bash|zsh|fish`: a shell completion script that asks the binary
/// at each Tab (`hubscript __complete`), so it knows the commands and options of this
/// version and the profiles, jobs, run ids, library recipes and recipe parameters of
/// the moment (`CompletionScripts`).
struct CompletionCommand: Command {
    static let configuration = CommandConfiguration(
        name: "completion",
        abstract: "Print a shell completion script (bash, zsh or fish).",
        usage: "bash|zsh|fish",
        discussion: """
        bash: source <(hubscript completion bash)   (or save it as ~/.local/share/bash-completion/completions/hubscript)
        zsh:  source <(hubscript completion zsh)    (in ~/.zshrc, after compinit)
        fish: hubscript completion fish > ~/.config/fish/completions/hubscript.fish
        """)

    enum Shell: String, CaseIterable { case bash, zsh, fish }
    let shell: Shell

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.count == 1 else { throw UsageError("expected the shell: bash, zsh or fish") }
        guard let shell = Shell(rawValue: arguments.positionals[0]) else {
            throw UsageError("unknown shell '\(arguments.positionals[0])' (bash, zsh or fish)")
        }
        self.shell = shell
    }

    func run() throws -> Int32 {
        switch shell {
        case .bash: Console.out(CompletionScripts.bash)
        case .zsh: Console.out(CompletionScripts.zsh)
        case .fish: Console.out(CompletionScripts.fish)
        }
        return ExitCode.success
    }
}
