// deskhand's part of GNOME Shell on Wayland, where no other client may
// draw above every window or list the windows: the takeover indicator's
// parts as deskhand lays them out (frame, label, Continue and Stop), and
// the window list with focus. Exported on the shell's own session-bus
// connection (org.gnome.Shell, /dev/deskhand/Shell), answering only the
// connection that holds dev.deskhand.Engine when that connection's process
// runs one of deskhand's own programs (ENGINES): no other program may draw,
// type, read windows or the pointer, even one that took the name.
// The portals' dialogs are kept above deskhand's own windows.
// Where GNOME runs no tray host, deskhand's menu in the top bar (status,
// sessions, Pause, Stop all agents, its windows, Quit), shown while the
// engine asks for it; the items chosen go back as the `Chosen` signal.
// This is the body both builds share: `make-extension` puts GNOME 43-44's
// legacy imports or GNOME 45+'s ES module imports around it (Clutter, Gio,
// GLib, Meta, St, Main, PanelMenu and PopupMenu in scope), the ENGINES it
// trusts, and the Extension class that starts and stops the Service below.

const PATH = '/dev/deskhand/Shell';
// How long a commit waits for the app to take it.
const ACK_MS = 500;
// How long a button is on screen before a press on it counts: the press
// of a person who was already clicking where it appeared is not theirs
// on the button (a press under the pointer the moment a move paused).
const PRESS_AFTER_US = 500 * 1000;
const ENGINE = 'dev.deskhand.Engine';
const IFACE = `<node>
  <interface name="dev.deskhand.Shell1">
    <method name="ShowParts"><arg type="s" direction="in" name="parts"/></method>
    <method name="HideParts"/>
    <method name="FrameState"><arg type="s" direction="out" name="state"/></method>
    <method name="ListWindows"><arg type="s" direction="out" name="windows"/></method>
    <method name="Focus">
      <arg type="t" direction="in" name="id"/>
      <arg type="b" direction="in" name="raise"/>
      <arg type="b" direction="out" name="focused"/>
    </method>
    <method name="CommitText">
      <arg type="s" direction="in" name="text"/>
      <arg type="b" direction="out" name="committed"/>
    </method>
    <method name="Pointer">
      <arg type="i" direction="out" name="x"/>
      <arg type="i" direction="out" name="y"/>
      <arg type="u" direction="out" name="buttons"/>
    </method>
    <method name="TopInset"><arg type="u" direction="out" name="pixels"/></method>
    <method name="ShowStatus"><arg type="s" direction="in" name="status"/></method>
    <method name="HideStatus"/>
    <signal name="Pressed"><arg type="s" name="button"/></signal>
    <signal name="Chosen"><arg type="s" name="item"/></signal>
    <property name="Version" type="u" access="read"/>
  </interface>
</node>`;

// The programs whose windows are the desktop's own questions to the
// person (the portals' screen-sharing and remote-desktop dialogs), which
// deskhand's windows must never cover: by their installed paths (Debian
// and Fedora's libexec, Arch's lib), never by name alone, so that no
// program of the person's can put a window of its own above deskhand's
// consent dialog.
const PORTALS = ['/usr/libexec/xdg-desktop-portal-gnome', '/usr/libexec/xdg-desktop-portal-gtk',
    '/usr/lib/xdg-desktop-portal-gnome', '/usr/lib/xdg-desktop-portal-gtk'];

// The window types a person sees as windows (not menus, tooltips, docks).
const LISTED = [Meta.WindowType.NORMAL, Meta.WindowType.DIALOG, Meta.WindowType.MODAL_DIALOG,
    Meta.WindowType.UTILITY, Meta.WindowType.SPLASHSCREEN];

function hex(colour) {
    return `#${(colour & 0xffffff).toString(16).padStart(6, '0')}`;
}

class Indicator {
    constructor(onPress) {
        this._onPress = onPress;
        this._actors = [];
    }

    show(parts) {
        this.hide();
        const shownAt = GLib.get_monotonic_time();
        for (const part of parts) {
            const actor = new St.Button({
                label: part.text || '',
                reactive: Boolean(part.press),
                can_focus: false,
                track_hover: false,
                style: `background-color: ${hex(part.colour)}; color: #ffffff; ` +
                    'font-weight: bold; font-size: 13px; padding: 0; border-radius: 0;',
            });
            actor.set_position(part.rect.x, part.rect.y);
            actor.set_size(part.rect.width, part.rect.height);
            if (part.press)
                this._pressable(actor, part.press, shownAt);
            Main.layoutManager.addTopChrome(actor, { affectsInputRegion: Boolean(part.press) });
            if (part.text && !part.press)
                this._underBanners(actor);
            this._actors.push(actor);
        }
    }

