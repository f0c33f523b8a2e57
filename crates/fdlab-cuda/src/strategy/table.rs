//! The table of strategy families and their options: the one source of the names' syntax, read
//! by the parser, by `Display`, by validation and by [`strategies_help`].
//!
//! A name is the family, then its block or tile, then its options in table order, separated by
//! `-`: `smarch-64x4-r2-c64-p4-v2-l-e`. Options with a default may be left out; `Display` leaves
//! out an option at its default.

use super::Strategy;
use std::fmt::{self, Write};

/// How an option is written in a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionSyntax {
    /// The key, then `n` sizes joined by `x` (`64x4`, `t8x32`); the block or tile has no key.
    Dims(usize),
    /// The key, then a number (`c64`).
    Number,
    /// The key alone (`cs`).
    Flag,
    /// The key alone for 1, the key and a number for more (`l`, `l2`).
    CountOrOne,
    /// The key, a number, and `a` when the option's second switch is on (`t2`, `t2a`).
    NumberA,
    /// A number that is part of the family name (`ppt4`).
    Head,
}

/// The values an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionRange {
    /// Present or absent.
    Flag,
    /// A whole number from `.0` to `.1`, both included (each size, for [`OptionSyntax::Dims`]).
    Between(u32, u32),
    /// One of these numbers.
    OneOf(&'static [u32]),
}

impl OptionRange {
    /// Whether `v` is in the range.
    pub fn contains(&self, v: u64) -> bool {
        match *self {
            OptionRange::Flag => true,
            OptionRange::Between(lo, hi) => (lo as u64..=hi as u64).contains(&v),
            OptionRange::OneOf(set) => set.iter().any(|&s| s as u64 == v),
        }
    }

    /// The value of the range nearest to `v`.
    pub fn clamp(&self, v: u64) -> u32 {
        match *self {
            OptionRange::Flag => 1,
            OptionRange::Between(lo, hi) => v.clamp(lo as u64, hi as u64) as u32,
            OptionRange::OneOf(set) => set
                .iter()
                .copied()
                .min_by_key(|&s| (s as u64).abs_diff(v))
                .unwrap_or(1),
        }
    }
}

impl fmt::Display for OptionRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionRange::Flag => f.write_str("on/off"),
            OptionRange::Between(lo, hi) => write!(f, "{lo} to {hi}"),
            OptionRange::OneOf(set) => {
                let s: Vec<String> = set.iter().map(|v| v.to_string()).collect();
                write!(f, "{}", s.join(", "))
            }
        }
    }
}

/// One option of a strategy family.
#[derive(Debug, Clone, Copy)]
pub struct OptionDoc {
    /// The letters that start the option in a name (empty for the block or tile).
    pub key: &'static str,
    /// How the option is written.
    pub syntax: OptionSyntax,
    /// What it means, in one line.
    pub meaning: &'static str,
    /// The values it takes.
    pub range: OptionRange,
    /// The value when the option is left out; `None` when every name must give it.
    pub default: Option<&'static str>,
}

/// One strategy family: its name, what it does, and its options in name order.
#[derive(Debug, Clone, Copy)]
pub struct FamilyDoc {
    /// The first word of its names.
    pub name: &'static str,
    /// What it does, in one line.
    pub summary: &'static str,
    /// The name's form (`zmarch-BXxBY-vV-cC-uU-rR[-cs]`).
    pub form: &'static str,
    /// Its options, in the order a name gives them.
    pub options: &'static [OptionDoc],
    /// The family's default strategy.
    pub default: Strategy,
}

const fn opt(
    key: &'static str,
    syntax: OptionSyntax,
    meaning: &'static str,
    range: OptionRange,
    default: Option<&'static str>,
) -> OptionDoc {
    OptionDoc {
        key,
        syntax,
        meaning,
        range,
        default,
    }
}

/// CUDA's per-axis block limit along x and y; z is checked apart (64) in validation.
const BLOCK: OptionRange = OptionRange::Between(1, 1024);
const VEC: OptionRange = OptionRange::OneOf(&[1, 2, 4]);
const ONE_TO_8: OptionRange = OptionRange::Between(1, 8);
/// Planes per block along a march: any positive count up to 2^16 (the grid caps the rest).
const CHUNK: OptionRange = OptionRange::Between(1, 65536);

const POINTWISE: &[OptionDoc] = &[opt(
    "",
    OptionSyntax::Dims(3),
    "threads per block along x, y, z (z at most 64, at most 1024 threads)",
    BLOCK,
    None,
)];

