/* A stand-in for Windows' cmd.exe in the launch tests: Wine's own cmd.exe
 * has no version resource, Windows' says OriginalFilename "Cmd.Exe"
 * (cmdlike.rc gives this program the same). Like cmd, it runs what it is
 * given after /c; given nothing, it writes "ran" to ran.txt beside itself,
 * so that a test sees whether it was started at all. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

int main(int argc, char **argv)
{
    if (argc >= 3 && _stricmp(argv[1], "/c") == 0)
        return system(argv[2]);
    char path[MAX_PATH];
    DWORD n = GetModuleFileNameA(NULL, path, MAX_PATH);
    char *slash = strrchr(path, '\\');
    if (n == 0 || n >= MAX_PATH || !slash)
        return 1;
    strcpy(slash + 1, "ran.txt");
    FILE *f = fopen(path, "w");
    if (!f)
        return 1;
    fputs("ran\n", f);
    fclose(f);
    return 0;
}
