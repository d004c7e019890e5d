//! What the labs share that is not a figure: the state in the URL ([`url_state`]),
//! loading files (drop zone, file inputs, shipped assets: [`drop_zone`], [`files`]),
//! number inputs ([`controls`]) and the page's clock ([`clock`]). Nothing here knows a
//! lab.

pub mod clock;
pub mod controls;
pub mod drop_zone;
pub mod files;
pub mod url_state;
