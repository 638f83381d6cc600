//! `FileIndex` on both backends: the rows of images and rendered exports kept in the blob
//! store. Both reference their session with `ON DELETE CASCADE`.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use redline_domain::time_util::Millis;
use redline_domain::{Owner, SessionId};
use redline_ports::files::{ExportFileRecord, FileIndex, ImageRecord, SessionFiles};
use redline_ports::StoreError;

use crate::db::Db;
use crate::error::DbResult;
use crate::rows::owner;
use crate::schema::{export_files, images};

fn session_id(s: &str) -> Result<SessionId, StoreError> {
    SessionId::parse(s).map_err(|_| StoreError::Other(format!("corrupt session id in database: {s:?}")))
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = images)]
struct ImageRow {
    image_id: String,
    owner: String,
    session_id: String,
    content_type: String,
    size_bytes: i64,
    created_at: i64,
}

impl From<&ImageRecord> for ImageRow {
    fn from(r: &ImageRecord) -> Self {
        Self {
            image_id: r.image_id.clone(),
            owner: r.owner.to_string(),
            session_id: r.session_id.as_str().to_owned(),
            content_type: r.content_type.clone(),
            size_bytes: r.size_bytes,
            created_at: r.created_at,
        }
    }
}

impl TryFrom<ImageRow> for ImageRecord {
    type Error = StoreError;

    fn try_from(r: ImageRow) -> Result<Self, StoreError> {
        Ok(ImageRecord {
            image_id: r.image_id,
            owner: owner(&r.owner)?,
            session_id: session_id(&r.session_id)?,
            content_type: r.content_type,
            size_bytes: r.size_bytes,
            created_at: r.created_at,
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = export_files)]
struct ExportRow {
    export_id: String,
    owner: String,
    session_id: String,
    format: String,
    filename: String,
    content_type: String,
    size_bytes: i64,
    created_at: i64,
    expires_at: i64,
}

impl From<&ExportFileRecord> for ExportRow {
    fn from(r: &ExportFileRecord) -> Self {
        Self {
            export_id: r.export_id.clone(),
            owner: r.owner.to_string(),
            session_id: r.session_id.as_str().to_owned(),
            format: r.format.clone(),
            filename: r.filename.clone(),
            content_type: r.content_type.clone(),
            size_bytes: r.size_bytes,
            created_at: r.created_at,
            expires_at: r.expires_at,
        }
    }
}

impl TryFrom<ExportRow> for ExportFileRecord {
    type Error = StoreError;

    fn try_from(r: ExportRow) -> Result<Self, StoreError> {
        Ok(ExportFileRecord {
            export_id: r.export_id,
            owner: owner(&r.owner)?,
            session_id: session_id(&r.session_id)?,
            format: r.format,
            filename: r.filename,
            content_type: r.content_type,
            size_bytes: r.size_bytes,
            created_at: r.created_at,
            expires_at: r.expires_at,
        })
    }
}

#[async_trait::async_trait]
impl FileIndex for Db {
    async fn insert_images(&self, records: &[ImageRecord]) -> Result<(), StoreError> {
        if records.is_empty() {
            return Ok(());
        }
        let rows: Vec<ImageRow> = records.iter().map(ImageRow::from).collect();
        let r: DbResult<()> = with_tx!(self, |conn| {
            // One statement per row: SQLite's multi-row insert is not available with diesel's
            // `Insertable` of a Vec on every backend alike.
            for row in &rows {
                diesel::insert_into(images::table).values(row).execute(conn).await?;
            }
            Ok(())
        });
        Ok(r?)
    }

    async fn image(&self, image_id: &str) -> Result<Option<ImageRecord>, StoreError> {
        let row: DbResult<Option<ImageRow>> = with_conn!(self, |conn| Ok(images::table
            .find(image_id)
            .select(ImageRow::as_select())
            .get_result(conn)
            .await
            .optional()?));
        row?.map(ImageRecord::try_from).transpose()
    }

    async fn insert_export(&self, export: &ExportFileRecord) -> Result<(), StoreError> {
        let row = ExportRow::from(export);
        let r: DbResult<usize> =
            with_write!(self, |conn| Ok(diesel::insert_into(export_files::table).values(&row).execute(conn).await?));
        r?;
        Ok(())
    }

    async fn export_file(&self, export_id: &str) -> Result<Option<ExportFileRecord>, StoreError> {
        let row: DbResult<Option<ExportRow>> = with_conn!(self, |conn| Ok(export_files::table
            .find(export_id)
            .select(ExportRow::as_select())
            .get_result(conn)
            .await
            .optional()?));
        row?.map(ExportFileRecord::try_from).transpose()
    }

    async fn session_files(&self, owner: Owner, session: &SessionId) -> Result<SessionFiles, StoreError> {
        let owner_s = owner.to_string();
        let sid = session.as_str();
        let r: DbResult<(Vec<String>, Vec<String>)> = with_conn!(self, |conn| {
            let image_ids = images::table
                .filter(images::owner.eq(&owner_s))
                .filter(images::session_id.eq(sid))
                .order(images::image_id.asc())
                .select(images::image_id)
                .load(conn)
                .await?;
            let export_ids = export_files::table
                .filter(export_files::owner.eq(&owner_s))
                .filter(export_files::session_id.eq(sid))
                .order(export_files::export_id.asc())
                .select(export_files::export_id)
                .load(conn)
                .await?;
            Ok((image_ids, export_ids))
        });
        let (image_ids, export_ids) = r?;
        Ok(SessionFiles { image_ids, export_ids })
    }

    async fn take_expired_exports(&self, now: Millis) -> Result<Vec<String>, StoreError> {
        let r: DbResult<Vec<String>> =
            with_write!(self, |conn| Ok(diesel::delete(export_files::table.filter(export_files::expires_at.lt(now)))
                .returning(export_files::export_id)
                .get_results(conn)
                .await?));
        Ok(r?)
    }
}
