/* vx-rs C test: delays — slots indexed 0, -1, ...; vxAgeDelay rotates them (checked against a
 * model ring of handles); node parameters set to a slot's object follow its index through aging;
 * vxRegisterAutoAging ages after each process (a node reading index -1 and writing index 0
 * accumulates); refused indexes and handles; the context back at its starting count. */
#include <VX/vx.h>
#include "check.h"

#define SLOTS 3

static vx_status VX_CALLBACK inc_validate(vx_node node, const vx_reference parameters[], vx_uint32 num,
                                          vx_meta_format metas[])
{
    vx_enum type = VX_TYPE_INT32;
    (void)node;
    (void)parameters;
    (void)num;
    return vxSetMetaFormatAttribute(metas[1], VX_SCALAR_TYPE, &type, sizeof(type));
}

static vx_status VX_CALLBACK inc_process(vx_node node, const vx_reference *parameters, vx_uint32 num)
{
    vx_int32 v = 0;
    vx_status s;
    (void)node;
    (void)num;
    s = vxCopyScalar((vx_scalar)parameters[0], &v, VX_READ_ONLY, VX_MEMORY_TYPE_HOST);
    if (s != VX_SUCCESS)
        return s;
    v += 1;
    return vxCopyScalar((vx_scalar)parameters[1], &v, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST);
}

static vx_int32 value_of(vx_reference r)
{
    vx_int32 v = -1000;
    CHECK_OK(vxCopyScalar((vx_scalar)r, &v, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    return v;
}

int main(void)
{
    vx_context context = vxCreateContext();
    vx_uint32 start = 0, now = 0;
    vx_int32 zero = 0, model[SLOTS], i, frame;
    vx_reference ring[SLOTS], r;
    vx_scalar exemplar;
    vx_delay delay;
    vx_size slots = 0;
    vx_enum type = 0;
    vx_kernel kernel;
    vx_graph graph;
    vx_node node;

    CHECK_OK(vxQueryContext(context, VX_CONTEXT_REFERENCES, &start, sizeof(start)));
    exemplar = vxCreateScalar(context, VX_TYPE_INT32, &zero);
    delay = vxCreateDelay(context, (vx_reference)exemplar, SLOTS);
    CHECK_OBJECT(delay, VX_TYPE_DELAY);
    CHECK_OK(vxQueryDelay(delay, VX_DELAY_SLOTS, &slots, sizeof(slots)));
    CHECK_OK(vxQueryDelay(delay, VX_DELAY_TYPE, &type, sizeof(type)));
    CHECK(slots == SLOTS && type == VX_TYPE_SCALAR);
    CHECK_STATUS(vxQueryDelay(delay, VX_DELAY_SLOTS, &slots, 1), VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxGetStatus(vxGetReferenceFromDelay(delay, 1)), VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxGetStatus(vxGetReferenceFromDelay(delay, -SLOTS)), VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxAgeDelay((vx_delay)exemplar), VX_ERROR_INVALID_REFERENCE);
    CHECK_STATUS(vxGetStatus((vx_reference)vxCreateDelay(context, (vx_reference)exemplar, 0)), VX_ERROR_INVALID_PARAMETERS);

    /* Aging against a model ring: position p holds index -p. */
    for (i = 0; i < SLOTS; i++) {
        ring[i] = vxGetReferenceFromDelay(delay, -i);
        CHECK_OBJECT(ring[i], VX_TYPE_SCALAR);
        CHECK(ring[i] != (vx_reference)exemplar);
    }
    for (frame = 0; frame < 7; frame++) {
        vx_reference last = ring[SLOTS - 1];
        CHECK_OK(vxAgeDelay(delay));
        for (i = SLOTS - 1; i > 0; i--)
            ring[i] = ring[i - 1];
        ring[0] = last;
        for (i = 0; i < SLOTS; i++)
            CHECK(vxGetReferenceFromDelay(delay, -i) == ring[i]);
    }

    /* Auto-aging: out (index 0) = in (index -1) + 1, every frame. */
    kernel = vxAddUserKernel(context, "org.vxrs.test.increment", VX_KERNEL_BASE(VX_ID_USER, 0) + 2, inc_process, 2,
                             inc_validate, NULL, NULL);
    CHECK_OK(vxAddParameterToKernel(kernel, 0, VX_INPUT, VX_TYPE_SCALAR, VX_PARAMETER_STATE_REQUIRED));
    CHECK_OK(vxAddParameterToKernel(kernel, 1, VX_OUTPUT, VX_TYPE_SCALAR, VX_PARAMETER_STATE_REQUIRED));
    CHECK_OK(vxFinalizeKernel(kernel));
    graph = vxCreateGraph(context);
    node = vxCreateGenericNode(graph, kernel);
    CHECK_OK(vxSetParameterByIndex(node, 0, vxGetReferenceFromDelay(delay, -1)));
    CHECK_OK(vxSetParameterByIndex(node, 1, vxGetReferenceFromDelay(delay, 0)));
    CHECK_OK(vxRegisterAutoAging(graph, delay));
    for (i = 0; i < SLOTS; i++)
        model[i] = value_of(vxGetReferenceFromDelay(delay, -i));
    for (frame = 0; frame < 10; frame++) {
        vx_int32 last;
        CHECK_OK(vxProcessGraph(graph));
        model[0] = model[1] + 1;
        last = model[SLOTS - 1];
        for (i = SLOTS - 1; i > 0; i--)
            model[i] = model[i - 1];
        model[0] = last;
        for (i = 0; i < SLOTS; i++)
            CHECK(value_of(vxGetReferenceFromDelay(delay, -i)) == model[i]);
    }
    CHECK(value_of(vxGetReferenceFromDelay(delay, -1)) == 10);

    r = (vx_reference)delay;
    CHECK_OK(vxReleaseNode(&node));
    CHECK_OK(vxReleaseGraph(&graph));
    CHECK_OK(vxReleaseReference(&r));
    CHECK(r == NULL);
    CHECK_OK(vxReleaseScalar(&exemplar));
    CHECK_OK(vxRemoveKernel(kernel));
    CHECK_OK(vxQueryContext(context, VX_CONTEXT_REFERENCES, &now, sizeof(now)));
    CHECK(now == start);
    CHECK_OK(vxReleaseContext(&context));
    if (check_failures == 0)
        printf("delay: ok\n");
    return check_failures;
}
