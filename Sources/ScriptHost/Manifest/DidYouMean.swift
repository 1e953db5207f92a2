/// "Did you mean …?" suggestions for a mistyped name among known ones.
public enum DidYouMean {
    /// The known name closest to `word` (case-insensitive edit distance), if it is close
    /// enough to be a typo: at most 2 edits, and fewer than half of `word`'s letters.
    /// Ties go to the first in `candidates`.
    public static func suggestion(for word: String, among candidates: [String]) -> String? {
        let lowered = word.lowercased()
        var best: (name: String, distance: Int)?
        for candidate in candidates {
            let d = distance(lowered, candidate.lowercased())
            if d < (best?.distance ?? Int.max) { best = (candidate, d) }
        }
        guard let best, best.distance <= 2, best.distance * 2 < max(word.count, 2) else { return nil }
        return best.name
    }

    /// `" (did you mean 'x'?)"`, or `""` when nothing is close.
    public static func hint(for word: String, among candidates: [String], prefix: String = "") -> String {
        suggestion(for: word, among: candidates).map { " (did you mean '\(prefix)\($0)'?)" } ?? ""
    }

    /// Levenshtein distance between two strings (by Unicode scalars).
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
