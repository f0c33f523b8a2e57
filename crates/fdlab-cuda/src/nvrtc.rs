//! NVRTC: CUDA C → PTX at run time, with a clear error when the library is missing or the
//! source is wrong.

use crate::error::{Error, Result};
use cudarc::nvrtc::{CompileError, CompileOptions, Ptx};
use std::path::PathBuf;

/// Whether libnvrtc can be loaded (cudarc panics on first use otherwise, so ask first).
pub fn available() -> bool {
    // SAFETY: only tries to dlopen the library by its usual names.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// Where a source that failed to compile is written: the folder of
/// [`fdlab_core::config::dump_source_dir`] (`FDLAB_DUMP_SOURCE`) if set, else the system
/// temporary folder.
fn failure_path(name: &str) -> PathBuf {
    let dir = fdlab_core::config::dump_source_dir().unwrap_or_else(std::env::temp_dir);
    dir.join(format!("{name}.cu"))
}

/// Writes `source` to `<dir>/<name>.cu` when `FDLAB_DUMP_SOURCE` names a folder `dir`
/// ([`fdlab_core::config::dump_source_dir`]).
pub fn dump(name: &str, source: &str) {
    if let Some(dir) = fdlab_core::config::dump_source_dir() {
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(dir.join(format!("{name}.cu")), source);
    }
}

/// Compiles `source` (named `name` in errors) for `arch` (e.g. `sm_90`).
pub fn compile(name: &str, source: &str, arch: &'static str) -> Result<Ptx> {
    compile_with(name, source, arch, &[])
}

/// As [`compile`], with NVVM's optimizer off: the same front end and lowering to PTX, so
/// every error in generated CUDA C still shows. With a virtual `arch` (`compute_90`) NVRTC
/// also skips ptxas: 0.4 s against 4.7 s for `sm_90` with the optimizer on, on a module of
/// eight large unrolled kernels. For tests that check that generated code compiles; kernels
/// that run are compiled with [`compile`] or [`compile_cubin`].
pub fn compile_unoptimized(name: &str, source: &str, arch: &'static str) -> Result<Ptx> {
    compile_with(name, source, arch, &["-Xnvvm", "-opt=0"])
}

fn compile_with(name: &str, source: &str, arch: &'static str, extra: &[&str]) -> Result<Ptx> {
    if !available() {
        return Err(Error::NoNvrtc {
            reason: "libnvrtc could not be loaded".into(),
        });
    }
    dump(name, source);
    let mut options: Vec<String> = vec!["--std=c++17".into(), "-default-device".into()];
    options.extend(extra.iter().map(|o| o.to_string()));
    let opts = CompileOptions {
        arch: Some(arch),
        options,
        name: Some(format!("{name}.cu")),
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(source, opts).map_err(|e| {
        let log = match e {
            CompileError::CompileError { log, .. } => log.to_string_lossy().into_owned(),
            other => format!("{other:?}"),
        };
        compile_error(name, source, log)
    })
}

/// The error for a failed compile: the log, and the source written where the user can read it.
fn compile_error(name: &str, source: &str, log: String) -> Error {
    let path = failure_path(name);
    let _ = std::fs::create_dir_all(path.parent().unwrap_or(&PathBuf::from(".")));
    let written = std::fs::write(&path, source).is_ok();
    Error::Compile {
        name: name.to_string(),
        log,
        source_path: if written {
            path.display().to_string()
        } else {
            format!("(could not write {})", path.display())
        },
    }
}

/// Compiles `source` straight to machine code (CUBIN) for a real architecture (`sm_90`), so the
/// driver loads it without a JIT pass. NVRTC runs ptxas itself, so several modules compile in
/// parallel on several threads, where the driver's JIT of PTX would run serially at load.
pub fn compile_cubin(name: &str, source: &str, arch: &str) -> Result<Vec<u8>> {
    cubin_with_log(name, source, arch, false).map(|(bin, _)| bin)
}

/// ptxas's resource report for every kernel of `source` compiled for `arch` (registers,
/// spills, shared and constant memory): the first thing to read about a slow kernel, at no
/// device time.
///
/// ```no_run
/// let src = "extern \"C\" __global__ void k(float* a) { a[threadIdx.x] = 1.0f; }";
/// let report = fdlab_cuda::nvrtc::resource_report("k", src, "sm_90")?;
/// assert!(report.contains("registers"));
/// # Ok::<(), fdlab_cuda::Error>(())
/// ```
pub fn resource_report(name: &str, source: &str, arch: &str) -> Result<String> {
    cubin_with_log(name, source, arch, true).map(|(_, log)| log)
}

/// The CUBIN of `source` and, with `verbose`, ptxas's report from NVRTC's log.
fn cubin_with_log(
    name: &str,
    source: &str,
    arch: &str,
    verbose: bool,
) -> Result<(Vec<u8>, String)> {
    use cudarc::nvrtc::{result, sys};
    use std::ffi::{CStr, CString};
    if !available() {
        return Err(Error::NoNvrtc {
            reason: "libnvrtc could not be loaded".into(),
        });
    }
    dump(name, source);
    let fail = |log: String| compile_error(name, source, log);
    let c_src = CString::new(source).map_err(|_| fail("source contains a NUL byte".into()))?;
    let c_name = CString::new(format!("{name}.cu")).map_err(|_| fail("bad name".into()))?;
    let prog = result::create_program(&c_src, Some(&c_name))
        .map_err(|e| fail(format!("nvrtcCreateProgram: {e:?}")))?;
    let mut opts = vec![
        format!("--gpu-architecture={arch}"),
        "--std=c++17".to_string(),
        "-default-device".to_string(),
    ];
    if verbose {
        opts.push("--ptxas-options=-v".to_string());
    }
    // SAFETY: `prog` was just created and is destroyed once below; the buffers passed to
    // nvrtcGetCUBIN are sized by nvrtcGetCUBINSize.

    unsafe {
        let compiled = result::compile_program(prog, &opts);
        let r = match compiled {
            Err(e) => {
                let log = result::get_program_log(prog)
                    .map(|l| CStr::from_ptr(l.as_ptr()).to_string_lossy().into_owned())
                    .unwrap_or_else(|_| format!("{e:?}"));
                Err(fail(log))
            }
            Ok(()) => {
                let log = if verbose {
                    result::get_program_log(prog)
                        .map(|l| {
                            CStr::from_ptr(l.as_ptr())
                                .to_string_lossy()
                                .trim()
                                .to_string()
                        })
                        .unwrap_or_default()
                } else {
                    String::new()
                };
                let mut size = 0usize;
                let mut bin = Vec::new();
                let ok = sys::nvrtcGetCUBINSize(prog, &mut size).result().is_ok() && size > 0 && {
                    bin.resize(size, 0u8);
                    sys::nvrtcGetCUBIN(prog, bin.as_mut_ptr() as *mut std::ffi::c_char)
                        .result()
                        .is_ok()
                };
                if ok {
                    Ok((bin, log))
                } else {
                    Err(fail(format!("NVRTC produced no CUBIN for {arch}")))
                }
            }
        };
        let _ = result::destroy_program(prog);
        r
    }
}

/// NVRTC's version (major, minor), part of the kernel cache's key.
///
/// ```no_run
/// let (major, minor) = fdlab_cuda::nvrtc::version()?;
/// println!("NVRTC {major}.{minor}");
/// # Ok::<(), fdlab_cuda::Error>(())
/// ```
pub fn version() -> Result<(i32, i32)> {
    if !available() {
        return Err(Error::NoNvrtc {
            reason: "libnvrtc could not be loaded".into(),
        });
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the library is present (checked above); the call writes two ints.
    let r = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    if r != cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(Error::NoNvrtc {
            reason: format!("nvrtcVersion failed ({r:?})"),
        });
    }
    Ok((major, minor))
}
