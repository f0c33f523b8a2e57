#!/usr/bin/env bash
# Session 11, device call 1 (H100): where does lap7 f32 512³ lose its 3 points against 1024³?
# (a) The same kernels on 512 × 512 × D for D = 512, 1024, 2048 (`--depth`): a per-launch cost
#     (start-up, last wave, drain) shrinks as 1/D, a per-plane cost does not.
# (b) ncu side by side, the winner at 512³ and 1024³: DRAM bytes, duration, occupancy, waves.
B=target/release/fdlab
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $OUT/gpu.txt
S="--strategy smarch-128x1-r8-c64-p1-v4-l --strategy smarch-128x1-r8-c128-p1-v4-l --strategy smarch-256x1-r4-c128-p1-v4-l --strategy qmarch-128x2-r2-c64-v2"
for d in 512 1024 2048; do
  FDLAB_TUNE_CACHE=/tmp/c.json timeout 150 $B tune --reps 10 --size 512 --depth $d $S --json $OUT/depth-$d.json > /tmp/depth-$d.log 2>&1; echo "depth $d rc=$?"
done
FDLAB_TUNE_CACHE=/tmp/c.json timeout 150 $B tune --reps 10 --size 1024 --precision f32 $S --json $OUT/depth-1024cube.json > /tmp/d1024.log 2>&1; echo "1024 cube rc=$?"
python3 - <<PY
import json
for f in ['depth-512','depth-1024','depth-2048','depth-1024cube']:
    try: rs=json.load(open('$OUT/'+f+'.json'))['results']
    except Exception as e: print(f, e); continue
    for r in rs:
        if r['case'] in ('lap3d-7pt','zdiff-2pt','gradient-8th','d1x-8th','d1z-8th','fanout-3') and r['time_ms']['median']>0:
            print(f, r['case'], r['precision'], 'x'.join(map(str,r['shape'])), r['strategy'], '%.3f ms'%r['time_ms']['median'], '%.1f%%'%r['pct_of_copy'])
PY
M=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__waves_per_multiprocessor,launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,lts__t_sector_hit_rate.pct,smsp__cycles_active.avg,sm__cycles_elapsed.max,sm__cycles_active.avg
for n in 512 1024; do
  timeout 150 ncu --kill yes --metrics $M -k regex:smarch_128x1_r8_c64 -c 3 $B bench --backend cuda --suite roofline --size $n --precision f32 \
    --strategy smarch-128x1-r8-c64-p1-v4-l --reps 1 > $OUT/ncu-$n.txt 2>&1; echo "ncu $n rc=$?"
  grep -E "fdlab_|dram__|gpu__time|warps_active|waves|occupancy_limit|hit_rate|cycles" $OUT/ncu-$n.txt | tail -14
done
timeout 100 ncu --kill yes --section PmSampling -k regex:smarch_128x1_r8_c64 -c 1 --print-details all $B bench --backend cuda --suite roofline --size 512 --precision f32 \
    --strategy smarch-128x1-r8-c64-p1-v4-l --reps 1 > $OUT/ncu-pm.txt 2>&1; echo "pm rc=$?"; grep -v "^\s*$" $OUT/ncu-pm.txt | head -60
