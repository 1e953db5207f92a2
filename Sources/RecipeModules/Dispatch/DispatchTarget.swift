import HubClient
import DispatchClient
import Foundation
import SystemText
import HTTPKit
import ScriptHost
import Secrets

/// Where a run's `dispatch.send` (and `hubscript dispatch test`) goes by default: the
/// profile's Dispatch server, or — for the built-in sandbox profile — the sandbox
/// Dispatch in process, kept in the state directory's sandbox file next to the sandbox
/// Hub, with its fixed machine token (`DispatchOptions.sandboxMachineToken`), so sends
/// work without any configuration and `hubscript sandbox dispatch-log` shows them.
public struct DispatchTarget: Sendable {
    /// Opens the in-process sandbox Dispatch: the function answering its requests, and
    /// the machine token it accepts.
    public typealias SandboxDispatchOpener =
        @Sendable () throws -> (handle: @Sendable (HTTPRequestMessage) -> HTTPResponseMessage, token: String)

    public enum Endpoint: Sendable {
        /// The in-process sandbox Dispatch, opened by the first send: `open` returns the
        /// function that answers its requests (the CLI passes `StoredDispatchSandbox.handle`;
        /// RecipeModules does not depend on HubSandbox) and the machine token it accepts.
        case sandbox(open: SandboxDispatchOpener)
        /// A Dispatch server; its machine token is the vault entry `tokenRef`
        /// (`dispatch_token_ref`), or the environment variable NAME for `env:NAME`.
        case server(url: URL, tokenRef: String)
        /// None: `reason` says what to configure.
        case unconfigured(reason: String)
    }

    /// The profile it belongs to (for messages).
    public let profile: String
    public let endpoint: Endpoint
    /// The configured target's name (`dispatch_targets`), or nil for the profile's own
    /// Dispatch (`dispatch_url`).
    public let name: String?
    /// The profile's `ca_file` (`TLSTrust`): the CAs this Dispatch's connections trust.
    public var caFile: String?

    public init(profile: String, endpoint: Endpoint, name: String? = nil, caFile: String? = nil) {
        self.profile = profile
        self.endpoint = endpoint
        self.name = name
        self.caFile = caFile
    }

    /// The Dispatch target `target` of profile `name` in `config`: under the built-in
    /// sandbox (or a `sandbox = true` profile) every target is the sandbox Dispatch, so
    /// trying a recipe never notifies anyone; under a Hub profile, the configured
    /// target's URL and token (`.unconfigured` when the configuration has no such target).
    public static func named(_ target: String, profile name: String, in config: HubConfig,
                             sandbox: @escaping SandboxDispatchOpener) -> DispatchTarget {
        guard let setting = (try? config.profile(named: name))?.setting else {
            return DispatchTarget(profile: name, endpoint: .unconfigured(reason: "no profile '\(name)' in the configuration"), name: target)
        }
        if case .sandbox = setting { return DispatchTarget(profile: name, endpoint: .sandbox(open: sandbox), name: target) }
        guard let spec = config.dispatchTargets(profile: name)[target] else {
            let known = config.dispatchTargets(profile: name).keys.sorted()
            let file = config.source?.path ?? "the configuration"
            return DispatchTarget(profile: name, endpoint: .unconfigured(reason:
                "\(file) defines no Dispatch target '\(target)' for profile '\(name)' (targets: \(known.isEmpty ? "none" : known.joined(separator: ", "))): add dispatch_targets = { \(target) = { url = \"https://…\", token_ref = \"dispatch/\(target)\" } } at its top level or in the profile"),
                name: target)
        }
        let caFile: String? = if case .hub(let profile) = setting { profile.caFile } else { nil }
        return DispatchTarget(profile: name, endpoint: .server(url: spec.url, tokenRef: spec.tokenRef), name: target, caFile: caFile)
    }

    /// Who keeps the token, for messages: "profile 'prod'" or "the Dispatch target 'ops'".
    var owner: String { name.map { "the Dispatch target '\($0)'" } ?? "profile '\(profile)'" }
    /// The configuration key naming the token, for messages.
    var tokenKey: String { name == nil ? "dispatch_token_ref" : "token_ref" }

    /// The default Dispatch of profile `name`: the sandbox Dispatch for the built-in
    /// sandbox (in `state`'s sandbox file), `dispatch_url` and `dispatch_token_ref` for a Hub profile.
    /// `sandbox` opens the built-in sandbox's Dispatch (the CLI composes it).
    public static func forProfile(_ name: String, _ setting: HubConfig.ProfileSetting,
                                  sandbox: @escaping SandboxDispatchOpener) -> DispatchTarget {
        switch setting {
        case .sandbox:
            return DispatchTarget(profile: name, endpoint: .sandbox(open: sandbox))
        case .hub(let profile):
            guard let url = profile.dispatchURL else {
                return DispatchTarget(profile: name, endpoint: .unconfigured(reason:
                    "profile '\(name)' has no Dispatch: set dispatch_url and dispatch_token_ref in its configuration, or send through a configured target: dispatch.connect(\"NAME\") with dispatch_targets in the configuration"))
            }
            guard let ref = profile.dispatchTokenRef else {
                return DispatchTarget(profile: name, endpoint: .unconfigured(reason:
                    "profile '\(name)' sets dispatch_url but no dispatch_token_ref (the vault entry holding Dispatch's machine token)"))
            }
            var target = DispatchTarget(profile: name, endpoint: .server(url: url, tokenRef: ref))
            target.caFile = profile.caFile
            return target
        }
    }

