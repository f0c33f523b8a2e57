//! A strategy as its family's option values, and back: the one mapping between the typed
//! [`Strategy`] and the table that `Display`, the parser and validation share.

use super::table::{family, FamilyDoc, OptionSyntax};
use super::{SmCopy, Strategy};
use std::fmt;

/// The value of one option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Value {
    /// Sizes (`64x4`).
    Dims(Vec<u64>),
    /// A number, with the `a` switch for [`OptionSyntax::NumberA`].
    Num(u64, bool),
    /// A flag that is on.
    On,
}

/// A family and its options' values, in table order (`None`: left out).
pub(super) struct Form {
    pub(super) family: &'static FamilyDoc,
    pub(super) values: Vec<Option<Value>>,
}

fn fam(name: &str) -> &'static FamilyDoc {
    match family(name) {
        Some(f) => f,
        None => unreachable!("family {name} is in the table"),
    }
}

fn dims(d: &[u32]) -> Option<Value> {
    Some(Value::Dims(d.iter().map(|&v| v as u64).collect()))
}

fn num(v: u32) -> Option<Value> {
    Some(Value::Num(v as u64, false))
}

fn flag(on: bool) -> Option<Value> {
    on.then_some(Value::On)
}

impl Form {
    /// The option values of `s`, those at their default left out.
    pub(super) fn of(s: &Strategy) -> Form {
        let (name, values) = match *s {
            Strategy::Naive { block } => ("naive", vec![dims(&block)]),
            Strategy::ReadOnly { block } => ("ldg", vec![dims(&block)]),
            Strategy::Texture { block } => ("texture", vec![dims(&block)]),
            Strategy::PointsPerThread { block, points } => ("ppt", vec![num(points), dims(&block)]),
            Strategy::SharedTile { bx, by } => ("shared", vec![dims(&[bx, by])]),
            Strategy::Pencil {
                length,
                lines,
                threads_along,
                threads_across,
                window,
            } => (
                "pencil",
                vec![
                    dims(&[length, lines]),
                    dims(&[threads_along, threads_across]),
                    flag(window),
                ],
            ),
            Strategy::ZMarch {
                bx,
                by,
                vec,
                chunk,
                streaming,
                unroll,
                rows,
            } => (
                "zmarch",
                vec![
                    dims(&[bx, by]),
                    num(vec),
                    num(chunk),
                    num(unroll),
                    num(rows),
                    flag(streaming),
                ],
            ),
            Strategy::SMarch {
                bx,
                by,
                rows,
                chunk,
                depth,
                vec,
                copy,
                edge_reads,
            } => (
                "smarch",
                vec![
                    dims(&[bx, by]),
                    num(rows),
                    num(chunk),
                    num(depth),
                    if vec == 1 { None } else { num(vec) },
                    match copy {
                        SmCopy::Registers(n) => num(n),
                        _ => None,
                    },
                    flag(copy == SmCopy::Bulk),
                    flag(edge_reads),
                ],
            ),
            Strategy::QMarch {
                bx,
                by,
                rows,
                chunk,
                vec,
                tma,
                accumulate,
                split,
                unroll,
                streaming,
            } => {
                let copies = (tma > 0).then_some(Value::Num(tma as u64, accumulate));
                let (t, w) = if split {
                    (None, copies)
                } else {
                    (copies, None)
                };
                (
                    "qmarch",
                    vec![
                        dims(&[bx, by]),
                        num(rows),
                        num(chunk),
                        num(vec),
                        t,
                        w,
                        if unroll > 1 { num(unroll) } else { None },
                        flag(streaming),
                    ],
                )
            }
        };
        Form {
            family: fam(name),
            values,
        }
    }

    fn dims<const N: usize>(&self, i: usize) -> [u32; N] {
        let mut out = [0; N];
        if let Some(Value::Dims(d)) = &self.values[i] {
            for (o, &v) in out.iter_mut().zip(d) {
                *o = v as u32;
            }
        }
        out
    }

    fn num(&self, i: usize, absent: u32) -> u32 {
        match self.values[i] {
            Some(Value::Num(v, _)) => v as u32,
            Some(Value::On) => 1,
            _ => absent,
        }
    }

    fn a(&self, i: usize) -> bool {
        matches!(self.values[i], Some(Value::Num(_, true)))
    }

