//! What the model tests share.

use std::path::PathBuf;

/// Where `make deps` installs the built-in models: `$(pg_config --sharedir)/extension/memory_ext/
/// models`, or MEMORY_EXT_MODELS.
pub fn models_dir() -> PathBuf {
    if let Ok(d) = std::env::var("MEMORY_EXT_MODELS") {
        return d.into();
    }
    let share = std::process::Command::new(
        std::env::var("PG_CONFIG")
            .unwrap_or_else(|_| "/usr/lib/postgresql/15/bin/pg_config".into()),
    )
    .arg("--sharedir")
    .output()
    .expect("pg_config --sharedir");
    PathBuf::from(String::from_utf8_lossy(&share.stdout).trim()).join("extension/memory_ext/models")
}