    /// A client for this Dispatch. The token is read now (from the vault through
    /// `secrets`, or the environment for `env:NAME`) and registered with the redactor.
    /// - Throws: `ScriptStructuredError` `dispatch_not_configured`, `vault_not_open`,
    ///   `configuration_error`, what `secrets` throws (`secret_not_found`, `vault_locked`),
    ///   or `DispatchError` `insecure_transport`.
    ///
    /// A token read from the environment is registered in `masking` (the run's redactor,
    /// or the process's outside a run) before it is used; one read through `secrets`
    /// is registered by the resolver.
    public func client(secrets: (any SecretResolver)?, masking: SecretRedactor,
                       environment: [String: String] = ProcessEnvironment.all,
                       retry: DispatchRetryPolicy = DispatchRetryPolicy()) throws -> DispatchClient {
        switch endpoint {
        case .sandbox(let open):
            let handle: @Sendable (HTTPRequestMessage) -> HTTPResponseMessage, token: String
            do { (handle, token) = try open() } catch {
                throw ScriptStructuredError(code: "configuration_error", message:
                    "cannot open the sandbox Dispatch: \(error) (try hubscript sandbox reset)")
            }
            return try DispatchClient(baseURL: DispatchTarget.sandboxURL, token: token,
                                      tokenSource: "the sandbox's machine token", transport: DispatchTransports.inProcess(handle),
                                      retry: retry)
        case .server(let url, let ref):
            try DispatchClient.checkURL(url)
            let token = try self.token(ref: ref, secrets: secrets, masking: masking, environment: environment)
            return try DispatchClient(baseURL: url, token: token.value, tokenSource: token.source, tokenName: ref,
                                      transport: LiveDispatchTransport(trust: try trust(environment: environment)),
                                      retry: retry)
        case .unconfigured(let reason):
            throw ScriptStructuredError(code: "dispatch_not_configured", message: reason)
        }
    }

    /// The CAs a live connection of this target trusts: the profile's `ca_file`, else
    /// `SSL_CERT_FILE`/`SSL_CERT_DIR`, else the system store. Throws `HubError`
    /// `configuration_error` for a bundle that cannot serve.
    public func trust(environment: [String: String] = ProcessEnvironment.all) throws -> TLSTrust {
        try TLSTrust.resolve(profile: caFile == nil ? nil : profile, caFile: caFile, environment: environment)
    }

    /// Where the in-process sandbox Dispatch "is" (only messages show it).
    public static let sandboxURL = URL(string: "http://127.0.0.1")!

    /// What the user would call this Dispatch: its URL, or "the built-in sandbox Dispatch".
    public var displayName: String {
        switch endpoint {
        case .sandbox: "the built-in sandbox Dispatch"
        case .server(let url, _): url.absoluteString
        case .unconfigured: "no Dispatch"
        }
    }

    /// The machine token named by `ref`, and where it came from (for messages).
    func token(ref: String, secrets: (any SecretResolver)?, masking: SecretRedactor,
               environment: [String: String]) throws -> (value: String, source: String) {
        if ref.hasPrefix("env:") {
            let name = String(ref.dropFirst(4))
            guard let value = environment[name], !value.isEmpty else {
                throw ScriptStructuredError(code: "configuration_error", message:
                    "\(owner) reads its Dispatch token from $\(name) (\(tokenKey) = \"env:\(name)\"), which is not set")
            }
            Array(value.utf8).withUnsafeBytes { masking.register($0, name: ref) }
            return (value, "$\(name)")
        }
        guard let secrets else {
            throw ScriptStructuredError(code: "vault_not_open", message:
                "no vault is open: \(owner) keeps its Dispatch token in the vault entry '\(ref)' (\(tokenKey)), which cannot be read without it")
        }
        do { return (try secrets.value(of: ref), "the vault entry '\(ref)'") } catch let error as ScriptStructuredError {
            // Say which profile needed it: "profile 'prod' keeps its Dispatch token in …; <why not>".
            throw ScriptStructuredError(code: error.code, message:
                "\(owner) keeps its Dispatch token in the vault entry '\(ref)' (\(tokenKey)): \(error.message)",
                fields: error.fields)
        }
    }
}

/// The Hub client's live transport (HTTPS, or plain HTTP to loopback) for Dispatch.
struct LiveDispatchTransport: DispatchTransport {
    let transport: any HubTransport
    let timeouts = HubTimeouts()

    init(trust: TLSTrust) { transport = LiveTransport(trust: trust) }

    func perform(_ request: HTTPRequestMessage, baseURL: URL) throws -> HTTPResponseMessage {
        do { return try transport.perform(request, baseURL: baseURL, timeouts: timeouts) } catch let error as HubTransportError {
            switch error.kind {
            case .cannotConnect: throw HTTPClientError(.cannotConnect, error.message)
            case .connectionLost, .other: throw HTTPClientError(.connectionLost, error.message)
            case .timedOut: throw HTTPClientError(.timedOut, error.message)
            case .tooLarge: throw HTTPClientError(.tooLarge, error.message)
            case .insecure: throw HTTPClientError(.notLoopback, error.message)
            case .wrongProtocol, .untrustedCertificate: throw HTTPClientError(.wrongProtocol, error.message)
            }
        }
    }
}