const TILE2: OptionDoc = opt(
    "",
    OptionSyntax::Dims(2),
    "threads along x and along the other axis (at most 1024 threads)",
    BLOCK,
    None,
);

const ROWS: OptionDoc = opt(
    "r",
    OptionSyntax::Number,
    "consecutive rows of the other axis per thread",
    ONE_TO_8,
    None,
);

const CHUNK_OPT: OptionDoc = opt(
    "c",
    OptionSyntax::Number,
    "planes per block along the march",
    CHUNK,
    None,
);

const STREAMING: OptionDoc = opt(
    "cs",
    OptionSyntax::Flag,
    "streaming (evict-first) stores of the outputs",
    OptionRange::Flag,
    Some("off"),
);

static FAMILIES: &[FamilyDoc] = &[
    FamilyDoc {
        name: "naive",
        summary: "one point per thread, plain global loads: the baseline",
        form: "naive-BXxBYxBZ",
        options: POINTWISE,
        default: Strategy::NAIVE,
    },
    FamilyDoc {
        name: "ldg",
        summary: "one point per thread, loads through the read-only cache (__ldg)",
        form: "ldg-BXxBYxBZ",
        options: POINTWISE,
        default: Strategy::READ_ONLY,
    },
    FamilyDoc {
        name: "texture",
        summary: "one point per thread, loads through a texture object",
        form: "texture-BXxBYxBZ",
        options: POINTWISE,
        default: Strategy::TEXTURE,
    },
    FamilyDoc {
        name: "ppt",
        summary: "several consecutive z points per thread, loads in ascending address order",
        form: "pptN-BXxBYxBZ",
        options: &[
            opt(
                "ppt",
                OptionSyntax::Head,
                "consecutive z points per thread",
                OptionRange::Between(1, 64),
                None,
            ),
            POINTWISE[0],
        ],
        default: Strategy::AMD_PPT,
    },
    FamilyDoc {
        name: "shared",
        summary: "an xy tile and its halo in shared memory, z neighbours from global memory",
        form: "shared-BXxBY",
        options: &[opt(
            "",
            OptionSyntax::Dims(2),
            "tile width and height in threads (at most 1024 threads)",
            BLOCK,
            None,
        )],
        default: Strategy::SHARED,
    },
    FamilyDoc {
        name: "pencil",
        summary: "NVIDIA's pencils for a stencil along one axis, the tile in shared memory",
        form: "pencil-LxP-tAxC[-w]",
        options: &[
            opt(
                "",
                OptionSyntax::Dims(2),
                "points along the stencil axis and pencils per tile",
                OptionRange::Between(1, 4096),
                None,
            ),
            opt(
                "t",
                OptionSyntax::Dims(2),
                "threads along the axis and across (dividing the tile; at most 1024 threads)",
                BLOCK,
                None,
            ),
            opt(
                "w",
                OptionSyntax::Flag,
                "sliding register window: each thread a run of consecutive points",
                OptionRange::Flag,
                Some("off"),
            ),
        ],
        default: Strategy::PENCIL_SMALL,
    },
    FamilyDoc {
        name: "zmarch",
        summary: "2.5-D march, the march axis in a register queue, the rest through __ldg",
        form: "zmarch-BXxBY-vV-cC-uU-rR[-cs]",
        options: &[
            TILE2,
            opt(
                "v",
                OptionSyntax::Number,
                "x points per thread (a vector)",
                VEC,
                None,
            ),
            CHUNK_OPT,
            opt(
                "u",
                OptionSyntax::Number,
                "planes per loop iteration, their loads issued together",
                ONE_TO_8,
                None,
            ),
            ROWS,
            STREAMING,
        ],
        default: Strategy::ZMARCH,
    },
    FamilyDoc {
        name: "smarch",
        summary: "2.5-D march through a ring of shared-memory planes filled ahead by copies",
        form: "smarch-BXxBY-rR-cC-pP[-vV][-l|-lN|-b][-e]",
        options: &[
            opt(
                "",
                OptionSyntax::Dims(2),
                "threads along x (a multiple of 4) and along the other axis",
                BLOCK,
                None,
            ),
            ROWS,
            CHUNK_OPT,
            opt(
                "p",
                OptionSyntax::Number,
                "planes of copies in flight",
                ONE_TO_8,
                None,
            ),
            opt(
                "v",
                OptionSyntax::Number,
                "x points per thread (a vector)",
                VEC,
                Some("1"),
            ),
            opt(
                "l",
                OptionSyntax::CountOrOne,
                "planes reach the ring through registers, N planes of loads held (l = 1)",
                OptionRange::Between(1, 2),
                Some("cp.async"),
            ),
            opt(
                "b",
                OptionSyntax::Flag,
                "planes reach the ring by bulk copies (cp.async.bulk, sm_90); not with -l",
                OptionRange::Flag,
                Some("cp.async"),
            ),
            opt(
                "e",
                OptionSyntax::Flag,
                "read the partly written output sectors a plane ahead (interior outputs)",
                OptionRange::Flag,
                Some("off"),
            ),
        ],
        default: Strategy::SMARCH,
    },
    FamilyDoc {
        name: "qmarch",
        summary: "2.5-D march, a register queue along the march and one shared plane",
        form: "qmarch-BXxBY-rR-cC-vV[-tN|-tNa|-wNa][-uU][-cs]",
        options: &[
            TILE2,
            ROWS,
            CHUNK_OPT,
            opt(
                "v",
                OptionSyntax::Number,
                "x points per thread (a vector)",
                VEC,
                None,
            ),
            opt(
                "t",
                OptionSyntax::NumberA,
                "TMA tensor copies of whole planes, N in flight (Dirichlet); a: partial sums",
                ONE_TO_8,
                Some("registers"),
            ),
            opt(
                "w",
                OptionSyntax::NumberA,
                "split-slot TMA copies, N in flight, periodic too; needs a (partial sums)",
                ONE_TO_8,
                Some("registers"),
            ),
            opt(
                "u",
                OptionSyntax::Number,
                "planes per iteration of the partial-sum march, written out (fewer register moves)",
                ONE_TO_8,
                Some("1"),
            ),
            STREAMING,
        ],
        default: Strategy::QMarch {
            bx: 32,
            by: 8,
            rows: 2,
            chunk: 128,
            vec: 2,
            tma: 0,
            accumulate: false,
            split: false,
            unroll: 1,
            streaming: false,
        },
    },
];

