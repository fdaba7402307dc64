/*
 * vx-rs: OpenVX 1.3.1 C API, written for vx-rs, compatible with the Khronos
 * headers; values from the OpenVX 1.3.1 specification.
 *
 * Copyright The vx-rs developers
 * SPDX-License-Identifier: Apache-2.0
 *
 * vx_khr_user_data_object.h: the vx_khr_user_data_object extension, an
 * opaque block of bytes of a named user type.
 */

#ifndef _OPENVX_USER_DATA_OBJECT_H_
#define _OPENVX_USER_DATA_OBJECT_H_

/* The extension's name in VX_CONTEXT_EXTENSIONS. */
#define OPENVX_KHR_USER_DATA_OBJECT "vx_khr_user_data_object"

#include <VX/vx.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _vx_user_data_object *vx_user_data_object;

/* The object type of a vx_user_data_object (a vx_type_e value). */
#define VX_TYPE_USER_DATA_OBJECT 0x816

enum vx_user_data_object_attribute_e {
    VX_USER_DATA_OBJECT_NAME = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_USER_DATA_OBJECT) + 0x0,
    VX_USER_DATA_OBJECT_SIZE = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_USER_DATA_OBJECT) + 0x1
};

/* A NULL `ptr` zero-fills the object; a NULL `type_name` gives an empty name. */
VX_API_ENTRY vx_user_data_object VX_API_CALL vxCreateUserDataObject(vx_context context, const vx_char *type_name, vx_size size, const void *ptr);
VX_API_ENTRY vx_user_data_object VX_API_CALL vxCreateVirtualUserDataObject(vx_graph graph, const vx_char *type_name, vx_size size);
VX_API_ENTRY vx_status VX_API_CALL vxReleaseUserDataObject(vx_user_data_object *user_data_object);
VX_API_ENTRY vx_status VX_API_CALL vxQueryUserDataObject(vx_user_data_object user_data_object, vx_enum attribute, void *ptr, vx_size size);
/* Copies bytes [offset, offset + size); size 0 means up to the end (likewise for the map). */
VX_API_ENTRY vx_status VX_API_CALL vxCopyUserDataObject(vx_user_data_object user_data_object, vx_size offset, vx_size size, void *user_ptr, vx_enum usage, vx_enum user_mem_type);
VX_API_ENTRY vx_status VX_API_CALL vxMapUserDataObject(vx_user_data_object user_data_object, vx_size offset, vx_size size, vx_map_id *map_id, void **ptr, vx_enum usage, vx_enum mem_type, vx_uint32 flags);
VX_API_ENTRY vx_status VX_API_CALL vxUnmapUserDataObject(vx_user_data_object user_data_object, vx_map_id map_id);

#ifdef __cplusplus
}
#endif

#endif /* _OPENVX_USER_DATA_OBJECT_H_ */
