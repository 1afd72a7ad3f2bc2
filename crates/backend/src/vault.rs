//! Where a backend keeps a small secret across starts, such as a portal's
//! restore token (whoever holds it is granted the screen again without a
//! dialog). The host decides where: the OS keychain, else a private file.

/// A host's store for a backend's secrets, each under a name safe for a
/// file name.
pub trait Vault: Send + Sync + std::fmt::Debug {
    /// The value kept under `name`, if any.
    fn load(&self, name: &str) -> Option<String>;
    /// Keeps `value` under `name`, replacing what was there; says why
    /// when it could not be kept anywhere.
    fn store(&self, name: &str, value: &str) -> Result<(), String>;
}
