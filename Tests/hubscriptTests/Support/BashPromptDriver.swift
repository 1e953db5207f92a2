import Foundation

/// A zsh script that drives an interactive bash through zpty: it sources
/// ./completion.bash, types each line followed by Tab, and prints the line bash left
/// (read by a command bound to Ctrl-X), one line each. Run it with `zsh -f`.
enum BashPromptDriver {
    static func script(completing lines: [String]) -> String {
        #"""
        zmodload zsh/zpty
        zpty z bash --norc --noprofile -i
        zpty -w z 'source ./completion.bash; bind "set bell-style none"'
        zpty -w z 'bind -x '"'"'"\C-x": printf "BUF<%s>\\n" "$READLINE_LINE"; READLINE_LINE='"'"
        zpty -w z 'echo READ""Y'
        zpty -r z line '*READY*'
        complete_line() {
          zpty -n -w z "$1"$'\t'$'\C-x'
          zpty -r z out '*BUF<*>*'
          print -r -- "${${out##*BUF<}%%>*}"
        }

        """# + lines.map { "complete_line '\($0)'\n" }.joined() + "zpty -d z\n"
    }
}
