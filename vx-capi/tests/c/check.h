/* vx-rs C tests: a tiny assertion kit. CHECK prints the failing expression with its file and
 * line and counts it; each test program returns the number of failures. */
#ifndef VXRS_CHECK_H
#define VXRS_CHECK_H
#include <stdio.h>

static int check_failures = 0;

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);         \
            check_failures++;                                                                \
        }                                                                                    \
    } while (0)

#define CHECK_STATUS(call, want)                                                             \
    do {                                                                                     \
        vx_status check_got_ = (call);                                                       \
        if (check_got_ != (want)) {                                                          \
            fprintf(stderr, "%s:%d: %s returned %d, expected %s (%d)\n", __FILE__, __LINE__, \
                    #call, (int)check_got_, #want, (int)(want));                             \
            check_failures++;                                                                \
        }                                                                                    \
    } while (0)

#define CHECK_OK(call) CHECK_STATUS(call, VX_SUCCESS)

#define CHECK_OBJECT(ref, type)                                                              \
    do {                                                                                     \
        vx_enum check_type_ = 0;                                                             \
        CHECK_OK(vxGetStatus((vx_reference)(ref)));                                          \
        CHECK_OK(vxQueryReference((vx_reference)(ref), VX_REFERENCE_TYPE, &check_type_,      \
                                  sizeof(check_type_)));                                     \
        CHECK(check_type_ == (type));                                                        \
    } while (0)

#endif
