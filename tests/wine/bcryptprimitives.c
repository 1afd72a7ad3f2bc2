/* ProcessPrng for Wine 8, which lacks it: Rust's standard library (1.78
 * and later) imports it from bcryptprimitives.dll, so without this DLL in
 * the prefix's system32 every Rust program exits at once (status 53).
 * Built with mingw by tests/wine/prefix; only the test prefix gets it. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
