//! Rebuilds the crate when a migration is added: `embed_migrations!` reads the `migrations`
//! folders at compile time, and cargo does not watch a folder for new files on its own.

fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
