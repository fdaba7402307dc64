/* vx-rs: the body of vxAddLogEntry, the C API's one variadic function (Rust cannot define one
 * on a stable toolchain). It formats the message (at most VX_MAX_LOG_MESSAGE_LEN bytes with its
 * terminator, as the specification bounds it) and hands it to the Rust side, which finds the
 * reference's context and calls its log callback. The exported vxAddLogEntry is a Rust naked
 * function that jumps here with every register and stack argument untouched (src/context.rs):
 * a Rust cdylib exports only the symbols Rust defines. */
#include <stdarg.h>
#include <stdio.h>
#include <VX/vx.h>

extern void vxrs_add_log_entry(vx_reference ref, vx_status status, const char *message);

void vxrs_add_log_entry_va(vx_reference ref, vx_status status, const char *message, ...);

void vxrs_add_log_entry_va(vx_reference ref, vx_status status, const char *message, ...)
{
    char text[VX_MAX_LOG_MESSAGE_LEN];
    va_list ap;
    if (message == NULL) {
        vxrs_add_log_entry(ref, status, NULL);
        return;
    }
    va_start(ap, message);
    vsnprintf(text, sizeof(text), message, ap);
    va_end(ap);
    vxrs_add_log_entry(ref, status, text);
}
