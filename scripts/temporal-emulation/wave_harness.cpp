// CPU emulation of the generated wave pass kernel (see run.sh): kernel.cu is one dumped
// kernel. Compares PASSES passes with PASSES*K reference single steps (both time levels),
// bit for bit.
#include "cuda_shim.hpp"
#include "kernel.cu"
#include "grid_value.hpp"

int main(int argc, char** argv) {
  int nx = atoi(argv[1]), no = atoi(argv[2]), nm = atoi(argv[3]), passes = atoi(argv[4]);
  long long n = (long long)nx * no * nm;
  std::vector<TY> u(n), uq(n), c2(n), v(n), vq(n);
  std::mt19937 rng(5); std::uniform_real_distribution<double> d(-1, 1), e(0.01, 0.04);
  for (auto& x : u) x = (TY)d(rng);
  for (auto& x : uq) x = (TY)d(rng);
  for (auto& x : c2) x = (TY)e(rng);
  std::vector<TY> r = u, rq = uq, r2(n);
  const int NTH = SX_ * SY_ / P_;
  const int H = 2 * R_ * K_;
  int gx = (nx + (SX_ - H) - 1) / (SX_ - H);
  int gy = DIM == 3 ? (no + (SY_ - H) - 1) / (SY_ - H) : 1;
  int gz = (nm + CH_ - 1) / CH_;
  size_t plane = DIM == 3 ? (SX_ + 2 * R_) * (SY_ + 2 * R_) : (SX_ + 2 * R_);
  size_t words = 2 * K_ * plane;
  std::vector<unsigned char> smem(words * sizeof(TY));
  unsigned long long bad = ~0ull; double badval = 0;
  for (int p = 0; p < passes; ++p) {
    std::fill(v.begin(), v.end(), std::numeric_limits<TY>::quiet_NaN());
    std::fill(vq.begin(), vq.end(), std::numeric_limits<TY>::quiet_NaN());
    for (int bz = 0; bz < gz; ++bz) for (int by = 0; by < gy; ++by) for (int bx = 0; bx < gx; ++bx) {
      // Poison shared memory: padding must never reach a valid result.
      { TY* s = (TY*)smem.data(); for (size_t i = 0; i < words; ++i) s[i] = std::numeric_limits<TY>::quiet_NaN(); }
      std::barrier<> bar(NTH); g_bar = &bar;
      std::vector<std::thread> th;
      for (int t = 0; t < NTH; ++t) th.emplace_back([&, t] {
        threadIdx.x = t; blockIdx.x = bx; blockIdx.y = by; blockIdx.z = bz; g_smem = smem.data();
        pass_kernel(u.data(), uq.data(), c2.data(), v.data(), vq.data(), nx, no, nm, &bad, &badval, 0ull);
      });
      for (auto& t : th) t.join();
    }
    std::swap(u, v); std::swap(uq, vq);
  }
  // Reference: single steps in the one-step kernel's order.
  for (int s = 0; s < passes * K_; ++s) {
    for (int z = 0; z < nm; ++z) for (int y = 0; y < no; ++y) for (int x = 0; x < nx; ++x) {
      TY c = at(r, x, y, z, nx, no, nm);
      TY total = W0 * c;
      TY acc_x = WX[1] * (at(r, x - 1, y, z, nx, no, nm) + at(r, x + 1, y, z, nx, no, nm));
      for (int k = 2; k <= R_; ++k) acc_x = acc_x + WX[k] * (at(r, x - k, y, z, nx, no, nm) + at(r, x + k, y, z, nx, no, nm));
      total += acc_x;
      if (DIM == 3) {
        TY acc_o = WO[1] * (at(r, x, y - 1, z, nx, no, nm) + at(r, x, y + 1, z, nx, no, nm));
        for (int k = 2; k <= R_; ++k) acc_o = acc_o + WO[k] * (at(r, x, y - k, z, nx, no, nm) + at(r, x, y + k, z, nx, no, nm));
        total += acc_o;
      }
      TY acc_m = WM[1] * (at(r, x, y, z - 1, nx, no, nm) + at(r, x, y, z + 1, nx, no, nm));
      for (int k = 2; k <= R_; ++k) acc_m = acc_m + WM[k] * (at(r, x, y, z - k, nx, no, nm) + at(r, x, y, z + k, nx, no, nm));
      total += acc_m;
      long long i = x + (long long)nx * (y + (long long)no * z);
      r2[i] = c + c - rq[i] + c2[i] * total;
    }
    rq = r; std::swap(r, r2);
  }
  long long diff = 0; double maxd = 0;
  for (long long i = 0; i < n; ++i) {
    for (int f = 0; f < 2; ++f) {
      const TY& a = f ? uq[i] : u[i]; const TY& b = f ? rq[i] : r[i];
      if (std::memcmp(&a, &b, sizeof(TY)) != 0) { ++diff; double e = std::fabs((double)a - (double)b); if (!(e <= maxd)) maxd = e; }
    }
  }
  printf("%s %dx%dx%d passes %d: %lld of %lld differ (max %g), bad %llx\n", argv[5], nx, no, nm, passes, diff, 2 * n, maxd, bad);
  return diff ? 1 : 0;
}
