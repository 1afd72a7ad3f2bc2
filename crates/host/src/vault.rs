//! The backends' vault ([`deskhand_platform::Vault`]): a secret a backend
//! keeps across starts (a portal's restore token) goes into the OS
//! keychain when one answers, else into a private file in the state
//! directory, said in the log. The daemon lets go of the keychain after
//! start-up, so each use here opens its own connection and closes it.
//! Under Wine it keeps nothing in the Credential Manager (see
//! [`crate::secrets`]).

use std::path::PathBuf;
use std::sync::Arc;

use crate::files;
use crate::secrets::{SERVICE, with_timeout};

/// The host's vault.
#[derive(Debug, Default, Clone, Copy)]
pub struct HostVault;

impl HostVault {
    /// The vault as the platform takes it.
    pub fn shared() -> Arc<dyn deskhand_platform::Vault> {
        Arc::new(Self)
    }
}

/// A name the vault takes: a plain file name.
fn checked(name: &str) -> Result<&str, String> {
    let plain = !name.is_empty()
        && name.len() <= 100
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if plain {
        Ok(name)
    } else {
        Err(format!("{name:?} is not a plain name for a kept secret"))
    }
}

fn file_of(name: &str) -> PathBuf {
    files::state_dir().join(name)
}

/// The keychain account of `name`: it and the config directory it
/// belongs to, as the token's.
fn account(name: &str) -> String {
    format!("{name} for {}", files::config_dir().display())
}

/// The OS keychain for one use: the default store while start-up holds
/// it, else (Linux) a new Secret Service connection.
fn keychain() -> Result<Arc<keyring_core::CredentialStore>, String> {
    if let Some(why) = crate::secrets::keychain_refused() {
        return Err(why);
    }
    if let Some(store) = keyring_core::get_default_store() {
        return Ok(store);
    }
    #[cfg(target_os = "linux")]
    {
        zbus_secret_service_keyring_store::Store::new()
            .map(|s| s as Arc<keyring_core::CredentialStore>)
            .map_err(|e| e.to_string())
    }
    #[cfg(not(target_os = "linux"))]
    Err("the keychain was let go after start-up".into())
}

fn keychain_get(name: &str) -> Result<Option<String>, String> {
    let account = account(name);
    with_timeout(move || {
        let entry = keyring_core::Entry::new_in_store(&keychain()?, SERVICE, &account)
            .map_err(|e| e.to_string())?;
        match entry.get_password() {
            Ok(v) => Ok(Some(v)),
            Err(keyring_core::Error::NoEntry) => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    })
}

fn keychain_set(name: &str, value: &str) -> Result<(), String> {
    let (account, value) = (account(name), value.to_owned());
    with_timeout(move || {
        let entry = keyring_core::Entry::new_in_store(&keychain()?, SERVICE, &account)
            .map_err(|e| e.to_string())?;
        entry.set_password(&value).map_err(|e| e.to_string())?;
        match entry.get_password() {
            Ok(back) if back == value => Ok(()),
            Ok(_) => Err("the keychain did not keep what was stored".into()),
            Err(e) => Err(format!("the keychain lost what was stored: {e}")),
        }
    })
}

impl deskhand_platform::Vault for HostVault {
    fn load(&self, name: &str) -> Option<String> {
        let name = checked(name).ok()?;
        match keychain_get(name) {
            Ok(Some(v)) => return Some(v),
            Ok(None) => {}
            Err(why) => tracing::debug!(reason = %why, name, "no keychain to read from"),
        }
        files::read_private_text(&file_of(name))
    }

    fn store(&self, name: &str, value: &str) -> Result<(), String> {
        let name = checked(name)?;
        let file = file_of(name);
        match keychain_set(name, value) {
            Ok(()) => {
                // Kept once: an older copy from a start without a keychain goes.
                let _ = std::fs::remove_file(&file);
                tracing::info!(name, "kept in the OS keychain");
                Ok(())
            }
            Err(why) => {
                tracing::warn!(reason = %why, file = %file.display(), name,
                    "no OS keychain answered; kept in a private file");
                files::write_private_atomic(&file, format!("{value}\n").as_bytes())
                    .map_err(|e| e.to_string())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_file_names_are_taken() {
        for good in ["screencast-grant-wayland-0", "a.b_c"] {
            assert_eq!(checked(good), Ok(good));
        }
        for bad in ["", "../token", "a/b", ".hidden", "a b", &"x".repeat(101)] {
            assert!(checked(bad).is_err(), "{bad:?} was taken");
        }
    }
}
