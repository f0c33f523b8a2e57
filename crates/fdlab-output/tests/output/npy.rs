//! `.npy` files: round trips, and headers or shapes that do not fit refused.

use fdlab_output::{read_npy, write_npy};

#[test]
fn a_header_whose_shape_overflows_is_refused_not_multiplied() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("huge.npy");
    let mut header =
        "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 2), }"
            .to_string();
    header.push_str(&" ".repeat((64 - (10 + header.len() + 1) % 64) % 64));
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(&[0u8; 16]);
    std::fs::write(&p, bytes).unwrap();
    let e = read_npy(&p).unwrap_err().to_string();
    assert!(e.contains("too large"), "{e}");
}

#[test]
fn npy_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.npy");
    let data: Vec<f64> = (0..12).map(|v| v as f64 * 0.5).collect();
    write_npy(&p, &[3, 4], &data).unwrap();
    let (shape, back) = read_npy(&p).unwrap();
    assert_eq!(shape, vec![3, 4]);
    assert_eq!(back, data);
    assert_eq!(std::fs::metadata(&p).unwrap().len() % 16, 0);
}

#[test]
fn a_shape_that_does_not_match_the_data_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.npy");
    assert!(write_npy(&p, &[3, 5], &[0.0; 12]).is_err());
    assert!(!p.exists());
}
