/// `test.lua`: the globals of recipe tests (`*_test.lua`, docs/recipe-tests.md): `test`
/// and `expect`, which `hubscript test` installs and a run does not.
enum LuaLSTestDefinitions {
    static let text = """
        ---@meta hubscript-test
        \(LuaLSDefinitions.header)
        ---Recipe tests (docs/recipe-tests.md): only in *_test.lua files run by hubscript test.
        test = {}

        ---Runs fn at once, under pcall, and reports it: ok if it returned, FAIL if it raised.
        ---@param name string
        ---@param fn fun()
        function test.case(name, fn) end

        ---A fresh built-in sandbox: in-memory Hub, Dispatch, journal and vault.
        ---@param options? {users?: integer, audit_events?: integer, fixtures?: table, as?: string}
        ---@return test.Sandbox
        function test.sandbox(options) end

        ---@class test.Sandbox
        local test_Sandbox = {}

        ---Runs a recipe (a path relative to the test file) as hubscript run does.
        ---@param recipe string
        ---@param params? table
        ---@param options? {mode?: "run"|"plan"|"apply", plan?: test.RunResult, kill_after_writes?: integer, kill_during_write?: integer}
        ---@return test.RunResult
        function test_Sandbox:run(recipe, params, options) end

        ---Resumes a run of this sandbox's journal, as hubscript runs resume does.
        ---@param run_id string
        ---@return test.RunResult
        function test_Sandbox:resume(run_id) end

        ---GET path on the Hub (as the jobs key): the decoded object, or nil for 404.
        ---@param path string
        ---@return table?
        function test_Sandbox:get(path) end

        ---Every item of a list endpoint, following cursors.
        ---@param path string
        ---@param query? table
        ---@return table[]
        function test_Sandbox:list(path, query) end

        ---The notifications the sandbox Dispatch accepted, oldest first.
        ---@return {id: string, title: string, body: string, key: string}[]
        function test_Sandbox:dispatch_sent() end

        ---The names of the entries the runs stored in the sandbox's vault, sorted.
        ---@return string[]
        function test_Sandbox:vault_names() end

        ---Whether the secret stored as name authenticates against the sandbox Hub.
        ---@param name string
        ---@return boolean
        function test_Sandbox:secret_works(name) end

        ---What s:run and s:resume return.
        ---@class test.RunResult
        ---@field exit_code integer
        ---@field run_id string
        ---@field output string[]
        ---@field logs {level: string, message: string}[]
        ---@field writes integer
        ---@field replayed integer
        ---@field planned integer
        ---@field reads integer
        ---@field reads_replayed integer
        ---@field plan? table
        ---@field exports {name: string, rows: integer}[]
        ---@field failure? {kind: string, message: string, code?: string, location?: string}
        ---@field killed? boolean

        ---The matchers of expect(actual); a failing one ends the case at the test's line.
        ---@class test.Expectation
        ---@field to_be fun(expected: any)
        ---@field to_equal fun(expected: any)
        ---@field to_contain fun(item: any)
        ---@field to_match fun(pattern: string)
        ---@field to_succeed fun()
        ---@field to_fail_with fun(code: string)

        ---@param actual any
        ---@return test.Expectation
        function expect(actual) end

        """
}
