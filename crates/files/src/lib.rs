//! How deskhand writes every file it keeps (the token, the connection
//! file, the held-input ledger, the remapped keycodes, the settings, the
//! audit log): readable by its owner only, never through a symlink, and
//! replaced atomically so that a crash leaves the old or the new content,
//! never half of one.
//!
//! On unix the files are 0600 and opened with `O_NOFOLLOW`. On Windows
//! each file (and each directory made owner-only) gets a protected DACL
//! with one entry, for the user deskhand runs as (see [`acl`]); under Wine
//! one that Wine maps to 0600 and 0700 on the Unix side (see [`wine`]).

pub mod acl;
pub mod wine;

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Options that create a file for its owner only, refusing a symlink in
/// the last component.
#[cfg(unix)]
fn private_options() -> OpenOptions {
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut options = OpenOptions::new();
    options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    options
}

/// Options for a file in the user's own directories (see the module's doc).
#[cfg(not(unix))]
fn private_options() -> OpenOptions {
    OpenOptions::new()
}

/// The temporary file `path` is written through: hidden, in the same
/// directory (so that the rename is atomic), named by this process.
fn temporary_for(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// Replaces `path` with `content` atomically: a fresh temporary file
/// (exclusive create, owner-only) in the same directory, fsynced, renamed
/// over. A symlink at `path` is replaced, never followed. For what the
/// person would lose (the token, the settings, the connection file).
pub fn write_atomic(path: &Path, content: &[u8]) -> std::io::Result<()> {
    replace(path, content, true)
}

/// [`write_atomic`] without the fsync: the old or the new content
/// survives a crash of this process, not a power cut. For state rewritten
/// at every key press (the held-input ledger), where an fsync would delay
/// the input.
pub fn write_atomic_unsynced(path: &Path, content: &[u8]) -> std::io::Result<()> {
    replace(path, content, false)
}

fn replace(path: &Path, content: &[u8], sync: bool) -> std::io::Result<()> {
    let tmp = temporary_for(path);
    let _ = std::fs::remove_file(&tmp);
    let written = private_options()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| {
            restrict(&tmp)?;
            f.write_all(content)?;
            if sync { f.sync_all() } else { Ok(()) }
        })
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Opens `path` for appending, created owner-only when new, never through
/// a symlink. An existing file keeps its mode: the caller checks it.
pub fn open_append(path: &Path) -> std::io::Result<File> {
    created_private(path, |o| o.append(true).create(true).open(path))
}

/// Opens `path` to read and write it in place (a lock file), created
/// owner-only when new, never through a symlink.
pub fn open_in_place(path: &Path) -> std::io::Result<File> {
    created_private(path, |o| {
        o.read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
    })
}

/// Opens `path` with `open`; a file it created is made owner-only. Under
/// Wine an existing one is too: an earlier deskhand's came out 0770 there
/// (and Windows' own check, [`is_owner_only`], cannot see group bits).
fn created_private(
    path: &Path,
    open: impl FnOnce(&mut OpenOptions) -> std::io::Result<File>,
) -> std::io::Result<File> {
    let existed = std::fs::symlink_metadata(path).is_ok();
    let file = open(&mut private_options())?;
    if !existed || wine::running() {
        restrict(path)?;
    }
    Ok(file)
}

/// Makes a file this process just created its owner's only (on unix its
/// mode already is).
fn restrict(path: &Path) -> std::io::Result<()> {
    #[cfg(windows)]
    {
        acl::restrict(path, false)
    }
    #[cfg(not(windows))]
    {
        let _ = path;
        Ok(())
    }
}

/// Opens `path` to read it, never through a symlink.
pub fn open_read(path: &Path) -> std::io::Result<File> {
    private_options().read(true).open(path)
}

/// Whether only its owner may read or write the file `meta` describes
/// (always true where the OS has no mode bits: see the module's doc).
pub fn is_owner_only(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        meta.permissions().mode() & 0o077 == 0
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        true
    }
}

/// Who owns the file `meta` describes, when it is not this process's
/// user: that user's id. `None` when it is ours (always, where the OS has
/// no uids: see the module's doc).
pub fn foreign_owner(meta: &std::fs::Metadata) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let ours = unsafe { libc::geteuid() };
        (meta.uid() != ours).then_some(meta.uid())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// The permission bits of `meta` that let others than its owner in
/// (`0o077` of the mode), as octal text for a message; `None` when there
/// are none (always, where the OS has no mode bits).
pub fn open_to_others(meta: &std::fs::Metadata, write_only: bool) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = meta.permissions().mode() & 0o7777;
        let mask = if write_only { 0o022 } else { 0o077 };
        (mode & mask != 0).then(|| format!("{mode:o}"))
    }
    #[cfg(not(unix))]
    {
        let _ = (meta, write_only);
        None
    }
}

