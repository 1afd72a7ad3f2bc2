//! The AT-SPI calls the backend makes, each one D-Bus round trip bounded
//! by a timeout, decoded into the `atspi` crate's types.

use std::collections::HashMap;
use std::time::Duration;

use deskhand_backend::accessibility::WindowRef;

use atspi::{Action, CoordType, InterfaceSet, ObjectRefOwned, Role, StateSet};
use zbus::zvariant::{ObjectPath, OwnedObjectPath, OwnedValue};

use super::error::AtspiError;

// The AT-SPI interfaces called, and D-Bus's properties interface.
const ACCESSIBLE: &str = "org.a11y.atspi.Accessible";
const COMPONENT: &str = "org.a11y.atspi.Component";
const ACTION: &str = "org.a11y.atspi.Action";
const TEXT: &str = "org.a11y.atspi.Text";
const EDITABLE_TEXT: &str = "org.a11y.atspi.EditableText";
const VALUE: &str = "org.a11y.atspi.Value";
const COLLECTION: &str = "org.a11y.atspi.Collection";
const PROPERTIES: &str = "org.freedesktop.DBus.Properties";

/// The well-known name of the AT-SPI registry on the accessibility bus.
pub(crate) const REGISTRY: &str = "org.a11y.atspi.Registry";
/// The path of every app's (and the registry's) root element.
pub(crate) const ROOT_PATH: &str = "/org/a11y/atspi/accessible/root";

/// `extents` moved by `origin`; unplaced extents (`i32::MIN`) stay as
/// they are.
fn placed((x, y, w, h): (i32, i32, i32, i32), origin: Option<(i32, i32)>) -> (i32, i32, i32, i32) {
    match origin {
        Some((ox, oy)) if x != i32::MIN && y != i32::MIN => {
            (x.saturating_add(ox), y.saturating_add(oy), w, h)
        }
        _ => (x, y, w, h),
    }
}

/// An accessible object: the bus name of the app that serves it, and its
/// object path there.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Obj {
    /// The app's bus name (unique, or the registry's well-known name).
    pub(crate) bus: String,
    /// The object's path.
    pub(crate) path: OwnedObjectPath,
}

impl Obj {
    /// The registry's root: its children are the apps.
    pub(crate) fn registry_root() -> Self {
        Self {
            bus: REGISTRY.to_owned(),
            path: ObjectPath::from_static_str_unchecked(ROOT_PATH).into(),
        }
    }

    /// The object an AT-SPI reference names; `None` for the null reference.
    pub(crate) fn from_ref(r: &ObjectRefOwned) -> Option<Self> {
        if r.is_null() {
            return None;
        }
        Some(Self {
            bus: r.name_as_str()?.to_owned(),
            path: r.path().clone().into(),
        })
    }
}

/// What `Properties.GetAll` gives of an element's Accessible interface.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Props {
    /// Accessible name.
    pub(crate) name: String,
    /// Accessible description.
    pub(crate) description: String,
    /// How many children it says it has.
    pub(crate) child_count: i32,
}

/// A direct (peer-to-peer) connection to one app: its calls skip the
/// bus daemon, which halves the messages of every call.
#[derive(Debug, Clone)]
pub(crate) struct Peer {
    /// The app's bus name.
    pub(crate) bus: String,
    /// The connection to the app's own socket.
    pub(crate) conn: zbus::Connection,
}

/// Makes calls on the bus (or straight to one app), each bounded by
/// `timeout`.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    /// The accessibility bus.
    pub(crate) conn: zbus::Connection,
    /// The bound of every call.
    pub(crate) timeout: Duration,
    /// The app reached directly, when it offers that.
    pub(crate) peer: Option<Peer>,
    /// Where the app's extents count from in desktop pixels (a Wayland
    /// client's surface); `None` when they are desktop coordinates.
    pub(crate) origin: Option<(i32, i32)>,
}

impl Caller {
    /// This caller, placing extents for `window`'s app.
    pub(crate) fn of(mut self, window: &WindowRef) -> Self {
        self.origin = window.surface_origin.map(|p| (p.x, p.y));
        self
    }

    /// Calls `iface.method(body)` on `obj` and decodes the reply as `R`;
    /// `what` names the call in errors.
    async fn call<B, R>(
        &self,
        obj: &Obj,
        iface: &str,
        method: &str,
        body: &B,
        what: &'static str,
    ) -> Result<R, AtspiError>
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
        R: for<'d> zbus::zvariant::DynamicDeserialize<'d>,
    {
        let (conn, destination) = match &self.peer {
            Some(peer) if peer.bus == obj.bus => (&peer.conn, None),
            _ => (&self.conn, Some(obj.bus.as_str())),
        };
        let call = conn.call_method(destination, obj.path.as_str(), Some(iface), method, body);
        let reply = tokio::time::timeout(self.timeout, call)
            .await
            .map_err(|_| AtspiError::Timeout {
                what,
                after: self.timeout,
            })?
            .map_err(AtspiError::call(what))?;
        reply.body().deserialize().map_err(AtspiError::call(what))
    }

