//! Embeds `assets/` into the crate: writes `$OUT_DIR/assets.rs`, a list of
//! `(path, include_bytes!(…))` for every file under it, in path order.

use std::path::{Path, PathBuf};
use std::{env, fs};

fn collect(dir: &Path, root: &Path, out: &mut Vec<(String, PathBuf)>) {
    let mut entries: Vec<_> =
        fs::read_dir(dir).expect("assets/ is readable").map(|e| e.expect("an entry").path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, root, out);
        } else {
            let name = path.strip_prefix(root).expect("under assets/").to_string_lossy().replace('\\', "/");
            out.push((name, path));
        }
    }
}

fn main() {
    let root = Path::new(&env::var("CARGO_MANIFEST_DIR").expect("cargo sets it")).join("assets");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    let mut code = String::from("&[\n");
    for (name, path) in files {
        code.push_str(&format!("    ({name:?}, include_bytes!({:?}) as &[u8]),\n", path.display().to_string()));
    }
    code.push_str("]\n");
    let out = Path::new(&env::var("OUT_DIR").expect("cargo sets it")).join("assets.rs");
    fs::write(out, code).expect("OUT_DIR is writable");
}
