/*
 * vx-rs: OpenVX 1.3.1 C API, written for vx-rs, compatible with the Khronos
 * headers; values from the OpenVX Neural Network Extension specification.
 *
 * Copyright The vx-rs developers
 * SPDX-License-Identifier: Apache-2.0
 *
 * vx_khr_nn.h: the vx_khr_nn extension: convolutional network layers as
 * graph nodes over vx_tensor. Tensors are laid out [width, height, #IFM,
 * #batches] unless a function says otherwise.
 */

#ifndef _VX_KHR_NN_H_
#define _VX_KHR_NN_H_

/* The extension's name in VX_CONTEXT_EXTENSIONS. */
#define OPENVX_KHR_NN "vx_khr_nn"

#include <VX/vx.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel library of the extension (VX_KERNEL_BASE's second argument). */
#define VX_LIBRARY_KHR_NN_EXTENSION (0x1)

/* Kernel IDs (vxGetKernelByEnum). 0x4 was VX_KERNEL_NORMALIZATION_LAYER,
 * now in vx_compatibility.h. */
enum vx_kernel_nn_ext_e {
    VX_KERNEL_CONVOLUTION_LAYER                  = VX_KERNEL_BASE(VX_ID_KHRONOS, VX_LIBRARY_KHR_NN_EXTENSION) + 0x0,
    VX_KERNEL_FULLY_CONNECTED_LAYER              = VX_KERNEL_BASE(VX_ID_KHRONOS, VX_LIBRARY_KHR_NN_EXTENSION) + 0x1,
    VX_KERNEL_POOLING_LAYER                      = VX_KERNEL_BASE(VX_ID_KHRONOS, VX_LIBRARY_KHR_NN_EXTENSION) + 0x2,
    VX_KERNEL_SOFTMAX_LAYER                      = VX_KERNEL_BASE(VX_ID_KHRONOS, VX_LIBRARY_KHR_NN_EXTENSION) + 0x3,
    VX_KERNEL_ACTIVATION_LAYER                   = VX_KERNEL_BASE(VX_ID_KHRONOS, VX_LIBRARY_KHR_NN_EXTENSION) + 0x5,
    VX_KERNEL_ROI_POOLING_LAYER                  = VX_KERNEL_BASE(VX_ID_KHRONOS, VX_LIBRARY_KHR_NN_EXTENSION) + 0x6,
    VX_KERNEL_DECONVOLUTION_LAYER                = VX_KERNEL_BASE(VX_ID_KHRONOS, VX_LIBRARY_KHR_NN_EXTENSION) + 0x7,
    VX_KERNEL_LOCAL_RESPONSE_NORMALIZATION_LAYER = VX_KERNEL_BASE(VX_ID_KHRONOS, VX_LIBRARY_KHR_NN_EXTENSION) + 0x8
};

/* The extension's enum types (VX_ENUM_BASE's second argument). */
enum vx_nn_enum_e {
    VX_ENUM_NN_ROUNDING_TYPE            = 0x1A,
    VX_ENUM_NN_POOLING_TYPE             = 0x1B,
    VX_ENUM_NN_NORMALIZATION_TYPE       = 0x1C,
    VX_ENUM_NN_ACTIVATION_FUNCTION_TYPE = 0x1D
};

/* How an output size is rounded when the input does not divide evenly
 * (convolution and pooling). */
enum vx_nn_rounding_type_e {
    VX_NN_DS_SIZE_ROUNDING_FLOOR   = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_NN_ROUNDING_TYPE) + 0x0,
    VX_NN_DS_SIZE_ROUNDING_CEILING = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_NN_ROUNDING_TYPE) + 0x1
};

enum vx_nn_pooling_type_e {
    VX_NN_POOLING_MAX = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_NN_POOLING_TYPE) + 0x0,
    VX_NN_POOLING_AVG = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_NN_POOLING_TYPE) + 0x1
};

/* Local response normalization: within one feature map, or across maps. */
enum vx_nn_norm_type_e {
    VX_NN_NORMALIZATION_SAME_MAP    = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_NN_NORMALIZATION_TYPE) + 0x0,
    VX_NN_NORMALIZATION_ACROSS_MAPS = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_NN_NORMALIZATION_TYPE) + 0x1
};

/* vxActivationLayer functions; a and b are its two vx_float32 parameters:
 * logistic 1/(1+e^-x); hyperbolic tan a*tanh(b*x); relu max(0,x);
 * brelu min(a,max(0,x)); softrelu log(1+e^x); abs |x|; square x^2;
 * sqrt sqrt(x); linear a*x+b. */
enum vx_nn_activation_function_e {
    VX_NN_ACTIVATION_LOGISTIC       = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_NN_ACTIVATION_FUNCTION_TYPE) + 0x0,
    VX_NN_ACTIVATION_HYPERBOLIC_TAN = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_NN_ACTIVATION_FUNCTION_TYPE) + 0x1,
    VX_NN_ACTIVATION_RELU           = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_NN_ACTIVATION_FUNCTION_TYPE) + 0x2,
    VX_NN_ACTIVATION_BRELU          = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_NN_ACTIVATION_FUNCTION_TYPE) + 0x3,
    VX_NN_ACTIVATION_SOFTRELU       = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_NN_ACTIVATION_FUNCTION_TYPE) + 0x4,
    VX_NN_ACTIVATION_ABS            = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_NN_ACTIVATION_FUNCTION_TYPE) + 0x5,
    VX_NN_ACTIVATION_SQUARE         = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_NN_ACTIVATION_FUNCTION_TYPE) + 0x6,
    VX_NN_ACTIVATION_SQRT           = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_NN_ACTIVATION_FUNCTION_TYPE) + 0x7,
    VX_NN_ACTIVATION_LINEAR         = VX_ENUM_BASE(VX_ID_KHRONOS, VX_ENUM_NN_ACTIVATION_FUNCTION_TYPE) + 0x8
};

