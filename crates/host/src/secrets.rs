//! Where deskhand keeps its secrets (the port token and the audit key): the
//! OS keychain (Secret Service, macOS Keychain, Windows Credential Manager)
//! when one answers, else a private 0600 file — said in the log, never a
//! silent fallback, and never an in-memory store that forgets the token at
//! exit (the `keyring` crate's default stores are the native ones).
//!
//! A keychain item is named after the config directory it belongs to, so
//! two installs (or a test's isolated `XDG_CONFIG_HOME`) never share one.
//!
//! Under Wine the Credential Manager is no keychain: Wine keeps its
//! entries, and the key they are encrypted with, in the prefix's
//! `user.reg`, which other Unix accounts may read (0644). There the
//! secrets go into private files (0600 on the Unix side, see
//! `deskhand_files::wine`), and what an earlier deskhand left in the
//! Credential Manager is removed and replaced.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::Duration;

use crate::{HostError, files};

/// The keychain service name of every deskhand item.
pub(crate) const SERVICE: &str = "deskhand";

/// How long the keychain may take to answer. A locked keychain that shows
/// an unlock prompt nobody answers must not stop deskhand from starting.
const KEYCHAIN_WAIT: Duration = Duration::from_secs(10);

/// A secret deskhand keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Secret {
    /// The token every request to the local port carries.
    Token,
    /// The per-install key the audit log hashes text with.
    AuditKey,
}

impl Secret {
    fn what(self) -> &'static str {
        match self {
            Self::Token => "token",
            Self::AuditKey => "audit key",
        }
    }

    /// Its file in the config directory (used without a keychain).
    pub fn default_file(self) -> PathBuf {
        files::config_dir().join(match self {
            Self::Token => "token",
            Self::AuditKey => "audit-key",
        })
    }

    /// Its keychain account: the secret and the config directory it
    /// belongs to.
    fn account(self) -> String {
        format!("{} for {}", self.what(), files::config_dir().display())
    }
}

/// Where a secret was found or put.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeptIn {
    /// The OS keychain.
    Keychain,
    /// A private file.
    File(PathBuf),
}

impl KeptIn {
    /// The connection file's fields saying where the token is kept.
    pub fn connection_fields(&self) -> serde_json::Value {
        match self {
            Self::Keychain => serde_json::json!({"token_store": "keychain"}),
            Self::File(p) => serde_json::json!({"token_store": "file", "token_file": p}),
        }
    }

    /// Where a connection file says the token is kept.
    pub fn from_connection(v: &serde_json::Value) -> Option<Self> {
        match v.get("token_store")?.as_str()? {
            "keychain" => Some(Self::Keychain),
            "file" => Some(Self::File(v.get("token_file")?.as_str()?.into())),
            _ => None,
        }
    }
}

/// Where the daemon of this process keeps its token, once it serves: the
/// one answer the doctor, the Settings window and the log all give.
static SERVING: Mutex<Option<KeptIn>> = Mutex::new(None);

/// Notes where the daemon of this process keeps its token.
pub fn note_serving(kept_in: &KeptIn) {
    *SERVING.lock().unwrap_or_else(|p| p.into_inner()) = Some(kept_in.clone());
}

/// Where the daemon of this process keeps its token, if one serves.
pub fn serving() -> Option<KeptIn> {
    SERVING.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

impl std::fmt::Display for KeptIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Keychain => write!(f, "the OS keychain"),
            Self::File(p) => write!(f, "{} (0600)", files::shown(p)),
        }
    }
}

/// Why the OS keychain is not used here even when it answers: under Wine
/// its entries, and their key, lie in a registry file others may read.
pub fn keychain_refused() -> Option<String> {
    let version = deskhand_files::wine::version()?;
    Some(format!(
        "under Wine {version} the Credential Manager is kept in the registry file {}, which other \
         Unix accounts may read, with the key of its entries beside them",
        files::wine_registry_file()
    ))
}

/// Under Wine: removes `secret` from the Credential Manager, where an
/// earlier deskhand kept it (its value was readable by other accounts, so
/// it is not moved: a new one is made). Whether there was one.
fn forget_in_keychain(secret: Secret) -> bool {
    let account = secret.account();
    let removed = with_timeout(move || {
        let entry = keyring::Entry::new(SERVICE, &account).map_err(|e| e.to_string())?;
        match entry.delete_credential() {
            Ok(()) => Ok(true),
            Err(keyring::Error::NoEntry) => Ok(false),
            Err(e) => Err(e.to_string()),
        }
    });
    match removed {
        Ok(true) => {
            tracing::warn!(
                registry = %files::wine_registry_file(),
                "removed the {} an earlier deskhand kept in Wine's Credential Manager, which \
                 other Unix accounts could read; a new one replaces it",
                secret.what()
            );
            true
        }
        Ok(false) => false,
        Err(why) => {
            tracing::warn!(reason = %why, "the Credential Manager could not be read to remove an old {}", secret.what());
            false
        }
    }
}

