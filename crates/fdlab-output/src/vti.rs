//! VTK files for ParaView: `.vti` images with binary data and the `.pvd` collection that
//! makes a time series of them.
//!
//! A `.vti` is VTK XML ImageData with one point array in `format="appended"` raw encoding:
//! the XML header, then `_`, a UInt64 byte count and the values, little-endian, as Float32 or
//! Float64 (the run's precision). Raw appended data is the most compact form ParaView and
//! VTK's readers accept, and is written without any conversion to text.

use crate::atomic;
use crate::error::{io_err, Error, Result};
use crate::npy::{write_values, Dtype};
use std::io::Write;
use std::path::Path;

/// Write an ImageData `.vti` of `n` points `spacing` apart (origin 0) with one point array
/// named `name` (x fastest), atomically.
pub fn write_vti(
    path: &Path,
    n: [usize; 3],
    spacing: [f64; 3],
    name: &str,
    data: &[f64],
    dtype: Dtype,
) -> Result<()> {
    let count: usize = n.iter().product();
    if count != data.len() || count == 0 {
        return Err(Error::Plot {
            path: path.to_path_buf(),
            detail: format!("{n:?} points need {count} values, given {}", data.len()),
        });
    }
    let ext = format!("0 {} 0 {} 0 {}", n[0] - 1, n[1] - 1, n[2] - 1);
    let vtk_type = match dtype {
        Dtype::F32 => "Float32",
        Dtype::F64 => "Float64",
    };
    let head = format!(
        "<?xml version=\"1.0\"?>\n\
         <VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\" \
         header_type=\"UInt64\">\n\
         \x20 <ImageData WholeExtent=\"{ext}\" Origin=\"0 0 0\" Spacing=\"{} {} {}\">\n\
         \x20   <Piece Extent=\"{ext}\">\n\
         \x20     <PointData Scalars=\"{name}\">\n\
         \x20       <DataArray type=\"{vtk_type}\" Name=\"{name}\" format=\"appended\" \
         offset=\"0\"/>\n\
         \x20     </PointData>\n\
         \x20   </Piece>\n\
         \x20 </ImageData>\n\
         \x20 <AppendedData encoding=\"raw\">\n_",
        spacing[0], spacing[1], spacing[2]
    );
    let bytes = (count * dtype.size()) as u64;
    atomic::write_with(path, |w| {
        w.write_all(head.as_bytes())?;
        w.write_all(&bytes.to_le_bytes())?;
        write_values(w, data, dtype)?;
        w.write_all(b"\n  </AppendedData>\n</VTKFile>\n")
    })
}

/// A `.vti` read back by [`read_vti`].
#[derive(Debug, Clone, PartialEq)]
pub struct Vti {
    /// Points along x, y, z.
    pub n: [usize; 3],
    /// Distance between points along x, y, z.
    pub spacing: [f64; 3],
    /// The point array's name.
    pub name: String,
    /// The element type it was stored as.
    pub dtype: Dtype,
    /// The values, x fastest.
    pub data: Vec<f64>,
}

/// Read a `.vti` that [`write_vti`] wrote (one point array, raw appended data, UInt64
/// header); other layouts are refused with a message that says what was found.
pub fn read_vti(path: &Path) -> Result<Vti> {
    let bytes = std::fs::read(path).map_err(io_err(path))?;
    let bad = |d: &str| Error::Plot {
        path: path.to_path_buf(),
        detail: d.to_string(),
    };
    let marker = b"<AppendedData encoding=\"raw\">";
    let at = bytes
        .windows(marker.len())
        .position(|w| w == marker)
        .ok_or_else(|| bad("no raw AppendedData"))?;
    let under = bytes[at..]
        .iter()
        .position(|&b| b == b'_')
        .map(|p| at + p + 1)
        .ok_or_else(|| bad("no '_' before the appended data"))?;
    let xml = std::str::from_utf8(&bytes[..at]).map_err(|_| bad("header is not text"))?;
    let attr = |tag: &str, key: &str| -> Option<String> {
        let t = xml.split(&format!("<{tag} ")).nth(1)?;
        let v = t.split(&format!("{key}=\"")).nth(1)?;
        Some(v.split('"').next()?.to_string())
    };
    if attr("VTKFile", "header_type").as_deref() != Some("UInt64") {
        return Err(bad("header_type is not UInt64"));
    }
    let ext: Vec<usize> = attr("ImageData", "WholeExtent")
        .ok_or_else(|| bad("no WholeExtent"))?
        .split_whitespace()
        .map(|s| s.parse().map_err(|_| bad("bad WholeExtent")))
        .collect::<Result<_>>()?;
    let sp: Vec<f64> = attr("ImageData", "Spacing")
        .ok_or_else(|| bad("no Spacing"))?
        .split_whitespace()
        .map(|s| s.parse().map_err(|_| bad("bad Spacing")))
        .collect::<Result<_>>()?;
    if ext.len() != 6 || sp.len() != 3 {
        return Err(bad("WholeExtent needs 6 numbers and Spacing 3"));
    }
    let n = [
        ext[1] - ext[0] + 1,
        ext[3] - ext[2] + 1,
        ext[5] - ext[4] + 1,
    ];
    let dtype = match attr("DataArray", "type").as_deref() {
        Some("Float32") => Dtype::F32,
        Some("Float64") => Dtype::F64,
        _ => return Err(bad("DataArray type is not Float32 or Float64")),
    };
    let name = attr("DataArray", "Name").unwrap_or_default();
    let len = bytes
        .get(under..under + 8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
        .ok_or_else(|| bad("truncated appended data"))? as usize;
    let count = n[0] * n[1] * n[2];
    if len != count * dtype.size() {
        return Err(bad(&format!(
            "{len} data bytes for {count} values of {} bytes",
            dtype.size()
        )));
    }
    let body = bytes
        .get(under + 8..under + 8 + len)
        .ok_or_else(|| bad("truncated appended data"))?;
    let data = match dtype {
        Dtype::F32 => body
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64)
            .collect(),
        Dtype::F64 => body
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect(),
    };
    Ok(Vti {
        n,
        spacing: [sp[0], sp[1], sp[2]],
        name,
        dtype,
        data,
    })
}

/// Write a ParaView collection (`.pvd`) listing `files` (relative to the collection's
/// directory) at their physical times, atomically, so that it never names a file only half
/// listed.
pub fn write_pvd(path: &Path, files: &[(f64, String)]) -> Result<()> {
    let mut text = String::from(
        "<?xml version=\"1.0\"?>\n\
         <VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n\
         \x20 <Collection>\n",
    );
    for (t, f) in files {
        // `{:e}` round-trips every f64, so ParaView's times are the run's exactly.
        text.push_str(&format!(
            "    <DataSet timestep=\"{t:e}\" group=\"\" part=\"0\" file=\"{f}\"/>\n"
        ));
    }
    text.push_str("  </Collection>\n</VTKFile>\n");
    atomic::write(path, text.as_bytes())
}

/// The `(timestep, file)` entries of a `.pvd` that [`write_pvd`] wrote; none when it does
/// not exist.
pub fn read_pvd(path: &Path) -> Result<Vec<(f64, String)>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(io_err(path)(e)),
    };
    let field = |s: &str, key: &str| -> Option<String> {
        Some(
            s.split(&format!("{key}=\""))
                .nth(1)?
                .split('"')
                .next()?
                .to_string(),
        )
    };
    Ok(text
        .split("<DataSet ")
        .skip(1)
        .filter_map(|d| Some((field(d, "timestep")?.parse().ok()?, field(d, "file")?)))
        .collect())
}
