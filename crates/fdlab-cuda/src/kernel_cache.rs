//! Compiled modules cached on disk, so that a plan built again skips NVRTC.
//!
//! An entry is one file named after its key: a header (magic, format version, key, payload
//! length, payload checksum) and the CUBIN. The key hashes everything the machine code depends
//! on: the module source, the NVRTC version, the architecture and the fdlab version. An entry
//! that is short, corrupt or written for another key is ignored and rebuilt, never loaded.
//! Writes go to a temporary file renamed into place, so a reader never sees half an entry.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The first bytes of every entry.
pub const MAGIC: [u8; 8] = *b"FDLABKC\0";
/// The entry layout's version; bumped when the layout changes.
pub const FORMAT: u32 = 1;
/// Header bytes: magic, format, key, payload length, payload checksum.
pub const HEADER_LEN: usize = 8 + 4 + 16 + 8 + 8;

/// What a cached module depends on, hashed to 128 bits.
///
/// ```
/// use fdlab_cuda::kernel_cache::Key;
/// let a = Key::new("__global__ void k() {}", (13, 0), "sm_90");
/// assert_eq!(a, Key::new("__global__ void k() {}", (13, 0), "sm_90"));
/// assert_ne!(a, Key::new("__global__ void k() {}", (13, 0), "sm_100"));
/// assert_eq!(a.file_name().len(), 32 + ".cubin".len());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key(pub u128);

impl Key {
    /// The key of `source` compiled by NVRTC `nvrtc` (major, minor) for `arch`, by this fdlab.
    pub fn new(source: &str, nvrtc: (i32, i32), arch: &str) -> Key {
        let text = format!(
            "fdlab {}\nnvrtc {}.{}\narch {arch}\n{source}",
            env!("CARGO_PKG_VERSION"),
            nvrtc.0,
            nvrtc.1
        );
        Key(fnv1a_128(text.as_bytes()))
    }

    /// The entry's file name: the key in hex, `.cubin`.
    ///
    /// ```
    /// use fdlab_cuda::kernel_cache::Key;
    /// assert_eq!(Key(255).file_name(), format!("{:0>32}.cubin", "ff"));
    /// ```
    pub fn file_name(&self) -> String {
        format!("{:032x}.cubin", self.0)
    }
}

/// 128-bit FNV-1a: stable across Rust versions and platforms (std's hasher is not).
fn fnv1a_128(bytes: &[u8]) -> u128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013b;
    bytes
        .iter()
        .fold(OFFSET, |h, &b| (h ^ b as u128).wrapping_mul(PRIME))
}

/// 64-bit FNV-1a of a payload: catches truncation and bit rot.
fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}

/// Why an entry was not used.
///
/// ```
/// use fdlab_cuda::kernel_cache::{decode, Key, Reject};
/// assert_eq!(decode(b"short", Key(1)), Err(Reject::Short));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reject {
    /// Shorter than its header or than the payload it announces.
    Short,
    /// Not an fdlab kernel-cache entry.
    Magic,
    /// Written by another layout version.
    Format,
    /// Written for another key (a renamed or copied file).
    Foreign,
    /// The payload does not match its checksum, or trailing bytes follow it.
    Corrupt,
}

/// An entry's bytes for `key` and `payload`.
///
/// ```
/// use fdlab_cuda::kernel_cache::{decode, encode, Key};
/// let k = Key(7);
/// assert_eq!(decode(&encode(k, b"cubin"), k).unwrap(), b"cubin");
/// ```
pub fn encode(key: Key, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&key.0.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&checksum(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// The payload of an entry read back, if it is whole and was written for `key`.
///
/// ```
/// use fdlab_cuda::kernel_cache::{decode, encode, Key, Reject};
/// let mut e = encode(Key(1), b"cubin");
/// assert_eq!(decode(&e, Key(2)), Err(Reject::Foreign));
/// *e.last_mut().unwrap() ^= 1;
/// assert_eq!(decode(&e, Key(1)), Err(Reject::Corrupt));
/// ```
pub fn decode(bytes: &[u8], key: Key) -> Result<&[u8], Reject> {
    if bytes.len() < HEADER_LEN {
        return Err(Reject::Short);
    }
    let (head, payload) = bytes.split_at(HEADER_LEN);
    let u64_at = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&head[i..i + 8]);
        u64::from_le_bytes(b)
    };
    if head[..8] != MAGIC {
        return Err(Reject::Magic);
    }
    let mut f = [0u8; 4];
    f.copy_from_slice(&head[8..12]);
    if u32::from_le_bytes(f) != FORMAT {
        return Err(Reject::Format);
    }
    let mut k = [0u8; 16];
    k.copy_from_slice(&head[12..28]);
    if u128::from_le_bytes(k) != key.0 {
        return Err(Reject::Foreign);
    }
    let len = u64_at(28);
    if (payload.len() as u64) < len {
        return Err(Reject::Short);
    }
    if payload.len() as u64 != len || checksum(payload) != u64_at(36) {
        return Err(Reject::Corrupt);
    }
    Ok(payload)
}

