import Foundation

/// A page of the docs that a newcomer follows step by step, read as a script: each
/// ```` ```lua file=NAME ```` block is a file the reader writes, each ```` ```console ````
/// block holds commands (`$ hubscript …`) and what they print. A command's line may end
/// with `# exit N` (the exit status it must have; 0 otherwise). Printed lines may use
/// `…` for any text; each must appear among the command's output lines, in order.
struct DocWalkthrough {
    enum Step: Equatable {
        case write(file: String, text: String)
        case command(line: String, expectedExit: Int32, expectedOutput: [String])
    }

    let steps: [Step]

    init(markdown: String) {
        var steps: [Step] = []
        var lines = markdown.components(separatedBy: "\n")[...]
        while let line = lines.popFirst() {
            guard line.hasPrefix("```") else { continue }
            let info = line.dropFirst(3).split(separator: " ").map(String.init)
            var body: [String] = []
            while let inner = lines.popFirst(), !inner.hasPrefix("```") { body.append(inner) }
            if info.first == "lua", let file = info.dropFirst().first(where: { $0.hasPrefix("file=") }) {
                steps.append(.write(file: String(file.dropFirst("file=".count)), text: body.joined(separator: "\n") + "\n"))
            } else if info.first == "console" {
                steps += Self.commands(in: body)
            }
        }
        self.steps = steps
    }

    /// The `$ …` lines of a console block, each with the lines after it up to the next.
    static func commands(in body: [String]) -> [Step] {
        var steps: [Step] = []
        var current: (line: String, exit: Int32, output: [String])?
        func close() {
            if let c = current { steps.append(.command(line: c.line, expectedExit: c.exit, expectedOutput: c.output)) }
        }
        for line in body {
            if line.hasPrefix("$ ") {
                close()
                var command = String(line.dropFirst(2))
                var exit: Int32 = 0
                if let range = command.range(of: #"\s+# exit (\d+)$"#, options: .regularExpression) {
                    exit = Int32(command[range].split(separator: " ").last!)!
                    command.removeSubrange(range)
                }
                current = (command, exit, [])
            } else if !line.trimmingCharacters(in: .whitespaces).isEmpty {
                current?.output.append(line)
            }
        }
        close()
        return steps
    }

    /// Whether each of `expected` matches a line of `output`, in order (`…` matches any
    /// text); the first that does not, else nil.
    static func firstMissing(_ expected: [String], in output: String) -> String? {
        var rest = output.components(separatedBy: "\n")[...]
        for want in expected {
            let pattern = "^" + want.components(separatedBy: "…").map(NSRegularExpression.escapedPattern(for:)).joined(separator: ".*") + "$"
            guard let index = rest.firstIndex(where: { $0.range(of: pattern, options: .regularExpression) != nil }) else { return want }
            rest = rest[(index + 1)...]
        }
        return nil
    }
}
