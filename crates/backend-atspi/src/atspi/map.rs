//! AT-SPI roles and states mapped to the engine's normalized ones, and the
//! extents AT-SPI reports mapped to desktop rectangles (bounds).

use atspi::Role as R;
use atspi::State as S;
use atspi::StateSet;
use deskhand_backend::Rect;
use deskhand_backend::accessibility::{Role, State};

/// The normalized role of an AT-SPI role; one without a normalized name
/// keeps AT-SPI's own name, snake_case (`layered_pane`).
pub(crate) fn role(raw: R) -> Role {
    match raw {
        R::Frame | R::Window => Role::Window,
        R::Dialog | R::Alert | R::FileChooser | R::ColorChooser | R::FontChooser => Role::Dialog,
        R::Button | R::PushButtonMenu => Role::Button,
        R::ToggleButton => Role::ToggleButton,
        R::CheckBox => Role::CheckBox,
        R::RadioButton => Role::RadioButton,
        R::Entry | R::Text | R::Terminal => Role::TextField,
        R::PasswordText => Role::PasswordText,
        R::SpinButton => Role::SpinButton,
        R::Slider => Role::Slider,
        R::ComboBox => Role::ComboBox,
        R::Label | R::Static | R::Caption | R::AcceleratorLabel => Role::Label,
        R::Link => Role::Link,
        R::Image | R::Icon => Role::Image,
        R::List | R::ListBox => Role::List,
        R::ListItem => Role::ListItem,
        R::Table => Role::Table,
        R::TableCell => Role::TableCell,
        R::Tree | R::TreeTable => Role::Tree,
        R::TreeItem => Role::TreeItem,
        R::MenuBar => Role::MenuBar,
        R::Menu | R::PopupMenu => Role::Menu,
        R::MenuItem | R::CheckMenuItem | R::RadioMenuItem | R::TearoffMenuItem => Role::MenuItem,
        R::ToolBar => Role::ToolBar,
        R::StatusBar => Role::StatusBar,
        R::PageTabList => Role::TabList,
        R::PageTab => Role::Tab,
        R::ScrollPane => Role::ScrollPane,
        R::ScrollBar => Role::ScrollBar,
        R::DocumentFrame
        | R::DocumentWeb
        | R::DocumentText
        | R::DocumentEmail
        | R::DocumentSpreadsheet
        | R::DocumentPresentation => Role::Document,
        R::Panel | R::Filler => Role::Panel,
        R::Separator => Role::Separator,
        R::ProgressBar | R::LevelBar => Role::ProgressBar,
        other => Role::Other(other.name().replace(' ', "_")),
    }
}

/// The engine's states of an AT-SPI state set, sorted. A password role
/// adds [`State::Secure`]: AT-SPI has no state of its own for it.
pub(crate) fn states(raw: StateSet, role: &Role) -> Vec<State> {
    let mut out: Vec<State> = raw.iter().filter_map(state).collect();
    if *role == Role::PasswordText {
        out.push(State::Secure);
    }
    out.sort();
    out.dedup();
    out
}

/// The engine's state for one AT-SPI state, when it has one.
fn state(raw: S) -> Option<State> {
    Some(match raw {
        S::Focused => State::Focused,
        S::Focusable => State::Focusable,
        S::Enabled => State::Enabled,
        S::Sensitive => State::Sensitive,
        S::Checked => State::Checked,
        S::Indeterminate => State::Indeterminate,
        S::Pressed => State::Pressed,
        S::Selected => State::Selected,
        S::Selectable => State::Selectable,
        S::Expanded => State::Expanded,
        S::Expandable => State::Expandable,
        S::Editable => State::Editable,
        S::ReadOnly => State::ReadOnly,
        S::MultiLine => State::MultiLine,
        S::Visible => State::Visible,
        S::Showing => State::Showing,
        S::Active => State::Active,
        S::Modal => State::Modal,
        S::HasPopup => State::HasPopup,
        S::Required => State::Required,
        _ => return None,
    })
}

/// A desktop rectangle of AT-SPI extents `(x, y, width, height)`; `None`
/// for an element with no area or place (GTK reports `-1` or `0` sizes for
/// elements that are not laid out, and `i32::MIN` positions for rows that
/// are not drawn).
pub(crate) fn bounds((x, y, w, h): (i32, i32, i32, i32)) -> Option<Rect> {
    if x == i32::MIN || y == i32::MIN {
        return None;
    }
    let width = u32::try_from(w).ok().filter(|w| *w > 0)?;
    let height = u32::try_from(h).ok().filter(|h| *h > 0)?;
    Some(Rect::new(x, y, width, height))
}

/// The default action of an element offering `actions`: the first of
/// `click`, `press`, `activate`, `toggle` it offers, else its only one.
pub(crate) fn default_action(actions: &[String]) -> Option<usize> {
    // In this order: GTK buttons offer `click`, Qt's `press`.
    const PREFERRED: [&str; 4] = ["click", "press", "activate", "toggle"];
    PREFERRED
        .iter()
        .find_map(|p| actions.iter().position(|a| a.eq_ignore_ascii_case(p)))
        .or_else(|| (actions.len() == 1).then_some(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_normalize_and_unknown_ones_keep_their_name() {
        assert_eq!(role(R::Frame), Role::Window);
        assert_eq!(role(R::Entry), Role::TextField);
        assert_eq!(role(R::PasswordText), Role::PasswordText);
        assert_eq!(role(R::Button), Role::Button);
        assert_eq!(role(R::LayeredPane), Role::Other("layered_pane".into()));
    }

    #[test]
    fn password_fields_are_secure_and_states_are_sorted() {
        let raw = StateSet::new(S::Focused | S::Editable | S::Enabled);
        let s = states(raw, &Role::PasswordText);
        assert_eq!(
            s,
            vec![
                State::Focused,
                State::Enabled,
                State::Editable,
                State::Secure
            ]
        );
        assert!(!states(raw, &Role::TextField).contains(&State::Secure));
    }

    #[test]
    fn extents_without_area_are_no_bounds() {
        assert_eq!(bounds((5, 6, 7, 8)), Some(Rect::new(5, 6, 7, 8)));
        assert_eq!(bounds((-1, -1, -1, -1)), None);
        assert_eq!(bounds((3, 3, 0, 10)), None);
        assert_eq!(bounds((i32::MIN, i32::MIN, 300, 21)), None);
    }

    #[test]
    fn default_action_prefers_click_then_the_only_one() {
        let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(default_action(&a(&["press", "click"])), Some(1));
        assert_eq!(default_action(&a(&["activate"])), Some(0));
        assert_eq!(default_action(&a(&["jump"])), Some(0));
        assert_eq!(default_action(&a(&["jump", "dance"])), None);
        assert_eq!(default_action(&[]), None);
    }
}
