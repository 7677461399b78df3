/* A stand-in for bcryptprimitives.dll, for running Rust programs under Debian 12's Wine 8.0.
 *
 * Rust's standard library (1.78 and later) imports ProcessPrng from bcryptprimitives.dll, which
 * Wine gained only after 8.0: without it a Rust .exe does not start there (status c0000135).
 * `cargo xtask ci` builds this with x86_64-w64-mingw32-gcc into the system32 of its own Wine prefix
 * (target/wine-prefix) when that has no bcryptprimitives.dll. ProcessPrng fills the buffer from
 * RtlGenRandom (advapi32's SystemFunction036). Never shipped; Windows has the real DLL. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size) {
    while (size > 0) {
        ULONG chunk = size > 0x7fffffff ? 0x7fffffff : (ULONG)size;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        size -= chunk;
    }
    return TRUE;
}