    /// The element's role.
    pub(crate) async fn role(&self, obj: &Obj) -> Result<Role, AtspiError> {
        self.call(obj, ACCESSIBLE, "GetRole", &(), "Accessible.GetRole")
            .await
    }

    /// The element's states.
    pub(crate) async fn states(&self, obj: &Obj) -> Result<StateSet, AtspiError> {
        self.call(obj, ACCESSIBLE, "GetState", &(), "Accessible.GetState")
            .await
    }

    /// The interfaces the element implements.
    pub(crate) async fn interfaces(&self, obj: &Obj) -> Result<InterfaceSet, AtspiError> {
        let what = "Accessible.GetInterfaces";
        self.call(obj, ACCESSIBLE, "GetInterfaces", &(), what).await
    }

    /// The element's children, in order.
    pub(crate) async fn children(&self, obj: &Obj) -> Result<Vec<ObjectRefOwned>, AtspiError> {
        let what = "Accessible.GetChildren";
        self.call(obj, ACCESSIBLE, "GetChildren", &(), what).await
    }

    /// Every descendant of the element in document order (pre-order, as
    /// a walk of the children finds them), at most `count` (0: all), from
    /// one `Collection.GetMatches` with a rule every element matches.
    pub(crate) async fn descendants(
        &self,
        obj: &Obj,
        count: i32,
    ) -> Result<Vec<ObjectRefOwned>, AtspiError> {
        // MatchRule (aiia{ss}iaiiasib): no states, attributes, roles or
        // interfaces asked for, each with MATCH_ALL, not inverted.
        const MATCH_ALL: i32 = 1;
        const SORT_CANONICAL: u32 = 1;
        let rule = (
            vec![0i32, 0],
            MATCH_ALL,
            HashMap::<String, String>::new(),
            MATCH_ALL,
            vec![0i32, 0, 0, 0],
            MATCH_ALL,
            Vec::<String>::new(),
            MATCH_ALL,
            false,
        );
        let what = "Collection.GetMatches";
        let body = (rule, SORT_CANONICAL, count, true);
        self.call(obj, COLLECTION, "GetMatches", &body, what).await
    }

    /// The element's `index`-th child.
    pub(crate) async fn child_at(&self, obj: &Obj, index: u32) -> Result<Option<Obj>, AtspiError> {
        let what = "Accessible.GetChildAtIndex";
        let index = i32::try_from(index).unwrap_or(i32::MAX);
        let r: ObjectRefOwned = self
            .call(obj, ACCESSIBLE, "GetChildAtIndex", &(index,), what)
            .await?;
        Ok(Obj::from_ref(&r))
    }

    /// Name, description and child count: in one call, or, from an app
    /// that does not answer `GetAll`, in three.
    pub(crate) async fn props(&self, obj: &Obj) -> Result<Props, AtspiError> {
        let what = "Properties.GetAll(Accessible)";
        let all: HashMap<String, OwnedValue> = match self
            .call(obj, PROPERTIES, "GetAll", &(ACCESSIBLE,), what)
            .await
        {
            Ok(all) => all,
            Err(e @ AtspiError::Timeout { .. }) => return Err(e),
            Err(e) => {
                tracing::debug!(error = %e, "GetAll refused: reading properties one by one");
                self.props_one_by_one(obj).await?
            }
        };
        let text = |key: &str| {
            all.get(key)
                .and_then(|v| v.downcast_ref::<&str>().ok().map(str::to_owned))
                .unwrap_or_default()
        };
        Ok(Props {
            name: text("Name"),
            description: text("Description"),
            child_count: all
                .get("ChildCount")
                .and_then(|v| v.downcast_ref::<i32>().ok())
                .unwrap_or(0),
        })
    }

    /// How many children the element has now.
    pub(crate) async fn child_count(&self, obj: &Obj) -> Result<i32, AtspiError> {
        let what = "Properties.Get(ChildCount)";
        let v: OwnedValue = self
            .call(obj, PROPERTIES, "Get", &(ACCESSIBLE, "ChildCount"), what)
            .await?;
        v.downcast_ref::<i32>()
            .map_err(|e| AtspiError::call(what)(zbus::Error::Variant(e)))
    }

