//! Owner-only files on Windows: a protected DACL (nothing inherited from
//! the folder above) with one entry, full access for the user deskhand
//! runs as. A directory's entry is inherited by what is created inside
//! it. Written as SDDL and applied with `SetFileSecurityW`; the SDDL is
//! a plain function, tested everywhere.
//!
//! Under Wine that DACL would become mode 0770 on the Unix side (see
//! [`crate::wine`]): there the descriptor names OWNER RIGHTS (`S-1-3-4`,
//! in no token) as its owner and gives only it access, which Wine maps to
//! the user's bits alone: 0600 files, 0700 folders.

/// The SDDL of an owner-only DACL for the user `sid` (`S-1-5-21-…`): on a
/// directory the entry is inherited by files and folders created in it.
pub fn owner_only_sddl(sid: &str, directory: bool) -> String {
    let inherit = if directory { "OICI" } else { "" };
    format!("D:P(A;{inherit};FA;;;{sid})")
}

/// The SDDL of an owner-only object under Wine: owner and only entry
/// OWNER RIGHTS, which Wine's server turns into user-only mode bits. A
/// file gets read, write, delete and its DACL and owner (0600; no execute,
/// which would be 0700), a folder full access, inherited (0700).
pub fn wine_owner_only_sddl(directory: bool) -> &'static str {
    if directory {
        "O:S-1-3-4D:P(A;OICI;FA;;;S-1-3-4)"
    } else {
        "O:S-1-3-4D:P(A;;FRFWSDWDWO;;;S-1-3-4)"
    }
}

/// Every account, as SDDL names it: Everyone, Users, Authenticated
/// Users, Interactive, Guests and Anonymous, by alias and by SID.
const ALL: [&str; 12] = [
    "WD",
    "BU",
    "AU",
    "IU",
    "BG",
    "AN",
    "S-1-1-0",
    "S-1-5-32-545",
    "S-1-5-11",
    "S-1-5-4",
    "S-1-5-32-546",
    "S-1-5-7",
];

/// The allowed entries of a DACL in SDDL for [`ALL`] that apply to the
/// object itself (not inherit-only): each trustee and its rights.
fn entries_for_all(sddl: &str) -> impl Iterator<Item = (&str, &str)> {
    sddl.split('(').skip(1).filter_map(|entry| {
        let fields: Vec<&str> = entry.trim_end_matches(')').split(';').collect();
        let (kind, flags, rights, sid) = (
            *fields.first()?,
            *fields.get(1)?,
            *fields.get(2)?,
            *fields.get(5)?,
        );
        (kind == "A" && !flags.contains("IO") && ALL.contains(&sid)).then_some((sid, rights))
    })
}

/// Whether SDDL rights (`FA`, `DCLC`, `0x1301ff`) let one create, replace
/// or delete what is in a folder, or change its DACL or owner.
fn grants_write(rights: &str) -> bool {
    // FILE_ADD_FILE, FILE_ADD_SUBDIRECTORY, FILE_DELETE_CHILD, WRITE_DAC,
    // WRITE_OWNER, GENERIC_ALL, GENERIC_WRITE.
    const WRITE: u32 = 0x2 | 0x4 | 0x40 | 0x4_0000 | 0x8_0000 | 0x1000_0000 | 0x4000_0000;
    if let Some(hex) = rights
        .strip_prefix("0x")
        .or_else(|| rights.strip_prefix("0X"))
    {
        return u32::from_str_radix(hex, 16).map_or(true, |mask| mask & WRITE != 0);
    }
    rights.as_bytes().chunks(2).any(|code| {
        matches!(
            code,
            b"FA" | b"FW" | b"GA" | b"GW" | b"WD" | b"WO" | b"DC" | b"LC" | b"DT"
        )
    })
}

