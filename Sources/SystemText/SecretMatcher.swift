import CSecretScan

/// Finds and masks secret byte patterns in text, in time that does not depend on the
/// secrets' bytes.
///
/// Patterns are grouped by length; for each length a rolling hash of the window at each
/// position is looked up in a 64 Ki-bit table. Every position costs the same work per
/// length whatever the text and the secrets hold; only a window whose hash hits the
/// table (a true match, or a chance collision with odds of about patterns / 65 536,
/// independent of how close the window is to a secret) is compared byte by byte. So a
/// text made of a secret's first byte, or of near-misses, is masked as fast as any other
/// text: the time reveals nothing about a secret's bytes.
///
/// Matches are leftmost, longest first at a position, and do not overlap. A pattern may
/// ask for a neighbouring byte to be masked with it (`extendBefore`/`extendAfter`, when
/// that byte is in `extendAlphabet`): a base64 copy of a secret at an offset that is not a
/// multiple of three has a character on each side that mixes secret bits with the bytes
/// around it.
///
/// Immutable, so thread-safe; build a new one when the patterns change.
public final class SecretMatcher: Sendable {
    public struct Pattern: Sendable, Equatable {
        public let bytes: [UInt8]
        /// What replaces a match (e.g. `<secret dispatch/ops>`).
        public let mask: [UInt8]
        public let extendBefore: Bool
        public let extendAfter: Bool
        /// The bytes an extension may take (empty: none).
        public let extendAlphabet: [Bool]

        public init(_ bytes: [UInt8], mask: [UInt8], extendBefore: Bool = false, extendAfter: Bool = false,
                    extendAlphabet: [UInt8] = []) {
            self.bytes = bytes
            self.mask = mask
            self.extendBefore = extendBefore
            self.extendAfter = extendAfter
            var table = [Bool](repeating: false, count: 256)
            for b in extendAlphabet { table[Int(b)] = true }
            self.extendAlphabet = table
        }
    }

    public let patterns: [Pattern]
    /// Per pattern length, longest first: the length, `base^(length-1)` (to take the
    /// leaving byte out of the rolling hash), and the patterns of that length by hash.
    private let lengths: [Int]
    private let outFactors: [UInt64]
    private let byHash: [[UInt64: [Int]]]
    /// Per length, 65 536 bits (1 024 words, one block per length): whether some
    /// pattern of that length hashes to the index.
    private let tables: [UInt64]
    private static let base: UInt64 = HS_SCAN_BASE
    private static let tableBits = 16
    private static let tableWords = (1 << tableBits) / 64

    /// `patterns` with empty ones and duplicates (same bytes) left out.
    public init(_ patterns: [Pattern]) {
        var kept: [Pattern] = []
        var seen = Set<[UInt8]>()
        for p in patterns where !p.bytes.isEmpty && seen.insert(p.bytes).inserted { kept.append(p) }
        self.patterns = kept
        var byLength: [Int: [Int]] = [:]
        for (i, p) in kept.enumerated() { byLength[p.bytes.count, default: []].append(i) }
        lengths = byLength.keys.sorted(by: >)
        var tables = [UInt64](repeating: 0, count: lengths.count * Self.tableWords)
        var byHash: [[UInt64: [Int]]] = []
        var outFactors: [UInt64] = []
        for (g, length) in lengths.enumerated() {
            var group: [UInt64: [Int]] = [:]
            for i in byLength[length]! {
                let h = kept[i].bytes.withUnsafeBufferPointer { Self.hash($0, 0, length) }
                let slot = Self.slot(h)
                tables[g * Self.tableWords + slot >> 6] |= 1 << UInt64(slot & 63)
                group[h, default: []].append(i)
            }
            byHash.append(group)
            var out: UInt64 = 1
            for _ in 1..<length { out = out &* Self.base }
            outFactors.append(out)
        }
        self.tables = tables
        self.byHash = byHash
        self.outFactors = outFactors
    }

    public var isEmpty: Bool { patterns.isEmpty }

    @inline(__always)
    private static func hash(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ length: Int) -> UInt64 {
        var h: UInt64 = 0
        for i in start..<(start + length) { h = h &* base &+ UInt64(b[i]) }
        return h
    }

    /// The table index of hash `h` (its high bits, mixed).
    @inline(__always)
    private static func slot(_ h: UInt64) -> Int { Int(truncatingIfNeeded: (h &* HS_SCAN_MIX) >> UInt64(64 - tableBits)) }

