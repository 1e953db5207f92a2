/// The fixed demo data every test, recipe example and README relies on. Identical for
/// every seed; generated data (see `Seeder`) comes on top.
///
/// Accounts (any password; MFA code `123456`):
/// - `admin@example.com` — `usr_admin`, `role_superadmin`, MFA enabled, `org_admin` of `org_acme`.
/// - `support@example.com` — `usr_support`, `role_support`, no MFA, member of `org_acme`.
/// - `ada@example.com` — `usr_ada`, active, no MFA, `role_billing_admin` (+ implicit
///   `role_member`), member of `org_acme`; entitlements `ent_ada_invoicer` (active, purchase),
///   `ent_ada_wiki` (active, admin_grant), `ent_ada_crm` (disabled, admin_grant),
///   `ent_ada_tickets` (active org_seat in org_acme), `ent_ada_analytics` (expired trial),
///   `ent_ada_chat` (revoked); sessions `ses_ada_laptop`, `ses_ada_phone` (live) and
///   `ses_ada_old` (revoked); API key `key_ada_cli`; audit history; two inbox notifications.
///
/// API keys (`Authorization: Bearer <secret>`):
/// - `key_jobs` — platform key for jobs, every permission: `satk_test_jobs_sandbox_0000000000000000`.
/// - `key_support_ro` — `users.list`, `audit.view`: `satk_test_support_sandbox_00000000000000`.
/// - `key_ada_cli` — owned by Ada, `users.list`: `satk_test_ada_sandbox_000000000000000000`.
/// - `key_ops` — an operations key without billing: `users.list`, `users.manage`,
///   `entitlements.manage`, `roles.manage`, `audit.view`:
///   `satk_test_ops_sandbox_000000000000000000` (assigning `role_billing_admin` with it is
///   `403 role_escalation_forbidden`).
///
/// Organizations `org_acme` (Acme) and `org_globex` (Globex). Applications `app_hub`
/// (internal), `app_invoicer`, `app_wiki`, `app_crm`, `app_analytics`, `app_tickets`, `app_chat`.
public enum SandboxFixtures {
    public static let adminEmail = "admin@example.com"
    public static let supportEmail = "support@example.com"
    public static let adaEmail = "ada@example.com"
    public static let adminId = "usr_admin"
    public static let supportId = "usr_support"
    public static let adaId = "usr_ada"
    public static let mfaCode = "123456"
    public static let jobsKeyId = "key_jobs"
    public static let jobsKeySecret = "satk_test_jobs_sandbox_0000000000000000"
    public static let supportKeyId = "key_support_ro"
    public static let supportKeySecret = "satk_test_support_sandbox_00000000000000"
    public static let adaKeyId = "key_ada_cli"
    public static let adaKeySecret = "satk_test_ada_sandbox_000000000000000000"
    public static let opsKeyId = "key_ops"
    public static let opsKeySecret = "satk_test_ops_sandbox_000000000000000000"
    public static let opsKeyPermissions = ["users.list", "users.manage", "entitlements.manage", "roles.manage", "audit.view"]
    public static let acmeOrgId = "org_acme"
    public static let globexOrgId = "org_globex"
    public static let applicationIds = ["app_hub", "app_invoicer", "app_wiki", "app_crm", "app_analytics", "app_tickets", "app_chat"]
}
