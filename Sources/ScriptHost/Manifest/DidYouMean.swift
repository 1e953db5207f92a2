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

    /// Edit distance between two strings (by Unicode scalars): insertions, deletions,
    /// substitutions and swaps of two neighbours ("rnu" is one edit from "run").
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }
}
