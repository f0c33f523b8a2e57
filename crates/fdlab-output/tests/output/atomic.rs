//! Every file appears under its final name only when complete; a killed run's temporaries
//! are removed, and nothing else.

use fdlab_output::atomic::{remove_stale, write, write_with};
use std::io::Write;

#[test]
fn a_failed_write_leaves_the_old_file_and_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.json");
    write(&p, b"old").unwrap();
    let r = write_with(&p, |w| {
        w.write_all(b"half")?;
        Err(std::io::Error::other("disk full"))
    });
    assert!(r.is_err());
    assert_eq!(std::fs::read(&p).unwrap(), b"old");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn stale_temporaries_are_removed_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".fdlab-tmp-1-field.npy"), b"x").unwrap();
    std::fs::create_dir(dir.path().join(".fdlab-tmp-2-d")).unwrap();
    std::fs::write(dir.path().join("keep.npy"), b"x").unwrap();
    assert_eq!(remove_stale(dir.path()).unwrap(), 2);
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert_eq!(left.len(), 1);
}
