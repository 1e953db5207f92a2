import HubBindings

extension CommonOptions.Values {
    /// The chosen profile's Dispatch (`DispatchTarget.forProfile`), and whether it is the
    /// built-in sandbox used for lack of a configuration file.
    func dispatchTarget() throws -> (target: DispatchTarget, unconfigured: Bool) {
        let config = try HubConfig.load(explicit: config)
        let (name, setting) = try config.profile(named: profile)
        return (DispatchTarget.forProfile(name, setting, state: state), config.source == nil)
    }
}
