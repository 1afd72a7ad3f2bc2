//! Apps: the person's processes (their pids from libproc, each app named
//! by `NSRunningApplication`, [`crate::processes`]), launches resolved
//! from a bundle id or an app bundle ([`crate::launch`]) and started with
//! `NSWorkspace`'s `openApplicationAtURL` (documents with `openURLs`),
//! never through a shell. What makes a program launchable is its app
//! bundle: one outside the person's home directory makes it an installed
//! app, one inside only names it.

use std::os::unix::fs::MetadataExt;
use std::sync::mpsc;
use std::time::Duration;

use block2::RcBlock;
use deskhand_backend::{
    AppEntry, Apps, BackendError, FileId, LaunchPlan, LaunchTarget, ProcessInfo, RunningProgram,
};
use objc2::rc::Retained;
use objc2_app_kit::{NSRunningApplication, NSWorkspace, NSWorkspaceOpenConfiguration};
use objc2_foundation::{NSArray, NSBundle, NSError, NSString, NSURL};

use super::process::image_of;
use crate::launch::{
    Document, MacTarget, aliases, bundle_of_executable, classify, documents, entry, in_home,
};
use crate::processes::{AppFacts, process_info};

/// How long a launch may take to answer.
const LAUNCH_WAIT: Duration = Duration::from_secs(30);

pub(crate) struct MacApps;

/// Every process id (libproc).
fn all_pids() -> Vec<i32> {
    let mut pids = vec![0i32; 8192];
    let size = (pids.len() * std::mem::size_of::<i32>()) as libc::c_int;
    // SAFETY: the buffer and its size in bytes are passed together.
    let n = unsafe { libc::proc_listallpids(pids.as_mut_ptr().cast(), size) };
    pids.truncate(usize::try_from(n).unwrap_or(0).min(8192));
    pids
}

/// The user id that owns process `pid`.
fn owner_of(pid: i32) -> Option<libc::uid_t> {
    // SAFETY: a zeroed plain C struct is a valid out-parameter.
    let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
    // SAFETY: the struct and its size are passed together.
    let n =
        unsafe { libc::proc_pidinfo(pid, libc::PROC_PIDTBSDINFO, 0, (&raw mut info).cast(), size) };
    (n == size).then_some(info.pbi_uid)
}

/// An app bundle's id and executable (`NSBundle`).
fn bundle_info(path: &str) -> Option<(Option<String>, Option<String>)> {
    let bundle = NSBundle::bundleWithPath(&NSString::from_str(path))?;
    let id = bundle.bundleIdentifier().map(|s| s.to_string());
    let exe = bundle.executablePath().map(|s| s.to_string());
    Some((id, exe))
}

/// What `NSRunningApplication` says of process `pid` (nothing for a
/// process that is not an app). Looked up by pid each time: a name and a
/// bundle id never change, while `NSWorkspace`'s `runningApplications`
/// list is refreshed only by a main run loop, which the daemon does not
/// run.
fn app_facts(pid: i32) -> AppFacts {
    let Some(app) = NSRunningApplication::runningApplicationWithProcessIdentifier(pid) else {
        return AppFacts::default();
    };
    AppFacts {
        localized_name: app.localizedName().map(|s| s.to_string()),
        bundle_id: app.bundleIdentifier().map(|s| s.to_string()),
        executable: app
            .executableURL()
            .and_then(|u| u.path())
            .map(|s| s.to_string()),
    }
}

/// The entries an app bundle gives: one, by its bundle id.
fn entries_of(bundle: &str, id: Option<&str>) -> Vec<AppEntry> {
    let home = std::env::var("HOME").unwrap_or_default();
    id.map(|id| vec![entry(id, in_home(bundle, &home))])
        .unwrap_or_default()
}

fn file_id_of(path: &str) -> Option<FileId> {
    let m = std::fs::metadata(path).ok()?;
    Some(FileId {
        device: m.dev(),
        inode: m.ino(),
    })
}

/// The bundle path a target names.
fn bundle_path(target: &MacTarget) -> Result<String, BackendError> {
    match target {
        MacTarget::BundleId(id) => NSWorkspace::sharedWorkspace()
            .URLForApplicationWithBundleIdentifier(&NSString::from_str(id))
            .and_then(|url| url.path())
            .map(|p| p.to_string())
            .ok_or_else(|| BackendError::InvalidTarget(format!("no app with bundle id {id}"))),
        MacTarget::AppBundle(path) if std::path::Path::new(path).is_dir() => Ok(path.clone()),
        MacTarget::AppBundle(path) => Err(BackendError::InvalidTarget(format!("no app at {path}"))),
    }
}

