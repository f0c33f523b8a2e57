// CPU emulation of the generated heat pass kernel (see run.sh): kernel.cu is one dumped
// kernel. Compares P passes with P*K reference single steps.
#include "cuda_shim.hpp"
#include "kernel.cu"
#include "grid_value.hpp"

int main(int argc, char** argv) {
  int nx = atoi(argv[1]), no = atoi(argv[2]), nm = atoi(argv[3]), passes = atoi(argv[4]);
  long long n = (long long)nx * no * nm;
  std::vector<TY> u(n), v(n), r(n), r2(n);
  std::mt19937 rng(5); std::uniform_real_distribution<double> d(-1, 1);
  for (auto& x : u) x = (TY)d(rng);
  r = u;
  const int NTH = SX_ * SY_ / P_;
  int gx = (nx + (SX_ - 2 * K_) - 1) / (SX_ - 2 * K_);
  int gy = DIM == 3 ? (no + (SY_ - 2 * K_) - 1) / (SY_ - 2 * K_) : 1;
  int gz = (nm + CH_ - 1) / CH_;
  size_t plane = DIM == 3 ? (SX_ + 2) * (SY_ + 2) : (SX_ + 2);
  std::vector<unsigned char> smem(K_ * 2 * plane * sizeof(TY));
  unsigned long long bad = ~0ull; double badval = 0;
  for (int p = 0; p < passes; ++p) {
    std::fill(v.begin(), v.end(), std::numeric_limits<TY>::quiet_NaN());
    for (int bz = 0; bz < gz; ++bz) for (int by = 0; by < gy; ++by) for (int bx = 0; bx < gx; ++bx) {
      // Poison shared memory: padding must never reach a valid result.
      { TY* s = (TY*)smem.data(); for (size_t i = 0; i < K_ * 2 * plane; ++i) s[i] = std::numeric_limits<TY>::quiet_NaN(); }
      std::barrier<> bar(NTH); g_bar = &bar;
      std::vector<std::thread> th;
      for (int t = 0; t < NTH; ++t) th.emplace_back([&, t] {
        threadIdx.x = t; blockIdx.x = bx; blockIdx.y = by; blockIdx.z = bz; g_smem = smem.data();
        pass_kernel(u.data(), v.data(), nx, no, nm, &bad, &badval, 0ull);
      });
      for (auto& t : th) t.join();
    }
    std::swap(u, v);
  }
  // Reference: single steps in the one-step kernel's order.
  for (int s = 0; s < passes * K_; ++s) {
    for (int z = 0; z < nm; ++z) for (int y = 0; y < no; ++y) for (int x = 0; x < nx; ++x) {
      TY c = at(r, x, y, z, nx, no, nm);
      TY lap = W0 * c;
      if (DIM == 3)
        lap = lap + WX * (at(r, x - 1, y, z, nx, no, nm) + at(r, x + 1, y, z, nx, no, nm)) + WO * (at(r, x, y - 1, z, nx, no, nm) + at(r, x, y + 1, z, nx, no, nm)) + WM * (at(r, x, y, z - 1, nx, no, nm) + at(r, x, y, z + 1, nx, no, nm));
      else
        lap = lap + WX * (at(r, x - 1, y, z, nx, no, nm) + at(r, x + 1, y, z, nx, no, nm)) + WM * (at(r, x, y, z - 1, nx, no, nm) + at(r, x, y, z + 1, nx, no, nm));
      r2[x + (long long)nx * (y + (long long)no * z)] = c + KC * lap;
    }
    std::swap(r, r2);
  }
  long long diff = 0; double maxd = 0;
  for (long long i = 0; i < n; ++i) {
    if (std::memcmp(&u[i], &r[i], sizeof(TY)) != 0) { ++diff; double e = std::fabs((double)u[i] - (double)r[i]); if (!(e <= maxd)) maxd = e; }
  }
  printf("%s %dx%dx%d passes %d: %lld of %lld differ (max %g), bad %llx\n", argv[5], nx, no, nm, passes, diff, n, maxd, bad);
  return diff ? 1 : 0;
}
