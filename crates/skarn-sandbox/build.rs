//! Gives the crate the digest of its own sources (`SKARN_SANDBOX_SOURCES`):
//! the records skarn keeps between runs carry it, so a new build never
//! trusts what an older one worked out (see `state_file::digest_name`).

include!("build_support/source_digest.rs");

fn main() {
    let src = std::path::Path::new("src");
    let (hex, files) = source_digest(src);
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=build_support");
    println!("cargo:rustc-env=SKARN_SANDBOX_SOURCES={hex}");
    println!("cargo:rustc-env=SKARN_SANDBOX_SOURCE_FILES={files}");
}
