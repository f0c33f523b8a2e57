//! The background writer of a run's field files: every file written, in order, and a failed
//! write reported, not lost.

use fdlab_output::writer::FieldWriter;
use fdlab_output::Dtype;
use std::sync::Arc;

#[test]
fn files_are_all_written_in_order_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = FieldWriter::new();
    for i in 0..5 {
        let data = Arc::new(vec![i as f64; 6]);
        let path = dir.path().join(format!("f{i}.npy"));
        w.npy(path, vec![2, 3], data, Dtype::F64).unwrap();
    }
    w.finish().unwrap();
    for i in 0..5 {
        let (shape, data) = fdlab_output::read_npy(&dir.path().join(format!("f{i}.npy"))).unwrap();
        assert_eq!(shape, vec![2, 3]);
        assert_eq!(data, vec![i as f64; 6]);
    }
}

#[test]
fn a_failed_write_is_reported_not_lost() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = FieldWriter::new();
    let bad = dir.path().join("missing").join("f.npy");
    let data = Arc::new(vec![1.0; 4]);
    // The error surfaces at a later call or at the end, never silently.
    let mut failed = w.npy(bad, vec![4], data.clone(), Dtype::F64).is_err();
    for i in 0..3 {
        let path = dir.path().join(format!("g{i}.npy"));
        failed |= w.npy(path, vec![4], data.clone(), Dtype::F64).is_err();
    }
    failed |= w.finish().is_err();
    assert!(failed);
}
