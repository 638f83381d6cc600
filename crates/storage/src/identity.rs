//! `IdentityStore` on both backends.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use redline_domain::handoff::MAX_WRONG_CODES;
use redline_domain::page::{Cursor, Page, PageRequest};
use redline_domain::throttle::ThrottlePolicy;
use redline_domain::time_util::Millis;
use redline_domain::{Email, KeyId, OrgId, Owner, UserId};
use redline_ports::records::*;
use redline_ports::{IdentityStore, StoreError};

use crate::db::{BackendOps, Db};
use crate::error::DbResult;
use crate::rows::*;
use crate::schema::*;

fn convert<R, T: TryFrom<R, Error = StoreError>>(rows: Vec<R>) -> Result<Vec<T>, StoreError> {
    rows.into_iter().map(T::try_from).collect()
}

#[async_trait::async_trait]
impl IdentityStore for Db {
    async fn create_user(&self, user: &UserRecord) -> Result<(), StoreError> {
        let row = UserRow::from(user);
        let r: DbResult<usize> =
            with_write!(self, |conn| Ok(diesel::insert_into(users::table).values(&row).execute(conn).await?));
        r?;
        Ok(())
    }

    async fn user_by_id(&self, id: UserId) -> Result<Option<UserRecord>, StoreError> {
        let id = id.to_string();
        let row: DbResult<Option<UserRow>> = with_conn!(self, |conn| Ok(users::table
            .find(&id)
            .select(UserRow::as_select())
            .get_result(conn)
            .await
            .optional()?));
        row?.map(UserRecord::try_from).transpose()
    }

    async fn user_by_email(&self, email: &Email) -> Result<Option<UserRecord>, StoreError> {
        let email = email.as_str();
        let row: DbResult<Option<UserRow>> = with_conn!(self, |conn| Ok(users::table
            .filter(users::email.eq(email))
            .select(UserRow::as_select())
            .get_result(conn)
            .await
            .optional()?));
        row?.map(UserRecord::try_from).transpose()
    }

