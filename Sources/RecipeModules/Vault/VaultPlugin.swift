import SystemText
import Foundation
import ScriptHost
import Secrets

/// The `vault` module: `vault.secret(NAME)` returns an opaque handle (`ScriptHandle`
/// of kind `secret`) for a vault entry the manifest declares in `secrets = {…}`. The
/// value never reaches Lua, and no binding sends it anywhere: a Dispatch token is bound
/// to its URL by the configuration (`dispatch_targets`), never by a recipe. Declaring a
/// secret loads it, so every output masks it (`SecretRedactor`).
public enum VaultPlugin {
    public static func make(declared: [String], secrets: (any SecretResolver)?) -> Plugin {
        let handles = ScriptHandleCache(kind: ScriptHandle.secretKind)
        let declaredSet = Set(declared)
        return Plugin(module: "vault", summary: """
            Secrets as opaque handles: `vault.secret(name)` for a name the manifest lists in `secrets = {…}`. \
            A handle has no text: `tostring` shows `<secret name>`; `..`, `#`, comparison, `string.format` and \
            `json.encode` refuse it. No binding sends a secret where a recipe chooses: Dispatch tokens are bound to their \
            URLs by the configuration (`dispatch_targets`; `dispatch.connect("ops")`).
            """, functions: [
            ScriptFunction("secret", summary: "vault.secret(name) -> an opaque handle for the vault entry (declared in the manifest's secrets)") { call in
                let name = try call.string(1)
                guard declaredSet.contains(name) else {
                    throw ScriptStructuredError(code: "secret_not_declared", message:
                        "vault.secret: '\(name)' is not declared; add it to the manifest's secrets = { \"\(name)\" }",
                        fields: ["secret": .string(name)])
                }
                guard let secrets else {
                    throw ScriptStructuredError(code: "vault_not_open", message:
                        "vault.secret('\(name)'): no vault is open: create one with `hubscript vault init` and give its key (HUBSCRIPT_VAULT_KEY)")
                }
                // Read now: a missing entry or a locked vault fails here, at the recipe's
                // line, and the value is masked from now on.
                _ = try secrets.value(of: name)
                return .value(.handle(handles.handle(name)))
            },
        ])
    }
}
