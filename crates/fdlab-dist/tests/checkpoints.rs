//! Checkpoints of split runs: the state a split CPU stepper saves is byte for byte the state
//! the one-process stepper saves at that step, and a state saved on any number of ranks
//! (one included) resumes on any other to the uninterrupted run's bits.

use fdlab_core::Scalar;
use fdlab_dist::cases::{self, noise, wave};
use fdlab_dist::halo::Point;
use fdlab_dist::{decompose, DistStepper, LocalTransport};
use fdlab_solvers::setup::Setup;
use fdlab_solvers::stepper::StatePart;
use fdlab_solvers::{HeatCpu, Stepper, WaveBoundary, WaveCpu};

/// Steps of every run, and the step the checkpoint is taken at.
const STEPS: usize = 20;
const AT: usize = 9;

fn one<T: Scalar>(setup: &Setup) -> Box<dyn Stepper> {
    match setup {
        Setup::Heat(h) => Box::new(HeatCpu::<T>::new(h).unwrap()),
        Setup::Wave(w) => Box::new(WaveCpu::<T>::new(w).unwrap()),
        _ => unreachable!("only heat and wave are decomposed"),
    }
}

/// The same material with other fields: a stepper built from it holds nothing of the run
/// it resumes until its state is restored.
fn poisoned(setup: &Setup) -> Setup {
    let mut s = setup.clone();
    match &mut s {
        Setup::Heat(h) => h.initial = noise(h.initial.len(), 77),
        Setup::Wave(w) => {
            w.initial = noise(w.initial.len(), 78);
            w.previous = Some(noise(w.initial.len(), 79));
        }
        _ => {}
    }
    s
}

/// What the one-process run gives: its state at step AT, and its final field, traces and
/// state.
struct Reference {
    at: Vec<StatePart>,
    field: Vec<f64>,
    traces: Vec<Vec<f64>>,
    end: Vec<StatePart>,
}

fn reference<T: Scalar>(setup: &Setup) -> Reference {
    let mut s = one::<T>(setup);
    s.advance(AT).unwrap();
    let at = s.save_state().unwrap();
    s.advance(STEPS - AT).unwrap();
    Reference {
        at,
        field: s.field().unwrap(),
        traces: s.traces().to_vec(),
        end: s.save_state().unwrap(),
    }
}

/// Run `work` on one thread per rank of `dims`, each with its stepper in precision `T`, and
/// return rank 0's result.
fn on_ranks<T, R, F>(setup: &Setup, dims: [usize; 3], work: F) -> R
where
    T: Scalar + Point,
    [T; 3]: Point,
    R: Send + 'static,
    F: Fn(DistStepper) -> R + Send + Sync + Clone + 'static,
{
    let ranks = dims.iter().product();
    let d = decompose(setup, ranks, Some(dims)).unwrap();
    let handles: Vec<_> = LocalTransport::group(ranks)
        .into_iter()
        .map(|t| {
            let (setup, d, work) = (setup.clone(), d.clone(), work.clone());
            std::thread::spawn(move || work(DistStepper::new::<T>(&setup, d, Box::new(t)).unwrap()))
        })
        .collect();
    let mut out: Vec<R> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    out.swap_remove(0)
}

fn assert_same_state(what: &str, got: &[StatePart], want: &[StatePart]) {
    let names = |p: &[StatePart]| p.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(got), names(want), "{what}: state parts");
    for ((name, a), (_, b)) in got.iter().zip(want) {
        assert_eq!(a.len(), b.len(), "{what}: part {name} size");
        let differ = a.chunks(8).zip(b.chunks(8)).filter(|(x, y)| x != y).count();
        assert_eq!(differ, 0, "{what}: part {name}: {differ} values differ");
    }
}

