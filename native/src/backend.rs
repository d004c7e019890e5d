//! The `--device` flag to a training backend and its devices, once for every subcommand.
//!
//! ```text
//! $ prh-native train --config configs/tiny.toml --device cuda --set run.data_parallel=2
//! data-parallel: 2 replicas on [Cuda(0), Cuda(0)], batch 32 split into 16 groups each
//! ```
//!
//! Work that runs on a backend implements [`OnTrainBackend`] and receives the backend's
//! [`Devices`]: [`Devices::main`] for single-device work, [`Devices::replicas`] for the
//! `run.data_parallel` replicas of a training run (text, scene, experiment or bench alike;
//! the core's `train_on_devices` checks that there is at least one).

use anyhow::{Result, bail};
use prh_core::backend::burn::prelude::Backend;
use prh_core::backend::burn::tensor::backend::AutodiffBackend;

/// The error for a backend that this binary was built without.
// A build with every backend (CI's clippy pass) has no such backend.
#[cfg_attr(
    all(feature = "cpu", feature = "wgpu", feature = "cuda"),
    expect(dead_code)
)]
pub fn not_compiled(name: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "--device {name}: this binary was built without the `{name}` backend (compiled: {}); \
         rebuild with `cargo build -p prh-native --features {name}`",
        prh_core::backend::compiled().join(", ")
    )
}

/// The devices of a backend: `of(i, w)` is the device of data-parallel replica `i` of `w`.
pub struct Devices<B: Backend> {
    of: fn(usize, usize) -> B::Device,
}

impl<B: Backend> Clone for Devices<B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B: Backend> Copy for Devices<B> {}

impl<B: Backend> Devices<B> {
    /// The device of single-device work (replica 0 of 1): embedding, evaluation, export.
    pub fn main(&self) -> B::Device {
        (self.of)(0, 1)
    }

    /// One device per data-parallel replica, `w` of them (`run.data_parallel`): replica 0
    /// holds the model, the optimiser and the checkpoints. `w = 0` gives none, which the
    /// core's `train_on_devices` reports.
    pub fn replicas(&self, w: usize) -> Vec<B::Device> {
        (0..w).map(|i| (self.of)(i, w)).collect()
    }
}

/// The CPU backend has one device: data-parallel replicas share it.
#[cfg(feature = "cpu")]
fn cpu_device<D: Default>(_i: usize, _w: usize) -> D {
    D::default()
}

/// wgpu replica `i` of `w`: the default (best available) adapter for single-device
/// training, else discrete GPU `i mod n` for the `n` discrete GPUs wgpu finds, so replicas
/// beyond the GPUs share them round-robin (all on the default adapter when there is no
/// discrete GPU). Multi-GPU data parallelism is not run on this project's machines.
#[cfg(feature = "wgpu")]
fn wgpu_device(i: usize, w: usize) -> prh_core::backend::burn::backend::wgpu::WgpuDevice {
    use prh_core::backend::burn::backend::wgpu::WgpuDevice;
    if w == 1 {
        return WgpuDevice::default();
    }
    // DiscreteGpu's type id in cubecl-wgpu's `DeviceId`s.
    match prh_core::backend::WgpuTrain::device_count(0) {
        0 => WgpuDevice::default(),
        n => WgpuDevice::DiscreteGpu(i % n),
    }
}

/// CUDA replica `i` of `w`: device `i mod n` for the `n` devices CUDA reports, so replicas
/// beyond the GPUs share them round-robin (e.g. `run.data_parallel = 2` on one GPU).
#[cfg(feature = "cuda")]
fn cuda_device(i: usize, w: usize) -> prh_core::backend::burn::backend::cuda::CudaDevice {
    let n = if w > 1 {
        prh_core::backend::CudaTrain::device_count(0).max(1)
    } else {
        1
    };
    prh_core::backend::burn::backend::cuda::CudaDevice { index: i % n }
}

/// Work that runs on whichever training backend `--device` names (a generic method, since
/// a closure cannot be generic over the backend).
pub trait OnTrainBackend {
    /// What the work returns.
    type Out;
    /// Runs on backend `B` with its `devices` (the inference backend of `B` is
    /// `B::InnerBackend`, on the same devices).
    fn run<B: AutodiffBackend>(self, devices: Devices<B>) -> Result<Self::Out>;
}

