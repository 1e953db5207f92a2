import HubClient
import HubBindings
import HubSandbox

extension CommonOptions.Values {
    /// The chosen profile's Dispatch (`DispatchTarget.forProfile`), and whether it is the
    /// built-in sandbox used for lack of a configuration file.
    func dispatchTarget() throws -> (target: DispatchTarget, unconfigured: Bool) {
        let config = try HubConfig.load(explicit: config)
        return (try dispatchTarget(config, profile: profile), config.source == nil)
    }

    /// Profile `profile`'s Dispatch in `config` (nil: the default profile).
    func dispatchTarget(_ config: HubConfig, profile: String?) throws -> DispatchTarget {
        let (name, setting) = try config.profile(named: profile)
        let state = self.state
        return DispatchTarget.forProfile(name, setting) {
            let dispatch = try StoredDispatchSandbox(storage: .file(try state.sandboxFile))
            return ({ dispatch.handle($0) }, DispatchOptions.sandboxMachineToken)
        }
    }
}