/// Whether this process's user could change the file at `path` or put
/// another in its place: it, or a directory above it, is that user's own
/// or writable by others (a sticky directory, like `/tmp`, keeps others'
/// entries and is not counted). Root's own files count as the system's,
/// not as a person's. Symlinks are followed; a path that cannot be read
/// counts as changeable. Where the OS has no uids this says `false`: its
/// backend judges with its own means.
pub fn changeable_by_us(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
        let Ok(real) = std::fs::canonicalize(path) else {
            return true;
        };
        real.ancestors().any(|p| {
            std::fs::metadata(p).map_or(true, |m| {
                let sticky_dir = m.is_dir() && m.permissions().mode() & 0o1000 != 0;
                // Ours, and we are not root; or others may write it.
                let persons = m.uid() != 0 && foreign_owner(&m).is_none();
                persons || (open_to_others(&m, true).is_some() && !sticky_dir)
            })
        })
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// What tells one file from the next at the same path (after a log
/// rotation): the inode on unix, the creation time elsewhere.
pub fn identity(meta: &std::fs::Metadata) -> u128 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        (u128::from(meta.dev()) << 64) | u128::from(meta.ino())
    }
    #[cfg(not(unix))]
    {
        meta.created()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos())
    }
}

/// Makes `dir` usable by its owner only (0700 on unix; on Windows an
/// owner-only DACL that what is created inside inherits).
pub fn make_dir_owner_only(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
    }
    #[cfg(windows)]
    {
        acl::restrict(dir, true)
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = dir;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("dh-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("dir");
        d
    }

    #[cfg(unix)]
    #[test]
    fn a_file_others_may_write_or_in_such_a_directory_is_changeable() {
        use std::os::unix::fs::PermissionsExt as _;
        assert!(!changeable_by_us(Path::new("/usr/bin/env")), "root's");
        assert!(changeable_by_us(Path::new("/no/such/file")));
        let d = dir("changeable");
        let file = d.join("entry");
        std::fs::write(&file, "x").expect("write");
        // SAFETY: geteuid has no preconditions and cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).expect("mode");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("mode");
        // Ours unless we are root (then the sticky temp dir is all above).
        assert_eq!(changeable_by_us(&file), !root);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).expect("mode");
        assert!(changeable_by_us(&file), "others may write it");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("mode");
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).expect("mode");
        assert!(changeable_by_us(&file), "others may replace it");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_write_replaces_the_file_owner_only_and_leaves_no_temporary() {
        let d = dir("write");
        let path = d.join("state.json");
        std::fs::write(&path, "old").expect("old");
        write_atomic(&path, b"new").expect("written");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "new");
        write_atomic_unsynced(&path, b"newer").expect("written");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "newer");
        let meta = std::fs::metadata(&path).expect("meta");
        assert!(is_owner_only(&meta));
        assert_eq!(foreign_owner(&meta), None, "ours");
        assert_eq!(open_to_others(&meta, false), None);
        make_dir_owner_only(&d).expect("0700");
        let before = identity(&std::fs::metadata(&path).expect("meta"));
        // Rotated as logs are: moved away (so that its inode stays taken).
        std::fs::rename(&path, d.join("state.json.1")).expect("rotated away");
        write_atomic(&path, b"next").expect("written");
        let after = identity(&std::fs::metadata(&path).expect("meta"));
        assert_ne!(before, after, "a new file at the same path");
        assert_eq!(
            open_to_others(&std::fs::metadata(&d).expect("meta"), false),
            None
        );
        let mut left: Vec<_> = std::fs::read_dir(&d)
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        left.sort();
        assert_eq!(left, ["state.json", "state.json.1"], "no temporary left");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_replaced_not_followed() {
        let d = dir("link");
        let target = d.join("target");
        std::fs::write(&target, "theirs").expect("target");
        let link = d.join("state.json");
        std::os::unix::fs::symlink(&target, &link).expect("link");
        write_atomic(&link, b"ours").expect("written");
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "theirs");
        assert!(
            !std::fs::symlink_metadata(&link)
                .expect("meta")
                .file_type()
                .is_symlink()
        );
        assert!(open_append(&target).is_ok());
        let appended_link = d.join("log");
        std::os::unix::fs::symlink(&target, &appended_link).expect("link");
        assert!(
            open_append(&appended_link).is_err(),
            "never appends through a link"
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}
