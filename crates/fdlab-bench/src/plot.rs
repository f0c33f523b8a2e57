//! The roofline chart: measured points against the copy-bandwidth and arithmetic ceilings.

use crate::report::Report;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// Registers the embedded font as "sans-serif" (once).
fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// Draws `report` as a log-log roofline (GFLOP/s against FLOP/byte) into a PNG at `path`.
/// Only the fastest strategy of each case is drawn, labelled, so the chart stays readable.
pub fn roofline_png(report: &Report, path: &Path) -> Result<(), String> {
    register_font();
    let m = &report.meta;
    let bw = m.copy_gbps; // GB/s
    let mut best: BTreeMap<String, &crate::BenchResult> = BTreeMap::new();
    for r in &report.results {
        if r.time_ms.median <= 0.0 || r.bytes == 0 || r.flops == 0 {
            continue;
        }
        let k = format!(
            "{} {} {} {}",
            r.case,
            r.precision,
            r.shape
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join("x"),
            if r.latency_bound { "(latency)" } else { "" }
        );
        let better = best.get(&k).is_none_or(|b| r.gbps > b.gbps);
        if better {
            best.insert(k, r);
        }
    }
    if best.is_empty() {
        return Err("no results to plot".into());
    }
    let peak = m.peak_gflops_f32.max(m.peak_gflops_f64).max(1.0);
    let (x0, x1) = (0.05f64, 100.0f64);
    let (y0, y1) = (bw * x0 * 0.2, peak * 3.0);
    let root = BitMapBackend::new(path, (1400, 900)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let title = format!(
        "fdlab roofline: {} ({}), copy {:.0} GB/s",
        m.device, m.backend, m.copy_gbps
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 26))
        .margin(20)
        .x_label_area_size(55)
        .y_label_area_size(90)
        .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc("arithmetic intensity (FLOP per byte moved, minimum bytes)")
        .y_desc("performance (GFLOP/s)")
        .axis_desc_style(("sans-serif", 20))
        .label_style(("sans-serif", 16))
        .draw()
        .map_err(|e| e.to_string())?;
    // Copy-bandwidth ceiling: y = BW · AI.
    let pts: Vec<(f64, f64)> = (0..=100)
        .map(|i| {
            let x = x0 * (x1 / x0).powf(i as f64 / 100.0);
            (x, (bw * x).min(peak))
        })
        .collect();
    chart
        .draw_series(LineSeries::new(pts, BLUE.stroke_width(3)))
        .map_err(|e| e.to_string())?
        .label(if m.backend == "cpu" {
            // The CPU reference is a parallel copy with non-temporal stores, the most this
            // memory moved in the run.
            format!("streaming-store copy {bw:.0} GB/s")
        } else {
            format!("device copy (cuMemcpyDtoD) {bw:.0} GB/s")
        })
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(3)));
    for (p, colour, name) in [
        (m.peak_gflops_f32, RED, "f32"),
        (m.peak_gflops_f64, MAGENTA, "f64"),
    ] {
        if p > 0.0 {
            chart
                .draw_series(LineSeries::new(
                    vec![(p / bw, p), (x1, p)],
                    colour.stroke_width(2),
                ))
                .map_err(|e| e.to_string())?
                .label(format!(
                    "{name} arithmetic peak {:.0} GFLOP/s (ridge {:.1} FLOP/B)",
                    p,
                    p / bw
                ))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
                });
        }
    }
    for (i, (label, r)) in best.iter().enumerate() {
        let x = r.arithmetic_intensity;
        let y = r.flops as f64 / (r.time_ms.median * 1e-3) / 1e9;
        let colour = Palette99::pick(i).to_rgba();
        let text = format!("{label} {} {:.0}%", r.strategy, r.pct_of_copy);
        chart
            .draw_series(std::iter::once(Circle::new((x, y), 6, colour.filled())))
            .map_err(|e| e.to_string())?
            .label(text)
            .legend(move |(x, y)| Circle::new((x + 10, y), 5, colour.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())?;
    Ok(())
}
