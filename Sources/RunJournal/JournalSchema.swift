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
///
/// A new version adds a step to `migrations`; a file with a newer version than this
/// code knows is refused rather than guessed at.
///
/// PostgreSQL (`PostgresJournalDatabase`) starts at version 6: `postgresTables` is the
/// schema above as it stands at that version, in PostgreSQL's types (`BIGINT` for
/// integers and times, an identity column for `fires.id`, `COLLATE "C"` so text sorts
/// as in SQLite), and the version is the one row of `journal_schema`. A new version
/// adds one step to `migrations` and one to `postgresMigrations`.
enum JournalSchema {
    static let version: Int32 = 8

    /// `migrations[n]` upgrades a file from version `n` to `n + 1`.
    static let migrations: [String] = [
        """
        CREATE TABLE runs (
            id            TEXT PRIMARY KEY,
            recipe_path   TEXT NOT NULL,
            recipe_sha256 TEXT NOT NULL,
            params        TEXT NOT NULL,
            profile       TEXT NOT NULL,
            mode          TEXT NOT NULL CHECK (mode IN ('run', 'plan', 'apply')),
            status        TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'stopped')),
            started_at    INTEGER NOT NULL,
            finished_at   INTEGER,
            reads         INTEGER NOT NULL DEFAULT 0,
            writes        INTEGER NOT NULL DEFAULT 0,
            replayed      INTEGER NOT NULL DEFAULT 0,
            planned       INTEGER NOT NULL DEFAULT 0,
            failed        INTEGER NOT NULL DEFAULT 0,
            output_folder TEXT,
            attempts      INTEGER NOT NULL DEFAULT 1
        );
        CREATE INDEX runs_started ON runs (started_at);
        CREATE TABLE writes (
            run_id      TEXT NOT NULL REFERENCES runs (id),
            seq         INTEGER NOT NULL,
            key         TEXT NOT NULL,
            method      TEXT NOT NULL,
            path        TEXT NOT NULL,
            body_sha256 TEXT,
            state       TEXT NOT NULL CHECK (state IN ('pending', 'done', 'failed')),
            http_status INTEGER,
            response    TEXT,
            error       TEXT,
            attempts    INTEGER NOT NULL DEFAULT 1,
            created_at  INTEGER NOT NULL,
            updated_at  INTEGER NOT NULL,
            PRIMARY KEY (run_id, key)
        );
        CREATE INDEX writes_run_seq ON writes (run_id, seq);
        """,
        """
        ALTER TABLE runs ADD COLUMN max_writes INTEGER;
        ALTER TABLE runs ADD COLUMN timeout_ms INTEGER;
        """,
        """
        CREATE TABLE state (
            scope      TEXT NOT NULL,
            key        TEXT NOT NULL,
            value      TEXT NOT NULL,
            run_id     TEXT NOT NULL,
            updated_at INTEGER NOT NULL,
            PRIMARY KEY (scope, key)
        );
        """,
        """
        CREATE TABLE fires (
            id             INTEGER PRIMARY KEY AUTOINCREMENT,
            job            TEXT NOT NULL,
            scheduled_at   INTEGER NOT NULL,
            missed_through INTEGER,
            trigger        TEXT NOT NULL CHECK (trigger IN ('schedule', 'manual')),
            run_id         TEXT NOT NULL,
            status         TEXT NOT NULL
                           CHECK (status IN ('queued', 'fired', 'skipped', 'missed', 'failed', 'succeeded')),
            reason         TEXT,
            started_at     INTEGER,
            finished_at    INTEGER,
            duration_ms    INTEGER,
            exit_code      INTEGER,
            notified       TEXT,
            recorded_at    INTEGER NOT NULL
        );
        CREATE INDEX fires_job_scheduled ON fires (job, scheduled_at);
        CREATE INDEX fires_run ON fires (run_id);
        """,
        """
        ALTER TABLE runs ADD COLUMN exit_code INTEGER;
        ALTER TABLE writes ADD COLUMN run_reads INTEGER;
        """,
        """
        CREATE TABLE trigger_events (
            event_id    TEXT NOT NULL,
            trigger     TEXT NOT NULL,
            event_type  TEXT NOT NULL,
            body        TEXT NOT NULL,
            run_id      TEXT NOT NULL,
            status      TEXT NOT NULL CHECK (status IN ('received', 'running', 'succeeded', 'failed')),
            deliveries  INTEGER NOT NULL DEFAULT 1,
            received_at INTEGER NOT NULL,
            updated_at  INTEGER NOT NULL,
            PRIMARY KEY (event_id, trigger)
        );
        """,
        """
        CREATE TABLE reads (
            run_id     TEXT NOT NULL REFERENCES runs (id),
            key        TEXT NOT NULL,
            seq        INTEGER NOT NULL,
            method     TEXT NOT NULL,
            path       TEXT NOT NULL,
            response   TEXT NOT NULL,
            bytes      INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            PRIMARY KEY (run_id, key)
        );
        """,
        """
        CREATE TABLE run_output (
            run_id  TEXT NOT NULL REFERENCES runs (id),
            seq     INTEGER NOT NULL,
            attempt INTEGER NOT NULL,
            kind    TEXT NOT NULL,
            at      INTEGER NOT NULL,
            text    TEXT NOT NULL,
            bytes   INTEGER NOT NULL,
            PRIMARY KEY (run_id, seq)
        );
        """,
    ]

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

