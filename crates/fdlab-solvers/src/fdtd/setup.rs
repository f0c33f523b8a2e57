//! A validated FDTD case as the steppers take it (the case reader in [`crate::case::fdtd`]
//! builds it from a case file; the library builds it directly).

use super::{
    Component, Debye, Drude, FluxSpec, Grid, Lorentz, MonitorSpec, PlaneWave, PointSource, Shape,
};

/// A validated material region.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellBox {
    /// The cells it fills.
    pub shape: Shape,
    /// A perfect conductor (its E components held at zero; the other properties unused).
    pub pec: bool,
    /// Relative permittivity.
    pub eps_r: f64,
    /// Conductivity.
    pub sigma: f64,
    /// Drude term, if dispersive.
    pub drude: Option<Drude>,
    /// Lorentz term, if dispersive (at most one of the three models is set).
    pub lorentz: Option<Lorentz>,
    /// Debye term, if dispersive.
    pub debye: Option<Debye>,
}

/// A validated fdtd case, ready for [`super::FdtdCpu::new`].
#[derive(Debug, Clone)]
pub struct FdtdSetup {
    /// The Yee grid.
    pub grid: Grid,
    /// Time step.
    pub dt: f64,
    /// Material boxes, applied in order.
    pub boxes: Vec<CellBox>,
    /// Soft sources.
    pub sources: Vec<PointSource>,
    /// Hard sources.
    pub hard_sources: Vec<PointSource>,
    /// Plane waves, checked against the grid and the boxes.
    pub plane_waves: Vec<PlaneWave>,
    /// Flux planes, checked against the run's duration.
    pub fluxes: Vec<FluxSpec>,
    /// Probes: component and cell.
    pub probes: Vec<(Component, [usize; 3])>,
    /// DFT monitors, checked against the run's duration.
    pub monitors: Vec<MonitorSpec>,
    /// The run's duration `steps·dt`, which the monitors were checked against.
    pub duration: f64,
    /// Component that [`crate::stepper::Stepper::field`] returns.
    pub plot: Component,
}
