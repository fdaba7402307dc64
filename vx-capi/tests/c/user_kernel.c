/* vx-rs C test: a user kernel written in C (validate, init, deinit, process) — the
 * specification's install, verify and execution sequences — with callbacks that call back into
 * the API (query the node and its images, map patches, read local data), a validator that
 * refuses, nodes chained through a virtual image, graphs processed from several threads at once,
 * and the context back at its starting reference count after release. */
#include <pthread.h>
#include <string.h>
#include <VX/vx.h>
#include "check.h"

#define KERNEL_NAME "org.vxrs.test.invert"
#define MAGIC 0x5eed1234u
#define W 37
#define H 23

static int inits = 0, deinits = 0, deinits_with_local = 0;
static pthread_mutex_t counts = PTHREAD_MUTEX_INITIALIZER;

static vx_status VX_CALLBACK invert_validate(vx_node node, const vx_reference parameters[], vx_uint32 num,
                                             vx_meta_format metas[])
{
    vx_df_image format = 0;
    vx_uint32 width = 0, height = 0;
    vx_size local = 0;
    if (num != 2 || metas[0] != NULL || metas[1] == NULL)
        return VX_ERROR_INVALID_PARAMETERS;
    /* Re-entrant calls while the graph verifies. */
    if (vxQueryNode(node, VX_NODE_LOCAL_DATA_SIZE, &local, sizeof(local)) != VX_SUCCESS)
        return VX_FAILURE;
    if (vxQueryImage((vx_image)parameters[0], VX_IMAGE_FORMAT, &format, sizeof(format)) != VX_SUCCESS ||
        vxQueryImage((vx_image)parameters[0], VX_IMAGE_WIDTH, &width, sizeof(width)) != VX_SUCCESS ||
        vxQueryImage((vx_image)parameters[0], VX_IMAGE_HEIGHT, &height, sizeof(height)) != VX_SUCCESS)
        return VX_FAILURE;
    if (format != VX_DF_IMAGE_U8)
        return VX_ERROR_INVALID_FORMAT;
    format = VX_DF_IMAGE_U8;
    if (vxSetMetaFormatAttribute(metas[1], VX_IMAGE_FORMAT, &format, sizeof(format)) != VX_SUCCESS ||
        vxSetMetaFormatAttribute(metas[1], VX_IMAGE_WIDTH, &width, sizeof(width)) != VX_SUCCESS ||
        vxSetMetaFormatAttribute(metas[1], VX_IMAGE_HEIGHT, &height, sizeof(height)) != VX_SUCCESS)
        return VX_FAILURE;
    return VX_SUCCESS;
}

static vx_status VX_CALLBACK invert_init(vx_node node, const vx_reference *parameters, vx_uint32 num)
{
    vx_uint32 *local = NULL;
    vx_size size = 0;
    (void)parameters;
    (void)num;
    if (vxQueryNode(node, VX_NODE_LOCAL_DATA_SIZE, &size, sizeof(size)) != VX_SUCCESS || size != 16)
        return VX_FAILURE;
    if (vxQueryNode(node, VX_NODE_LOCAL_DATA_PTR, &local, sizeof(local)) != VX_SUCCESS || local == NULL)
        return VX_FAILURE;
    local[0] = MAGIC;
    pthread_mutex_lock(&counts);
    inits++;
    pthread_mutex_unlock(&counts);
    return VX_SUCCESS;
}

static vx_status VX_CALLBACK invert_deinit(vx_node node, const vx_reference *parameters, vx_uint32 num)
{
    vx_uint32 *local = NULL;
    int ok;
    (void)parameters;
    (void)num;
    /* Also when the graph is being released: the node handle and its local data are there. */
    ok = node != NULL && vxQueryNode(node, VX_NODE_LOCAL_DATA_PTR, &local, sizeof(local)) == VX_SUCCESS &&
         local != NULL && local[0] == MAGIC;
    pthread_mutex_lock(&counts);
    deinits++;
    deinits_with_local += ok;
    pthread_mutex_unlock(&counts);
    return VX_SUCCESS;
}

struct worker_query {
    vx_node node;
    vx_uint32 *local;
    vx_status status;
};

/* A thread of the kernel's own, asking about the node while its process callback waits. */
static void *query_from_worker(void *arg)
{
    struct worker_query *q = (struct worker_query *)arg;
    q->status = vxQueryNode(q->node, VX_NODE_LOCAL_DATA_PTR, &q->local, sizeof(q->local));
    return NULL;
}

