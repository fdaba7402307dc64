/* vx-rs C test: the data objects beyond images and scalars — arrays and user structs, matrices,
 * convolutions, LUTs, distributions, thresholds, remaps, pyramids, object arrays, tensors, user
 * data objects — and the image extras (uniform images, ROIs, patch copies, valid regions, patch
 * addresses): create, query, copy and map each, the error statuses (wrong sizes, NULL pointers,
 * wrong handle types, ranges outside the object, virtual objects from the application), a C
 * kernel that maps and copies virtual objects of its graph, and the context back at its starting
 * reference count at the end. */
#include <string.h>
#include <VX/vx.h>
#include <VX/vx_compatibility.h>
#include <VX/vx_khr_user_data_object.h>
#include "check.h"

static vx_uint32 refs_of(vx_context c)
{
    vx_uint32 n = 0;
    CHECK_OK(vxQueryContext(c, VX_CONTEXT_REFERENCES, &n, sizeof(n)));
    return n;
}

static vx_status status_of(void *ref)
{
    return vxGetStatus((vx_reference)ref);
}

typedef struct {
    vx_uint32 id;
    vx_float64 weight;
} own_struct;

static void test_user_structs(vx_context context)
{
    vx_enum a, b, found = 0;
    vx_char name[VX_MAX_REFERENCE_NAME];

    CHECK(vxRegisterUserStruct(context, 0) == VX_TYPE_INVALID);
    CHECK(vxRegisterUserStruct(NULL, 8) == VX_TYPE_INVALID);
    a = vxRegisterUserStruct(context, sizeof(own_struct));
    CHECK(a >= VX_TYPE_USER_STRUCT_START && a <= VX_TYPE_USER_STRUCT_END);
    b = vxRegisterUserStructWithName(context, 12, "org.vxrs.triple");
    CHECK(b == a + 1);
    CHECK(vxRegisterUserStructWithName(context, 12, "org.vxrs.triple") == VX_TYPE_INVALID);
    CHECK_OK(vxGetUserStructEnumByName(context, "org.vxrs.triple", &found));
    CHECK(found == b);
    CHECK_STATUS(vxGetUserStructEnumByName(context, "org.vxrs.none", &found), VX_FAILURE);
    CHECK_STATUS(vxGetUserStructEnumByName(context, NULL, &found), VX_FAILURE);
    CHECK_OK(vxGetUserStructNameByEnum(context, b, name, sizeof(name)));
    CHECK(strcmp(name, "org.vxrs.triple") == 0);
    CHECK_STATUS(vxGetUserStructNameByEnum(context, b, name, 0), VX_ERROR_NO_MEMORY);
    CHECK_STATUS(vxGetUserStructNameByEnum(context, b, name, 15), VX_ERROR_NO_MEMORY);
    CHECK_STATUS(vxGetUserStructNameByEnum(context, VX_TYPE_ERROR, name, sizeof(name)), VX_FAILURE);
    CHECK_STATUS(vxGetUserStructNameByEnum(NULL, b, name, sizeof(name)), VX_ERROR_INVALID_PARAMETERS);
    CHECK_OK(vxGetUserStructNameByEnum(context, a, name, sizeof(name)));
    CHECK(name[0] == '\0');
}

