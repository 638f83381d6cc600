//! SQL functions both backends have, for the query builder.

use diesel::sql_types::Text;

diesel::define_sql_function! {
    /// `lower(text)`: ASCII letters lower-cased on SQLite; all letters on PostgreSQL.
    fn lower(x: Text) -> Text;
}
