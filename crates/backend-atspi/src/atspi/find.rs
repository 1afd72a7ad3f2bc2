//! From a window to its accessible root (an element of the `frame` role),
//! and from a root along a path to an element: the window's pid, the
//! registry's apps whose bus name has that pid, then the app's top-level
//! element with the window's title (and, when several have it, the one
//! whose bounds are closest to the window's).

use std::collections::HashMap;
use std::sync::Mutex;

use deskhand_backend::accessibility::{Candidate, NodePath, WindowRef, choose_root};
use futures_util::future::join_all;

use super::calls::{Caller, Obj};
use super::error::AtspiError;
use super::map;

/// The pids of the apps' bus names already asked for. A unique name is
/// never reused while the bus runs, so an entry never goes stale.
#[derive(Debug, Default)]
pub(crate) struct PidCache(Mutex<HashMap<String, u32>>);

impl PidCache {
    /// The pid owning `bus`, from the cache or the bus.
    async fn pid(&self, caller: &Caller, bus: &str) -> Result<u32, AtspiError> {
        if let Some(pid) = self.lock().get(bus) {
            return Ok(*pid);
        }
        let pid = caller.pid_of(bus).await?;
        self.lock().insert(bus.to_owned(), pid);
        Ok(pid)
    }

    /// Forgets every entry (the bus was connected again).
    pub(crate) fn clear(&self) {
        self.lock().clear();
    }

    /// The map, even after a panic elsewhere (it holds no invariant).
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, u32>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The root elements of the apps owned by process `pid`.
async fn apps_of(caller: &Caller, pids: &PidCache, pid: u32) -> Result<Vec<Obj>, AtspiError> {
    let apps: Vec<Obj> = caller
        .children(&Obj::registry_root())
        .await?
        .iter()
        .filter_map(Obj::from_ref)
        .collect();
    let owners = join_all(apps.iter().map(|a| pids.pid(caller, &a.bus))).await;
    Ok(apps
        .into_iter()
        .zip(owners)
        .filter_map(|(app, owner)| match owner {
            Ok(p) if p == pid => Some(app),
            Ok(_) => None,
            Err(e) => {
                // An app that quit since the registry listed it.
                tracing::debug!(bus = %app.bus, error = %e, "no pid for an app");
                None
            }
        })
        .collect())
}

/// The top-level elements of `app` with their names and bounds.
async fn candidates(caller: &Caller, app: &Obj) -> Result<Vec<Candidate<Obj>>, AtspiError> {
    let tops: Vec<Obj> = caller
        .children(app)
        .await?
        .iter()
        .filter_map(Obj::from_ref)
        .collect();
    let read = tops.into_iter().map(|obj| async move {
        let (props, extents) = tokio::join!(caller.props(&obj), caller.extents(&obj));
        Ok::<_, AtspiError>(Candidate {
            name: props?.name,
            bounds: extents.ok().and_then(map::bounds),
            item: obj,
        })
    });
    join_all(read).await.into_iter().collect()
}

/// The accessible root (the `frame` role) of `window`.
pub(crate) async fn root_of(
    caller: &Caller,
    pids: &PidCache,
    window: &WindowRef,
) -> Result<Obj, AtspiError> {
    let apps = apps_of(caller, pids, window.pid).await?;
    if apps.is_empty() {
        return Err(AtspiError::NotFound(format!(
            "process {} has no app on the accessibility bus",
            window.pid
        )));
    }
    let mut all = Vec::new();
    for found in join_all(apps.iter().map(|a| candidates(caller, a))).await {
        all.extend(found?);
    }
    choose_root(all, window).ok_or_else(|| {
        AtspiError::NotFound(format!(
            "process {} has no accessible window titled {:?}",
            window.pid, window.title
        ))
    })
}

/// The element at `path` below `root`. Each ancestor's child count is
/// checked against `counts` (root first; shorter lists check fewer), so a
/// child added or removed on the way is caught before the act.
pub(crate) async fn follow(
    caller: &Caller,
    root: Obj,
    path: &NodePath,
    counts: &[u32],
) -> Result<Obj, AtspiError> {
    let mut at = root;
    for (depth, step) in path.0.iter().enumerate() {
        let expected = counts.get(depth).copied();
        let count = async {
            match expected {
                Some(_) => caller.child_count(&at).await.map(Some),
                None => Ok(None),
            }
        };
        let (child, count) = tokio::join!(caller.child_at(&at, *step), count);
        if let (Some(now), Some(then)) = (count?, expected)
            && i64::from(now) != i64::from(then)
        {
            return Err(AtspiError::NotFound(format!(
                "level {} of {path} has {now} children now, not {then}: the window changed",
                depth + 1
            )));
        }
        at = child?.ok_or_else(|| {
            AtspiError::NotFound(format!(
                "no element at {path} (level {} has no child {step})",
                depth + 1
            ))
        })?;
    }
    Ok(at)
}
