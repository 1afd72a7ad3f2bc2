//! The files deskhand keeps: secrets when there is no OS keychain (0600)
//! and the connection file (0600, written atomically, never through a
//! symlink), each in a directory of ours that only we can use (0700).

use std::fs;
use std::path::{Path, PathBuf};

use crate::HostError;
use crate::error::{io, refuse};
use crate::secrets;

/// Where the OS keeps nothing for this user (no home at all): the root,
/// whose directories deskhand then cannot create, so it says so.
fn nowhere() -> PathBuf {
    PathBuf::from("/")
}

/// The settings file and the token without a keychain live here:
/// `$XDG_CONFIG_HOME/deskhand` (else `~/.config/deskhand`) on Linux,
/// `~/Library/Application Support/deskhand` on macOS, `%APPDATA%\deskhand`
/// on Windows.
pub fn config_dir() -> PathBuf {
    dirs::config_dir().unwrap_or_else(nowhere).join("deskhand")
}

/// The audit log, the held-input ledger and the remapped keys live here:
/// `$XDG_STATE_HOME/deskhand` (else `~/.local/state/deskhand`) on Linux,
/// the local data directory elsewhere (`%LOCALAPPDATA%\deskhand`).
pub fn state_dir() -> PathBuf {
    dirs::state_dir()
        .or_else(dirs::data_local_dir)
        .unwrap_or_else(nowhere)
        .join("deskhand")
}

/// The connection file and the desktop locks live here:
/// `$XDG_RUNTIME_DIR/deskhand` where there is one; where the variable is
/// missing (an MCP client starts its servers with a bare environment) the
/// directory the login manager makes for this user, `/run/user/UID`, when
/// it is ours and private; else the state directory.
pub fn runtime_dir() -> PathBuf {
    dirs::runtime_dir()
        .or_else(login_runtime_dir)
        .map_or_else(state_dir, |p| p.join("deskhand"))
}

/// `/run/user/UID` (systemd-logind's `XDG_RUNTIME_DIR`), when it is a
/// directory of this user's that no one else may use.
#[cfg(target_os = "linux")]
fn login_runtime_dir() -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    let dir = PathBuf::from(format!("/run/user/{uid}"));
    let meta = fs::symlink_metadata(&dir).ok()?;
    (meta.is_dir() && meta.uid() == uid && meta.mode() & 0o077 == 0).then_some(dir)
}

#[cfg(not(target_os = "linux"))]
fn login_runtime_dir() -> Option<PathBuf> {
    None
}

/// Whether `dir` is one of the directories deskhand keeps for itself
/// (config, state, runtime), rather than one the person named.
fn is_deskhands_own(dir: &Path) -> bool {
    [config_dir(), state_dir(), runtime_dir()]
        .iter()
        .any(|own| own == dir)
}

/// Creates `dir` (0700) if needed. An existing one must be a directory of
/// ours, not a symlink, that no one else can write to (anyone who can
/// could replace the files kept there): one of deskhand's own directories
/// that group or others can use is made 0700; another directory (named by
/// the person, say `--connection-file /tmp/endpoint.json`) is refused.
pub fn private_dir(dir: &Path) -> Result<(), HostError> {
    let meta = match fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(_) => {
            fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
            deskhand_files::make_dir_owner_only(dir)
                .map_err(io(format!("making {} private", dir.display())))?;
            return Ok(());
        }
    };
    if meta.file_type().is_symlink() {
        refuse!("{} is a symlink; refusing to use it", dir.display());
    }
    if !meta.is_dir() {
        refuse!("{} is not a directory", dir.display());
    }
    if let Some(uid) = deskhand_files::foreign_owner(&meta) {
        refuse!(
            "{} belongs to another user (uid {uid}); refusing to keep deskhand's files in it",
            dir.display(),
        );
    }
    let own = is_deskhands_own(dir);
    if own && deskhand_files::wine::running() {
        // Wine reports no group bits (an earlier deskhand's folder came
        // out 0770 there): made owner-only at every start.
        deskhand_files::make_dir_owner_only(dir)
            .map_err(io(format!("making {} private", dir.display())))?;
    }
    if let (true, Some(mode)) = (own, deskhand_files::open_to_others(&meta, false)) {
        deskhand_files::make_dir_owner_only(dir)
            .map_err(io(format!("making {} private", dir.display())))?;
        tracing::warn!(dir = %dir.display(), was = mode, "deskhand's directory was open to others; made it 0700");
    } else if let (false, Some(mode)) = (own, deskhand_files::open_to_others(&meta, true)) {
        refuse!(
            "{} can be written by others (mode {mode}); refusing to keep deskhand's files in it (use a private directory)",
            dir.display()
        );
    } else if let (false, Some(open)) = (own, writable_by_all(dir)) {
        refuse!(
            "{} can be written by others ({open}); refusing to keep deskhand's files in it (use a private directory)",
            dir.display()
        );
    }
    Ok(())
}

/// On Windows, whether the folder's DACL lets every account (Everyone,
/// Users, Authenticated Users, …) add, replace or delete files in it, and
/// how: anyone could replace what deskhand keeps there. (Under Wine the
/// DACL is read back from the Unix mode: others' bits, not the group's.)
fn writable_by_all(dir: &Path) -> Option<String> {
    #[cfg(windows)]
    {
        match deskhand_files::acl::sddl_of(dir) {
            Ok(sddl) => deskhand_files::acl::writable_by_all(&sddl),
            Err(e) => Some(format!("its DACL could not be read: {e}")),
        }
    }
    #[cfg(not(windows))]
    {
        let _ = dir;
        None
    }
}

