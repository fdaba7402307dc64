/* vx-rs C test: kernel modules through vxLoadKernels / vxUnloadKernels — an OpenVX C module
 * (cmodule.c: vxPublishKernels) and a vx-rs Rust module (vx_filters), each loaded, used and
 * unloaded by a C program; a node keeps working after its module is unloaded (the library stays
 * mapped while a node of it lives); a module whose publish fails leaves no kernel behind; a
 * missing module is refused with a message; the context back at its starting counts.
 * The modules are found on VX_MODULE_PATH (the test harness sets it). */
#include <string.h>
#include <VX/vx.h>
#include "check.h"

static char last_log[VX_MAX_LOG_MESSAGE_LEN];

static void VX_CALLBACK on_log(vx_context context, vx_reference ref, vx_status status, const vx_char string[])
{
    (void)context;
    (void)ref;
    (void)status;
    strncpy(last_log, string, sizeof(last_log) - 1);
}

static vx_uint32 query_u32(vx_context c, vx_enum attribute)
{
    vx_uint32 n = 0;
    CHECK_OK(vxQueryContext(c, attribute, &n, sizeof(n)));
    return n;
}

static vx_int32 run_negate(vx_graph graph, vx_scalar in, vx_scalar out, vx_int32 value)
{
    vx_int32 got = 0;
    CHECK_OK(vxCopyScalar(in, &value, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK_OK(vxProcessGraph(graph));
    CHECK_OK(vxCopyScalar(out, &got, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    return got;
}

int main(void)
{
    vx_context context = vxCreateContext();
    vx_uint32 refs0, modules0, kernels0;
    vx_int32 zero = 0;
    vx_kernel kernel;
    vx_graph graph;
    vx_node node;
    vx_scalar in, out;

    vxRegisterLogCallback(context, on_log, vx_true_e);
    refs0 = query_u32(context, VX_CONTEXT_REFERENCES);
    modules0 = query_u32(context, VX_CONTEXT_MODULES);
    kernels0 = query_u32(context, VX_CONTEXT_UNIQUE_KERNELS);

    /* A C module. */
    CHECK_OK(vxLoadKernels(context, "vxrs_cmod"));
    CHECK(query_u32(context, VX_CONTEXT_MODULES) == modules0 + 1);
    CHECK(query_u32(context, VX_CONTEXT_UNIQUE_KERNELS) == kernels0 + 1);
    kernel = vxGetKernelByName(context, "org.vxrs.test.cmod.negate");
    CHECK_OBJECT(kernel, VX_TYPE_KERNEL);
    graph = vxCreateGraph(context);
    in = vxCreateScalar(context, VX_TYPE_INT32, &zero);
    out = vxCreateScalar(context, VX_TYPE_INT32, &zero);
    node = vxCreateGenericNode(graph, kernel);
    CHECK_OK(vxSetParameterByIndex(node, 0, (vx_reference)in));
    CHECK_OK(vxSetParameterByIndex(node, 1, (vx_reference)out));
    CHECK_OK(vxReleaseKernel(&kernel));
    CHECK(run_negate(graph, in, out, 17) == -17);

    /* Unloaded while a node of it lives: the kernel leaves lookup, the node keeps running. */
    CHECK_OK(vxUnloadKernels(context, "vxrs_cmod"));
    CHECK(vxGetStatus((vx_reference)vxGetKernelByName(context, "org.vxrs.test.cmod.negate")) != VX_SUCCESS);
    CHECK(query_u32(context, VX_CONTEXT_UNIQUE_KERNELS) == kernels0);
    CHECK(run_negate(graph, in, out, -5) == 5);
    CHECK_OK(vxReleaseNode(&node));
    CHECK_OK(vxReleaseGraph(&graph));

    /* Loaded again, from scratch. */
    CHECK_OK(vxLoadKernels(context, "vxrs_cmod"));
    kernel = vxGetKernelByName(context, "org.vxrs.test.cmod.negate");
    CHECK_OBJECT(kernel, VX_TYPE_KERNEL);
    CHECK_OK(vxReleaseKernel(&kernel));
    CHECK_OK(vxUnloadKernels(context, "vxrs_cmod"));
    CHECK_STATUS(vxUnloadKernels(context, "vxrs_cmod"), VX_ERROR_INVALID_PARAMETERS);

    /* A publish that fails leaves nothing behind. */
    CHECK(vxLoadKernels(context, "vxrs_cmod_bad") != VX_SUCCESS);
    CHECK(vxGetStatus((vx_reference)vxGetKernelByName(context, "org.vxrs.test.cmod.negate")) != VX_SUCCESS);
    CHECK(query_u32(context, VX_CONTEXT_MODULES) == modules0);

    /* A module whose publish loads another module: refused, not a deadlock. */
    CHECK(vxLoadKernels(context, "vxrs_cmod_nested") != VX_SUCCESS);
    CHECK(query_u32(context, VX_CONTEXT_MODULES) == modules0);

    /* A Rust (vx-rs) module from C. */
    CHECK_OK(vxLoadKernels(context, "vx_filters"));
    kernel = vxGetKernelByName(context, "filters.gaussian3x3");
    CHECK_OBJECT(kernel, VX_TYPE_KERNEL);
    CHECK_OK(vxReleaseKernel(&kernel));
    CHECK_OK(vxUnloadKernels(context, "vx_filters"));

    /* A missing module: refused, and the log says where it looked. */
    CHECK(vxLoadKernels(context, "vxrs_no_such_module") != VX_SUCCESS);
    CHECK(strstr(last_log, "VX_MODULE_PATH") != NULL);
    CHECK_STATUS(vxLoadKernels(context, NULL), VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxLoadKernels(NULL, "vxrs_cmod"), VX_ERROR_INVALID_REFERENCE);

    CHECK_OK(vxReleaseScalar(&in));
    CHECK_OK(vxReleaseScalar(&out));
    CHECK(query_u32(context, VX_CONTEXT_MODULES) == modules0);
    CHECK(query_u32(context, VX_CONTEXT_REFERENCES) == refs0);
    CHECK_OK(vxReleaseContext(&context));
    if (check_failures == 0)
        printf("modules: ok\n");
    return check_failures;
}
