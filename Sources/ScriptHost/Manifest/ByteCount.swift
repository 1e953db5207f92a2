import Foundation

/// Sizes as messages say them: `512 bytes`, `3.5 KiB`, `300.0 MiB`, `1.2 GiB`.
enum ByteCount {
    static func text(_ bytes: Int) -> String {
        let units = ["KiB", "MiB", "GiB", "TiB"]
        guard bytes >= 1024 else { return "\(bytes) bytes" }
        var value = Double(bytes) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return String(format: "%.1f", value) + " " + units[unit]
    }
}
