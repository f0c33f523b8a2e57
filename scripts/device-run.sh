#!/usr/bin/env bash
# Runs fdlab on a GPU host that has no Rust toolchain, with binaries built elsewhere
# (`cargo build --release -p fdlab-cli -p fdlab --examples --bins`, copied into $BIN) and,
# for the Python steps, a wheel (`pip wheel . -w $WHEELS`, with pytest's wheels beside it).
# Usage: BIN=dir OUT=dir [WHEELS=dir] scripts/device-run.sh STEP...
# Steps:
#   check     fdlab check --backend cuda, f32 and f64 side by side
#   examples  the front's examples on the GPU and on the CPU
#   roofline  the roofline suite as shipped: an empty tune cache, built-in defaults
#   tuned     fdlab tune --suite roofline, then the roofline suite with its winners
#   suites    the published suites (NVIDIA's derivatives, Laplace variants, AMD's Laplacian)
#   python    the Python package's tests with CuPy and PyTorch, and its overhead benchmark
#   published AMD's published Laplacian kernel 1 and NVIDIA's 64³ x derivative built with nvcc,
#             each beside fdlab's reproduction and default in the same call
#   scaling   split runs (binary built with --features nccl): the decomposed checks, the same
#             under compute-sanitizer (memcheck, racecheck), then the scaling suite over the
#             host's GPUs; NCCL from the pip wheel nvidia-nccl-cu13, NVLink multicast off
# Writes JSON, PNG and logs under $OUT.
set -uo pipefail
bin="${BIN:-.}"
out="${OUT:?set OUT to the folder for the results}"
mkdir -p "$out"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
root="$(cd "$(dirname "$0")/.." && pwd)"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.memory,ecc.mode.current \
    --format=csv >"$out/gpu.txt" 2>&1 || true
