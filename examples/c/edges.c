/* vx-rs C example: the demo's edge pipeline from C, with kernels written in Rust.
 *
 *   edges INPUT.pgm OUTPUT.pgm [THRESHOLD]
 *
 * Loads the vx_filters module (a vx-rs kernel module, found on VX_MODULE_PATH or
 * LD_LIBRARY_PATH) with vxLoadKernels and runs Gaussian 3x3 -> Sobel 3x3 -> magnitude ->
 * threshold on a binary greyscale PGM (P5, 8-bit), through the OpenVX C API only: the four
 * nodes are fused by vx-rs into one pass. Writes the edges as a PGM and prints the graph's
 * average time over 50 frames. Build: see examples/c/README.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <VX/vx.h>

#define FRAMES 50

static int fail(const char *what, vx_status status)
{
    fprintf(stderr, "edges: %s failed (status %d)\n", what, (int)status);
    return 1;
}

static void VX_CALLBACK on_log(vx_context context, vx_reference ref, vx_status status, const vx_char string[])
{
    (void)context;
    (void)ref;
    fprintf(stderr, "vx-rs [%d]: %s\n", (int)status, string);
}

/* Reads a binary PGM; returns the pixels (malloc'd) and sets *w, *h. */
static unsigned char *read_pgm(const char *path, vx_uint32 *w, vx_uint32 *h)
{
    FILE *f = fopen(path, "rb");
    unsigned int width = 0, height = 0, maxval = 0;
    unsigned char *pixels;
    if (f == NULL)
        return NULL;
    if (fscanf(f, "P5 %u %u %u", &width, &height, &maxval) != 3 || maxval != 255 || width == 0 || height == 0 ||
        width > 65536 || height > 65536 || fgetc(f) == EOF) {
        fclose(f);
        return NULL;
    }
    pixels = (unsigned char *)malloc((size_t)width * height);
    if (pixels != NULL && fread(pixels, 1, (size_t)width * height, f) != (size_t)width * height) {
        free(pixels);
        pixels = NULL;
    }
    fclose(f);
    *w = width;
    *h = height;
    return pixels;
}

static int write_pgm(const char *path, const unsigned char *pixels, vx_uint32 w, vx_uint32 h)
{
    FILE *f = fopen(path, "wb");
    int ok;
    if (f == NULL)
        return 0;
    ok = fprintf(f, "P5\n%u %u\n255\n", (unsigned)w, (unsigned)h) > 0 &&
         fwrite(pixels, 1, (size_t)w * h, f) == (size_t)w * h;
    return fclose(f) == 0 && ok;
}

/* Copies the whole of `image` from or to `pixels` (w*h bytes, rows packed). */
static vx_status copy_image(vx_image image, unsigned char *pixels, vx_uint32 w, vx_uint32 h, vx_enum usage)
{
    vx_rectangle_t rect;
    vx_map_id id;
    vx_imagepatch_addressing_t addr;
    void *base = NULL;
    vx_uint32 y;
    vx_status s;
    rect.start_x = 0;
    rect.start_y = 0;
    rect.end_x = w;
    rect.end_y = h;
    s = vxMapImagePatch(image, &rect, 0, &id, &addr, &base, usage, VX_MEMORY_TYPE_HOST, 0);
    if (s != VX_SUCCESS)
        return s;
    for (y = 0; y < h; y++) {
        unsigned char *row = (unsigned char *)base + (size_t)y * (size_t)addr.stride_y;
        if (usage == VX_WRITE_ONLY)
            memcpy(row, pixels + (size_t)y * w, w);
        else
            memcpy(pixels + (size_t)y * w, row, w);
    }
    return vxUnmapImagePatch(image, id);
}

static vx_node node(vx_graph graph, vx_context context, const char *kernel_name, vx_reference *params, vx_uint32 n)
{
    vx_kernel kernel = vxGetKernelByName(context, kernel_name);
    vx_node nd;
    vx_uint32 i;
    if (vxGetStatus((vx_reference)kernel) != VX_SUCCESS)
        return NULL;
    nd = vxCreateGenericNode(graph, kernel);
    vxReleaseKernel(&kernel);
    for (i = 0; i < n; i++)
        if (vxSetParameterByIndex(nd, i, params[i]) != VX_SUCCESS)
            return NULL;
    return nd;
}

