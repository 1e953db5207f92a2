import ShellCompletion

/// `hubscript __complete WORD…`: what the completion scripts (`hubscript completion
/// bash|zsh|fish`) ask at each Tab. WORDs are the command line after `hubscript`, the
/// last one the word under the cursor (empty after a space). Prints the file directive
/// and the candidates (`CompletionResult.text`) and always exits 0: a line it cannot
/// make sense of gets no candidates, never an error in the middle of the user's typing.
/// Hidden from the help: people never type it.
enum CompleteCommand {
    static let name = "__complete"

    static func main(_ words: [String]) -> Int32 {
        let completer = Completer(tree: CompletionTreeBuilder.tree, sources: ProgramCompletionSources())
        Console.out(completer.complete(words.isEmpty ? [""] : words).text)
        return ExitCode.success
    }
}