    /// The version `postgresTables` creates.
    static let postgresBaseVersion = 6

    /// `postgresMigrations[n]` upgrades a PostgreSQL journal from version
    /// `postgresBaseVersion + n` to the next.
    static let postgresMigrations: [String] = [
        """
        CREATE TABLE reads (
            run_id     TEXT COLLATE "C" NOT NULL REFERENCES runs (id),
            key        TEXT COLLATE "C" NOT NULL,
            seq        BIGINT NOT NULL,
            method     TEXT NOT NULL,
            path       TEXT NOT NULL,
            response   TEXT NOT NULL,
            bytes      BIGINT NOT NULL,
            created_at BIGINT NOT NULL,
            PRIMARY KEY (run_id, key)
        );
        """,
        """
        CREATE TABLE run_output (
            run_id  TEXT COLLATE "C" NOT NULL REFERENCES runs (id),
            seq     BIGINT NOT NULL,
            attempt BIGINT NOT NULL,
            kind    TEXT NOT NULL,
            at      BIGINT NOT NULL,
            text    TEXT NOT NULL,
            bytes   BIGINT NOT NULL,
            PRIMARY KEY (run_id, seq)
        );
        """,
    ]

    /// The PostgreSQL journal's tables at `postgresBaseVersion`.
    static let postgresTables = """
        CREATE TABLE runs (
            id            TEXT COLLATE "C" PRIMARY KEY,
            recipe_path   TEXT NOT NULL,
            recipe_sha256 TEXT NOT NULL,
            params        TEXT NOT NULL,
            profile       TEXT NOT NULL,
            mode          TEXT NOT NULL CHECK (mode IN ('run', 'plan', 'apply')),
            status        TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'stopped')),
            started_at    BIGINT NOT NULL,
            finished_at   BIGINT,
            reads         BIGINT NOT NULL DEFAULT 0,
            writes        BIGINT NOT NULL DEFAULT 0,
            replayed      BIGINT NOT NULL DEFAULT 0,
            planned       BIGINT NOT NULL DEFAULT 0,
            failed        BIGINT NOT NULL DEFAULT 0,
            output_folder TEXT,
            attempts      BIGINT NOT NULL DEFAULT 1,
            max_writes    BIGINT,
            timeout_ms    BIGINT,
            exit_code     BIGINT
        );
        CREATE INDEX runs_started ON runs (started_at);
        CREATE TABLE writes (
            run_id      TEXT COLLATE "C" NOT NULL REFERENCES runs (id),
            seq         BIGINT NOT NULL,
            key         TEXT COLLATE "C" NOT NULL,
            method      TEXT NOT NULL,
            path        TEXT NOT NULL,
            body_sha256 TEXT,
            state       TEXT NOT NULL CHECK (state IN ('pending', 'done', 'failed')),
            http_status BIGINT,
            response    TEXT,
            error       TEXT,
            attempts    BIGINT NOT NULL DEFAULT 1,
            created_at  BIGINT NOT NULL,
            updated_at  BIGINT NOT NULL,
            run_reads   BIGINT,
            PRIMARY KEY (run_id, key)
        );
        CREATE INDEX writes_run_seq ON writes (run_id, seq);
        CREATE TABLE state (
            scope      TEXT COLLATE "C" NOT NULL,
            key        TEXT COLLATE "C" NOT NULL,
            value      TEXT NOT NULL,
            run_id     TEXT NOT NULL,
            updated_at BIGINT NOT NULL,
            PRIMARY KEY (scope, key)
        );
        CREATE TABLE fires (
            id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            job            TEXT COLLATE "C" NOT NULL,
            scheduled_at   BIGINT NOT NULL,
            missed_through BIGINT,
            trigger        TEXT NOT NULL CHECK (trigger IN ('schedule', 'manual')),
            run_id         TEXT COLLATE "C" NOT NULL,
            status         TEXT NOT NULL
                           CHECK (status IN ('queued', 'fired', 'skipped', 'missed', 'failed', 'succeeded')),
            reason         TEXT,
            started_at     BIGINT,
            finished_at    BIGINT,
            duration_ms    BIGINT,
            exit_code      BIGINT,
            notified       TEXT,
            recorded_at    BIGINT NOT NULL
        );
        CREATE INDEX fires_job_scheduled ON fires (job, scheduled_at);
        CREATE INDEX fires_run ON fires (run_id);
        CREATE TABLE trigger_events (
            event_id    TEXT COLLATE "C" NOT NULL,
            trigger     TEXT COLLATE "C" NOT NULL,
            event_type  TEXT NOT NULL,
            body        TEXT NOT NULL,
            run_id      TEXT NOT NULL,
            status      TEXT NOT NULL CHECK (status IN ('received', 'running', 'succeeded', 'failed')),
            deliveries  BIGINT NOT NULL DEFAULT 1,
            received_at BIGINT NOT NULL,
            updated_at  BIGINT NOT NULL,
            PRIMARY KEY (event_id, trigger)
        );
        """
}
