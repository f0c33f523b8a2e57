//! The case files of the property test in [`super`]: generated from the case format's keys,
//! edited from small valid cases, and noise.

use super::KEYS;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{select, Index};

// ---- values ----
//
// Each key goes wrong in about one case in twenty-five, so that about half of the generated
// cases parse and most of those reach the checks after parsing; a whole case holds about
// twenty keys.

type S = BoxedStrategy<String>;

/// TOML text of a float: `nan`, `inf` and `-inf` as TOML spells them.
fn toml_f64(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        format!("{x:?}")
    }
}

/// Mostly a value in `lo..hi`; sometimes zero, negative, non-finite, huge, tiny or any float.
fn float(q: u32, lo: f64, hi: f64) -> S {
    let special = select(vec![
        "0.0", "-1.0", "nan", "-nan", "inf", "-inf", "1e308", "-1e308", "5e-324", "1e-300",
        "1e300", "1", "-3",
    ])
    .prop_map(String::from);
    prop_oneof![
        q => (lo..hi).prop_map(toml_f64),
        2 => special,
        1 => any::<f64>().prop_map(toml_f64),
    ]
    .boxed()
}

/// Mostly an integer in `lo..=hi`; sometimes 0, negative, huge (past any grid that fits in
/// memory, or past what TOML's integers hold) or a float.
fn count(q: u32, lo: i64, hi: i64) -> S {
    let special = select(vec![
        "0",
        "-1",
        "1",
        "1000000000000",
        "1099511627776",
        "9223372036854775807",
        "18446744073709551615",
        "2.5",
    ])
    .prop_map(String::from);
    prop_oneof![q => (lo..=hi).prop_map(|n| n.to_string()), 1 => special].boxed()
}

fn boolean() -> S {
    select(vec!["true", "false"]).prop_map(String::from).boxed()
}

/// A value of the wrong type for most keys.
fn junk() -> S {
    select(vec![
        "\"text\"",
        "true",
        "[]",
        "[1, 2]",
        "{}",
        "{ a = 1 }",
        "[[1.0], [2.0]]",
        "1979-05-27",
        "\"\"",
        "[\"a\", 1]",
    ])
    .prop_map(String::from)
    .boxed()
}

/// `[a, b, …]` of `item`, mostly `n` long, sometimes empty or of another length.
fn array(q: u32, item: S, n: usize) -> S {
    prop_oneof![
        q => vec(item.clone(), n..=n),
        1 => vec(item, 0..5),
    ]
    .prop_map(|v| format!("[{}]", v.join(", ")))
    .boxed()
}

/// A quoted string from `choices` (the valid names), sometimes one of `wrong` or any string.
fn word(q: u32, choices: &[&'static str], wrong: &[&'static str]) -> S {
    let mut wrong = wrong.to_vec();
    wrong.push("");
    prop_oneof![
        q => select(choices.to_vec()).prop_map(|s| format!("\"{s}\"")),
        1 => select(wrong).prop_map(|s| format!("\"{s}\"")),
        1 => "[a-z+-]{0,8}".prop_map(|s| format!("\"{s}\"")),
    ]
    .boxed()
}

/// A `key = value` line: mostly as given; sometimes left out, given a wrong-typed value, or
/// misspelled into an unknown key.
fn kv(q: u32, key: &'static str, value: S) -> S {
    prop_oneof![
        3 * q => value.clone().prop_map(move |v| format!("{key} = {v}\n")),
        2 => Just(String::new()),
        1 => junk().prop_map(move |v| format!("{key} = {v}\n")),
        1 => value.prop_map(move |v| format!("{key}s = {v}\n")),
    ]
    .boxed()
}

/// An optional key: given in about one case in `1 + absent`.
fn opt(q: u32, key: &'static str, value: S, absent: u32) -> S {
    prop_oneof![1 => kv(q, key, value), absent => Just(String::new())].boxed()
}

/// The lines concatenated.
fn lines(l: Vec<S>) -> S {
    l.prop_map(|l| l.concat()).boxed()
}

/// `[header]` and its lines; sometimes the whole table is missing.
fn table(q: u32, header: &'static str, l: Vec<S>) -> S {
    prop_oneof![
        q => lines(l).prop_map(move |l| format!("[{header}]\n{l}")),
        1 => Just(String::new()),
    ]
    .boxed()
}

