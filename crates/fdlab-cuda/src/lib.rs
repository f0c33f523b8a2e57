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

pub use device::{probe, CudaScalar, Device, DeviceInfo, Input, Kernel, L2Promotion, Texture};
mod any;
pub mod choose;
mod field;
pub mod kernel_cache;
pub mod memory;
mod plan;
mod selftest;
mod step;
mod stream;
pub mod tune_cache;

pub use any::{AnyField, AnyPlan};
pub use choose::Choice;
pub use field::{DeviceField, DeviceFieldView, DeviceFieldViewMut, FieldMeta};
pub use plan::{
    check_fields, check_foreign, check_weights, ForeignField, GraphPlan, Plan, PlanMeta,
    PlanOptions, PlanSpec, FOREIGN_CHECKS,
};
pub use selftest::{api_selftest, overhead, Check, Overhead, Reference};
pub use step::{step_selftest, StepProgram, StepReference};
pub use stream::{Event, Stream};
