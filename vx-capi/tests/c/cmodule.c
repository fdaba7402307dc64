/* vx-rs C test module: an OpenVX kernel module written in C, as for any OpenVX implementation.
 * vxPublishKernels registers "org.vxrs.test.cmod.negate" (an Int32 scalar in, its negation
 * out); vxUnpublishKernels removes it. Built with -DFAIL_PUBLISH it adds the kernel and then
 * fails, so the host must roll the kernel back; with -DOFFSET=n the kernel computes -v + n (the
 * versions a reload test swaps); with -DLOAD_IN_PUBLISH its publish calls vxLoadKernels. */
#include <VX/vx.h>

#define NAME "org.vxrs.test.cmod.negate"

static vx_status VX_CALLBACK negate_validate(vx_node node, const vx_reference parameters[], vx_uint32 num,
                                             vx_meta_format metas[])
{
    vx_enum type = VX_TYPE_INT32;
    (void)node;
    (void)parameters;
    if (num != 2)
        return VX_ERROR_INVALID_PARAMETERS;
    return vxSetMetaFormatAttribute(metas[1], VX_SCALAR_TYPE, &type, sizeof(type));
}

static vx_status VX_CALLBACK negate_process(vx_node node, const vx_reference *parameters, vx_uint32 num)
{
    vx_int32 v = 0;
    vx_status s;
    (void)node;
    (void)num;
    s = vxCopyScalar((vx_scalar)parameters[0], &v, VX_READ_ONLY, VX_MEMORY_TYPE_HOST);
    if (s != VX_SUCCESS)
        return s;
#ifndef OFFSET
#define OFFSET 0
#endif
    v = -v + OFFSET;
    return vxCopyScalar((vx_scalar)parameters[1], &v, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST);
}

VX_API_ENTRY vx_status VX_API_CALL vxPublishKernels(vx_context context);
VX_API_ENTRY vx_status VX_API_CALL vxUnpublishKernels(vx_context context);

VX_API_ENTRY vx_status VX_API_CALL vxPublishKernels(vx_context context)
{
    vx_enum id = 0;
#ifdef LOAD_IN_PUBLISH
    /* A module loading another from its publish: refused (the load in progress holds the
     * module table), not a deadlock. */
    return vxLoadKernels(context, "vx_filters");
#endif
    vx_kernel kernel;
    vx_status s = vxAllocateUserKernelId(context, &id);
    if (s != VX_SUCCESS)
        return s;
    kernel = vxAddUserKernel(context, NAME, id, negate_process, 2, negate_validate, NULL, NULL);
    s = vxGetStatus((vx_reference)kernel);
    if (s != VX_SUCCESS)
        return s;
    if ((s = vxAddParameterToKernel(kernel, 0, VX_INPUT, VX_TYPE_SCALAR, VX_PARAMETER_STATE_REQUIRED)) != VX_SUCCESS ||
        (s = vxAddParameterToKernel(kernel, 1, VX_OUTPUT, VX_TYPE_SCALAR, VX_PARAMETER_STATE_REQUIRED)) != VX_SUCCESS ||
        (s = vxFinalizeKernel(kernel)) != VX_SUCCESS) {
        vxRemoveKernel(kernel);
        return s;
    }
    vxReleaseKernel(&kernel);
#ifdef FAIL_PUBLISH
    return VX_FAILURE;
#else
    return VX_SUCCESS;
#endif
}

VX_API_ENTRY vx_status VX_API_CALL vxUnpublishKernels(vx_context context)
{
    vx_kernel kernel = vxGetKernelByName(context, NAME);
    vx_status s = vxGetStatus((vx_reference)kernel);
    if (s != VX_SUCCESS)
        return s;
    return vxRemoveKernel(kernel);
}
