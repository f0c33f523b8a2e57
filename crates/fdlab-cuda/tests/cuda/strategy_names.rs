//! Strategy names: `Display` and the parser agree on every strategy, the parser refuses what
//! `Display` would not print (each refusal with a valid nearest name), and `fdlab strategies`
//! lists what the parser reads.

use fdlab_cuda::{families, strategies_help, OptionSyntax, SmCopy, Strategy, StrategyError};
use rand::{rngs::StdRng, Rng, SeedableRng};

const RESULT_NAMES: &str = include_str!("../data/result_strategies.txt");

/// The error for `name`, whose nearest name must itself parse back to itself.
fn refused(name: &str) -> StrategyError {
    let e = name
        .parse::<Strategy>()
        .expect_err(&format!("{name} was accepted"));
    let nearest: Strategy = e
        .nearest()
        .parse()
        .unwrap_or_else(|e2| panic!("{name}: nearest '{}' does not parse: {e2}", e.nearest()));
    assert_eq!(nearest.to_string(), e.nearest());
    e
}

#[test]
fn junk_suffix_is_rejected() {
    let e = refused("zmarch-32x4-v1-c64-u2-r2-foo");
    assert!(matches!(e, StrategyError::UnknownOption { ref part, .. } if part == "foo"));
    assert_eq!(e.nearest(), "zmarch-32x4-v1-c64-u2-r2");
}

#[test]
fn bad_option_number_is_rejected() {
    let e = refused("smarch-64x4-r2-c64-p4-lx");
    assert!(matches!(e, StrategyError::UnknownOption { ref part, .. } if part == "lx"));
    assert_eq!(e.nearest(), "smarch-64x4-r2-c64-p4");
    // A number out of range is clamped in the suggestion.
    let e = refused("smarch-64x4-r2-c64-p4-l7");
    assert!(matches!(e, StrategyError::OutOfRange { .. }), "{e}");
    assert_eq!(e.nearest(), "smarch-64x4-r2-c64-p4-l2");
    // Past u32: refused, not wrapped.
    refused("smarch-64x4-r2-c64-p4-l4294967297");
}

#[test]
fn huge_block_is_rejected() {
    let e = refused("naive-1024x4194305x1");
    assert!(e.to_string().contains("1024"), "{e}");
    // The product overflows u32: threads() saturates instead of wrapping to a small count.
    let s = Strategy::Naive {
        block: [1024, 4194305, 1],
    };
    assert_eq!(s.threads(), u32::MAX);
    let g = fdlab_core::Grid::unit(&[8, 8, 8]).unwrap();
    let lap = [fdlab_core::Stencil::laplacian(&g, 2).unwrap()];
    assert!(s.supports(&lap).is_err());
    // CUDA's per-axis limits: z at most 64 even when the product fits.
    refused("naive-1x1x128");
    refused("ldg-0x4x2");
    assert!("naive-1x1x64".parse::<Strategy>().is_ok());
}

#[test]
fn non_canonical_spellings_are_refused_with_the_canonical_one() {
    for (bad, good) in [
        ("smarch-64x4-r2-c64-p4-v1", "smarch-64x4-r2-c64-p4"),
        ("smarch-64x4-r2-c64-p4-l1", "smarch-64x4-r2-c64-p4-l"),
        ("zmarch-32x4-v1-c064-u2-r2", "zmarch-32x4-v1-c64-u2-r2"),
    ] {
        let e = refused(bad);
        assert!(
            matches!(e, StrategyError::NotCanonical { .. }),
            "{bad}: {e}"
        );
        assert_eq!(e.nearest(), good);
    }
    for bad in [
        "",
        "-",
        "zmarch-",
        "zmarch-32x4",
        "zmarch-32x4-c64-v1-u2-r2",
        "zmarch-32x4-v1-c64-u2-r2-cs-cs",
        "zmarch-32x4x1-v1-c64-u2-r2",
        "zmarch-+32x4-v1-c64-u2-r2",
        "smarch-64x4-r2-c64-p4-b-l",
        "smarch-64x4-r2-c64-p4-l-b",
        "smarch-62x4-r2-c64-p4",
        "qmarch-32x8-r2-c64-v2-t0",
        "qmarch-32x8-r2-c64-v2-ta",
        "qmarch-32x8-r2-c64-v2-x2",
        "qmarch-32x8-r2-c64-v2-w2",
        "qmarch-32x8-r2-c64-v2-t2a-w2a",
        "pencil-64x4-t64x3",
        "pencil-64x4-t64x4-w-w",
        "ppt0-256x1x1",
        "ppt-256x1x1",
        "shared-32x8-x",
        "naive-32x4x2 ",
        "NAIVE-32x4x2",
        "warp-drive",
    ] {
        refused(bad);
    }
}

