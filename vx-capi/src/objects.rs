//! The data objects besides images and scalars: arrays, matrices, convolutions, LUTs,
//! distributions, thresholds, remaps, pyramids, object arrays, tensors and user data objects.
