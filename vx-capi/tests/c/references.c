/* vx-rs C test: handles and reference counts (the specification's vx_reference rules), error
 * objects, NULL / released / wrong-type handles, the log callback and directives, and contexts
 * back at their starting reference count once everything is released. */
#include <string.h>
#include <VX/vx.h>
#include "check.h"

static int log_calls = 0;
static vx_status log_status = VX_SUCCESS;
static char log_text[VX_MAX_LOG_MESSAGE_LEN];

static void VX_CALLBACK on_log(vx_context context, vx_reference ref, vx_status status, const vx_char string[])
{
    (void)context;
    log_calls++;
    /* A log callback that logs, and makes a call that fails and logs: no deadlock, no recursion. */
    vxAddLogEntry(ref, VX_FAILURE, "from inside the log callback");
    (void)vxCreateImage(vxGetContext(ref), 0, 0, VX_DF_IMAGE_U8);
    log_status = status;
    strncpy(log_text, string, sizeof(log_text) - 1);
}

static vx_uint32 refs_of(vx_context c)
{
    vx_uint32 n = 0;
    CHECK_OK(vxQueryContext(c, VX_CONTEXT_REFERENCES, &n, sizeof(n)));
    return n;
}

static vx_uint32 count_of(vx_reference r)
{
    vx_uint32 n = 0;
    CHECK_OK(vxQueryReference(r, VX_REFERENCE_COUNT, &n, sizeof(n)));
    return n;
}

