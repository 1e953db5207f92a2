import HubClient
import HubBindings
import HubSandbox

extension CommonOptions.Values {
    /// The chosen profile's Dispatch (`DispatchTarget.forProfile`), and whether it is the
    /// built-in sandbox used for lack of a configuration file.
    func dispatchTarget() throws -> (target: DispatchTarget, unconfigured: Bool) {
        let config = try HubConfig.load(explicit: config)
        let (name, setting) = try config.profile(named: profile)
        let state = self.state
        let target = DispatchTarget.forProfile(name, setting) {
            let dispatch = try StoredDispatchSandbox(storage: .file(try state.sandboxFile))
            return ({ dispatch.handle($0) }, DispatchOptions.sandboxMachineToken)
        }
        return (target, config.source == nil)
    }
}