/// Short names accepted besides the full forms (never printed by `Display`).
pub(super) const ALIASES: &[(&str, Strategy)] = &[
    ("naive", Strategy::NAIVE),
    ("ldg", Strategy::READ_ONLY),
    ("readonly", Strategy::READ_ONLY),
    ("texture", Strategy::TEXTURE),
    ("shared", Strategy::SHARED),
    ("pencil-small", Strategy::PENCIL_SMALL),
    ("pencil-long", Strategy::PENCIL_LONG),
    ("pencil-long-w", Strategy::PENCIL_LONG_WINDOW),
    ("amd", Strategy::AMD_BASELINE),
    ("amd-ppt", Strategy::AMD_PPT),
    ("zmarch", Strategy::ZMARCH),
    ("smarch", Strategy::SMARCH),
];

/// Every strategy family with its options: the table the parser, `Display` and
/// [`strategies_help`] read.
pub fn families() -> &'static [FamilyDoc] {
    FAMILIES
}

/// The family named `name`.
pub(super) fn family(name: &str) -> Option<&'static FamilyDoc> {
    FAMILIES.iter().find(|f| f.name == name)
}

/// The text of `fdlab strategies`: every family, what it does, and each option with its
/// meaning, range and default, from [`families`].
pub fn strategies_help() -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "A strategy name is a family, its block or tile, then options in this order, joined \
         by '-'.\nOptions with a default may be left out.\n"
    );
    for fam in families() {
        let _ = writeln!(s, "{:<48} {}", fam.form, fam.summary);
        for o in fam.options {
            let key = match o.syntax {
                OptionSyntax::Dims(n) => fam
                    .form
                    .split(['-', '[', ']'])
                    .skip(1)
                    .find(|seg| seg.starts_with(o.key) && seg.contains('x'))
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("{}{}", o.key, ["A", "B", "C"][..n].join("x"))),
                OptionSyntax::Number => format!("{}N", o.key),
                OptionSyntax::Flag => o.key.to_string(),
                OptionSyntax::CountOrOne => format!("{0}, {0}N", o.key),
                OptionSyntax::NumberA => format!("{0}N, {0}Na", o.key),
                OptionSyntax::Head => format!("{}N", o.key),
            };
            let default = o.default.unwrap_or("required");
            let _ = writeln!(
                s,
                "    {key:<10} {} [{}; default {default}]",
                o.meaning, o.range
            );
        }
        let _ = writeln!(s, "    e.g. {}\n", fam.default);
    }
    let aliases: Vec<String> = ALIASES
        .iter()
        .map(|(a, st)| format!("{a} = {st}"))
        .collect();
    let _ = writeln!(s, "Short names: {}", aliases.join(", "));
    s
}
