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

    /// Patterns of one length, with their hashes' table.
    private struct Group: Sendable {
        let length: Int
        /// `base^(length-1)`, to take the leaving byte out of the rolling hash.
        let outFactor: UInt64
        /// 65 536 bits: whether some pattern of this length hashes to the index.
        let table: [UInt64]
        /// Indices into `patterns` of this length, by full hash.
        let byHash: [UInt64: [Int]]
    }

    public let patterns: [Pattern]
    private let groups: [Group]
    private static let base: UInt64 = 0x100000001B3 | 1
    private static let tableBits = 16

    /// `patterns` with empty ones and duplicates (same bytes) left out.
    public init(_ patterns: [Pattern]) {
        var kept: [Pattern] = []
        var seen = Set<[UInt8]>()
        for p in patterns where !p.bytes.isEmpty && seen.insert(p.bytes).inserted { kept.append(p) }
        self.patterns = kept
        var byLength: [Int: [Int]] = [:]
        for (i, p) in kept.enumerated() { byLength[p.bytes.count, default: []].append(i) }
        groups = byLength.keys.sorted(by: >).map { length in
            var table = [UInt64](repeating: 0, count: (1 << Self.tableBits) / 64)
            var byHash: [UInt64: [Int]] = [:]
            for i in byLength[length]! {
                let h = kept[i].bytes.withUnsafeBufferPointer { Self.hash($0, 0, length) }
                let slot = Self.slot(h)
                table[slot >> 6] |= 1 << UInt64(slot & 63)
                byHash[h, default: []].append(i)
            }
            var out: UInt64 = 1
            for _ in 1..<length { out = out &* Self.base }
            return Group(length: length, outFactor: out, table: table, byHash: byHash)
        }
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
    private static func slot(_ h: UInt64) -> Int { Int(truncatingIfNeeded: (h &* 0x9E3779B97F4A7C15) >> UInt64(64 - tableBits)) }

    /// A match found at a position: the pattern's index.
    private func match(at i: Int, in b: UnsafeBufferPointer<UInt8>, hashes: inout [UInt64]) -> Int? {
        for (g, group) in groups.enumerated() where i + group.length <= b.count {
            let h = hashes[g]
            let slot = Self.slot(h)
            guard group.table[slot >> 6] & (1 << UInt64(slot & 63)) != 0, let candidates = group.byHash[h] else { continue }
            for index in candidates where patterns[index].bytes.withUnsafeBufferPointer({ p in
                memcmpEqual(p.baseAddress!, b.baseAddress! + i, group.length)
            }) {
                return index
            }
        }
        return nil
    }

    /// Scans `b`, calling `found(start, end, pattern)` for each match (after extension),
    /// left to right. Returns whether any was found.
    private func scan(_ b: UnsafeBufferPointer<UInt8>, _ found: (Int, Int, Int) -> Bool) {
        guard !groups.isEmpty, b.count > 0 else { return }
        var hashes = groups.map { $0.length <= b.count ? Self.hash(b, 0, $0.length) : 0 }
        var i = 0
        var lastEnd = 0
        while i < b.count {
            if let index = match(at: i, in: b, hashes: &hashes) {
                let p = patterns[index]
                var start = i, end = i + p.bytes.count
                if p.extendBefore, start > lastEnd, p.extendAlphabet[Int(b[start - 1])] { start -= 1 }
                if p.extendAfter, end < b.count, p.extendAlphabet[Int(b[end])] { end += 1 }
                guard found(start, end, index) else { return }
                lastEnd = end
                i = end
                for (g, group) in groups.enumerated() where i + group.length <= b.count { hashes[g] = Self.hash(b, i, group.length) }
                continue
            }
            // Roll every window one byte on.
            for (g, group) in groups.enumerated() where i + group.length < b.count {
                hashes[g] = (hashes[g] &- UInt64(b[i]) &* group.outFactor) &* Self.base &+ UInt64(b[i + group.length])
            }
            i += 1
        }
    }

    /// `bytes` with every match replaced by its pattern's mask; nil when there is none.
    public func masked(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        guard !groups.isEmpty, bytes.count > 0 else { return nil }
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
        guard !groups.isEmpty, bytes.count > 0 else { return nil }
        var first: Int?
        scan(bytes.bindMemory(to: UInt8.self)) { _, _, index in first = index; return false }
        return first.map { patterns[$0] }
    }

    /// `text` with every match masked.
    public func masked(_ text: String) -> String {
        guard !groups.isEmpty else { return text }
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
