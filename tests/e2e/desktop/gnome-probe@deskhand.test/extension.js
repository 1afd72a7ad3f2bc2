// The tests' own look at GNOME Shell (tests/e2e/desktop/wayland.py): where
// the pointer is and which windows are where, read from the compositor
// apart from deskhand and its extension under test. Read-only.
'use strict';

const { Gio } = imports.gi;
const Main = imports.ui.main;

const IFACE = `<node>
  <interface name="dev.deskhand.test.Probe">
    <method name="Pointer">
      <arg type="i" direction="out" name="x"/>
      <arg type="i" direction="out" name="y"/>
      <arg type="u" direction="out" name="buttons"/>
    </method>
    <method name="ListWindows"><arg type="s" direction="out" name="windows"/></method>
    <method name="StatusMenu"><arg type="s" direction="out" name="menu"/></method>
    <method name="TopBar"><arg type="s" direction="out" name="rect"/></method>
    <method name="Notify"><arg type="s" direction="in" name="summary"/></method>
  </interface>
</node>`;

function rectOf(actor) {
    const [x, y] = actor.get_transformed_position();
    const [width, height] = actor.get_transformed_size();
    return { x: Math.round(x), y: Math.round(y), width: Math.round(width),
        height: Math.round(height) };
}

class Probe {
    // A notification of the shell's own, its banner shown at the top.
    Notify(summary) {
        Main.notify(summary, 'from the tests');
    }

    // GNOME's top bar (the panel box) where the shell placed it.
    TopBar() {
        return JSON.stringify(rectOf(Main.layoutManager.panelBox));
    }

    // deskhand's menu in the top bar: its button's place and name, and
    // while open its items' words and places (null when it is not there).
    StatusMenu() {
        const button = Main.panel.statusArea['deskhand'];
        if (!button)
            return 'null';
        const menu = button.menu;
        return JSON.stringify({
            rect: rectOf(button),
            name: button.accessible_name || '',
            open: menu.isOpen,
            items: menu.isOpen ? menu._getMenuItems().flatMap(i => i._getMenuItems
                ? i._getMenuItems() : [i]).filter(i => i.label).map(i => ({
                label: i.label.text, reactive: i.reactive, rect: rectOf(i),
            })) : [],
        });
    }

    Pointer() {
        const [x, y, mods] = global.get_pointer();
        return [x, y, (mods >> 8) & 0x1f];
    }

    ListWindows() {
        const focus = global.display.get_focus_window();
        return JSON.stringify(global.get_window_actors().map(a => a.meta_window).map(w => {
            const r = w.get_frame_rect();
            const b = w.get_buffer_rect();
            return {
                title: w.get_title() || '',
                pid: w.get_pid(),
                rect: { x: r.x, y: r.y, width: r.width, height: r.height },
                buffer: { x: b.x, y: b.y, width: b.width, height: b.height },
                focused: w === focus,
            };
        }));
    }
}

class Extension {
    enable() {
        this._dbus = Gio.DBusExportedObject.wrapJSObject(IFACE, new Probe());
        this._dbus.export(Gio.DBus.session, '/dev/deskhand/test/Probe');
    }

    disable() {
        this._dbus.unexport();
    }
}

// eslint-disable-next-line no-unused-vars
function init() {
    return new Extension();
}