/// Whether a DACL in SDDL lets every account in (Everyone, Users,
/// Authenticated Users, …): the trustees and the rights each gets.
pub fn open_to_all(sddl: &str) -> Option<String> {
    if sddl.contains("D:NO_ACCESS_CONTROL") {
        return Some("no DACL: every account has full access".into());
    }
    let open: Vec<String> = entries_for_all(sddl)
        .map(|(sid, rights)| format!("{sid}: {rights}"))
        .collect();
    (!open.is_empty()).then(|| open.join(", "))
}

/// Whether a folder's DACL in SDDL lets every account (Everyone, Users,
/// Authenticated Users, …) create, replace or delete what is in it: the
/// trustees and the rights each gets.
pub fn writable_by_all(sddl: &str) -> Option<String> {
    if sddl.contains("D:NO_ACCESS_CONTROL") {
        return Some("no DACL: every account has full access".into());
    }
    let open: Vec<String> = entries_for_all(sddl)
        .filter(|(_, rights)| grants_write(rights))
        .map(|(sid, rights)| format!("{sid}: {rights}"))
        .collect();
    (!open.is_empty()).then(|| open.join(", "))
}

#[cfg(windows)]
pub(crate) use imp::restrict;
#[cfg(windows)]
pub use imp::sddl_of;

#[cfg(windows)]
mod imp {
    use std::io;
    use std::path::Path;

