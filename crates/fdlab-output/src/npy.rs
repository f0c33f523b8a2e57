//! NumPy `.npy` arrays: written as float32 or float64, read back from either.

use crate::atomic;
use crate::error::{io_err, Error, Result};
use std::io::Write;
use std::path::Path;

/// The element type of a written array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dtype {
    /// Little-endian float32 (`<f4`), what an `f32` run computes.
    F32,
    /// Little-endian float64 (`<f8`).
    #[default]
    F64,
}

impl Dtype {
    /// Bytes per value.
    pub fn size(self) -> usize {
        match self {
            Dtype::F32 => 4,
            Dtype::F64 => 8,
        }
    }
}

/// Values converted this many at a time: large fields are written without a second copy of
/// the whole array.
const CHUNK: usize = 1 << 16;

/// Write `data` as little-endian `dtype` bytes to `w`, a chunk at a time.
pub(crate) fn write_values(w: &mut impl Write, data: &[f64], dtype: Dtype) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(CHUNK * dtype.size());
    for chunk in data.chunks(CHUNK) {
        buf.clear();
        match dtype {
            Dtype::F32 => chunk
                .iter()
                .for_each(|v| buf.extend_from_slice(&(*v as f32).to_le_bytes())),
            Dtype::F64 => chunk
                .iter()
                .for_each(|v| buf.extend_from_slice(&v.to_le_bytes())),
        }
        w.write_all(&buf)?;
    }
    Ok(())
}

/// The `.npy` header (magic, version 1.0, length, dictionary padded so the data start on a
/// 64-byte boundary) of a C-ordered array of `shape`.
fn header(shape: &[usize], dtype: Dtype) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|n| n.to_string()).collect();
    let tuple = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let descr = match dtype {
        Dtype::F32 => "<f4",
        Dtype::F64 => "<f8",
    };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {tuple}, }}");
    let total = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat((64 - total % 64) % 64));
    dict.push('\n');
    let mut out = Vec::with_capacity(10 + dict.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out
}

/// Write a C-ordered float64 `.npy` of `shape` (slowest axis first), atomically.
pub fn write_npy(path: &Path, shape: &[usize], data: &[f64]) -> Result<()> {
    write_npy_as(path, shape, data, Dtype::F64)
}

/// Write a C-ordered `.npy` of `shape` (slowest axis first) holding `data` as `dtype`,
/// atomically (a temporary name, then a rename: see [`crate::atomic`]).
pub fn write_npy_as(path: &Path, shape: &[usize], data: &[f64], dtype: Dtype) -> Result<()> {
    let n: usize = shape.iter().product();
    if n != data.len() {
        return Err(Error::Npy {
            path: path.to_path_buf(),
            detail: format!("shape {shape:?} holds {n} values, given {}", data.len()),
        });
    }
    let head = header(shape, dtype);
    atomic::write_with(path, |w| {
        w.write_all(&head)?;
        write_values(w, data, dtype)
    })
}

/// Read a C-ordered `<f8` or `<f4` `.npy`; returns its shape and data as f64.
pub fn read_npy(path: &Path) -> Result<(Vec<usize>, Vec<f64>)> {
    let bytes = std::fs::read(path).map_err(io_err(path))?;
    let bad = |d: &str| Error::Npy {
        path: path.to_path_buf(),
        detail: d.to_string(),
    };
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(bad("not an .npy file"));
    }
    let (hlen, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        _ => return Err(bad("unsupported .npy version")),
    };
    let header = std::str::from_utf8(
        bytes
            .get(start..start + hlen)
            .ok_or_else(|| bad("truncated header"))?,
    )
    .map_err(|_| bad("header is not text"))?;
    if header.contains("'fortran_order': True") {
        return Err(bad(
            "Fortran order is not supported; save with np.ascontiguousarray",
        ));
    }
    let size = if header.contains("'<f8'") {
        8
    } else if header.contains("'<f4'") {
        4
    } else {
        return Err(bad("dtype must be little-endian float64 or float32"));
    };
    let shape_txt = header
        .split("'shape':")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .ok_or_else(|| bad("no shape in header"))?;
    let shape: Vec<usize> = shape_txt
        .trim_start_matches([' ', '('])
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().map_err(|_| bad("bad shape")))
        .collect::<Result<_>>()?;
    // A header's shape is untrusted: its product may overflow.
    let expected = shape
        .iter()
        .try_fold(size as usize, |a: usize, &n| a.checked_mul(n))
        .ok_or_else(|| bad(&format!("shape {shape:?} is too large to hold")))?;
    let body = &bytes[start + hlen..];
    if body.len() != expected {
        return Err(bad(&format!(
            "expected {expected} data bytes for shape {shape:?}, found {}",
            body.len()
        )));
    }
    let data = if size == 8 {
        body.chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect()
    } else {
        body.chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap_or([0; 4])) as f64)
            .collect()
    };
    Ok((shape, data))
}