/// A split run saves at step AT on `save_on` (asserted equal to the one-process state);
/// resumes on each of `resume_on` from it and from the one-process state, to the one-process
/// run's field, traces and final state. A one-process stepper resumes the split state too.
fn check<T: Scalar + Point>(
    what: &str,
    setup: &Setup,
    save_on: &[[usize; 3]],
    resume_on: &[[usize; 3]],
) where
    [T; 3]: Point,
{
    let want = reference::<T>(setup);
    assert!(want.field.iter().all(|v| v.is_finite()));
    let split = |dims| {
        on_ranks::<T, _, _>(setup, dims, move |mut s: DistStepper| {
            s.advance(4).unwrap();
            s.advance(AT - 4).unwrap();
            s.save_state().unwrap()
        })
    };
    let mut states = vec![("1 rank".to_string(), want.at.clone())];
    for &dims in save_on {
        let state = split(dims);
        assert_same_state(&format!("{what}: saved on {dims:?}"), &state, &want.at);
        states.push((format!("{dims:?}"), state));
    }
    let poison = poisoned(setup);
    for (from, state) in &states {
        for &dims in resume_on {
            let state = state.clone();
            let (field, traces, end) =
                on_ranks::<T, _, _>(&poison, dims, move |mut s: DistStepper| {
                    s.restore_state(AT as u64, &state).unwrap();
                    s.advance(STEPS - AT).unwrap();
                    (
                        s.field().unwrap(),
                        s.traces().to_vec(),
                        s.save_state().unwrap(),
                    )
                });
            let how = format!("{what}: saved on {from}, resumed on {dims:?}");
            let differ = field
                .iter()
                .zip(&want.field)
                .filter(|(a, b)| a != b)
                .count();
            assert_eq!((field.len(), differ), (want.field.len(), 0), "{how}: field");
            assert_eq!(traces, want.traces, "{how}: traces");
            assert_same_state(&how, &end, &want.end);
        }
        let mut s = one::<T>(&poison);
        s.restore_state(AT as u64, state).unwrap();
        s.advance(STEPS - AT).unwrap();
        assert_eq!(
            s.field().unwrap(),
            want.field,
            "{what}: {from} on one stepper"
        );
    }
}

fn cpml(thickness: usize) -> WaveBoundary {
    WaveBoundary::Cpml {
        thickness,
        f0: 0.01,
    }
}

#[test]
fn heat_checkpoints_resume_on_any_rank_count() {
    let s = cases::heat([37, 23, 1], 2, 4, true, true);
    check::<f64>(
        "heat 2-D periodic",
        &s,
        &[[3, 1, 1], [1, 2, 1]],
        &[[1, 1, 1], [2, 1, 1], [1, 3, 1]],
    );
    let s = cases::heat([19, 14, 11], 3, 4, false, true);
    check::<f32>(
        "heat 3-D f32",
        &s,
        &[[1, 1, 3]],
        &[[1, 1, 1], [2, 1, 1], [1, 3, 1]],
    );
}

/// The CPML's layers cut across ranks: its memory variables are whole-grid arrays in the
/// checkpoint, sliced to each block on resume.
#[test]
fn wave_checkpoints_with_cpml_resume_on_any_rank_count() {
    // Layers 0..8 and 15..23 along y: three ranks cut at 8 and 16, inside the upper one.
    let s = wave([37, 23, 1], 2, 4, cpml(8));
    check::<f64>(
        "wave 2-D CPML",
        &s,
        &[[1, 3, 1], [2, 1, 1]],
        &[[1, 1, 1], [2, 1, 1], [3, 1, 1]],
    );
    // Layers 0..4 and 7..11 along z: three ranks cut at 4 and 8.
    let s = wave([19, 14, 11], 3, 4, cpml(4));
    check::<f32>(
        "wave 3-D CPML f32",
        &s,
        &[[1, 1, 3]],
        &[[1, 1, 1], [2, 1, 1], [1, 3, 1]],
    );
}

#[test]
fn wave_checkpoints_resume_on_any_rank_count() {
    let s = wave([37, 23, 1], 2, 8, WaveBoundary::Periodic);
    check::<f32>(
        "wave 2-D periodic f32",
        &s,
        &[[2, 1, 1], [1, 3, 1]],
        &[[1, 1, 1], [3, 1, 1], [1, 2, 1]],
    );
    let s = wave([19, 14, 11], 3, 4, WaveBoundary::Rigid);
    check::<f64>(
        "wave 3-D rigid",
        &s,
        &[[2, 1, 1]],
        &[[1, 1, 1], [1, 1, 3], [1, 2, 1]],
    );
}

