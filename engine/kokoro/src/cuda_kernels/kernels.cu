// Banter's own CUDA kernels for Kokoro (compiled once per process by NVRTC; see mod.rs).
// No headers: NVRTC needs none for these, and the driver JIT-compiles the PTX for the GPU.
//
// Each kernel has a CPU reference in the crate: adain_* are `adain::fused` (instance norm over
// time, the style's affine, then the activation), bilstm is `lstm`'s host recurrence.

// ---------------------------------------------------------------------------------------
// AdaIN + activation. act: 0 identity, 1 leaky ReLU (slope), 2 Snake (alpha[c]):
// x + sin²(αx)/α. h holds the style's fc output for this item: h[c] = γ−1, h[C+c] = β.

__device__ __forceinline__ float act_apply(float v, int act, float slope, const float* alpha, int c) {
    if (act == 1) {
        return v >= 0.0f ? v : v * slope;
    } else if (act == 2) {
        float a = alpha[c];
        float s = sinf(a * v);
        return v + s * s / a;
    }
    return v;
}

// Item b's valid rows of T: all of them without lengths, else its length clamped to 1..=T (the
// host checks every length where it uploads them; the clamp keeps a bad one from moving an
// access even so).
__device__ __forceinline__ int item_len(const unsigned int* valid, long b, int T) {
    if (!valid) return T;
    unsigned int v = valid[b];
    return v < 1u ? 1 : (v > (unsigned int)T ? T : (int)v);
}

// Time-major [B, T, C] statistics (sums zeroed first), item b valid for its first valid[b] rows
// (1 <= valid[b] <= T; every row of every item when valid is null): sums[b, c] += Σ_t x,
// sums[b, C + c] += Σ_t x², over each item's valid rows only, so a padded item's statistics are
// its own. Block (32, 32): threadIdx.x walks channels (coalesced rows), threadIdx.y and
// gridDim.y rows; gridDim.z walks the items.
extern "C" __global__ void adain_stats_tm(const float* x, const unsigned int* valid, int T, int C,
                                           double* sums) {
    __shared__ double s1[32][33];
    __shared__ double s2[32][33];
    int b = blockIdx.z;
    int len = item_len(valid, b, T);
    int c = blockIdx.x * 32 + threadIdx.x;
    const float* xb = x + (long)b * T * C;
    double a = 0.0, q = 0.0;
    if (c < C) {
        for (long t = (long)blockIdx.y * 32 + threadIdx.y; t < len; t += (long)gridDim.y * 32) {
            double v = (double)xb[t * C + c];
            a += v;
            q += v * v;
        }
    }
    s1[threadIdx.y][threadIdx.x] = a;
    s2[threadIdx.y][threadIdx.x] = q;
    __syncthreads();
    if (threadIdx.y == 0 && c < C) {
        double ta = 0.0, tb = 0.0;
        for (int k = 0; k < 32; ++k) {
            ta += s1[k][threadIdx.x];
            tb += s2[k][threadIdx.x];
        }
        atomicAdd(&sums[(long)b * 2 * C + c], ta);
        atomicAdd(&sums[(long)b * 2 * C + C + c], tb);
    }
}

// Time-major apply: y [B, before + T + after, C]; item b's rows before..before+valid[b] (all T
// when valid is null) hold its normalised, styled, activated rows (h [B, 2C]: its own style),
// every other row zero, which is the frame the next convolution reads (each item as it would
// be alone).
extern "C" __global__ void adain_apply_tm(const float* x, const float* h, const float* alpha,
                                           const double* sums, const unsigned int* valid, int B, int T, int C,
                                           int before, int after, int act, float slope, float eps,
                                           float* y) {
    long rows = (long)(before + T + after);
    long n = (long)B * rows * C;
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)blockDim.x * gridDim.x) {
        long b = i / (rows * C);
        long rem = i - b * rows * C;
        long row = rem / C;
        int c = (int)(rem - row * C);
        int len = item_len(valid, b, T);
        long t = row - before;
        if (t < 0 || t >= len) {
            y[i] = 0.0f;
            continue;
        }
        const double* sb = sums + b * 2 * C;
        double mean = sb[c] / len;
        double var = sb[C + c] / len - mean * mean;
        float rstd = 1.0f / sqrtf((float)(var > 0.0 ? var : 0.0) + eps);
        float v = (x[(b * T + t) * C + c] - (float)mean) * rstd;
        v = v * (1.0f + h[b * 2 * C + c]) + h[b * 2 * C + C + c];
        y[i] = act_apply(v, act, slope, alpha, c);
    }
}