    async fn emails_of(&self, ids: &[UserId]) -> Result<Vec<(UserId, Email)>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<String> = ids.iter().map(ToString::to_string).collect();
        let rows: DbResult<Vec<(String, Option<String>)>> = with_conn!(self, |conn| Ok(users::table
            .filter(users::id.eq_any(&ids))
            .select((users::id, users::email))
            .load(conn)
            .await?));
        rows?
            .into_iter()
            .filter_map(|(id, email)| email.map(|e| (id, e)))
            .map(|(id, email)| Ok((crate::rows::user_id(&id)?, Email::unchecked(&email))))
            .collect()
    }

    async fn set_plan(&self, owner: Owner, plan: PlanSettings) -> Result<(), StoreError> {
        let name = plan.plan.as_str();
        let limit = plan.monthly_limit_override;
        let n: DbResult<usize> = match owner {
            Owner::User(id) => {
                let id = id.to_string();
                with_write!(self, |conn| Ok(diesel::update(users::table.find(&id))
                    .set((users::plan.eq(name), users::monthly_limit.eq(limit)))
                    .execute(conn)
                    .await?))
            }
            Owner::Org(id) => {
                let id = id.to_string();
                with_write!(self, |conn| Ok(diesel::update(organizations::table.find(&id))
                    .set((organizations::plan.eq(name), organizations::monthly_limit.eq(limit)))
                    .execute(conn)
                    .await?))
            }
        };
        match n? {
            0 => Err(StoreError::NotFound),
            _ => Ok(()),
        }
    }

    async fn plan_of(&self, owner: Owner) -> Result<PlanSettings, StoreError> {
        match owner {
            Owner::User(id) => self.user_by_id(id).await?.map(|u| u.plan).ok_or(StoreError::NotFound),
            Owner::Org(id) => self.org_by_id(id).await?.map(|o| o.plan).ok_or(StoreError::NotFound),
        }
    }

    async fn create_org(&self, org: &OrgRecord) -> Result<(), StoreError> {
        let row = OrgRow::from(org);
        let member = MemberRow::from(&MemberRecord {
            org_id: org.id,
            user_id: org.owner_user_id,
            role: "owner".to_owned(),
            created_at: org.created_at,
        });
        let r: DbResult<()> = with_tx!(self, |conn| {
            diesel::insert_into(organizations::table).values(&row).execute(conn).await?;
            diesel::insert_into(org_members::table)
                .values((&member, org_members::org_created_at.eq(org.created_at)))
                .execute(conn)
                .await?;
            Ok(())
        });
        Ok(r?)
    }

    async fn org_by_id(&self, id: OrgId) -> Result<Option<OrgRecord>, StoreError> {
        let id = id.to_string();
        let row: DbResult<Option<OrgRow>> = with_conn!(self, |conn| Ok(organizations::table
            .find(&id)
            .select(OrgRow::as_select())
            .get_result(conn)
            .await
            .optional()?));
        row?.map(OrgRecord::try_from).transpose()
    }

    async fn orgs_of_user(&self, user: UserId, page: &PageRequest) -> Result<Page<OrgRecord>, StoreError> {
        let user = user.to_string();
        let fetch = i64::try_from(page.fetch()).unwrap_or(i64::MAX);
        let after = page.after.clone();
        // Read through the member's index (user_id, org_created_at, org_id), which holds the
        // whole sort key; each organization is then found by its id.
        let rows: DbResult<Vec<(i64, OrgRow)>> = with_conn!(self, |conn| {
            let q =
                org_members::table.inner_join(organizations::table).filter(org_members::user_id.eq(&user)).into_boxed();
            Ok(keyset!(q, asc(org_members::org_created_at, org_members::org_id), &after, fetch)
                .select((org_members::org_created_at, OrgRow::as_select()))
                .load(conn)
                .await?)
        });
        // The cursor holds the key the index is read by: the membership's copy of the
        // organization's creation.
        let rows = rows?
            .into_iter()
            .map(|(key, row)| Ok((key, OrgRecord::try_from(row)?)))
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(Page::from_rows(rows, page, |(key, o)| Cursor::new(*key, o.id.to_string())).map(|(_, o)| o))
    }

    async fn add_member(&self, member: &MemberRecord) -> Result<(), StoreError> {
        let (org, user) = (member.org_id.to_string(), member.user_id.to_string());
        let (role, created_at) = (member.role.as_str(), member.created_at);
        // One statement that copies the organization's creation onto the membership: no row
        // for an unknown organization (an unknown user is the foreign key's refusal).
        let n: DbResult<usize> = with_write!(self, |conn| Ok(diesel::insert_into(org_members::table)
            .values(organizations::table.find(&org).select((
                organizations::id,
                user.as_str().into_sql::<diesel::sql_types::Text>(),
                role.into_sql::<diesel::sql_types::Text>(),
                created_at.into_sql::<diesel::sql_types::BigInt>(),
                organizations::created_at,
            )))
            .into_columns((
                org_members::org_id,
                org_members::user_id,
                org_members::role,
                org_members::created_at,
                org_members::org_created_at,
            ))
            .execute(conn)
            .await?));
        match n? {
            0 => Err(StoreError::NotFound),
            _ => Ok(()),
        }
    }

    async fn upsert_invitation(&self, invitation: &InvitationRecord) -> Result<(), StoreError> {
        let row = InvitationRow::from(invitation);
        let r: DbResult<()> = with_tx!(self, |conn| {
            diesel::delete(
                org_invitations::table
                    .filter(org_invitations::org_id.eq(&row.org_id))
                    .filter(org_invitations::email.eq(&row.email)),
            )
            .execute(conn)
            .await?;
            diesel::insert_into(org_invitations::table).values(&row).execute(conn).await?;
            Ok(())
        });
        Ok(r?)
    }

    async fn invitation_by_token(&self, token_hash: &str) -> Result<Option<InvitationRecord>, StoreError> {
        let row: DbResult<Option<InvitationRow>> = with_conn!(self, |conn| Ok(org_invitations::table
            .filter(org_invitations::token_hash.eq(token_hash))
            .select(InvitationRow::as_select())
            .get_result(conn)
            .await
            .optional()?));
        row?.map(InvitationRecord::try_from).transpose()
    }

    async fn invitations_of(&self, org: OrgId, now: Millis) -> Result<Vec<InvitationRecord>, StoreError> {
        let org = org.to_string();
        let rows: DbResult<Vec<InvitationRow>> = with_conn!(self, |conn| Ok(org_invitations::table
            .filter(org_invitations::org_id.eq(&org))
            .filter(org_invitations::expires_at.gt(now))
            .order((org_invitations::created_at.asc(), org_invitations::id.asc()))
            .limit(1000)
            .select(InvitationRow::as_select())
            .load(conn)
            .await?));
        rows?.into_iter().map(InvitationRecord::try_from).collect()
    }

    async fn delete_invitation(&self, id: &str) -> Result<bool, StoreError> {
        let n: DbResult<usize> =
            with_write!(self, |conn| Ok(diesel::delete(org_invitations::table.find(id)).execute(conn).await?));
        Ok(n? > 0)
    }

    async fn accept_invitation(&self, id: &str, member: &MemberRecord) -> Result<(), StoreError> {
        let row = MemberRow::from(member);
        let id = id.to_owned();
        let outcome: DbResult<Option<bool>> = with_tx!(self, |conn| {
            if diesel::delete(org_invitations::table.find(&id)).execute(conn).await? == 0 {
                return Ok(None);
            }
            let org_created_at: Option<i64> = organizations::table
                .find(&row.org_id)
                .select(organizations::created_at)
                .get_result(conn)
                .await
                .optional()?;
            let Some(org_created_at) = org_created_at else { return Ok(None) };
            let already: i64 = org_members::table
                .filter(org_members::org_id.eq(&row.org_id))
                .filter(org_members::user_id.eq(&row.user_id))
                .count()
                .get_result(conn)
                .await?;
            if already > 0 {
                return Ok(Some(false));
            }
            diesel::insert_into(org_members::table)
                .values((&row, org_members::org_created_at.eq(org_created_at)))
                .execute(conn)
                .await?;
            Ok(Some(true))
        });
        match outcome? {
            None => Err(StoreError::NotFound),
            Some(false) => Err(StoreError::Duplicate("already a member".to_owned())),
            Some(true) => Ok(()),
        }
    }

    async fn members(&self, org: OrgId, page: &PageRequest) -> Result<Page<MemberRecord>, StoreError> {
        let org = org.to_string();
        let fetch = i64::try_from(page.fetch()).unwrap_or(i64::MAX);
        let after = page.after.clone();
        let rows: DbResult<Vec<MemberRow>> = with_conn!(self, |conn| {
            let q = org_members::table.filter(org_members::org_id.eq(&org)).into_boxed();
            Ok(keyset!(q, asc(org_members::created_at, org_members::user_id), &after, fetch)
                .select(MemberRow::as_select())
                .load(conn)
                .await?)
        });
        let rows: Vec<MemberRecord> = convert(rows?)?;
        Ok(Page::from_rows(rows, page, |m| Cursor::new(m.created_at, m.user_id.to_string())))
    }

    async fn member(&self, org: OrgId, user: UserId) -> Result<Option<MemberRecord>, StoreError> {
        let (org, user) = (org.to_string(), user.to_string());
        let row: DbResult<Option<MemberRow>> = with_conn!(self, |conn| Ok(org_members::table
            .find((&org, &user))
            .select(MemberRow::as_select())
            .get_result(conn)
            .await
            .optional()?));
        row?.map(MemberRecord::try_from).transpose()
    }

    async fn remove_member(&self, org: OrgId, user: UserId) -> Result<bool, StoreError> {
        let (org, user) = (org.to_string(), user.to_string());
        let n: DbResult<usize> = with_write!(self, |conn| Ok(diesel::delete(
            org_members::table
                .filter(org_members::org_id.eq(&org))
                .filter(org_members::user_id.eq(&user))
                .filter(org_members::role.ne("owner")),
        )
        .execute(conn)
        .await?));
        Ok(n? > 0)
    }

    async fn insert_key_within_limit(&self, key: &KeyRecord, max_live: u32) -> Result<(), StoreError> {
        let row = KeyRow::from(key);
        let r: DbResult<()> = with_tx!(self, |conn| {
            conn.lock_owner(&row.owner).await?;
            let live: i64 = api_keys::table
                .filter(api_keys::owner.eq(&row.owner))
                .filter(api_keys::revoked_at.is_null())
                .filter(api_keys::expires_at.is_null().or(api_keys::expires_at.gt(row.created_at)))
                .count()
                .get_result(conn)
                .await?;
            if live >= i64::from(max_live) {
                return Err(StoreError::LimitReached.into());
            }
            diesel::insert_into(api_keys::table).values(&row).execute(conn).await?;
            Ok(())
        });
        Ok(r?)
    }

    async fn live_keys_by_prefix(&self, prefix: &str) -> Result<Vec<KeyRecord>, StoreError> {
        let rows: DbResult<Vec<KeyRow>> = with_conn!(self, |conn| Ok(api_keys::table
            .filter(api_keys::lookup_prefix.eq(prefix))
            .filter(api_keys::revoked_at.is_null())
            .select(KeyRow::as_select())
            .load(conn)
            .await?));
        convert(rows?)
    }

    async fn keys_of(&self, owner: Owner, page: &PageRequest) -> Result<Page<KeyRecord>, StoreError> {
        let owner = owner.to_string();
        let fetch = i64::try_from(page.fetch()).unwrap_or(i64::MAX);
        let after = page.after.clone();
        let rows: DbResult<Vec<KeyRow>> = with_conn!(self, |conn| {
            let q = api_keys::table.filter(api_keys::owner.eq(&owner)).into_boxed();
            Ok(keyset!(q, desc(api_keys::created_at, api_keys::id), &after, fetch)
                .select(KeyRow::as_select())
                .load(conn)
                .await?)
        });
        let rows: Vec<KeyRecord> = convert(rows?)?;
        Ok(Page::from_rows(rows, page, |k| Cursor::new(k.created_at, k.id.to_string())))
    }

    async fn revoke_key(&self, owner: Owner, key: KeyId, now: Millis) -> Result<(), StoreError> {
        let owner = owner.to_string();
        let key = key.to_string();
        let n: DbResult<usize> = with_write!(self, |conn| Ok(diesel::update(
            api_keys::table.find(&key).filter(api_keys::owner.eq(&owner)).filter(api_keys::revoked_at.is_null())
        )
        .set(api_keys::revoked_at.eq(now))
        .execute(conn)
        .await?));
        match n? {
            0 => Err(StoreError::NotFound),
            _ => Ok(()),
        }
    }

    async fn revoke_keys_created_by(&self, owner: Owner, user: UserId, now: Millis) -> Result<Vec<KeyId>, StoreError> {
        let (owner, user) = (owner.to_string(), user.to_string());
        let ids: DbResult<Vec<String>> = with_write!(self, |conn| Ok(diesel::update(
            api_keys::table
                .filter(api_keys::owner.eq(&owner))
                .filter(api_keys::created_by.eq(&user))
                .filter(api_keys::revoked_at.is_null())
        )
        .set(api_keys::revoked_at.eq(now))
        .returning(api_keys::id)
        .get_results(conn)
        .await?));
        ids?.iter().map(|id| KeyId::parse(id).ok_or_else(|| crate::rows::corrupt("key id", id))).collect()
    }

    async fn key_is_live(&self, key: KeyId, now: Millis) -> Result<bool, StoreError> {
        let key = key.to_string();
        let n: DbResult<i64> = with_conn!(self, |conn| Ok(api_keys::table
            .find(&key)
            .filter(api_keys::revoked_at.is_null())
            .filter(api_keys::expires_at.is_null().or(api_keys::expires_at.gt(now)))
            .count()
            .get_result(conn)
            .await?));
        Ok(n? > 0)
    }

    async fn touch_key(&self, key: KeyId, now: Millis, min_gap: Millis) -> Result<(), StoreError> {
        let key = key.to_string();
        let r: DbResult<usize> = with_write!(self, |conn| Ok(diesel::update(
            api_keys::table
                .find(&key)
                .filter(api_keys::last_used_at.is_null().or(api_keys::last_used_at.le(now - min_gap)))
        )
        .set(api_keys::last_used_at.eq(now))
        .execute(conn)
        .await?));
        r?;
        Ok(())
    }

    async fn insert_web_session(&self, session: &WebSessionRecord) -> Result<(), StoreError> {
        let row = WebSessionRow::from(session);
        let r: DbResult<usize> =
            with_write!(self, |conn| Ok(diesel::insert_into(web_sessions::table).values(&row).execute(conn).await?));
        r?;
        Ok(())
    }

    async fn web_session(&self, token_hash: &str, now: Millis) -> Result<Option<WebSessionRecord>, StoreError> {
        let row: DbResult<Option<WebSessionRow>> = with_conn!(self, |conn| Ok(web_sessions::table
            .find(token_hash)
            .filter(web_sessions::expires_at.gt(now))
            .select(WebSessionRow::as_select())
            .get_result(conn)
            .await
            .optional()?));
        row?.map(WebSessionRecord::try_from).transpose()
    }

    async fn delete_web_session(&self, token_hash: &str) -> Result<(), StoreError> {
        let r: DbResult<usize> =
            with_write!(self, |conn| Ok(diesel::delete(web_sessions::table.find(token_hash)).execute(conn).await?));
        r?;
        Ok(())
    }

    async fn touch_web_session(&self, token_hash: &str, now: Millis) -> Result<(), StoreError> {
        let r: DbResult<usize> = with_write!(self, |conn| Ok(diesel::update(web_sessions::table.find(token_hash))
            .set(web_sessions::last_seen_at.eq(now))
            .execute(conn)
            .await?));
        r?;
        Ok(())
    }

    async fn web_sessions_of(
        &self,
        user: UserId,
        now: Millis,
        limit: usize,
    ) -> Result<Vec<WebSessionRecord>, StoreError> {
        let user = user.to_string();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows: DbResult<Vec<WebSessionRow>> = with_conn!(self, |conn| Ok(web_sessions::table
            .filter(web_sessions::user_id.eq(&user))
            .filter(web_sessions::expires_at.gt(now))
            .order((web_sessions::last_seen_at.desc(), web_sessions::id.desc()))
            .limit(limit)
            .select(WebSessionRow::as_select())
            .load(conn)
            .await?));
        rows?.into_iter().map(WebSessionRecord::try_from).collect()
    }

    async fn delete_web_session_by_id(&self, user: UserId, id: &str) -> Result<bool, StoreError> {
        let user = user.to_string();
        let n: DbResult<usize> = with_write!(self, |conn| Ok(diesel::delete(
            web_sessions::table.filter(web_sessions::user_id.eq(&user)).filter(web_sessions::id.eq(id))
        )
        .execute(conn)
        .await?));
        Ok(n? > 0)
    }

    async fn delete_web_sessions_of(&self, user: UserId, keep: Option<String>) -> Result<u64, StoreError> {
        let user = user.to_string();
        let keep = keep.unwrap_or_default();
        let n: DbResult<usize> = with_write!(self, |conn| Ok(diesel::delete(
            web_sessions::table.filter(web_sessions::user_id.eq(&user)).filter(web_sessions::token_hash.ne(&keep))
        )
        .execute(conn)
        .await?));
        Ok(n? as u64)
    }

    async fn set_password_hash(&self, user: UserId, hash: &str) -> Result<(), StoreError> {
        let user = user.to_string();
        let n: DbResult<usize> = with_write!(self, |conn| Ok(diesel::update(users::table.find(&user))
            .set(users::password_hash.eq(hash))
            .execute(conn)
            .await?));
        match n? {
            0 => Err(StoreError::NotFound),
            _ => Ok(()),
        }
    }

    async fn insert_password_reset(&self, reset: &PasswordResetRecord) -> Result<(), StoreError> {
        let (hash, user) = (reset.token_hash.clone(), reset.user_id.to_string());
        let (created, expires) = (reset.created_at, reset.expires_at);
        let r: DbResult<usize> = with_write!(self, |conn| Ok(diesel::insert_into(password_resets::table)
            .values((
                password_resets::token_hash.eq(&hash),
                password_resets::user_id.eq(&user),
                password_resets::created_at.eq(created),
                password_resets::expires_at.eq(expires),
            ))
            .execute(conn)
            .await?));
        r?;
        Ok(())
    }

    async fn password_reset(&self, token_hash: &str, now: Millis) -> Result<Option<UserId>, StoreError> {
        let user: DbResult<Option<String>> = with_conn!(self, |conn| Ok(password_resets::table
            .find(token_hash)
            .filter(password_resets::used_at.is_null())
            .filter(password_resets::expires_at.gt(now))
            .select(password_resets::user_id)
            .get_result(conn)
            .await
            .optional()?));
        user?.as_deref().map(crate::rows::user_id).transpose()
    }

    async fn use_password_reset(&self, token_hash: &str, now: Millis) -> Result<Option<UserId>, StoreError> {
        let user: DbResult<Option<String>> = with_write!(self, |conn| Ok(diesel::update(
            password_resets::table
                .find(token_hash)
                .filter(password_resets::used_at.is_null())
                .filter(password_resets::expires_at.gt(now)),
        )
        .set(password_resets::used_at.eq(now))
        .returning(password_resets::user_id)
        .get_result(conn)
        .await
        .optional()?));
        user?.as_deref().map(crate::rows::user_id).transpose()
    }

    async fn insert_email_verification(&self, link: &EmailVerificationRecord) -> Result<(), StoreError> {
        let (hash, user, email) = (link.token_hash.clone(), link.user_id.to_string(), link.email.to_string());
        let (created, expires) = (link.created_at, link.expires_at);
        let r: DbResult<usize> = with_write!(self, |conn| Ok(diesel::insert_into(email_verifications::table)
            .values((
                email_verifications::token_hash.eq(&hash),
                email_verifications::user_id.eq(&user),
                email_verifications::email.eq(&email),
                email_verifications::created_at.eq(created),
                email_verifications::expires_at.eq(expires),
            ))
            .execute(conn)
            .await?));
        r?;
        Ok(())
    }

    async fn use_email_verification(&self, token_hash: &str, now: Millis) -> Result<Option<UserId>, StoreError> {
        let hash = token_hash.to_owned();
        let user: DbResult<Option<String>> = with_tx!(self, |conn| {
            let link: Option<(String, String)> =
                diesel::delete(email_verifications::table.find(&hash).filter(email_verifications::expires_at.gt(now)))
                    .returning((email_verifications::user_id, email_verifications::email))
                    .get_result(conn)
                    .await
                    .optional()?;
            let Some((user, email)) = link else { return Ok(None) };
            diesel::delete(verified_emails::table.find(&user)).execute(conn).await?;
            diesel::insert_into(verified_emails::table)
                .values((
                    verified_emails::user_id.eq(&user),
                    verified_emails::email.eq(&email),
                    verified_emails::verified_at.eq(now),
                ))
                .execute(conn)
                .await?;
            Ok(Some(user))
        });
        user?.as_deref().map(crate::rows::user_id).transpose()
    }

    async fn set_verified_email(&self, user: UserId, email: &Email, at: Millis) -> Result<(), StoreError> {
        let (user, email) = (user.to_string(), email.to_string());
        let r: DbResult<()> = with_tx!(self, |conn| {
            diesel::delete(verified_emails::table.find(&user)).execute(conn).await?;
            diesel::insert_into(verified_emails::table)
                .values((
                    verified_emails::user_id.eq(&user),
                    verified_emails::email.eq(&email),
                    verified_emails::verified_at.eq(at),
                ))
                .execute(conn)
                .await?;
            Ok(())
        });
        Ok(r?)
    }

    async fn verified_email(&self, user: UserId) -> Result<Option<(Email, Millis)>, StoreError> {
        let user = user.to_string();
        let row: DbResult<Option<(String, i64)>> = with_conn!(self, |conn| Ok(verified_emails::table
            .find(&user)
            .select((verified_emails::email, verified_emails::verified_at))
            .get_result(conn)
            .await
            .optional()?));
        Ok(row?.map(|(email, at)| (Email::unchecked(&email), at)))
    }

    async fn insert_handoff(&self, handoff: &HandoffRecord) -> Result<(), StoreError> {
        let row = HandoffRow::from(handoff);
        let r: DbResult<usize> =
            with_write!(self, |conn| Ok(diesel::insert_into(handoffs::table).values(&row).execute(conn).await?));
        r?;
        Ok(())
    }

    async fn handoff(&self, token_hash: &str) -> Result<Option<HandoffRecord>, StoreError> {
        let row: DbResult<Option<HandoffRow>> = with_conn!(self, |conn| Ok(handoffs::table
            .find(token_hash)
            .select(HandoffRow::as_select())
            .get_result(conn)
            .await
            .optional()?));
        row?.map(HandoffRecord::try_from).transpose()
    }

    async fn take_attempt(&self, token_hash: &str, now: Millis) -> Result<HandoffRecord, StoreError> {
        let max = i64::from(MAX_WRONG_CODES);
        let row: DbResult<Option<HandoffRow>> = with_conn!(self, |conn| Ok(diesel::update(
            handoffs::table
                .find(token_hash)
                .filter(handoffs::claimed_at.is_null())
                .filter(handoffs::expires_at.gt(now))
                .filter(handoffs::wrong_codes.lt(max)),
        )
        .set(handoffs::wrong_codes.eq(handoffs::wrong_codes + 1))
        .returning(HandoffRow::as_returning())
        .get_result(conn)
        .await
        .optional()?));
        HandoffRecord::try_from(row?.ok_or(StoreError::NotFound)?)
    }

    async fn give_back_attempt(&self, token_hash: &str) -> Result<(), StoreError> {
        let done: DbResult<usize> = with_conn!(self, |conn| Ok(diesel::update(
            handoffs::table.find(token_hash).filter(handoffs::wrong_codes.gt(0))
        )
        .set(handoffs::wrong_codes.eq(handoffs::wrong_codes - 1))
        .execute(conn)
        .await?));
        done?;
        Ok(())
    }

    async fn claim_handoff(
        &self,
        token_hash: &str,
        email: &Email,
        password_hash: &str,
        now: Millis,
    ) -> Result<UserId, StoreError> {
        let email = email.as_str();
        let max = i64::from(MAX_WRONG_CODES);
        let user: DbResult<String> = with_tx!(self, |conn| {
            let user: Option<String> = diesel::update(
                handoffs::table
                    .find(token_hash)
                    .filter(handoffs::claimed_at.is_null())
                    .filter(handoffs::expires_at.gt(now))
                    .filter(handoffs::wrong_codes.lt(max)),
            )
            .set(handoffs::claimed_at.eq(now))
            .returning(handoffs::user_id)
            .get_result(conn)
            .await
            .optional()?;
            let Some(user) = user else {
                return Err(StoreError::NotFound.into());
            };
            // Only an agent account is taken over: once one of its links is claimed, its
            // other links claim nothing (the row lock orders two claims at once, and the
            // second finds a web user).
            let taken_over = diesel::update(users::table.find(&user).filter(users::kind.eq(UserKind::Agent.as_str())))
                .set((
                    users::kind.eq(UserKind::Web.as_str()),
                    users::email.eq(email),
                    users::password_hash.eq(password_hash),
                ))
                .execute(conn)
                .await?;
            if taken_over == 0 {
                return Err(StoreError::NotFound.into());
            }
            Ok(user)
        });
        user_id(&user?)
    }

    async fn create_promo_code(&self, code: &PromoCodeRecord) -> Result<(), StoreError> {
        let row = PromoCodeRow {
            code: code.code.clone(),
            name: code.name.clone(),
            grant_ops: code.ops,
            expires_at: code.expires_at,
            created_at: code.created_at,
        };
        let r: DbResult<usize> = with_tx!(self, |conn| {
            // Codes are matched without regard to case: one differing only in case is taken.
            let taken: i64 = promo_codes::table
                .filter(crate::sql::lower(promo_codes::code).eq(row.code.to_ascii_lowercase()))
                .count()
                .get_result(conn)
                .await?;
            if taken > 0 {
                return Err(StoreError::Duplicate("promotion code".to_owned()).into());
            }
            Ok(diesel::insert_into(promo_codes::table).values(&row).execute(conn).await?)
        });
        r?;
        Ok(())
    }

    async fn insert_promo_grant(&self, grant: &PromoGrantRecord) -> Result<(), StoreError> {
        let row = PromoGrantRow {
            redemption_id: grant.redemption_id.clone(),
            owner: grant.owner.to_string(),
            name: grant.name.clone(),
            code: grant.code.clone(),
            ops_granted: grant.ops_granted,
            ops_remaining: grant.ops_remaining,
            expires_at: grant.expires_at,
            created_at: grant.created_at,
        };
        let r: DbResult<usize> =
            with_write!(self, |conn| Ok(diesel::insert_into(promo_grants::table).values(&row).execute(conn).await?));
        r?;
        Ok(())
    }

    async fn take_throttle(
        &self,
        scopes: &[(String, ThrottlePolicy)],
        now: Millis,
    ) -> Result<Result<(), Millis>, StoreError> {
        crate::throttles::take(self, scopes, now).await
    }

    async fn give_back_throttle(&self, scope: &str, forget: bool) -> Result<(), StoreError> {
        crate::throttles::give_back(self, scope, forget).await
    }
}
