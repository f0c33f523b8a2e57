//! Physics written as step descriptions. Each function returns a [`super::StepDescription`]
//! that any executor runs; nothing here knows a device.

mod acoustic_layers;
mod acoustic_vd;
mod acoustic_vd_layers;
mod leapfrog;
pub mod yee;

pub use acoustic_layers::{acoustic_layers, Layers};
pub use acoustic_vd::{acoustic_vd, acoustic_vd_with, AcousticVd};
pub use acoustic_vd_layers::{acoustic_vd_layers, AcousticVdSpec};
pub use leapfrog::{acoustic, heat, DtKappa, Leapfrog};
pub use yee::{yee, Side, Yee};
