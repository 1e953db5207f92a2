import SQLiteKit
/// The journal's SQLite schema, versioned with `PRAGMA user_version`.
///
/// Version 1:
/// ```sql
/// runs(id TEXT PRIMARY KEY, recipe_path, recipe_sha256, params /* canonical JSON */,
///      profile, mode /* run|plan|apply */, status /* running|succeeded|failed|stopped */,
///      started_at, finished_at /* ms since 1970, UTC */, reads, writes, replayed,
///      planned, failed, output_folder, attempts)
/// writes(run_id → runs.id, seq, key, method, path, body_sha256 /* NULL: no body */,
///        state /* pending|done|failed */, http_status, response /* canonical JSON */,
///        error, attempts, created_at, updated_at; PRIMARY KEY (run_id, key))
/// ```
/// Version 2 adds to `runs` what bounds a run, so `runs resume` keeps it:
/// `max_writes` (`--max-writes`, NULL: none) and `timeout_ms` (`--timeout`, NULL: the
/// manifest's).
///
/// Version 3 adds the recipes' checkpoints (`state.set`/`state.get`):
/// `state(scope /* "<recipe name>@<profile>" */, key, value /* canonical JSON */,
///        run_id, updated_at; PRIMARY KEY (scope, key))`.
///
/// Version 4 adds the scheduler's record of every fire of a job (`hubscript jobs`), one
/// row per decision — a fire claimed and run, skipped, or a range of missed fires:
/// `fires(id INTEGER PRIMARY KEY /* claim order */, job, scheduled_at /* ms */,
///        missed_through /* ms, the last fire of a missed range; NULL otherwise */,
///        trigger /* schedule|manual */, run_id /* JOB@<time> */,
///        status /* queued|fired|skipped|missed|failed|succeeded */, reason,
///        started_at, finished_at /* ms */, duration_ms, exit_code,
///        notified /* what on_failure did, NULL: nothing to do */, recorded_at)`.
/// Version 5 adds the exit code a run's last pass ended with: `runs.exit_code` (NULL
/// while it runs, after a pass that died, and for runs recorded before version 5); and
/// to each write the run's reads so far when it was journalled: `writes.run_reads`
/// (every pass's, NULL before version 5), so a pass that dies leaves its reads counted
/// up to its last write at no cost of its own.
///
/// Version 6 adds the webhook receiver's dedupe table (`hubscript listen`), one row per
/// Hub event id and trigger, written before the delivery is answered 2xx:
/// `trigger_events(event_id /* wev_… */, trigger, event_type,
///        body /* the raw delivery body */, run_id /* TRIGGER@<event id> */,
///        status /* received|running|succeeded|failed */, deliveries /* how many arrived */,
///        received_at, updated_at /* ms */; PRIMARY KEY (event_id, trigger))`.
///
/// Version 7 adds the answers to the Hub reads a run made (`RecordedReads`), so a resumed
/// run is served the answers its earlier passes acted on; one row per read (a list reads
/// one row per page), keyed like writes by the request and its occurrence:
/// `reads(run_id → runs.id, key /* rd1-… */, seq /* order within the pass */,
///        method, path, response /* JSON: {"body":…}, {"error":…} or {"items":[…],"next":…} */,
///        bytes /* length of response */, created_at; PRIMARY KEY (run_id, key))`.
///
/// Version 8 adds what each run said (`Journal+Output`): its prints, log lines,
/// warnings, error and summary, masked, bounded per run (`RunOutputBound`), one row per
/// line in the run's order (`seq` counts across every attempt):
/// `run_output(run_id → runs.id, seq, attempt /* runs.attempts when it was said */,
///        kind /* print|log.debug|log.info|log.warn|log.error|warning|error|summary|truncated */,
///        at /* ms */, text, bytes /* UTF-8 length of text */; PRIMARY KEY (run_id, seq))`.
/// Version 9 adds saved plans and what people decided about them (`hubscript plan
/// --out`, `approve`, `reject`, `apply`; see `Journal+Plans.swift`):
/// `plans(id /* the plan's run id */, content_sha256 /* SHA-256 of the plan's canonical
///        JSON */, path, recipe_path, profile, maker, maker_kind /* hub|os */, writes,
///        permissions /* space-separated */, required, status /* waiting|rejected|applied */,
///        created_at, updated_at)` and
/// `plan_decisions(id /* order */, plan_id → plans.id, kind /* approved|rejected|applied|
///        apply_failed */, content_sha256, person, person_name, reason, exit_code, decided_at)`,
/// one approval per person and plan content (a partial unique index).
/// Version 10 indexes the runs by status, by profile and by mode, each then by start and
/// id, the order the console's runs page reads them (`Journal.runsPage`): a filter few
/// runs match (`status=running` among 100,000 runs) reads those runs only, not every run.
/// And by start, id and recipe path: a filter on part of the recipe's path (which no
/// index can search) reads that index in page order, not each run's row.
/// Version 11 adds what retention (`Journal.prune`) keeps: `pruning(run_id, output_folder,
/// rows_gone)`, the runs a prune has begun to delete (a prune killed mid-way is finished
/// by the next one), and `journal_meta(name, value)`, facts about the journal as a whole
/// (`last_prune_at`: ms since 1970 of the last completed prune).
///
/// A new version adds a step to `migrations`; a file with a newer version than this
/// code knows is refused rather than guessed at.
///
/// PostgreSQL (`PostgresJournalDatabase`) runs the same steps, in its types (see
/// `migrations(for:)`); its version is the one row of `journal_schema`. A new version
/// adds one step to `migrations(for:)`, written once for both.
enum JournalSchema {
    static let version: Int32 = 11