/* The extension's struct types (vx_type_e values; the parameter structs below). */
enum vx_nn_type_e {
    VX_TYPE_NN_CONVOLUTION_PARAMS   = 0x025,
    VX_TYPE_NN_DECONVOLUTION_PARAMS = 0x026,
    VX_TYPE_NN_ROI_POOL_PARAMS      = 0x027
};

/* vxConvolutionLayer parameters. The policies are vx_convert_policy_e and
 * vx_round_policy_e values; down_scale_size_rounding a vx_nn_rounding_type_e;
 * dilation is the number of zeros inserted between kernel elements. */
typedef struct _vx_nn_convolution_params_t {
    vx_size padding_x;
    vx_size padding_y;
    vx_enum overflow_policy;
    vx_enum rounding_policy;
    vx_enum down_scale_size_rounding;
    vx_size dilation_x;
    vx_size dilation_y;
} vx_nn_convolution_params_t;

/* vxDeconvolutionLayer parameters. Padding is taken off the output; a_x / a_y
 * pick between the possible output sizes (each below the upscale factor). */
typedef struct _vx_nn_deconvolution_params_t {
    vx_size padding_x;
    vx_size padding_y;
    vx_enum overflow_policy;
    vx_enum rounding_policy;
    vx_size a_x;
    vx_size a_y;
} vx_nn_deconvolution_params_t;

/* vxROIPoolingLayer parameters; pool_type must be VX_NN_POOLING_MAX. */
typedef struct _vx_nn_roi_pool_params_t {
    vx_enum pool_type;
} vx_nn_roi_pool_params_t;

/* ---- Nodes ----
 * Each adds a node to `graph` and returns it (check it with vxGetStatus).
 * The size_of_* arguments are the sizeof of the parameter struct passed; they
 * are not kernel parameters. Biases may be NULL. */

/* Kernel parameters: inputs, weights [kx, ky, #IFM, #OFM], biases ([#OFM] or
 * [width, height, #OFM]), convolution_params, outputs. */
VX_API_ENTRY vx_node VX_API_CALL vxConvolutionLayer(vx_graph graph, vx_tensor inputs, vx_tensor weights, vx_tensor biases, const vx_nn_convolution_params_t *convolution_params, vx_size size_of_convolution_params, vx_tensor outputs);
/* inputs [#IFM, #batches] or [width, height, #IFM, #batches]; weights
 * [#IFM, #OFM]; biases [#OFM]; outputs [#OFM, #batches]. */
VX_API_ENTRY vx_node VX_API_CALL vxFullyConnectedLayer(vx_graph graph, vx_tensor inputs, vx_tensor weights, vx_tensor biases, vx_enum overflow_policy, vx_enum rounding_policy, vx_tensor outputs);
VX_API_ENTRY vx_node VX_API_CALL vxPoolingLayer(vx_graph graph, vx_tensor inputs, vx_enum pooling_type, vx_size pooling_size_x, vx_size pooling_size_y, vx_size pooling_padding_x, vx_size pooling_padding_y, vx_enum rounding, vx_tensor outputs);
VX_API_ENTRY vx_node VX_API_CALL vxSoftmaxLayer(vx_graph graph, vx_tensor inputs, vx_tensor outputs);
/* type is a vx_nn_norm_type_e; normalization_size odd, 3 to 7. */
VX_API_ENTRY vx_node VX_API_CALL vxLocalResponseNormalizationLayer(vx_graph graph, vx_tensor inputs, vx_enum type, vx_size normalization_size, vx_float32 alpha, vx_float32 beta, vx_float32 bias, vx_tensor outputs);
/* function is a vx_nn_activation_function_e. */
VX_API_ENTRY vx_node VX_API_CALL vxActivationLayer(vx_graph graph, vx_tensor inputs, vx_enum function, vx_float32 a, vx_float32 b, vx_tensor outputs);
/* Kernel parameters: input_data, input_rois [4, roi_count, #batches],
 * roi_pool_params, output_arr [pooled width, pooled height, #IFM, #batches]. */
VX_API_ENTRY vx_node VX_API_CALL vxROIPoolingLayer(vx_graph graph, vx_tensor input_data, vx_tensor input_rois, const vx_nn_roi_pool_params_t *roi_pool_params, vx_size size_of_roi_params, vx_tensor output_arr);
/* Kernel parameters: inputs, weights [width, height, #IFM, #OFM], biases
 * [#OFM], deconvolution_params, outputs. */
VX_API_ENTRY vx_node VX_API_CALL vxDeconvolutionLayer(vx_graph graph, vx_tensor inputs, vx_tensor weights, vx_tensor biases, const vx_nn_deconvolution_params_t *deconvolution_params, vx_size size_of_deconv_params, vx_tensor outputs);

#ifdef __cplusplus
}
#endif

#endif /* _VX_KHR_NN_H_ */
