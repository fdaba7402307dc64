/*
 * vx-rs: OpenVX 1.3.1 C API, written for vx-rs, compatible with the Khronos
 * headers; values from the OpenVX 1.3.1 specification.
 *
 * Copyright The vx-rs developers
 * SPDX-License-Identifier: Apache-2.0
 *
 * vx.h: the top-level header; includes the core API.
 */

#ifndef _OPENVX_H_
#define _OPENVX_H_

/* String lengths, each including the terminating NUL. */
#define VX_MAX_IMPLEMENTATION_NAME (64)
#define VX_MAX_KERNEL_NAME (256)
#define VX_MAX_LOG_MESSAGE_LEN (1024)
#define VX_MAX_REFERENCE_NAME (64)

#include <VX/vx_vendors.h>
#include <VX/vx_types.h>
#include <VX/vx_kernels.h>
#include <VX/vx_api.h>
#include <VX/vx_nodes.h>

/* Version numbers: major in bits 8..15, minor in bits 0..7. */
#define VX_VERSION_MAJOR(x) ((vx_uint32)((vx_uint32)(x) & 0xFFU) << 8)
#define VX_VERSION_MINOR(x) ((vx_uint32)((vx_uint32)(x) & 0xFFU) << 0)

#define VX_VERSION_1_0      (VX_VERSION_MAJOR(1) | VX_VERSION_MINOR(0))
#define VX_VERSION_1_1      (VX_VERSION_MAJOR(1) | VX_VERSION_MINOR(1))
#define VX_VERSION_1_2      (VX_VERSION_MAJOR(1) | VX_VERSION_MINOR(2))
#define VX_VERSION_1_3      (VX_VERSION_MAJOR(1) | VX_VERSION_MINOR(3))

/* The version this API describes. */
#define VX_VERSION          (VX_VERSION_1_3)

#endif /* _OPENVX_H_ */