/// Every rank stops at the same step: the first signal in rank order, wherever it came.
#[test]
fn ranks_agree_on_the_stop() {
    let s = cases::heat([37, 23, 1], 2, 4, false, false);
    let d = decompose(&s, 3, Some([3, 1, 1])).unwrap();
    let handles: Vec<_> = LocalTransport::group(3)
        .into_iter()
        .map(|t| {
            let (s, d) = (s.clone(), d.clone());
            std::thread::spawn(move || {
                let rank = fdlab_dist::Transport::rank(&t);
                let mut st = DistStepper::new::<f64>(&s, d, Box::new(t)).unwrap();
                let none = st.agree_stop(0).unwrap();
                // Ranks 1 and 2 were signalled (SIGUSR1 = 10, SIGTERM = 15), rank 0 not.
                let asked = [0, 10, 15][rank];
                (none, st.agree_stop(asked).unwrap())
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), (0, 10));
    }
}

/// Every file of directory `a` whose name ends in `ext`, and the same file of `b`: equal
/// bytes, and at least one of them.
fn same_files(a: &std::path::Path, b: &std::path::Path, ext: &str) {
    let mut names: Vec<_> = std::fs::read_dir(a)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(ext))
        .collect();
    names.sort();
    assert!(!names.is_empty(), "no {ext} files in {}", a.display());
    for n in names {
        let (x, y) = (
            std::fs::read(a.join(&n)).unwrap(),
            std::fs::read(b.join(&n)),
        );
        assert!(
            y.as_ref().is_ok_and(|y| *y == x),
            "{n} of {} differs",
            b.display()
        );
    }
}

/// `fdlab run` split over threads: a checkpoint written on 2 ranks is the one-process run's
/// (header and parts byte for byte); it resumes on 3 ranks, a one-process checkpoint resumes
/// on 2, and a stop asked for mid-run stops every rank at one step with a checkpoint that
/// resumes on one process; every .npy output equals the uninterrupted one-process run's.
#[test]
fn split_runs_checkpoint_and_resume_like_one_process() {
    use fdlab_solvers::{Case, RunOptions};
    let root = std::env::temp_dir().join(format!("fdlab-dist-ck-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let case_path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cases/wave-2d-cpml.toml");
    let case = Case::load(case_path).unwrap();
    let opts = |dir: &str| RunOptions {
        out_dir: Some(root.join(dir)),
        quiet: true,
        ..RunOptions::default()
    };
    let split = |ranks: usize, o: RunOptions| {
        let case = case.clone();
        let mut all = fdlab_dist::threads::on_threads(ranks, move |t| {
            fdlab_dist::run(&case, &o, Box::new(t), None)
        })
        .unwrap();
        assert!(all.iter().all(|s| s.final_step == all[0].final_step));
        all.swap_remove(0)
    };
    let whole = fdlab_solvers::run(&case, &opts("whole")).unwrap();
    assert!(whole.final_step > 60);
    let at = 37;
    let stop = |dir: &str| RunOptions {
        stop_at: Some(at),
        checkpoint_every: Some(16),
        ..opts(dir)
    };
    fdlab_solvers::run(&case, &stop("one")).unwrap();
    let s = split(2, stop("two"));
    assert_eq!(s.final_step, at);
    let step = format!("checkpoints/step-{at:09}");
    same_files(
        &root.join("one").join(&step),
        &root.join("two").join(&step),
        "",
    );
    same_files(
        &root.join("one/checkpoints/step-000000032"),
        &root.join("two/checkpoints/step-000000032"),
        "",
    );
    let resume = |dir: &str| RunOptions {
        resume: Some(root.join(dir).join("checkpoints")),
        ..opts(dir)
    };
    split(3, resume("two"));
    same_files(&root.join("whole"), &root.join("two"), ".npy");
    split(2, resume("one"));
    same_files(&root.join("whole"), &root.join("one"), ".npy");

    // A stop asked for again and again from the start: every rank stops at the same step
    // (checked in `split`), rank 0 writes the checkpoint there.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let asker = {
        let done = done.clone();
        std::thread::spawn(move || {
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                fdlab_solvers::request_stop();
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        })
    };
    let s = split(3, opts("stopped"));
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    asker.join().unwrap();
    assert!(s.interrupted && s.final_step < whole.final_step, "{s:?}");
    let ck = s.checkpoint.expect("rank 0 wrote a checkpoint");
    assert!(ck.ends_with(format!("step-{:09}", s.final_step)), "{ck:?}");
    fdlab_solvers::run(&case, &resume("stopped")).unwrap();
    same_files(&root.join("whole"), &root.join("stopped"), ".npy");
    std::fs::remove_dir_all(&root).unwrap();
}
