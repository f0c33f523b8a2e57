//! Charts of bench results: the roofline (measured points against the copy-bandwidth and
//! arithmetic ceilings) and the temporal-blocking suite (% of the copy against steps per pass).

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

/// Draws the legend of `chart` at `position` and writes the picture `root` holds: the last
/// step of every chart here.
fn legend_and_save<'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, BitMapBackend<'a>, CT>,
    root: &DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>,
    position: SeriesLabelPosition,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
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
    legend_and_save(&mut chart, &root, SeriesLabelPosition::LowerRight)
}

/// Draws the temporal-blocking rows of `report` (`fdlab bench --suite temporal`) into a PNG at
/// `path`: T_eff per step as % of the copy against the steps fused per pass, one line per case
/// and precision through the model's shape for each `k`, the device's default shape as a
/// larger marker, and the 100% line a single step cannot cross.
pub fn temporal_png(report: &Report, path: &Path) -> Result<(), String> {
    register_font();
    let rows: Vec<&crate::solvers::SolverResult> = report
        .solvers
        .iter()
        .filter(|r| r.suite == "temporal" && r.time_ms.median > 0.0)
        .collect();
    if rows.is_empty() {
        return Err("no temporal-suite rows to plot (from `fdlab bench --suite temporal`)".into());
    }
    let k_of = |r: &crate::solvers::SolverResult| r.steps_per_pass.unwrap_or(1) as f64;
    let k_max = rows.iter().map(|r| k_of(r)).fold(1.0, f64::max);
    let y_max = rows.iter().map(|r| r.pct_of_copy).fold(100.0, f64::max) * 1.1;
    let m = &report.meta;
    let root = BitMapBackend::new(path, (1200, 800)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let title = format!(
        "fdlab temporal blocking: {}, copy {:.0} GB/s",
        m.device, m.copy_gbps
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 26))
        .margin(20)
        .x_label_area_size(55)
        .y_label_area_size(80)
        .build_cartesian_2d(0.5..k_max + 0.5, 0.0..y_max)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc("time steps per pass over the grid (k)")
        .y_desc("T_eff per step, % of the copy bandwidth")
        .axis_desc_style(("sans-serif", 20))
        .label_style(("sans-serif", 16))
        .x_labels(k_max as usize + 1)
        .x_label_formatter(&|k| format!("{}", k.round() as i64))
        .y_label_formatter(&|y| format!("{y:.0}%"))
        .draw()
        .map_err(|e| e.to_string())?;
    chart
        .draw_series(LineSeries::new(
            vec![(0.5, 100.0), (k_max + 0.5, 100.0)],
            BLACK.stroke_width(2),
        ))
        .map_err(|e| e.to_string())?
        .label("the copy: the most a single step can reach")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2)));
    // One series per case and precision, in the order the suite ran them.
    let mut keys: Vec<(String, String)> = vec![];
    for r in &rows {
        let key = (r.case.clone(), r.precision.clone());
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    for (i, (case, precision)) in keys.iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        let of_key =
            |r: &&&crate::solvers::SolverResult| &r.case == case && &r.precision == precision;
        let mut line: Vec<(f64, f64)> = rows
            .iter()
            .filter(of_key)
            .filter(|r| r.as_shipped != Some(true))
            .map(|r| (k_of(r), r.pct_of_copy))
            .collect();
        line.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart
            .draw_series(LineSeries::new(line.clone(), colour.stroke_width(2)))
            .map_err(|e| e.to_string())?
            .label(format!("{case} {precision}: the model's shape for each k"))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
        chart
            .draw_series(line.iter().map(|&p| Circle::new(p, 4, colour.filled())))
            .map_err(|e| e.to_string())?;
        for r in rows
            .iter()
            .filter(of_key)
            .filter(|r| r.as_shipped == Some(true))
        {
            let p = (k_of(r), r.pct_of_copy);
            chart
                .draw_series(std::iter::once(TriangleMarker::new(p, 11, colour.filled())))
                .map_err(|e| e.to_string())?
                .label(format!(
                    "{case} {precision}: the default shape, {:.0}%",
                    r.pct_of_copy
                ))
                .legend(move |(x, y)| TriangleMarker::new((x + 10, y), 7, colour.filled()));
        }
    }
    legend_and_save(&mut chart, &root, SeriesLabelPosition::UpperLeft)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_without_temporal_rows_is_refused_before_drawing() {
        let dir = std::env::temp_dir().join(format!("fdlab-plot-{}", std::process::id()));
        let path = dir.join("never.png");
        let e = temporal_png(&Report::default(), &path).unwrap_err();
        assert!(e.contains("no temporal-suite rows"), "{e}");
        assert!(!path.exists());
    }
}
