//! `redline admin …`: the operator's commands (README.md, "Configuration"). Each prints one JSON
//! object on stdout; a failure is a message on stderr and a non-zero exit.

use anyhow::{anyhow, bail};
use clap::{Args, Subcommand};
use redline_domain::time_util::{iso8601, parse_iso8601};
use redline_domain::usage::effective_limit;
use redline_domain::{Email, OrgId, Owner, Password, Plan, UserId};
use serde_json::{json, Value};

use crate::startup::Services;

#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Creates a web-app user.
    CreateUser {
        #[arg(long)]
        email: String,
        #[arg(long)]
        password: String,
        #[arg(long, default_value = "free")]
        plan: String,
    },
    /// Creates an organization owned by an existing user.
    CreateOrg {
        #[arg(long)]
        name: String,
        #[arg(long)]
        owner_email: String,
    },
    /// Creates an API key for a user (`sk_…`) or an organization (`lce_…`).
    CreateKey {
        #[command(flatten)]
        owner: OwnerArgs,
        #[arg(long, default_value = "admin")]
        name: String,
    },
    /// Sets the plan of a user or an organization, optionally with a monthly limit override.
    SetPlan {
        #[command(flatten)]
        owner: OwnerArgs,
        #[arg(long)]
        plan: String,
        /// Operations per month; -1 for unlimited.
        #[arg(long, allow_hyphen_values = true)]
        monthly_limit: Option<i64>,
    },
    /// Creates a promotion code that accounts can redeem.
    CreatePromo {
        #[arg(long)]
        code: String,
        #[arg(long)]
        name: String,
        #[arg(long)]
        ops: i64,
        #[arg(long)]
        expires_at: Option<String>,
    },
    /// Writes a consistent copy of the embedded SQLite database while the server runs
    /// (restore: stop the server, put the copy in place of `redline.db`, start it). The files
    /// (`blobs/`) are copied after it (docs/deploy.md, "Backups").
    Backup {
        /// The new file to write (it must not exist).
        #[arg(long)]
        to: std::path::PathBuf,
    },
    /// Sets a new password for a web-app user (the password rules apply) and signs out all
    /// its sessions. Without `--password`, a random one is made and printed.
    ResetPassword {
        #[arg(long)]
        email: String,
        #[arg(long)]
        password: Option<String>,
    },
    /// Grants promotion operations to an account directly.
    GrantPromo {
        #[command(flatten)]
        owner: OwnerArgs,
        #[arg(long)]
        name: String,
        #[arg(long)]
        ops: i64,
        #[arg(long)]
        expires_at: Option<String>,
    },
}

#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub struct OwnerArgs {
    #[arg(long)]
    user_id: Option<String>,
    #[arg(long)]
    org_id: Option<String>,
}

impl OwnerArgs {
    fn owner(&self) -> anyhow::Result<Owner> {
        match (&self.user_id, &self.org_id) {
            (Some(u), None) => {
                UserId::parse(u).map(Owner::User).ok_or_else(|| anyhow!("--user-id {u:?} is not a valid id"))
            }
            (None, Some(o)) => {
                OrgId::parse(o).map(Owner::Org).ok_or_else(|| anyhow!("--org-id {o:?} is not a valid id"))
            }
            _ => bail!("give exactly one of --user-id and --org-id"),
        }
    }
}

fn plan(s: &str) -> anyhow::Result<Plan> {
    s.parse::<Plan>().map_err(|e| anyhow!("{e}"))
}

/// An `--expires-at` in the future (a grant or code that has already expired would be
/// accepted and then never count).
fn expiry(s: &Option<String>) -> anyhow::Result<Option<i64>> {
    let Some(t) = s.as_deref() else {
        return Ok(None);
    };
    let at = parse_iso8601(t)
        .or_else(|| {
            // A date alone is its first instant, a date-time without a zone is UTC.
            let zoned = if t.len() == 10 { format!("{t}T00:00:00Z") } else { format!("{t}Z") };
            parse_iso8601(&zoned)
        })
        .ok_or_else(|| {
            anyhow!("--expires-at {t:?} is not an ISO 8601 date or date-time (2027-01-31, 2027-01-31T12:00:00Z)")
        })?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
    if i128::from(at) <= i128::try_from(now).unwrap_or(i128::MAX) {
        bail!("--expires-at {t:?} is in the past");
    }
    Ok(Some(at))
}

