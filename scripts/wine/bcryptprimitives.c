/* ProcessPrng for Wine 8 (Debian 12's wine), which has no bcryptprimitives.dll.
 *
 * Rust's standard library (1.78 and later) takes its random bytes from ProcessPrng in
 * bcryptprimitives.dll, present on every Windows 10 and later; Debian's Wine 8.0 does not ship
 * that DLL, so a Rust Windows binary stops at start-up under it ("Library bcryptprimitives.dll
 * ... not found", status c0000135). This stand-in, put beside the .exe only for the Wine check
 * (scripts/wine-check.sh), answers with RtlGenRandom (advapi32's SystemFunction036), which Wine
 * has. It is never shipped: Windows itself has the real DLL. */
#include <windows.h>
#define SystemFunction036 NTAPI SystemFunction036
#include <ntsecapi.h>
#undef SystemFunction036

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  return RtlGenRandom(data, (ULONG)len);
}
