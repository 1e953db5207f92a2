import HubClient
import HubSandbox
import RecipeModules

extension CommonOptions.Values {
    /// The chosen profile's Dispatch (`DispatchTarget.forProfile`), and whether it is the
    /// built-in sandbox used for lack of a configuration file.
    func dispatchTarget() throws -> (target: DispatchTarget, unconfigured: Bool) {
        (try dispatchTarget(hub, profile: profile), hub.source == nil)
    }

    /// Profile `profile`'s Dispatch in `config` (nil: the default profile).
    func dispatchTarget(_ config: HubConfig, profile: String?) throws -> DispatchTarget {
        let (name, setting) = try config.profile(named: profile)
        return DispatchTarget.forProfile(name, setting, sandbox: sandboxDispatch)
    }

    /// The Dispatch targets `names` (a manifest's `targets`) of profile `profile` in
    /// `config` (nil: the default profile), those the configuration defines; under a
    /// sandbox profile each is the sandbox Dispatch.
    func dispatchTargets(_ names: [String], _ config: HubConfig, profile: String?) throws -> [String: DispatchTarget] {
        guard !names.isEmpty else { return [:] }
        let (name, _) = try config.profile(named: profile)
        var targets: [String: DispatchTarget] = [:]
        for target in names {
            let resolved = DispatchTarget.named(target, profile: name, in: config, sandbox: sandboxDispatch)
            if case .unconfigured(let reason) = resolved.endpoint { throw HubConfigError(reason) }
            targets[target] = resolved
        }
        return targets
    }

    /// Opens the state directory's sandbox Dispatch (for the built-in sandbox profile).
    private var sandboxDispatch: DispatchTarget.SandboxDispatchOpener {
        let state = self.state
        return {
            let dispatch = try StoredDispatchSandbox(storage: .file(try state.sandboxFile))
            return ({ dispatch.handle($0) }, DispatchOptions.sandboxMachineToken)
        }
    }
}
