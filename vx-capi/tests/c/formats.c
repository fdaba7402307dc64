/* vx-rs C test: the YUV image formats beyond NV12 (NV21, UYVY, YUYV, IYUV, YUV4) through the C
 * API: creation (real, virtual, uniform), the plane count, format and color space, every plane
 * written and read through vxMapImagePatch with its addressing (dim_x / dim_y in pixels of plane
 * 0, stride_x the element size, scale and step the plane's subsampling) and through
 * vxCopyImagePatch, the patch address helpers, and ROIs on the format's grid. */
#include <string.h>
#include <VX/vx.h>
#include "check.h"

#define W 7
#define H 5

typedef struct {
    vx_df_image format;
    const char *name;
    vx_size planes;
    /* Per plane: bytes per element, subsampling in x and y. */
    vx_uint32 bpe[3], sub_x[3], sub_y[3];
    /* The start an ROI may not have (odd coordinates where the format forbids them; YUV4 allows
     * any), and one it may have. */
    vx_uint32 bad_x, bad_y, good_x, good_y;
} format_t;

static const format_t formats[] = {
    {VX_DF_IMAGE_NV21, "NV21", 2, {1, 2, 0}, {1, 2, 0}, {1, 2, 0}, 1, 0, 2, 2},
    {VX_DF_IMAGE_UYVY, "UYVY", 1, {2, 0, 0}, {1, 0, 0}, {1, 0, 0}, 1, 0, 2, 1},
    {VX_DF_IMAGE_YUYV, "YUYV", 1, {2, 0, 0}, {1, 0, 0}, {1, 0, 0}, 3, 2, 4, 3},
    {VX_DF_IMAGE_IYUV, "IYUV", 3, {1, 1, 1}, {1, 2, 2}, {1, 2, 2}, 2, 1, 2, 2},
    {VX_DF_IMAGE_YUV4, "YUV4", 3, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1, 1, 1, 1},
};

static vx_status status_of(void *ref)
{
    return vxGetStatus((vx_reference)ref);
}

/* The byte `b` of element (ex, ey) of plane `p`: a value that differs between planes, elements
 * and bytes. */
static vx_uint8 pattern(vx_uint32 p, vx_uint32 ex, vx_uint32 ey, vx_uint32 b)
{
    return (vx_uint8)(p * 71 + ey * 13 + ex * 3 + b * 101 + 1);
}

/* Write every element of every plane of `img` through maps, checking the addressing; then read
 * every plane back through a map and through a copy. */
