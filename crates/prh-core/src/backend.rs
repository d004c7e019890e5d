//! The concrete burn backends, chosen by cargo feature (never by a code edit):
//! `cpu` (default) -> ndarray, `wgpu` -> wgpu, `cuda` -> CUDA, each wrapped in `Autodiff`
//! for training. The core is generic over `B: Backend`; only binaries name these types.

pub use burn;

/// Training backend on the CPU (ndarray).
#[cfg(feature = "cpu")]
pub type CpuTrain = burn::backend::Autodiff<burn::backend::NdArray>;
/// Inference backend on the CPU.
#[cfg(feature = "cpu")]
pub type Cpu = burn::backend::NdArray;

/// Training backend through wgpu (Vulkan / Metal / DX12 / WebGPU).
#[cfg(feature = "wgpu")]
pub type WgpuTrain = burn::backend::Autodiff<burn::backend::Wgpu>;
/// Inference backend through wgpu.
#[cfg(feature = "wgpu")]
pub type Wgpu = burn::backend::Wgpu;

/// Training backend on NVIDIA GPUs (CUDA; the driver is loaded at run time).
#[cfg(feature = "cuda")]
pub type CudaTrain = burn::backend::Autodiff<burn::backend::Cuda>;
/// Inference backend on CUDA.
#[cfg(feature = "cuda")]
pub type Cuda = burn::backend::Cuda;

/// The backends compiled into this build, for `--device` help and errors.
pub fn compiled() -> Vec<&'static str> {
    let mut v = Vec::new();
    if cfg!(feature = "cpu") {
        v.push("cpu");
    }
    if cfg!(feature = "wgpu") {
        v.push("wgpu");
    }
    if cfg!(feature = "cuda") {
        v.push("cuda");
    }
    v
}

/// How the CPU backend was built (threads, SIMD, BLAS), for benchmark headers.
pub fn cpu_backend_description() -> String {
    let mut parts = Vec::new();
    parts.push(
        if cfg!(all(feature = "cpu-fast", not(target_arch = "wasm32"))) {
            "rayon threads, SIMD"
        } else {
            "1 thread"
        },
    );
    if cfg!(feature = "blas") {
        parts.push("OpenBLAS matmul");
    } else {
        parts.push("matrixmultiply matmul");
    }
    parts.join(", ")
}
