//! What an fdtd case run writes besides the field pictures: one `.npy` time series per probe
//! and `probes.json`, which says what each series is; one `.npy` of spectra per DFT monitor and
//! `monitors.json`; one `.npy` of fluxes per flux plane and `flux.json`.

use crate::atomic;
use crate::case::Case;
use crate::error::Result;
use crate::fdtd::{flux, plane_axes, DftMonitor, FluxSpec, Grid};
use crate::output::write_npy;
use std::path::Path;

/// Write `probe_N.npy` (one f64 per step) for each probe and `probes.json` describing them.
///
/// Sample `s` of an electric component is at time `(s + 1)·dt`, of a magnetic one at
/// `(s + ½)·dt` (H lags E by half a step); `probes.json` gives each series' first time.
pub(crate) fn write_probes(
    case: &Case,
    dir: &Path,
    dt: f64,
    traces: &[Vec<f64>],
    monitors: &[DftMonitor],
) -> Result<()> {
    let (_, setup) = crate::case::fdtd::prepare(case)?;
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
    atomic::write(&path, text.as_bytes())?;
    // The flux planes' DFT planes follow the case's own monitors, two per flux plane.
    let own = setup.monitors.len().min(monitors.len());
    write_monitors(dir, dt, &setup.grid, &monitors[..own])?;
    write_fluxes(dir, dt, &setup.grid, &setup.fluxes, &monitors[own..])
}

/// Write `flux_N.npy` (one f64 per frequency) for each flux plane and `flux.json`.
fn write_fluxes(
    dir: &Path,
    dt: f64,
    grid: &Grid,
    fluxes: &[FluxSpec],
    planes: &[DftMonitor],
) -> Result<()> {
    if fluxes.is_empty() || planes.len() != 2 * fluxes.len() {
        return Ok(());
    }
    const AXES: [&str; 3] = ["x", "y", "z"];
    let mut list = Vec::new();
    for (i, spec) in fluxes.iter().enumerate() {
        let p = flux(grid, spec, &planes[2 * i], &planes[2 * i + 1]);
        let file = format!("flux_{i}.npy");
        write_npy(&dir.join(&file), &[p.len()], &p)?;
        list.push(serde_json::json!({
            "file": file,
            "axis": AXES[spec.axis],
            "index": spec.index,
            "position": spec.index as f64 * grid.spacing[spec.axis],
            "frequencies": spec.frequencies,
            "flux": p,
        }));
    }
    let json = serde_json::json!({
        "dt": dt,
        "flux": "P(f) = ½ Re Σ (E(f) × H(f)*)·n ΔA over the plane outside any CPML, n along +axis; \
                 E(f), H(f) are the running DFTs (see monitors.json); ratios of planes give \
                 reflectance and transmittance",
        "planes": list,
    });
    let path = dir.join("flux.json");
    let text = serde_json::to_string_pretty(&json).unwrap_or_default() + "\n";
    atomic::write(&path, text.as_bytes())
}

/// Write `monitor_N.npy`, shape `[frequencies, components, 2, n_a, n_b]` (re then im; the
/// in-plane axes as [`plane_axes`] orders them, the lower axis last), and `monitors.json`.
fn write_monitors(dir: &Path, dt: f64, grid: &Grid, monitors: &[DftMonitor]) -> Result<()> {
    if monitors.is_empty() {
        return Ok(());
    }
    const AXES: [&str; 3] = ["x", "y", "z"];
    let mut list = Vec::new();
    for (i, m) in monitors.iter().enumerate() {
        let (nf, nc) = (m.spec.frequencies.len(), m.spec.components.len());
        let np = m.shape[0] * m.shape[1];
        let mut data = Vec::with_capacity(2 * m.len());
        for block in 0..nf * nc {
            let r = block * np..(block + 1) * np;
            data.extend_from_slice(&m.re[r.clone()]);
            data.extend_from_slice(&m.im[r]);
        }
        let file = format!("monitor_{i}.npy");
        let shape = [nf, nc, 2, m.shape[0], m.shape[1]];
        write_npy(&dir.join(&file), &shape, &data)?;
        let [a, b] = plane_axes(m.spec.axis);
        list.push(serde_json::json!({
            "file": file,
            "shape": shape,
            "layout": ["frequency", "component", "re_im", AXES[a], AXES[b]],
            "axis": AXES[m.spec.axis],
            "index": m.spec.index,
            "position": m.spec.index as f64 * grid.spacing[m.spec.axis],
            "components": m.spec.components.iter()
                .map(|c| format!("{c:?}").to_lowercase()).collect::<Vec<_>>(),
            "frequencies": m.spec.frequencies,
        }));
    }
    let json = serde_json::json!({
        "dt": dt,
        "transform": "F(f) = sum over steps of field(t)·exp(−i2πf·t)·dt; E at t = n·dt, \
                      H at (n − ½)·dt",
        "monitors": list,
    });
    let path = dir.join("monitors.json");
    let text = serde_json::to_string_pretty(&json).unwrap_or_default() + "\n";
    atomic::write(&path, text.as_bytes())
}
