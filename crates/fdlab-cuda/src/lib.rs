//! The CUDA backend of fdlab: CUDA C generated from stencils ([`codegen`]), compiled at run time
//! with NVRTC, launched and timed through cudarc.
#![warn(missing_docs)]

pub mod codegen;
mod qmarch;
mod smarch;
mod strategy;
mod zmarch;

pub use strategy::{Coefficients, LoadPath, SmCopy, Strategy};
mod error;
pub mod nvrtc;

pub use error::{Error, Result};
mod device;

pub use device::{probe, CudaScalar, Device, DeviceInfo, Input, Kernel, Texture};
