import Foundation

extension ParamCoercion {
    /// What `text` (a `--param` value, or a job's param as its text) must be to be a
    /// value of `kind` — "an integer", "a boolean (true or false)", … — or nil when it
    /// is one. The same rule `ParamValues` applies when the recipe runs.
    public static func expectation(for text: String, as kind: ParamSpec.Kind) -> String? {
        do {
            _ = try parse(text, as: kind)
            return nil
        } catch let mismatch as Mismatch {
            return mismatch.expected
        } catch {
            return article(kind)
        }
    }
}

extension ParamValues {
    /// Why `path`, given for the `file` parameter `param`, would be refused when the
    /// recipe runs (it does not exist, or is not a readable file); nil when it is fine.
    public static func fileProblem(_ path: String, param: String) -> String? {
        do {
            _ = try checkFile(path, param: param)
            return nil
        } catch {
            return "\(error)"
        }
    }
}
