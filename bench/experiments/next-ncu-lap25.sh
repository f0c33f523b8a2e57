#!/usr/bin/env bash
# Next lead for the 25-point Laplacian (bench/NOTES.md, session 7, item 6): L2 bytes, the block
# barrier and occupancy are ruled out; profile the shared-memory side of the TMA partial-sum
# winner (f64 and f32): shared-memory wavefronts and bank conflicts, pipe utilisation, and the
# stall breakdown. One ncu pass over the first launch of each kernel (lap25 is the third f64
# roofline case, hence the launch skip is not needed: the regex names the lap25-only shapes).
B=target/release/fdlab
for s in qmarch-32x8-r2-c128-v2-t2a:f64 qmarch-16x16-r2-c64-v4-t2a:f32; do
  k=${s%%:*}; p=${s##*:}
  timeout 150 ncu --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section ComputeWorkloadAnalysis \
    --section SchedulerStats --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed_op_shared_ld.sum \
    -k regex:$(echo $k | tr '-' '_') -c 2 $B bench --backend cuda --suite roofline --precision $p --strategy $k --reps 1 \
    > $OUT/ncu-shared-$k.txt 2>&1
  echo "$k rc=$?"
done
