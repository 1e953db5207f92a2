import Foundation
import SystemText

/// The certificate authorities an HTTPS connection trusts.
///
/// In order: the profile's `ca_file` (a PEM bundle; it replaces the system store for that
/// profile's Hub and Dispatch), else `SSL_CERT_FILE` (a PEM bundle replacing the system
/// bundle) and `SSL_CERT_DIR` (a folder of hashed certificates), as OpenSSL's own tools
/// read them, else the system store. Proxies are libcurl's: `HTTPS_PROXY`/`https_proxy`,
/// `ALL_PROXY`/`all_proxy`, `NO_PROXY`/`no_proxy` (plain-HTTP loopback never goes
/// through a proxy).
public struct TLSTrust: Sendable, Equatable {
    /// A PEM bundle that replaces the default CA bundle; nil: the default.
    public var caFile: String?
    /// Folders of hashed CA certificates (OpenSSL's `c_rehash` layout; several are
    /// separated by `:`); nil: the default.
    public var caDirectory: String?

    public init(caFile: String? = nil, caDirectory: String? = nil) {
        self.caFile = caFile
        self.caDirectory = caDirectory
    }

    /// The system store (URLSession's own).
    public static let system = TLSTrust()

    public var isSystem: Bool { caFile == nil && caDirectory == nil }

    /// The trust for a profile: its `ca_file` when it has one, else what
    /// `SSL_CERT_FILE`/`SSL_CERT_DIR` in `environment` name, else the system store.
    /// - Throws: `HubError` `configuration_error` naming the setting when the file or
    ///   folder does not exist, is not readable, or (a bundle) holds no PEM certificate.
    public static func resolve(profile: String?, caFile: String?,
                               environment: [String: String] = ProcessEnvironment.all) throws -> TLSTrust {
        if let caFile {
            let setting = profile.map { "profiles.\($0).ca_file" } ?? "ca_file"
            try checkBundle(caFile, setting: setting)
            return TLSTrust(caFile: caFile)
        }
        var trust = TLSTrust()
        // As OpenSSL reads them: a relative path is relative to the working directory.
        func absolute(_ path: String) -> String {
            path.hasPrefix("/") ? path : URL(fileURLWithPath: AbsolutePath.currentDirectory()).appendingPathComponent(path).standardizedFileURL.path
        }
        if let given = environment["SSL_CERT_FILE"], !given.isEmpty {
            let file = absolute(given)
            try checkBundle(file, setting: "SSL_CERT_FILE")
            trust.caFile = file
        }
        // One folder, or several separated by ':' (OpenSSL's list).
        if let given = environment["SSL_CERT_DIR"], !given.isEmpty {
            let folders = given.split(separator: ":").map { absolute(String($0)) }
            for folder in folders {
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
                    throw configuration("SSL_CERT_DIR names \(folder), which is not a folder",
                                        hint: "Point SSL_CERT_DIR at a folder of hashed CA certificates (openssl rehash), or unset it.")
                }
            }
            trust.caDirectory = folders.isEmpty ? nil : folders.joined(separator: ":")
        }
        return trust
    }

    /// Refuses a CA bundle that cannot serve: missing, not a regular file, unreadable, or
    /// without a `-----BEGIN CERTIFICATE-----` block.
    static func checkBundle(_ path: String, setting: String) throws {
        let hint = "Set \(setting) to a PEM file of the CA certificates to trust (-----BEGIN CERTIFICATE----- blocks)."
        guard path.hasPrefix("/") else {
            throw configuration("\(setting) \(path) is not an absolute path", hint: hint)
        }
        let attributes: [FileAttributeKey: Any]
        do { attributes = try FileManager.default.attributesOfItem(atPath: path) } catch {
            throw configuration("\(setting) \(path): \(FileErrorText.reason(error))", hint: hint)
        }
        guard attributes[.type] as? FileAttributeType == .typeRegular else {
            throw configuration("\(setting) \(path) is not a regular file", hint: hint)
        }
        let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
        guard size <= 16 << 20 else {
            throw configuration("\(setting) \(path) is \(size) bytes, not a CA bundle (at most 16 MiB)", hint: hint)
        }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw configuration("\(setting) \(path): \(FileErrorText.reason(error))", hint: hint)
        }
        guard data.range(of: Data("-----BEGIN CERTIFICATE-----".utf8)) != nil else {
            throw configuration("\(setting) \(path) holds no PEM certificate", hint: hint)
        }
    }

    private static func configuration(_ message: String, hint: String) -> HubError {
        HubError(code: HubError.Code.configuration, message: message, hint: hint)
    }
}
