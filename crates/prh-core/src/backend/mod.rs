//! **Wing `backend`**: the concrete burn backends, custom autodiff ops and the compute
//! kernels (SIMD GELU, fused AdamW) behind them.
//! May use: `linalg` (nothing of the paper).
//!
//! The concrete burn backends, chosen by cargo feature (never by a code edit):
//! `cpu` -> ndarray (the core's default and the browser's CPU fallback), `flex` -> burn-flex
//! (the native binary's default CPU backend), `wgpu` -> wgpu, `cuda` -> CUDA, each wrapped
//! in `Autodiff` for training. The core is generic over `B: Backend`; only binaries name these types.

pub mod adamw_kernel;
#[cfg(all(feature = "flex", not(target_arch = "wasm32")))]
pub mod flex_ops;
pub mod gelu;

pub use burn;

/// Serialises seeding and initialising a model across threads: burn's CPU backends draw
/// initial weights from one process-wide generator (`B::seed`), so two runs initialising
/// at once on two threads would interleave their draws and neither would be repeatable.
static SEEDED: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Seeds `B` with `seed` and runs `init` (a model's initialisation) while no other thread
/// does the same, so the weights depend on the seed alone, whatever runs beside it.
/// `init` must draw every weight before it returns: burn initialises parameters lazily,
/// on first use, so it calls [`materialise`] on what it built.
pub fn seeded<B: burn::tensor::backend::Backend, T>(
    device: &B::Device,
    seed: u64,
    init: impl FnOnce() -> T,
) -> T {
    // A panic in another thread's init leaves nothing half-written behind the lock.
    let _guard = SEEDED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    B::seed(device, seed);
    init()
}

/// Runs `fut` (work that awaits a backend's read-backs) to completion now: it blocks
/// natively, and in a browser it finishes only if every read-back is ready at once (the
/// CPU backend's are); WebGPU's are not, and the error says to await the async variant.
/// `what` names the work in that error.
pub fn read_now<T>(what: &str, fut: impl std::future::Future<Output = T>) -> crate::Result<T> {
    burn::tensor::try_read_sync(fut).ok_or_else(|| {
        crate::Error::invalid(format!(
            "{what}: this backend reads results back only asynchronously (WebGPU in a \
             browser); await the async variant (prh_core::train::train_state)"
        ))
    })
}

/// Draws every lazily initialised parameter of `module` now. burn defers a parameter's
/// initialisation to its first use (the first forward pass), which would draw from the
/// process-wide generator outside [`seeded`]'s lock, interleaved with other threads.
pub fn materialise<B: burn::tensor::backend::Backend, M: burn::module::Module<B>>(module: &M) {
    use burn::module::{ModuleVisitor, Param};
    use burn::tensor::{Bool, Int, Tensor};
    struct Touch;
    impl<B: burn::tensor::backend::Backend> ModuleVisitor<B> for Touch {
        fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<B, D>>) {
            let _ = p.val();
        }
        fn visit_int<const D: usize>(&mut self, p: &Param<Tensor<B, D, Int>>) {
            let _ = p.val();
        }
        fn visit_bool<const D: usize>(&mut self, p: &Param<Tensor<B, D, Bool>>) {
            let _ = p.val();
        }
    }
    module.visit(&mut Touch);
}

/// Training backend on the CPU (ndarray).
#[cfg(all(feature = "cpu", not(feature = "flex")))]
pub type CpuTrain = burn::backend::Autodiff<burn::backend::NdArray>;
/// Inference backend on the CPU.
#[cfg(all(feature = "cpu", not(feature = "flex")))]
pub type Cpu = burn::backend::NdArray;

/// Training backend on the CPU (burn-flex).
#[cfg(feature = "flex")]
pub type CpuTrain = burn::backend::Autodiff<burn::backend::Flex>;
/// Inference backend on the CPU (burn-flex).
#[cfg(feature = "flex")]
pub type Cpu = burn::backend::Flex;

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

/// How the CPU backend was built (library, threads, matmul), for benchmark headers.
pub fn cpu_backend_description() -> String {
    if cfg!(feature = "flex") {
        let threads = if cfg!(feature = "cpu-fast") {
            "rayon threads"
        } else {
            "1 thread"
        };
        return format!("burn-flex ({threads}, gemm matmul)");
    }
    let matmul = if cfg!(feature = "blas") {
        "OpenBLAS matmul"
    } else {
        "matrixmultiply matmul"
    };
    format!("burn ndarray (1 thread, {matmul})")
}
