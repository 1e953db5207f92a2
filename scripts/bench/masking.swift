// Times secret masking (SystemText's SecretMatcher and its C core, compiled with this file by
// scripts/bench-masking) on texts made to favour or disfavour a secret's bytes, and the
// same texts through the masker hubscript used before (a memchr search for each
// pattern's first byte, then memcmp), copied below for comparison. Prints ns per byte.
// What matters is the spread between texts: a masker whose time depends on the secret's
// bytes tells a recipe that measures how long printing takes what those bytes are.
import Glibc

let secret = Array("dsp_live_7f3a9c1e55b2d4e0".utf8)
let mask = Array("<secret dispatch/ci>".utf8)
let size = 1 << 20
let rounds = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 20

func now() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

/// The masker before: for each pattern, memchr its first byte, memcmp the rest.
func previous(_ patterns: [[UInt8]], _ text: [UInt8]) -> Int {
    var found = 0
    text.withUnsafeBytes { bytes in
        let base = bytes.baseAddress!
        for p in patterns {
            p.withUnsafeBytes { pattern in
                var at = 0
                while bytes.count - at >= p.count {
                    guard let hit = memchr(base + at, Int32(p[0]), bytes.count - at - p.count + 1) else { break }
                    let offset = base.distance(to: UnsafeRawPointer(hit))
                    if memcmp(hit, pattern.baseAddress!, p.count) == 0 { found += 1; at = offset + p.count } else { at = offset + 1 }
                }
            }
        }
    }
    return found
}

func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }

var rng = SystemRandomNumberGenerator()
let texts: [(String, [UInt8])] = [
    ("the secret's first byte, repeated", [UInt8](repeating: secret[0], count: size)),
    ("another byte, repeated", [UInt8](repeating: UInt8(ascii: "x"), count: size)),
    ("the secret less its last byte, repeated", (0..<size).map { secret[$0 % (secret.count - 1)] }),
    ("random printable text", (0..<size).map { _ in UInt8.random(in: 0x20...0x7E, using: &rng) }),
    ("the secret itself, repeated", (0..<size).map { secret[$0 % secret.count] }),
]

let plain = SecretForms.plain(secret, mask: mask)
let all = SecretForms.all(secret, mask: mask)
let current = SecretMatcher(plain)
let withEncodings = SecretMatcher(all)
print("masking 1 MiB texts, best of \(rounds) rounds (the texts in turn each round, so the machine's load falls on all alike), ns per byte; \(plain.count) pattern(s) (output), \(all.count) with encodings (answers)")
print(pad("text", 42) + "  before   now      now, with encodings")
let maskers: [([UInt8]) -> Void] = [
    { _ = previous(plain.map(\.bytes), $0) },
    { text in _ = text.withUnsafeBytes { current.masked($0) } },
    { text in _ = text.withUnsafeBytes { withEncodings.masked($0) } },
]
var best = [[Double]](repeating: [Double](repeating: .infinity, count: maskers.count), count: texts.count)
for _ in 0..<rounds {
    for (t, (_, text)) in texts.enumerated() {
        for (m, mask) in maskers.enumerated() {
            let s = now()
            mask(text)
            best[t][m] = min(best[t][m], now() - s)
        }
    }
}
func f(_ seconds: Double) -> String {
    let x = seconds / Double(size) * 1e9
    let s = String(Int((x * 100).rounded()))
    let padded = s.count < 3 ? String(repeating: "0", count: 3 - s.count) + s : s
    return padded.dropLast(2) + "." + padded.suffix(2)
}
for (t, (name, _)) in texts.enumerated() {
    print(pad(name, 42) + "  " + pad(f(best[t][0]), 7) + "  " + pad(f(best[t][1]), 7) + "  " + f(best[t][2]))
}
