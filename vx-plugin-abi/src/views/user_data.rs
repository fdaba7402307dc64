//! The UserDataObject view: what a `#[user_kernel]` takes for the kind (its wire side: `kinds/user_data.rs`).

use crate::kinds::ObjectMeta;
use super::{data_view, dims};
use crate::kinds::user_data::{CODE, Wire};


data_view!(
    /// A user data object's bytes.
    UserData<>, u8, CODE, |_m| Ok(())
);

dims!(UserData {
    size: usize => ObjectMeta::UserDataObject(Wire { size, .. }) => *size as usize,
    type_name: &str => ObjectMeta::UserDataObject(Wire { type_name, .. }) => type_name.as_str()
});
