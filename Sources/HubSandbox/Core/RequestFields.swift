import Foundation
import HTTPKit

/// Per-request text helpers without Foundation string machinery (header lookups and
/// target decoding have their fast paths in HTTPKit itself).
enum ASCII {
    /// `s.trimmingCharacters(in: .whitespaces)`: for ASCII text that set is space and tab.
    static func trimmingWhitespace(_ s: Substring) -> String {
        guard s.utf8.allSatisfy({ $0 < 0x80 }) else { return s.trimmingCharacters(in: .whitespaces) }
        var u = s.utf8[...]
        while let f = u.first, f == 0x20 || f == 0x09 { u = u.dropFirst() }
        while let l = u.last, l == 0x20 || l == 0x09 { u = u.dropLast() }
        return String(Substring(u))
    }
}