// Channel-major [B, C, T]: one block per (b, c) row: statistics, then the row in place.
// h is [B, 2C].
extern "C" __global__ void adain_cm(const float* x, const float* h, const float* alpha, int C, int T,
                                    int act, float slope, float eps, float* y) {
    __shared__ double s1[256];
    __shared__ double s2[256];
    int row = blockIdx.x;
    int b = row / C, c = row % C;
    const float* xr = x + (long)row * T;
    float* yr = y + (long)row * T;
    double a = 0.0, q = 0.0;
    for (int t = threadIdx.x; t < T; t += blockDim.x) {
        double v = (double)xr[t];
        a += v;
        q += v * v;
    }
    s1[threadIdx.x] = a;
    s2[threadIdx.x] = q;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) {
            s1[threadIdx.x] += s1[threadIdx.x + w];
            s2[threadIdx.x] += s2[threadIdx.x + w];
        }
        __syncthreads();
    }
    double mean = s1[0] / T;
    double var = s2[0] / T - mean * mean;
    float rstd = 1.0f / sqrtf((float)(var > 0.0 ? var : 0.0) + eps);
    float gain = 1.0f + h[b * 2 * C + c], shift = h[b * 2 * C + C + c];
    for (int t = threadIdx.x; t < T; t += blockDim.x) {
        float v = (xr[t] - (float)mean) * rstd * gain + shift;
        yr[t] = act_apply(v, act, slope, alpha, c);
    }
}

// ---------------------------------------------------------------------------------------
// Bidirectional single-layer LSTM recurrence over a whole batch in one launch.
// proj [B, T, 8H]: x·W_ihᵀ + b for both directions (forward gates first), PyTorch order i f g o.
// w_fwd, w_rev: W_hhᵀ [H, 4H]. lengths [B]. out [B, T, 2H] (forward half, then reverse), rows
// past an item's length zero. Grid (2, B): one block per direction and item; 4H threads, one per
// gate row; the state h lives in shared memory, the cell c in the registers of threads < H.
// Reading W_hhᵀ column j across k is coalesced over the block's threads.
extern "C" __global__ void bilstm(const float* proj, const float* w_fwd, const float* w_rev,
                                  const int* lengths, int T, int H, float* out) {
    extern __shared__ float shm[];
    float* h = shm;           // [H]
    float* g = shm + H;       // [4H]
    int dir = blockIdx.x, b = blockIdx.y, j = threadIdx.x;
    int G = 4 * H;
    int len = lengths[b];
    const float* w = dir == 0 ? w_fwd : w_rev;
    if (j < H) h[j] = 0.0f;
    float c = 0.0f;
    // Rows past the length are zero in both halves.
    for (int t = len; t < T; ++t) {
        if (j < H) out[((long)b * T + t) * 2 * H + dir * H + j] = 0.0f;
    }
    __syncthreads();
    for (int s = 0; s < len; ++s) {
        int t = dir == 0 ? s : len - 1 - s;
        float acc = proj[((long)b * T + t) * 2 * G + dir * G + j];
        for (int k = 0; k < H; ++k) {
            acc += h[k] * w[(long)k * G + j];
        }
        g[j] = acc;
        __syncthreads();
        if (j < H) {
            float i_ = 1.0f / (1.0f + expf(-g[j]));
            float f_ = 1.0f / (1.0f + expf(-g[H + j]));
            float c_ = tanhf(g[2 * H + j]);
            float o_ = 1.0f / (1.0f + expf(-g[3 * H + j]));
            c = f_ * c + i_ * c_;
            float hv = o_ * tanhf(c);
            h[j] = hv;
            out[((long)b * T + t) * 2 * H + dir * H + j] = hv;
        }
        __syncthreads();
    }
}