    use windows::Win32::Foundation::{CloseHandle, HANDLE, HLOCAL, LocalFree};
    use windows::Win32::Security::Authorization::{
        ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW,
        SDDL_REVISION_1,
    };
    use windows::Win32::Security::{
        DACL_SECURITY_INFORMATION, GetTokenInformation, OBJECT_SECURITY_INFORMATION,
        OWNER_SECURITY_INFORMATION, PROTECTED_DACL_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR,
        SetFileSecurityW, TOKEN_QUERY, TOKEN_USER, TokenUser,
    };
    use windows::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};
    use windows::core::{HSTRING, PWSTR};

    use super::{owner_only_sddl, wine_owner_only_sddl};

    /// A security descriptor Windows allocated, freed when dropped.
    struct Descriptor(PSECURITY_DESCRIPTOR);

    impl Drop for Descriptor {
        fn drop(&mut self) {
            // SAFETY: allocated by Windows with LocalAlloc, freed once.
            unsafe { LocalFree(Some(HLOCAL(self.0.0))) };
        }
    }

    impl Descriptor {
        /// The descriptor of `sddl`.
        fn of(sddl: &str) -> io::Result<Self> {
            let mut sd = PSECURITY_DESCRIPTOR::default();
            // SAFETY: an out-parameter, freed by Drop.
            unsafe {
                ConvertStringSecurityDescriptorToSecurityDescriptorW(
                    &HSTRING::from(sddl),
                    SDDL_REVISION_1,
                    &mut sd,
                    None,
                )
            }
            .map_err(io::Error::other)?;
            Ok(Self(sd))
        }
    }

    /// What is set: the DACL, protected from inheritance.
    fn what() -> OBJECT_SECURITY_INFORMATION {
        DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION
    }

    /// The SID of the user this process runs as, as text.
    fn user_sid() -> io::Result<String> {
        let mut token = HANDLE::default();
        // SAFETY: the token is closed below; the buffer is sized by the
        // first call and read as the TOKEN_USER it holds.
        unsafe {
            OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token)
                .map_err(io::Error::other)?;
            let mut needed = 0u32;
            let _ = GetTokenInformation(token, TokenUser, None, 0, &mut needed);
            let mut buf = vec![0u64; (needed as usize).div_ceil(8)];
            let read = GetTokenInformation(
                token,
                TokenUser,
                Some(buf.as_mut_ptr().cast()),
                needed,
                &mut needed,
            );
            let _ = CloseHandle(token);
            read.map_err(io::Error::other)?;
            let user = &*(buf.as_ptr().cast::<TOKEN_USER>());
            let mut text = PWSTR::null();
            ConvertSidToStringSidW(user.User.Sid, &mut text).map_err(io::Error::other)?;
            let sid = text.to_string().map_err(io::Error::other);
            LocalFree(Some(HLOCAL(text.0.cast())));
            sid
        }
    }

    /// Makes the file or directory at `path` this process's user's only.
    /// The whole descriptor is set as built (its DACL marked protected):
    /// `SetNamedSecurityInfoW` would merge in the parent's inheritable
    /// entries where the object's current DACL is not protected (Wine).
    pub(crate) fn restrict(path: &Path, directory: bool) -> io::Result<()> {
        let (sd, what) = if crate::wine::running() {
            let sd = Descriptor::of(wine_owner_only_sddl(directory))?;
            (sd, what() | OWNER_SECURITY_INFORMATION)
        } else {
            (
                Descriptor::of(&owner_only_sddl(&user_sid()?, directory))?,
                what(),
            )
        };
        // SAFETY: a path and a descriptor this function owns.
        let set = unsafe { SetFileSecurityW(&HSTRING::from(path.as_os_str()), what, sd.0) };
        match set.as_bool() {
            true => Ok(()),
            false => Err(io::Error::last_os_error()),
        }
    }

    /// The DACL of `path` as SDDL (`D:P(A;;FA;;;S-1-5-21-…)`): under Wine,
    /// what it reads back from the Unix mode (the user's and others' bits;
    /// Wine reports no group bits).
    pub fn sddl_of(path: &Path) -> io::Result<String> {
        use windows::Win32::Security::Authorization::{
            ConvertSecurityDescriptorToStringSecurityDescriptorW, GetNamedSecurityInfoW,
            SE_FILE_OBJECT,
        };
        let checked = |e: windows::Win32::Foundation::WIN32_ERROR| match e.is_ok() {
            true => Ok(()),
            false => Err(io::Error::from_raw_os_error(e.0 as i32)),
        };
        let mut sd = PSECURITY_DESCRIPTOR::default();
        // SAFETY: out-parameters; the descriptor is freed by Drop.
        checked(unsafe {
            GetNamedSecurityInfoW(
                &HSTRING::from(path.as_os_str()),
                SE_FILE_OBJECT,
                DACL_SECURITY_INFORMATION,
                None,
                None,
                None,
                None,
                &mut sd,
            )
        })?;
        let sd = Descriptor(sd);
        let mut text = PWSTR::null();
        // SAFETY: a descriptor this function owns; the text is freed here.
        unsafe {
            ConvertSecurityDescriptorToStringSecurityDescriptorW(
                sd.0,
                SDDL_REVISION_1,
                DACL_SECURITY_INFORMATION,
                &mut text,
                None,
            )
            .map_err(io::Error::other)?;
            let sddl = text.to_string().map_err(io::Error::other);
            LocalFree(Some(HLOCAL(text.0.cast())));
            sddl
        }
    }

    /// Whether only this user (and the system) may use `path`: every entry
    /// of its DACL is for them, and theirs is full access. (Wine 8 keeps no
    /// DACL, only the unix mode it maps to, and reads back SYSTEM's entry
    /// and no protection: so the check is of who gets in, not of the text.)
    #[cfg(test)]
    pub(crate) fn is_owner_only_path(path: &Path) -> io::Result<bool> {
        let sddl = sddl_of(path)?;
        let user = user_sid()?;
        let entries: Vec<(&str, &str)> = sddl
            .split('(')
            .skip(1)
            .filter_map(|e| {
                let fields: Vec<&str> = e.trim_end_matches(')').split(';').collect();
                Some((*fields.get(2)?, *fields.get(5)?))
            })
            .collect();
        let only_us = entries.iter().all(|(_, sid)| *sid == user || *sid == "SY");
        let ours = entries
            .iter()
            .any(|(rights, sid)| *sid == user && *rights == "FA");
        Ok(only_us && ours)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Windows only (CI runs it under Wine): what deskhand writes and the
    /// directories it keeps carry the owner-only DACL, nothing else.
    #[cfg(windows)]
    #[test]
    fn files_and_directories_get_the_owner_only_dacl() {
        use imp::{is_owner_only_path, sddl_of};
        let dir = std::env::temp_dir().join(format!("deskhand-acl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory");
        crate::make_dir_owner_only(&dir).expect("restricted");
        assert!(
            is_owner_only_path(&dir).expect("read"),
            "{:?}",
            sddl_of(&dir)
        );
        let token = dir.join("token");
        crate::write_atomic(&token, b"secret").expect("written");
        assert!(
            is_owner_only_path(&token).expect("read"),
            "{:?}",
            sddl_of(&token)
        );
        let log = dir.join("audit.log");
        drop(crate::open_append(&log).expect("opened"));
        assert!(
            is_owner_only_path(&log).expect("read"),
            "{:?}",
            sddl_of(&log)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn under_wine_the_only_entry_is_the_owner_s_which_is_in_no_token() {
        assert_eq!(
            wine_owner_only_sddl(false),
            "O:S-1-3-4D:P(A;;FRFWSDWDWO;;;S-1-3-4)"
        );
        assert!(wine_owner_only_sddl(true).contains("(A;OICI;FA;;;S-1-3-4)"));
        assert!(
            !wine_owner_only_sddl(false).contains("FA;"),
            "no execute bit"
        );
    }

    #[test]
    fn entries_for_everyone_users_or_authenticated_users_are_open_to_all() {
        // What Wine reads back for a 0644 file and a 0600 one.
        let user = "S-1-5-21-0-0-0-1000";
        let open = format!("D:(A;;FA;;;SY)(A;;FA;;;{user})(A;;0x1200a9;;;WD)");
        assert_eq!(open_to_all(&open).as_deref(), Some("WD: 0x1200a9"));
        assert_eq!(
            open_to_all(&format!("D:(A;;FA;;;SY)(A;;FA;;;{user})")),
            None
        );
        assert!(open_to_all("D:(A;;FR;;;BU)(D;;FA;;;AU)").is_some_and(|o| !o.contains("AU")));
        assert_eq!(open_to_all("D:(A;OICIIO;FA;;;WD)"), None, "inherit-only");
    }

    #[test]
    fn a_folder_every_account_may_write_to_is_told_from_one_they_may_read() {
        // What Wine 8 reads back for 0777, 1777 (/tmp) and 0755 folders.
        let user = "S-1-5-21-0-0-0-1000";
        let mode = |all: &str| format!("D:(A;OICI;FA;;;SY)(A;OICI;FA;;;{user})(A;OICI;{all};;;WD)");
        assert_eq!(
            writable_by_all(&mode("0x1301ff")).as_deref(),
            Some("WD: 0x1301ff")
        );
        assert_eq!(writable_by_all(&mode("0x1200a9")), None);
        // As Windows writes them: Users may add files, Everyone full.
        assert!(writable_by_all("D:P(A;OICI;FA;;;SY)(A;CI;DCLC;;;BU)").is_some());
        assert!(writable_by_all("D:(A;OICI;FA;;;S-1-1-0)").is_some());
        assert!(writable_by_all("D:(A;OICI;GW;;;AU)").is_some());
        assert_eq!(writable_by_all("D:(A;OICI;FRFX;;;BU)"), None);
        assert_eq!(writable_by_all(&format!("D:(A;OICI;FA;;;{user})")), None);
        assert_eq!(writable_by_all("D:(D;OICI;FA;;;WD)"), None, "a denial");
        assert!(writable_by_all("D:NO_ACCESS_CONTROL").is_some(), "no DACL");
    }

    #[test]
    fn the_dacl_is_protected_with_one_entry_for_the_user() {
        let sid = "S-1-5-21-1-2-3-1001";
        assert_eq!(
            owner_only_sddl(sid, false),
            "D:P(A;;FA;;;S-1-5-21-1-2-3-1001)"
        );
        assert_eq!(
            owner_only_sddl(sid, true),
            "D:P(A;OICI;FA;;;S-1-5-21-1-2-3-1001)"
        );
    }
}