/// Zero to `max` `[[header]]` entries.
fn entries(header: &'static str, max: usize, body: S) -> S {
    vec(body, 0..=max)
        .prop_map(move |v| v.iter().map(|b| format!("[[{header}]]\n{b}")).collect())
        .boxed()
}

/// An inline table `{ k = v, … }` of the lines' `k = v`.
fn inline(l: Vec<S>) -> S {
    l.prop_map(|l| {
        let parts: Vec<&str> = l
            .iter()
            .map(|x| x.trim_end())
            .filter(|x| !x.is_empty())
            .collect();
        format!("{{ {} }}", parts.join(", "))
    })
    .boxed()
}

/// One of several texts, or nothing.
fn rarely(texts: &[&'static str], none: u32) -> S {
    prop_oneof![
        none => Just(String::new()),
        1 => select(texts.to_vec()).prop_map(String::from),
    ]
    .boxed()
}

// ---- a whole case ----

/// Grid shapes: mostly `lo ..= hi` points per axis (or the 8 × 6 (× 4) of the `.npy`
/// fixtures); sometimes every axis huge, or any length of any count.
fn shape(q: u32, dim: usize, lo: usize, hi: usize) -> S {
    let huge = select(vec![
        "1000000000000",
        "1099511627776",
        "4294967296",
        "9223372036854775807",
    ]);
    prop_oneof![
        16 => vec(lo..=hi, dim..=dim).prop_map(|v| format!("{v:?}")),
        4 => Just(if dim == 2 { "[8, 6]" } else { "[8, 6, 4]" }.to_string()),
        1 => vec(huge, dim..=dim).prop_map(|v| format!("[{}]", v.join(", "))),
        1 => vec(count(q, 0, 12), 0..5).prop_map(|v| format!("[{}]", v.join(", "))),
    ]
    .boxed()
}

/// A material field of a `dim`-axis case.
fn field_spec(q: u32, dim: usize) -> S {
    let npy = word(
        q,
        &[
            "ok.npy",
            "nan.npy",
            "neg.npy",
            "cube.npy",
            "garbage.npy",
            "missing.npy",
        ],
        &[],
    );
    let layered = inline(vec![
        opt(q, "axis", count(q, 0, dim as i64 - 1), 1),
        kv(q, "tops", array(q, float(q, 0.0, 8.0), 2)),
        kv(q, "values", array(q, float(q, 0.5, 2.0), 2)),
    ]);
    prop_oneof![
        q => prop_oneof![
            6 => float(q, 0.5, 2.0).prop_map(|v| format!("{{ constant = {v} }}")),
            1 => npy.prop_map(|p| format!("{{ npy = {p} }}")),
            2 => layered.prop_map(|t| format!("{{ layered = {t} }}")),
        ],
        1 => junk(),
    ]
    .boxed()
}

/// `[initial]`: the line a top-level `initial = …` takes (before any table), and the table.
fn initial(q: u32, dim: usize) -> BoxedStrategy<(String, String)> {
    let npy = word(
        q,
        &[
            "ok.npy",
            "nan.npy",
            "cube.npy",
            "garbage.npy",
            "missing.npy",
        ],
        &[],
    );
    let gaussian = vec![
        kv(q, "center", array(q, float(q, 0.0, 12.0), dim)),
        kv(q, "width", float(q, 0.5, 4.0)),
        kv(q, "amplitude", float(q, -2.0, 2.0)),
    ];
    let text = vec![
        kv(
            q,
            "text",
            "[ -~]{0,4}".prop_map(|t| format!("{t:?}")).boxed(),
        ),
        kv(q, "value", float(q, 0.0, 2.0)),
    ];
    let none = || Just(String::new());
    prop_oneof![
        4 => (none(), none()),
        1 => (word(q, &["zero"], &["gaussian"]).prop_map(|w| format!("initial = {w}\n")), none()),
        1 => (junk().prop_map(|v| format!("initial = {v}\n")), none()),
        6 => (none(), lines(gaussian).prop_map(|l| format!("[initial.gaussian]\n{l}"))),
        2 => (none(), npy.prop_map(|p| format!("[initial]\nnpy = {p}\n"))),
        1 => (none(), lines(text).prop_map(|l| format!("[initial.text]\n{l}"))),
    ]
    .boxed()
}

/// `boundary`: a CPML in about half the wave cases, rarely in heat cases (which refuse it).
fn boundary(q: u32, wave: bool) -> S {
    prop_oneof![
        q => word(q, &["periodic", "dirichlet"], &["cpml", "pec"]),
        if wave { q } else { 1 } => count(q, 4, 5).prop_map(|t| format!("{{ cpml = {{ thickness = {t} }} }}")),
        1 => junk(),
    ]
    .boxed()
}

fn output(q: u32) -> S {
    table(
        q,
        "output",
        vec![
            kv(q, "dir", word(q, &["out"], &[])),
            kv(q, "every", count(q, 1, 20)),
            opt(q, "png", boolean(), 4),
            opt(q, "npy", boolean(), 4),
            opt(q, "slice", count(q, 0, 12), 6),
        ],
    )
}

fn time(q: u32) -> S {
    let step = prop_oneof![
        2 * q => kv(q, "cfl", float(q, 0.1, 1.0)),
        q => kv(q, "dt", float(q, 0.001, 0.5)),
        1 => lines(vec![kv(q, "dt", float(q, 0.001, 0.5)), kv(q, "cfl", float(q, 0.1, 1.0))]),
    ];
    table(
        q,
        "time",
        vec![step.boxed(), kv(q, "duration", float(q, 0.5, 20.0))],
    )
}

/// A heat or wave case of `dim` axes.
fn heat_or_wave(q: u32, physics: &'static str, dim: usize) -> S {
    let top = vec![
        kv(
            q,
            "physics",
            word(q, &[physics], &["heat", "wave", "fdtd", "maxwell"]),
        ),
        opt(q, "precision", word(q, &["f32", "f64"], &["f16"]), 3),
        kv(q, "boundary", boundary(q, physics == "wave")),
    ];
    let source = vec![
        kv(q, "position", array(q, float(q, 0.0, 12.0), dim)),
        kv(q, "frequency", float(q, 0.01, 0.5)),
        opt(q, "amplitude", float(q, -2.0, 2.0), 2),
        opt(q, "delay", float(q, 0.0, 30.0), 2),
    ];
    let material = if physics == "heat" {
        vec![
            kv(q, "diffusivity", field_spec(q, dim)),
            opt(q, "velocity", field_spec(q, dim), 20),
        ]
    } else {
        vec![
            kv(q, "velocity", field_spec(q, dim)),
            opt(q, "diffusivity", field_spec(q, dim), 20),
        ]
    };
    // A CPML of 4 or 5 cells needs at least 3 times that along every axis.
    let shape = match physics {
        "wave" => shape(q, dim, 15, 20),
        _ => shape(q, dim, 4, 12),
    };
    let receivers = entries(
        "receivers",
        2,
        kv(q, "position", array(q, float(q, 0.0, 12.0), dim)),
    );
    let mut sources = entries("sources", 2, lines(source));
    if physics == "heat" {
        // A heat case refuses them: give them in few heat cases.
        sources =
            prop_oneof![q => Just(String::new()), 1 => sources, 1 => receivers.clone()].boxed();
    }
    let body = lines(vec![
        table(q, "grid", vec![kv(q, "shape", shape), kv(q, "spacing", array(q, float(q, 0.5, 2.0), dim))]),
        time(q),
        prop_oneof![3 => Just(String::new()), 1 => table(q, "scheme", vec![kv(q, "order", count(q, 2, 10))])]
            .boxed(),
    ]);
    let tail = lines(vec![
        table(q, "material", material),
        sources,
        if physics == "wave" {
            receivers
        } else {
            Just(String::new()).boxed()
        },
        output(q),
        rarely(
            &[
                "[fdtd]\nboundary = [\"pec\", \"pec\", \"pec\"]\n",
                "[extra]\nkey = 1\n",
            ],
            30,
        ),
    ]);
    (lines(top), initial(q, dim), body, tail)
        .prop_map(|(top, (init_top, init), body, tail)| {
            format!("{top}{init_top}{body}{init}{tail}")
        })
        .boxed()
}

/// A waveform and its parameters.
fn waveform_lines(q: u32) -> Vec<S> {
    vec![
        kv(
            q,
            "waveform",
            word(
                q,
                &["ricker", "gaussian", "modulated_gaussian", "sine"],
                &["square"],
            ),
        ),
        opt(q, "f0", float(q, 0.5, 3.0), 1),
        opt(q, "t0", float(q, 0.0, 3.0), 1),
        opt(q, "tau", float(q, 0.1, 1.0), 1),
        opt(q, "amplitude", float(q, -2.0, 2.0), 2),
    ]
}

/// An fdtd case: 3-D, spacings about 0.1.
fn fdtd_case(q: u32) -> S {
    let comp = || word(q, &["ex", "ey", "ez"], &["hx", "hz", "e"]);
    let pos = || array(q, float(q, 0.0, 1.2), 3);
    let cpml = inline(vec![
        kv(q, "thickness", count(q, 5, 6)),
        opt(q, "order", count(q, 1, 7), 3),
        opt(q, "kappa_max", float(q, 1.0, 5.0), 3),
        opt(q, "alpha_max", float(q, 0.0, 1.0), 3),
    ]);
    let bc = prop_oneof![
        3 => word(q, &["pec", "periodic"], &["cpml", "dirichlet"]),
        2 => cpml.prop_map(|c| format!("{{ cpml = {c} }}")),
    ]
    .boxed();
    let geometry = prop_oneof![
        lines(vec![kv(q, "lo", pos()), kv(q, "hi", pos())]),
        lines(vec![
            kv(q, "center", pos()),
            kv(q, "radius", float(q, 0.05, 0.5))
        ]),
        inline(vec![
            kv(q, "axis", word(q, &["x", "y", "z"], &["w"])),
            kv(q, "lo", float(q, 0.0, 1.2)),
            kv(q, "hi", float(q, 0.0, 1.2)),
        ])
        .prop_map(|t| format!("slab = {t}\n")),
    ]
    .boxed();
    let material = vec![
        geometry,
        opt(q, "eps_r", float(q, 1.0, 4.0), 1),
        opt(q, "sigma", float(q, 0.0, 1.0), 2),
        opt(q, "pec", boolean(), 4),
        opt(
            q,
            "drude",
            inline(vec![
                kv(q, "plasma_frequency", float(q, 0.0, 10.0)),
                opt(q, "collision_frequency", float(q, 0.0, 1.0), 1),
            ]),
            4,
        ),
        opt(
            q,
            "lorentz",
            inline(vec![
                kv(q, "delta_eps", float(q, 0.0, 2.0)),
                kv(q, "resonance_frequency", float(q, 0.1, 10.0)),
                opt(q, "damping", float(q, 0.0, 1.0), 1),
            ]),
            4,
        ),
        opt(
            q,
            "debye",
            inline(vec![
                kv(q, "delta_eps", float(q, 0.0, 2.0)),
                kv(q, "relaxation_time", float(q, 0.01, 1.0)),
            ]),
            4,
        ),
    ];
    let mut source = waveform_lines(q);
    source.extend([
        kv(q, "component", comp()),
        kv(q, "position", pos()),
        opt(q, "hard", boolean(), 3),
    ]);
    let mut wave = waveform_lines(q);
    wave.extend([
        kv(
            q,
            "direction",
            word(q, &["+x", "-x", "+y", "-y", "+z", "-z"], &["x"]),
        ),
        kv(q, "polarization", comp()),
        kv(q, "lo", pos()),
        kv(q, "hi", pos()),
    ]);
    let plane = || {
        vec![
            kv(q, "axis", word(q, &["x", "y", "z"], &["+x"])),
            kv(q, "position", float(q, 0.0, 1.2)),
            kv(q, "frequencies", array(q, float(q, 0.4, 1.5), 2)),
        ]
    };
    let mut monitor = plane();
    monitor.push(opt(q, "components", array(q, comp(), 2), 1));
    let probe = vec![kv(q, "component", comp()), kv(q, "position", pos())];
    lines(vec![
        lines(vec![
            kv(q, "physics", word(q, &["fdtd"], &["wave"])),
            opt(q, "precision", word(q, &["f32", "f64"], &[]), 3),
        ]),
        table(
            q,
            "grid",
            vec![
                kv(q, "shape", shape(q, 3, 14, 18)),
                kv(q, "spacing", array(q, float(q, 0.05, 0.2), 3)),
            ],
        ),
        time(q),
        table(
            q,
            "fdtd",
            vec![
                kv(q, "boundary", array(q, bc, 3)),
                opt(q, "plot", comp(), 2),
            ],
        ),
        entries("fdtd.materials", 1, lines(material)),
        entries("fdtd.sources", 1, lines(source)),
        entries("fdtd.probes", 1, lines(probe)),
        prop_oneof![3 => Just(String::new()), 1 => entries("fdtd.monitors", 1, lines(monitor))]
            .boxed(),
        prop_oneof![3 => Just(String::new()), 1 => entries("fdtd.plane_waves", 1, lines(wave))]
            .boxed(),
        prop_oneof![3 => Just(String::new()), 1 => entries("fdtd.flux", 1, lines(plane()))].boxed(),
        rarely(
            &[
                "[scheme]\norder = 4\n",
                "[[sources]]\nposition = [0.5, 0.5, 0.5]\nfrequency = 1.0\n",
                "boundary = \"periodic\"\n",
            ],
            30,
        ),
        output(q),
    ])
}

/// Any generated case, a third each nearly clean (one key in about 3000 goes wrong), slightly
/// noisy (one in 300) and noisy (one in 30): clean cases reach the checks after parsing,
/// noisy ones the parser's refusals.
pub(super) fn any_case() -> S {
    prop_oneof![case_of(3000), case_of(300), case_of(30)].boxed()
}

/// A case whose values are plausible with weight `q` against about 1 for each way of going
/// wrong.
fn case_of(q: u32) -> S {
    prop_oneof![
        3 => heat_or_wave(q, "heat", 2),
        1 => heat_or_wave(q, "heat", 3),
        3 => heat_or_wave(q, "wave", 2),
        1 => heat_or_wave(q, "wave", 3),
        3 => fdtd_case(q),
    ]
    .boxed()
}

// ---- edits of valid cases, and noise ----

/// Small valid cases of each kind, to be edited.
pub(super) const SEEDS: &[&str] = &[
    "physics = \"heat\"\nboundary = \"periodic\"\n[grid]\nshape = [8, 6]\nspacing = [1.0, 1.0]\n\
     [time]\ndt = 0.05\nduration = 1.0\n[material]\ndiffusivity = { npy = \"ok.npy\" }\n\
     [initial.gaussian]\ncenter = [4.0, 3.0]\nwidth = 1.0\namplitude = 1.0\n\
     [output]\ndir = \"out\"\nevery = 5\n",
    "physics = \"wave\"\nboundary = { cpml = { thickness = 4 } }\n[grid]\nshape = [16, 14]\n\
     spacing = [1.0, 1.0]\n[time]\ncfl = 0.5\nduration = 10.0\n[scheme]\norder = 8\n\
     [material.velocity.layered]\naxis = 1\ntops = [0.0, 5.0]\nvalues = [1.0, 0.5]\n\
     [[sources]]\nposition = [6.0, 5.0]\nfrequency = 0.1\ndelay = 3.0\n\
     [[receivers]]\nposition = [6.0, 6.0]\n[output]\ndir = \"out\"\nevery = 10\n",
    "physics = \"heat\"\nboundary = \"dirichlet\"\n[grid]\nshape = [8, 6, 4]\n\
     spacing = [0.5, 0.5, 0.5]\n[time]\ncfl = 0.9\nduration = 0.5\n\
     [material]\ndiffusivity = { constant = 2.0 }\n[initial]\nnpy = \"cube.npy\"\n\
     [output]\ndir = \"out\"\nevery = 3\nslice = 2\n",
    "physics = \"fdtd\"\n[grid]\nshape = [12, 12, 16]\nspacing = [0.1, 0.1, 0.1]\n[time]\n\
     cfl = 0.9\nduration = 2.0\n[fdtd]\nboundary = [\"pec\", \"periodic\", \
     { cpml = { thickness = 5 } }]\n[[fdtd.materials]]\nlo = [0.2, 0.2, 0.5]\n\
     hi = [0.4, 0.4, 0.7]\nlorentz = { delta_eps = 1.0, resonance_frequency = 3.0 }\n\
     [[fdtd.sources]]\ncomponent = \"ez\"\nposition = [0.6, 0.6, 0.8]\nwaveform = \"ricker\"\n\
     f0 = 1.0\n[[fdtd.monitors]]\naxis = \"z\"\nposition = 0.8\nfrequencies = [0.6, 1.0]\n\
     [output]\ndir = \"out\"\nevery = 10\n",
];

/// One edit of a valid case.
#[derive(Debug, Clone)]
enum Edit {
    /// Replace the i-th number with another value.
    Number(Index, String),
    /// Delete the i-th line.
    DeleteLine(Index),
    /// Append a copy of the i-th line.
    DuplicateLine(Index),
    /// Insert text at byte i.
    Insert(Index, String),
    /// Delete n bytes at byte i.
    Delete(Index, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    let q = 30;
    let value = prop_oneof![
        4 => float(q, -2.0, 20.0),
        2 => count(q, 0, 20),
        1 => junk(),
    ];
    let text = prop_oneof![
        3 => "[\\[\\]{}=\",.\\n#0-9a-z_ +-]{1,4}",
        1 => select(KEYS.to_vec()).prop_map(|k| format!("\n{k} = 1\n")),
    ];
    prop_oneof![
        8 => (any::<Index>(), value).prop_map(|(i, v)| Edit::Number(i, v)),
        2 => any::<Index>().prop_map(Edit::DeleteLine),
        2 => any::<Index>().prop_map(Edit::DuplicateLine),
        1 => (any::<Index>(), text).prop_map(|(i, s)| Edit::Insert(i, s)),
        1 => (any::<Index>(), 1usize..6).prop_map(|(i, n)| Edit::Delete(i, n)),
    ]
}

/// The byte offset nearest below `i` that starts a character.
fn floor_char(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Byte ranges of the numbers in `s` (runs of digits, `.`, `e` and signs that start with a
/// digit or a sign).
fn numbers(s: &str) -> Vec<std::ops::Range<usize>> {
    let b = s.as_bytes();
    let mut out = vec![];
    let mut i = 0;
    while i < b.len() {
        let starts =
            b[i].is_ascii_digit() || (b[i] == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit));
        if starts && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) {
            let a = i;
            i += 1;
            while i < b.len() && (b[i].is_ascii_digit() || b".e-+".contains(&b[i])) {
                i += 1;
            }
            out.push(a..i);
        } else {
            i += 1;
        }
    }
    out
}

fn apply(mut s: String, edits: &[Edit]) -> String {
    for e in edits {
        let lines: Vec<String> = s.lines().map(String::from).collect();
        match e {
            Edit::Number(i, v) => {
                let n = numbers(&s);
                if !n.is_empty() {
                    s.replace_range(n[i.index(n.len())].clone(), v);
                }
            }
            Edit::DeleteLine(i) if !lines.is_empty() => {
                let k = i.index(lines.len());
                s = lines
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != k)
                    .map(|(_, l)| format!("{l}\n"))
                    .collect();
            }
            Edit::DuplicateLine(i) if !lines.is_empty() => {
                s = format!("{s}{}\n", lines[i.index(lines.len())]);
            }
            Edit::Insert(i, t) => {
                let a = floor_char(&s, i.index(s.len() + 1));
                s.insert_str(a, t);
            }
            Edit::Delete(i, n) => {
                let a = floor_char(&s, i.index(s.len() + 1));
                let b = floor_char(&s, (a + n).min(s.len()));
                s.replace_range(a..b, "");
            }
            _ => {}
        }
    }
    s
}

/// Small valid cases with one to three random edits.
pub(super) fn edited_case() -> S {
    (select(SEEDS.to_vec()), vec(edit(), 1..4))
        .prop_map(|(seed, edits)| apply(seed.to_string(), &edits))
        .boxed()
}

/// Random bytes (read as text, invalid UTF-8 replaced) and random `key = value` lines under
/// random table headers.
pub(super) fn noise() -> S {
    let q = 30;
    let line = prop_oneof![
        3 => (select(KEYS.to_vec()), prop_oneof![float(q, -5.0, 5.0), junk(), count(q, 0, 20)])
            .prop_map(|(k, v)| format!("{k} = {v}\n")),
        1 => (select(KEYS.to_vec()), select(KEYS.to_vec())).prop_map(|(a, b)| format!("[{a}.{b}]\n")),
        1 => select(KEYS.to_vec()).prop_map(|k| format!("[{k}]\n")),
        1 => select(KEYS.to_vec()).prop_map(|k| format!("[[{k}]]\n")),
    ];
    prop_oneof![
        1 => vec(any::<u8>(), 0..300).prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        1 => "[ -~\\n]{0,200}",
        2 => vec(line, 0..16).prop_map(|l| l.concat()),
    ]
    .boxed()
}