int main(int argc, char **argv)
{
    vx_uint32 w = 0, h = 0, i;
    vx_uint8 level = (vx_uint8)(argc > 3 ? atoi(argv[3]) : 100);
    unsigned char *pixels;
    vx_context context;
    vx_graph graph;
    vx_image src, blurred, gx, gy, magnitude, edges;
    vx_scalar threshold;
    vx_node nodes[4];
    vx_perf_t perf;
    vx_status s;
    size_t on = 0;

    if (argc < 3) {
        fprintf(stderr, "usage: edges INPUT.pgm OUTPUT.pgm [THRESHOLD]\n");
        return 2;
    }
    pixels = read_pgm(argv[1], &w, &h);
    if (pixels == NULL) {
        fprintf(stderr, "edges: cannot read %s (a binary 8-bit PGM)\n", argv[1]);
        return 2;
    }
    context = vxCreateContext();
    if (vxGetStatus((vx_reference)context) != VX_SUCCESS)
        return fail("vxCreateContext", vxGetStatus((vx_reference)context));
    vxRegisterLogCallback(context, on_log, vx_true_e);
    s = vxLoadKernels(context, "vx_filters");
    if (s != VX_SUCCESS)
        return fail("vxLoadKernels(vx_filters)", s);

    graph = vxCreateGraph(context);
    src = vxCreateImage(context, w, h, VX_DF_IMAGE_U8);
    edges = vxCreateImage(context, w, h, VX_DF_IMAGE_U8);
    blurred = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_VIRT);
    gx = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_VIRT);
    gy = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_VIRT);
    magnitude = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_VIRT);
    threshold = vxCreateScalar(context, VX_TYPE_UINT8, &level);
    {
        vx_reference p0[] = {(vx_reference)src, (vx_reference)blurred};
        vx_reference p1[] = {(vx_reference)blurred, (vx_reference)gx, (vx_reference)gy};
        vx_reference p2[] = {(vx_reference)gx, (vx_reference)gy, (vx_reference)magnitude};
        vx_reference p3[] = {(vx_reference)magnitude, (vx_reference)threshold, (vx_reference)edges};
        nodes[0] = node(graph, context, "filters.gaussian3x3", p0, 2);
        nodes[1] = node(graph, context, "filters.sobel3x3", p1, 3);
        nodes[2] = node(graph, context, "filters.magnitude", p2, 3);
        nodes[3] = node(graph, context, "filters.threshold", p3, 3);
    }
    for (i = 0; i < 4; i++)
        if (nodes[i] == NULL)
            return fail("building the graph", VX_FAILURE);
    if ((s = copy_image(src, pixels, w, h, VX_WRITE_ONLY)) != VX_SUCCESS)
        return fail("writing the input", s);
    if ((s = vxVerifyGraph(graph)) != VX_SUCCESS)
        return fail("vxVerifyGraph", s);
    for (i = 0; i < FRAMES; i++)
        if ((s = vxProcessGraph(graph)) != VX_SUCCESS)
            return fail("vxProcessGraph", s);
    if ((s = copy_image(edges, pixels, w, h, VX_READ_ONLY)) != VX_SUCCESS)
        return fail("reading the edges", s);
    if (!write_pgm(argv[2], pixels, w, h)) {
        fprintf(stderr, "edges: cannot write %s\n", argv[2]);
        return 1;
    }
    vxQueryGraph(graph, VX_GRAPH_PERFORMANCE, &perf, sizeof(perf));
    for (i = 0; i < w * h; i++)
        on += pixels[i] == 255;
    printf("%s (%ux%u) -> %s  [threshold %u, %d frames, %.3f ms per frame]\n", argv[1], (unsigned)w, (unsigned)h,
           argv[2], (unsigned)level, FRAMES, (double)perf.avg / 1e6);
    printf("edge pixels: %lu of %lu\n", (unsigned long)on, (unsigned long)w * h);

    for (i = 0; i < 4; i++)
        vxReleaseNode(&nodes[i]);
    vxReleaseImage(&src);
    vxReleaseImage(&blurred);
    vxReleaseImage(&gx);
    vxReleaseImage(&gy);
    vxReleaseImage(&magnitude);
    vxReleaseImage(&edges);
    vxReleaseScalar(&threshold);
    vxReleaseGraph(&graph);
    vxUnloadKernels(context, "vx_filters");
    vxReleaseContext(&context);
    free(pixels);
    return 0;
}
