/// The plugins a state has installed but whose globals no recipe has read yet.
///
/// Used only on the state's own thread (`LuaVM` is confined to it); `@unchecked
/// Sendable` so the `load_module` host function, a `@Sendable` closure, can hold it.
final class ModuleShelf: @unchecked Sendable {
    struct Module {
        /// The module's table: its values, and its functions at their dotted names.
        let raw: ScriptValue
        let wrapper: String?
    }

    private var plugins: [String: Plugin] = [:]
    /// Module names in the order first shelved.
    private var order: [String] = []

    /// Told of each module as it is built, before Lua can call its functions: the VM
    /// registers them under their qualified names (`module.function`, which errors
    /// show) and, if it has a wrapper, counts its chunk as internal (tracebacks skip it).
    var onBuild: ((_ module: String, _ functions: [ScriptFunction], _ hasWrapper: Bool) -> Void)?

    /// Shelves `plugin`; a later plugin of the same module name replaces an earlier one
    /// (a run's extra plugins may override a default module).
    func put(_ plugin: Plugin) {
        if plugins.updateValue(plugin, forKey: plugin.module) == nil { order.append(plugin.module) }
    }

    /// `module.function` for a function a shelved plugin lists (the first such module),
    /// built or not; nil if none does. For a function a binding hands out as a value
    /// before its module is read: errors name it as they did when every module's
    /// functions were registered at install. Functions not made yet cannot have been
    /// handed out, so they are not made to be searched.
    func qualifiedName(of function: ScriptFunction) -> String? {
        for name in order {
            if let list = plugins[name]?.functionsIfMade, list.contains(where: { $0 === function }) {
                return name + "." + function.name
            }
        }
        return nil
    }

    /// The module named `name`, built now (see `onBuild`); nil if none. It stays on the
    /// shelf: a build that a limit stopped may be asked for again.
    func build(_ name: String) -> Module? {
        guard let plugin = plugins[name] else { return nil }
        var root = plugin.values
        for function in plugin.functions {
            Self.insert(.function(function), at: function.name.split(separator: ".").map(String.init), into: &root)
        }
        let wrapper = plugin.luaWrapper
        onBuild?(name, plugin.functions, wrapper != nil)
        return Module(raw: .object(root), wrapper: wrapper)
    }

    private static func insert(_ value: ScriptValue, at path: [String], into table: inout [String: ScriptValue]) {
        guard let first = path.first else { return }
        if path.count == 1 { table[first] = value; return }
        var child: [String: ScriptValue] = [:]
        if case .object(let existing)? = table[first] { child = existing }
        insert(value, at: Array(path.dropFirst()), into: &child)
        table[first] = .object(child)
    }
}