    // The label stays under GNOME's notification banners (shown below the
    // top bar, where the label is), so the person can read them; the
    // frame's strips and the buttons stay above everything.
    _underBanners(actor) {
        const group = Main.layoutManager.uiGroup;
        if (Main.messageTray && Main.messageTray.get_parent() === group)
            group.set_child_below_sibling(actor, Main.messageTray);
    }

    // A click (press and release on the button, as St.Button counts it)
    // is sent only when its press came PRESS_AFTER_US after the button
    // appeared.
    _pressable(actor, press, shownAt) {
        let pressedAt = 0;
        actor.connect('button-press-event', () => {
            pressedAt = GLib.get_monotonic_time();
            return Clutter.EVENT_PROPAGATE;
        });
        actor.connect('clicked', () => {
            if (pressedAt - shownAt < PRESS_AFTER_US)
                log(`deskhand: ${press} pressed ${Math.round((pressedAt - shownAt) / 1000)} ms after it appeared: not counted`);
            else
                this._onPress(press);
        });
    }

    hide() {
        for (const actor of this._actors) {
            Main.layoutManager.removeChrome(actor);
            actor.destroy();
        }
        this._actors = [];
    }

    state() {
        const group = Main.layoutManager.uiGroup;
        return {
            parts: this._actors.length,
            visible: this._actors.every(a => a.visible && a.mapped && a.opacity === 255),
            placed: this._actors.map(a => [a.x, a.y, a.width, a.height]),
            on_top: this._actors.every(a => a.get_parent() === group),
        };
    }
}

// The colour of the top bar's dot in each state deskhand reports.
const STATE_COLOURS = {idle: '#9a9996', connected: '#3584e4', takeover: '#e01b24',
    paused: '#f5c211'};

// deskhand's menu in the top bar: a dot in the state's colour and the
// word deskhand; the status line, one line per session, then the items
// deskhand sends (their ids go back through onChoose).
class TopBarMenu {
    constructor(onChoose) {
        this._onChoose = onChoose;
        this._button = null;
    }

    show(status) {
        if (!this._button)
            this._build(status.items);
        this._dot.set_style(`color: ${STATE_COLOURS[status.state] || STATE_COLOURS.idle};`);
        this._button.accessible_name = `deskhand: ${status.line}`;
        this._status.label.text = status.line;
        this._sessions.removeAll();
        for (const line of status.sessions)
            this._sessions.addMenuItem(new PopupMenu.PopupMenuItem(line, {reactive: false}));
    }

    _build(items) {
        this._button = new PanelMenu.Button(0.0, 'deskhand', false);
        const box = new St.BoxLayout({style_class: 'panel-status-menu-box'});
        this._dot = new St.Label({text: '\u25CF', y_align: Clutter.ActorAlign.CENTER});
        box.add_child(this._dot);
        box.add_child(new St.Label({text: ' deskhand', y_align: Clutter.ActorAlign.CENTER}));
        this._button.add_child(box);
        const menu = this._button.menu;
        this._status = new PopupMenu.PopupMenuItem('', {reactive: false});
        menu.addMenuItem(this._status);
        this._sessions = new PopupMenu.PopupMenuSection();
        menu.addMenuItem(this._sessions);
        menu.addMenuItem(new PopupMenu.PopupSeparatorMenuItem());
        for (const {id, label} of items) {
            const item = new PopupMenu.PopupMenuItem(label);
            item.connect('activate', () => this._onChoose(id));
            menu.addMenuItem(item);
        }
        Main.panel.addToStatusArea('deskhand', this._button);
    }

    hide() {
        if (this._button)
            this._button.destroy();
        this._button = null;
    }
}

// The program a process runs (its /proc exe link), or null.
function programOf(pid) {
    try {
        return GLib.file_read_link(`/proc/${pid}/exe`);
    } catch (e) {
        return null;
    }
}

// Keeps the portals' dialogs above deskhand's own windows (whose pid is
// the engine's: the app runs the engine): on every restack, a portal
// dialog under one of them is put on top, in the always-on-top layer if
// that is where deskhand's window is.
class PortalsOnTop {
    constructor() {
        this._enginePid = 0;
        this._portal = new Map();
        this._signal = global.display.connect('restacked', () => this._check());
    }

    set enginePid(pid) {
        this._enginePid = pid;
        this._check();
    }

    _isPortal(pid) {
        if (!this._portal.has(pid)) {
            const program = programOf(pid);
            this._portal.set(pid, program !== null && PORTALS.includes(program));
        }
        return this._portal.get(pid);
    }