static vx_status VX_CALLBACK invert_process(vx_node node, const vx_reference *parameters, vx_uint32 num)
{
    vx_image in = (vx_image)parameters[0], out = (vx_image)parameters[1];
    vx_uint32 width = 0, height = 0, x, y, *local = NULL;
    vx_rectangle_t rect;
    vx_map_id in_id, out_id;
    vx_imagepatch_addressing_t in_addr, out_addr;
    void *in_ptr = NULL, *out_ptr = NULL;
    if (num != 2)
        return VX_ERROR_INVALID_PARAMETERS;
    if (vxQueryNode(node, VX_NODE_LOCAL_DATA_PTR, &local, sizeof(local)) != VX_SUCCESS || local == NULL ||
        local[0] != MAGIC)
        return VX_FAILURE;
    {
        struct worker_query q;
        pthread_t t;
        q.node = node;
        q.local = NULL;
        q.status = VX_FAILURE;
        pthread_create(&t, NULL, query_from_worker, &q);
        pthread_join(t, NULL);
        if (q.status != VX_SUCCESS || q.local != local)
            return VX_FAILURE;
    }
    vxQueryImage(in, VX_IMAGE_WIDTH, &width, sizeof(width));
    vxQueryImage(in, VX_IMAGE_HEIGHT, &height, sizeof(height));
    rect.start_x = 0;
    rect.start_y = 0;
    rect.end_x = width;
    rect.end_y = height;
    if (vxMapImagePatch(in, &rect, 0, &in_id, &in_addr, &in_ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0) != VX_SUCCESS)
        return VX_FAILURE;
    if (vxMapImagePatch(out, &rect, 0, &out_id, &out_addr, &out_ptr, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST, 0) !=
        VX_SUCCESS) {
        vxUnmapImagePatch(in, in_id);
        return VX_FAILURE;
    }
    for (y = 0; y < height; y++)
        for (x = 0; x < width; x++) {
            const vx_uint8 *s = (const vx_uint8 *)in_ptr + y * in_addr.stride_y + x * in_addr.stride_x;
            vx_uint8 *d = (vx_uint8 *)out_ptr + y * out_addr.stride_y + x * out_addr.stride_x;
            *d = (vx_uint8)(255 - *s);
        }
    vxUnmapImagePatch(out, out_id);
    vxUnmapImagePatch(in, in_id);
    return VX_SUCCESS;
}

static void fill(vx_image image, vx_uint32 seed)
{
    vx_rectangle_t rect = {0, 0, W, H};
    vx_map_id id;
    vx_imagepatch_addressing_t addr;
    void *ptr = NULL;
    vx_uint32 x, y;
    CHECK_OK(vxMapImagePatch(image, &rect, 0, &id, &addr, &ptr, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST, 0));
    CHECK(addr.dim_x == W && addr.dim_y == H && addr.stride_x == 1);
    for (y = 0; y < H; y++)
        for (x = 0; x < W; x++)
            *((vx_uint8 *)ptr + y * addr.stride_y + x) = (vx_uint8)(x * 7 + y * 13 + seed);
    CHECK_OK(vxUnmapImagePatch(image, id));
}

