//! The strict parser: a name is accepted only as `Display` prints it (or as one of the short
//! aliases); anything else is refused with what was wrong and the nearest valid name.

use super::form::{Form, Value};
use super::table::{families, family, FamilyDoc, OptionSyntax, ALIASES};
use super::Strategy;

/// Why a strategy name was refused. Each variant carries the nearest valid name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StrategyError {
    /// The first word names no family.
    #[error("unknown strategy family '{family}' in '{name}'; nearest valid name: '{nearest}' (`fdlab strategies` lists every family)")]
    UnknownFamily {
        /// The name given.
        name: String,
        /// Its first word.
        family: String,
        /// The closest family's default strategy.
        nearest: String,
    },
    /// A part of the name is no option of its family at that place.
    #[error("'{name}': {family} has no option '{part}' there (options go in the order of `fdlab strategies`); nearest valid name: '{nearest}'")]
    UnknownOption {
        /// The name given.
        name: String,
        /// The family.
        family: &'static str,
        /// The part not understood.
        part: String,
        /// The name without that part, or the family's default.
        nearest: String,
    },
    /// An option every name of the family gives is missing.
    #[error(
        "'{name}': {family} needs its option '{key}' ({meaning}); nearest valid name: '{nearest}'"
    )]
    MissingOption {
        /// The name given.
        name: String,
        /// The family.
        family: &'static str,
        /// The missing option's key (empty for the block or tile).
        key: &'static str,
        /// What the option means.
        meaning: &'static str,
        /// The family's default strategy.
        nearest: String,
    },
    /// An option's value is outside its range.
    #[error(
        "'{name}': option '{part}' is out of range ({range}); nearest valid name: '{nearest}'"
    )]
    OutOfRange {
        /// The name given.
        name: String,
        /// The option as written.
        part: String,
        /// The values it takes.
        range: String,
        /// The name with the value clamped into range, or the family's default.
        nearest: String,
    },
    /// The options are each valid but not together, or the block exceeds CUDA's limits.
    #[error("'{name}': {reason}; nearest valid name: '{nearest}'")]
    Invalid {
        /// The name given.
        name: String,
        /// What is wrong.
        reason: String,
        /// The family's default strategy.
        nearest: String,
    },
    /// The name describes a valid strategy but is not written the way `Display` writes it
    /// (a default spelled out, a leading zero).
    #[error("'{name}' is written '{nearest}'")]
    NotCanonical {
        /// The name given.
        name: String,
        /// The same strategy as `Display` writes it.
        nearest: String,
    },
}

impl StrategyError {
    /// The nearest valid name.
    pub fn nearest(&self) -> &str {
        match self {
            StrategyError::UnknownFamily { nearest, .. }
            | StrategyError::UnknownOption { nearest, .. }
            | StrategyError::MissingOption { nearest, .. }
            | StrategyError::OutOfRange { nearest, .. }
            | StrategyError::Invalid { nearest, .. }
            | StrategyError::NotCanonical { nearest, .. } => nearest,
        }
    }
}

impl std::str::FromStr for Strategy {
    type Err = StrategyError;
    /// Parses exactly the names [`Strategy`]'s `Display` writes, and the short aliases that
    /// `fdlab strategies` lists (`naive`, `pencil-long`, `amd-ppt`, …).
    fn from_str(s: &str) -> Result<Self, StrategyError> {
        if let Some((_, st)) = ALIASES.iter().find(|(a, _)| *a == s) {
            return Ok(*st);
        }
        parse(s)
    }
}

fn parse(name: &str) -> Result<Strategy, StrategyError> {
    let parts: Vec<&str> = name.split('-').collect();
    let (fam, head_num) = find_family(name, parts[0])?;
    let default = fam.default.to_string();
    let mut values: Vec<Option<Value>> = vec![None; fam.options.len()];
    let mut next = 0;
    if let Some(n) = head_num {
        values[0] = Some(Value::Num(n, false));
        next = 1;
    }
    for (i, part) in parts.iter().enumerate().skip(1) {
        let found = (next..fam.options.len())
            .find_map(|j| read(fam.options[j].syntax, fam.options[j].key, part).map(|v| (j, v)));
        let Some((j, v)) = found else {
            return Err(StrategyError::UnknownOption {
                name: name.into(),
                family: fam.name,
                part: part.to_string(),
                nearest: without(&parts, i).unwrap_or(default),
            });
        };
        if let Some(k) = (next..j).find(|&k| fam.options[k].default.is_none()) {
            return Err(missing(name, fam, k, with_default(&parts, i, fam, k)));
        }
        let o = &fam.options[j];
        let bad = match &v {
            Value::Dims(d) => d.iter().position(|&x| !o.range.contains(x)),
            Value::Num(n, _) => (!o.range.contains(*n)).then_some(0),
            Value::On => None,
        };
        if let Some(k) = bad {
            return Err(StrategyError::OutOfRange {
                name: name.into(),
                part: part.to_string(),
                range: o.range.to_string(),
                nearest: clamped(&parts, i, fam, j, &v, k).unwrap_or(default),
            });
        }
        values[j] = Some(v);
        next = j + 1;
    }
    if let Some(k) = (next..fam.options.len()).find(|&k| fam.options[k].default.is_none()) {
        return Err(missing(
            name,
            fam,
            k,
            with_default(&parts, parts.len(), fam, k),
        ));
    }
    let form = Form {
        family: fam,
        values,
    };
    let invalid = |reason: String| StrategyError::Invalid {
        name: name.into(),
        reason,
        nearest: fam.default.to_string(),
    };
    let strategy = form.strategy().map_err(invalid)?;
    strategy.validate().map_err(invalid)?;
    let canonical = strategy.to_string();
    if canonical != name {
        return Err(StrategyError::NotCanonical {
            name: name.into(),
            nearest: canonical,
        });
    }
    Ok(strategy)
}

