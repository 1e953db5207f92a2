/// A small deterministic random generator (SplitMix64) for generated test inputs:
/// tests must be repeatable, so every generator here takes a fixed seed.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// A number in 0..<n.
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    /// True once in `n` times.
    mutating func chance(_ n: Int) -> Bool { below(n) == 0 }
    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
}