static void test_arrays(vx_context context, vx_image image)
{
    vx_array array, keys, bools, structs, bad;
    vx_graph graph;
    vx_array virt;
    vx_enum type = 0, user;
    vx_size n = 0, item = 0, capacity = 0, stride = 0;
    vx_uint8 items[10], spaced[20], out[10], back[30];
    vx_keypoint_t kp[2];
    own_struct s[3];
    vx_bool flags[3] = {vx_true_e, vx_false_e, vx_true_e};
    vx_map_id map, other;
    void *ptr = NULL;
    int i;

    for (i = 0; i < 10; i++) {
        items[i] = (vx_uint8)(10 + i);
        spaced[2 * i] = (vx_uint8)(100 + i);
        spaced[2 * i + 1] = 0xEE;
    }

    array = vxCreateArray(context, VX_TYPE_UINT8, 10);
    CHECK_OBJECT(array, VX_TYPE_ARRAY);
    CHECK_OK(vxQueryArray(array, VX_ARRAY_ITEMTYPE, &type, sizeof(type)));
    CHECK_OK(vxQueryArray(array, VX_ARRAY_ITEMSIZE, &item, sizeof(item)));
    CHECK_OK(vxQueryArray(array, VX_ARRAY_CAPACITY, &capacity, sizeof(capacity)));
    CHECK_OK(vxQueryArray(array, VX_ARRAY_NUMITEMS, &n, sizeof(n)));
    CHECK(type == VX_TYPE_UINT8 && item == 1 && capacity == 10 && n == 0);
    CHECK_STATUS(vxQueryArray(array, VX_ARRAY_NUMITEMS, &n, sizeof(vx_uint32)), VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxQueryArray(array, VX_ARRAY_NUMITEMS, NULL, sizeof(n)), VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxQueryArray(array, VX_IMAGE_WIDTH, &n, sizeof(n)), VX_ERROR_NOT_SUPPORTED);
    CHECK_STATUS(vxQueryArray((vx_array)image, VX_ARRAY_NUMITEMS, &n, sizeof(n)), VX_ERROR_INVALID_REFERENCE);
    CHECK_STATUS(vxQueryArray(NULL, VX_ARRAY_NUMITEMS, &n, sizeof(n)), VX_ERROR_INVALID_REFERENCE);

    /* Adding: packed, then with a stride; refusals. */
    CHECK_OK(vxAddArrayItems(array, 4, items, 1));
    CHECK_OK(vxAddArrayItems(array, 3, spaced, 2));
    CHECK_OK(vxQueryArray(array, VX_ARRAY_NUMITEMS, &n, sizeof(n)));
    CHECK(n == 7);
    CHECK_STATUS(vxAddArrayItems(array, 4, items, 1), VX_FAILURE);
    CHECK_STATUS(vxAddArrayItems(array, 1, NULL, 1), VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxAddArrayItems(array, 1, items, 0), VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxAddArrayItems((vx_array)image, 1, items, 1), VX_ERROR_INVALID_REFERENCE);
    CHECK_OK(vxAddArrayItems(array, 0, NULL, 1));

    /* Copying a range out, packed and spaced; in. */
    memset(out, 0, sizeof(out));
    CHECK_OK(vxCopyArrayRange(array, 2, 6, 1, out, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(out[0] == 12 && out[1] == 13 && out[2] == 100 && out[3] == 101);
    memset(back, 0x55, sizeof(back));
    CHECK_OK(vxCopyArrayRange(array, 0, 7, 3, back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(back[0] == 10 && back[1] == 0x55 && back[3] == 11 && back[18] == 102);
    out[0] = 200;
    out[1] = 201;
    CHECK_OK(vxCopyArrayRange(array, 5, 7, 1, out, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK_STATUS(vxCopyArrayRange(array, 5, 8, 1, out, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxCopyArrayRange(array, 3, 3, 1, out, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxCopyArrayRange(array, 0, 2, 1, NULL, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxCopyArrayRange(array, 0, 2, 0, out, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxCopyArrayRange(array, 0, 2, 1, out, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxCopyArrayRange(array, 0, 2, 1, out, VX_READ_ONLY, VX_MEMORY_TYPE_NONE), VX_ERROR_INVALID_PARAMETERS);

    /* Mapping: the items, written through; one map id per map, valid until its unmap. */
    CHECK_OK(vxMapArrayRange(array, 4, 7, &map, &stride, &ptr, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST, 0));
    CHECK(stride == 1 && ptr != NULL);
    CHECK(((vx_uint8 *)ptr)[0] == 100 && ((vx_uint8 *)ptr)[1] == 200 && ((vx_uint8 *)ptr)[2] == 201);
    ((vx_uint8 *)ptr)[0] = 77;
    /* Mapped for writing: no second map, and no item added meanwhile. */
    CHECK(vxMapArrayRange(array, 0, 1, &other, &stride, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0) != VX_SUCCESS);
    CHECK(vxAddArrayItems(array, 1, items, 1) != VX_SUCCESS);
    CHECK_STATUS(vxUnmapArrayRange((vx_array)image, map), VX_ERROR_INVALID_REFERENCE);
    CHECK_OK(vxUnmapArrayRange(array, map));
    CHECK_STATUS(vxUnmapArrayRange(array, map), VX_ERROR_INVALID_PARAMETERS);
    CHECK_OK(vxMapArrayRange(array, 0, 7, &map, &stride, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
    CHECK_OK(vxMapArrayRange(array, 0, 1, &other, &stride, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
    CHECK(map != other);
    CHECK(vxArrayItem(vx_uint8, ptr, 4, stride) == 77);
    CHECK_OK(vxUnmapArrayRange(array, other));
    CHECK_OK(vxUnmapArrayRange(array, map));
    CHECK_STATUS(vxMapArrayRange(array, 6, 8, &map, &stride, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0),
                 VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxMapArrayRange(array, 0, 1, NULL, &stride, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0),
                 VX_ERROR_INVALID_PARAMETERS);

    /* Truncating. */
    CHECK_OK(vxTruncateArray(array, 2));
    CHECK_OK(vxQueryArray(array, VX_ARRAY_NUMITEMS, &n, sizeof(n)));
    CHECK(n == 2);
    CHECK_STATUS(vxTruncateArray(array, 3), VX_ERROR_INVALID_PARAMETERS);
    CHECK_OK(vxReleaseArray(&array));
    CHECK(array == NULL);
    CHECK_STATUS(vxReleaseArray(&array), VX_ERROR_INVALID_REFERENCE);

    /* Structured items: keypoints, C booleans (an int each), user structs. */
    keys = vxCreateArray(context, VX_TYPE_KEYPOINT, 4);
    CHECK_OK(vxQueryArray(keys, VX_ARRAY_ITEMSIZE, &item, sizeof(item)));
    CHECK(item == sizeof(vx_keypoint_t));
    memset(kp, 0, sizeof(kp));
    kp[0].x = 3;
    kp[1].strength = 2.5f;
    CHECK_OK(vxAddArrayItems(keys, 2, kp, sizeof(vx_keypoint_t)));
    memset(kp, 0, sizeof(kp));
    CHECK_OK(vxCopyArrayRange(keys, 0, 2, sizeof(vx_keypoint_t), kp, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(kp[0].x == 3 && kp[1].strength == 2.5f);
    CHECK_OK(vxReleaseArray(&keys));

    bools = vxCreateArray(context, VX_TYPE_BOOL, 3);
    CHECK_OK(vxQueryArray(bools, VX_ARRAY_ITEMTYPE, &type, sizeof(type)));
    CHECK_OK(vxQueryArray(bools, VX_ARRAY_ITEMSIZE, &item, sizeof(item)));
    CHECK(type == VX_TYPE_BOOL && item == sizeof(vx_bool));
    CHECK_OK(vxAddArrayItems(bools, 3, flags, sizeof(vx_bool)));
    CHECK_OK(vxMapArrayRange(bools, 0, 3, &map, &stride, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
    CHECK(vxArrayItem(vx_bool, ptr, 2, stride) == vx_true_e && vxArrayItem(vx_bool, ptr, 1, stride) == vx_false_e);
    CHECK_OK(vxUnmapArrayRange(bools, map));
    CHECK_OK(vxReleaseArray(&bools));

    user = vxRegisterUserStruct(context, sizeof(own_struct));
    structs = vxCreateArray(context, user, 3);
    CHECK_OBJECT(structs, VX_TYPE_ARRAY);
    CHECK_OK(vxQueryArray(structs, VX_ARRAY_ITEMTYPE, &type, sizeof(type)));
    CHECK_OK(vxQueryArray(structs, VX_ARRAY_ITEMSIZE, &item, sizeof(item)));
    CHECK(type == user && item == sizeof(own_struct));
    for (i = 0; i < 3; i++) {
        s[i].id = (vx_uint32)i;
        s[i].weight = 1.0 / (i + 1);
    }
    CHECK_OK(vxAddArrayItems(structs, 3, s, sizeof(own_struct)));
    memset(s, 0, sizeof(s));
    CHECK_OK(vxCopyArrayRange(structs, 1, 3, sizeof(own_struct), s, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(s[0].id == 1 && s[1].id == 2 && s[1].weight == 1.0 / 3);
    CHECK_OK(vxReleaseArray(&structs));

    /* Types that are no item type; an unregistered user struct. */
    bad = vxCreateArray(context, VX_TYPE_IMAGE, 4);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_TYPE);
    bad = vxCreateArray(context, VX_TYPE_USER_STRUCT_END, 4);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_TYPE);
    bad = vxCreateArray(context, VX_TYPE_UINT8, 0);
    CHECK(status_of(bad) != VX_SUCCESS);
    bad = vxCreateArray(NULL, VX_TYPE_UINT8, 4);
    CHECK(status_of(bad) != VX_SUCCESS);

    /* A virtual array: its attributes, but not its items, for the application. */
    graph = vxCreateGraph(context);
    virt = vxCreateVirtualArray(graph, VX_TYPE_UINT8, 8);
    CHECK_OBJECT(virt, VX_TYPE_ARRAY);
    CHECK_OK(vxQueryArray(virt, VX_ARRAY_CAPACITY, &capacity, sizeof(capacity)));
    CHECK(capacity == 8);
    CHECK_STATUS(vxAddArrayItems(virt, 1, items, 1), VX_ERROR_OPTIMIZED_AWAY);
    CHECK_STATUS(vxMapArrayRange(virt, 0, 1, &map, &stride, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0),
                 VX_ERROR_OPTIMIZED_AWAY);
    CHECK_STATUS(vxCopyArrayRange(virt, 0, 1, 1, out, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_OPTIMIZED_AWAY);
    CHECK_STATUS(vxTruncateArray(virt, 0), VX_ERROR_OPTIMIZED_AWAY);
    CHECK_OK(vxReleaseArray(&virt));
    virt = vxCreateVirtualArray(graph, 0, 0);
    CHECK_OBJECT(virt, VX_TYPE_ARRAY);
    CHECK_OK(vxQueryArray(virt, VX_ARRAY_ITEMTYPE, &type, sizeof(type)));
    CHECK(type == VX_TYPE_INVALID);
    CHECK_OK(vxReleaseArray(&virt));
    CHECK_OK(vxReleaseGraph(&graph));
}

static void test_matrices(vx_context context)
{
    vx_matrix m, p, bad;
    vx_graph graph;
    vx_enum type = 0, pattern = 0;
    vx_size rows = 0, cols = 0, size = 0;
    vx_coordinates2d_t origin = {0, 0};
    vx_int32 data[15], back[15];
    vx_uint8 cross[25];
    int i;

    m = vxCreateMatrix(context, VX_TYPE_INT32, 3, 5);
    CHECK_OBJECT(m, VX_TYPE_MATRIX);
    CHECK_OK(vxQueryMatrix(m, VX_MATRIX_TYPE, &type, sizeof(type)));
    CHECK_OK(vxQueryMatrix(m, VX_MATRIX_ROWS, &rows, sizeof(rows)));
    CHECK_OK(vxQueryMatrix(m, VX_MATRIX_COLUMNS, &cols, sizeof(cols)));
    CHECK_OK(vxQueryMatrix(m, VX_MATRIX_SIZE, &size, sizeof(size)));
    CHECK_OK(vxQueryMatrix(m, VX_MATRIX_ORIGIN, &origin, sizeof(origin)));
    CHECK_OK(vxQueryMatrix(m, VX_MATRIX_PATTERN, &pattern, sizeof(pattern)));
    CHECK(type == VX_TYPE_INT32 && rows == 5 && cols == 3 && size == 15 * sizeof(vx_int32));
    CHECK(origin.x == 1 && origin.y == 2 && pattern == VX_PATTERN_OTHER);
    CHECK_STATUS(vxQueryMatrix(m, VX_MATRIX_ROWS, &rows, 4), VX_ERROR_INVALID_PARAMETERS);
    for (i = 0; i < 15; i++)
        data[i] = i * i - 7;
    CHECK_OK(vxCopyMatrix(m, data, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
    memset(back, 0, sizeof(back));
    CHECK_OK(vxCopyMatrix(m, back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(memcmp(data, back, sizeof(data)) == 0);
    CHECK_STATUS(vxCopyMatrix(m, NULL, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxCopyMatrix(m, back, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
    memset(back, 0, sizeof(back));
    CHECK_OK(vxReadMatrix(m, back));
    CHECK(back[14] == 14 * 14 - 7);
    CHECK_OK(vxReleaseMatrix(&m));

    p = vxCreateMatrixFromPatternAndOrigin(context, VX_PATTERN_CROSS, 5, 5, 1, 3);
    CHECK_OBJECT(p, VX_TYPE_MATRIX);
    CHECK_OK(vxQueryMatrix(p, VX_MATRIX_TYPE, &type, sizeof(type)));
    CHECK_OK(vxQueryMatrix(p, VX_MATRIX_PATTERN, &pattern, sizeof(pattern)));
    CHECK_OK(vxQueryMatrix(p, VX_MATRIX_ORIGIN, &origin, sizeof(origin)));
    CHECK(type == VX_TYPE_UINT8 && pattern == VX_PATTERN_CROSS && origin.x == 1 && origin.y == 3);
    CHECK_OK(vxCopyMatrix(p, cross, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(cross[3 * 5 + 4] == 255 && cross[0 * 5 + 1] == 255 && cross[0] == 0);
    CHECK_OK(vxReleaseMatrix(&p));
    p = vxCreateMatrixFromPattern(context, VX_PATTERN_BOX, 3, 3);
    CHECK_OK(vxCopyMatrix(p, cross, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(cross[0] == 255 && cross[8] == 255);
    CHECK_OK(vxReleaseMatrix(&p));

    bad = vxCreateMatrixFromPattern(context, VX_PATTERN_OTHER, 3, 3);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_PARAMETERS);
    bad = vxCreateMatrixFromPattern(context, 12345, 3, 3);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_PARAMETERS);
    bad = vxCreateMatrix(context, VX_TYPE_IMAGE, 3, 3);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_TYPE);
    bad = vxCreateMatrix(context, VX_TYPE_BOOL, 3, 3);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_TYPE);
    bad = vxCreateMatrix(context, VX_TYPE_UINT8, 0, 3);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_DIMENSION);
    bad = vxCreateMatrixFromPatternAndOrigin(context, VX_PATTERN_BOX, 3, 3, 3, 0);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_PARAMETERS);

    graph = vxCreateGraph(context);
    m = vxCreateVirtualMatrix(graph, VX_TYPE_FLOAT32, 3, 3);
    CHECK_OBJECT(m, VX_TYPE_MATRIX);
    CHECK_OK(vxQueryMatrix(m, VX_MATRIX_ORIGIN, &origin, sizeof(origin)));
    CHECK(origin.x == 1 && origin.y == 1);
    CHECK_STATUS(vxCopyMatrix(m, data, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_OPTIMIZED_AWAY);
    CHECK_OK(vxReleaseMatrix(&m));
    CHECK_OK(vxReleaseGraph(&graph));
}

static void test_convolutions(vx_context context)
{
    vx_convolution conv, bad;
    vx_graph graph;
    vx_size rows = 0, cols = 0, size = 0;
    vx_uint32 scale = 2, got = 0;
    vx_int16 gx[3][5] = {{1, 2, 3, 4, 5}, {-1, -2, -3, -4, -5}, {9, 8, 7, 6, 5}}, back[15];

    conv = vxCreateConvolution(context, 5, 3);
    CHECK_OBJECT(conv, VX_TYPE_CONVOLUTION);
    CHECK_OK(vxQueryConvolution(conv, VX_CONVOLUTION_SCALE, &got, sizeof(got)));
    CHECK(got == 1);
    CHECK_OK(vxSetConvolutionAttribute(conv, VX_CONVOLUTION_SCALE, &scale, sizeof(scale)));
    CHECK_OK(vxQueryConvolution(conv, VX_CONVOLUTION_ROWS, &rows, sizeof(rows)));
    CHECK_OK(vxQueryConvolution(conv, VX_CONVOLUTION_COLUMNS, &cols, sizeof(cols)));
    CHECK_OK(vxQueryConvolution(conv, VX_CONVOLUTION_SIZE, &size, sizeof(size)));
    CHECK_OK(vxQueryConvolution(conv, VX_CONVOLUTION_SCALE, &got, sizeof(got)));
    CHECK(rows == 3 && cols == 5 && size == 15 * sizeof(vx_int16) && got == 2);
    scale = 3;
    CHECK_STATUS(vxSetConvolutionAttribute(conv, VX_CONVOLUTION_SCALE, &scale, sizeof(scale)), VX_ERROR_INVALID_VALUE);
    CHECK_STATUS(vxSetConvolutionAttribute(conv, VX_CONVOLUTION_SCALE, &scale, 2), VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxSetConvolutionAttribute(conv, VX_CONVOLUTION_ROWS, &rows, sizeof(rows)), VX_ERROR_NOT_SUPPORTED);
    CHECK_OK(vxCopyConvolutionCoefficients(conv, gx, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
    memset(back, 0, sizeof(back));
    CHECK_OK(vxCopyConvolutionCoefficients(conv, back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(back[0] == 1 && back[5] == -1 && back[14] == 5);
    CHECK_OK(vxWriteConvolutionCoefficients(conv, back));
    CHECK_OK(vxReadConvolutionCoefficients(conv, back));
    CHECK(back[9] == -5);
    CHECK_OK(vxReleaseConvolution(&conv));

    bad = vxCreateConvolution(context, 4, 3);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_DIMENSION);
    graph = vxCreateGraph(context);
    conv = vxCreateVirtualConvolution(graph, 3, 3);
    CHECK_OBJECT(conv, VX_TYPE_CONVOLUTION);
    CHECK_STATUS(vxCopyConvolutionCoefficients(conv, back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_OPTIMIZED_AWAY);
    CHECK_OK(vxReleaseConvolution(&conv));
    CHECK_OK(vxReleaseGraph(&graph));
}

static void test_luts(vx_context context)
{
    vx_lut lut, s16, bad;
    vx_enum type = 0;
    vx_size count = 0, size = 0;
    vx_uint32 offset = 99;
    vx_uint8 table[256], back[256];
    vx_map_id map;
    void *ptr = NULL;
    int i;

    lut = vxCreateLUT(context, VX_TYPE_UINT8, 256);
    CHECK_OBJECT(lut, VX_TYPE_LUT);
    CHECK_OK(vxQueryLUT(lut, VX_LUT_TYPE, &type, sizeof(type)));
    CHECK_OK(vxQueryLUT(lut, VX_LUT_COUNT, &count, sizeof(count)));
    CHECK_OK(vxQueryLUT(lut, VX_LUT_SIZE, &size, sizeof(size)));
    CHECK_OK(vxQueryLUT(lut, VX_LUT_OFFSET, &offset, sizeof(offset)));
    CHECK(type == VX_TYPE_UINT8 && count == 256 && size == 256 && offset == 0);
    for (i = 0; i < 256; i++)
        table[i] = (vx_uint8)(255 - i);
    CHECK_OK(vxCopyLUT(lut, table, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK_OK(vxCopyLUT(lut, back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(memcmp(table, back, 256) == 0);
    CHECK_OK(vxMapLUT(lut, &map, &ptr, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST, 0));
    CHECK(((vx_uint8 *)ptr)[10] == 245);
    ((vx_uint8 *)ptr)[10] = 1;
    CHECK_OK(vxUnmapLUT(lut, map));
    CHECK_STATUS(vxUnmapLUT(lut, map), VX_ERROR_INVALID_PARAMETERS);
    CHECK_OK(vxCopyLUT(lut, back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(back[10] == 1);
    CHECK_STATUS(vxMapLUT(lut, NULL, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0), VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxMapLUT(lut, &map, &ptr, 0, VX_MEMORY_TYPE_HOST, 0), VX_ERROR_INVALID_PARAMETERS);

    s16 = vxCreateLUT(context, VX_TYPE_INT16, 1000);
    CHECK_OK(vxQueryLUT(s16, VX_LUT_OFFSET, &offset, sizeof(offset)));
    CHECK_OK(vxQueryLUT(s16, VX_LUT_SIZE, &size, sizeof(size)));
    CHECK(offset == 500 && size == 2000);
    /* An unmap names the object it mapped. */
    CHECK_OK(vxMapLUT(s16, &map, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
    CHECK_STATUS(vxUnmapLUT(lut, map), VX_ERROR_INVALID_PARAMETERS);
    CHECK_OK(vxUnmapLUT(s16, map));
    CHECK_OK(vxReleaseLUT(&s16));
    CHECK_OK(vxReleaseLUT(&lut));

    bad = vxCreateLUT(context, VX_TYPE_UINT8, 300);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_PARAMETERS);
    bad = vxCreateLUT(context, VX_TYPE_FLOAT32, 10);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_TYPE);
}

static void test_distributions(vx_context context)
{
    vx_distribution d, bad;
    vx_graph graph;
    vx_size dims = 0, bins = 0, size = 0;
    vx_int32 offset = 0;
    vx_uint32 range = 0, window = 0, counts[4] = {0, 0, 0, 0};
    vx_map_id map;
    void *ptr = NULL;

    d = vxCreateDistribution(context, 4, 10, 256);
    CHECK_OBJECT(d, VX_TYPE_DISTRIBUTION);
    CHECK_OK(vxQueryDistribution(d, VX_DISTRIBUTION_DIMENSIONS, &dims, sizeof(dims)));
    CHECK_OK(vxQueryDistribution(d, VX_DISTRIBUTION_OFFSET, &offset, sizeof(offset)));
    CHECK_OK(vxQueryDistribution(d, VX_DISTRIBUTION_RANGE, &range, sizeof(range)));
    CHECK_OK(vxQueryDistribution(d, VX_DISTRIBUTION_BINS, &bins, sizeof(bins)));
    CHECK_OK(vxQueryDistribution(d, VX_DISTRIBUTION_WINDOW, &window, sizeof(window)));
    CHECK_OK(vxQueryDistribution(d, VX_DISTRIBUTION_SIZE, &size, sizeof(size)));
    CHECK(dims == 1 && offset == 10 && range == 256 && bins == 4 && window == 64 && size == 16);
    CHECK_OK(vxMapDistribution(d, &map, &ptr, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST, 0));
    ((vx_uint32 *)ptr)[3] = 42;
    CHECK_OK(vxUnmapDistribution(d, map));
    CHECK_OK(vxCopyDistribution(d, counts, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(counts[3] == 42 && counts[0] == 0);
    CHECK_STATUS(vxCopyDistribution(d, counts, VX_READ_ONLY, 0), VX_ERROR_INVALID_PARAMETERS);
    CHECK_OK(vxReleaseDistribution(&d));
    bad = vxCreateDistribution(context, 300, 0, 256);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_PARAMETERS);

    graph = vxCreateGraph(context);
    d = vxCreateVirtualDistribution(graph, 8, 0, 64);
    CHECK_OK(vxQueryDistribution(d, VX_DISTRIBUTION_BINS, &bins, sizeof(bins)));
    CHECK(bins == 8);
    CHECK_STATUS(vxMapDistribution(d, &map, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0), VX_ERROR_OPTIMIZED_AWAY);
    CHECK_OK(vxReleaseDistribution(&d));
    CHECK_OK(vxReleaseGraph(&graph));
}

static void test_thresholds(vx_context context)
{
    vx_threshold t, r, old, bad;
    vx_graph graph;
    vx_enum type = 0;
    vx_df_image in = 0, out = 0;
    vx_pixel_value_t a, b;
    vx_int32 v = 0;

    t = vxCreateThresholdForImage(context, VX_THRESHOLD_TYPE_BINARY, VX_DF_IMAGE_U8, VX_DF_IMAGE_U8);
    CHECK_OBJECT(t, VX_TYPE_THRESHOLD);
    CHECK_OK(vxQueryThreshold(t, VX_THRESHOLD_TYPE, &type, sizeof(type)));
    CHECK_OK(vxQueryThreshold(t, VX_THRESHOLD_INPUT_FORMAT, &in, sizeof(in)));
    CHECK_OK(vxQueryThreshold(t, VX_THRESHOLD_OUTPUT_FORMAT, &out, sizeof(out)));
    CHECK(type == VX_THRESHOLD_TYPE_BINARY && in == VX_DF_IMAGE_U8 && out == VX_DF_IMAGE_U8);
    a.S32 = 100;
    CHECK_OK(vxCopyThresholdValue(t, &a, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
    memset(&a, 0xFF, sizeof(a));
    CHECK_OK(vxCopyThresholdValue(t, &a, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(a.U8 == 100 && a.S32 == 100);
    v = 300;
    CHECK_STATUS(vxSetThresholdAttribute(t, VX_THRESHOLD_THRESHOLD_VALUE, &v, sizeof(v)), VX_ERROR_INVALID_VALUE);
    v = 0;
    CHECK_OK(vxQueryThreshold(t, VX_THRESHOLD_THRESHOLD_VALUE, &v, sizeof(v)));
    CHECK(v == 100);
    CHECK_STATUS(vxCopyThresholdValue(t, NULL, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
    a.U8 = 0;
    b.U8 = 1;
    CHECK_OK(vxCopyThresholdOutput(t, &a, &b, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK_OK(vxQueryThreshold(t, VX_THRESHOLD_FALSE_VALUE, &v, sizeof(v)));
    CHECK(v == 1);
    v = 200;
    CHECK_OK(vxSetThresholdAttribute(t, VX_THRESHOLD_TRUE_VALUE, &v, sizeof(v)));
    memset(&a, 0, sizeof(a));
    CHECK_OK(vxCopyThresholdOutput(t, &a, NULL, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(a.U8 == 200);
    CHECK_STATUS(vxSetThresholdAttribute(t, VX_THRESHOLD_TYPE, &type, sizeof(type)), VX_ERROR_NOT_SUPPORTED);
    CHECK_STATUS(vxQueryThreshold(t, VX_THRESHOLD_TYPE, &type, 1), VX_ERROR_INVALID_PARAMETERS);
    CHECK_OK(vxReleaseThreshold(&t));

    r = vxCreateThresholdForImage(context, VX_THRESHOLD_TYPE_RANGE, VX_DF_IMAGE_S16, VX_DF_IMAGE_U8);
    a.S32 = -50;
    b.S32 = 70;
    CHECK_OK(vxCopyThresholdRange(r, &a, &b, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    CHECK_OK(vxCopyThresholdRange(r, &a, &b, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(a.S16 == -50 && a.S32 == -50 && b.S16 == 70);
    a.S16 = 80;
    CHECK_STATUS(vxCopyThresholdRange(r, &a, NULL, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_VALUE);
    CHECK_STATUS(vxCopyThresholdRange(r, NULL, NULL, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
    CHECK_OK(vxQueryThreshold(r, VX_THRESHOLD_THRESHOLD_LOWER, &v, sizeof(v)));
    CHECK(v == -50);
    CHECK_OK(vxReleaseThreshold(&r));

    old = vxCreateThreshold(context, VX_THRESHOLD_TYPE_BINARY, VX_TYPE_UINT8);
    CHECK_OBJECT(old, VX_TYPE_THRESHOLD);
    CHECK_OK(vxQueryThreshold(old, VX_THRESHOLD_DATA_TYPE, &type, sizeof(type)));
    CHECK(type == VX_TYPE_UINT8);
    CHECK_OK(vxReleaseThreshold(&old));

    bad = vxCreateThresholdForImage(context, VX_THRESHOLD_TYPE_BINARY, VX_DF_IMAGE_U8, VX_DF_IMAGE_U1);
    CHECK_STATUS(status_of(bad), VX_ERROR_NOT_SUPPORTED);
    bad = vxCreateThresholdForImage(context, VX_THRESHOLD_TYPE_BINARY, VX_DF_IMAGE_RGB, VX_DF_IMAGE_U8);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_FORMAT);
    bad = vxCreateThresholdForImage(context, 7, VX_DF_IMAGE_U8, VX_DF_IMAGE_U8);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_TYPE);

    graph = vxCreateGraph(context);
    t = vxCreateVirtualThresholdForImage(graph, VX_THRESHOLD_TYPE_BINARY, VX_DF_IMAGE_U8, VX_DF_IMAGE_U8);
    CHECK_OBJECT(t, VX_TYPE_THRESHOLD);
    CHECK_STATUS(vxCopyThresholdValue(t, &a, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_OPTIMIZED_AWAY);
    CHECK_OK(vxReleaseThreshold(&t));
    CHECK_OK(vxReleaseGraph(&graph));
}

static void test_remaps(vx_context context)
{
    vx_remap remap, bad;
    vx_uint32 w = 0;
    vx_float32 x = 0, y = 0;
    vx_coordinates2df_t patch[6], back[6];
    vx_rectangle_t rect = {2, 1, 5, 3}, outside = {6, 0, 9, 1};
    vx_size stride = 0;
    vx_map_id map;
    void *ptr = NULL;
    int i;

    remap = vxCreateRemap(context, 4, 4, 8, 6);
    CHECK_OBJECT(remap, VX_TYPE_REMAP);
    CHECK_OK(vxQueryRemap(remap, VX_REMAP_DESTINATION_WIDTH, &w, sizeof(w)));
    CHECK(w == 8);
    CHECK_OK(vxQueryRemap(remap, VX_REMAP_SOURCE_HEIGHT, &w, sizeof(w)));
    CHECK(w == 4);
    CHECK_OK(vxSetRemapPoint(remap, 7, 5, 1.5f, 2.5f));
    CHECK_OK(vxGetRemapPoint(remap, 7, 5, &x, &y));
    CHECK(x == 1.5f && y == 2.5f);
    CHECK_STATUS(vxSetRemapPoint(remap, 8, 0, 0, 0), VX_ERROR_INVALID_PARAMETERS);
    for (i = 0; i < 6; i++) {
        patch[i].x = (vx_float32)i;
        patch[i].y = (vx_float32)(10 * i);
    }
    CHECK_OK(vxCopyRemapPatch(remap, &rect, 3 * sizeof(vx_coordinates2df_t), patch, VX_TYPE_COORDINATES2DF,
                              VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
    memset(back, 0, sizeof(back));
    CHECK_OK(vxCopyRemapPatch(remap, &rect, 3 * sizeof(vx_coordinates2df_t), back, VX_TYPE_COORDINATES2DF,
                              VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(memcmp(patch, back, sizeof(patch)) == 0);
    CHECK_OK(vxGetRemapPoint(remap, 3, 2, &x, &y));
    CHECK(x == 4.0f && y == 40.0f);
    CHECK_STATUS(vxCopyRemapPatch(remap, &rect, 8, back, VX_TYPE_COORDINATES2DF, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
                 VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxCopyRemapPatch(remap, &rect, 24, back, VX_TYPE_COORDINATES2D, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
                 VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxCopyRemapPatch(remap, &outside, 24, back, VX_TYPE_COORDINATES2DF, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
                 VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxCopyRemapPatch(remap, NULL, 24, back, VX_TYPE_COORDINATES2DF, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
                 VX_ERROR_INVALID_PARAMETERS);
    CHECK_OK(vxMapRemapPatch(remap, &rect, &map, &stride, &ptr, VX_TYPE_COORDINATES2DF, VX_READ_ONLY,
                             VX_MEMORY_TYPE_HOST));
    CHECK(stride == 8 * sizeof(vx_coordinates2df_t));
    CHECK(((vx_coordinates2df_t *)ptr)[0].x == 0.0f && ((vx_coordinates2df_t *)ptr)[2].x == 2.0f);
    CHECK(((vx_coordinates2df_t *)((vx_uint8 *)ptr + stride))[1].y == 40.0f);
    CHECK_OK(vxUnmapRemapPatch(remap, map));
    CHECK_OK(vxReleaseRemap(&remap));
    bad = vxCreateRemap(context, 0, 4, 8, 6);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_PARAMETERS);
}

static void test_pyramids(vx_context context)
{
    vx_pyramid pyr, virt, bad;
    vx_graph graph;
    vx_image level, again, top;
    vx_size levels = 0;
    vx_float32 scale = 0;
    vx_uint32 w = 0, h = 0;
    vx_df_image format = 0;

    pyr = vxCreatePyramid(context, 3, VX_SCALE_PYRAMID_HALF, 64, 48, VX_DF_IMAGE_U8);
    CHECK_OBJECT(pyr, VX_TYPE_PYRAMID);
    CHECK_OK(vxQueryPyramid(pyr, VX_PYRAMID_LEVELS, &levels, sizeof(levels)));
    CHECK_OK(vxQueryPyramid(pyr, VX_PYRAMID_SCALE, &scale, sizeof(scale)));
    CHECK_OK(vxQueryPyramid(pyr, VX_PYRAMID_WIDTH, &w, sizeof(w)));
    CHECK_OK(vxQueryPyramid(pyr, VX_PYRAMID_HEIGHT, &h, sizeof(h)));
    CHECK_OK(vxQueryPyramid(pyr, VX_PYRAMID_FORMAT, &format, sizeof(format)));
    CHECK(levels == 3 && scale == VX_SCALE_PYRAMID_HALF && w == 64 && h == 48 && format == VX_DF_IMAGE_U8);
    level = vxGetPyramidLevel(pyr, 1);
    CHECK_OBJECT(level, VX_TYPE_IMAGE);
    again = vxGetPyramidLevel(pyr, 1);
    CHECK(again == level);
    CHECK_OK(vxReleaseImage(&again));
    CHECK_OK(vxQueryImage(level, VX_IMAGE_WIDTH, &w, sizeof(w)));
    CHECK_OK(vxQueryImage(level, VX_IMAGE_HEIGHT, &h, sizeof(h)));
    CHECK(w == 32 && h == 24);
    top = vxGetPyramidLevel(pyr, 3);
    CHECK_STATUS(status_of(top), VX_ERROR_INVALID_PARAMETERS);
    /* A level outlives its pyramid's handle. */
    CHECK_OK(vxReleasePyramid(&pyr));
    CHECK_OK(vxQueryImage(level, VX_IMAGE_WIDTH, &w, sizeof(w)));
    CHECK_OK(vxReleaseImage(&level));
    CHECK_STATUS(vxQueryPyramid(NULL, VX_PYRAMID_LEVELS, &levels, sizeof(levels)), VX_ERROR_INVALID_REFERENCE);

    bad = vxCreatePyramid(context, 3, 0.7f, 64, 48, VX_DF_IMAGE_U8);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_PARAMETERS);
    bad = vxCreatePyramid(context, 3, VX_SCALE_PYRAMID_HALF, 64, 48, VX_DF_IMAGE_VIRT);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_FORMAT);

    graph = vxCreateGraph(context);
    virt = vxCreateVirtualPyramid(graph, 4, VX_SCALE_PYRAMID_ORB, 0, 0, VX_DF_IMAGE_VIRT);
    CHECK_OBJECT(virt, VX_TYPE_PYRAMID);
    CHECK_OK(vxQueryPyramid(virt, VX_PYRAMID_LEVELS, &levels, sizeof(levels)));
    CHECK(levels == 4);
    level = vxGetPyramidLevel(virt, 3);
    CHECK_OBJECT(level, VX_TYPE_IMAGE);
    CHECK_OK(vxReleaseImage(&level));
    CHECK_OK(vxReleasePyramid(&virt));
    CHECK_OK(vxReleaseGraph(&graph));
}

static void test_object_arrays(vx_context context)
{
    vx_image exemplar, item, again;
    vx_array ex_array;
    vx_array arr_item;
    vx_object_array oa, virt, bad, nested;
    vx_graph graph;
    vx_enum type = 0, user;
    vx_size n = 0;
    vx_uint32 w = 0;

    exemplar = vxCreateImage(context, 16, 8, VX_DF_IMAGE_U16);
    oa = vxCreateObjectArray(context, (vx_reference)exemplar, 3);
    CHECK_OBJECT(oa, VX_TYPE_OBJECT_ARRAY);
    CHECK_OK(vxQueryObjectArray(oa, VX_OBJECT_ARRAY_ITEMTYPE, &type, sizeof(type)));
    CHECK_OK(vxQueryObjectArray(oa, VX_OBJECT_ARRAY_NUMITEMS, &n, sizeof(n)));
    CHECK(type == VX_TYPE_IMAGE && n == 3);
    item = (vx_image)vxGetObjectArrayItem(oa, 2);
    CHECK_OBJECT(item, VX_TYPE_IMAGE);
    again = (vx_image)vxGetObjectArrayItem(oa, 2);
    CHECK(again == item && again != exemplar);
    CHECK_OK(vxReleaseImage(&again));
    CHECK_OK(vxQueryImage(item, VX_IMAGE_WIDTH, &w, sizeof(w)));
    CHECK(w == 16);
    CHECK_OK(vxReleaseImage(&item));
    CHECK(status_of(vxGetObjectArrayItem(oa, 3)) != VX_SUCCESS);
    nested = vxCreateObjectArray(context, (vx_reference)oa, 2);
    CHECK_STATUS(status_of(nested), VX_ERROR_INVALID_TYPE);
    CHECK_OK(vxReleaseObjectArray(&oa));
    bad = vxCreateObjectArray(context, (vx_reference)exemplar, 0);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_PARAMETERS);
    bad = vxCreateObjectArray(context, (vx_reference)context, 2);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_REFERENCE);

    /* Items of an array of user structs keep the struct's type. */
    user = vxRegisterUserStructWithName(context, 24, "org.vxrs.item");
    ex_array = vxCreateArray(context, user, 5);
    oa = vxCreateObjectArray(context, (vx_reference)ex_array, 2);
    arr_item = (vx_array)vxGetObjectArrayItem(oa, 1);
    CHECK_OK(vxQueryArray(arr_item, VX_ARRAY_ITEMTYPE, &type, sizeof(type)));
    CHECK(type == user);
    CHECK_OK(vxReleaseArray(&arr_item));
    CHECK_OK(vxReleaseObjectArray(&oa));
    CHECK_OK(vxReleaseArray(&ex_array));

    graph = vxCreateGraph(context);
    virt = vxCreateVirtualObjectArray(graph, (vx_reference)exemplar, 2);
    CHECK_OBJECT(virt, VX_TYPE_OBJECT_ARRAY);
    item = (vx_image)vxGetObjectArrayItem(virt, 0);
    CHECK_OBJECT(item, VX_TYPE_IMAGE);
    CHECK_OK(vxReleaseImage(&item));
    CHECK_OK(vxReleaseObjectArray(&virt));
    CHECK_OK(vxReleaseGraph(&graph));
    CHECK_OK(vxReleaseImage(&exemplar));
}

static void test_tensors(vx_context context)
{
    vx_tensor t, view, virt, bad;
    vx_graph graph;
    vx_size dims[3] = {4, 3, 2}, n = 0, got[3] = {0, 0, 0}, strides[3] = {2, 8, 24};
    vx_size start[3] = {0, 0, 0}, sub_start[3] = {1, 1, 1}, sub_end[3] = {3, 3, 2}, too_far[3] = {5, 3, 2};
    vx_size spaced[3] = {4, 16, 48}, packed_sub[3] = {2, 4, 8}, mstride[3] = {0, 0, 0};
    vx_enum type = 0;
    vx_int8 fpp = 0;
    vx_int16 data[24], back[48], sub[4];
    vx_map_id map;
    void *ptr = NULL;
    int i;

    t = vxCreateTensor(context, 3, dims, VX_TYPE_INT16, 8);
    CHECK_OBJECT(t, VX_TYPE_TENSOR);
    CHECK_OK(vxQueryTensor(t, VX_TENSOR_NUMBER_OF_DIMS, &n, sizeof(n)));
    CHECK_OK(vxQueryTensor(t, VX_TENSOR_DIMS, got, sizeof(got)));
    CHECK_OK(vxQueryTensor(t, VX_TENSOR_DATA_TYPE, &type, sizeof(type)));
    CHECK_OK(vxQueryTensor(t, VX_TENSOR_FIXED_POINT_POSITION, &fpp, sizeof(fpp)));
    CHECK(n == 3 && got[0] == 4 && got[1] == 3 && got[2] == 2 && type == VX_TYPE_INT16 && fpp == 8);
    CHECK_STATUS(vxQueryTensor(t, VX_TENSOR_DIMS, got, 2 * sizeof(vx_size)), VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxQueryTensor(t, VX_TENSOR_FIXED_POINT_POSITION, &fpp, 4), VX_ERROR_INVALID_PARAMETERS);

    for (i = 0; i < 24; i++)
        data[i] = (vx_int16)(i * 3 - 20);
    CHECK_OK(vxCopyTensorPatch(t, 3, start, dims, strides, data, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
    /* Read back with gaps between elements. */
    memset(back, 0, sizeof(back));
    CHECK_OK(vxCopyTensorPatch(t, 3, start, dims, spaced, back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(back[0] == data[0] && back[1] == 0 && back[2] == data[1] && back[47 - 1] == data[23]);
    /* A sub-box, packed. */
    CHECK_OK(vxCopyTensorPatch(t, 3, sub_start, sub_end, packed_sub, sub, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(sub[0] == data[12 + 4 + 1] && sub[1] == data[12 + 4 + 2] && sub[2] == data[12 + 8 + 1]);
    CHECK_STATUS(vxCopyTensorPatch(t, 3, start, too_far, strides, back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
                 VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxCopyTensorPatch(t, 4, start, dims, strides, back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
                 VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxCopyTensorPatch(t, 3, start, dims, NULL, back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
                 VX_ERROR_INVALID_PARAMETERS);

    CHECK_OK(vxMapTensorPatch(t, 3, sub_start, sub_end, &map, mstride, &ptr, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST));
    CHECK(mstride[0] == 2 && mstride[1] == 8 && mstride[2] == 24);
    CHECK(*(vx_int16 *)ptr == data[17]);
    *(vx_int16 *)((vx_uint8 *)ptr + mstride[1]) = 999;
    CHECK_OK(vxUnmapTensorPatch(t, map));
    CHECK_STATUS(vxUnmapTensorPatch(t, map), VX_ERROR_INVALID_PARAMETERS);

    /* A view shares the tensor's elements. */
    view = vxCreateTensorFromView(t, 3, sub_start, sub_end);
    CHECK_OBJECT(view, VX_TYPE_TENSOR);
    CHECK_OK(vxQueryTensor(view, VX_TENSOR_DIMS, got, sizeof(got)));
    CHECK(got[0] == 2 && got[1] == 2 && got[2] == 1);
    CHECK_OK(vxCopyTensorPatch(view, 3, start, got, packed_sub, sub, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(sub[0] == data[17] && sub[2] == 999);
    CHECK_OK(vxReleaseTensor(&view));
    bad = vxCreateTensorFromView(t, 3, sub_start, too_far);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_PARAMETERS);
    CHECK_OK(vxReleaseTensor(&t));

    bad = vxCreateTensor(context, 0, dims, VX_TYPE_INT16, 0);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_DIMENSION);
    bad = vxCreateTensor(context, 7, dims, VX_TYPE_INT16, 0);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_DIMENSION);
    bad = vxCreateTensor(context, 3, NULL, VX_TYPE_INT16, 0);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_DIMENSION);
    bad = vxCreateTensor(context, 3, dims, VX_TYPE_KEYPOINT, 0);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_TYPE);

    graph = vxCreateGraph(context);
    virt = vxCreateVirtualTensor(graph, 3, dims, VX_TYPE_UINT8, 0);
    CHECK_OBJECT(virt, VX_TYPE_TENSOR);
    CHECK_OK(vxQueryTensor(virt, VX_TENSOR_DIMS, got, sizeof(got)));
    CHECK(got[2] == 2);
    CHECK_STATUS(vxCopyTensorPatch(virt, 3, start, dims, strides, back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
                 VX_ERROR_OPTIMIZED_AWAY);
    CHECK_OK(vxReleaseTensor(&virt));
    virt = vxCreateVirtualTensor(graph, 0, NULL, VX_TYPE_INVALID, 0);
    CHECK_OBJECT(virt, VX_TYPE_TENSOR);
    CHECK_OK(vxReleaseTensor(&virt));
    CHECK_OK(vxReleaseGraph(&graph));
}

typedef struct {
    vx_int32 mode;
    vx_int32 gain[4];
} wb_t;

static void test_user_data_objects(vx_context context)
{
    vx_user_data_object u, unnamed, virt, bad;
    vx_graph graph;
    vx_char name[VX_MAX_REFERENCE_NAME];
    vx_size size = 0;
    wb_t init = {1, {2, 3, 4, 5}}, back;
    vx_int32 gains[2] = {0, 0};
    vx_map_id map;
    void *ptr = NULL;

    u = vxCreateUserDataObject(context, "wb_t", sizeof(wb_t), &init);
    CHECK_OBJECT(u, VX_TYPE_USER_DATA_OBJECT);
    CHECK_OK(vxQueryUserDataObject(u, VX_USER_DATA_OBJECT_NAME, name, sizeof(name)));
    CHECK_OK(vxQueryUserDataObject(u, VX_USER_DATA_OBJECT_SIZE, &size, sizeof(size)));
    CHECK(strcmp(name, "wb_t") == 0 && size == sizeof(wb_t));
    CHECK_STATUS(vxQueryUserDataObject(u, VX_USER_DATA_OBJECT_NAME, name, 4), VX_ERROR_INVALID_PARAMETERS);
    CHECK_OK(vxCopyUserDataObject(u, 0, 0, &back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(memcmp(&back, &init, sizeof(wb_t)) == 0);
    CHECK_OK(vxCopyUserDataObject(u, 8, 8, gains, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(gains[0] == 3 && gains[1] == 4);
    gains[0] = 30;
    CHECK_OK(vxCopyUserDataObject(u, 8, 4, gains, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK_STATUS(vxCopyUserDataObject(u, 16, 8, gains, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxCopyUserDataObject(u, 20, 0, gains, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_ERROR_INVALID_PARAMETERS);
    CHECK_OK(vxMapUserDataObject(u, 4, 0, &map, &ptr, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST, 0));
    CHECK(((vx_int32 *)ptr)[0] == 2 && ((vx_int32 *)ptr)[1] == 30);
    ((vx_int32 *)ptr)[3] = -1;
    CHECK_OK(vxUnmapUserDataObject(u, map));
    CHECK_OK(vxCopyUserDataObject(u, 0, sizeof(wb_t), &back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(back.gain[3] == -1 && back.gain[1] == 30 && back.mode == 1);
    CHECK_STATUS(vxMapUserDataObject(u, 0, 100, &map, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0),
                 VX_ERROR_INVALID_PARAMETERS);
    CHECK_OK(vxReleaseUserDataObject(&u));

    unnamed = vxCreateUserDataObject(context, NULL, 8, NULL);
    CHECK_OBJECT(unnamed, VX_TYPE_USER_DATA_OBJECT);
    CHECK_OK(vxQueryUserDataObject(unnamed, VX_USER_DATA_OBJECT_NAME, name, sizeof(name)));
    CHECK(name[0] == '\0');
    CHECK_OK(vxReleaseUserDataObject(&unnamed));
    bad = vxCreateUserDataObject(context, "x", 0, NULL);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_PARAMETERS);

    graph = vxCreateGraph(context);
    virt = vxCreateVirtualUserDataObject(graph, "wb_t", sizeof(wb_t));
    CHECK_OBJECT(virt, VX_TYPE_USER_DATA_OBJECT);
    CHECK_STATUS(vxMapUserDataObject(virt, 0, 0, &map, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0),
                 VX_ERROR_OPTIMIZED_AWAY);
    CHECK_OK(vxReleaseUserDataObject(&virt));
    CHECK_OK(vxReleaseGraph(&graph));
}

static void test_images(vx_context context)
{
    vx_pixel_value_t value;
    vx_image uniform, rgb, parent, roi, bad;
    vx_rectangle_t rect = {1, 2, 5, 4}, valid, whole = {0, 0, 8, 6}, outside = {0, 0, 9, 6};
    vx_imagepatch_addressing_t user = {4, 2, 1, 4, 0, 0, 0, 0, 0}, mapped;
    vx_uint8 patch[8], big[6 * 8];
    vx_uint16 u16[4];
    vx_map_id map;
    void *ptr = NULL;
    vx_enum space = VX_COLOR_SPACE_BT709;
    int i;

    memset(&value, 0, sizeof(value));
    value.U8 = 7;
    uniform = vxCreateUniformImage(context, 8, 6, VX_DF_IMAGE_U8, &value);
    CHECK_OBJECT(uniform, VX_TYPE_IMAGE);
    memset(patch, 0, sizeof(patch));
    CHECK_OK(vxCopyImagePatch(uniform, &rect, 0, &user, patch, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    CHECK(patch[0] == 7 && patch[7] == 7);
    bad = vxCreateUniformImage(context, 8, 6, VX_DF_IMAGE_U8, NULL);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_PARAMETERS);
    CHECK_OK(vxReleaseImage(&uniform));
    value.RGB[0] = 1;
    value.RGB[1] = 2;
    value.RGB[2] = 3;
    rgb = vxCreateUniformImage(context, 4, 4, VX_DF_IMAGE_RGB, &value);
    /* Neither rectangle fits a 4x4 image. */
    CHECK(vxMapImagePatch(rgb, &rect, 0, &map, &mapped, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0) != VX_SUCCESS);
    CHECK(vxMapImagePatch(rgb, &whole, 0, &map, &mapped, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0) != VX_SUCCESS);
    {
        vx_rectangle_t all = {0, 0, 4, 4};
        vx_uint8 *px;
        CHECK_OK(vxMapImagePatch(rgb, &all, 0, &map, &mapped, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
        px = (vx_uint8 *)vxFormatImagePatchAddress2d(ptr, 3, 2, &mapped);
        CHECK(px != NULL && px[0] == 1 && px[1] == 2 && px[2] == 3);
        CHECK(vxFormatImagePatchAddress1d(ptr, 11, &mapped) == (void *)px);
        CHECK(vxFormatImagePatchAddress2d(ptr, 4, 0, &mapped) == NULL);
        CHECK(vxFormatImagePatchAddress1d(ptr, 16, &mapped) == NULL);
        CHECK(vxFormatImagePatchAddress1d(ptr, 0, NULL) == NULL);
        CHECK_OK(vxUnmapImagePatch(rgb, map));
    }
    CHECK_OK(vxReleaseImage(&rgb));
    bad = vxCreateUniformImage(context, 8, 6, VX_DF_IMAGE_U1, &value);
    CHECK_STATUS(status_of(bad), VX_ERROR_NOT_SUPPORTED);

    /* Patch copies with the caller's layout; an ROI shares its parent's pixels. */
    parent = vxCreateImage(context, 8, 6, VX_DF_IMAGE_U8);
    for (i = 0; i < 48; i++)
        big[i] = (vx_uint8)i;
    user.dim_x = 8;
    user.dim_y = 6;
    user.stride_x = 1;
    user.stride_y = 8;
    CHECK_OK(vxCopyImagePatch(parent, &whole, 0, &user, big, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
    roi = vxCreateImageFromROI(parent, &rect);
    CHECK_OBJECT(roi, VX_TYPE_IMAGE);
    {
        vx_rectangle_t in_roi = {0, 0, 4, 2};
        user.dim_x = 4;
        user.dim_y = 2;
        user.stride_x = 2;
        user.stride_y = 8;
        memset(patch, 0, sizeof(patch));
        memset(big, 0xAA, sizeof(big));
        CHECK_OK(vxCopyImagePatch(roi, &in_roi, 0, &user, big, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
        CHECK(big[0] == 2 * 8 + 1 && big[1] == 0xAA && big[2] == 2 * 8 + 2 && big[8] == 3 * 8 + 1);
        big[0] = 200;
        CHECK_OK(vxCopyImagePatch(roi, &in_roi, 0, &user, big, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
        user.stride_x = 1;
        user.dim_x = 1;
        user.dim_y = 1;
        CHECK_STATUS(vxCopyImagePatch(roi, &in_roi, 0, &user, big, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
                     VX_ERROR_INVALID_PARAMETERS);
        CHECK_STATUS(vxCopyImagePatch(roi, &in_roi, 1, &user, big, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
                     VX_ERROR_INVALID_PARAMETERS);
        CHECK_STATUS(vxCopyImagePatch(roi, NULL, 0, &user, big, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
                     VX_ERROR_INVALID_PARAMETERS);
    }
    {
        vx_rectangle_t one = {1, 2, 2, 3};
        vx_imagepatch_addressing_t single = {1, 1, 1, 1, 0, 0, 0, 0, 0};
        vx_uint8 px = 0;
        CHECK_OK(vxCopyImagePatch(parent, &one, 0, &single, &px, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
        CHECK(px == 200);
    }
    bad = vxCreateImageFromROI(parent, &outside);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_PARAMETERS);
    bad = vxCreateImageFromROI(parent, NULL);
    CHECK_STATUS(status_of(bad), VX_ERROR_INVALID_PARAMETERS);
    CHECK_OK(vxReleaseImage(&roi));

    /* Valid regions. */
    CHECK_OK(vxGetValidRegionImage(parent, &valid));
    CHECK(valid.start_x == 0 && valid.end_x == 8 && valid.end_y == 6);
    CHECK_OK(vxSetImageValidRectangle(parent, &rect));
    CHECK_OK(vxGetValidRegionImage(parent, &valid));
    CHECK(valid.start_x == 1 && valid.start_y == 2 && valid.end_x == 5 && valid.end_y == 4);
    CHECK_STATUS(vxSetImageValidRectangle(parent, &outside), VX_ERROR_INVALID_PARAMETERS);
    CHECK_OK(vxSetImageValidRectangle(parent, NULL));
    CHECK_OK(vxGetValidRegionImage(parent, &valid));
    CHECK(valid.start_x == 0 && valid.end_x == 8);
    CHECK_STATUS(vxGetValidRegionImage(parent, NULL), VX_ERROR_INVALID_PARAMETERS);

    /* Attributes. */
    CHECK_OK(vxSetImageAttribute(parent, VX_IMAGE_SPACE, &space, sizeof(space)));
    space = VX_COLOR_SPACE_BT601_625;
    CHECK_OK(vxSetImageAttribute(parent, VX_IMAGE_SPACE, &space, sizeof(space)));
    space = 0;
    CHECK_OK(vxQueryImage(parent, VX_IMAGE_SPACE, &space, sizeof(space)));
    CHECK(space == VX_COLOR_SPACE_BT601_625);
    space = VX_COLOR_SPACE_BT709 + 100;
    CHECK_STATUS(vxSetImageAttribute(parent, VX_IMAGE_SPACE, &space, sizeof(space)), VX_ERROR_INVALID_VALUE);
    CHECK_STATUS(vxSetImageAttribute(parent, VX_IMAGE_SPACE, &space, 1), VX_ERROR_INVALID_PARAMETERS);
    CHECK_STATUS(vxSetImageAttribute(parent, VX_IMAGE_WIDTH, &space, sizeof(space)), VX_ERROR_NOT_SUPPORTED);
    CHECK_STATUS(vxSetImageAttribute(NULL, VX_IMAGE_SPACE, &space, sizeof(space)), VX_ERROR_INVALID_REFERENCE);
    CHECK_OK(vxReleaseImage(&parent));

    /* A 16-bit uniform image, read with vxCopyImagePatch. */
    memset(&value, 0, sizeof(value));
    value.U16 = 0xBEEF;
    uniform = vxCreateUniformImage(context, 2, 2, VX_DF_IMAGE_U16, &value);
    {
        vx_rectangle_t all = {0, 0, 2, 2};
        vx_imagepatch_addressing_t a16 = {2, 2, 2, 4, 0, 0, 0, 0, 0};
        CHECK_OK(vxCopyImagePatch(uniform, &all, 0, &a16, u16, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
        CHECK(u16[0] == 0xBEEF && u16[3] == 0xBEEF);
        a16.stride_x = 1;
        CHECK_STATUS(vxCopyImagePatch(uniform, &all, 0, &a16, u16, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
                     VX_ERROR_INVALID_PARAMETERS);
    }
    CHECK_OK(vxReleaseImage(&uniform));

    /* A virtual image: not for the application. */
    {
        vx_graph graph = vxCreateGraph(context);
        vx_image virt = vxCreateVirtualImage(graph, 4, 4, VX_DF_IMAGE_U8);
        vx_rectangle_t all = {0, 0, 4, 4};
        vx_imagepatch_addressing_t a8 = {4, 4, 1, 4, 0, 0, 0, 0, 0};
        CHECK_STATUS(vxCopyImagePatch(virt, &all, 0, &a8, patch, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
                     VX_ERROR_OPTIMIZED_AWAY);
        CHECK_OK(vxReleaseImage(&virt));
        CHECK_OK(vxReleaseGraph(&graph));
    }
}

/* ---- A C kernel mapping and copying virtual objects of its graph ---- */

#define PRODUCE_NAME "org.vxrs.test.objects.produce"
#define CONSUME_NAME "org.vxrs.test.objects.consume"
#define ITEMS 5

static vx_status VX_CALLBACK produce_validate(vx_node node, const vx_reference parameters[], vx_uint32 num,
                                              vx_meta_format metas[])
{
    vx_enum type = VX_TYPE_UINT8;
    vx_size capacity = 16;
    (void)node;
    (void)parameters;
    if (num != 2)
        return VX_ERROR_INVALID_PARAMETERS;
    if (vxSetMetaFormatAttribute(metas[1], VX_ARRAY_ITEMTYPE, &type, sizeof(type)) != VX_SUCCESS ||
        vxSetMetaFormatAttribute(metas[1], VX_ARRAY_CAPACITY, &capacity, sizeof(capacity)) != VX_SUCCESS)
        return VX_FAILURE;
    return VX_SUCCESS;
}

/* Reads the LUT (a map), appends its first ITEMS entries to the (virtual) array. */
static vx_status VX_CALLBACK produce_process(vx_node node, const vx_reference *parameters, vx_uint32 num)
{
    vx_lut lut = (vx_lut)parameters[0];
    vx_array out = (vx_array)parameters[1];
    vx_map_id map;
    void *ptr = NULL;
    vx_status s;
    (void)node;
    if (num != 2)
        return VX_ERROR_INVALID_PARAMETERS;
    if (vxMapLUT(lut, &map, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0) != VX_SUCCESS)
        return VX_FAILURE;
    if (vxTruncateArray(out, 0) != VX_SUCCESS)
        return VX_FAILURE;
    s = vxAddArrayItems(out, ITEMS, ptr, 1);
    vxUnmapLUT(lut, map);
    return s;
}

static vx_status VX_CALLBACK consume_validate(vx_node node, const vx_reference parameters[], vx_uint32 num,
                                              vx_meta_format metas[])
{
    (void)node;
    if (num != 2)
        return VX_ERROR_INVALID_PARAMETERS;
    return vxSetMetaFormatFromReference(metas[1], parameters[1]);
}

/* Sums the (virtual) array's items into the user data object: copies a range, maps the rest and
 * leaves that mapping for the end of the callback to release. */
static vx_status VX_CALLBACK consume_process(vx_node node, const vx_reference *parameters, vx_uint32 num)
{
    vx_array in = (vx_array)parameters[0];
    vx_user_data_object out = (vx_user_data_object)parameters[1];
    vx_uint8 first[2];
    vx_size n = 0, stride = 0, i;
    vx_uint32 sum = 0;
    vx_map_id map;
    void *ptr = NULL;
    (void)node;
    if (num != 2)
        return VX_ERROR_INVALID_PARAMETERS;
    if (vxQueryArray(in, VX_ARRAY_NUMITEMS, &n, sizeof(n)) != VX_SUCCESS || n != ITEMS)
        return VX_FAILURE;
    if (vxCopyArrayRange(in, 0, 2, 1, first, VX_READ_ONLY, VX_MEMORY_TYPE_HOST) != VX_SUCCESS)
        return VX_FAILURE;
    sum = first[0] + first[1];
    if (vxMapArrayRange(in, 2, n, &map, &stride, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0) != VX_SUCCESS)
        return VX_FAILURE;
    for (i = 0; i < n - 2; i++)
        sum += vxArrayItem(vx_uint8, ptr, i, stride);
    /* Not unmapped: the frame gives the mapping back when the callback returns. */
    return vxCopyUserDataObject(out, 0, sizeof(sum), &sum, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST);
}

static void test_kernel_access(vx_context context)
{
    vx_kernel produce, consume;
    vx_graph graph;
    vx_lut lut;
    vx_array mid;
    vx_user_data_object result;
    vx_node a, b;
    vx_uint8 table[256];
    vx_uint32 sum = 0;
    vx_map_id map;
    vx_size stride;
    void *ptr = NULL;
    int i;

    produce = vxAddUserKernel(context, PRODUCE_NAME, VX_KERNEL_BASE(VX_ID_USER, 0) + 0x31, produce_process, 2,
                              produce_validate, NULL, NULL);
    CHECK_OBJECT(produce, VX_TYPE_KERNEL);
    CHECK_OK(vxAddParameterToKernel(produce, 0, VX_INPUT, VX_TYPE_LUT, VX_PARAMETER_STATE_REQUIRED));
    CHECK_OK(vxAddParameterToKernel(produce, 1, VX_OUTPUT, VX_TYPE_ARRAY, VX_PARAMETER_STATE_REQUIRED));
    CHECK_OK(vxFinalizeKernel(produce));
    consume = vxAddUserKernel(context, CONSUME_NAME, VX_KERNEL_BASE(VX_ID_USER, 0) + 0x32, consume_process, 2,
                              consume_validate, NULL, NULL);
    CHECK_OBJECT(consume, VX_TYPE_KERNEL);
    CHECK_OK(vxAddParameterToKernel(consume, 0, VX_INPUT, VX_TYPE_ARRAY, VX_PARAMETER_STATE_REQUIRED));
    CHECK_OK(vxAddParameterToKernel(consume, 1, VX_OUTPUT, VX_TYPE_USER_DATA_OBJECT, VX_PARAMETER_STATE_REQUIRED));
    CHECK_OK(vxFinalizeKernel(consume));

    graph = vxCreateGraph(context);
    lut = vxCreateLUT(context, VX_TYPE_UINT8, 256);
    for (i = 0; i < 256; i++)
        table[i] = (vx_uint8)(i + 1);
    CHECK_OK(vxCopyLUT(lut, table, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
    mid = vxCreateVirtualArray(graph, 0, 0);
    result = vxCreateUserDataObject(context, "sum", sizeof(vx_uint32), NULL);
    a = vxCreateGenericNode(graph, produce);
    b = vxCreateGenericNode(graph, consume);
    CHECK_OK(vxSetParameterByIndex(a, 0, (vx_reference)lut));
    CHECK_OK(vxSetParameterByIndex(a, 1, (vx_reference)mid));
    CHECK_OK(vxSetParameterByIndex(b, 0, (vx_reference)mid));
    CHECK_OK(vxSetParameterByIndex(b, 1, (vx_reference)result));
    CHECK_OK(vxVerifyGraph(graph));
    for (i = 0; i < 3; i++) {
        CHECK_OK(vxProcessGraph(graph));
        CHECK_OK(vxCopyUserDataObject(result, 0, 0, &sum, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
        CHECK(sum == 1 + 2 + 3 + 4 + 5);
    }
    /* The kernel's mapping went with its callback; the application still cannot map. */
    CHECK_STATUS(vxMapArrayRange(mid, 0, 1, &map, &stride, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0),
                 VX_ERROR_OPTIMIZED_AWAY);
    /* The application reading the LUT while the graph runs: readers share it. */
    CHECK_OK(vxMapLUT(lut, &map, &ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0));
    CHECK_OK(vxProcessGraph(graph));
    CHECK_OK(vxUnmapLUT(lut, map));

    CHECK_OK(vxReleaseNode(&a));
    CHECK_OK(vxReleaseNode(&b));
    CHECK_OK(vxReleaseArray(&mid));
    CHECK_OK(vxReleaseLUT(&lut));
    CHECK_OK(vxReleaseUserDataObject(&result));
    CHECK_OK(vxReleaseGraph(&graph));
    CHECK_OK(vxRemoveKernel(produce));
    CHECK_OK(vxRemoveKernel(consume));
}

int main(void)
{
    vx_context context = vxCreateContext();
    vx_uint32 start;
    vx_image image;

    CHECK_OBJECT(context, VX_TYPE_CONTEXT);
    start = refs_of(context);
    image = vxCreateImage(context, 8, 8, VX_DF_IMAGE_U8);

    /* Each part releases what it made: the count is back after each. */
    test_user_structs(context);
    CHECK(refs_of(context) == start + 1);
    test_arrays(context, image);
    CHECK(refs_of(context) == start + 1);
    test_matrices(context);
    CHECK(refs_of(context) == start + 1);
    test_convolutions(context);
    CHECK(refs_of(context) == start + 1);
    test_luts(context);
    CHECK(refs_of(context) == start + 1);
    test_distributions(context);
    CHECK(refs_of(context) == start + 1);
    test_thresholds(context);
    CHECK(refs_of(context) == start + 1);
    test_remaps(context);
    CHECK(refs_of(context) == start + 1);
    test_pyramids(context);
    CHECK(refs_of(context) == start + 1);
    test_object_arrays(context);
    CHECK(refs_of(context) == start + 1);
    test_tensors(context);
    CHECK(refs_of(context) == start + 1);
    test_user_data_objects(context);
    CHECK(refs_of(context) == start + 1);
    test_images(context);
    CHECK(refs_of(context) == start + 1);
    test_kernel_access(context);
    CHECK(refs_of(context) == start + 1);

    CHECK_OK(vxReleaseImage(&image));
    CHECK(refs_of(context) == start);
    CHECK_OK(vxReleaseContext(&context));
    if (check_failures == 0)
        printf("objects: ok\n");
    return check_failures;
}
