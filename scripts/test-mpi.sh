#!/usr/bin/env bash
# Tests `mpirun -np N fdlab run` on the CPU: builds fdlab with the `mpi` feature, runs small
# heat and wave cases (one with CPML layers) on 1, 2 and 3 processes (oversubscribed) and on
# given process grids, and compares every .npy output with the 1-process run; shares the
# shots of a case with shots out over 2 and 3 processes (each shot's outputs must be the
# 1-process run's bits); checkpoints a
# run on 2 processes and resumes it on 3 (the checkpoint must be the 1-process one, the outputs
# the uninterrupted run's bits); stops a long run on 3 processes with SIGUSR1 and resumes its
# checkpoint on 2; then kills one rank of a long run (and stops another) and checks that the
# job ends within 30 s. Needs an MPI (Debian: openmpi-bin libopenmpi-dev libclang-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
# As scripts/test.sh builds (no incremental cache), so that its build is reused here.
export CARGO_INCREMENTAL=0
SECONDS=0
if ! command -v mpirun >/dev/null; then
    echo "error: mpirun not found; install an MPI (e.g. apt-get install openmpi-bin libopenmpi-dev libclang-dev)" >&2
    exit 1
fi
echo "==> cargo build --profile test -p fdlab-cli --features mpi"
cargo build --quiet --profile test -p fdlab-cli --features mpi
TARGET="${CARGO_TARGET_DIR:-target}"
case "$TARGET" in /*) ;; *) TARGET="$PWD/$TARGET" ;; esac
FDLAB="$TARGET/debug/fdlab"
CASES="$PWD/crates/fdlab-dist/tests/cases"
WORK="$(mktemp -d)"
MPIRUN_PID=""
cleanup() {
    if [ -n "$MPIRUN_PID" ] && kill -0 "$MPIRUN_PID" 2>/dev/null; then kill "$MPIRUN_PID"; fi
    rm -rf "$WORK"
}
trap cleanup EXIT
# One thread per rank: three ranks already share two cores here. Open MPI refuses root
# without these.
export RAYON_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN=(mpirun --oversubscribe)

# Every .npy of directory $2 against the same file of $1: the largest difference relative to
# the reference's largest magnitude must stay within rounding ($3).
compare() {
    python3 - "$1" "$2" "$3" <<'PY'
import ast, os, struct, sys
ref, got, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
def load(p):
    b = open(p, "rb").read()
    hl = struct.unpack("<H", b[8:10])[0]
    h = ast.literal_eval(b[10:10 + hl].decode())
    # f64 runs write <f8, f32 runs <f4.
    size, code = {"<f8": (8, "d"), "<f4": (4, "f")}[h["descr"]]
    return h["shape"], struct.unpack("<%d%s" % ((len(b) - 10 - hl) // size, code), b[10 + hl:])
files = sorted(f for f in os.listdir(ref) if f.endswith(".npy"))
assert files, "no .npy outputs in " + ref
worst, exact = 0.0, True
for f in files:
    (sa, a), (sb, b) = load(os.path.join(ref, f)), load(os.path.join(got, f))
    assert sa == sb, (f, sa, sb)
    scale = max(max(abs(x) for x in a), 1e-300)
    d = max(abs(x - y) for x, y in zip(a, b)) / scale
    worst, exact = max(worst, d), exact and a == b
    if d > tol:
        sys.exit("%s: %s differs from the 1-process run by %.3e (relative), above %g" % (got, f, d, tol))
print("    %d files, largest relative difference %.3e%s" % (len(files), worst, " (bit-equal)" if exact else ""))
PY
}

for c in heat-2d:1e-12 wave-3d:1e-5 wave-2d-cpml:1e-12; do
    name="${c%%:*}" tol="${c#*:}"
    echo "==> $name: 1 process, then mpirun -np 2 and -np 3"
    "$FDLAB" run "$CASES/$name.toml" --quiet --out "$WORK/$name-1" >/dev/null
    for np in 2 3; do
        "${MPIRUN[@]}" -np "$np" "$FDLAB" run "$CASES/$name.toml" --quiet --out "$WORK/$name-$np"
        compare "$WORK/$name-1" "$WORK/$name-$np" "$tol"
    done
done
echo "==> wave-3d on a given process grid: mpirun -np 3 ... --process-grid 1x1x3"
"${MPIRUN[@]}" -np 3 "$FDLAB" run "$CASES/wave-3d.toml" --quiet --out "$WORK/wave-3d-z" \
    --process-grid 1x1x3
compare "$WORK/wave-3d-1" "$WORK/wave-3d-z" 1e-5
echo "==> wave-2d-cpml cut inside its layers: mpirun -np 8 ... --process-grid 8x1"
"${MPIRUN[@]}" -np 8 "$FDLAB" run "$CASES/wave-2d-cpml.toml" --quiet --out "$WORK/cpml-8" \
    --process-grid 8x1
compare "$WORK/wave-2d-cpml-1" "$WORK/cpml-8" 1e-12

echo "==> wave-shots (5 shots): 1 process, then shared out over mpirun -np 2 and -np 3"
"$FDLAB" run "$CASES/wave-shots.toml" --quiet --out "$WORK/shots-1" >/dev/null
for np in 2 3; do
    "${MPIRUN[@]}" -np "$np" "$FDLAB" run "$CASES/wave-shots.toml" --quiet --out "$WORK/shots-$np"
    for s in 0000 0001 0002 0003 0004; do
        compare "$WORK/shots-1/shots/$s" "$WORK/shots-$np/shots/$s" 0
    done
    python3 - "$WORK/shots-$np/summary.json" "$np" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
np_ = int(sys.argv[2])
assert r["complete"] and r["shots"] == 5 and r["ranks"] == np_, r
assert [e["rank"] for e in r["shot_list"]] == [i % np_ for i in range(5)], r["shot_list"]
print("    summary.json: 5 shots complete, shot i on rank i mod %d" % np_)
PY
done

echo "==> wave-2d-cpml checkpointed on 2 processes (--stop-at 70), resumed on 3"
"$FDLAB" run "$CASES/wave-2d-cpml.toml" --quiet --out "$WORK/ck-1" --stop-at 70 >/dev/null
"${MPIRUN[@]}" -np 2 "$FDLAB" run "$CASES/wave-2d-cpml.toml" --quiet --out "$WORK/ck" \
    --checkpoint-every 50 --stop-at 70
# The split run's checkpoint is the 1-process run's, byte for byte.
diff -r "$WORK/ck-1/checkpoints/step-000000070" "$WORK/ck/checkpoints/step-000000070"
"${MPIRUN[@]}" -np 3 "$FDLAB" run "$CASES/wave-2d-cpml.toml" --quiet --out "$WORK/ck" \
    --resume "$WORK/ck/checkpoints"
compare "$WORK/wave-2d-cpml-1" "$WORK/ck" 0

echo "==> SIGUSR1 to mpirun -np 3: every rank stops at one step, rank 0 checkpoints; resumed on 2"
"${MPIRUN[@]}" -np 3 "$FDLAB" run "$CASES/heat-long.toml" --quiet --out "$WORK/usr1" \
    >"$WORK/usr1.log" 2>&1 &
MPIRUN_PID=$!
sleep 4
kill -USR1 "$MPIRUN_PID"
rc=0
wait "$MPIRUN_PID" || rc=$?
MPIRUN_PID=""
stopped="$(ls "$WORK/usr1/checkpoints" 2>/dev/null | tail -n 1)"
if [ "$rc" -ne 138 ] || [ -z "$stopped" ]; then
    echo "error: expected exit status 138 and a checkpoint, got $rc and '$stopped'; the log:" >&2
    cat "$WORK/usr1.log" >&2
    exit 1
fi
step=$((10#${stopped#step-}))
echo "    stopped at step $step, exit status $rc"
"${MPIRUN[@]}" -np 2 "$FDLAB" run "$CASES/heat-long.toml" --quiet --out "$WORK/usr1" \
    --resume "$WORK/usr1/checkpoints" --stop-at $((step + 50))
"$FDLAB" run "$CASES/heat-long.toml" --quiet --out "$WORK/usr1-1" --stop-at $((step + 50)) \
    >/dev/null
last="$(printf 'step-%09d' $((step + 50)))"
diff -r "$WORK/usr1-1/checkpoints/$last" "$WORK/usr1/checkpoints/$last"
echo "    the state at step $((step + 50)) equals the 1-process run's, byte for byte"

# Start a long run on 3 processes, wait until it steps, do `$1` to one rank, and require the
# job to end with an error within 30 s.
one_rank_fails() {
    local how="$1" out="$WORK/long-$1" pids victim start end rc
    "${MPIRUN[@]}" -np 3 "$FDLAB" run "$CASES/heat-long.toml" --quiet --out "$out" \
        >"$WORK/$how.log" 2>&1 &
    MPIRUN_PID=$!
    sleep 4
    pids="$(pgrep -f "^$FDLAB run .*--out $out" || true)"
    victim="$(echo "$pids" | sed -n 2p)"
    if [ -z "$victim" ]; then
        echo "error: the long run has no second rank; its log:" >&2
        cat "$WORK/$how.log" >&2
        exit 1
    fi
    start=$(date +%s%N)
    kill "-$how" "$victim"
    rc=0
    wait "$MPIRUN_PID" || rc=$?
    MPIRUN_PID=""
    end=$(date +%s%N)
    local ms=$(((end - start) / 1000000))
    echo "    job ended $((ms / 1000)).$(printf %03d $((ms % 1000))) s after SIG$how, exit status $rc"
    if [ "$rc" -eq 0 ] || [ "$ms" -gt 30000 ]; then
        echo "error: expected a failed job within 30 s; its log:" >&2
        cat "$WORK/$how.log" >&2
        exit 1
    fi
}
echo "==> kill one rank of three mid-run (SIGKILL): the others must stop"
one_rank_fails KILL
echo "==> stop one rank of three mid-run (SIGSTOP, a hung rank): the others time out"
export FDLAB_DIST_TIMEOUT_S=5
one_rank_fails STOP
echo "==> scripts/test-mpi.sh done in ${SECONDS} s"
