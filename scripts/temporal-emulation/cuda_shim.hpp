// CUDA on the CPU for the emulated pass kernels (harness.cpp, wave_harness.cpp): one
// std::thread per CUDA thread, std::barrier for __syncthreads, a mutex for the atomics, the
// block's shared memory in g_smem.
#pragma once
#include <barrier>
#include <thread>
#include <vector>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <algorithm>
#include <cstring>
#include <limits>
struct Dim3 { int x = 0, y = 0, z = 0; };
thread_local Dim3 threadIdx, blockIdx;
static std::barrier<>* g_bar;
#define __syncthreads() g_bar->arrive_and_wait()
#define __global__
#define __launch_bounds__(...)
#define __device__
#define __forceinline__ inline
#define __trap() abort()
#define __restrict__
template <class T> T __ldg(const T* p) { return *p; }
static std::mutex g_mu;
unsigned long long atomicMin(unsigned long long* a, unsigned long long v) {
  std::lock_guard<std::mutex> l(g_mu); auto o = *a; if (v < o) *a = v; return o; }
using std::min; using std::isfinite;
thread_local unsigned char* g_smem;