/// Runs `work` on the training backend named by `device` (`cpu`, `wgpu` or `cuda`), or says
/// that this binary was built without it.
pub fn on_train_backend<W: OnTrainBackend>(device: &str, work: W) -> Result<W::Out> {
    match device {
        "cpu" => {
            #[cfg(feature = "cpu")]
            return work.run::<prh_core::backend::CpuTrain>(Devices { of: cpu_device });
            #[cfg(not(feature = "cpu"))]
            return Err(not_compiled("cpu"));
        }
        "wgpu" => on_wgpu(work),
        "cuda" => on_cuda(work),
        other => bail!("--device: expected cpu, wgpu or cuda, got `{other}`"),
    }
}

/// `work` on wgpu, once its adapter has started ([`probe`]).
#[cfg(feature = "wgpu")]
fn on_wgpu<W: OnTrainBackend>(work: W) -> Result<W::Out> {
    probe::<prh_core::backend::Wgpu>("wgpu", &wgpu_device(0, 1))?;
    work.run::<prh_core::backend::WgpuTrain>(Devices { of: wgpu_device })
}

#[cfg(not(feature = "wgpu"))]
fn on_wgpu<W: OnTrainBackend>(_work: W) -> Result<W::Out> {
    Err(not_compiled("wgpu"))
}

/// `work` on CUDA, once its device has started ([`probe`]).
#[cfg(feature = "cuda")]
fn on_cuda<W: OnTrainBackend>(work: W) -> Result<W::Out> {
    probe::<prh_core::backend::Cuda>("cuda", &cuda_device(0, 1))?;
    work.run::<prh_core::backend::CudaTrain>(Devices { of: cuda_device })
}

#[cfg(not(feature = "cuda"))]
fn on_cuda<W: OnTrainBackend>(_work: W) -> Result<W::Out> {
    Err(not_compiled("cuda"))
}

/// Starts backend `B` on `device` (one value written and read back) and turns a failure
/// into an error naming the device, its cause and what to install. burn's GPU runtimes
/// report a missing driver (no libcuda, no Vulkan adapter) by panicking on their device
/// thread, which reached the user as two panics and a `RecvError`: the probe catches it
/// with the panic hook silenced and keeps the first panic's message.
#[cfg(any(feature = "wgpu", feature = "cuda"))]
fn probe<B: Backend>(name: &str, device: &B::Device) -> Result<()> {
    use prh_core::backend::burn::tensor::Tensor;
    use std::sync::{Arc, Mutex};
    let cause = Arc::new(Mutex::new(None::<String>));
    let seen = cause.clone();
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let mut first = seen.lock().unwrap_or_else(|p| p.into_inner());
        first.get_or_insert(msg);
    }));
    let started = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Tensor::<B, 1>::zeros([1], device).into_data()
    }));
    std::panic::set_hook(hook);
    if started.is_ok() {
        return Ok(());
    }
    let cause = cause.lock().unwrap_or_else(|p| p.into_inner()).take();
    // The first clause of the first line: cudarc's message goes on to list every library
    // name it tried, wgpu's to a debug dump of its backends.
    let cause = cause.as_deref().unwrap_or("unknown");
    let cause = cause.lines().next().unwrap_or("");
    let cause = cause.split(" - ").next().unwrap_or(cause);
    let cause = cause.split(".: ").next().unwrap_or(cause);
    let cause: String = cause.chars().take(200).collect();
    let needs = match name {
        "cuda" => {
            "an NVIDIA driver (libcuda.so) and the CUDA toolkit's NVRTC on LD_LIBRARY_PATH \
             (e.g. /usr/local/cuda/lib64)"
        }
        _ => {
            "a Vulkan (Linux, Windows), Metal (macOS) or DX12 driver; on Debian, \
             `apt install mesa-vulkan-drivers` gives a CPU one (lavapipe)"
        }
    };
    bail!(
        "--device {name}: no usable {name} device ({cause}); {name} needs {needs}; \
         or use --device cpu"
    )
}

/// The demo's training backend: the CPU one (the default build); in a build without it,
/// CUDA or else wgpu.
#[cfg(feature = "cpu")]
pub type DemoBackend = prh_core::experiments::demo::CpuBackend;
#[cfg(all(not(feature = "cpu"), feature = "cuda"))]
pub type DemoBackend = prh_core::backend::CudaTrain;
#[cfg(all(not(feature = "cpu"), not(feature = "cuda"), feature = "wgpu"))]
pub type DemoBackend = prh_core::backend::WgpuTrain;

/// The devices of [`DemoBackend`].
pub fn demo_devices() -> Devices<DemoBackend> {
    #[cfg(feature = "cpu")]
    return Devices { of: cpu_device };
    #[cfg(all(not(feature = "cpu"), feature = "cuda"))]
    return Devices { of: cuda_device };
    #[cfg(all(not(feature = "cpu"), not(feature = "cuda"), feature = "wgpu"))]
    return Devices { of: wgpu_device };
}