static void planes_round_trip(vx_image img, const format_t *f)
{
    vx_rectangle_t all = {0, 0, W, H};
    vx_uint32 p, x, y, b;
    for (p = 0; p < f->planes; p++) {
        vx_imagepatch_addressing_t a;
        vx_map_id map = 0;
        void *ptr = NULL;
        vx_uint32 pw = (W + f->sub_x[p] - 1) / f->sub_x[p], ph = (H + f->sub_y[p] - 1) / f->sub_y[p];
        memset(&a, 0, sizeof(a));
        CHECK_OK(vxMapImagePatch(img, &all, p, &map, &a, &ptr, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST, 0));
        if (ptr == NULL)
            continue;
        CHECK(a.dim_x == W && a.dim_y == H);
        CHECK(a.stride_x == (vx_int32)f->bpe[p]);
        CHECK((vx_uint32)a.stride_x_bits == 8 * f->bpe[p]);
        CHECK(a.stride_y >= (vx_int32)(pw * f->bpe[p]));
        CHECK(a.scale_x == VX_SCALE_UNITY / f->sub_x[p] && a.scale_y == VX_SCALE_UNITY / f->sub_y[p]);
        CHECK(a.step_x == f->sub_x[p] && (vx_uint32)a.step_y == f->sub_y[p]);
        if (a.step_x == 0 || a.step_y == 0)
            continue;
        for (y = 0; y < H; y += a.step_y) {
            for (x = 0; x < W; x += a.step_x) {
                vx_uint8 *px = (vx_uint8 *)vxFormatImagePatchAddress2d(ptr, x, y, &a);
                vx_uint8 *want = (vx_uint8 *)ptr + (y / f->sub_y[p]) * a.stride_y + (x / f->sub_x[p]) * a.stride_x;
                CHECK(px == want);
                CHECK(vxFormatImagePatchAddress1d(ptr, y * W + x, &a) == (void *)px);
                if (px != want)
                    continue;
                for (b = 0; b < f->bpe[p]; b++)
                    px[b] = pattern(p, x / f->sub_x[p], y / f->sub_y[p], b);
            }
        }
        /* The last pixel's element is the plane's last one: ceil(W / sub_x) - 1. */
        CHECK(vxFormatImagePatchAddress2d(ptr, W - 1, H - 1, &a) ==
              (void *)((vx_uint8 *)ptr + (ph - 1) * a.stride_y + (pw - 1) * a.stride_x));
        CHECK(vxFormatImagePatchAddress2d(ptr, W, 0, &a) == NULL);
        CHECK_OK(vxUnmapImagePatch(img, map));
    }
    for (p = 0; p < f->planes; p++) {
        vx_imagepatch_addressing_t a, user;
        vx_map_id map = 0;
        void *ptr = NULL;
        vx_uint8 copied[W * H * 2];
        vx_uint32 pw = (W + f->sub_x[p] - 1) / f->sub_x[p], ph = (H + f->sub_y[p] - 1) / f->sub_y[p];
        int same = 1;
        CHECK_OK(vxMapImagePatch(img, &all, p, &map, &a, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
        if (ptr == NULL)
            continue;
        for (y = 0; y < ph; y++)
            for (x = 0; x < pw; x++)
                for (b = 0; b < f->bpe[p]; b++)
                    if (((vx_uint8 *)ptr)[y * a.stride_y + x * a.stride_x + b] != pattern(p, x, y, b))
                        same = 0;
        CHECK(same);
        CHECK_OK(vxUnmapImagePatch(img, map));
        /* The same bytes through a copy into tightly packed rows. */
        memset(&user, 0, sizeof(user));
        user.dim_x = pw;
        user.dim_y = ph;
        user.stride_x = (vx_int32)f->bpe[p];
        user.stride_y = (vx_int32)(pw * f->bpe[p]);
        memset(copied, 0, sizeof(copied));
        CHECK_OK(vxCopyImagePatch(img, &all, p, &user, copied, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
        same = 1;
        for (y = 0; y < ph; y++)
            for (x = 0; x < pw; x++)
                for (b = 0; b < f->bpe[p]; b++)
                    if (copied[(y * pw + x) * f->bpe[p] + b] != pattern(p, x, y, b))
                        same = 0;
        CHECK(same);
    }
    /* No plane past the last. */
    {
        vx_imagepatch_addressing_t a;
        vx_map_id map = 0;
        void *ptr = NULL;
        CHECK(vxMapImagePatch(img, &all, (vx_uint32)f->planes, &map, &a, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0) !=
              VX_SUCCESS);
    }
}

/* Byte `b` of the element at pixel (x, y) of plane `p`, read through a map of one pixel. */
static int read_byte(vx_image img, vx_uint32 p, vx_uint32 x, vx_uint32 y, vx_uint32 b)
{
    vx_rectangle_t one;
    vx_imagepatch_addressing_t a;
    vx_map_id map = 0;
    void *ptr = NULL;
    int v = -1;
    one.start_x = x;
    one.start_y = y;
    one.end_x = x + 1;
    one.end_y = y + 1;
    if (vxMapImagePatch(img, &one, p, &map, &a, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0) != VX_SUCCESS)
        return -1;
    v = ((vx_uint8 *)ptr)[b];
    CHECK_OK(vxUnmapImagePatch(img, map));
    return v;
}

int main(void)
{
    vx_context context = vxCreateContext();
    vx_graph graph;
    vx_size i;

    CHECK_OBJECT(context, VX_TYPE_CONTEXT);
    graph = vxCreateGraph(context);
    CHECK_OBJECT(graph, VX_TYPE_GRAPH);
    CHECK(VX_DF_IMAGE('N', 'V', '2', '1') == VX_DF_IMAGE_NV21);
    CHECK(VX_DF_IMAGE('U', 'Y', 'V', 'Y') == VX_DF_IMAGE_UYVY);
    CHECK(VX_DF_IMAGE('Y', 'U', 'Y', 'V') == VX_DF_IMAGE_YUYV);
    CHECK(VX_DF_IMAGE('I', 'Y', 'U', 'V') == VX_DF_IMAGE_IYUV);
    CHECK(VX_DF_IMAGE('Y', 'U', 'V', '4') == VX_DF_IMAGE_YUV4);

    for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
        const format_t *f = &formats[i];
        vx_image img, virt, known, uniform, roi, bad;
        vx_df_image format = 0;
        vx_size planes = 0;
        vx_enum space = 0;
        vx_uint32 width = 0, height = 0;
        vx_pixel_value_t value;
        vx_rectangle_t rect;
        int fails = check_failures;

        img = vxCreateImage(context, W, H, f->format);
        CHECK_OBJECT(img, VX_TYPE_IMAGE);
        CHECK_OK(vxQueryImage(img, VX_IMAGE_FORMAT, &format, sizeof(format)));
        CHECK(format == f->format);
        CHECK_OK(vxQueryImage(img, VX_IMAGE_PLANES, &planes, sizeof(planes)));
        CHECK(planes == f->planes);
        CHECK_OK(vxQueryImage(img, VX_IMAGE_SPACE, &space, sizeof(space)));
        CHECK(space == VX_COLOR_SPACE_BT709);
        CHECK_OK(vxQueryImage(img, VX_IMAGE_WIDTH, &width, sizeof(width)));
        CHECK_OK(vxQueryImage(img, VX_IMAGE_HEIGHT, &height, sizeof(height)));
        CHECK(width == W && height == H);
        planes_round_trip(img, f);

        /* A copy into plane 0 from the application's rows, read back through a map. */
        {
            vx_rectangle_t all = {0, 0, W, H};
            vx_imagepatch_addressing_t user;
            vx_uint8 src[W * H * 2];
            vx_uint32 n = W * H * f->bpe[0], k;
            for (k = 0; k < n; k++)
                src[k] = (vx_uint8)(k * 7 + i);
            memset(&user, 0, sizeof(user));
            user.dim_x = W;
            user.dim_y = H;
            user.stride_x = (vx_int32)f->bpe[0];
            user.stride_y = (vx_int32)(W * f->bpe[0]);
            CHECK_OK(vxCopyImagePatch(img, &all, 0, &user, src, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
            CHECK(read_byte(img, 0, W - 1, H - 1, f->bpe[0] - 1) == src[n - 1]);
            CHECK(read_byte(img, 0, 3, 2, 0) == src[(2 * W + 3) * f->bpe[0]]);
        }

        /* ROIs start on the format's grid; one writes its parent's pixels in every plane. */
        rect.start_x = f->bad_x;
        rect.start_y = f->bad_y;
        rect.end_x = W;
        rect.end_y = H;
        bad = vxCreateImageFromROI(img, &rect);
        if (f->format == VX_DF_IMAGE_YUV4) {
            CHECK_OBJECT(bad, VX_TYPE_IMAGE);
            CHECK_OK(vxReleaseImage(&bad));
        } else {
            CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_PARAMETERS);
        }
        rect.start_x = f->good_x;
        rect.start_y = f->good_y;
        roi = vxCreateImageFromROI(img, &rect);
        CHECK_OBJECT(roi, VX_TYPE_IMAGE);
        CHECK_OK(vxQueryImage(roi, VX_IMAGE_WIDTH, &width, sizeof(width)));
        CHECK_OK(vxQueryImage(roi, VX_IMAGE_PLANES, &planes, sizeof(planes)));
        CHECK(width == W - f->good_x && planes == f->planes);
        {
            vx_uint32 p;
            for (p = 0; p < f->planes; p++) {
                vx_rectangle_t one = {0, 0, 1, 1};
                vx_imagepatch_addressing_t user;
                vx_uint8 px[2] = {(vx_uint8)(0xC0 + p), (vx_uint8)(0x30 + p)};
                memset(&user, 0, sizeof(user));
                user.dim_x = 1;
                user.dim_y = 1;
                user.stride_x = (vx_int32)f->bpe[p];
                user.stride_y = (vx_int32)f->bpe[p];
                CHECK_OK(vxCopyImagePatch(roi, &one, p, &user, px, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
                CHECK(read_byte(img, p, f->good_x, f->good_y, 0) == px[0]);
                if (f->bpe[p] == 2)
                    CHECK(read_byte(img, p, f->good_x, f->good_y, 1) == px[1]);
            }
        }
        CHECK_OK(vxReleaseImage(&roi));

        /* Uniform images: Y, U, V where each plane keeps them. */
        memset(&value, 0, sizeof(value));
        value.YUV[0] = 10;
        value.YUV[1] = 20;
        value.YUV[2] = 30;
        uniform = vxCreateUniformImage(context, W, H, f->format, &value);
        CHECK_OBJECT(uniform, VX_TYPE_IMAGE);
        CHECK_OK(vxQueryImage(uniform, VX_IMAGE_SPACE, &space, sizeof(space)));
        CHECK(space == VX_COLOR_SPACE_BT709);
        switch (f->format) {
        case VX_DF_IMAGE_NV21: /* Y, then V U pairs */
            CHECK(read_byte(uniform, 0, 6, 4, 0) == 10);
            CHECK(read_byte(uniform, 1, 6, 4, 0) == 30 && read_byte(uniform, 1, 6, 4, 1) == 20);
            break;
        case VX_DF_IMAGE_UYVY: /* U Y at even x, V Y at odd x */
            CHECK(read_byte(uniform, 0, 2, 1, 0) == 20 && read_byte(uniform, 0, 2, 1, 1) == 10);
            CHECK(read_byte(uniform, 0, 5, 4, 0) == 30 && read_byte(uniform, 0, 5, 4, 1) == 10);
            break;
        case VX_DF_IMAGE_YUYV: /* Y U at even x, Y V at odd x */
            CHECK(read_byte(uniform, 0, 6, 0, 0) == 10 && read_byte(uniform, 0, 6, 0, 1) == 20);
            CHECK(read_byte(uniform, 0, 1, 3, 0) == 10 && read_byte(uniform, 0, 1, 3, 1) == 30);
            break;
        default: /* IYUV, YUV4: Y, U and V planes */
            CHECK(read_byte(uniform, 0, 6, 4, 0) == 10);
            CHECK(read_byte(uniform, 1, 6, 4, 0) == 20);
            CHECK(read_byte(uniform, 2, 6, 4, 0) == 30);
            break;
        }
        CHECK_OK(vxReleaseImage(&uniform));

        /* Virtual images: of this format and unknown size, or of a known size; the application
         * maps neither. */
        virt = vxCreateVirtualImage(graph, 0, 0, f->format);
        CHECK_OBJECT(virt, VX_TYPE_IMAGE);
        CHECK_OK(vxQueryImage(virt, VX_IMAGE_FORMAT, &format, sizeof(format)));
        CHECK(format == f->format);
        known = vxCreateVirtualImage(graph, W, H, f->format);
        CHECK_OBJECT(known, VX_TYPE_IMAGE);
        CHECK_OK(vxQueryImage(known, VX_IMAGE_PLANES, &planes, sizeof(planes)));
        CHECK(planes == f->planes);
        {
            vx_rectangle_t all = {0, 0, W, H};
            vx_imagepatch_addressing_t a;
            vx_map_id map = 0;
            void *ptr = NULL;
            CHECK(vxMapImagePatch(known, &all, 0, &map, &a, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0) != VX_SUCCESS);
        }
        CHECK_OK(vxReleaseImage(&virt));
        CHECK_OK(vxReleaseImage(&known));
        CHECK_OK(vxReleaseImage(&img));
        if (check_failures != fails)
            fprintf(stderr, "formats: %s failed\n", f->name);
    }

    CHECK_OK(vxReleaseGraph(&graph));
    CHECK_OK(vxReleaseContext(&context));
    CHECK(context == NULL);
    if (check_failures == 0)
        printf("formats: ok\n");
    return check_failures;
}
