//! Data objects: what kernels read and write. Each is an RAII handle over an `Arc`; each holds its
//! context's shared part ([`crate::shared::ContextShared`]) through its [`object::ObjectHeader`],
//! never the context. Buffers are allocated at verify or at the first map/copy (TIOVX's rule).

pub(crate) mod array;
pub(crate) mod buffer;
pub(crate) mod image;
pub(crate) mod object;
pub(crate) mod reference;
pub(crate) mod scalar;
pub(crate) mod types;
pub(crate) mod user_data;
