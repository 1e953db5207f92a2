/// The sandbox's SQLite schema. Times are epoch seconds; `version` columns back ETags
/// (`W/"<version>"`); `seq` (the rowid) breaks ties in newest-first keyset pagination.
enum Schema {
    static let version = 1

    static let sql = """
    CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS users(
      seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, email TEXT UNIQUE NOT NULL,
      display_name TEXT NOT NULL, status TEXT NOT NULL, mfa_enabled INTEGER NOT NULL,
      created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, last_login_at INTEGER,
      version INTEGER NOT NULL DEFAULT 1, roles_version INTEGER NOT NULL DEFAULT 1);
    CREATE INDEX IF NOT EXISTS users_created ON users(created_at, seq);
    CREATE TABLE IF NOT EXISTS organizations(
      seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, name TEXT NOT NULL, slug TEXT NOT NULL,
      created_at INTEGER NOT NULL, version INTEGER NOT NULL DEFAULT 1);
    CREATE TABLE IF NOT EXISTS org_members(
      seq INTEGER PRIMARY KEY, organization_id TEXT NOT NULL, user_id TEXT NOT NULL, role TEXT NOT NULL,
      joined_at INTEGER NOT NULL, version INTEGER NOT NULL DEFAULT 1, UNIQUE(organization_id, user_id));
    CREATE INDEX IF NOT EXISTS org_members_user ON org_members(user_id);
    CREATE TABLE IF NOT EXISTS applications(
      seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, name TEXT NOT NULL, slug TEXT NOT NULL,
      visibility TEXT NOT NULL, access_tier TEXT NOT NULL, receives_platform_notifications INTEGER NOT NULL,
      created_at INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS entitlements(
      seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, user_id TEXT NOT NULL, organization_id TEXT,
      application_id TEXT NOT NULL, status TEXT NOT NULL, source TEXT NOT NULL, starts_at INTEGER,
      ends_at INTEGER, disabled_reason TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
      version INTEGER NOT NULL DEFAULT 1);
    CREATE INDEX IF NOT EXISTS entitlements_user ON entitlements(user_id, created_at);
    CREATE INDEX IF NOT EXISTS entitlements_created ON entitlements(created_at, seq);
    CREATE TABLE IF NOT EXISTS roles(
      seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, name TEXT NOT NULL, description TEXT NOT NULL,
      permissions TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS role_assignments(
      seq INTEGER PRIMARY KEY, user_id TEXT NOT NULL, role_id TEXT NOT NULL, assigned_at INTEGER NOT NULL,
      assigned_by_type TEXT NOT NULL, assigned_by_id TEXT, UNIQUE(user_id, role_id));
    CREATE TABLE IF NOT EXISTS sessions(
      seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, user_id TEXT NOT NULL, created_at INTEGER NOT NULL,
      last_seen_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, ip_address TEXT, user_agent TEXT,
      revoked_at INTEGER, version INTEGER NOT NULL DEFAULT 1);
    CREATE INDEX IF NOT EXISTS sessions_user ON sessions(user_id);
    CREATE TABLE IF NOT EXISTS access_tokens(
      token TEXT PRIMARY KEY, session_id TEXT NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS refresh_tokens(
      token TEXT PRIMARY KEY, session_id TEXT NOT NULL, used INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS mfa_challenges(
      token TEXT PRIMARY KEY, user_id TEXT NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS api_keys(
      seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, name TEXT NOT NULL, owner_user_id TEXT,
      secret TEXT UNIQUE NOT NULL, permissions TEXT NOT NULL, status TEXT NOT NULL,
      created_at INTEGER NOT NULL, last_used_at INTEGER, revoked_at INTEGER, version INTEGER NOT NULL DEFAULT 1);
    CREATE TABLE IF NOT EXISTS audit_events(
      seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, action TEXT NOT NULL, actor_type TEXT NOT NULL,
      actor_id TEXT, target_type TEXT NOT NULL, target_id TEXT NOT NULL, target_user_id TEXT,
      application_id TEXT, organization_id TEXT, before TEXT, after TEXT, request_id TEXT,
      ts INTEGER NOT NULL);
    DROP INDEX IF EXISTS audit_ts;
    CREATE INDEX IF NOT EXISTS audit_ts_covering ON audit_events(ts, seq, id, action, actor_type, actor_id, target_type,
      target_id, target_user_id, application_id, organization_id, before, after, request_id);
    CREATE INDEX IF NOT EXISTS audit_target_user ON audit_events(target_user_id, ts);
    CREATE TABLE IF NOT EXISTS notifications(
      seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, application_id TEXT NOT NULL, user_id TEXT NOT NULL,
      title TEXT NOT NULL, body TEXT NOT NULL, category TEXT NOT NULL, action_url TEXT,
      sender_type TEXT NOT NULL, sender_id TEXT, created_at INTEGER NOT NULL);
    CREATE INDEX IF NOT EXISTS notifications_user ON notifications(user_id, created_at);
    CREATE TABLE IF NOT EXISTS idempotency(
      caller TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, state TEXT NOT NULL,
      status INTEGER, headers TEXT, body BLOB, created_at INTEGER NOT NULL, PRIMARY KEY(caller, key)) WITHOUT ROWID;
    """

    /// Tables wiped by `reset(seed:)`, in any order (no foreign keys).
    static let tables = ["meta", "users", "organizations", "org_members", "applications", "entitlements",
                         "roles", "role_assignments", "sessions", "access_tokens", "refresh_tokens",
                         "mfa_challenges", "api_keys", "audit_events", "notifications", "idempotency"]
        + HubEngine.webhookTables + HubEngine.adminTables
}