/// A promotion's name, shown to the accounts that get it: trimmed, 1 to 200 characters, no
/// control characters.
fn promo_name(name: &str) -> anyhow::Result<String> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 200 {
        bail!("--name must be 1 to 200 characters");
    }
    if name.chars().any(char::is_control) {
        bail!("--name must not hold control characters");
    }
    Ok(name.to_owned())
}

fn positive_ops(ops: i64) -> anyhow::Result<i64> {
    if ops <= 0 {
        bail!("--ops must be a positive number of operations, got {ops}");
    }
    Ok(ops)
}

/// Runs one command and returns what it prints.
pub async fn run(services: &Services, command: AdminCommand) -> anyhow::Result<Value> {
    let identity = &services.identity;
    Ok(match command {
        AdminCommand::Backup { to } => {
            services.db.backup_to(&to).await?;
            let bytes = std::fs::metadata(&to).map(|m| m.len()).unwrap_or(0);
            json!({"backup": to.display().to_string(), "bytes": bytes})
        }
        AdminCommand::CreateUser { email, password, plan: p } => {
            let email = Email::parse(&email).map_err(|e| anyhow!("--email: {e}"))?;
            let password = Password::new_for(&password, Some(&email)).map_err(|e| anyhow!("--password: {e}"))?;
            let user = identity.create_user(email, password, plan(&p)?).await?;
            json!({"user_id": user.id.to_string(), "email": user.email.map(|e| e.to_string()), "subscription_tier": user.plan.plan.as_str()})
        }
        AdminCommand::ResetPassword { email, password } => {
            let email = Email::parse(&email).map_err(|e| anyhow!("--email: {e}"))?;
            let generated = password.is_none();
            let password = password.unwrap_or_else(redline_core::secrets::new_password);
            let user = identity.admin_reset_password(&email, &password).await.map_err(|e| match e {
                redline_core::identity::IdentityError::BadPassword(e) => anyhow!("--password: {e}"),
                e => anyhow!("{e}"),
            })?;
            let mut out = json!({"user_id": user.id.to_string(), "email": email.to_string(), "sessions_ended": true});
            if generated {
                out["password"] = json!(password);
            }
            out
        }
        AdminCommand::CreateOrg { name, owner_email } => {
            let email = Email::parse(&owner_email).map_err(|e| anyhow!("--owner-email: {e}"))?;
            let name = redline_domain::account::plain_name(&name);
            if name.is_empty() {
                bail!("--name must not be empty");
            }
            let org = identity.create_org_for_email(&name, &email).await?;
            json!({"org_id": org.id.to_string(), "name": org.name, "owner_user_id": org.owner_user_id.to_string()})
        }
        AdminCommand::CreateKey { owner, name } => {
            let created = identity
                .create_key(owner.owner()?, &redline_domain::account::plain_name(&name), None, Default::default())
                .await?;
            json!({"key_id": created.record.id.to_string(), "api_key": created.key.expose(), "name": created.record.name})
        }
        AdminCommand::SetPlan { owner, plan: p, monthly_limit } => {
            if let Some(limit) = monthly_limit {
                if limit < -1 {
                    bail!("--monthly-limit must be -1 (unlimited) or a number of operations, got {limit}");
                }
            }
            let settings = identity.set_plan(owner.owner()?, plan(&p)?, monthly_limit).await?;
            let limit = effective_limit(settings.plan, settings.monthly_limit_override)
                .map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX));
            json!({"subscription_tier": settings.plan.as_str(), "monthly_limit": limit})
        }
        AdminCommand::CreatePromo { code, name, ops, expires_at } => {
            let code = redline_domain::usage::promo_code(&code).map_err(|e| anyhow!("--code: {e}"))?;
            let name = promo_name(&name)?;
            let expires = expiry(&expires_at)?;
            identity.create_promo_code(&code, &name, positive_ops(ops)?, expires).await?;
            json!({"code": code, "name": name, "ops": ops, "expires_at": expires.map(iso8601)})
        }
        AdminCommand::GrantPromo { owner, name, ops, expires_at } => {
            let name = promo_name(&name)?;
            let expires = expiry(&expires_at)?;
            let id = identity.grant_promo(owner.owner()?, &name, positive_ops(ops)?, expires).await?;
            json!({"redemption_id": id, "name": name, "ops_granted": ops, "expires_at": expires.map(iso8601)})
        }
    })
}
