// AMD's "Finite difference method – Laplacian part 1", kernel 1, transcribed from HIP to CUDA
// as the lab notes print it: one thread per grid point, a 256×1×1 block, a grid covering the
// whole cube, boundary threads return, weights passed as arguments. The driver around it is
// fdlab's: the same timing (CUDA events around each launch, median of 20 after 3 warm-ups) and
// copy reference (cudaMemcpy device to device of 1 GiB, bytes read + written) as `fdlab bench`,
// so the two can be compared as % of copy within one run.
//
//   nvcc -O3 -arch=sm_90 -o amd_laplacian bench/published/amd_laplacian.cu
//   ./amd_laplacian [n]          (default 512; prints one JSON object per precision)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                            \
    do {                                                                                    \
        cudaError_t e = (x);                                                                \
        if (e != cudaSuccess) {                                                             \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e));     \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

template <typename T>
__global__ void laplacian_kernel(T *f, const T *u, int nx, int ny, int nz, T invhx2, T invhy2,
                                 T invhz2, T invhxyz2) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    int j = threadIdx.y + blockIdx.y * blockDim.y;
    int k = threadIdx.z + blockIdx.z * blockDim.z;
    // Exit if this thread is on the boundary
    if (i == 0 || i >= nx - 1 || j == 0 || j >= ny - 1 || k == 0 || k >= nz - 1) return;
    const int slice = nx * ny;
    size_t pos = i + nx * j + slice * k;
    f[pos] = u[pos] * invhxyz2 + (u[pos - 1] + u[pos + 1]) * invhx2 +
             (u[pos - nx] + u[pos + nx]) * invhy2 + (u[pos - slice] + u[pos + slice]) * invhz2;
}

template <typename T>
void laplacian(T *d_f, T *d_u, int nx, int ny, int nz, int BLK_X, int BLK_Y, int BLK_Z, T hx,
               T hy, T hz) {
    dim3 block(BLK_X, BLK_Y, BLK_Z);
    dim3 grid((nx - 1) / block.x + 1, (ny - 1) / block.y + 1, (nz - 1) / block.z + 1);
    T invhx2 = (T)1. / hx / hx;
    T invhy2 = (T)1. / hy / hy;
    T invhz2 = (T)1. / hz / hz;
    T invhxyz2 = -2. * (invhx2 + invhy2 + invhz2);
    laplacian_kernel<<<grid, block>>>(d_f, d_u, nx, ny, nz, invhx2, invhy2, invhz2, invhxyz2);
}

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Median milliseconds of `reps` calls of `work`, each between its own pair of events.
template <typename F> static double time_ms(F work, int reps = 20, int warmup = 3) {
    for (int w = 0; w < warmup; ++w) work();
    CHECK(cudaDeviceSynchronize());
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
        CHECK(cudaEventRecord(a));
        work();
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    CHECK(cudaGetLastError());
    return median(t);
}

template <typename T> static void run(const char *name, int n, double copy_gbps) {
    size_t points = (size_t)n * n * n;
    T *d_u, *d_f;
    CHECK(cudaMalloc(&d_u, points * sizeof(T)));
    CHECK(cudaMalloc(&d_f, points * sizeof(T)));
    // u = x² + y² + z² on the unit cube: its Laplacian is 6 everywhere.
    std::vector<T> h(points);
    T hx = (T)1 / (n - 1);
    for (size_t p = 0; p < points; ++p) {
        double x = (p % n) * (double)hx, y = (p / n % n) * (double)hx, z = (p / n / n) * (double)hx;
        h[p] = (T)(x * x + y * y + z * z);
    }
    CHECK(cudaMemcpy(d_u, h.data(), points * sizeof(T), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_f, 0, points * sizeof(T)));
    double ms = time_ms([&] { laplacian(d_f, d_u, n, n, n, 256, 1, 1, hx, hx, hx); });
    CHECK(cudaMemcpy(h.data(), d_f, points * sizeof(T), cudaMemcpyDeviceToHost));
    double worst = 0;
    for (size_t k = 1; k + 1 < (size_t)n; ++k)
        for (size_t j = 1; j + 1 < (size_t)n; ++j)
            for (size_t i = 1; i + 1 < (size_t)n; ++i)
                worst = std::max(worst, std::abs((double)h[i + n * (j + n * k)] - 6.0));
    double fetch = ((double)points - 8 - 4.0 * (n - 2) * 3) * sizeof(T);
    double write = (double)(n - 2) * (n - 2) * (n - 2) * sizeof(T);
    double gbps = (fetch + write) / (ms * 1e-3) / 1e9;
    printf("{\"kernel\": \"amd-kernel1-256x1x1\", \"precision\": \"%s\", \"n\": %d, "
           "\"time_ms\": %.5f, \"gbps\": %.1f, \"copy_gbps\": %.1f, \"pct_of_copy\": %.2f, "
           "\"max_error_vs_6\": %.3e}\n",
           name, n, ms, gbps, copy_gbps, 100 * gbps / copy_gbps, worst);
    CHECK(cudaFree(d_u));
    CHECK(cudaFree(d_f));
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 512;
    if (n < 3 || n > 2048) {
        fprintf(stderr, "n must be 3 to 2048\n");
        return 2;
    }
    size_t bytes = (size_t)1 << 30;
    void *a, *b;
    CHECK(cudaMalloc(&a, bytes));
    CHECK(cudaMalloc(&b, bytes));
    double copy_ms = time_ms([&] { CHECK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice)); });
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    double copy_gbps = 2.0 * bytes / (copy_ms * 1e-3) / 1e9;
    run<double>("f64", n, copy_gbps);
    run<float>("f32", n, copy_gbps);
    return 0;
}