/// The cache folder: `$FDLAB_KERNEL_CACHE` (empty or `off` turns the cache off), else
/// `$XDG_CACHE_HOME/fdlab/kernels`, else `$HOME/.cache/fdlab/kernels`
/// ([`fdlab_core::config::kernel_cache_dir`]).
///
/// ```
/// if let Some(dir) = fdlab_cuda::kernel_cache::default_dir() {
///     println!("kernels are cached in {}", dir.display());
/// }
/// ```
pub fn default_dir() -> Option<PathBuf> {
    fdlab_core::config::kernel_cache_dir()
}

/// [`default_dir`] from the three variables' values, apart from the environment for tests.
///
/// ```
/// use fdlab_cuda::kernel_cache::resolve_dir;
/// use std::path::PathBuf;
/// let home = Some(PathBuf::from("/home/u"));
/// assert_eq!(resolve_dir(None, None, home.clone()), Some("/home/u/.cache/fdlab/kernels".into()));
/// assert_eq!(resolve_dir(Some("off".into()), None, home), None);
/// ```
pub fn resolve_dir(
    explicit: Option<PathBuf>,
    xdg: Option<PathBuf>,
    home: Option<PathBuf>,
) -> Option<PathBuf> {
    fdlab_core::config::resolve_cache(explicit, xdg, home, "kernels")
}

/// What a [`KernelCache::load`] found.
///
/// ```
/// use fdlab_cuda::kernel_cache::{Key, KernelCache, Lookup};
/// assert_eq!(KernelCache::off().load(Key(2)), Lookup::Miss);
/// ```
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup {
    /// A whole entry for the key.
    Hit(Vec<u8>),
    /// No entry.
    Miss,
    /// An entry that was not used, and why; it is overwritten by the next store.
    Rejected(Reject),
}

/// A folder of compiled modules.
///
/// ```
/// use fdlab_cuda::kernel_cache::{Key, KernelCache, Lookup};
/// let dir = std::env::temp_dir().join(format!("fdlab-kc-doc-{}", std::process::id()));
/// let cache = KernelCache::at(&dir);
/// cache.store(Key(3), b"machine code");
/// assert_eq!(cache.load(Key(3)), Lookup::Hit(b"machine code".to_vec()));
/// assert_eq!(cache.load(Key(4)), Lookup::Miss);
/// # std::fs::remove_dir_all(&dir).ok();
/// ```
#[derive(Debug, Clone)]
pub struct KernelCache {
    dir: Option<PathBuf>,
}

/// Set once a cache failure has been reported, so it is reported once per process.
static WARNED: AtomicBool = AtomicBool::new(false);

fn warn_once(what: &str, path: &Path, e: &std::io::Error) {
    if !WARNED.swap(true, Ordering::Relaxed) {
        eprintln!(
            "fdlab: kernel cache {what} {} failed ({e}); compiling without it \
             (set FDLAB_KERNEL_CACHE to a writable folder, or to `off`)",
            path.display()
        );
    }
}

impl KernelCache {
    /// The cache in [`default_dir`] (or none, when that is off or unknown).
    ///
    /// ```
    /// let cache = fdlab_cuda::kernel_cache::KernelCache::from_env();
    /// println!("{:?}", cache.dir());
    /// ```
    pub fn from_env() -> KernelCache {
        KernelCache { dir: default_dir() }
    }

    /// The cache in `dir`.
    ///
    /// ```
    /// use fdlab_cuda::kernel_cache::KernelCache;
    /// assert_eq!(KernelCache::at("/tmp/k").dir(), Some(std::path::Path::new("/tmp/k")));
    /// ```
    pub fn at(dir: impl Into<PathBuf>) -> KernelCache {
        KernelCache {
            dir: Some(dir.into()),
        }
    }

    /// No cache: every lookup misses, every store is dropped.
    ///
    /// ```
    /// use fdlab_cuda::kernel_cache::{Key, KernelCache, Lookup};
    /// assert_eq!(KernelCache::off().load(Key(1)), Lookup::Miss);
    /// ```
    pub fn off() -> KernelCache {
        KernelCache { dir: None }
    }