#[test]
fn missing_options_are_suggested_at_their_default() {
    for (bad, good) in [
        ("zmarch-32x4-v1-c64-r2", "zmarch-32x4-v1-c64-u2-r2"),
        ("zmarch-v1-c64-u2-r2", "zmarch-32x4-v1-c64-u2-r2"),
        ("smarch-64x4-r2-c64", "smarch-64x4-r2-c64-p4"),
        ("pencil-64x4", "pencil-64x4-t64x4"),
    ] {
        let e = refused(bad);
        assert!(
            matches!(e, StrategyError::MissingOption { .. }),
            "{bad}: {e}"
        );
        assert_eq!(e.nearest(), good, "{bad}");
    }
}

#[test]
fn unknown_families_suggest_the_closest() {
    let e = refused("smrach-64x4-r2-c64-p4");
    assert!(matches!(e, StrategyError::UnknownFamily { .. }));
    assert_eq!(e.nearest(), Strategy::SMARCH.to_string());
    let e = refused("qmarc-32x8-r2-c64-v2");
    assert!(e.nearest().starts_with("qmarch-"), "{e}");
}

#[test]
fn conformance_strategies_round_trip_and_are_valid() {
    let set = Strategy::conformance_set();
    assert!(set.len() > 40);
    for s in set {
        s.validate().unwrap();
        assert_eq!(s.to_string().parse::<Strategy>(), Ok(s));
    }
}

#[test]
fn every_strategy_name_in_the_results_parses_back_to_itself() {
    let mut n = 0;
    for name in RESULT_NAMES.lines().filter(|l| !l.is_empty()) {
        let s: Strategy = name.parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.to_string(), name);
        n += 1;
    }
    assert!(n > 900, "{n} names");
}

/// A random value of `lo..=hi`, usually small, sometimes the bounds.
fn pick(r: &mut StdRng, lo: u32, hi: u32) -> u32 {
    match r.gen_range(0..8) {
        0 => lo,
        1 => hi,
        _ => r.gen_range(lo..=hi.min(lo + 40)),
    }
}

