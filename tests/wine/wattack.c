/* An attacking program of the person's own account at their desktop, for
 * the Windows attack tests (tests/e2e/attacks/test_windows_attacks.py).
 * Each command does what the attack run of issue 47 did:
 *   wattack post-click X Y   puts the cursor on (X, Y) and posts a left
 *                            press and release there to deskhand's overlay
 *                            window (no input device involved);
 *   wattack empty-region     sets an empty window region on every overlay
 *                            window (the frame vanishes);
 *   wattack colour-key       sets a layered colour key of the frame's red
 *                            on every overlay window;
 *   wattack cover SECONDS    shows a topmost, no-activate, click-through
 *                            grey window over the screen's four edges for
 *                            SECONDS;
 *   wattack tool-window CLASS
 *                            adds WS_EX_TOOLWINDOW to every top-level
 *                            window of class CLASS (a console: leaves the
 *                            taskbar and the app switcher);
 *   wattack hook SECONDS     holds a low-level mouse hook of its own for
 *                            SECONDS, then exits (under Wine the hook set
 *                            last is called first);
 *   wattack hotkey SECONDS   registers ctrl+alt+Escape (deskhand's kill
 *                            switch) for a window of its own and holds it
 *                            for SECONDS;
 *   wattack credential TARGET VALUE
 *                            keeps VALUE in the Credential Manager under
 *                            TARGET (a generic credential), as an earlier
 *                            deskhand kept its token there.
 * Prints what it did on stdout; exits 1 when it found nothing to act on.
 * Built with mingw by tests/wine/prefix. */
#include <windows.h>
#include <wincred.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OVERLAY_TITLE "deskhand takeover"
#define MAX_FOUND 16

struct found {
    HWND windows[MAX_FOUND];
    int count;
    const char *title;
    const char *class_name;
};

static BOOL CALLBACK collect(HWND h, LPARAM l)
{
    struct found *f = (struct found *)l;
    char text[256];
    if (f->count >= MAX_FOUND)
        return FALSE;
    if (f->title) {
        GetWindowTextA(h, text, sizeof(text));
        if (strcmp(text, f->title) != 0 || !IsWindowVisible(h))
            return TRUE;
    } else {
        GetClassNameA(h, text, sizeof(text));
        if (strcmp(text, f->class_name) != 0)
            return TRUE;
    }
    f->windows[f->count++] = h;
    return TRUE;
}

/* The overlay's shown windows (their title is deskhand's). */
static int overlays(struct found *f)
{
    ZeroMemory(f, sizeof(*f));
    f->title = OVERLAY_TITLE;
    EnumWindows(collect, (LPARAM)f);
    return f->count;
}

static int post_click(int x, int y)
{
    struct found f;
    int i, posted = 0;
    overlays(&f);
    SetCursorPos(x, y);
    for (i = 0; i < f.count; i++) {
        RECT r;
        LPARAM at;
        GetWindowRect(f.windows[i], &r);
        if (x < r.left || x >= r.right || y < r.top || y >= r.bottom)
            continue;
        at = MAKELPARAM(x - r.left, y - r.top);
        PostMessageA(f.windows[i], WM_MOUSEMOVE, 0, at);
        PostMessageA(f.windows[i], WM_LBUTTONDOWN, MK_LBUTTON, at);
        Sleep(50);
        PostMessageA(f.windows[i], WM_LBUTTONUP, 0, at);
        printf("posted a click at %d,%d to %p\n", x, y, (void *)f.windows[i]);
        posted++;
    }
    return posted ? 0 : 1;
}

static int empty_region(void)
{
    struct found f;
    int i;
    for (i = 0; i < overlays(&f); i++) {
        SetWindowRgn(f.windows[i], CreateRectRgn(0, 0, 0, 0), TRUE);
        printf("emptied the region of %p\n", (void *)f.windows[i]);
    }
    return f.count ? 0 : 1;
}

static int colour_key(void)
{
    struct found f;
    int i;
    for (i = 0; i < overlays(&f); i++) {
        SetLayeredWindowAttributes(f.windows[i], RGB(0xe0, 0x1b, 0x24), 0, LWA_COLORKEY);
        printf("keyed out the red of %p\n", (void *)f.windows[i]);
    }
    return f.count ? 0 : 1;
}

static LRESULT CALLBACK plain(HWND h, UINT msg, WPARAM w, LPARAM l)
{
    return DefWindowProcA(h, msg, w, l);
}

static int cover(int seconds)
{
    int w = GetSystemMetrics(SM_CXSCREEN), h = GetSystemMetrics(SM_CYSCREEN), t = 16;
    WNDCLASSA wc;
    HWND cover;
    HRGN edges;
    DWORD until = GetTickCount() + seconds * 1000;
    ZeroMemory(&wc, sizeof(wc));
    wc.lpfnWndProc = plain;
    wc.hInstance = GetModuleHandleA(NULL);
    wc.hbrBackground = CreateSolidBrush(RGB(0x80, 0x80, 0x80));
    wc.lpszClassName = "wattack-cover";
    RegisterClassA(&wc);
    cover = CreateWindowExA(WS_EX_TOPMOST | WS_EX_NOACTIVATE | WS_EX_TOOLWINDOW | WS_EX_LAYERED |
                                WS_EX_TRANSPARENT,
                            wc.lpszClassName, "cover", WS_POPUP, 0, 0, w, h, NULL, NULL,
                            wc.hInstance, NULL);
    if (!cover)
        return 1;
    SetLayeredWindowAttributes(cover, 0, 255, LWA_ALPHA);
    /* Only the four edges: the desktop in between stays usable. */
    edges = CreateRectRgn(0, 0, w, t);
    CombineRgn(edges, edges, CreateRectRgn(0, h - t, w, h), RGN_OR);
    CombineRgn(edges, edges, CreateRectRgn(0, 0, t, h), RGN_OR);
    CombineRgn(edges, edges, CreateRectRgn(w - t, 0, w, h), RGN_OR);
    SetWindowRgn(cover, edges, FALSE);
    ShowWindow(cover, SW_SHOWNOACTIVATE);
    SetWindowPos(cover, HWND_TOPMOST, 0, 0, 0, 0, SWP_NOMOVE | SWP_NOSIZE | SWP_NOACTIVATE);
    printf("covering the edges\n");
    fflush(stdout);
    while (GetTickCount() < until) {
        MSG msg;
        while (PeekMessageA(&msg, NULL, 0, 0, PM_REMOVE))
            DispatchMessageA(&msg);
        Sleep(20);
    }
    DestroyWindow(cover);
    return 0;
}