    /// `Name`, `Description` and `ChildCount` with a `Properties.Get` each.
    async fn props_one_by_one(&self, obj: &Obj) -> Result<HashMap<String, OwnedValue>, AtspiError> {
        let what = "Properties.Get(Accessible)";
        let get = |key: &'static str| async move {
            let v: OwnedValue = self
                .call(obj, PROPERTIES, "Get", &(ACCESSIBLE, key), what)
                .await?;
            Ok::<_, AtspiError>((key.to_owned(), v))
        };
        let (name, description, count) =
            tokio::join!(get("Name"), get("Description"), get("ChildCount"));
        Ok(HashMap::from([name?, description?, count?]))
    }

    /// The element's bounds in desktop coordinates: `(x, y, width,
    /// height)`. An app that cannot know where its window is (a Wayland
    /// client) reports them from its surface's corner: `origin` is added.
    pub(crate) async fn extents(&self, obj: &Obj) -> Result<(i32, i32, i32, i32), AtspiError> {
        let what = "Component.GetExtents";
        let extents = self
            .call(obj, COMPONENT, "GetExtents", &(CoordType::Screen,), what)
            .await?;
        Ok(placed(extents, self.origin))
    }

    /// The names of the element's actions, in index order: the stable
    /// names (`click`), not the localized ones `GetActions` gives.
    pub(crate) async fn action_names(&self, obj: &Obj) -> Result<Vec<String>, AtspiError> {
        let actions: Vec<Action> = self
            .call(obj, ACTION, "GetActions", &(), "Action.GetActions")
            .await?;
        let names = (0..actions.len()).map(|i| async move {
            let index = i32::try_from(i).unwrap_or(i32::MAX);
            self.call(obj, ACTION, "GetName", &(index,), "Action.GetName")
                .await
        });
        futures_util::future::join_all(names)
            .await
            .into_iter()
            .collect()
    }

    /// Does the element's action `index`; whether the app says it did.
    pub(crate) async fn do_action(&self, obj: &Obj, index: i32) -> Result<bool, AtspiError> {
        self.call(obj, ACTION, "DoAction", &(index,), "Action.DoAction")
            .await
    }

    /// The element's text from character `start` to `end` (`-1`: the end).
    pub(crate) async fn text(&self, obj: &Obj, start: i32, end: i32) -> Result<String, AtspiError> {
        self.call(obj, TEXT, "GetText", &(start, end), "Text.GetText")
            .await
    }

    /// Replaces the element's whole text; whether the app says it did.
    pub(crate) async fn set_text(&self, obj: &Obj, text: &str) -> Result<bool, AtspiError> {
        let what = "EditableText.SetTextContents";
        self.call(obj, EDITABLE_TEXT, "SetTextContents", &(text,), what)
            .await
    }

    /// The element's current value (Value interface).
    pub(crate) async fn current_value(&self, obj: &Obj) -> Result<f64, AtspiError> {
        let what = "Properties.Get(Value.CurrentValue)";
        let v: OwnedValue = self
            .call(obj, PROPERTIES, "Get", &(VALUE, "CurrentValue"), what)
            .await?;
        v.downcast_ref::<f64>()
            .map_err(|e| AtspiError::call(what)(e.into()))
    }

    /// The address of the app's own socket, for a direct connection
    /// (at-spi2-atk and Qt offer one).
    pub(crate) async fn app_bus_address(&self, app: &Obj) -> Result<String, AtspiError> {
        let what = "Application.GetApplicationBusAddress";
        let root = Obj {
            bus: app.bus.clone(),
            path: ObjectPath::from_static_str_unchecked(ROOT_PATH).into(),
        };
        let iface = "org.a11y.atspi.Application";
        self.call(&root, iface, "GetApplicationBusAddress", &(), what)
            .await
    }

    /// The pid of the process that owns `bus` (a unique name).
    pub(crate) async fn pid_of(&self, bus: &str) -> Result<u32, AtspiError> {
        let what = "DBus.GetConnectionUnixProcessID";
        let dbus = Obj {
            bus: "org.freedesktop.DBus".to_owned(),
            path: ObjectPath::from_static_str_unchecked("/org/freedesktop/DBus").into(),
        };
        self.call(
            &dbus,
            "org.freedesktop.DBus",
            "GetConnectionUnixProcessID",
            &(bus,),
            what,
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::placed;

    #[test]
    fn extents_from_a_surface_are_moved_to_it_unless_unplaced() {
        let origin = Some((72, 79));
        assert_eq!(placed((115, 186, 168, 34), origin), (187, 265, 168, 34));
        assert_eq!(placed((115, 186, 168, 34), None), (115, 186, 168, 34));
        let unplaced = (i32::MIN, i32::MIN, -1, -1);
        assert_eq!(placed(unplaced, origin), unplaced);
    }
}