int main(void)
{
    vx_context context = vxCreateContext();
    vx_context other = vxCreateContext();
    vx_uint32 start, n = 0;
    vx_image image, virt, same;
    vx_graph graph;
    vx_scalar scalar;
    vx_reference ref;
    vx_uint16 version = 0;
    vx_char impl[VX_MAX_IMPLEMENTATION_NAME];
    const vx_char *name = NULL;
    vx_int32 value = 42, back = 0;

    CHECK_OBJECT(context, VX_TYPE_CONTEXT);
    CHECK_OBJECT(other, VX_TYPE_CONTEXT);
    CHECK(context != other);
    start = refs_of(context);

    /* Context queries: sizes are checked. */
    CHECK_OK(vxQueryContext(context, VX_CONTEXT_VERSION, &version, sizeof(version)));
    CHECK(version == VX_VERSION);
    CHECK_STATUS(vxQueryContext(context, VX_CONTEXT_VERSION, &version, 1), VX_ERROR_INVALID_PARAMETERS);
    CHECK_OK(vxQueryContext(context, VX_CONTEXT_IMPLEMENTATION, impl, sizeof(impl)));
    CHECK(strcmp(impl, "vx-rs") == 0);
    CHECK_STATUS(vxQueryContext(context, VX_ERROR_INVALID_TYPE, &n, sizeof(n)), VX_ERROR_NOT_SUPPORTED);
    CHECK_STATUS(vxQueryContext(NULL, VX_CONTEXT_REFERENCES, &n, sizeof(n)), VX_ERROR_INVALID_REFERENCE);

    /* Creating counts; the same object keeps its handle. */
    image = vxCreateImage(context, 64, 48, VX_DF_IMAGE_U8);
    CHECK_OBJECT(image, VX_TYPE_IMAGE);
    CHECK(refs_of(context) == start + 1);
    CHECK(vxGetContext((vx_reference)image) == context);
    CHECK(count_of((vx_reference)image) == 1);
    CHECK_OK(vxRetainReference((vx_reference)image));
    CHECK(count_of((vx_reference)image) == 2);
    same = image;
    CHECK_OK(vxReleaseImage(&same));
    CHECK(same == NULL);
    CHECK(count_of((vx_reference)image) == 1);

    /* Names. */
    CHECK_OK(vxSetReferenceName((vx_reference)image, "input"));
    CHECK_OK(vxQueryReference((vx_reference)image, VX_REFERENCE_NAME, &name, sizeof(name)));
    CHECK(name != NULL && strcmp(name, "input") == 0);

    /* Wrong-type handles are refused, not misread. */
    CHECK_STATUS(vxQueryGraph((vx_graph)image, VX_GRAPH_NUMNODES, &n, sizeof(n)), VX_ERROR_INVALID_REFERENCE);
    CHECK_STATUS(vxQueryImage((vx_image)context, VX_IMAGE_WIDTH, &n, sizeof(n)), VX_ERROR_INVALID_REFERENCE);
    ref = (vx_reference)image;
    CHECK_STATUS(vxReleaseGraph((vx_graph *)&ref), VX_ERROR_INVALID_REFERENCE);
    CHECK(ref == (vx_reference)image);

    /* Error objects: a failed create returns one; vxGetStatus reads it. */
    virt = vxCreateImage(context, 0, 48, VX_DF_IMAGE_U8);
    CHECK_STATUS(vxGetStatus((vx_reference)virt), VX_ERROR_INVALID_DIMENSION);
    CHECK_STATUS(vxGetStatus(NULL), VX_ERROR_NO_RESOURCES);
    CHECK(refs_of(context) == start + 1);

    /* Scalars copy both ways. */
    scalar = vxCreateScalar(context, VX_TYPE_INT32, &value);
    CHECK_OBJECT(scalar, VX_TYPE_SCALAR);
    CHECK_OK(vxCopyScalar(scalar, &back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(back == 42);
    value = -7;
    CHECK_OK(vxCopyScalar(scalar, &value, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK_OK(vxCopyScalar(scalar, &back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(back == -7);
    CHECK_STATUS(vxCopyScalarWithSize(scalar, 2, &back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);

    /* The log callback gets vx-rs's errors and vxAddLogEntry's, unless logging is disabled. */
    graph = vxCreateGraph(context);
    CHECK_OBJECT(graph, VX_TYPE_GRAPH);
    vxRegisterLogCallback(context, on_log, vx_false_e);
    vxAddLogEntry((vx_reference)graph, VX_FAILURE, "hello %d", 7);
    CHECK(log_calls == 1 && log_status == VX_FAILURE && strcmp(log_text, "hello 7") == 0);
    CHECK_OK(vxDirective((vx_reference)graph, VX_DIRECTIVE_DISABLE_LOGGING));
    vxAddLogEntry((vx_reference)graph, VX_FAILURE, "quiet");
    CHECK(log_calls == 1);
    CHECK_OK(vxDirective((vx_reference)graph, VX_DIRECTIVE_ENABLE_LOGGING));
    vxAddLogEntry((vx_reference)graph, VX_FAILURE, "%*s", VX_MAX_LOG_MESSAGE_LEN + 20, "");
    CHECK(log_calls == 2 && strlen(log_text) < VX_MAX_LOG_MESSAGE_LEN);
    virt = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_VIRT);
    CHECK_OBJECT(virt, VX_TYPE_IMAGE);
    CHECK(refs_of(context) == start + 4);

    /* Releasing everything brings the context back to where it started. */
    CHECK_OK(vxReleaseImage(&virt));
    CHECK_OK(vxReleaseScalar(&scalar));
    CHECK_OK(vxReleaseGraph(&graph));
    CHECK_OK(vxReleaseImage(&image));
    CHECK(image == NULL && graph == NULL && scalar == NULL);
    CHECK(refs_of(context) == start);

    /* Unmapping with another image's map id is refused. */
    {
        vx_image a = vxCreateImage(context, 4, 4, VX_DF_IMAGE_U8), b = vxCreateImage(context, 4, 4, VX_DF_IMAGE_U8);
        vx_rectangle_t rect = {0, 0, 4, 4};
        vx_map_id id;
        vx_imagepatch_addressing_t addr;
        void *p = NULL;
        CHECK_OK(vxMapImagePatch(a, &rect, 0, &id, &addr, &p, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
        CHECK_STATUS(vxUnmapImagePatch(b, id), VX_ERROR_INVALID_PARAMETERS);
        CHECK_OK(vxUnmapImagePatch(a, id));
        CHECK_STATUS(vxUnmapImagePatch(a, id), VX_ERROR_INVALID_PARAMETERS);
        CHECK_OK(vxReleaseImage(&a));
        CHECK_OK(vxReleaseImage(&b));
    }

    /* A released handle is refused (the table no longer holds it). */
    CHECK_STATUS(vxReleaseImage(&same), VX_ERROR_INVALID_REFERENCE);
    CHECK_STATUS(vxReleaseContext(NULL), VX_ERROR_INVALID_REFERENCE);

    CHECK_OK(vxReleaseContext(&other));
    CHECK(other == NULL);
    CHECK_OK(vxReleaseContext(&context));
    CHECK(context == NULL);
    if (check_failures == 0)
        printf("references: ok\n");
    return check_failures;
}
