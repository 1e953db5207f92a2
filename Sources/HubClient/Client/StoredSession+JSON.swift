import Foundation
import JSONKit

extension StoredSession {
    /// The stored form, JSONKit's canonical bytes: `{"email":…,"refreshToken":…,
    /// "savedAt":"2026-12-02T08:10:14Z"}` (no `email` member without one; the time in
    /// whole seconds, UTC). Files written by earlier releases read back the same.
    public var storedJSON: Data {
        var members: [String: JSONValue] = ["refreshToken": .string(refreshToken), "savedAt": .string(Self.timeText(savedAt))]
        if let email { members["email"] = .string(email) }
        return Data(JSONValue.object(members).canonicalBytes)
    }

    /// Reads the stored form (`storedJSON`).
    /// - Throws: `HubError` `configuration_error` naming `source` and what is wrong,
    ///   with the way out: log in again.
    public init(storedJSON data: Data, source: String) throws {
        func damaged(_ why: String) -> HubError {
            HubError(code: HubError.Code.configuration,
                     message: "The stored session \(source) cannot be read: \(why). Log in again (`hubscript login`) to replace it.")
        }
        let value: HubJSON
        do { value = try HubJSON.parse(data) } catch { throw damaged("\(error)") }
        guard let token = value["refreshToken"]?.stringValue else { throw damaged("it has no refreshToken string") }
        guard let time = value["savedAt"]?.stringValue, let savedAt = Self.time(time) else {
            throw damaged("its savedAt is not a time like 2026-12-02T08:10:14Z")
        }
        let email = value["email"]
        guard email == nil || email?.isNull == true || email?.stringValue != nil else { throw damaged("its email is not a string") }
        self.init(refreshToken: token, email: email?.stringValue, savedAt: savedAt)
    }

    /// RFC 3339 in whole seconds (`2026-12-02T08:10:14Z`), as sessions have always been stored.
    static func timeText(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }

    /// An RFC 3339 time with a `Z` or an offset, whole seconds.
    static func time(_ text: String) -> Date? { ISO8601DateFormatter().date(from: text) }
}
