//! The values a schedule field takes, each with its name (what `Display` prints and `FromStr`
//! reads back) and its check.

use super::super::temporal::{Request, Temporal};
use super::{DrudeCarry, DrudeLoads, ShellTile, Tile};
use fdlab_cuda::codegen::solver::Launch;

/// A schedule field's value: printed as a short name without `,` `=` or `:` at top level
/// (the separators of a schedule's name), read back from exactly that.
pub(crate) trait Knob: Sized {
    /// The value's name.
    fn show(&self) -> String;
    /// The value named `text`, or what is allowed.
    fn read(text: &str) -> Result<Self, String>;
}

impl Knob for bool {
    fn show(&self) -> String {
        if *self { "on" } else { "off" }.into()
    }
    fn read(text: &str) -> Result<Self, String> {
        match text {
            "on" => Ok(true),
            "off" => Ok(false),
            _ => Err("on or off".into()),
        }
    }
}

impl Knob for u32 {
    fn show(&self) -> String {
        self.to_string()
    }
    fn read(text: &str) -> Result<Self, String> {
        text.parse().map_err(|_| "a whole number".into())
    }
}

/// `AxBxC` as three positive counts.
fn three(text: &str) -> Option<[u32; 3]> {
    let v: Vec<u32> = text
        .split('x')
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    match v[..] {
        [a, b, c] if a > 0 && b > 0 && c > 0 => Some([a, b, c]),
        _ => None,
    }
}

impl Knob for Tile {
    fn show(&self) -> String {
        format!("{}x{}x{}", self.bx, self.by, self.chunk)
    }
    fn read(text: &str) -> Result<Self, String> {
        let allowed = || "BXxBYxPLANES, e.g. 32x8x32, at most 1024 threads a block".to_string();
        let [bx, by, chunk] = three(text).ok_or_else(allowed)?;
        if bx * by > 1024 {
            return Err(allowed());
        }
        Ok(Tile { bx, by, chunk })
    }
}

impl Knob for Launch {
    /// `BXxBYxCHUNK:aAHEAD:vVEC:uUNROLL:rRING`, then `:tile` for a tiled step.
    fn show(&self) -> String {
        let tile = if self.tile { ":tile" } else { "" };
        format!(
            "{}x{}x{}:a{}:v{}:u{}:r{}{tile}",
            self.bx, self.by, self.chunk, self.ahead, self.vec, self.unroll, self.ring
        )
    }
    fn read(text: &str) -> Result<Self, String> {
        let allowed = || {
            "BXxBYxCHUNK:aAHEAD:vVEC:uUNROLL:rRING[:tile], e.g. 32x8x16:a0:v4:u0:r0, at most \
             1024 threads a block, vector width 1, 2 or 4"
                .to_string()
        };
        let mut parts = text.split(':');
        let [bx, by, chunk] = parts.next().and_then(three).ok_or_else(allowed)?;
        if bx * by > 1024 {
            return Err(allowed());
        }
        let mut l = Launch {
            bx,
            by,
            chunk,
            ..Launch::flat(bx)
        };
        let mut seen = String::new();
        for p in parts {
            let (tag, rest) = p.split_at(p.len().min(1));
            if p == "tile" {
                l.tile = true;
                continue;
            }
            if seen.contains(tag) {
                return Err(allowed());
            }
            seen.push_str(tag);
            let v: u32 = rest.parse().map_err(|_| allowed())?;
            match tag {
                "a" => l.ahead = v,
                "v" if [1, 2, 4].contains(&v) => l.vec = v,
                "u" => l.unroll = v,
                "r" => l.ring = v,
                _ => return Err(allowed()),
            }
        }
        Ok(l)
    }
}

impl Knob for Request {
    /// `off`, `kK` (the model's tile for K steps a pass) or `K/SX/SY/P/CHUNK` (a whole shape).
    fn show(&self) -> String {
        match self {
            Request::Off => "off".into(),
            Request::K(k) => format!("k{k}"),
            Request::Shape(t) => format!("{}/{}/{}/{}/{}", t.k, t.sx, t.sy, t.p, t.chunk),
        }
    }
    fn read(text: &str) -> Result<Self, String> {
        let max = super::super::temporal::K_MAX;
        let allowed =
            || format!("off, kK (K from 2 to {max}) or K/SX/SY/P/CHUNK, e.g. 3/64/32/8/64");
        if text == "off" {
            return Ok(Request::Off);
        }
        if let Some(k) = text.strip_prefix('k') {
            return match k.parse() {
                Ok(k) if (2..=max).contains(&k) => Ok(Request::K(k)),
                _ => Err(allowed()),
            };
        }
        let v: Vec<u32> = text
            .split('/')
            .map(|x| x.parse().ok())
            .collect::<Option<_>>()
            .ok_or_else(allowed)?;
        match v[..] {
            [k, sx, sy, p, chunk] if k >= 2 && sx > 0 && sy > 0 && p > 0 && chunk > 0 => {
                Ok(Request::Shape(Temporal {
                    k,
                    sx,
                    sy,
                    p,
                    chunk,
                }))
            }
            _ => Err(allowed()),
        }
    }
}

impl Knob for ShellTile {
    fn show(&self) -> String {
        match self {
            ShellTile::Plane => "plane".into(),
            ShellTile::Tile(x, o) => format!("{x}x{o}"),
        }
    }
    fn read(text: &str) -> Result<Self, String> {
        if text == "plane" {
            return Ok(ShellTile::Plane);
        }
        let allowed = || "plane or TXxTO, e.g. 32x8".to_string();
        let (x, o) = text.split_once('x').ok_or_else(allowed)?;
        match (x.parse(), o.parse()) {
            (Ok(x), Ok(o)) if x > 0 && o > 0 => Ok(ShellTile::Tile(x, o)),
            _ => Err(allowed()),
        }
    }
}

impl Knob for DrudeLoads {
    fn show(&self) -> String {
        match self {
            DrudeLoads::InTurn => "in-turn",
            DrudeLoads::AllFirst => "all-first",
            DrudeLoads::MediaFirst => "media-first",
        }
        .into()
    }
    fn read(text: &str) -> Result<Self, String> {
        match text {
            "in-turn" => Ok(DrudeLoads::InTurn),
            "all-first" => Ok(DrudeLoads::AllFirst),
            "media-first" => Ok(DrudeLoads::MediaFirst),
            _ => Err("in-turn, all-first or media-first".into()),
        }
    }
}

impl Knob for DrudeCarry {
    fn show(&self) -> String {
        match self {
            DrudeCarry::Nothing => "nothing",
            DrudeCarry::Media => "media",
            DrudeCarry::MediaAndCurrents => "media-currents",
        }
        .into()
    }
    fn read(text: &str) -> Result<Self, String> {
        match text {
            "nothing" => Ok(DrudeCarry::Nothing),
            "media" => Ok(DrudeCarry::Media),
            "media-currents" => Ok(DrudeCarry::MediaAndCurrents),
            _ => Err("nothing, media or media-currents".into()),
        }
    }
}