/// The URL of a document to open with the app.
fn url_of(doc: &Document) -> Result<Retained<NSURL>, BackendError> {
    match doc {
        Document::File(path) => Ok(NSURL::fileURLWithPath(&NSString::from_str(path))),
        Document::Url(url) => NSURL::URLWithString(&NSString::from_str(url))
            .ok_or_else(|| BackendError::InvalidTarget(format!("not a URL: {url}"))),
    }
}

/// Opens the app at `bundle` (with `docs`) and waits for its pid.
fn open(bundle: &str, docs: &[Document]) -> Result<u32, BackendError> {
    let app = NSURL::fileURLWithPath(&NSString::from_str(bundle));
    let config = NSWorkspaceOpenConfiguration::configuration();
    config.setActivates(true);
    let (tx, rx) = mpsc::channel::<Result<u32, String>>();
    let done = RcBlock::new(move |app: *mut NSRunningApplication, error: *mut NSError| {
        // SAFETY: AppKit passes a valid app or error (or null) for the
        // duration of the handler.
        let (app, error) = unsafe { (app.as_ref(), error.as_ref()) };
        let answer = match (app, error) {
            (Some(app), _) => u32::try_from(app.processIdentifier()).map_err(|e| e.to_string()),
            (None, Some(e)) => Err(e.localizedDescription().to_string()),
            (None, None) => Err("no app and no error".into()),
        };
        let _ = tx.send(answer);
    });
    let workspace = NSWorkspace::sharedWorkspace();
    if docs.is_empty() {
        workspace.openApplicationAtURL_configuration_completionHandler(&app, &config, Some(&done));
    } else {
        let urls = docs.iter().map(url_of).collect::<Result<Vec<_>, _>>()?;
        let urls = NSArray::from_retained_slice(&urls);
        workspace.openURLs_withApplicationAtURL_configuration_completionHandler(
            &urls,
            &app,
            &config,
            Some(&done),
        );
    }
    match rx.recv_timeout(LAUNCH_WAIT) {
        Ok(Ok(pid)) => Ok(pid),
        Ok(Err(why)) => Err(BackendError::Failed(format!("openApplicationAtURL: {why}"))),
        Err(_) => Err(BackendError::Failed("the app did not start in time".into())),
    }
}

impl Apps for MacApps {
    fn processes(&mut self) -> Result<Vec<ProcessInfo>, BackendError> {
        // SAFETY: a plain call without arguments.
        let me = unsafe { libc::getuid() };
        Ok(all_pids()
            .into_iter()
            .filter(|pid| *pid > 0 && owner_of(*pid) == Some(me))
            .filter_map(|pid| {
                let facts = app_facts(pid);
                let pid = u32::try_from(pid).ok()?;
                // libproc only where AppKit has no executable.
                let image = facts.needs_image().then(|| image_of(pid)).flatten();
                process_info(pid, &facts, image)
            })
            .collect())
    }

    fn resolve(
        &mut self,
        target: &LaunchTarget,
        args: &[String],
    ) -> Result<LaunchPlan, BackendError> {
        let mac = classify(target).map_err(|r| BackendError::InvalidTarget(r.why().into()))?;
        let bundle = bundle_path(&mac)?;
        let (id, exe) = bundle_info(&bundle)
            .ok_or_else(|| BackendError::InvalidTarget(format!("{bundle} is not an app bundle")))?;
        let program = exe
            .ok_or_else(|| BackendError::InvalidTarget(format!("{bundle} names no executable")))?;
        let exe_name = program.rsplit('/').next();
        Ok(LaunchPlan {
            target: target.clone(),
            aliases: aliases(&bundle, id.as_deref(), exe_name),
            file: file_id_of(&program),
            entries: entries_of(&bundle, id.as_deref()),
            program,
            args: args.to_vec(),
        })
    }

    fn launch(&mut self, plan: &LaunchPlan) -> Result<u32, BackendError> {
        let bundle = bundle_of_executable(&plan.program).ok_or_else(|| {
            BackendError::InvalidTarget(format!("{} is not an app's program", plan.program))
        })?;
        open(bundle, &documents(&plan.args))
    }

    fn file_id(&mut self, path: &str) -> Option<FileId> {
        file_id_of(path)
    }

    fn program_of(&mut self, pid: u32) -> Option<RunningProgram> {
        let exe = image_of(pid)?;
        let entries = bundle_of_executable(&exe)
            .and_then(|bundle| {
                let (id, _) = bundle_info(bundle)?;
                Some(entries_of(bundle, id.as_deref()))
            })
            .unwrap_or_default();
        Some(RunningProgram { exe, entries })
    }
}
