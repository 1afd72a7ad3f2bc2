//! The list of keycodes deskhand has remapped, kept in a file while they
//! are, so that the next start gives them back after a crash (as the
//! held-input ledger does for held keys).

use std::path::Path;

use crate::keymap::KeySyms;

/// One remapped keycode.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    /// The keycode.
    pub keycode: u8,
    /// What it had before deskhand remapped it.
    pub original: KeySyms,
    /// What deskhand put there.
    pub set: KeySyms,
}

/// What a previous run listed; empty when there is no file or it does not
/// read.
pub fn read(path: &Path) -> Vec<Entry> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    serde_json::from_str(&text).unwrap_or_else(|e| {
        tracing::warn!(path = %path.display(), error = %e, "unreadable list of remapped keycodes");
        Vec::new()
    })
}

/// Replaces the list (atomically: a crash leaves the old or the new one).
pub fn write(path: &Path, entries: &[Entry]) {
    let body = serde_json::to_string(entries).unwrap_or_else(|_| "[]".into());
    if let Err(e) = deskhand_files::write_atomic_unsynced(path, body.as_bytes()) {
        tracing::warn!(path = %path.display(), error = %e, "cannot keep the list of remapped keycodes");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_reads_back() {
        let dir = std::env::temp_dir().join(format!("dh-remaps-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("remapped-keys.json");
        assert!(read(&path).is_empty());
        let entry = Entry {
            keycode: 93,
            original: KeySyms::empty(),
            set: KeySyms {
                types: [1; 4],
                group_info: 1,
                width: 2,
                syms: vec![0x1000_65e5, 0xe9],
            },
        };
        write(&path, std::slice::from_ref(&entry));
        assert_eq!(read(&path), vec![entry]);
        write(&path, &[]);
        assert!(read(&path).is_empty());
        std::fs::write(&path, "not json").expect("write");
        assert!(read(&path).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