fn missing(
    name: &str,
    fam: &'static FamilyDoc,
    k: usize,
    nearest: Option<String>,
) -> StrategyError {
    let o = &fam.options[k];
    StrategyError::MissingOption {
        name: name.into(),
        family: fam.name,
        key: o.key,
        meaning: o.meaning,
        nearest: nearest.unwrap_or_else(|| fam.default.to_string()),
    }
}

/// The name with option `k`, at the family default's value, inserted before part `i`, if
/// that parses.
fn with_default(parts: &[&str], i: usize, fam: &FamilyDoc, k: usize) -> Option<String> {
    let token = Form::of(&fam.default).token(k)?;
    let mut p: Vec<&str> = parts.to_vec();
    p.insert(i.min(p.len()), &token);
    let s = p.join("-");
    s.parse::<Strategy>().ok().map(|st| st.to_string())
}

/// The family a name's first word names, and the number in it for `pptN`.
fn find_family(name: &str, head: &str) -> Result<(&'static FamilyDoc, Option<u64>), StrategyError> {
    if let Some(f) = family(head)
        && f.options.first().map(|o| o.syntax) != Some(OptionSyntax::Head)
    {
        return Ok((f, None));
    }
    for f in families() {
        if let Some(o) = f.options.first().filter(|o| o.syntax == OptionSyntax::Head)
            && let Some(n) = head.strip_prefix(o.key).and_then(number)
        {
            return Ok((f, Some(n)));
        }
    }
    let nearest = families()
        .iter()
        .min_by_key(|f| edit_distance(head, f.name))
        .map(|f| f.default.to_string())
        .unwrap_or_default();
    Err(StrategyError::UnknownFamily {
        name: name.into(),
        family: head.into(),
        nearest,
    })
}

/// Digits only (no sign, no spaces), as a number; `None` when empty, not digits or past u64.
fn number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `part` read as an option written with `syntax` and `key`, if it is one.
fn read(syntax: OptionSyntax, key: &str, part: &str) -> Option<Value> {
    let rest = part.strip_prefix(key)?;
    match syntax {
        OptionSyntax::Dims(n) => {
            let d: Vec<u64> = rest.split('x').map(number).collect::<Option<_>>()?;
            (d.len() == n).then_some(Value::Dims(d))
        }
        OptionSyntax::Number => number(rest).map(|n| Value::Num(n, false)),
        OptionSyntax::Flag => rest.is_empty().then_some(Value::On),
        OptionSyntax::CountOrOne if rest.is_empty() => Some(Value::Num(1, false)),
        OptionSyntax::CountOrOne => number(rest).map(|n| Value::Num(n, false)),
        OptionSyntax::NumberA => match rest.strip_suffix('a') {
            Some(n) => number(n).map(|n| Value::Num(n, true)),
            None => number(rest).map(|n| Value::Num(n, false)),
        },
        OptionSyntax::Head => None,
    }
}

/// The name without its `i`-th part, if that parses.
fn without(parts: &[&str], i: usize) -> Option<String> {
    let mut p = parts.to_vec();
    p.remove(i);
    let s = p.join("-");
    s.parse::<Strategy>().ok().map(|st| st.to_string())
}

/// The name with element `k` of option `j`'s value clamped into range, if that parses.
fn clamped(
    parts: &[&str],
    i: usize,
    fam: &FamilyDoc,
    j: usize,
    v: &Value,
    k: usize,
) -> Option<String> {
    let o = &fam.options[j];
    let text = match v {
        Value::Dims(d) => {
            let d: Vec<String> = d
                .iter()
                .enumerate()
                .map(|(e, &x)| {
                    if e == k {
                        o.range.clamp(x).to_string()
                    } else {
                        x.to_string()
                    }
                })
                .collect();
            format!("{}{}", o.key, d.join("x"))
        }
        Value::Num(n, a) => format!(
            "{}{}{}",
            o.key,
            o.range.clamp(*n),
            if *a { "a" } else { "" }
        ),
        Value::On => return None,
    };
    let mut p: Vec<String> = parts.iter().map(|s| s.to_string()).collect();
    p[i] = text;
    p.join("-").parse::<Strategy>().ok().map(|s| s.to_string())
}

/// Levenshtein distance, for the nearest family name.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = (diag + usize::from(ca != cb)).min(up + 1).min(row[j] + 1);
            diag = up;
        }
    }
    row[b.len()]
}
