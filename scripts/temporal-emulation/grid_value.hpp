// The reference's read of u at (x, y, z) for the emulated pass kernels: the periodic image,
// or zero outside the grid (after kernel.cu, which defines TY and PERIODIC).
#pragma once
static TY at(const std::vector<TY>& u, int x, int y, int z, int nx, int no, int nm) {
  if (PERIODIC) { x = (x % nx + nx) % nx; y = (y % no + no) % no; z = (z % nm + nm) % nm; }
  else if (x < 0 || x >= nx || y < 0 || y >= no || z < 0 || z >= nm) return (TY)0;
  return u[x + (long long)nx * (y + (long long)no * z)];
}
