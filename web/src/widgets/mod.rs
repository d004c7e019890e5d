//! What the labs share that is not a figure: the state in the URL ([`url_state`]),
//! loading files (drop zone, file inputs, shipped assets: [`drop_zone`], [`files`]),
//! number inputs ([`controls`]), the page's clock ([`clock`]), module web workers
//! ([`worker`]), the lesson's two languages ([`lang`]) and the WebGPU / CPU backends
//! ([`webgpu`]). Nothing here knows a lab.

pub mod clock;
pub mod controls;
pub mod drop_zone;
pub mod files;
pub mod lang;
pub mod url_state;
pub mod webgpu;
pub mod worker;
