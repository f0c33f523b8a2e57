//! Reading `[geometry]` files: source and receiver positions from `.npy` arrays or `.csv`
//! tables, and per-shot wavelets. Every position is checked here (finite, inside the grid,
//! room for its interpolation), so that a bad row is refused before any work, naming it.

use super::Case;
use crate::error::{Error, Result};
use crate::output::read_npy;
use std::path::Path;

/// Positions read from a geometry file.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Positions {
    /// The same positions for every shot.
    Shared(Vec<Vec<f64>>),
    /// Per shot, its positions.
    PerShot(Vec<Vec<Vec<f64>>>),
}

/// The positions in `file` (relative to the case) for `key`: per shot for sources (a shape
/// `[shots, dim]` or a table without a `shot` column gives one source a shot), shared or per
/// shot for receivers.
pub(super) fn read_positions(
    case: &Case,
    key: &str,
    file: &Path,
    sources: bool,
) -> Result<Positions> {
    let path = case.resolve(file);
    let refuse = |detail: String| Error::Geometry {
        path: path.clone(),
        key: key.into(),
        detail,
    };
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let positions = match ext.as_str() {
        "npy" => from_npy(case, &path, sources).map_err(refuse)?,
        "csv" => from_csv(case, &path, sources).map_err(refuse)?,
        _ => {
            return Err(refuse(
                "give an .npy array or a .csv table of positions (the file's extension says \
                 which)"
                    .into(),
            ))
        }
    };
    let rows: Vec<(String, &Vec<f64>)> = match &positions {
        Positions::Shared(v) => v
            .iter()
            .enumerate()
            .map(|(i, x)| (format!("position {i}"), x))
            .collect(),
        Positions::PerShot(v) => v
            .iter()
            .enumerate()
            .flat_map(|(s, at)| {
                at.iter()
                    .enumerate()
                    .map(move |(i, x)| (format!("shot {s}, position {i}"), x))
            })
            .collect(),
    };
    if rows.is_empty() {
        return Err(refuse("holds no positions".into()));
    }
    for (what, x) in rows {
        check(case, x).map_err(|why| refuse(format!("{what}: {x:?} {why}")))?;
    }
    Ok(positions)
}

/// Why position `x` (with the grid's number of coordinates) cannot be used, if it cannot.
fn check(case: &Case, x: &[f64]) -> std::result::Result<(), String> {
    let dim = case.dim();
    if x.iter().any(|v| !v.is_finite()) {
        return Err("is not finite: every coordinate must be a number".into());
    }
    if case.nearest(x).is_none() {
        return Err(format!(
            "is outside the grid: each coordinate must lie within 0 ..= (n − 1) · spacing of \
             its axis ({:?} in the grid's length unit)",
            (0..dim)
                .map(|a| (case.spec.grid.shape[a] - 1) as f64 * case.spec.grid.spacing[a])
                .collect::<Vec<_>>()
        ));
    }
    if case.spread(x).is_none() {
        return Err(format!(
            "is between grid points too close to a wall for its interpolation over {} points \
             per axis: move it onto a grid point or further in",
            2 * crate::hicks::HALF_WIDTH
        ));
    }
    Ok(())
}

/// Positions from an `.npy` array whose last axis is the grid's dimension.
fn from_npy(case: &Case, path: &Path, sources: bool) -> std::result::Result<Positions, String> {
    let dim = case.dim();
    let (shape, data) = read_npy(path).map_err(|e| match Error::from(e) {
        Error::Io { source, .. } => format!("cannot read: {source}"),
        Error::Npy { detail, .. } => detail,
        e => e.to_string(),
    })?;
    let expected = if sources {
        format!("[shots, {dim}] (one source a shot) or [shots, sources, {dim}]")
    } else {
        format!("[receivers, {dim}] (every shot's) or [shots, receivers, {dim}]")
    };
    let wrong = || format!("shape {shape:?}: give {expected}, positions in the grid's length unit");
    if shape.last() != Some(&dim) || shape.contains(&0) {
        return Err(wrong());
    }
    let points: Vec<Vec<f64>> = data.chunks_exact(dim).map(<[f64]>::to_vec).collect();
    match (shape.len(), sources) {
        (2, true) => Ok(Positions::PerShot(
            points.into_iter().map(|p| vec![p]).collect(),
        )),
        (2, false) => Ok(Positions::Shared(points)),
        (3, _) => Ok(Positions::PerShot(
            points.chunks(shape[1]).map(<[Vec<f64>]>::to_vec).collect(),
        )),
        _ => Err(wrong()),
    }
}

