//! Tests over the list of kinds: one object of every kind, each through what the generated code
//! dispatches (meta data, the wire, meta formats, object-array items). A kind added to the list
//! fails `every_kind_is_sampled` until it has a sample here.

use crate::*;

/// One real object of every kind.
fn samples(ctx: &Context) -> Vec<Reference> {
    let image = Image::new(ctx, 8, 4, ImageFormat::U8).unwrap();
    vec![
        image.clone().into(),
        Scalar::new(ctx, ScalarValue::Int16(-3)).unwrap().into(),
        Array::new(ctx, ArrayItemType::Keypoint, 5).unwrap().into(),
        UserDataObject::new(ctx, "pair", 16).unwrap().into(),
        Matrix::from_pattern(ctx, MatrixPattern::Cross, 5, 3).unwrap().into(),
        Convolution::new(ctx, 3, 5).unwrap().into(),
        Lut::new(ctx, ScalarType::Int16, 300).unwrap().into(),
        Distribution::new(ctx, 16, 2, 200).unwrap().into(),
        Threshold::new(ctx, ThresholdType::Range, ScalarType::Uint16).unwrap().into(),
        Pyramid::new(ctx, 3, PYRAMID_SCALE_HALF, 16, 8, ImageFormat::U8).unwrap().into(),
        Remap::new(ctx, 8, 4, 16, 8).unwrap().into(),
        ObjectArray::new(ctx, &image, 2).unwrap().into(),
        Tensor::new(ctx, &[2, 3, 4], ScalarType::Int8, 0).unwrap().into(),
    ]
}

#[test]
fn every_kind_is_sampled() {
    let ctx = Context::new().unwrap();
    let kinds: Vec<DataType> = samples(&ctx).iter().map(Reference::data_type).collect();
    assert_eq!(kinds, DataType::ALL.to_vec());
}

#[test]
fn every_kind_round_trips_its_code_and_has_its_own_label() {
    let mut labels: Vec<String> = DataType::ALL.iter().map(|t| t.to_string()).collect();
    for t in DataType::ALL {
        assert_eq!(DataType::from_code(t.code() as u32), Some(t));
    }
    labels.sort();
    labels.dedup();
    assert_eq!(labels.len(), DataType::ALL.len());
}

#[test]
fn a_meta_survives_the_wire_and_a_meta_format() {
    let ctx = Context::new().unwrap();
    for r in samples(&ctx) {
        let meta = r.meta();
        assert_eq!(meta.data_type(), r.data_type());
        assert!(meta.to_string().starts_with(&r.data_type().to_string()), "{meta}");
        assert_eq!(ObjectMeta::from_wire(&r.any().to_wire()).unwrap(), meta, "{}", r.data_type());
        let mut m = MetaFormat::new(1, r.data_type());
        m.set_from_reference(&r).unwrap();
        assert_eq!(m.resolve().unwrap(), meta, "{}", r.data_type());
    }
}

#[test]
fn every_kind_but_object_arrays_can_be_an_object_array_item() {
    let ctx = Context::new().unwrap();
    for r in samples(&ctx) {
        let a = ObjectArray::new(&ctx, &r, 2);
        if r.data_type() == DataType::ObjectArray {
            assert_eq!(a.unwrap_err().kind(), ErrorKind::InvalidType);
            continue;
        }
        let a = a.unwrap();
        assert_eq!(a.item(1).unwrap().meta(), r.meta(), "{}", r.data_type());
        assert!(!a.item(0).unwrap().same_object(&r));
    }
}

#[test]
fn an_attribute_of_another_kind_is_refused() {
    let mut m = MetaFormat::new(0, DataType::Matrix);
    let e = m.set(LutAttr::Count(3)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidType);
    m.set(MatrixAttr::Rows(3)).unwrap().set(MatrixAttr::Columns(2)).unwrap();
    assert_eq!(m.resolve().unwrap_err().kind(), ErrorKind::InvalidParameters, "the type is unset");
}