fn random_strategy(r: &mut StdRng) -> Strategy {
    let vec = [1, 2, 4][r.gen_range(0..3)];
    let tile = |r: &mut StdRng| {
        let bx = pick(r, 1, 1024);
        (bx, pick(r, 1, 1024 / bx))
    };
    match r.gen_range(0..8) {
        0 => {
            let bx = pick(r, 1, 1024);
            let by = pick(r, 1, 1024 / bx);
            let block = [bx, by, pick(r, 1, (1024 / (bx * by)).min(64))];
            match r.gen_range(0..4) {
                0 => Strategy::Naive { block },
                1 => Strategy::ReadOnly { block },
                2 => Strategy::Texture { block },
                _ => Strategy::PointsPerThread {
                    block,
                    points: pick(r, 1, 64),
                },
            }
        }
        1 => {
            let (bx, by) = tile(r);
            Strategy::SharedTile { bx, by }
        }
        2 => {
            let (a, c) = tile(r);
            Strategy::Pencil {
                length: a * pick(r, 1, 4),
                lines: c * pick(r, 1, 4),
                threads_along: a,
                threads_across: c,
                window: r.r#gen(),
            }
        }
        3 => {
            let (bx, by) = tile(r);
            Strategy::ZMarch {
                bx,
                by,
                vec,
                chunk: pick(r, 1, 65536),
                streaming: r.r#gen(),
                unroll: pick(r, 1, 8),
                rows: pick(r, 1, 8),
            }
        }
        4 | 5 => {
            let bx = 4 * pick(r, 1, 256);
            Strategy::SMarch {
                bx,
                by: pick(r, 1, 1024 / bx),
                rows: pick(r, 1, 8),
                chunk: pick(r, 1, 65536),
                depth: pick(r, 1, 8),
                vec,
                copy: [SmCopy::Async, SmCopy::Bulk, SmCopy::Registers(1)][r.gen_range(0..3)],
                edge_reads: r.r#gen(),
            }
        }
        _ => {
            let (bx, by) = tile(r);
            let tma = if r.r#gen() { 0 } else { pick(r, 1, 8) };
            let accumulate = tma > 0 && r.r#gen();
            Strategy::QMarch {
                bx,
                by,
                rows: pick(r, 1, 8),
                chunk: pick(r, 1, 65536),
                vec,
                tma,
                accumulate,
                split: accumulate && r.r#gen(),
                unroll: if accumulate { pick(r, 1, 8) } else { 1 },
                streaming: r.r#gen(),
            }
        }
    }
}

#[test]
fn random_valid_strategies_round_trip() {
    let mut r = StdRng::seed_from_u64(7);
    for _ in 0..20_000 {
        let s = random_strategy(&mut r);
        s.validate().unwrap_or_else(|e| panic!("{s:?}: {e}"));
        let name = s.to_string();
        assert_eq!(name.parse::<Strategy>(), Ok(s), "{name}");
    }
}

#[test]
fn random_edits_of_valid_names_parse_to_themselves_or_are_refused() {
    // Any string the parser accepts is printed back unchanged (aliases apart).
    let mut r = StdRng::seed_from_u64(11);
    let alphabet = b"0123456789x-abceltvwrpcus";
    for _ in 0..20_000 {
        let mut name = random_strategy(&mut r).to_string().into_bytes();
        for _ in 0..r.gen_range(1..3) {
            let i = r.gen_range(0..name.len());
            match r.gen_range(0..3) {
                0 => name[i] = alphabet[r.gen_range(0..alphabet.len())],
                1 => {
                    name.remove(i);
                }
                _ => name.insert(i, alphabet[r.gen_range(0..alphabet.len())]),
            }
            if name.is_empty() {
                break;
            }
        }
        let name = String::from_utf8(name).unwrap();
        match name.parse::<Strategy>() {
            // Aliases (no digits) are the only names printed otherwise.
            Ok(s) => assert!(
                s.to_string() == name || !name.bytes().any(|b| b.is_ascii_digit()),
                "{name} parsed as {s}"
            ),
            Err(e) => {
                let near: Strategy = e
                    .nearest()
                    .parse()
                    .unwrap_or_else(|e2| panic!("{name}: nearest '{}' refused: {e2}", e.nearest()));
                assert!(near.validate().is_ok());
            }
        }
    }
}

#[test]
fn the_help_lists_every_family_and_option_the_parser_reads() {
    let help = strategies_help();
    for f in families() {
        assert!(help.contains(f.form), "{}", f.name);
        assert!(help.contains(f.summary), "{}", f.name);
        assert!(!f.options.is_empty());
        for o in f.options {
            assert!(help.contains(o.meaning), "{} {}", f.name, o.key);
        }
        // The default parses, is of this family, and every option key appears in the form.
        let d = f.default.to_string();
        assert!(d.starts_with(f.name), "{d}");
        assert_eq!(d.parse::<Strategy>(), Ok(f.default));
        for o in f.options.iter().filter(|o| o.syntax != OptionSyntax::Head) {
            assert!(
                f.form.contains(&format!("-{}", o.key)),
                "{} {}",
                f.name,
                o.key
            );
        }
    }
    assert!(families().len() >= 9);
}