"$bin/fdlab" info | tee "$out/info.txt"
stamp() { echo "== $(date +%T) $*"; }
for step in "$@"; do
    start=$(date +%s)
    case $step in
    check)
        stamp "check (f32 and f64 side by side)"
        "$bin/fdlab" check --backend cuda --precision f32 --json "$out/check-f32.json" \
            >"$out/check-f32.log" 2>&1 &
        "$bin/fdlab" check --backend cuda --precision f64 --json "$out/check-f64.json" \
            >"$out/check-f64.log" 2>&1
        wait
        tail -n 3 "$out/check-f32.log" "$out/check-f64.log"
        ;;
    examples)
        stamp "examples"
        for ex in 01_derivative 02_custom_stencil 03_gradient; do
            for b in cuda cpu; do
                echo "--- $ex on $b"
                FDLAB_BACKEND=$b "$bin/$ex"
            done
        done 2>&1 | tee "$out/examples.log"
        ;;
    roofline)
        stamp "roofline as shipped (empty tune cache)"
        FDLAB_TUNE_CACHE="$out/empty-tune-cache.json" "$bin/fdlab" bench --backend cuda \
            --suite roofline --reps 20 --json "$out/roofline.json" \
            --plot "$out/roofline.png" 2>&1 | tee "$out/roofline.log"
        ;;
    tuned)
        stamp "tune, then the roofline with its winners"
        export FDLAB_TUNE_CACHE="$out/tune-cache.json"
        "$bin/fdlab" tune --suite roofline >"$out/tune.log" 2>&1
        "$bin/fdlab" bench --backend cuda --suite roofline --reps 20 \
            --json "$out/roofline-tuned.json" 2>&1 | tee "$out/roofline-tuned.log"
        ;;
    suites)
        stamp "published suites"
        "$bin/fdlab" bench --backend cuda --suite nvidia-derivative --suite laplace-variants \
            --suite amd-laplacian --reps 20 --json "$out/published.json" 2>&1 |
            tee "$out/published.log"
        ;;
    python)
        stamp "python"
        wheels="${WHEELS:?set WHEELS to the folder of the fdlab and pytest wheels}"
        python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
            --upgrade --target /tmp/fdlab-site "$wheels"/*.whl || exit 1
        # The image's own pytest plugins may not load under the carried pytest.
        export PYTHONPATH=/tmp/fdlab-site PYTHONUNBUFFERED=1 PYTEST_DISABLE_PLUGIN_AUTOLOAD=1
        (cd /tmp && python3 -m pytest -q -rs "$root/python/tests") 2>&1 | tee "$out/pytest.log"
        for lib in cupy torch; do
            python3 "$root/python/bench_overhead.py" --gpu $lib --dtype float32
            python3 "$root/python/bench_overhead.py" --gpu $lib --n 512 --throughput \
                --repeats 50
        done 2>&1 | tee "$out/python-overhead.log"
        ;;
    published)
        stamp "published AMD kernel 1 (nvcc) beside fdlab's naive-256x1x1"
        nvcc -O3 -arch=sm_90 -o /tmp/amd_laplacian "$root/bench/published/amd_laplacian.cu" &&
            /tmp/amd_laplacian 512 | tee "$out/published-amd.jsonl"
        "$bin/fdlab" bench --backend cuda --suite amd-laplacian --size 512 \
            --strategy naive-256x1x1 --reps 20 --json "$out/published-fdlab.json" 2>&1 |
            tee "$out/published-fdlab.log"
        stamp "published NVIDIA derivative_x at 64³ (nvcc) beside fdlab's"
        nvcc -O3 -arch=sm_90 -o /tmp/nvidia_derivative_x \
            "$root/bench/published/nvidia_derivative_x.cu" &&
            /tmp/nvidia_derivative_x | tee "$out/published-nvidia.jsonl"
        "$bin/fdlab" bench --backend cuda --suite nvidia-derivative --size 64 \
            --case d1x-8th-published-grid --precision f32 --reps 20 \
            --json "$out/published-nvidia-fdlab.json" >/dev/null 2>&1
        "$bin/fdlab" bench --backend cuda --suite nvidia-derivative --size 64 \
            --case d1x-8th-published-grid --precision f32 --reps 20 --coefficients constant \
            --strategy pencil-64x4-t64x4 --json "$out/published-nvidia-fdlab-constant.json" \
            >/dev/null 2>&1
        python3 - "$out"/published-nvidia-fdlab*.json <<'PY' | tee "$out/published-nvidia-fdlab.log"
import json, sys
for path in sys.argv[1:]:
    weights = "constant" if "constant" in path else "immediate"
    for r in json.load(open(path))["results"]:
        print(f"fdlab {r['strategy']:28} {weights:9}: "
              f"{r['time_ms']['median'] * 1e3:.2f} us per launch, "
              f"{r.get('back_to_back_us') or 0:.2f} us back to back, "
              f"{r.get('graph_us') or 0:.2f} us per graph replay, "
              f"RMS {r.get('rms_error')}, MAX {r.get('max_error')}")
PY
        ;;
    scaling)
        stamp "decomposed checks, sanitizers, scaling over the GPUs"
        export NCCL_NVLS_ENABLE=0
        # fdlab opens libnccl.so; the wheel ships libnccl.so.2.
        nccl="$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])')/lib"
        mkdir -p /tmp/fdlab-nccl && ln -sf "$nccl/libnccl.so.2" /tmp/fdlab-nccl/libnccl.so
        export LD_LIBRARY_PATH="/tmp/fdlab-nccl:$LD_LIBRARY_PATH"
        "$bin/fdlab" check --backend cuda --only decomposed --json "$out/decomposed.json" \
            2>&1 | tail -n 3 | tee "$out/decomposed.log"
        for tool in memcheck racecheck; do
            for c in heat-3d-layered wave-npy-periodic; do
                # One log for all (the device tool brings back a limited number of files).
                log="/tmp/fdlab-san-$tool-$c.log"
                compute-sanitizer --tool $tool "$bin/fdlab" run \
                    "$root/examples/cases/$c.toml" --gpus 2 --exchange staged --quiet \
                    --out "/tmp/fdlab-san-$c" \
                    >"$log" 2>&1
                { echo "=== $tool $c"; cat "$log"; } >>"$out/sanitizer-full.log"
                echo "$tool $c (2 slabs on one GPU): $(grep -h SUMMARY "$log")"
            done
        done | tee "$out/sanitizer.log"
        "$bin/fdlab" bench --suite scaling --backend cuda --reps 5 --json "$out/scaling.json" \
            2>&1 | tee "$out/scaling.log"
        ;;
    *)
        echo "unknown step '$step'" >&2
        exit 2
        ;;
    esac
    echo "== $step took $(($(date +%s) - start)) s"
done