    /// `migrations[n]` upgrades a SQLite file from version `n` to `n + 1`.
    static let migrations = migrations(for: .sqlite)

    /// `postgresMigrations[n]` upgrades a PostgreSQL journal from version `n` to `n + 1`.
    static let postgresMigrations = migrations(for: .postgres)

    /// The one description of the journal's tables, version by version, in `dialect`.
    /// The dialects differ only in three types: integers (SQLite's `INTEGER` is 64-bit,
    /// PostgreSQL's is not: `BIGINT`), the key columns' text (`COLLATE "C"` on
    /// PostgreSQL, so keys sort and compare bytewise as in SQLite) and `fires.id`, the
    /// claim order (`AUTOINCREMENT`, an identity column).
    static func migrations(for dialect: JournalDialect) -> [String] {
        let (int, key, serial) = switch dialect {
        case .sqlite: ("INTEGER", "TEXT", "INTEGER PRIMARY KEY AUTOINCREMENT")
        case .postgres: ("BIGINT", #"TEXT COLLATE "C""#, "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY")
        }
        return [
            """
            CREATE TABLE runs (
                id            \(key) PRIMARY KEY,
                recipe_path   TEXT NOT NULL,
                recipe_sha256 TEXT NOT NULL,
                params        TEXT NOT NULL,
                profile       TEXT NOT NULL,
                mode          TEXT NOT NULL CHECK (mode IN ('run', 'plan', 'apply')),
                status        TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'stopped')),
                started_at    \(int) NOT NULL,
                finished_at   \(int),
                reads         \(int) NOT NULL DEFAULT 0,
                writes        \(int) NOT NULL DEFAULT 0,
                replayed      \(int) NOT NULL DEFAULT 0,
                planned       \(int) NOT NULL DEFAULT 0,
                failed        \(int) NOT NULL DEFAULT 0,
                output_folder TEXT,
                attempts      \(int) NOT NULL DEFAULT 1
            );
            CREATE INDEX runs_started ON runs (started_at);
            CREATE TABLE writes (
                run_id      \(key) NOT NULL REFERENCES runs (id),
                seq         \(int) NOT NULL,
                key         \(key) NOT NULL,
                method      TEXT NOT NULL,
                path        TEXT NOT NULL,
                body_sha256 TEXT,
                state       TEXT NOT NULL CHECK (state IN ('pending', 'done', 'failed')),
                http_status \(int),
                response    TEXT,
                error       TEXT,
                attempts    \(int) NOT NULL DEFAULT 1,
                created_at  \(int) NOT NULL,
                updated_at  \(int) NOT NULL,
                PRIMARY KEY (run_id, key)
            );
            CREATE INDEX writes_run_seq ON writes (run_id, seq);
            """,
            """
            ALTER TABLE runs ADD COLUMN max_writes \(int);
            ALTER TABLE runs ADD COLUMN timeout_ms \(int);
            """,
            """
            CREATE TABLE state (
                scope      \(key) NOT NULL,
                key        \(key) NOT NULL,
                value      TEXT NOT NULL,
                run_id     TEXT NOT NULL,
                updated_at \(int) NOT NULL,
                PRIMARY KEY (scope, key)
            );
            """,
            """
            CREATE TABLE fires (
                id             \(serial),
                job            \(key) NOT NULL,
                scheduled_at   \(int) NOT NULL,
                missed_through \(int),
                trigger        TEXT NOT NULL CHECK (trigger IN ('schedule', 'manual')),
                run_id         \(key) NOT NULL,
                status         TEXT NOT NULL
                               CHECK (status IN ('queued', 'fired', 'skipped', 'missed', 'failed', 'succeeded')),
                reason         TEXT,
                started_at     \(int),
                finished_at    \(int),
                duration_ms    \(int),
                exit_code      \(int),
                notified       TEXT,
                recorded_at    \(int) NOT NULL
            );
            CREATE INDEX fires_job_scheduled ON fires (job, scheduled_at);
            CREATE INDEX fires_run ON fires (run_id);
            """,
            """
            ALTER TABLE runs ADD COLUMN exit_code \(int);
            ALTER TABLE writes ADD COLUMN run_reads \(int);
            """,
            """
            CREATE TABLE trigger_events (
                event_id    \(key) NOT NULL,
                trigger     \(key) NOT NULL,
                event_type  TEXT NOT NULL,
                body        TEXT NOT NULL,
                run_id      TEXT NOT NULL,
                status      TEXT NOT NULL CHECK (status IN ('received', 'running', 'succeeded', 'failed')),
                deliveries  \(int) NOT NULL DEFAULT 1,
                received_at \(int) NOT NULL,
                updated_at  \(int) NOT NULL,
                PRIMARY KEY (event_id, trigger)
            );
            """,
            """
            CREATE TABLE reads (
                run_id     \(key) NOT NULL REFERENCES runs (id),
                key        \(key) NOT NULL,
                seq        \(int) NOT NULL,
                method     TEXT NOT NULL,
                path       TEXT NOT NULL,
                response   TEXT NOT NULL,
                bytes      \(int) NOT NULL,
                created_at \(int) NOT NULL,
                PRIMARY KEY (run_id, key)
            );
            """,
            """
            CREATE TABLE run_output (
                run_id  \(key) NOT NULL REFERENCES runs (id),
                seq     \(int) NOT NULL,
                attempt \(int) NOT NULL,
                kind    TEXT NOT NULL,
                at      \(int) NOT NULL,
                text    TEXT NOT NULL,
                bytes   \(int) NOT NULL,
                PRIMARY KEY (run_id, seq)
            );
            """,
            """
            CREATE TABLE plans (
                id             \(key) PRIMARY KEY,
                content_sha256 TEXT NOT NULL,
                path           TEXT NOT NULL,
                recipe_path    TEXT NOT NULL,
                profile        TEXT NOT NULL,
                maker          TEXT NOT NULL,
                maker_kind     TEXT NOT NULL CHECK (maker_kind IN ('hub', 'os')),
                writes         \(int) NOT NULL,
                permissions    TEXT NOT NULL,
                required       \(int) NOT NULL,
                status         TEXT NOT NULL CHECK (status IN ('waiting', 'rejected', 'applied')),
                created_at     \(int) NOT NULL,
                updated_at     \(int) NOT NULL
            );
            CREATE INDEX plans_created ON plans (created_at);
            CREATE TABLE plan_decisions (
                id             \(serial),
                plan_id        \(key) NOT NULL REFERENCES plans (id),
                kind           TEXT NOT NULL CHECK (kind IN ('approved', 'rejected', 'applied', 'apply_failed')),
                content_sha256 TEXT NOT NULL,
                person         \(key) NOT NULL,
                person_name    TEXT,
                reason         TEXT,
                exit_code      \(int),
                decided_at     \(int) NOT NULL
            );
            CREATE INDEX plan_decisions_plan ON plan_decisions (plan_id, id);
            CREATE UNIQUE INDEX plan_approvals_once ON plan_decisions (plan_id, content_sha256, person)
                WHERE kind = 'approved';
            """,
            """
            CREATE INDEX runs_status_started ON runs (status, started_at, id);
            CREATE INDEX runs_profile_started ON runs (profile, started_at, id);
            CREATE INDEX runs_mode_started ON runs (mode, started_at, id);
            CREATE INDEX runs_started_recipe ON runs (started_at, id, recipe_path);
            """,
            """
            CREATE TABLE pruning (
                run_id        \(key) PRIMARY KEY,
                output_folder TEXT,
                rows_gone     \(int) NOT NULL DEFAULT 0
            );
            CREATE TABLE journal_meta (
                name  \(key) PRIMARY KEY,
                value TEXT NOT NULL
            );
            """,
        ]
    }

    /// Brings the database to `version` inside one IMMEDIATE transaction, so two
    /// processes opening a new file at once create the schema exactly once.
    static func migrate(_ db: SQLiteDatabase) throws {
        // Up to date (every open but the first of a new version): read without taking
        // the write lock, which would wait behind a writer and costs two statements.
        var seen: Int32 = 0
        try db.query("PRAGMA user_version") { seen = Int32($0.int(0)) }
        guard seen <= version else { throw tooNew(db.path, Int(seen)) }
        if seen == version { return }
        try db.exec("BEGIN IMMEDIATE")
        do {
            var current: Int32 = 0
            try db.query("PRAGMA user_version") { current = Int32($0.int(0)) }
            guard current <= version else { throw tooNew(db.path, Int(current)) }
            for step in Int(current)..<Int(version) { try db.exec(migrations[step]) }
            if current < version { try db.exec("PRAGMA user_version = \(version)") }
            try db.exec("COMMIT")
        } catch {
            try? db.exec("ROLLBACK")
            throw error
        }
    }

    static func tooNew(_ name: String, _ current: Int) -> JournalError {
        JournalError(.schemaTooNew, """
            the journal \(name) has schema version \(current), newer than this hubscript \
            understands (\(version)); upgrade hubscript or use another journal
            """)
    }
}