/// `path` as the person finds it: under Wine with its place on the Unix
/// side too.
pub fn shown(path: &Path) -> String {
    #[cfg(windows)]
    if let Some(unix) = deskhand_files::wine::unix_path(path) {
        return format!("{} (Unix {})", path.display(), unix.display());
    }
    path.display().to_string()
}

/// Wine's registry file of the person (`user.reg` in the prefix), as text;
/// "user.reg" where it cannot be found.
pub fn wine_registry_file() -> String {
    #[cfg(windows)]
    if let Some(file) = deskhand_files::wine::registry_file() {
        return file.display().to_string();
    }
    "user.reg".to_owned()
}

/// Writes `content` to `path` atomically with mode 0600: a fresh temporary
/// file (O_EXCL, O_NOFOLLOW) in the same directory, fsynced, renamed over.
pub fn write_private_atomic(path: &Path, content: &[u8]) -> Result<(), HostError> {
    let Some(dir) = path.parent() else {
        refuse!("{} has no directory", path.display());
    };
    private_dir(dir)?;
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        refuse!(
            "{} is a symlink; refusing to write through it",
            path.display()
        );
    }
    deskhand_files::write_atomic(path, content).map_err(io(format!("writing {}", path.display())))
}

/// The secret in `path` when the file is ours (our user's), private (no
/// access for group or others), not a symlink and holds 64 hex digits.
pub fn read_private_secret(path: &Path) -> Option<String> {
    private_secret(path, &fs::symlink_metadata(path).ok()?)
}

/// [`read_private_secret`] for a file whose metadata was already read.
fn private_secret(path: &Path, meta: &fs::Metadata) -> Option<String> {
    private_text(path, meta).filter(|s| secrets::is_secret(s))
}

/// The text (trimmed, not empty) of a small file that is ours, private and
/// not a symlink, as [`read_private_secret`] checks it.
pub fn read_private_text(path: &Path) -> Option<String> {
    private_text(path, &fs::symlink_metadata(path).ok()?)
}

fn private_text(path: &Path, meta: &fs::Metadata) -> Option<String> {
    if meta.file_type().is_symlink()
        || deskhand_files::foreign_owner(meta).is_some()
        || !deskhand_files::is_owner_only(meta)
        || meta.len() > 4096
    {
        return None;
    }
    let text = fs::read_to_string(path).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// 256 random bits as 64 hex digits, kept in a private file: loaded when
/// valid, else (first run, or a file readable by others) made anew. A file
/// that belongs to another user is refused: someone else chose that
/// secret, or can read it.
pub fn load_or_create_secret(path: &Path, what: &str) -> Result<String, HostError> {
    if let Ok(meta) = fs::symlink_metadata(path) {
        if meta.file_type().is_symlink() {
            refuse!("{what} file {} is a symlink; refusing it", path.display());
        }
        if let Some(uid) = deskhand_files::foreign_owner(&meta) {
            refuse!(
                "{what} file {} belongs to another user (uid {uid}); refusing it",
                path.display(),
            );
        }
        if let Some(secret) = private_secret(path, &meta) {
            return Ok(secret);
        }
        tracing::warn!(path = %path.display(), "{what} file was not private or not valid; making a new one");
    }
    let secret = secrets::random_secret()?;
    write_private_atomic(path, format!("{secret}\n").as_bytes())?;
    tracing::info!(path = %path.display(), "created a new {what}");
    Ok(secret)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("dh-files-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn token_is_created_private_and_survives_a_restart() {
        let d = tmpdir("token");
        let path = d.join("token");
        let first = load_or_create_secret(&path, "token").expect("create");
        assert_eq!(first.len(), 64);
        let mode = fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(
            load_or_create_secret(&path, "token").expect("reload"),
            first
        );
        assert_eq!(read_private_secret(&path), Some(first.clone()));
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).expect("chmod");
        assert_eq!(read_private_secret(&path), None, "not private");
        assert_ne!(
            load_or_create_secret(&path, "token").expect("rotate"),
            first
        );
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn a_directory_others_can_write_to_is_refused() {
        let d = tmpdir("opendir");
        fs::create_dir_all(&d).expect("dir");
        fs::set_permissions(&d, fs::Permissions::from_mode(0o777)).expect("chmod");
        assert!(write_private_atomic(&d.join("endpoint.json"), b"{}").is_err());
        assert!(!d.join("endpoint.json").exists());
        let mode = fs::metadata(&d).expect("meta").permissions().mode();
        assert_eq!(
            mode & 0o777,
            0o777,
            "a directory the person named is left as it is"
        );
        fs::set_permissions(&d, fs::Permissions::from_mode(0o755)).expect("chmod");
        write_private_atomic(&d.join("endpoint.json"), b"{}").expect("readable is fine");
        let fresh = d.join("a/b");
        private_dir(&fresh).expect("create");
        let mode = fs::metadata(&fresh).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn atomic_write_refuses_symlinks() {
        let d = tmpdir("symlink");
        fs::create_dir_all(&d).expect("dir");
        let target = d.join("target");
        fs::write(&target, "x").expect("write");
        let link = d.join("endpoint.json");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        assert!(write_private_atomic(&link, b"{}").is_err());
        assert_eq!(fs::read_to_string(&target).expect("read"), "x");
        let _ = fs::remove_dir_all(&d);
    }
}