/// Under Wine: the secrets an earlier deskhand left in the Credential
/// Manager (`deskhand serve` removes them); for `doctor`.
pub fn left_in_keychain() -> Vec<&'static str> {
    [Secret::Token, Secret::AuditKey]
        .into_iter()
        .filter(|s| {
            let account = s.account();
            with_timeout(move || {
                let entry = keyring::Entry::new(SERVICE, &account).map_err(|e| e.to_string())?;
                Ok(entry.get_password().is_ok())
            })
            .unwrap_or(false)
        })
        .map(Secret::what)
        .collect()
}

/// Loads `secret` (64 hex digits: 256 random bits), creating it on first
/// run. With `file`, only that file is used. Otherwise the keychain is
/// tried first; a valid secret left in the default file by an earlier run
/// without a keychain moves into it, and the file is removed.
pub fn load_or_create(secret: Secret, file: Option<&Path>) -> Result<(String, KeptIn), HostError> {
    if let Some(path) = file {
        return Ok((
            files::load_or_create_secret(path, secret.what())?,
            KeptIn::File(path.to_owned()),
        ));
    }
    let path = secret.default_file();
    if let Some(why) = keychain_refused() {
        forget_in_keychain(secret);
        tracing::warn!(reason = %why, file = %files::shown(&path),
            "the {} is kept in a private file, not the OS keychain", secret.what());
        return Ok((
            files::load_or_create_secret(&path, secret.what())?,
            KeptIn::File(path),
        ));
    }
    match in_keychain(secret, &path) {
        Ok(value) => Ok((value, KeptIn::Keychain)),
        Err(why) => {
            tracing::warn!(
                reason = %why,
                file = %path.display(),
                "no OS keychain answered; the {} is kept in a private file",
                secret.what()
            );
            Ok((
                files::load_or_create_secret(&path, secret.what())?,
                KeptIn::File(path),
            ))
        }
    }
}

/// Puts a new random `secret` where the old one is kept and returns it;
/// the old one is gone. When it cannot be stored nothing changes.
pub fn replace(secret: Secret, kept_in: &KeptIn) -> Result<String, HostError> {
    let value = random_secret()?;
    match kept_in {
        KeptIn::File(path) => files::write_private_atomic(path, format!("{value}\n").as_bytes())?,
        KeptIn::Keychain => {
            let (account, stored) = (secret.account(), value.clone());
            with_timeout(move || {
                let entry = keyring::Entry::new(SERVICE, &account).map_err(|e| e.to_string())?;
                entry.set_password(&stored).map_err(|e| e.to_string())?;
                match entry.get_password() {
                    Ok(back) if back == stored => Ok(()),
                    Ok(_) => Err("the keychain did not keep what was stored".into()),
                    Err(e) => Err(format!("the keychain lost what was stored: {e}")),
                }
            })
            .map_err(|why| {
                HostError::Refused(format!(
                    "the new {} could not be stored: {why}",
                    secret.what()
                ))
            })?;
        }
    }
    tracing::info!(kept_in = %kept_in, "a new {} replaced the old one", secret.what());
    Ok(value)
}

/// Lets go of the keychain once the secrets are loaded: its connection (on
/// Linux a D-Bus connection with a thread of its own) is not kept for the
/// daemon's lifetime. Closed on a thread of its own, so that a slow bus
/// does not hold up start-up.
pub fn release_keychain() {
    if let Some(store) = keyring_core::unset_default_store() {
        let _ = std::thread::Builder::new()
            .name("keychain-release".into())
            .spawn(move || drop(store));
    }
}

/// Whether an OS keychain answers here (and is used), and if not why;
/// for `doctor`.
pub fn keychain_status() -> Result<(), String> {
    if let Some(why) = keychain_refused() {
        return Err(why);
    }
    with_timeout(|| {
        keyring::Entry::store_status()
            .as_ref()
            .map(|_| ())
            .map_err(ToString::to_string)
    })
}

