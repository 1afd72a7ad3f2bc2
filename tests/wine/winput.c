/* Another Windows program at the person's desktop, for the Windows
 * end-to-end tests:
 *   winput click X Y   clicks at (X, Y) with SendInput, not tagged as
 *                      deskhand's: injected input, which must never count
 *                      as the person's click on Continue;
 *   winput held        prints the virtual keys and buttons held down now
 *                      (GetAsyncKeyState), one per line.
 *   winput shortcut LINK TARGET
 *                      makes a shortcut (.lnk) to TARGET, as an installer
 *                      does (IShellLink).
 * Built with mingw by tests/wine/prefix. */
#define COBJMACROS
#include <windows.h>
#include <shlobj.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int click(int x, int y)
{
    INPUT in[2];
    /* Wine 8 puts the cursor back after an injected move that a
     * low-level hook saw: place it first, then press and release. */
    SetCursorPos(x, y);
    ZeroMemory(in, sizeof(in));
    in[0].type = INPUT_MOUSE;
    in[0].mi.dwFlags = MOUSEEVENTF_LEFTDOWN;
    in[1].type = INPUT_MOUSE;
    in[1].mi.dwFlags = MOUSEEVENTF_LEFTUP;
    return SendInput(2, in, sizeof(INPUT)) == 2 ? 0 : 1;
}

static int held(void)
{
    int vk;
    for (vk = 1; vk < 256; vk++)
        if (GetAsyncKeyState(vk) & 0x8000)
            printf("%d\n", vk);
    return 0;
}

static int shortcut(const char *link, const char *target)
{
    WCHAR wlink[MAX_PATH], wtarget[MAX_PATH];
    IShellLinkW *shell;
    IPersistFile *file;
    HRESULT hr;
    MultiByteToWideChar(CP_UTF8, 0, link, -1, wlink, MAX_PATH);
    MultiByteToWideChar(CP_UTF8, 0, target, -1, wtarget, MAX_PATH);
    CoInitialize(NULL);
    hr = CoCreateInstance(&CLSID_ShellLink, NULL, CLSCTX_INPROC_SERVER, &IID_IShellLinkW,
                          (void **)&shell);
    if (FAILED(hr))
        return 1;
    IShellLinkW_SetPath(shell, wtarget);
    hr = IShellLinkW_QueryInterface(shell, &IID_IPersistFile, (void **)&file);
    if (SUCCEEDED(hr)) {
        hr = IPersistFile_Save(file, wlink, TRUE);
        IPersistFile_Release(file);
    }
    IShellLinkW_Release(shell);
    return FAILED(hr) ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "shortcut") == 0)
        return shortcut(argv[2], argv[3]);
    if (argc == 4 && strcmp(argv[1], "click") == 0)
        return click(atoi(argv[2]), atoi(argv[3]));
    if (argc == 2 && strcmp(argv[1], "held") == 0)
        return held();
    fprintf(stderr, "usage: winput click X Y | winput held | winput shortcut LINK TARGET\n");
    return 2;
}
