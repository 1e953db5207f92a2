/// What a recipe's global names hold, as far as a static check can know: the shape of
/// each module table (its fields, nested), and for each function of the binding
/// registry its permission and argument counts.
public indirect enum GlobalShape: Sendable, Equatable {
    /// A table whose fields are all known: a field not listed is a mistake.
    case table([String: GlobalShape])
    /// A function; `info` when the binding registry declares it.
    case function(CheckedFunction?)
    /// Any other value (a string, a number, an open table).
    case value

    /// The field names of a table, for did-you-mean (internal `_` names left out).
    var visibleFields: [String] {
        guard case .table(let fields) = self else { return [] }
        return fields.keys.filter { !$0.hasPrefix("_") }.sorted()
    }
}

/// A registry function, for the checks of its calls.
public struct CheckedFunction: Sendable, Equatable {
    /// `hub.users.get`
    public let qualifiedName: String
    /// The permission the run-time gate requires (nil: none).
    public let capability: String?
    /// The argument counts its documented signature states, when it states them plainly.
    public let arity: Arity?

    public init(qualifiedName: String, capability: String?, arity: Arity?) {
        self.qualifiedName = qualifiedName
        self.capability = capability
        self.arity = arity
    }
}

/// How many arguments a function takes, read from its documented signature
/// (`hub.users.get(id) -> user`): `minimum` counts the leading plain names (no `?`, no
/// brackets, not `opts`), `maximum` every argument when there is no `…`.
public struct Arity: Sendable, Equatable {
    public let minimum: Int
    public let maximum: Int?
    /// The signature's argument list as written (`id, opts`).
    public let parameters: String

    public init(minimum: Int, maximum: Int?, parameters: String) {
        self.minimum = minimum
        self.maximum = maximum
        self.parameters = parameters
    }

    /// The arity a one-line summary states, if it starts with `qualifiedName(` and its
    /// argument list closes; nil otherwise (nothing is assumed).
    public static func parse(summary: String, qualifiedName: String) -> Arity? {
        let prefix = qualifiedName + "("
        guard summary.hasPrefix(prefix) else { return nil }
        var depth = 0
        var arguments: [String] = []
        var current = ""
        var closed = false
        // Arguments from this index on are optional (`f(a [, b])`).
        var optionalFrom: Int?
        for character in summary.dropFirst(prefix.count) {
            if depth == 0 && character == ")" { closed = true; break }
            if depth == 0 && (character == "[" || character == "]") {
                if character == "[" && optionalFrom == nil { optionalFrom = arguments.count + (current.trimmed.isEmpty ? 0 : 1) }
                continue
            }
            if character == "(" || character == "{" { depth += 1 }
            if character == ")" || character == "}" { depth -= 1 }
            if depth == 0 && character == "," {
                arguments.append(current.trimmed)
                current = ""
            } else {
                current.append(character)
            }
        }
        guard closed, depth == 0 else { return nil }
        if !current.trimmed.isEmpty || !arguments.isEmpty { arguments.append(current.trimmed) }
        // A variadic list (`f(a, …)`) has no maximum to check; nothing is assumed.
        if arguments.contains(where: { !$0.hasPrefix("{") && ($0.contains("…") || $0.contains("...")) }) { return nil }
        let list = arguments.joined(separator: ", ")
        var minimum = 0
        for (i, argument) in arguments.enumerated() {
            if let optionalFrom, i >= optionalFrom { break }
            guard Self.isPlainName(argument), argument != "opts" else { break }
            minimum += 1
        }
        return Arity(minimum: minimum, maximum: arguments.count, parameters: list)
    }

    private static func isPlainName(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first == "_" || (first.properties.isAlphabetic && first.isASCII) else {
            return false
        }
        return text.unicodeScalars.allSatisfy { $0 == "_" || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) }
    }
}

extension String {
    var trimmed: String {
        var s = Substring(self)
        while s.first?.isWhitespace == true { s = s.dropFirst() }
        while s.last?.isWhitespace == true { s = s.dropLast() }
        return String(s)
    }
}