    fn on(&self, i: usize) -> bool {
        self.values[i].is_some()
    }

    /// The strategy these values describe (values already range-checked, required ones
    /// present); the error says which options contradict each other.
    pub(super) fn strategy(&self) -> Result<Strategy, String> {
        Ok(match self.family.name {
            "naive" => Strategy::Naive {
                block: self.dims(0),
            },
            "ldg" => Strategy::ReadOnly {
                block: self.dims(0),
            },
            "texture" => Strategy::Texture {
                block: self.dims(0),
            },
            "ppt" => Strategy::PointsPerThread {
                points: self.num(0, 1),
                block: self.dims(1),
            },
            "shared" => {
                let [bx, by] = self.dims(0);
                Strategy::SharedTile { bx, by }
            }
            "pencil" => {
                let [length, lines] = self.dims(0);
                let [threads_along, threads_across] = self.dims(1);
                Strategy::Pencil {
                    length,
                    lines,
                    threads_along,
                    threads_across,
                    window: self.on(2),
                }
            }
            "zmarch" => {
                let [bx, by] = self.dims(0);
                Strategy::ZMarch {
                    bx,
                    by,
                    vec: self.num(1, 1),
                    chunk: self.num(2, 1),
                    unroll: self.num(3, 1),
                    rows: self.num(4, 1),
                    streaming: self.on(5),
                }
            }
            "smarch" => self.smarch()?,
            "qmarch" => self.qmarch()?,
            other => unreachable!("family {other} has a constructor"),
        })
    }

    fn smarch(&self) -> Result<Strategy, String> {
        let [bx, by] = self.dims(0);
        let copy = match (self.on(5), self.on(6)) {
            (true, true) => return Err("-l and -b are two ways of copying planes; pick one".into()),
            (true, false) => SmCopy::Registers(self.num(5, 1)),
            (false, true) => SmCopy::Bulk,
            (false, false) => SmCopy::Async,
        };
        Ok(Strategy::SMarch {
            bx,
            by,
            rows: self.num(1, 1),
            chunk: self.num(2, 1),
            depth: self.num(3, 1),
            vec: self.num(4, 1),
            copy,
            edge_reads: self.on(7),
        })
    }

    fn qmarch(&self) -> Result<Strategy, String> {
        let [bx, by] = self.dims(0);
        if self.on(4) && self.on(5) {
            return Err("-t and -w are two kinds of TMA slots; pick one".into());
        }
        let split = self.on(5);
        if split && !self.a(5) {
            return Err("split slots need the partial-sum queue: write -wNa".into());
        }
        let copies = if split { 5 } else { 4 };
        let unroll = self.num(6, 1);
        if unroll > 1 && !self.a(copies) {
            return Err("-u writes out the partial-sum march: it needs -tNa or -wNa".into());
        }
        Ok(Strategy::QMarch {
            bx,
            by,
            rows: self.num(1, 1),
            chunk: self.num(2, 1),
            vec: self.num(3, 1),
            tma: self.num(copies, 0),
            accumulate: self.a(copies),
            split,
            unroll,
            streaming: self.on(7),
        })
    }
}

impl Form {
    /// Option `i` as a name writes it (`None` when left out or part of the family's name).
    pub(super) fn token(&self, i: usize) -> Option<String> {
        let o = &self.family.options[i];
        Some(match (o.syntax, self.values[i].as_ref()?) {
            (OptionSyntax::Head, _) => return None,
            (_, Value::Dims(d)) => {
                let d: Vec<String> = d.iter().map(|v| v.to_string()).collect();
                format!("{}{}", o.key, d.join("x"))
            }
            (OptionSyntax::CountOrOne, Value::Num(1, _)) | (_, Value::On) => o.key.to_string(),
            (_, Value::Num(n, a)) => format!("{}{n}{}", o.key, if *a { "a" } else { "" }),
        })
    }
}

impl fmt::Display for Form {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut head = self.family.name.to_string();
        let mut parts = vec![];
        for (i, (o, v)) in self.family.options.iter().zip(&self.values).enumerate() {
            if let (OptionSyntax::Head, Some(Value::Num(n, _))) = (o.syntax, v) {
                head = format!("{head}{n}");
            }
            parts.extend(self.token(i));
        }
        f.write_str(&head)?;
        for p in parts {
            write!(f, "-{p}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Form::of(self).fmt(f)
    }
}
