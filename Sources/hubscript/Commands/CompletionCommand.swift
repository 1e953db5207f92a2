import Foundation

/// `hubscript completion bash|zsh`: a shell completion script, generated from the
/// commands' own configurations (so it never lists an option that does not exist).
struct CompletionCommand: Command {
    static let configuration = CommandConfiguration(
        name: "completion",
        abstract: "Print a shell completion script (bash or zsh).",
        usage: "bash|zsh",
        discussion: """
        bash: source <(hubscript completion bash)   (or save it in ~/.local/share/bash-completion/completions/hubscript)
        zsh:  source <(hubscript completion zsh)    (in ~/.zshrc, after compinit)
        """)

    enum Shell: String { case bash, zsh }
    let shell: Shell

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.count == 1 else { throw UsageError("expected the shell: bash or zsh") }
        guard let shell = Shell(rawValue: arguments.positionals[0]) else {
            throw UsageError("unknown shell '\(arguments.positionals[0])' (bash or zsh)")
        }
        self.shell = shell
    }

    func run() throws -> Int32 {
        Console.out(shell == .bash ? Self.bashScript : Self.zshScript)
        return ExitCode.success
    }

    /// Options of an entry, as completion words.
    static func words(_ options: [OptionSpec]) -> String {
        (options.map { "--" + $0.name } + ["--help"]).joined(separator: " ")
    }

    /// The bash script: subcommands (and `FILE.lua`) first, then a subcommand's
    /// options after `-`, files otherwise.
    static var bashScript: String {
        let entries = HubscriptCLI.subcommands
        let top = (entries.map(\.configuration.name) + ["--help", "--version"]).joined(separator: " ")
        var cases = ""
        for entry in entries {
            let name = entry.configuration.name
            if name == configuration.name {
                cases += "    \(name)) [ \"$COMP_CWORD\" -eq 2 ] && COMPREPLY=($(compgen -W \"bash zsh\" -- \"$cur\")); return ;;\n"
            } else if entry.subcommands.isEmpty {
                cases += "    \(name)) opts=\"\(words(entry.configuration.options))\" ;;\n"
            } else {
                let subs = entry.subcommands.map(CommandGroup.word).joined(separator: " ")
                cases += "    \(name))\n"
                cases += "      if [ \"$COMP_CWORD\" -eq 2 ]; then COMPREPLY=($(compgen -W \"\(subs) --help\" -- \"$cur\")); return; fi\n"
                cases += "      case \"${COMP_WORDS[2]}\" in\n"
                for sub in entry.subcommands {
                    cases += "        \(CommandGroup.word(sub))) opts=\"\(words(sub.configuration.options))\" ;;\n"
                }
                cases += "      esac ;;\n"
            }
        }
        cases += "    *.lua) opts=\"\(words(RunCommand.configuration.options))\" ;;\n"
        return """
        # bash completion for hubscript (hubscript completion bash)
        _hubscript() {
          local cur="${COMP_WORDS[COMP_CWORD]}" opts=""
          if [ "$COMP_CWORD" -eq 1 ]; then
            COMPREPLY=($(compgen -W "\(top)" -- "$cur") $(compgen -f -X '!*.lua' -- "$cur"))
            return
          fi
          case "${COMP_WORDS[1]}" in
        \(cases)  esac
          if [[ "$cur" == -* ]]; then
            COMPREPLY=($(compgen -W "$opts" -- "$cur"))
          else
            COMPREPLY=($(compgen -f -- "$cur"))
          fi
        }
        complete -o filenames -o bashdefault -F _hubscript hubscript

        """
    }

    /// zsh runs the bash script through its bash-completion layer (`bashcompinit`),
    /// starting the completion system only if `.zshrc` has not already.
    static var zshScript: String {
        """
        # zsh completion for hubscript (hubscript completion zsh)
        (( $+functions[compdef] )) || { autoload -U +X compinit && compinit }
        (( $+functions[complete] )) || { autoload -U +X bashcompinit && bashcompinit }

        """ + bashScript
    }
}