    /// The pattern of length group `g` whose bytes are at `i`, if its hash `h` is one of theirs.
    private func confirm(_ g: Int, _ h: UInt64, at i: Int, in b: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let candidates = byHash[g][h] else { return nil }
        for index in candidates where patterns[index].bytes.withUnsafeBufferPointer({ p in
            memcmpEqual(p.baseAddress!, b.baseAddress! + i, lengths[g])
        }) {
            return index
        }
        return nil
    }

    /// Scans `b`, calling `found(start, end, pattern)` for each match (after extension),
    /// left to right, until it returns false. Every position costs, per pattern length,
    /// one table probe and one hash update, whatever the bytes (`hs_scan_next`, in C so
    /// that a debug build masks as evenly, and fast enough, as a release one).
    private func scan(_ b: UnsafeBufferPointer<UInt8>, _ found: (Int, Int, Int) -> Bool) {
        let groups = lengths.count
        guard groups > 0, let text = b.baseAddress else { return }
        let n = b.count
        var hashes = [UInt64](repeating: 0, count: groups)
        lengths.withUnsafeBufferPointer { lengthsBuffer in
        outFactors.withUnsafeBufferPointer { factors in
        tables.withUnsafeBufferPointer { tablesBuffer in
        hashes.withUnsafeMutableBufferPointer { hashes in
            var spec = hs_scan_spec(groups: groups, lengths: lengthsBuffer.baseAddress, out_factors: factors.baseAddress,
                                    tables: tablesBuffer.baseAddress)
            hs_scan_start(&spec, text, n, 0, hashes.baseAddress)
            var i = 0
            var lastEnd = 0
            while i < n {
                i = hs_scan_next(&spec, text, n, i, hashes.baseAddress)
                guard i < n else { return }
                // A table hit: the longest length whose window is a pattern, if any.
                var matched: Int?
                for g in 0..<groups where i + lengthsBuffer[g] <= n && hs_scan_probe(&spec, g, hashes[g]) != 0 {
                    if let index = confirm(g, hashes[g], at: i, in: b) { matched = index; break }
                }
                guard let index = matched else {
                    hs_scan_roll(&spec, text, n, i, hashes.baseAddress)
                    i += 1
                    continue
                }
                let p = patterns[index]
                var first = i, end = i + p.bytes.count
                if p.extendBefore, first > lastEnd, p.extendAlphabet[Int(b[first - 1])] { first -= 1 }
                if p.extendAfter, end < n, p.extendAlphabet[Int(b[end])] { end += 1 }
                guard found(first, end, index) else { return }
                lastEnd = end
                i = end
                hs_scan_start(&spec, text, n, i, hashes.baseAddress)
            }
        }
        }
        }
        }
    }

    /// `bytes` with every match replaced by its pattern's mask; nil when there is none.
    public func masked(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        guard !lengths.isEmpty, bytes.count > 0 else { return nil }
        let b = bytes.bindMemory(to: UInt8.self)
        var out: [UInt8]?
        var copied = 0
        scan(b) { start, end, index in
            if out == nil { out = []; out!.reserveCapacity(b.count) }
            out!.append(contentsOf: UnsafeBufferPointer(rebasing: b[copied..<start]))
            out!.append(contentsOf: patterns[index].mask)
            copied = end
            return true
        }
        guard var result = out else { return nil }
        result.append(contentsOf: UnsafeBufferPointer(rebasing: b[copied...]))
        return result
    }

    /// The index of the first pattern found in `bytes`, or nil.
    public func firstMatch(_ bytes: UnsafeRawBufferPointer) -> Pattern? {
        guard !lengths.isEmpty, bytes.count > 0 else { return nil }
        var first: Int?
        scan(bytes.bindMemory(to: UInt8.self)) { _, _, index in first = index; return false }
        return first.map { patterns[$0] }
    }

    /// `text` with every match masked.
    public func masked(_ text: String) -> String {
        guard !lengths.isEmpty else { return text }
        var text = text
        let replaced = text.withUTF8 { masked(UnsafeRawBufferPointer($0)) }
        return replaced.map { String(decoding: $0, as: UTF8.self) } ?? text
    }
}

/// Whether `count` bytes at `a` and `b` are equal (compared in full, not stopping early).
@inline(__always)
func memcmpEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
    var diff: UInt8 = 0
    for i in 0..<count { diff |= a[i] ^ b[i] }
    return diff == 0
}
