//! Reading a window's tree from one `Collection.GetMatches`: the app lists
//! every descendant of the root in document order in one call, then every
//! element is read at once (no `GetChildren`, no waiting on a parent before
//! its children). The tree is rebuilt from that order and each element's
//! child count; when the two do not fit (the app changed in between, or
//! skipped the children of an element that manages its descendants), the
//! caller walks the children instead.

use deskhand_backend::accessibility::{A11yTree, TreeLimits};
use futures_util::StreamExt;

use super::calls::{Caller, Obj};
use super::error::AtspiError;
use super::walk::{self, IN_FLIGHT, Slot};

/// Where an element of a document-order list sits in the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Place {
    parent: usize,
    /// Its index among its parent's children.
    index: u32,
    depth: usize,
}

/// The places of the elements after the first (the root) of a list in
/// document order whose child counts are `counts`; `None` when the counts
/// do not describe one tree of exactly that list (`cut`: the list was cut
/// short, so the last elements' children may be missing).
fn places(counts: &[u32], cut: bool) -> Option<Vec<Place>> {
    // (element, children it still expects, its depth)
    let mut open: Vec<(usize, u32, usize)> = vec![(0, *counts.first()?, 0)];
    let mut out = Vec::with_capacity(counts.len().saturating_sub(1));
    for (i, &count) in counts.iter().enumerate().skip(1) {
        while open.last().is_some_and(|&(_, left, _)| left == 0) {
            open.pop();
        }
        let (parent, left, depth) = open.last_mut()?;
        let index = counts[*parent] - *left;
        *left -= 1;
        out.push(Place {
            parent: *parent,
            index,
            depth: *depth + 1,
        });
        let depth = *depth + 1;
        open.push((i, count, depth));
    }
    let complete = open.iter().all(|&(_, left, _)| left == 0);
    (complete || cut).then_some(out)
}

/// Reads the tree under `root` within `limits` from the app's list of
/// its descendants; `Ok(None)` when the app offers no such list or its
/// list does not fit the child counts.
pub(crate) async fn read_tree(
    caller: &Caller,
    root: Obj,
    limits: &TreeLimits,
) -> Result<Option<A11yTree>, AtspiError> {
    let wanted = limits.max_elements;
    if wanted < 2 {
        return Ok(None);
    }
    let count = i32::try_from(wanted - 1).unwrap_or(i32::MAX);
    let listed = match caller.descendants(&root, count).await {
        Ok(listed) => listed,
        Err(e @ AtspiError::Timeout { .. }) => return Err(e),
        Err(e) => {
            tracing::debug!(error = %e, "no descendant list: walking the children");
            return Ok(None);
        }
    };
    let cut = count > 0 && listed.len() >= count as usize;
    let mut objs = vec![root];
    objs.extend(listed.iter().filter_map(Obj::from_ref));
    let light = limits.structure_only;
    let reads = futures_util::stream::iter(objs.iter().cloned())
        .map(|obj| async move {
            let read = match light {
                true => walk::read_structure(caller, &obj, false).await,
                false => walk::read_node(caller, &obj, false).await,
            };
            read.map(|(info, _)| info)
        })
        .buffered(IN_FLIGHT * 2)
        .collect::<Vec<_>>()
        .await;
    let mut infos = Vec::with_capacity(reads.len());
    for read in reads {
        infos.push(read?);
    }
    let counts: Vec<u32> = infos.iter().map(|i| i.child_count).collect();
    let Some(places) = places(&counts, cut) else {
        tracing::debug!(
            listed = objs.len(),
            "the descendant list does not fit the child counts: walking the children"
        );
        return Ok(None);
    };
    Ok(Some(assemble(objs, infos, &places, limits, cut)))
}

/// The tree of the listed elements at `places`, cut at `limits.max_depth`.
fn assemble(
    objs: Vec<Obj>,
    infos: Vec<walk::Info>,
    places: &[Place],
    limits: &TreeLimits,
    cut: bool,
) -> A11yTree {
    let mut truncated = cut;
    let mut slots: Vec<Slot> = Vec::with_capacity(objs.len());
    // Where each listed element went in `slots` (none: below the depth cut).
    let mut slot_of: Vec<Option<usize>> = vec![None; objs.len()];
    for (i, (obj, info)) in objs.into_iter().zip(infos).enumerate() {
        let (parent, index, depth) = match i.checked_sub(1).map(|p| places[p]) {
            None => (None, 0, 0),
            Some(place) => match slot_of[place.parent] {
                Some(parent) if place.depth <= limits.max_depth => {
                    (Some(parent), place.index, place.depth)
                }
                _ => {
                    truncated = true;
                    continue;
                }
            },
        };
        let me = slots.len();
        slot_of[i] = Some(me);
        if let Some(p) = parent {
            slots[p].children.push(me);
        }
        slots.push(Slot {
            obj,
            index,
            depth,
            info: Some(info),
            children: Vec::new(),
        });
    }
    walk::flatten(slots, truncated)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(parent: usize, index: u32, depth: usize) -> Place {
        Place {
            parent,
            index,
            depth,
        }
    }

    #[test]
    fn document_order_and_child_counts_give_the_tree() {
        // root(2) -> a(2) -> a0, a1; root -> b(0)
        let got = places(&[2, 2, 0, 0, 0], false).expect("fits");
        assert_eq!(got, [at(0, 0, 1), at(1, 0, 2), at(1, 1, 2), at(0, 1, 1)]);
    }

    #[test]
    fn counts_that_do_not_fit_are_refused() {
        assert_eq!(places(&[3, 0, 0], false), None, "a child missing");
        assert_eq!(places(&[1, 0, 0], false), None, "an element too many");
        assert!(
            places(&[3, 0, 0], true).is_some(),
            "a cut list may end early"
        );
        assert_eq!(places(&[], false), None);
        assert_eq!(places(&[0], false), Some(vec![]));
    }
}