static int tool_window(const char *class_name)
{
    struct found f;
    int i;
    ZeroMemory(&f, sizeof(f));
    f.class_name = class_name;
    EnumWindows(collect, (LPARAM)&f);
    for (i = 0; i < f.count; i++) {
        LONG ex = GetWindowLongA(f.windows[i], GWL_EXSTYLE);
        SetWindowLongA(f.windows[i], GWL_EXSTYLE, ex | WS_EX_TOOLWINDOW);
        printf("made %p a tool window\n", (void *)f.windows[i]);
    }
    return f.count ? 0 : 1;
}

static LRESULT CALLBACK pass_on(int code, WPARAM w, LPARAM l)
{
    return CallNextHookEx(NULL, code, w, l);
}

static int hook(int seconds)
{
    DWORD until = GetTickCount() + seconds * 1000;
    HHOOK h = SetWindowsHookExA(WH_MOUSE_LL, pass_on, GetModuleHandleA(NULL), 0);
    if (!h)
        return 1;
    printf("hooked\n");
    fflush(stdout);
    while (GetTickCount() < until) {
        MSG msg;
        while (PeekMessageA(&msg, NULL, 0, 0, PM_REMOVE))
            DispatchMessageA(&msg);
        Sleep(5);
    }
    /* Exits without UnhookWindowsHookEx, as a program that crashed. */
    return 0;
}

/* Takes the kill switch's chord before deskhand: a hotkey of a window of
 * its own (a thread hotkey crashes Wine 8's server when pressed). */
static int hotkey(int seconds)
{
    HWND window = CreateWindowExA(0, "STATIC", "wattack hotkey", 0, 0, 0, 0, 0, HWND_MESSAGE,
                                  NULL, NULL, NULL);
    MSG msg;
    DWORD until;
    if (!window || !RegisterHotKey(window, 1, MOD_CONTROL | MOD_ALT | MOD_NOREPEAT, VK_ESCAPE)) {
        printf("could not register ctrl+alt+Escape: %lu\n", GetLastError());
        return 1;
    }
    printf("holds ctrl+alt+Escape\n");
    until = GetTickCount() + (DWORD)seconds * 1000;
    while (GetTickCount() < until) {
        while (PeekMessageA(&msg, NULL, 0, 0, PM_REMOVE))
            DispatchMessageA(&msg);
        Sleep(20);
    }
    return 0;
}

/* A generic credential TARGET holding VALUE (UTF-16, as the keyring crate
 * keeps a password). */
static int credential(const char *target, const char *value)
{
    WCHAR wtarget[512], wvalue[256];
    CREDENTIALW cred;
    int n = MultiByteToWideChar(CP_UTF8, 0, value, -1, wvalue, 256);
    MultiByteToWideChar(CP_UTF8, 0, target, -1, wtarget, 512);
    ZeroMemory(&cred, sizeof(cred));
    cred.Type = CRED_TYPE_GENERIC;
    cred.TargetName = wtarget;
    cred.CredentialBlobSize = (DWORD)((n - 1) * sizeof(WCHAR));
    cred.CredentialBlob = (BYTE *)wvalue;
    cred.Persist = CRED_PERSIST_ENTERPRISE;
    cred.UserName = L"deskhand";
    if (!CredWriteW(&cred, 0)) {
        printf("CredWrite failed: %lu\n", GetLastError());
        return 1;
    }
    printf("kept a credential\n");
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc == 4 && strcmp(argv[1], "post-click") == 0)
        return post_click(atoi(argv[2]), atoi(argv[3]));
    if (argc == 2 && strcmp(argv[1], "empty-region") == 0)
        return empty_region();
    if (argc == 2 && strcmp(argv[1], "colour-key") == 0)
        return colour_key();
    if (argc == 3 && strcmp(argv[1], "cover") == 0)
        return cover(atoi(argv[2]));
    if (argc == 3 && strcmp(argv[1], "tool-window") == 0)
        return tool_window(argv[2]);
    if (argc == 3 && strcmp(argv[1], "hook") == 0)
        return hook(atoi(argv[2]));
    if (argc == 3 && strcmp(argv[1], "hotkey") == 0)
        return hotkey(atoi(argv[2]));
    if (argc == 4 && strcmp(argv[1], "credential") == 0)
        return credential(argv[2], argv[3]);
    fprintf(stderr, "usage: wattack post-click X Y | empty-region | colour-key | cover SECONDS"
                    " | tool-window CLASS | hook SECONDS | hotkey SECONDS"
                    " | credential TARGET VALUE\n");
    return 2;
}