/// Set once the keychain has not answered in time: later calls in this
/// process (the token after the audit key) do not wait for it again.
static KEYCHAIN_SILENT: AtomicBool = AtomicBool::new(false);

/// Runs `job` on its own thread, giving up after [`KEYCHAIN_WAIT`].
pub(crate) fn with_timeout<T: Send + 'static>(
    job: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    if KEYCHAIN_SILENT.load(Ordering::Relaxed) {
        return Err(format!(
            "the keychain did not answer within {KEYCHAIN_WAIT:?} earlier"
        ));
    }
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("keychain".into())
        .spawn(move || {
            let _ = tx.send(job());
        })
        .map_err(|e| format!("cannot start the keychain thread: {e}"))?;
    rx.recv_timeout(KEYCHAIN_WAIT).map_err(|_| {
        KEYCHAIN_SILENT.store(true, Ordering::Relaxed);
        format!("the keychain did not answer within {KEYCHAIN_WAIT:?}")
    })?
}

/// The secret from the keychain, put there first if missing.
fn in_keychain(secret: Secret, legacy_file: &Path) -> Result<String, String> {
    let account = secret.account();
    let legacy = legacy_file.to_owned();
    let (value, migrated) = with_timeout(move || {
        if let Err(e) = keyring::Entry::store_status() {
            return Err(e.to_string());
        }
        let entry = keyring::Entry::new(SERVICE, &account).map_err(|e| e.to_string())?;
        match entry.get_password() {
            Ok(v) if is_secret(&v) => return Ok((v, false)),
            Ok(_) => tracing::warn!("the keychain held a malformed value; replacing it"),
            Err(keyring::Error::NoEntry) => {}
            Err(e) => return Err(e.to_string()),
        }
        let (value, migrated) = match files::read_private_secret(&legacy) {
            Some(v) => (v, true),
            None => (random_secret().map_err(|e| e.to_string())?, false),
        };
        entry.set_password(&value).map_err(|e| e.to_string())?;
        // A store that accepts but does not keep would lose the token.
        match entry.get_password() {
            Ok(back) if back == value => Ok((value, migrated)),
            Ok(_) => Err("the keychain did not keep what was stored".into()),
            Err(e) => Err(format!("the keychain lost what was stored: {e}")),
        }
    })?;
    if migrated {
        match std::fs::remove_file(legacy_file) {
            Ok(()) => tracing::info!(
                file = %legacy_file.display(),
                "moved the {} from its file into the OS keychain",
                secret.what()
            ),
            Err(e) => tracing::warn!(
                file = %legacy_file.display(),
                error = %e,
                "the {} is in the OS keychain now, but its old file could not be removed",
                secret.what()
            ),
        }
    }
    Ok(value)
}

/// 64 hex digits.
pub fn is_secret(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// 256 random bits as 64 hex digits.
pub fn random_secret() -> Result<String, HostError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| HostError::Refused(format!("no randomness: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// 64 hex digits as 32 bytes.
pub fn secret_bytes(hex: &str) -> Result<[u8; 32], HostError> {
    let malformed = || HostError::Refused("a secret must be 64 hex digits".into());
    let mut key = [0u8; 32];
    for (i, byte) in key.iter_mut().enumerate() {
        let pair = hex.get(2 * i..2 * i + 2).ok_or_else(malformed)?;
        *byte = u8::from_str_radix(pair, 16).map_err(|_| malformed())?;
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_64_hex_digits_and_decode() {
        let s = random_secret().expect("random");
        assert!(is_secret(&s));
        assert_ne!(s, random_secret().expect("random"));
        assert!(!is_secret(&s[1..]));
        assert!(!is_secret(&format!("{}g", &s[1..])));
        let bytes = secret_bytes(&s).expect("decodes");
        let back: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(back, s);
    }

    #[test]
    fn an_explicit_file_is_used_and_nothing_else() {
        let dir = std::env::temp_dir().join(format!("deskhand-secrets-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("token");
        let (first, kept) = load_or_create(Secret::Token, Some(&path)).expect("create");
        assert_eq!(kept, KeptIn::File(path.clone()));
        let (again, _) = load_or_create(Secret::Token, Some(&path)).expect("reload");
        assert_eq!(first, again);
        let new = replace(Secret::Token, &kept).expect("replaced");
        assert_ne!(new, first);
        let (after, _) = load_or_create(Secret::Token, Some(&path)).expect("reload");
        assert_eq!(after, new, "the file holds the new secret");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