/* The number of pixels of `image` that differ from fill(seed) (inverted when `inverted`). */
static int mismatches(vx_image image, vx_uint32 seed, int inverted)
{
    vx_rectangle_t rect = {0, 0, W, H};
    vx_map_id id;
    vx_imagepatch_addressing_t addr;
    void *ptr = NULL;
    vx_uint32 x, y;
    int bad = 0;
    CHECK_OK(vxMapImagePatch(image, &rect, 0, &id, &addr, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
    for (y = 0; y < H; y++)
        for (x = 0; x < W; x++) {
            vx_uint8 want = (vx_uint8)(x * 7 + y * 13 + seed);
            if (inverted)
                want = (vx_uint8)(255 - want);
            bad += *((vx_uint8 *)ptr + y * addr.stride_y + x) != want;
        }
    CHECK_OK(vxUnmapImagePatch(image, id));
    return bad;
}

struct job {
    vx_context context;
    vx_uint32 seed;
    int failures;
};

static void *run_job(void *arg)
{
    struct job *j = (struct job *)arg;
    vx_kernel kernel = vxGetKernelByName(j->context, KERNEL_NAME);
    vx_graph graph = vxCreateGraph(j->context);
    vx_image in = vxCreateImage(j->context, W, H, VX_DF_IMAGE_U8);
    vx_image out = vxCreateImage(j->context, W, H, VX_DF_IMAGE_U8);
    vx_node node = vxCreateGenericNode(graph, kernel);
    int i;
    if (vxSetParameterByIndex(node, 0, (vx_reference)in) != VX_SUCCESS ||
        vxSetParameterByIndex(node, 1, (vx_reference)out) != VX_SUCCESS)
        j->failures++;
    for (i = 0; i < 20; i++) {
        fill(in, j->seed + (vx_uint32)i);
        if (vxProcessGraph(graph) != VX_SUCCESS || mismatches(out, j->seed + (vx_uint32)i, 1) != 0)
            j->failures++;
    }
    vxReleaseNode(&node);
    vxReleaseImage(&in);
    vxReleaseImage(&out);
    vxReleaseGraph(&graph);
    vxReleaseKernel(&kernel);
    return NULL;
}

int main(void)
{
    vx_context context = vxCreateContext();
    vx_uint32 start = 0, now = 0, params = 0;
    vx_size local = 16;
    vx_kernel kernel;
    vx_graph graph;
    vx_image in, mid, out, wrong, spare;
    vx_node first, second, bad;
    vx_parameter param;
    vx_reference value = NULL;
    vx_enum dir = 0, type = 0;
    pthread_t threads[4];
    struct job jobs[4];
    int i;

    CHECK_OBJECT(context, VX_TYPE_CONTEXT);
    CHECK_OK(vxQueryContext(context, VX_CONTEXT_REFERENCES, &start, sizeof(start)));

    /* Install: add, parameters, attributes, finalize. */
    kernel = vxAddUserKernel(context, KERNEL_NAME, VX_KERNEL_BASE(VX_ID_USER, 0) + 1, invert_process, 2,
                             invert_validate, invert_init, invert_deinit);
    CHECK_OBJECT(kernel, VX_TYPE_KERNEL);
    CHECK_OK(vxAddParameterToKernel(kernel, 0, VX_INPUT, VX_TYPE_IMAGE, VX_PARAMETER_STATE_REQUIRED));
    CHECK_OK(vxAddParameterToKernel(kernel, 1, VX_OUTPUT, VX_TYPE_IMAGE, VX_PARAMETER_STATE_REQUIRED));
    CHECK_STATUS(vxAddParameterToKernel(kernel, 2, VX_INPUT, VX_TYPE_IMAGE, VX_PARAMETER_STATE_REQUIRED),
                 VX_ERROR_INVALID_PARAMETERS);
    CHECK_OK(vxSetKernelAttribute(kernel, VX_KERNEL_LOCAL_DATA_SIZE, &local, sizeof(local)));
    CHECK_OK(vxFinalizeKernel(kernel));
    CHECK_OK(vxQueryKernel(kernel, VX_KERNEL_PARAMETERS, &params, sizeof(params)));
    CHECK(params == 2);

    /* Two nodes through a virtual image: inverting twice gives the input back. */
    graph = vxCreateGraph(context);
    in = vxCreateImage(context, W, H, VX_DF_IMAGE_U8);
    out = vxCreateImage(context, W, H, VX_DF_IMAGE_U8);
    mid = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_VIRT);
    first = vxCreateGenericNode(graph, kernel);
    second = vxCreateGenericNode(graph, kernel);
    CHECK_OBJECT(first, VX_TYPE_NODE);
    CHECK_OK(vxSetParameterByIndex(first, 0, (vx_reference)in));
    CHECK_OK(vxSetParameterByIndex(first, 1, (vx_reference)mid));
    CHECK_OK(vxSetParameterByIndex(second, 0, (vx_reference)mid));
    CHECK_OK(vxSetParameterByIndex(second, 1, (vx_reference)out));
    CHECK(vxIsGraphVerified(graph) == vx_false_e);
    CHECK_OK(vxVerifyGraph(graph));
    CHECK(vxIsGraphVerified(graph) == vx_true_e);
    CHECK(inits == 2);
    fill(in, 3);
    CHECK_OK(vxProcessGraph(graph));
    CHECK(mismatches(out, 3, 0) == 0);
    fill(in, 99);
    CHECK_OK(vxScheduleGraph(graph));
    CHECK_OK(vxWaitGraph(graph));
    CHECK(mismatches(out, 99, 0) == 0);

    /* Parameters read back: the same handle as the object set. */
    param = vxGetParameterByIndex(first, 0);
    CHECK_OBJECT(param, VX_TYPE_PARAMETER);
    CHECK_OK(vxQueryParameter(param, VX_PARAMETER_DIRECTION, &dir, sizeof(dir)));
    CHECK_OK(vxQueryParameter(param, VX_PARAMETER_TYPE, &type, sizeof(type)));
    {
        vx_uint32 before = 0, after = 0;
        CHECK_OK(vxQueryReference((vx_reference)in, VX_REFERENCE_COUNT, &before, sizeof(before)));
        CHECK_STATUS(vxQueryParameter(param, VX_PARAMETER_REF, &value, 1), VX_ERROR_INVALID_PARAMETERS);
        CHECK_OK(vxQueryReference((vx_reference)in, VX_REFERENCE_COUNT, &after, sizeof(after)));
        CHECK(before == after);
    }
    CHECK_OK(vxQueryParameter(param, VX_PARAMETER_REF, &value, sizeof(value)));
    CHECK(dir == VX_INPUT && type == VX_TYPE_IMAGE && value == (vx_reference)in);
    CHECK_OK(vxReleaseReference(&value));
    CHECK_OK(vxReleaseParameter(&param));

    /* A validator that refuses: verify fails with its status. */
    wrong = vxCreateImage(context, W, H, VX_DF_IMAGE_S16);
    spare = vxCreateImage(context, W, H, VX_DF_IMAGE_U8);
    bad = vxCreateGenericNode(graph, kernel);
    CHECK_OK(vxSetParameterByIndex(bad, 0, (vx_reference)wrong));
    CHECK_OK(vxSetParameterByIndex(bad, 1, (vx_reference)spare));
    CHECK_STATUS(vxVerifyGraph(graph), VX_ERROR_INVALID_FORMAT);
    CHECK_OK(vxRemoveNode(&bad));
    CHECK(bad == NULL);
    CHECK_OK(vxVerifyGraph(graph));
    CHECK_OK(vxReleaseImage(&wrong));
    CHECK_OK(vxReleaseImage(&spare));

    /* Several threads, each its own graph over the same kernel, at once. */
    for (i = 0; i < 4; i++) {
        jobs[i].context = context;
        jobs[i].seed = (vx_uint32)(i * 31);
        jobs[i].failures = 0;
        pthread_create(&threads[i], NULL, run_job, &jobs[i]);
    }
    for (i = 0; i < 4; i++) {
        pthread_join(threads[i], NULL);
        CHECK(jobs[i].failures == 0);
    }

    CHECK_OK(vxReleaseNode(&first));
    CHECK_OK(vxReleaseNode(&second));
    CHECK_OK(vxReleaseImage(&mid));
    CHECK_OK(vxReleaseImage(&in));
    CHECK_OK(vxReleaseImage(&out));
    CHECK_OK(vxReleaseGraph(&graph));
    CHECK(inits == deinits && inits >= 6);
    CHECK(deinits_with_local == deinits);
    CHECK_OK(vxRemoveKernel(kernel));
    /* The same name again: a new kernel, a new handle that works. */
    kernel = vxAddUserKernel(context, KERNEL_NAME, VX_KERNEL_BASE(VX_ID_USER, 0) + 1, invert_process, 2,
                             invert_validate, invert_init, invert_deinit);
    CHECK_OBJECT(kernel, VX_TYPE_KERNEL);
    CHECK_OK(vxAddParameterToKernel(kernel, 0, VX_INPUT, VX_TYPE_IMAGE, VX_PARAMETER_STATE_REQUIRED));
    CHECK_OK(vxAddParameterToKernel(kernel, 1, VX_OUTPUT, VX_TYPE_IMAGE, VX_PARAMETER_STATE_REQUIRED));
    CHECK_OK(vxFinalizeKernel(kernel));
    CHECK_OK(vxRemoveKernel(kernel));
    CHECK_OK(vxQueryContext(context, VX_CONTEXT_REFERENCES, &now, sizeof(now)));
    CHECK(now == start);
    CHECK_OK(vxReleaseContext(&context));
    if (check_failures == 0)
        printf("user_kernel: ok\n");
    return check_failures;
}
