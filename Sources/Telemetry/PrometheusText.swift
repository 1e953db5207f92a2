import Foundation

/// The Prometheus text exposition format, version 0.0.4 (what `GET /metrics` answers):
/// per family a `# HELP` line, a `# TYPE` line, then one line per sample,
/// `name{label="value",…} value`.
///
/// Contracts:
/// - Help text escapes `\` as `\\` and a line feed as `\n`; label values escape `\`,
///   `"` and a line feed (`\\`, `\"`, `\n`): any text, a user's or a job's name
///   included, stays on its line and cannot end its quotes.
/// - Values: a whole number below 2^53 is written without a decimal point (`3`), other
///   numbers as Swift writes a `Double` (`0.25`, `1e-05`), and `+Inf`, `-Inf`, `NaN`.
/// - The text ends with a line feed; families come in the order given.
public enum PrometheusText {
    /// The `Content-Type` of the format.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The exposition of `families`.
    public static func encode(_ families: [MetricFamilySnapshot]) -> String {
        var out = ""
        for family in families {
            out += "# HELP \(family.name) \(escapeHelp(family.help))\n"
            out += "# TYPE \(family.name) \(family.type.rawValue)\n"
            for sample in family.samples {
                out += sample.name
                if !sample.labels.isEmpty {
                    out += "{" + sample.labels.map { "\($0.name)=\"\(escapeLabelValue($0.value))\"" }.joined(separator: ",") + "}"
                }
                out += " " + number(sample.value) + "\n"
            }
        }
        return out
    }

    /// `text` for a `# HELP` line.
    public static func escapeHelp(_ text: String) -> String {
        var out = ""
        for c in text.unicodeScalars {
            switch c {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// `text` inside a label value's quotes.
    public static func escapeLabelValue(_ text: String) -> String {
        var out = ""
        for c in text.unicodeScalars {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// A sample value as the format writes it.
    public static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value == .infinity { return "+Inf" }
        if value == -.infinity { return "-Inf" }
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 { return String(Int64(value)) }
        return "\(value)"
    }

    /// Whether `name` is a valid metric name (`[a-zA-Z_:][a-zA-Z0-9_:]*`).
    public static func isMetricName(_ name: String) -> Bool {
        isName(name, colons: true)
    }

    /// Whether `name` is a valid label name (`[a-zA-Z_][a-zA-Z0-9_]*`, not starting with `__`).
    public static func isLabelName(_ name: String) -> Bool {
        isName(name, colons: false) && !name.hasPrefix("__")
    }

    private static func isName(_ name: String, colons: Bool) -> Bool {
        guard let first = name.utf8.first else { return false }
        func letter(_ b: UInt8) -> Bool { (b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A || b == UInt8(ascii: "_") || (colons && b == UInt8(ascii: ":")) }
        return letter(first) && name.utf8.allSatisfy { letter($0) || ($0 >= 0x30 && $0 <= 0x39) }
    }
}

/// What a family is (its `# TYPE`).
public enum MetricType: String, Sendable {
    case counter, gauge, histogram
}

/// One sample line: its full name (a histogram's `_bucket`, `_sum`, `_count`), labels in
/// order, and value.
public struct MetricSample: Sendable, Equatable {
    public let name: String
    public let labels: [(name: String, value: String)]
    public let value: Double

    public init(name: String, labels: [(name: String, value: String)] = [], value: Double) {
        self.name = name
        self.labels = labels
        self.value = value
    }

    public static func == (a: MetricSample, b: MetricSample) -> Bool {
        a.name == b.name && a.value.bitPattern == b.value.bitPattern && a.labels.count == b.labels.count
            && zip(a.labels, b.labels).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}

/// A family as it is at one scrape.
public struct MetricFamilySnapshot: Sendable, Equatable {
    public let name: String
    public let help: String
    public let type: MetricType
    public let samples: [MetricSample]

    public init(name: String, help: String, type: MetricType, samples: [MetricSample]) {
        self.name = name
        self.help = help
        self.type = type
        self.samples = samples
    }
}