    /// The folder, when the cache is on.
    ///
    /// ```
    /// assert!(fdlab_cuda::kernel_cache::KernelCache::off().dir().is_none());
    /// ```
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The entry for `key`, if there is a whole one.
    ///
    /// ```
    /// use fdlab_cuda::kernel_cache::{Key, KernelCache, Lookup};
    /// let cache = KernelCache::at(std::env::temp_dir().join("fdlab-kc-doc-load"));
    /// assert_eq!(cache.load(Key(0xdead)), Lookup::Miss);
    /// ```
    pub fn load(&self, key: Key) -> Lookup {
        let Some(dir) = &self.dir else {
            return Lookup::Miss;
        };
        let path = dir.join(key.file_name());
        match std::fs::read(&path) {
            Ok(bytes) => match decode(&bytes, key) {
                Ok(payload) => Lookup::Hit(payload.to_vec()),
                Err(r) => Lookup::Rejected(r),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Lookup::Miss,
            Err(e) => {
                warn_once("read of", &path, &e);
                Lookup::Miss
            }
        }
    }

    /// Writes the entry for `key` (atomically: a temporary file renamed into place). Failures
    /// are reported once and otherwise ignored: the cache only saves time.
    ///
    /// ```
    /// use fdlab_cuda::kernel_cache::{Key, KernelCache, Lookup};
    /// let dir = std::env::temp_dir().join(format!("fdlab-kc-doc-store-{}", std::process::id()));
    /// let cache = KernelCache::at(&dir);
    /// cache.store(Key(9), b"bytes");
    /// assert_eq!(cache.load(Key(9)), Lookup::Hit(b"bytes".to_vec()));
    /// # std::fs::remove_dir_all(&dir).ok();
    /// ```
    pub fn store(&self, key: Key, payload: &[u8]) {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let Some(dir) = &self.dir else {
            return;
        };
        if let Err(e) = std::fs::create_dir_all(dir) {
            warn_once("folder", dir, &e);
            return;
        }
        let path = dir.join(key.file_name());
        let tmp = dir.join(format!(
            ".{}.{}.{}.tmp",
            key.file_name(),
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let written =
            std::fs::write(&tmp, encode(key, payload)).and_then(|()| std::fs::rename(&tmp, &path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            warn_once("write of", &path, &e);
        }
    }

    /// The entry for `key`, or `compile()`'s result, stored for next time. Returns the bytes
    /// and whether they came from the cache.
    ///
    /// ```
    /// use fdlab_cuda::kernel_cache::{Key, KernelCache};
    /// let cache = KernelCache::off();
    /// let (bytes, cached) = cache.get_or_compile(Key(1), || Ok::<_, ()>(vec![1, 2, 3])).unwrap();
    /// assert_eq!((bytes, cached), (vec![1, 2, 3], false));
    /// ```
    pub fn get_or_compile<E>(
        &self,
        key: Key,
        compile: impl FnOnce() -> Result<Vec<u8>, E>,
    ) -> Result<(Vec<u8>, bool), E> {
        if let Lookup::Hit(bytes) = self.load(key) {
            return Ok((bytes, true));
        }
        let bytes = compile()?;
        self.store(key, &bytes);
        Ok((bytes, false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fdlab-kc-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn keys_change_with_every_input() {
        let base = Key::new("src", (13, 0), "sm_90");
        assert_ne!(base, Key::new("src ", (13, 0), "sm_90"));
        assert_ne!(base, Key::new("src", (13, 1), "sm_90"));
        assert_ne!(base, Key::new("src", (12, 0), "sm_90"));
        assert_ne!(base, Key::new("src", (13, 0), "sm_89"));
        assert_eq!(base, Key::new("src", (13, 0), "sm_90"));
    }

    #[test]
    fn every_damaged_entry_is_rejected() {
        let k = Key(0xfeed);
        let payload: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        let good = encode(k, &payload);
        assert_eq!(decode(&good, k), Ok(&payload[..]));
        // Every truncation, including inside the header.
        for cut in 0..good.len() {
            let r = decode(&good[..cut], k);
            assert!(matches!(r, Err(Reject::Short)), "cut {cut}: {r:?}");
        }
        // A flipped bit anywhere is caught.
        for i in (0..good.len()).step_by(7) {
            let mut bad = good.clone();
            bad[i] ^= 0x10;
            assert!(decode(&bad, k).is_err(), "byte {i} flipped and accepted");
        }
        let mut long = good.clone();
        long.push(0);
        assert_eq!(decode(&long, k), Err(Reject::Corrupt));
        assert_eq!(decode(&good, Key(1)), Err(Reject::Foreign));
        let mut fmt = good.clone();
        fmt[8] = 99;
        assert_eq!(decode(&fmt, k), Err(Reject::Format));
        assert_eq!(decode(&[0u8; 100], k), Err(Reject::Magic));
    }

    #[test]
    fn corrupt_and_foreign_files_are_rebuilt() {
        let dir = temp("rebuild");
        let cache = KernelCache::at(&dir);
        let k = Key(42);
        let path = dir.join(k.file_name());
        std::fs::create_dir_all(&dir).unwrap();
        // Foreign: another key's entry under this key's name.
        std::fs::write(&path, encode(Key(43), b"other")).unwrap();
        assert_eq!(cache.load(k), Lookup::Rejected(Reject::Foreign));
        let mut compiled = 0;
        let (bytes, hit) = cache
            .get_or_compile(k, || {
                compiled += 1;
                Ok::<_, ()>(b"fresh".to_vec())
            })
            .unwrap();
        assert_eq!((bytes.as_slice(), hit, compiled), (&b"fresh"[..], false, 1));
        assert_eq!(cache.load(k), Lookup::Hit(b"fresh".to_vec()));
        // Garbage.
        std::fs::write(
            &path,
            b"not an entry at all, but long enough to hold a header.",
        )
        .unwrap();
        assert_eq!(cache.load(k), Lookup::Rejected(Reject::Magic));
        let (bytes, hit) = cache
            .get_or_compile(k, || Ok::<_, ()>(b"again".to_vec()))
            .unwrap();
        assert_eq!((bytes.as_slice(), hit), (&b"again"[..], false));
        // Now a hit: the compiler is not called.
        let (bytes, hit) = cache
            .get_or_compile(k, || Err::<Vec<u8>, _>("must not compile"))
            .unwrap();
        assert_eq!((bytes.as_slice(), hit), (&b"again"[..], true));
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn an_unwritable_cache_still_compiles() {
        let dir = temp("unwritable");
        std::fs::write(&dir, b"a file where the folder should be").unwrap();
        let cache = KernelCache::at(dir.join("kernels"));
        let (bytes, hit) = cache
            .get_or_compile(Key(5), || Ok::<_, ()>(b"code".to_vec()))
            .unwrap();
        assert_eq!((bytes.as_slice(), hit), (&b"code"[..], false));
        assert_eq!(cache.load(Key(5)), Lookup::Miss);
        let off = KernelCache::off();
        off.store(Key(5), b"x");
        assert_eq!(off.load(Key(5)), Lookup::Miss);
        std::fs::remove_file(&dir).ok();
    }

    #[test]
    fn the_folder_follows_the_environment_rules() {
        let p = |s: &str| Some(PathBuf::from(s));
        assert_eq!(resolve_dir(p("/c"), p("/x"), p("/h")), p("/c"));
        assert_eq!(resolve_dir(p(""), p("/x"), p("/h")), None);
        assert_eq!(resolve_dir(None, p("/x"), p("/h")), p("/x/fdlab/kernels"));
        // A relative XDG_CACHE_HOME is invalid by the spec and ignored.
        assert_eq!(
            resolve_dir(None, p("rel"), p("/h")),
            p("/h/.cache/fdlab/kernels")
        );
        assert_eq!(resolve_dir(None, None, None), None);
    }

    #[test]
    fn compile_store_load_gives_the_same_bytes() {
        if !crate::nvrtc::available() {
            println!("skipped: libnvrtc is not on the library path");
            return;
        }
        use crate::codegen::{generate, module_source, KernelSpec};
        use fdlab_core::{Boundary, Grid, Precision, Stencil};
        let g = Grid::unit(&[64, 64, 64]).unwrap();
        let st = [Stencil::laplacian(&g, 2).unwrap()];
        let p = Precision::F32;
        let strategy = crate::choose::heuristic(&st, Boundary::Periodic, &g, p, true);
        let src = generate(&KernelSpec {
            stencils: &st,
            boundary: Boundary::Periodic,
            precision: p,
            strategy,
            coefficients: Default::default(),
        })
        .unwrap();
        let text = module_source(&[&src]);
        let key = Key::new(&text, crate::nvrtc::version().unwrap(), "sm_90");
        let dir = temp("nvrtc");
        let cache = KernelCache::at(&dir);
        let compile = || crate::nvrtc::compile_cubin(&src.name, &text, "sm_90");
        let (first, hit) = cache.get_or_compile(key, compile).unwrap();
        assert!(!hit);
        assert!(
            first.len() > 1000 && first.starts_with(b"\x7fELF"),
            "not a CUBIN"
        );
        assert_eq!(cache.load(key), Lookup::Hit(first.clone()));
        let (again, hit) = cache
            .get_or_compile(key, || {
                Err(crate::error::Error::NoNvrtc {
                    reason: "cached".into(),
                })
            })
            .unwrap();
        assert!(hit);
        assert_eq!(again, first);
        std::fs::remove_dir_all(&dir).ok();
    }
}
