//! What an fdtd case run writes besides the field pictures: one `.npy` time series per probe
//! and `probes.json`, which says what each series is.

use crate::case::Case;
use crate::error::io_err;
use crate::output::write_npy;
use crate::Result;
use std::path::Path;

/// Write `probe_N.npy` (one f64 per step) for each probe and `probes.json` describing them.
///
/// Sample `s` of an electric component is at time `(s + 1)·dt`, of a magnetic one at
/// `(s + ½)·dt` (H lags E by half a step); `probes.json` gives each series' first time.
pub(crate) fn write_probes(case: &Case, dir: &Path, dt: f64, traces: &[Vec<f64>]) -> Result<()> {
    let (_, setup) = super::case::prepare(case)?;
    let mut list = Vec::new();
    for (i, ((c, cell), tr)) in setup.probes.iter().zip(traces).enumerate() {
        let file = format!("probe_{i}.npy");
        write_npy(&dir.join(&file), &[tr.len()], tr)?;
        let t0 = if c.is_electric() { dt } else { 0.5 * dt };
        list.push(serde_json::json!({
            "file": file,
            "component": format!("{c:?}").to_lowercase(),
            "cell": cell,
            "position": setup.grid.position(*c, *cell),
            "samples": tr.len(),
            "t0": t0,
        }));
    }
    let json = serde_json::json!({ "dt": dt, "probes": list });
    let path = dir.join("probes.json");
    let text = serde_json::to_string_pretty(&json).unwrap_or_default() + "\n";
    std::fs::write(&path, text).map_err(io_err(&path))
}
