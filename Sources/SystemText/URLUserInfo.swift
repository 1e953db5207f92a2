/// The user and password a URL may carry (`http://alice:s3cret@proxy:3128`), hidden
/// before the URL is shown: a proxy variable or a URL people pasted often holds a
/// credential, and a message that names the URL ends up on terminals, in logs and in
/// the journal.
public enum URLUserInfo {
    /// `text` with the user information of its authority (everything before the last
    /// `@` of the part between `scheme://` and the first `/`, `?` or `#`) replaced by
    /// `***`: `http://***@proxy:3128`. A URL without a scheme (`alice:pw@proxy:3128`,
    /// as libcurl accepts in `https_proxy`) is read the same way. Text without user
    /// information comes back unchanged.
    public static func hidden(_ text: String) -> String {
        let authorityStart = text.range(of: "://")?.upperBound ?? text.startIndex
        let rest = text[authorityStart...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? text.endIndex
        guard let at = text[authorityStart..<authorityEnd].lastIndex(of: "@") else { return text }
        return String(text[..<authorityStart]) + "***" + String(text[at...])
    }
}
