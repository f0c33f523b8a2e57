//! The CUDA backend of fdlab: CUDA C generated from stencils ([`codegen`]), compiled at run time
//! with NVRTC, launched and timed through cudarc.
#![warn(missing_docs)]

pub mod codegen;
mod strategy;

pub use strategy::{
    families, strategies_help, Coefficients, FamilyDoc, LoadPath, OptionDoc, OptionRange,
    OptionSyntax, SmCopy, Strategy, StrategyError,
};
mod error;
pub mod nvrtc;

pub use error::{Error, Result};
mod device;

pub use device::{probe, CudaScalar, Device, DeviceInfo, Input, Kernel, Texture};