    _check() {
        if (!this._enginePid)
            return;
        const stack = global.display.sort_windows_by_stacking(
            global.get_window_actors().map(a => a.meta_window));
        let covered = false;
        for (const w of stack.reverse()) {
            if (w.get_pid() === this._enginePid) {
                covered = true;
            } else if (covered && this._isPortal(w.get_pid())) {
                if (!w.is_above())
                    w.make_above();
                w.raise();
            }
        }
    }

    destroy() {
        global.display.disconnect(this._signal);
    }
}

// A Wayland client knows its surface, not where it is: its accessibility
// extents count from the surface's corner (shadows included), sent here.
function surfaceOrigin(w) {
    if (w.get_client_type() !== Meta.WindowClientType.WAYLAND)
        return null;
    const b = w.get_buffer_rect();
    return { x: b.x, y: b.y };
}

function windowRow(w, focus) {
    const r = w.get_frame_rect();
    return {
        id: String(w.get_id()),
        pid: w.get_pid(),
        app_id: w.get_sandboxed_app_id() || w.get_gtk_application_id() || '',
        class: w.get_wm_class() || '',
        instance: w.get_wm_class_instance() || '',
        title: w.get_title() || '',
        rect: { x: r.x, y: r.y, width: r.width, height: r.height },
        focused: w === focus,
        minimized: w.minimized,
        fullscreen: w.is_fullscreen(),
        surface: surfaceOrigin(w),
    };
}

class Service {
    constructor() {
        this._indicator = new Indicator(press => this._dbus.emit_signal('Pressed',
            new GLib.Variant('(s)', [press])));
        this._topBar = new TopBarMenu(item => this._dbus.emit_signal('Chosen',
            new GLib.Variant('(s)', [item])));
        this._portalsOnTop = new PortalsOnTop();
        // The vetted engine's connection; the one being vetted, with the
        // calls it made meanwhile.
        this._engine = null;
        this._vetting = null;
        this._waiting = [];
        this._watch = Gio.bus_watch_name_on_connection(Gio.DBus.session, ENGINE,
            Gio.BusNameWatcherFlags.NONE,
            (_c, _name, owner) => this._vet(owner),
            () => {
                // The engine is gone: nothing of it stays on screen.
                this._engine = null;
                this._portalsOnTop.enginePid = 0;
                this._vetting = null;
                this._answerWaiting();
                this._indicator.hide();
                this._topBar.hide();
            });
        this._dbus = Gio.DBusExportedObject.wrapJSObject(IFACE, this);
        this._dbus.export(Gio.DBus.session, PATH);
    }

    // 2: the top bar's menu (ShowStatus, HideStatus, Chosen) and the top
    // bar's height (TopInset).
    get Version() {
        return 2;
    }

    // The name's new holder becomes the engine only if its process runs
    // one of deskhand's programs; a squatter is logged and refused.
    _vet(owner) {
        this._engine = null;
        this._portalsOnTop.enginePid = 0;
        this._vetting = owner;
        this._indicator.hide();
        this._topBar.hide();
        Gio.DBus.session.call('org.freedesktop.DBus', '/org/freedesktop/DBus',
            'org.freedesktop.DBus', 'GetConnectionUnixProcessID', new GLib.Variant('(s)', [owner]),
            new GLib.VariantType('(u)'), Gio.DBusCallFlags.NONE, -1, null, (conn, res) => {
                let pid = 0;
                try {
                    [pid] = conn.call_finish(res).deepUnpack();
                } catch (e) {
                    pid = 0;
                }
                const program = pid ? programOf(pid) : null;
                if (this._vetting !== owner)
                    return;
                this._vetting = null;
                if (program !== null && ENGINES.includes(program)) {
                    this._engine = owner;
                    this._portalsOnTop.enginePid = pid;
                } else {
                    log(`deskhand: ${ENGINE} is held by pid ${pid} (${program}), not deskhand: refused`);
                }
                this._answerWaiting();
            });
    }

    // The calls that waited for the vetting, run or refused now.
    _answerWaiting() {
        const waiting = this._waiting;
        this._waiting = [];
        for (const call of waiting)
            this._engineOnly(...call);
    }

