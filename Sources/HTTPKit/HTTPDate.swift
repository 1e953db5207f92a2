import Foundation

/// RFC 9110's `Date` header in its one form a server may send (IMF-fixdate:
/// `Sun, 06 Nov 1994 08:49:37 GMT`). The obsolete forms are not read: nil.
public enum HTTPDate {
    public static func parse(_ text: String) -> Date? {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: " ")
        guard parts.count == 6, parts[0].count == 4, parts[0].hasSuffix(","), parts[5] == "GMT",
              parts[1].count == 2, parts[3].count == 4, let day = Int(parts[1]), let year = Int(parts[3]),
              let month = months.firstIndex(of: String(parts[2])) else { return nil }
        let clock = parts[4].split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }) else { return nil }
        let fields = clock.compactMap { Int($0) }
        guard fields.count == 3, (1...31).contains(day), (0...23).contains(fields[0]), (0...59).contains(fields[1]),
              (0...60).contains(fields[2]) else { return nil }
        var components = DateComponents()
        components.calendar = Calendar(identifier: .gregorian)
        components.timeZone = TimeZone(identifier: "UTC")
        (components.year, components.month, components.day) = (year, month + 1, day)
        (components.hour, components.minute, components.second) = (fields[0], fields[1], fields[2])
        // A day the month does not have (31 Feb) is refused, not rolled over.
        guard let date = components.date,
              Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: date).day == day else { return nil }
        return date
    }

    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
}
