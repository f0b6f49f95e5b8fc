//! Anthropic's memory tool (memory_core::tools::memory) over the tenant's `memories/` files.

use super::Cx;
use crate::ops::files;
use crate::pg::spi;
use memory_core::tools::memory::{self as memtool, says, Command};
use memory_core::tools::Call;

pub(super) fn run(cx: &Cx, c: Call) -> Result<String, String> {
    let Cx { user, .. } = *cx;
    Ok(match c {
        // A file's whole content, after the edit, is held to memory_ext.max_value_bytes by the
        // store (src/ops/files.rs), as for memory_file_write.
        Call::Memory(cmd) => anthropic(user, cmd)?,
        _ => unreachable!("the table sends only this family's calls here"),
    })
}

/// Anthropic's memory tool over the tenant's `memories/` files.
///
/// # Why every edit locks
/// Models issue tool calls in parallel. Each read-modify-write here is atomic against
/// concurrent calls on the same path: `str_replace` and `insert` lock the file's row
/// (src/ops/files.rs `lock`) and compute the edit from what the previous editor committed;
/// `create` inserts only where nothing is (a concurrent create of the same path is answered
/// "already exists"); `rename` and `delete` of a directory are one statement each, the whole
/// directory or nothing. Every acknowledged edit is in the file; a call that cannot be applied
/// answers `is_error`.
fn anthropic(user: &str, cmd: Command) -> Result<String, String> {
    let read = |file: &str| -> Option<String> {
        spi::one_opt::<String>(
            "SELECT content FROM memory.files WHERE user_id = $1 AND path = $2",
            &[user.into(), file.into()],
            "reading a memory file",
        )
    };
    let under = |file: &str| files::sizes(user, &format!("{file}/"));
    let exists_under = |file: &str| {
        spi::one_opt::<bool>(
            "SELECT EXISTS (SELECT 1 FROM memory.files WHERE user_id = $1 AND starts_with(path, $2 || '/'))",
            &[user.into(), file.into()],
            "looking for a directory",
        )
        .unwrap_or(false)
    };
    // str_replace and insert: the edit computed from the locked file and stored with its title,
    // tags and metadata kept.
    let edit = |path: &str, f: &memtool::Edit| {
        let file = memtool::file_path(path)?.ok_or_else(|| says::not_a_file(path))?;
        let (content, title) = files::lock(user, &file).ok_or_else(|| {
            if exists_under(&file) {
                says::not_a_file(path)
            } else {
                says::missing(path)
            }
        })?;
        let (edited, msg) = f(&content)?;
        files::set_content(user, &file, title.as_deref(), &edited);
        Ok(msg)
    };
    match cmd {
        Command::View { path, range } => match memtool::file_path(&path)? {
            None => Ok(memtool::view_dir(&path, &under(memtool::ROOT))),
            Some(f) => match read(&f) {
                Some(c) => memtool::view_file(&path, &c, range),
                None if exists_under(&f) => Ok(memtool::view_dir(&path, &under(&f))),
                None => Err(says::missing(&path)),
            },
        },
        Command::Create { path, text } => {
            let f = memtool::file_path(&path)?.ok_or_else(|| says::exists(&path))?;
            if exists_under(&f) {
                return Err(says::exists(&path));
            }
            let title = memory_core::files::default_title(&text);
            if files::create(user, &f, title.as_deref(), &text) {
                Ok(says::created(&path))
            } else {
                Err(says::exists(&path))
            }
        }
        Command::StrReplace { path, old, new } => {
            edit(&path, &|c: &str| memtool::str_replace(&path, c, &old, &new))
        }
        Command::Insert { path, line, text } => {
            edit(&path, &|c: &str| memtool::insert(&path, c, line, &text))
        }
        Command::Delete { path } => {
            let f = memtool::file_path(&path)?.ok_or_else(says::root)?;
            if files::delete_tree(user, &f, true) > 0 {
                Ok(says::deleted(&path))
            } else {
                Err(says::no_such(&path))
            }
        }
        Command::Rename { old, new } => {
            let from = memtool::file_path(&old)?.ok_or_else(says::root_rename)?;
            let to = memtool::file_path(&new)?.ok_or_else(says::root_rename)?;
            if to == from || to.starts_with(&format!("{from}/")) {
                return Err(says::into_itself(&old, &new));
            }
            if read(&to).is_some() || exists_under(&to) {
                return Err(says::destination_exists(&new));
            }
            // The longest path after the move must still be a memory-file path.
            let longest = under(&from)
                .iter()
                .map(|(p, _)| p.chars().count())
                .max()
                .unwrap_or(0)
                .max(from.chars().count());
            let grown = longest + to.chars().count() - from.chars().count();
            if grown > memory_core::files::MAX_PATH_CHARS {
                return Err(format!(
                    "Cannot rename {old} to {new}: a path would be {grown} characters, over the \
                     limit of {}.",
                    memory_core::files::MAX_PATH_CHARS
                ));
            }
            match files::rename(user, &from, &to) {
                0 => Err(says::no_such(&old)),
                _ => Ok(says::renamed(&old, &new)),
            }
        }
    }
}