    // Runs `method` for the vetted engine's connection only; anyone else
    // gets AccessDenied. A `later` method answers through the callback it
    // is given last.
    _engineOnly(params, invocation, method, signature, later = false) {
        if (this._vetting && invocation.get_sender() === this._vetting) {
            this._waiting.push([params, invocation, method, signature, later]);
            return;
        }
        if (!this._engine || invocation.get_sender() !== this._engine) {
            invocation.return_dbus_error('org.freedesktop.DBus.Error.AccessDenied',
                `only deskhand's own program holding ${ENGINE} may call this`);
            return;
        }
        const reply = out => invocation.return_value(signature ? new GLib.Variant(signature, out) : null);
        try {
            if (later)
                method(...params, reply);
            else
                reply(method(...params));
        } catch (e) {
            invocation.return_dbus_error('org.freedesktop.DBus.Error.Failed', String(e));
        }
    }

    ShowPartsAsync(params, invocation) {
        this._engineOnly(params, invocation, json => this._indicator.show(JSON.parse(json)));
    }

    HidePartsAsync(params, invocation) {
        this._engineOnly(params, invocation, () => this._indicator.hide());
    }

    TopInsetAsync(params, invocation) {
        this._engineOnly(params, invocation, () => [this._topInset()], '(u)');
    }

    // How far the top bar reaches down the primary monitor (0 when it is
    // hidden or elsewhere): the indicator's label goes below it, clear of
    // the clock and the notifications.
    _topInset() {
        const box = Main.layoutManager.panelBox;
        const primary = Main.layoutManager.primaryMonitor;
        if (!box.visible || !primary || box.y > primary.y)
            return 0;
        return Math.ceil(box.y + box.height - primary.y);
    }

    ShowStatusAsync(params, invocation) {
        this._engineOnly(params, invocation, json => this._topBar.show(JSON.parse(json)));
    }

    HideStatusAsync(params, invocation) {
        this._engineOnly(params, invocation, () => this._topBar.hide());
    }

    FrameStateAsync(params, invocation) {
        this._engineOnly(params, invocation,
            () => [JSON.stringify(this._indicator.state())], '(s)');
    }

    ListWindowsAsync(params, invocation) {
        this._engineOnly(params, invocation, () => [this._listWindows()], '(s)');
    }

    CommitTextAsync(params, invocation) {
        this._engineOnly(params, invocation,
            (text, reply) => this._commitText(text, took => reply([took])), '(b)', true);
    }

    PointerAsync(params, invocation) {
        this._engineOnly(params, invocation, () => this._pointer(), '(iiu)');
    }

    FocusAsync(params, invocation) {
        this._engineOnly(params, invocation, (id, raise) => [this._focus(id, raise)], '(b)');
    }

    _listWindows() {
        const display = global.display;
        const all = global.get_window_actors().map(a => a.meta_window)
            .filter(w => LISTED.includes(w.get_window_type()) && !w.is_override_redirect());
        const focus = display.get_focus_window();
        return JSON.stringify(display.sort_windows_by_stacking(all).map(w => windowRow(w, focus)));
    }

    // Text for the focused text field through the input method, as
    // GNOME's own on-screen keyboard types what no key of the layout
    // sends; false (nothing done) when no field has input-method focus.
    // An empty text only asks. The answer waits until the app told the
    // input method its new surrounding text (it took the commit: a commit
    // sent before would be dropped by it), at most ACK_MS for an app that
    // never tells.
    _commitText(text, done) {
        const im = Main.inputMethod;
        if (!im.currentFocus || !text) {
            done(Boolean(im.currentFocus));
            return;
        }
        let signal = 0;
        let timer = 0;
        const finish = () => {
            if (signal)
                im.disconnect(signal);
            if (timer)
                GLib.source_remove(timer);
            signal = timer = 0;
            done(true);
        };
        signal = im.connect('surrounding-text-set', finish);
        timer = GLib.timeout_add(GLib.PRIORITY_DEFAULT, ACK_MS, () => {
            timer = 0;
            finish();
            return GLib.SOURCE_REMOVE;
        });
        im.commit(text);
    }

    // Where the pointer is, and the buttons held (Clutter's modifier
    // bits BUTTON1..BUTTON5 shifted down to bits 0..4).
    _pointer() {
        const [x, y, mods] = global.get_pointer();
        return [x, y, (mods >> 8) & 0x1f];
    }

    _focus(id, raise) {
        const w = global.get_window_actors().map(a => a.meta_window)
            .find(m => String(m.get_id()) === String(id));
        if (!w)
            return false;
        // A time from the server: focus-stealing prevention refuses 0.
        const now = global.display.get_current_time_roundtrip();
        if (w.minimized)
            w.unminimize();
        if (raise)
            w.activate(now);
        else
            w.focus(now);
        return global.display.get_focus_window() === w;
    }

    destroy() {
        Gio.bus_unwatch_name(this._watch);
        this._portalsOnTop.destroy();
        this._indicator.hide();
        this._topBar.hide();
        this._dbus.unexport();
    }
}
