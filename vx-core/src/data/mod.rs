//! Data objects: what kernels read and write. Each is an RAII handle over an `Arc`; each holds its
//! context's shared part ([`crate::shared::ContextShared`]) through its [`object::ObjectHeader`],
//! never the context. Buffers are allocated at verify or at the first map/copy (TIOVX's rule).

pub(crate) mod array;
pub(crate) mod blob;
pub(crate) mod buffer;
pub(crate) mod convolution;
pub(crate) mod distribution;
pub(crate) mod image;
pub(crate) mod items;
pub(crate) mod kernel_view;
pub(crate) mod kind;
pub(crate) mod kinds;
pub(crate) mod lut;
pub(crate) mod matrix;
pub(crate) mod object;
pub(crate) mod pyramid;
pub(crate) mod raw_image;
pub(crate) mod reference;
pub(crate) mod remap;
pub(crate) mod scalar;
pub(crate) mod tensor;
pub(crate) mod threshold;
pub(crate) mod types;
pub(crate) mod user_data;
pub(crate) mod wire;