/// Positions from a `.csv` table with a header row: columns `x`, `y` (and `z` in 3-D), and
/// optionally `shot` (0, 1, …: rows of one shot together form its positions).
fn from_csv(case: &Case, path: &Path, sources: bool) -> std::result::Result<Positions, String> {
    let dim = case.dim();
    let axes = &["x", "y", "z"][..dim];
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .from_path(path)
        .map_err(|e| format!("cannot read: {e}"))?;
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| format!("cannot read its header: {e}"))?
        .iter()
        .map(str::to_lowercase)
        .collect();
    let want = format!(
        "a header row naming the columns {}, and optionally shot",
        axes.join(", ")
    );
    if let Some(c) = header
        .iter()
        .find(|c| !axes.contains(&c.as_str()) && c.as_str() != "shot")
    {
        return Err(format!(
            "column {c:?} is not one of a {dim}-D table's: give {want}"
        ));
    }
    let col = |name: &str| header.iter().position(|c| c == name);
    let Some(cols) = axes.iter().map(|a| col(a)).collect::<Option<Vec<usize>>>() else {
        return Err(format!("header {header:?}: give {want}"));
    };
    let shot_col = col("shot");
    let mut rows: Vec<(Option<usize>, Vec<f64>)> = vec![];
    for (i, record) in reader.records().enumerate() {
        let line = i + 2;
        let record = record.map_err(|e| format!("line {line}: {e}"))?;
        let field = |c: usize| record.get(c).unwrap_or("");
        let mut x = vec![];
        for (&c, a) in cols.iter().zip(axes) {
            let v: f64 = field(c)
                .parse()
                .map_err(|_| format!("line {line}: {a} = {:?} is not a number", field(c)))?;
            x.push(v);
        }
        let shot = match shot_col {
            Some(c) => Some(field(c).parse::<usize>().map_err(|_| {
                format!(
                    "line {line}: shot = {:?}: give the shot's number, 0, 1, …",
                    field(c)
                )
            })?),
            None => None,
        };
        rows.push((shot, x));
    }
    if shot_col.is_none() {
        let points = rows.into_iter().map(|(_, x)| x).collect::<Vec<_>>();
        return Ok(if sources {
            Positions::PerShot(points.into_iter().map(|p| vec![p]).collect())
        } else {
            Positions::Shared(points)
        });
    }
    let shots = rows.iter().filter_map(|r| r.0).max().map_or(0, |m| m + 1);
    let mut per: Vec<Vec<Vec<f64>>> = vec![vec![]; shots];
    for (s, x) in rows {
        per[s.unwrap_or(0)].push(x);
    }
    if let Some(s) = per.iter().position(Vec::is_empty) {
        return Err(format!(
            "shot {s} has no rows: number the shots 0 to {} without gaps",
            shots - 1
        ));
    }
    Ok(Positions::PerShot(per))
}

/// Check the `[geometry] wavelet` file for `shots` shots: whether it holds one row per shot
/// (shape `[shots, steps]`) rather than one wavelet for all (`[steps]`). The samples
/// themselves are checked when each shot is prepared.
pub(super) fn wavelet_rows(case: &Case, file: &Path, shots: usize) -> Result<bool> {
    let path = case.resolve(file);
    let refuse = |detail: String| Error::Geometry {
        path: path.clone(),
        key: "geometry.wavelet".into(),
        detail,
    };
    let (shape, _) = read_npy(&path).map_err(|e| match Error::from(e) {
        Error::Io { source, .. } => refuse(format!("cannot read: {source}")),
        Error::Npy { detail, .. } => refuse(detail),
        e => e,
    })?;
    match shape.as_slice() {
        [n] if *n > 0 => Ok(false),
        [s, n] if *s == shots && *n > 0 => Ok(true),
        _ => Err(refuse(format!(
            "shape {shape:?}: give [steps] (every shot's wavelet) or [{shots}, steps] (one row \
             per shot), one sample per time step"
        ))),
    }
}
