#!/usr/bin/env bash
# Session 11, device call 7 (H100): where do the interior row's 16.6 MB of extra DRAM reads come
# from? ncu, same kernel (smarch-128x1-r8-c128-p1-v4-l, 512³ f32), interior against periodic:
# global load sectors requested of L1 and of L2, L2 read misses, DRAM bytes.
B=target/release/fdlab
nvidia-smi --query-gpu=name,ecc.mode.current --format=csv > $OUT/gpu.txt
M1=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_write.sum
M2=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum
for c in lap3d-7pt lap3d-7pt-periodic; do
  for m in M1 M2; do
    timeout 100 ncu --kill yes --metrics ${!m} -k regex:fdlab_smarch -c 1 $B bench --backend cuda --suite roofline --case $c --size 512 --precision f32 \
      --strategy smarch-128x1-r8-c128-p1-v4-l --reps 1 > $OUT/ncu-$c-$m.txt 2>&1; echo "$c $m rc=$?"
    grep -E "^\s+(dram|gpu|lts|l1tex)__" $OUT/ncu-$c-$m.txt
  done
done
