/// Tables for the admin endpoints added after the first schema (user creation, API key
/// management, custom roles, inbox state). They sit beside the tables of `Schema` so an
/// existing sandbox file gains them on open (`CREATE TABLE IF NOT EXISTS`) without
/// altering a table it already has; a row missing from one of them means "as seeded".
extension HubEngine {
    static let adminSchema = """
    CREATE TABLE IF NOT EXISTS user_invitations(
      user_id TEXT PRIMARY KEY, sent_count INTEGER NOT NULL, last_sent_at INTEGER NOT NULL) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS api_key_details(
      id TEXT PRIMARY KEY, scope TEXT NOT NULL, mode TEXT NOT NULL, intended_use TEXT NOT NULL,
      restrict_destructive INTEGER NOT NULL, expires_at INTEGER, created_by_type TEXT NOT NULL,
      created_by_id TEXT NOT NULL, rotated_at INTEGER) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS role_details(
      id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
      version INTEGER NOT NULL DEFAULT 1) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS notification_states(
      id TEXT PRIMARY KEY, state TEXT NOT NULL, changed_at INTEGER NOT NULL,
      version INTEGER NOT NULL DEFAULT 1) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS org_grants(
      entitlement_id TEXT PRIMARY KEY, member_scope TEXT NOT NULL, member_overrides TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS org_grant_seats(
      seat_id TEXT PRIMARY KEY, grant_id TEXT NOT NULL) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS org_grant_seats_grant ON org_grant_seats(grant_id);
    """

    static let adminTables = ["user_invitations", "api_key_details", "role_details", "notification_states", "org_grants", "org_grant_seats"]
}
